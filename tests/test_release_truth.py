"""Advice that is true for the torch_npu release and the job in front of it, and fixes that never break
a working job: each case is a run of the command line, with --fix as the pre-commit fix hook runs it."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import run_cli

VCJOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: gpt
  labels:
    ring-controller.atlas: ascend-910b
    fault-scheduling: "grace"
    pod-rescheduling: "on"
{extra_labels}  annotations:
    recover-strategy: "recover,retry"
spec:
  minAvailable: 2
  tasks:
  - name: trainer
    replicas: 2
    template:
      spec:
        containers:
        - name: trainer
          image: pytorch-npu:latest
          command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
"""
CURRENT = "torch==2.1.0\ntorch-npu==2.1.0.post10\n"  # release 6.0.0


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def lint(root: Path, *args: str) -> list[dict]:
    result = run_cli("check", "--isolated", "--no-cache", "--output-format", "json", *args, ".", cwd=root)
    assert result.returncode in (0, 1), result.stderr
    found = json.loads(result.stdout)
    for d in found:  # the whole claim: the headline and its detail
        d["text"] = f"{d['message']} {d['detail']}"
    return found


def fix(root: Path, *args: str):
    return run_cli("check", "--isolated", "--no-cache", "--fix", *args, ".", cwd=root)


def codes(found: list[dict]) -> set[str]:
    return {d["code"] for d in found}


# 1. a Volcano Job copied from an AscendJob sample keeps its watchdog
def test_recover_strategy_on_a_volcano_job_does_not_turn_detection_off(tmp_path):
    script = "#!/bin/bash\nexport HCCL_ASYNC_ERROR_HANDLING=1\ntorchrun --nnodes 2 --nproc_per_node 8 train.py\n"
    write(tmp_path, {"job.yaml": VCJOB.format(extra_labels=""), "train.sh": script, "requirements.txt": CURRENT})
    found = lint(tmp_path)
    rl102 = [d for d in found if d["code"] == "RL102"]
    assert rl102 and all(d["path"] == "job.yaml" and "no effect" in d["text"] for d in rl102)
    fix(tmp_path, "--unsafe-fixes")
    assert "HCCL_ASYNC_ERROR_HANDLING=1" in (tmp_path / "train.sh").read_text()
    card = run_cli("check", "--isolated", "--no-cache", "--scorecard", "--output-format", "json", ".", cwd=tmp_path)
    phases = json.loads(card.stdout)["jobs"][0]["phases"]
    detection = next(p for p in phases if p["phase"] == "detection")
    assert "process-level" not in detection["detail"]
    # the same script under a vcjob with the watchdog off is reported (no process-level exemption)
    write(tmp_path, {"train.sh": script.replace("=1", "=0")})
    assert "RL101" in codes(lint(tmp_path))


# 2. a c10d rendezvous is not swapped for torch_npu_run
def test_torchrun_with_a_c10d_rendezvous_is_never_rewritten(tmp_path):
    launch = (
        "torchrun --nnodes=4 --rdzv_backend=c10d --rdzv_endpoint=${MASTER_ADDR}:29400 --nproc_per_node=8 train.py\n"
    )
    write(tmp_path, {"train.sh": launch, "requirements.txt": CURRENT})
    found = [d for d in lint(tmp_path) if d["code"] == "RL301"]
    assert found and found[0]["fix"] is None and "rank 0" in found[0]["text"]
    fix(tmp_path, "--unsafe-fixes")
    assert (tmp_path / "train.sh").read_text() == launch


def test_a_static_launch_is_swapped_safely(tmp_path):
    launch = "torchrun --nnodes=2 --node_rank=$RANK --master_addr=$MASTER_ADDR --master_port=$MASTER_PORT train.py\n"
    write(tmp_path, {"train.sh": launch, "requirements.txt": CURRENT})
    fix(tmp_path)
    assert (tmp_path / "train.sh").read_text() == launch.replace("torchrun", "torch_npu_run")


# 3. release 6.0.rc3 ships torch_npu_run and reads RANK_TABLE_FILE
def test_release_6_0_rc3_is_not_called_unable_to_start(tmp_path):
    for npu in ("2.1.0.post8", "2.3.1.post2", "2.4.0"):
        torch = npu.split(".post")[0]
        write(
            tmp_path,
            {
                "train.sh": "export RANK_TABLE_FILE=/user/serverid/devindex/config/hccl.json\n"
                "torch_npu_run --nproc_per_node 8 train.py\n",
                "requirements.txt": f"torch=={torch}\ntorch-npu=={npu}\n",
            },
        )
        found = lint(tmp_path)
        notes = [d for d in found if d["code"] in ("RL302", "RL314")]
        assert notes and all(d["severity"] == "info" for d in notes), found
        assert all("fails at start-up" not in d["text"] and "still negotiated" not in d["text"] for d in notes)


