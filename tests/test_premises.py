"""Evidence before advice: a finding only where the job's stack, scale, platform, release and role make
it true; where a premise is unknown, silence and one closing line naming the key that declares it.
Every case runs the command line on a repository shaped like the real ones it stands for."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from .conftest import ROOT, run_cli

JOBS_SCHEMA = json.loads((ROOT / "schemas" / "jobs.schema.json").read_text())

# a ModelZoo-PyTorch model folder: a README version table, a launch script under test/, an entry that
# imports torch_npu only from torch 1.8 on, checkpoints saved every epoch and read back on resume
MODEL_README = """\
# ResNet50 for PyTorch

| Torch_Version | 三方库依赖版本 |
| :--------: | :----------------------------------------------------------: |
| PyTorch 1.5 | torchvision==0.2.2.post3 |
| PyTorch 1.8 | torchvision==0.9.1 |
"""
MODEL_MAIN = """\
import argparse
import torch
if torch.__version__ >= "1.8":
    import torch_npu


def main():
    model = torch.nn.Linear(2, 2).npu()
    if args.resume:
        checkpoint = torch.load(args.resume, map_location="cpu")
    for epoch in range(90):
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
        torch.save({"state_dict": model.state_dict(), "optimizer": optimizer.state_dict()}, "checkpoint.pth.tar")


if __name__ == "__main__":
    main()
"""
MODEL_LAUNCH = """\
#!/bin/bash
cur_path=`pwd`
python3 -m torch.distributed.launch --nproc_per_node 8 ${cur_path}/../main.py --epochs 90 --resume ''
"""


def write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
    return root


def lint(root: Path, *extra: str):
    return run_cli("check", "--isolated", "--no-cache", "--output-format", "json", *extra, ".", cwd=root)


def codes(root: Path, *extra: str) -> list[str]:
    result = lint(root, *extra)
    assert result.returncode in (0, 1), result.stderr
    return [f"{d['path']}:{d['line']} {d['code']}" for d in json.loads(result.stdout)]


def show_jobs(root: Path) -> dict:
    result = run_cli("check", "--isolated", "--no-cache", "--show-jobs", "--output-format", "json", ".", cwd=root)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    jsonschema.validate(document, JOBS_SCHEMA)
    return {job["id"]: job for job in document["jobs"]}


def test_a_model_zoo_folder_on_torch_1_5_and_1_8_gets_no_recovery_advice(tmp_path):
    write(
        tmp_path,
        {
            "ResNet50_for_PyTorch/README.md": MODEL_README,
            "ResNet50_for_PyTorch/main.py": MODEL_MAIN,
            "ResNet50_for_PyTorch/test/train_full_8p.sh": MODEL_LAUNCH,
            "ResNet50_for_PyTorch/1.8_requirements.txt": "torchvision==0.9.1\n",
        },
    )
    assert codes(tmp_path) == []
    job = show_jobs(tmp_path)["ResNet50_for_PyTorch/test/train_full_8p.sh (standalone)"]
    assert job["premises"]["multi-node"]["status"] == "failed"
    assert "one node" in job["premises"]["multi-node"]["evidence"]
    release = job["premises"]["release"]
    assert release["status"] == "held" and "README.md:5" in release["evidence"], release
    # on the Atlas training series itself, CANN is older than the operator binaries there
    assert job["premises"]["binary-operators"]["status"] == "failed"


def test_a_crlf_launch_script_of_that_model_is_still_reported(tmp_path):
    write(
        tmp_path,
        {
            "m/README.md": MODEL_README,
            "m/main.py": MODEL_MAIN,
            "m/test/train_full_8p.sh": MODEL_LAUNCH.replace("\n", "\r\n"),
            "m/test/docker_start.sh": "#!/bin/bash\r\ndocker run -it x bash\r\n",
        },
    )
    assert codes(tmp_path) == ["m/test/train_full_8p.sh:1 RL900"]


def test_a_readme_declaring_torch_1_11_gets_the_watchdog_advice_on_its_multi_node_launch(tmp_path):
    readme = MODEL_README.replace(
        "| PyTorch 1.5 | torchvision==0.2.2.post3 |\n| PyTorch 1.8 | torchvision==0.9.1 |\n", "| PyTorch 1.11 | - |\n"
    )
    main = MODEL_MAIN.replace('if torch.__version__ >= "1.8":\n    import torch_npu\n', "import torch_npu\n")
    launch = "python3 -m torch.distributed.launch --nnodes 2 --node_rank $RANK --master_addr $ADDR --nproc_per_node 8 ../main.py\n"
    write(tmp_path, {"m/README.md": readme, "m/main.py": main, "m/test/train_full_16p.sh": launch})
    assert codes(tmp_path) == ["m/test/train_full_16p.sh:1 RL101"]
    write(tmp_path, {"m/test/train_full_16p.sh": "python3 -m torch.distributed.launch --nproc_per_node 8 ../main.py\n"})
    assert codes(tmp_path) == []  # one node, no scheduler: no cluster restarts it


FINETUNE = """\
import deepspeed
import torch
import torch_npu

