"""``recovery-lint init`` as a user runs it: a configuration naming each key the advice waits for,
set where the whole repository agrees on a value and commented out where it does not say, written
once (never over an existing configuration) and read back without an error."""

from __future__ import annotations

from pathlib import Path

from .conftest import run_cli

SCRIPT = (
    "#!/bin/bash\nexport ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\n"
    "torchrun --nnodes 2 --node_rank $NODE_RANK --master_addr $MASTER_ADDR --nproc_per_node 8 train.py\n"
)
ENTRY = "import torch\nimport torch_npu\n"
MANIFEST = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: gpt
  labels:
    ring-controller.atlas: ascend-910b
spec:
  tasks:
  - name: default
    replicas: 2
    template:
      spec:
        containers:
        - name: train
          image: torch:latest
          command: ["/bin/bash", "-c", "bash /job/code/cluster/run.sh"]
"""


def _repository(tmp_path: Path, with_manifest: bool = False) -> Path:
    files = {"scripts/train.sh": SCRIPT, "scripts/train.py": ENTRY}
    if with_manifest:
        files.update({"cluster/job.yaml": MANIFEST, "cluster/run.sh": SCRIPT, "cluster/train.py": ENTRY})
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_init_names_each_key_the_advice_waits_for_commented_where_the_repository_is_silent(tmp_path):
    repo = _repository(tmp_path)
    result = run_cli("init", "--stdout", cwd=repo)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "[versions]" in lines and "[target]" in lines
    assert '# torch-npu = "<version>"  # the torch_npu release is unknown for 1 job (RL101, RL301)' in lines
    assert any(
        line.startswith('# platform = "ascend-910" | "ascend-910b" | "ascend-npu"  # the NPU platform')
        for line in lines
    )
    assert not (repo / ".recovery-lint.toml").exists()  # --stdout writes nothing


def test_init_sets_the_value_the_whole_repository_agrees_on_and_the_run_reads_it(tmp_path):
    repo = _repository(tmp_path, with_manifest=True)
    before = run_cli("--no-cache", ".", cwd=repo).stdout
    assert "the NPU platform is unknown for 1 job (RL501)" in before
    written = run_cli("init", cwd=repo)
    assert written.returncode == 0 and "Wrote " in written.stderr, written.stderr
    config = (repo / ".recovery-lint.toml").read_text()
    assert 'platform = "ascend-910b"  # 1 job of the repository says so (cluster/job.yaml among them)' in config
    after = run_cli("--no-cache", ".", cwd=repo)
    assert after.returncode in (0, 1) and "configuration error" not in after.stderr
    assert "the NPU platform is unknown" not in after.stdout


def test_init_never_writes_over_an_existing_configuration(tmp_path):
    repo = _repository(tmp_path)
    (repo / "pyproject.toml").write_text('[tool.recovery-lint]\nfail-on = "error"\n')
    result = run_cli("init", cwd=repo)
    assert result.returncode == 2 and "already configures recovery-lint" in result.stderr
    assert not (repo / ".recovery-lint.toml").exists()