def test_a_release_without_torch_npu_run_cannot_start(tmp_path):
    write(
        tmp_path,
        {
            "train.sh": "torch_npu_run --nproc_per_node 8 train.py\n",
            "requirements.txt": "torch==2.2.0\ntorch-npu==2.2.0.post2\n",
        },
    )
    found = [d for d in lint(tmp_path) if d["code"] == "RL302"]
    assert found and found[0]["severity"] == "error"


# 4. the watchdog as the release has it
def test_the_watchdog_default_follows_the_torch_npu_release(tmp_path):
    launch = "torchrun --nnodes 2 --nproc_per_node 8 train.py\n"
    write(tmp_path, {"train.sh": launch, "requirements.txt": "torch==1.11.0\ntorch-npu==1.11.0.post14\n"})
    found = [d for d in lint(tmp_path) if d["code"] == "RL101"]
    assert found and "6.0.rc2" in found[0]["text"] and found[0]["fix"]["applicability"] == "safe"
    write(tmp_path, {"requirements.txt": CURRENT})
    assert "RL101" not in codes(lint(tmp_path))


def test_a_release_without_a_watchdog_thread_is_told_to_upgrade_not_to_set_the_variable(tmp_path):
    # the 5.0.x builds for torch 2.1.0 read HCCL_ASYNC_ERROR_HANDLING but start no watchdog thread
    for script in (
        "torchrun --nnodes 2 train.py\n",
        "export HCCL_ASYNC_ERROR_HANDLING=0\ntorchrun --nnodes 2 train.py\n",
    ):
        write(tmp_path, {"train.sh": script, "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post4\n"})
        (found,) = [d for d in lint(tmp_path) if d["code"] == "RL101"]
        assert "starts no watchdog thread" in found["text"] and "6.0.RC1" in found["text"], found["text"]
        assert found["fix"] is None


def test_the_new_variable_name_does_not_turn_the_watchdog_on(tmp_path):
    script = "export HCCL_ASYNC_ERROR_HANDLING=0\nexport TORCH_HCCL_ASYNC_ERROR_HANDLING=1\ntorchrun --nnodes 2 x.py\n"
    write(tmp_path, {"train.sh": script, "requirements.txt": CURRENT})
    found = [d for d in lint(tmp_path) if d["code"] == "RL101"]
    assert found and "TORCH_HCCL_ASYNC_ERROR_HANDLING=1 does not help" in found[0]["text"]


def test_a_watchdog_value_the_release_refuses_stops_the_job(tmp_path):
    write(
        tmp_path,
        {
            "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=2\ntorchrun --nproc_per_node 8 x.py\n",
            "requirements.txt": CURRENT,
        },
    )
    found = [d for d in lint(tmp_path) if d["code"] == "RL104"]
    assert found and found[0]["severity"] == "error" and "start-up" in found[0]["text"]
    write(tmp_path, {"requirements.txt": "torch==2.6.0\ntorch-npu==2.6.0.post5\n"})  # release 7.3.0 accepts 2
    assert "RL104" not in codes(lint(tmp_path))


def test_torch_without_a_torch_npu_watchdog_gets_no_watchdog_advice(tmp_path):
    for pins in ("torch==2.0.1\n", "torch==1.8.1\n", "torch==2.1.0+cu118\n"):
        write(
            tmp_path,
            {
                "train.sh": "export HCCL_ASYNC_ERROR_HANDLING=0\ntorchrun --nproc_per_node 8 x.py\n",
                "requirements.txt": pins,
            },
        )
        assert not codes(lint(tmp_path)) & {"RL101", "RL104"}, pins


# 5. a correct rank table volume is not moved
ACJOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: bert
{namespace}  labels:
    framework: pytorch
spec:
  replicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: ascend
            volumeMounts:
            - name: ranktable
              mountPath: /user/serverid/devindex/config
          volumes:
          - name: ranktable
            hostPath:
              path: {path}
              type: Directory