if args.pretrained:
    model.load_state_dict(torch.load(args.pretrained, map_location="cpu"))
best = 0
for epoch in range(3):
    acc = train_one_epoch(engine)
    if acc > best:
        torch.save(model.state_dict(), "model_best.pth")
torch.save(model.state_dict(), "final.pth")
"""
PINS = "torch==2.7.1\ntorch-npu==2.7.1.post2\nmindio-acp==7.3.0\n"


def test_a_fine_tune_with_best_and_final_saves_and_a_pretrained_load_gets_no_mindio_advice(tmp_path):
    write(
        tmp_path, {"run.sh": "deepspeed --num_nodes 2 finetune.py\n", "finetune.py": FINETUNE, "requirements.txt": PINS}
    )
    found = codes(tmp_path)
    assert not [f for f in found if " RL40" in f], found


RESUMED = """\
import os

import deepspeed
import torch
import torch_npu

CKPT = "/ckpt/latest.pt"


def main():
    engine = deepspeed.initialize(model=torch.nn.Linear(2, 2).npu())[0]
    start = 0
    if os.path.exists(CKPT):
        start = torch.load(CKPT, map_location="cpu")["epoch"] + 1
    for epoch in range(start, 10):
        engine.step()
        torch.save({"model": engine.module.state_dict(), "epoch": epoch}, CKPT)


if __name__ == "__main__":
    main()
