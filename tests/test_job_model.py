"""What is a training job: launches seen through the wrappers real scripts use, entries resolved where
the launch runs, versions from wherever the repository declares them, and no recovery advice for
tests, evaluation, inference, benchmarks, single-process runs or library code. Through the CLI."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import jsonschema
import pytest

from .conftest import ROOT, run_cli

JOBS_SCHEMA = json.loads((ROOT / "schemas" / "jobs.schema.json").read_text())
# torch_npu 2.1.0 is release 5.0.0, whose watchdog is off by default: RL101 fires on an unset variable
OFF_BY_DEFAULT = "torch==2.1.0\ntorch-npu==2.1.0\n"
TRAIN = "import torch\nimport torch_npu\n"


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def findings(root: Path, *extra: str) -> list[str]:
    result = run_cli("check", "--isolated", "--no-cache", "--output-format", "json", *extra, ".", cwd=root)
    assert result.returncode in (0, 1), result.stderr
    return [f"{d['path']}:{d['line']} {d['code']}" for d in json.loads(result.stdout)]


def jobs(root: Path) -> dict:
    result = run_cli("check", "--isolated", "--no-cache", "--show-jobs", "--output-format", "json", ".", cwd=root)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    jsonschema.validate(document, JOBS_SCHEMA)
    return document


# -- launches seen through wrappers ------------------------------------------------------------
@pytest.mark.parametrize(
    "line",
    [
        "taskset -c 0-23 torchrun --nnodes 2 --nproc_per_node 8 train.py",
        "numactl --cpunodebind=0 --membind=0 torchrun --nnodes 2 --nproc_per_node 8 train.py",
        "nohup torchrun --nnodes 2 --nproc_per_node 8 train.py > log 2>&1 &",
        "env HCCL_CONNECT_TIMEOUT=1200 torchrun --nnodes 2 --nproc_per_node 8 train.py",
        "timeout -s INT 48h torchrun --nnodes 2 --nproc_per_node 8 train.py",
        "stdbuf -oL torchrun --nnodes 2 --nproc_per_node 8 train.py",
        "exec torchrun --nnodes 2 --nproc_per_node 8 train.py",
        "taskset -c 0-96 python3 -m torch.distributed.launch --nnodes 2 --nproc_per_node 8 train.py",
        'CMD="torchrun --nnodes 2 --nproc_per_node 8 train.py"\n$CMD',
        'CMD="torchrun --nnodes 2 --nproc_per_node 8 train.py"\neval $CMD',
        "ARGS='--nproc_per_node 8 --nnodes 2'\ntorchrun $ARGS train.py",
        # a backslash before a line break inside double quotes joins the lines (MindSpeed's launch scripts)
        'N=8\nDISTRIBUTED_ARGS="\n    --nproc_per_node $N \\\n    --nnodes 2\n"\ntorchrun $DISTRIBUTED_ARGS train.py',
    ],
)
def test_a_launch_behind_a_wrapper_is_a_training_launch(tmp_path, line):
    write(tmp_path, {"run.sh": f"#!/bin/bash\n{line}\n", "train.py": TRAIN, "requirements.txt": OFF_BY_DEFAULT})
    last = line.count("\n") + 2
    assert f"run.sh:{last} RL101" in findings(tmp_path)
    launch = next(j for j in jobs(tmp_path)["jobs"] if j["judged"])["launches"][0]
    assert launch["entry"] == "train.py", launch


def test_an_executor_held_in_a_variable_runs_the_entry_and_rl103_sees_it(tmp_path):
    manifest = (
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: t\n  labels:\n"
        '    ring-controller.atlas: ascend-910b\n    fault-scheduling: "force"\nspec:\n  tasks:\n  - name: d\n'
        "    replicas: 2\n    template:\n      spec:\n        containers:\n        - name: c\n"
        '          command: ["/bin/bash", "-c", "bash /job/code/train_start.sh /job/code /job/out main.py"]\n'
    )
    script = (
        "#!/bin/bash\nDLS_PROGRAM_EXECUTOR=python3\nboot_file=$3\n"
        "${DLS_PROGRAM_EXECUTOR} -m torch.distributed.launch --nproc_per_node 8 ${boot_file}\n"
    )
    write(tmp_path, {"job.yaml": manifest, "train_start.sh": script, "main.py": TRAIN})
    assert "train_start.sh:4 RL103" in findings(tmp_path)
    launch = jobs(tmp_path)["jobs"][0]["launches"][0]
    assert launch["launcher"] == "torch.distributed.launch" and launch["entry"] == "main.py"


def test_an_entry_path_built_from_a_variable_resolves_from_the_script_folder(tmp_path):
    script = (
        "#!/bin/bash\ncur_path=`pwd`\ntest_path_dir=${cur_path}/test\nexport RANK_SIZE=8\n"
        "for ((i=0;i<${RANK_SIZE};i++)); do\n"
        "  nohup python3 ${test_path_dir}/../main.py --local_rank $i > log_$i 2>&1 &\ndone\n"
    )
    write(
        tmp_path,
        {"model/test/train_full_8p.sh": script, "model/main.py": TRAIN, "requirements.txt": OFF_BY_DEFAULT},
    )
    launch = next(j for j in jobs(tmp_path)["jobs"] if j["judged"])["launches"][0]
    assert launch["entry"] == "model/main.py" and launch["role"] == "training", launch


def test_a_name_in_another_project_is_never_linked(tmp_path):
    write(
        tmp_path,
        {
            "projA/run.sh": "torchrun --nproc_per_node 8 train.py\n",
            "projB/train.py": TRAIN + "torch.save(model.state_dict(), 'x.pt')\n",
        },
    )
    launch = next(j for j in jobs(tmp_path)["jobs"] if j["id"].startswith("projA"))["launches"][0]
    assert launch["entry"] is None and launch["entry_as_written"] == "train.py"
    assert "not in the linted files" in launch["entry_note"]
    assert not [f for f in findings(tmp_path) if f.startswith("projB/")]


# -- what is not training ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("files", "role"),
    [
        ({"run.sh": "python3 -m torch.distributed.launch --nproc_per_node 1 train.py\n"}, "single-process"),
        ({"run.sh": "NUM_GPUS=1\npython3 train.py --gpus $NUM_GPUS\n"}, "single-process"),
        ({"eval.sh": "torchrun --nproc_per_node 8 evaluate.py\n"}, "evaluation"),
        ({"run.sh": "torchrun --nproc_per_node 8 run_glue.py --do_eval\n"}, "evaluation"),
        # mmdetection's tools: dist_test.sh runs test.py, which evaluates a checkpoint
        (
            {"tools/dist_test.sh": "python -m torch.distributed.launch --nproc_per_node=$GPUS tools/test.py\n"},
            "evaluation",
        ),
        ({"infer.sh": "torchrun --nproc_per_node 8 inference.py\n"}, "inference"),
        ({"tools/convert.sh": "torchrun --nproc_per_node 8 convert_ckpt.py\n"}, "conversion"),
        ({"feature_extraction.sh": "torchrun --nproc_per_node 8 get_vace_feature.py\n"}, "data"),
        ({"test/train_performance_8p.sh": "torchrun --nproc_per_node 8 train.py\n"}, "benchmark"),
        # a performance run whose launch is written in a helper it calls (ModelZoo's FCN8s)
        (
            {
                "test/train_performance_multinodes.sh": "bash tools/dist_train.sh 8\n",
                "tools/dist_train.sh": "python -m torch.distributed.launch --nproc_per_node=$1 tools/train.py\n",
            },
            "benchmark",
        ),
        ({"tests/st/pretrain.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py\n"}, "ci"),
        # MindSpeed's performance suite, its scripts full of <placeholders>: not even their syntax is judged
        (
            {"tests_extend/model_tests/perf_model/pretrain.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py\n"},
            "ci",
        ),
        ({"tests_extend/st/pretrain.sh": "MASTER_ADDR=<master_ip>\ntorchrun --nproc_per_node 8 pretrain.py\n"}, "ci"),
        ({"verl_tests/run.sh": "torchrun --nproc_per_node 8 train.py\n"}, "ci"),
        ({"third_party/lib/run.sh": "torchrun --nproc_per_node 8 train.py\n"}, "vendored"),
        ({"egs/an4/asr1/run.sh": "torchrun --nproc_per_node 8 train.py\n"}, "vendored"),
    ],
)
def test_launches_that_are_not_training_get_no_advice(tmp_path, files, role):
    write(tmp_path, {**files, "requirements.txt": OFF_BY_DEFAULT})
    assert findings(tmp_path) == []
    judged = {f["path"]: f for f in jobs(tmp_path)["files"]}
    script = next(iter(files))
    assert judged[script]["role"] == role and not judged[script]["judged"], judged[script]


def test_a_unit_test_is_not_judged(tmp_path):
    test = (
        "import torch\nimport torch_npu\nfrom torch_npu.testing.testcase import TestCase, run_tests\n\n\n"
        "class TestAdd(TestCase):\n    def test_add(self):\n        torch.save(model.state_dict(), '/tmp/x.pt')\n"
        "        torch.load('/tmp/x.pt')\n\n\nif __name__ == '__main__':\n    run_tests()\n"
    )
    write(tmp_path, {"tests/test_add.py": test})
    assert findings(tmp_path) == []
    fixed = run_cli("check", "--isolated", "--no-cache", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert fixed.returncode == 0 and (tmp_path / "tests/test_add.py").read_text() == test


def test_old_torch_has_no_torch_npu_watchdog_to_advise(tmp_path):
    write(
        tmp_path,
        {
            "requirements.txt": "torch==1.8.1\n",
            "run.sh": "python3 -m torch.distributed.launch --nproc_per_node 8 train.py\n",
            "train.py": TRAIN,
        },
    )
    assert not [f for f in findings(tmp_path) if "RL101" in f or "RL301" in f]


def test_an_inference_service_gets_no_training_advice(tmp_path):
    manifest = (
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: mindie-server\n  labels:\n"
        '    ring-controller.atlas: ascend-910b\n    fault-scheduling: "force"\n    fault-retry-times: "10000"\n'
        "spec:\n  minAvailable: 2\n  tasks:\n  - name: server\n    replicas: 2\n    template:\n"
        "      metadata:\n        labels:\n          app: mindie-ms-server\n      spec:\n        containers:\n"
        "        - name: server\n          image: mindie:1.0.0\n"
        '          command: ["/bin/bash", "-c", "torchrun --nproc_per_node 8 server.py"]\n'
        "          resources:\n            requests:\n              huawei.com/Ascend910: 8\n"
    )
    deployment = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: serve\n  labels:\n"
        "    ring-controller.atlas: ascend-910b\nspec:\n  replicas: 1\n  template:\n    spec:\n"
        "      containers:\n      - name: s\n        image: x\n        resources:\n          requests:\n"
        "            huawei.com/Ascend910: 1\n"
    )
    write(tmp_path, {"inference/server.yaml": manifest, "deploy.yaml": deployment})
    assert findings(tmp_path) == []
    roles = {j["id"].split("#")[0]: j["role"] for j in jobs(tmp_path)["jobs"]}
    assert roles == {"inference/server.yaml": "inference", "deploy.yaml": "inference"}


def test_a_schedulers_system_test_fixture_is_no_training_job(tmp_path):
    # mind-cluster keeps Volcano jobs for its scheduler's system tests under tests/st/testcases
    manifest = (
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: llama\n  labels:\n"
        '    ring-controller.atlas: ascend-910b\n    fault-scheduling: "grace"\n'
        "spec:\n  minAvailable: 2\n  tasks:\n  - name: worker\n    replicas: 2\n    template:\n"
        "      spec:\n        containers:\n        - name: c\n          image: x\n"
        '          command: ["/bin/bash", "-c", "torchrun --nproc_per_node 8 train.py"]\n'
    )
    write(tmp_path, {"tests/st/testcases/resources_0001/job.yaml": manifest, "deploy/job.yaml": manifest})
    assert [f for f in findings(tmp_path) if f.startswith("tests/")] == []
    assert "deploy/job.yaml:7 RL202" in findings(tmp_path)
    roles = {j["id"].split("#")[0]: j["role"] for j in jobs(tmp_path)["jobs"]}
    assert roles == {"tests/st/testcases/resources_0001/job.yaml": "ci", "deploy/job.yaml": "training"}


def test_a_job_that_only_inspects_the_node_is_no_training_job(tmp_path):
    # mindcluster-deploy's environment checks: a Volcano Job whose container runs `npu-smi info`
    manifest = (
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: train-env-quick-validation\n"
        "spec:\n  tasks:\n  - name: t\n    replicas: 1\n    template:\n      spec:\n        containers:\n"
        '        - name: c\n          image: x\n          command: ["/bin/bash", "-c", "npu-smi info"]\n'
        "          resources:\n            requests:\n              huawei.com/Ascend910: 1\n"
    )
    write(tmp_path, {"check.yaml": manifest, "train.yaml": manifest.replace("npu-smi info", "bash /job/train.sh")})
    # the same job running a script it cannot see: a training job, whose framework is unknown
    assert findings(tmp_path) == []
    lint = run_cli("check", "--isolated", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path).stdout
    assert "the training framework is unknown for 1 job (RL201): set framework = " in lint
    roles = {j["id"].split("#")[0]: (j["role"], j["reason"]) for j in jobs(tmp_path)["jobs"]}
    assert roles["check.yaml"] == ("utility", "its containers run only npu-smi: no training program")


def test_a_shell_left_without_its_script_is_shown_and_links_nothing(tmp_path):
    # mindxdl-deploy's pangu_alpha AscendJobs: the script is in args, after a second "/bin/bash -c",
    # so the -c text is "/bin/bash" and the launch script never runs
    manifest = (
        "apiVersion: mindxdl.gitee.com/v1\nkind: AscendJob\nmetadata:\n  name: pangu\n  labels:\n"
        "    framework: pytorch\n    fault-scheduling: grace\nspec:\n  replicaSpecs:\n    Master:\n"
        "      replicas: 1\n      template:\n        spec:\n          containers:\n          - name: ascend\n"
        "            command:\n              - /bin/bash\n              - -c\n"
        '            args: ["/bin/bash", "-c", "cd /job/code; bash train.sh;"]\n'
    )
    write(tmp_path, {"job.yaml": manifest, "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\ntorchrun train.py\n"})
    shown = run_cli("check", "--isolated", "--no-cache", "--show-jobs", ".", cwd=tmp_path).stdout
    assert "note: the -c text at line 19 is '/bin/bash' alone: bash runs that shell with" in shown, shown
    assert "script train.sh" not in shown.split("\n\n")[0]  # the manifest's job links no script
    assert not [f for f in findings(tmp_path) if f.startswith("job.yaml") and "RL10" in f]


# -- versions from wherever the repository declares them --------------------------------------
def test_a_dockerfile_in_a_docker_folder_declares_the_version_of_scripts_elsewhere(tmp_path):
    write(
        tmp_path,
        {
            "docker/Dockerfile": "ARG TORCH_VERSION=2.7.1\nRUN pip install torch==${TORCH_VERSION}\n",
            "examples/run.sh": "torchrun --nnodes 2 --nproc_per_node 8 pretrain.py\n",
            "examples/pretrain.py": TRAIN,
        },
    )
    job = next(j for j in jobs(tmp_path)["jobs"] if j["judged"])
    assert job["versions"]["torch"] == {"version": "2.7.1", "from": "docker/Dockerfile:1"}
    # every torch_npu release built for torch 2.7.1 has the watchdog on by default
    assert not [f for f in findings(tmp_path) if "RL101" in f]


def test_a_pip_install_in_the_launch_script_is_the_closest_declaration(tmp_path):
    write(
        tmp_path,
        {
            "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post10\n",
            "run.sh": "pip install torch==2.1.0 torch-npu==2.1.0\ntorchrun --nnodes 2 --nproc_per_node 8 train.py\n",
            "train.py": TRAIN,
        },
    )
    job = next(j for j in jobs(tmp_path)["jobs"] if j["judged"])
    assert job["versions"]["torch-npu"] == {"version": "2.1.0", "from": "run.sh:1"}
    assert "run.sh:2 RL101" in findings(tmp_path)


def test_declarations_that_disagree_leave_the_version_unknown(tmp_path):
    write(
        tmp_path,
        {
            "docker/Dockerfile": "RUN pip install torch==2.1.0\n",
            "ci/Dockerfile": "RUN pip install torch==1.11.0\n",
            "run.sh": "torchrun --nproc_per_node 8 train.py\n",
            "train.py": TRAIN,
        },
    )
    job = next(j for j in jobs(tmp_path)["jobs"] if j["judged"])
    assert "torch" not in job["versions"]


# -- repository-level advice once, and a fix loop that converges -------------------------------
def test_one_mindspeed_entry_launched_by_many_scripts_gives_one_finding_and_one_fix(tmp_path):
    entry = "import torch\nfrom mindspeed_llm import megatron_adaptor\nfrom megatron.training import pretrain\n"
    launch = "torchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py\n"
    pins = "torch==2.7.1\nmindspeed-llm==2.3.0\nmindio-acp==7.3.0\n"  # what MindIO ACP's guide is written for
    write(
        tmp_path, {"pretrain_gpt.py": entry, "requirements.txt": pins, **{f"s/run{k}.sh": launch for k in range(1, 16)}}
    )
    found = findings(tmp_path)
    assert found.count("pretrain_gpt.py:2 RL401") == 1 and found.count("pretrain_gpt.py:2 RL402") == 1
    fixed = run_cli("check", "--isolated", "--no-cache", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert "did not converge" not in fixed.stderr
    assert all((tmp_path / f"s/run{k}.sh").read_text().startswith("export MINDIO_AUTO_PATCH_MEGATRON=true\n")
               for k in range(1, 16))  # fmt: skip
    snapshot = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    again = run_cli("check", "--isolated", "--no-cache", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert again.returncode == 0, again.stdout
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == snapshot


def test_a_single_pod_job_gets_no_pod_level_advice_and_no_fix_makes_rl204(tmp_path):
    manifest = (
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: demo\n  labels:\n"
        '    ring-controller.atlas: ascend-910b\n    fault-scheduling: "grace"\nspec:\n  minAvailable: 1\n'
        "  policies:\n    - event: PodEvicted\n      action: RestartJob\n  tasks:\n  - name: d\n    replicas: 1\n"
        "    template:\n      spec:\n        containers:\n        - name: c\n          image: x\n"
        "          volumeMounts:\n          - name: ascend-910-config\n            mountPath: /user/serverid/devindex/config\n"
        "        volumes:\n        - name: ascend-910-config\n          configMap:\n            name: rings-config-demo\n"
    )
    write(tmp_path, {"job.yaml": manifest})
    assert not [f for f in findings(tmp_path) if "RL202" in f]
    run_cli("check", "--isolated", "--no-cache", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert not [f for f in findings(tmp_path) if "RL204" in f]


def test_show_jobs_says_why_each_file_is_or_is_not_judged(tmp_path):
    write(
        tmp_path,
        {
            "run.sh": "torchrun --nproc_per_node 8 train.py\n",
            "train.py": TRAIN,
            "utils/io.py": "import torch\n",
            "tests/test_io.py": "import unittest\n",
        },
    )
    files = {f["path"]: f for f in jobs(tmp_path)["files"]}
    assert files["run.sh"]["judged"] and files["train.py"]["judged"]
    assert not files["utils/io.py"]["judged"] and "not read" in files["utils/io.py"]["reason"]
    text = run_cli("check", "--isolated", "--no-cache", "--show-jobs", ".", cwd=tmp_path).stdout
    assert "run.sh (standalone)\n  judged: training" in text and "utils/io.py: not judged" in text


def test_a_setting_made_in_an_imported_module_is_seen_in_file_mode_as_in_folder_mode(tmp_path):
    # pre-commit names the changed files only: the entry's imports still decide what it sets
    train = (
        "import torch\nimport torch_npu\nfrom npu_setup.runtime import configure\n\nconfigure()\n"
        "model = torch.nn.Linear(2, 2).npu()\n"
    )
    write(
        tmp_path,
        {
            "run.sh": "#!/bin/bash\ntorchrun --nproc_per_node 8 tools/train.py\n",
            "tools/train.py": train,
            "npu_setup/runtime.py": "import torch\n\n\ndef configure():\n    torch.npu.set_compile_mode(jit_compile=False)\n",
            # the Atlas training series, CANN with the operator binaries: RL501's premises hold
            "Dockerfile": "RUN ./Ascend-cann-toolkit_8.0.0_linux-aarch64.run --install\n",
            ".recovery-lint.toml": '[target]\nplatform = "ascend-910"\n',
        },
    )
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)  # file mode reads a repository's files

    def rl501(*named: str) -> list[str]:  # with the configuration, which declares the platform
        result = run_cli("check", "--no-cache", "--output-format", "json", *(named or (".",)), cwd=tmp_path)
        assert result.returncode in (0, 1), result.stderr
        return [f"{d['path']}:{d['line']} {d['code']}" for d in json.loads(result.stdout) if d["code"] == "RL501"]

    assert rl501() == []
    for named in (["tools/train.py"], ["tools/train.py", "run.sh"], ["run.sh"]):
        assert rl501(*named) == [], named
    (tmp_path / "npu_setup" / "runtime.py").write_text("import torch\n\n\ndef configure():\n    pass\n")
    assert rl501() == ["tools/train.py:2 RL501"]


def test_a_run_over_a_folder_reads_the_standalone_entries_beside_it_only_where_their_jobs_reach_it(tmp_path):
    """A standalone entry outside the folders a run is given is read only when its job can hold one
    of their files: a setting module it imports (looked up from its folder and the two above), or
    pins in a declaration folder beside one of its folders."""
    entry = "import torch\nimport torch_npu\n\nif __name__ == '__main__':\n    pass\n"
    resnet = "zoo/cv/classification/resnet/train.py"
    write(
        tmp_path,
        {
            "train.py": entry + "from npu_setup.runtime import configure\n",
            "npu_setup/runtime.py": "import torch\n\n\ndef configure():\n    torch.npu.set_compile_mode(jit_compile=False)\n",
            "docker/requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0\n",
            resnet: entry,
            "zoo/nlp/bert/run.sh": "#!/bin/bash\ntorchrun --nproc_per_node 8 main.py\n",
            "zoo/nlp/bert/main.py": entry,
        },
    )
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)  # the folders are of a larger repository

    def standalone(folder: str) -> set[str]:
        result = run_cli(
            "check", "--isolated", "--no-cache", "--show-jobs", "--output-format", "json", folder, cwd=tmp_path
        )
        assert result.returncode == 0, result.stderr
        return {j["id"].removesuffix(" (standalone)") for j in json.loads(result.stdout)["jobs"]}

    assert {"train.py", resnet} <= standalone(".")
    # a module imported from the top folder may be anywhere; one imported from resnet's folder or the
    # two above it is not in bert's, nor are pins beside its folders
    bert = standalone("zoo/nlp/bert")
    assert "train.py" in bert and resnet not in bert
    setup = standalone("npu_setup")
    assert "train.py" in setup and resnet not in setup
    assert {"train.py", resnet} <= standalone("docker")  # the pins beside the folders of both


@pytest.mark.parametrize(
    ("device_line", "judged"),
    [
        ("device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", False),
        ("device = torch.device('npu:0')", True),
        ("torch.npu.set_device(0)\ndevice = 'cpu'", True),
        ("from torch_npu.contrib import transfer_to_npu\ndevice = torch.device('cuda')", True),
    ],
)
def test_a_standalone_entry_that_imports_torch_npu_trains_on_an_npu_only_if_it_puts_work_there(
    tmp_path, device_line, judged
):
    """A torchvision reference script copied into a model folder imports torch_npu and trains on
    CUDA or the CPU: no NPU job, no recovery advice."""
    write(
        tmp_path,
        {
            "references/train.py": (
                "import torch\nimport torch_npu\n"
                f"{device_line}\n\n\ndef main():\n    model = torch.nn.Linear(2, 2).to(device)\n"
                "    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                "    loss = model(torch.ones(2)).sum()\n    loss.backward()\n    optimizer.step()\n"
                "    torch.save(model.state_dict(), 'ckpt.pt')\n\n\nif __name__ == '__main__':\n    main()\n"
            )
        },
    )
    job = next(j for j in jobs(tmp_path)["jobs"] if j["id"] == "references/train.py (standalone)")
    assert job["judged"] is judged, job["reason"]