"""


def test_a_rank_table_volume_under_a_custom_operator_root_is_left_alone(tmp_path):
    manifest = ACJOB.format(namespace="  namespace: nlp\n", path="/data/ranktable/nlp.bert")
    write(tmp_path, {"job.yaml": manifest})
    assert "RL312" not in codes(lint(tmp_path))
    fix(tmp_path)
    assert (tmp_path / "job.yaml").read_text() == manifest


def test_a_manifest_without_a_namespace_gets_no_default_namespace_fix(tmp_path):
    manifest = ACJOB.format(namespace="", path="/user/mindx-dl/ranktable/bert")
    write(tmp_path, {"job.yaml": manifest})
    found = [d for d in lint(tmp_path) if d["code"] == "RL312"]
    assert found and found[0]["fix"] is None and "kubectl -n" in found[0]["text"]
    fix(tmp_path, "--unsafe-fixes")
    assert (tmp_path / "job.yaml").read_text() == manifest


def test_the_configured_operator_root_makes_the_fix_safe(tmp_path):
    manifest = ACJOB.format(namespace="  namespace: nlp\n", path="/user/mindx-dl/ranktable/bert")
    write(
        tmp_path, {"job.yaml": manifest, "pyproject.toml": '[tool.recovery-lint]\nranktable-host-root = "/data/rt"\n'}
    )
    result = run_cli("check", "--no-cache", "--fix", ".", cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    assert "path: /data/rt/nlp.bert" in (tmp_path / "job.yaml").read_text()


# 6. a user's choice is not flipped
def test_an_opt_in_online_compile_and_a_deliberate_watchdog_off_survive_the_fix_hook(tmp_path):
    entry = "import torch\nimport torch_npu\n\nif args.jit_compile:\n    torch.npu.set_compile_mode(jit_compile=True)\n"
    script = (
        "#!/bin/bash\n# the watchdog stays off while we debug the link flaps (ticket 123)\n"
        "export HCCL_ASYNC_ERROR_HANDLING=0\ntorchrun --nnodes 2 --nproc_per_node 8 train.py\n"
    )
    write(tmp_path, {"train.py": entry, "train.sh": script, "requirements.txt": CURRENT})
    found = lint(tmp_path)
    rl101 = [d for d in found if d["code"] == "RL101"]
    assert rl101 and rl101[0]["fix"]["applicability"] == "unsafe"
    assert "RL501" not in codes(found)
    fix(tmp_path, "--ignore", "RL301")
    assert (tmp_path / "train.py").read_text() == entry and (tmp_path / "train.sh").read_text() == script


def test_an_explicit_online_compile_is_only_changed_by_an_unsafe_fix(tmp_path):
    entry = "import torch\nimport torch_npu\n\ntorch.npu.set_compile_mode(jit_compile=True)\n"
    cann = "RUN ./Ascend-cann-toolkit_8.0.0_linux-aarch64.run --install\n"  # the operator binaries are there
    write(tmp_path, {"train.py": entry, "train.sh": "torchrun --nproc_per_node 8 train.py\n", "Dockerfile": cann})
    found = [d for d in lint(tmp_path) if d["code"] == "RL501"]
    assert found and found[0]["fix"]["applicability"] == "unsafe"
    fix(tmp_path)
    assert (tmp_path / "train.py").read_text() == entry


# torch_npu_run keeps a static rendezvous's world only once its endpoint is its master address
def _world(line: str, launcher: str) -> tuple[str, str, str]:
    """(store address, node rank, nodes) as the launcher of ``line`` sets up its rendezvous: torchrun's
    static backend uses --rdzv_endpoint when given, else --master_addr:--master_port; torch_npu_run's
    parallel one always --master_addr:--master_port (127.0.0.1:29500 by default), the endpoint ignored
    (torch_npu/distributed/rendezvous.py, _create_parallel_handler)."""
    import argparse
    import shlex

    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--nnodes", default="1")
    parser.add_argument("--node_rank", "--node-rank", default="0")
    parser.add_argument("--master_addr", "--master-addr", default="127.0.0.1")
    parser.add_argument("--master_port", "--master-port", default="29500")
    parser.add_argument("--rdzv_backend", "--rdzv-backend", default="static")
    parser.add_argument("--rdzv_endpoint", "--rdzv-endpoint", default="")
    parser.add_argument("--nproc_per_node", default="1")
    words = shlex.split(line)
    assert words[0] == launcher, words
    args, _ = parser.parse_known_args(words[1:])
    if launcher == "torchrun" and args.rdzv_backend == "static" and args.rdzv_endpoint:
        store = args.rdzv_endpoint
    else:
        store = f"{args.master_addr}:{args.master_port}"
    return store, args.node_rank, args.nnodes


def test_a_static_endpoint_rewritten_for_torch_npu_run_keeps_the_same_world(tmp_path):
    line = (
        "torchrun --nnodes=2 --node_rank=1 --rdzv_backend=static --rdzv_endpoint=10.0.0.1:29400 --nproc_per_node 8 t.py"
    )
    write(tmp_path, {"train.sh": line + "\n", "requirements.txt": CURRENT})
    (found,) = [d for d in lint(tmp_path) if d["code"] == "RL301"]
    assert found["fix"]["applicability"] == "unsafe"
    assert _world(line.replace("torchrun", "torch_npu_run"), "torch_npu_run") != _world(line, "torchrun")  # a bare swap
    fix(tmp_path, "--unsafe-fixes")
    fixed = (tmp_path / "train.sh").read_text().strip()
    assert fixed.startswith("torch_npu_run ") and "--master_addr=10.0.0.1 --master_port=29400" in fixed
    assert _world(fixed, "torch_npu_run") == _world(line, "torchrun") == ("10.0.0.1:29400", "1", "2")
    assert not [d for d in lint(tmp_path) if d["code"] == "RL301"]