"""


def test_a_saved_and_resumed_checkpoint_is_converted_whole_and_a_second_fix_changes_nothing(tmp_path):
    write(tmp_path, {"run.sh": "deepspeed --num_nodes 2 train.py\n", "train.py": RESUMED, "requirements.txt": PINS})
    assert codes(tmp_path, "--select", "RL4") == ["train.py:14 RL402", "train.py:17 RL401"]
    fixed = run_cli("check", "--isolated", "--no-cache", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    text = (tmp_path / "train.py").read_text()
    assert "mindio_acp.save(" in text and "mindio_acp.load(CKPT" in text and "torch.save(" not in text
    assert text.count("import mindio_acp\n") == 1
    again = run_cli("check", "--isolated", "--no-cache", "--fix", "--unsafe-fixes", ".", cwd=tmp_path)
    assert (tmp_path / "train.py").read_text() == text, again.stdout
    assert codes(tmp_path, "--select", "RL4") == []


def test_a_load_left_reading_a_converted_save_is_reported_after_the_fix(tmp_path):
    converted = RESUMED.replace("import deepspeed\n", "import deepspeed\nimport mindio_acp\n").replace(
        "        torch.save(", "        mindio_acp.save("
    )
    write(tmp_path, {"run.sh": "deepspeed --num_nodes 2 train.py\n", "train.py": converted, "requirements.txt": PINS})
    result = lint(tmp_path, "--select", "RL402")
    (finding,) = json.loads(result.stdout)
    assert finding["line"] == 15 and "torch.load cannot read" in finding["message"] + finding["detail"]


def test_the_mindio_advice_waits_for_the_versions_and_says_which_keys_declare_them(tmp_path):
    write(tmp_path, {"run.sh": "deepspeed --num_nodes 2 train.py\n", "train.py": RESUMED})
    result = run_cli("check", "--isolated", "--no-cache", "--select", "RL4", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stdout
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("Advice withheld: ") and "set torch = " in last, last
    assert "set mindio = " in last
    config = '[tool.recovery-lint.versions]\ntorch = "2.7.1"\nmindio = "7.3.0"\n'
    write(tmp_path, {"pyproject.toml": config})
    declared = run_cli("check", "--no-cache", "--output-format", "json", "--select", "RL4", ".", cwd=tmp_path)
    assert [d["code"] for d in json.loads(declared.stdout)] == ["RL402", "RL401"]


@pytest.mark.parametrize(
    ("script", "fires"),
    [
        ("NNODES=1\ntorchrun --nnodes $NNODES --nproc_per_node 8 train.py\n", False),
        ("torchrun --nproc_per_node 8 train.py\n", False),
        ("NNODES=4\ntorchrun --nnodes $NNODES --nproc_per_node 8 --node_rank $RANK --master_addr $A train.py\n", True),
    ],
)
def test_the_parallel_store_is_advised_for_launches_across_nodes_only(tmp_path, script, fires):
    write(tmp_path, {"run.sh": script, "train.py": "import torch\nimport torch_npu\n", "requirements.txt": PINS})
    result = lint(tmp_path, "--select", "RL301")
    found = json.loads(result.stdout)
    assert bool(found) is fires, found
    if fires:
        assert "--nnodes 4" in found[0]["detail"]


def test_a_node_count_set_at_run_time_is_withheld_until_target_nodes_is_declared(tmp_path):
    write(tmp_path, {"run.sh": "torchrun --nnodes $NNODES --nproc_per_node 8 train.py\n", "requirements.txt": PINS})
    result = run_cli("check", "--isolated", "--no-cache", "--select", "RL301", ".", cwd=tmp_path)
    assert (
        result.returncode == 0
        and "how many nodes the job spans is unknown for 1 job (RL301): set nodes = <nodes> under [tool.recovery-lint.target]"
        in result.stdout
    )
    write(tmp_path, {".recovery-lint.toml": "[target]\nnodes = 2\n"})
    declared = run_cli("check", "--no-cache", "--select", "RL301", ".", cwd=tmp_path)
    assert declared.returncode == 1 and "RL301" in declared.stdout


def test_advice_is_withheld_only_where_there_was_advice_to_give(tmp_path):
    # the node count is unknown in both, but b/ pins a torch_npu release without torch_npu_run: RL301
    # has nothing to advise there, so the run does not ask for target.nodes on its account
    write(
        tmp_path,
        {
            "a/run.sh": "torchrun --nnodes $NNODES --nproc_per_node 8 train.py\n",
            "a/requirements.txt": PINS,
            "b/run.sh": "torchrun --nnodes $NNODES --nproc_per_node 8 train.py\n",
            "b/requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post4\n",
        },
    )
    result = run_cli("check", "--isolated", "--no-cache", "--select", "RL301", ".", cwd=tmp_path)
    assert (
        "how many nodes the job spans is unknown for 1 job (RL301): set nodes = <nodes> under [tool.recovery-lint.target]"
        in result.stdout
    ), result.stdout


def test_an_entry_whose_imported_helper_sets_the_compile_mode_is_not_said_to_never_call_it(tmp_path):
    write(
        tmp_path,
        {
            "run.sh": "torchrun --nproc_per_node 8 tools/train.py\n",
            "tools/train.py": "import torch\nimport torch_npu\nfrom npu_env import setup\n\nsetup(args)\n",
            "npu_env.py": "import torch\n\n\ndef setup(args):\n    if args.binary:\n"
            "        torch.npu.set_compile_mode(jit_compile=False)\n",
            "Dockerfile": "RUN ./Ascend-cann-toolkit_8.0.0_linux-aarch64.run --install\n",
            ".recovery-lint.toml": '[target]\nplatform = "ascend-910"\n',
        },
    )
    result = run_cli("check", "--no-cache", "--output-format", "json", "--select", "RL501", ".", cwd=tmp_path)
    assert json.loads(result.stdout) == []
    (tmp_path / "npu_env.py").write_text("import torch\n")
    result = run_cli("check", "--no-cache", "--output-format", "json", "--select", "RL501", ".", cwd=tmp_path)
    assert [d["path"] for d in json.loads(result.stdout)] == ["tools/train.py"]


def test_online_compilation_is_not_guessed_without_the_platform(tmp_path):
    write(
        tmp_path,
        {
            "run.sh": "torchrun --nproc_per_node 8 train.py\n",
            "train.py": "import torch\nimport torch_npu\n\ntorch.nn.Linear(2, 2).npu()\n",
            "Dockerfile": "RUN ./Ascend-cann-toolkit_8.0.0_linux-aarch64.run --install\n",
        },
    )
    result = run_cli("check", "--isolated", "--no-cache", "--select", "RL501", ".", cwd=tmp_path)
    assert result.returncode == 0
    assert "the NPU platform is unknown for 1 job (RL501): set platform = " in result.stdout


def test_show_jobs_gives_each_premise_with_its_evidence(tmp_path):
    write(tmp_path, {"run.sh": "torchrun --nnodes 2 --nproc_per_node 8 train.py\n", "requirements.txt": PINS})
    (job,) = show_jobs(tmp_path).values()
    premises = job["premises"]
    assert premises["multi-node"] == {"status": "held", "evidence": "torchrun --nnodes 2 at run.sh:1"}
    assert premises["cluster"]["status"] == "unknown"
    assert premises["release"]["status"] == "held" and "requirements.txt:2" in premises["release"]["evidence"]
    text = run_cli("check", "--isolated", "--no-cache", "--show-jobs", ".", cwd=tmp_path).stdout
    assert "  premise multi-node: held (torchrun --nnodes 2 at run.sh:1)" in text


def test_a_python_file_declaring_gbk_is_read_as_gbk(tmp_path):
    source = "# -*- coding: gbk -*-\n# 训练入口\nimport torch\nimport torch_npu\n"
    write(
        tmp_path,
        {"run.sh": "torchrun --nproc_per_node 8 train.py\n", "train.py": source.encode("gbk")},
    )
    assert codes(tmp_path) == []
    assert show_jobs(tmp_path)["run.sh (standalone)"]["judged"]


def test_an_upstream_entry_that_trains_on_cuda_is_no_npu_training(tmp_path):
    entry = (
        "import torch\nimport torch_npu\n\n"
        "parser.add_argument('--device', default='cuda')\n"
        "if __name__ == '__main__':\n    model.cuda()\n    loss.backward()\n    optimizer.step()\n"
    )
    write(
        tmp_path,
        {"references/train.sh": "torchrun --nnodes 2 --nproc_per_node 8 train.py\n", "references/train.py": entry},
    )
    job = show_jobs(tmp_path)["references/train.sh (standalone)"]
    assert job["role"] == "cuda" and not job["judged"]


def test_a_helm_chart_of_infrastructure_is_not_a_training_manifest(tmp_path):
    write(
        tmp_path,
        {
            "charts/webhook/templates/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n"
            "  name: {{ .Release.Name }}\n",
            "charts/train/templates/job.yaml": "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n"
            "  name: {{ .Values.name }}\n",
        },
    )
    assert codes(tmp_path) == ["charts/train/templates/job.yaml:4 RL903"]
    named = run_cli(
        "check",
        "--isolated",
        "--no-cache",
        "--output-format",
        "json",
        "charts/webhook/templates/deployment.yaml",
        cwd=tmp_path,
    )
    assert [d["code"] for d in json.loads(named.stdout)] == ["RL903"]  # named on the command line: checked


@pytest.mark.parametrize(
    ("files", "entry"),
    [
        (
            {
                "run.sh": "NNODES=2\npython3 -m pkg.train --nnodes $NNODES\n",
                "pkg/__init__.py": "",
                "pkg/train.py": "x = 1\n",
            },
            "pkg/train.py",
        ),
        (
            {
                "test/train_full_8p.sh": "cd references/classification; nohup python3 train.py --epochs 90 &\n",
                "test/references/classification/train.py": "x = 1\n",
            },
            "test/references/classification/train.py",
        ),
        (
            {
                "scripts/run.sh": "cd src\ntorchrun --nnodes 2 --nproc_per_node 8 main.py\n",
                "scripts/src/main.py": "x = 1\n",
            },
            "scripts/src/main.py",
        ),
    ],
)
def test_launches_still_found_a_module_across_nodes_and_a_cd_before_the_launch(tmp_path, files, entry):
    write(tmp_path, files)
    document = run_cli("check", "--isolated", "--no-cache", "--show-jobs", "--output-format", "json", ".", cwd=tmp_path)
    launches = [launch for job in json.loads(document.stdout)["jobs"] for launch in job["launches"]]
    assert [launch["entry"] for launch in launches] == [entry], launches
