"""A file with thousands of fixable findings is fixed in time linear in their number (the RL401 fix
of 16,000 torch.save calls took 31 s when every edit recounted the file's line endings, and
minutes when every accepted edit was compared with all the others)."""

from __future__ import annotations

import time
from pathlib import Path

from recovery_lint.config import Config
from recovery_lint.engine import LintRequest
from recovery_lint.fix import fix_loop
from recovery_lint.registry import all_rules


def training_file(calls: int) -> str:
    """A DeepSpeed entry whose training loop saves its rollback checkpoint ``calls`` times over and reads
    it back on resume: one joint fix converts every save and the load."""
    saves = "".join(f"        torch.save({{'model': model.state_dict(), 'part': {i}}}, CKPT)\n" for i in range(calls))
    return (
        "import os\n\nimport deepspeed\nimport torch\nimport torch_npu\n\nCKPT = '/ckpt/latest.pt'\n\n\n"
        "def train(model):\n    if os.path.exists(CKPT):\n        model.load_state_dict(torch.load(CKPT)['model'])\n"
        f"    for step in range(10):\n{saves}"
    )


def fix_cpu_seconds(root: Path, calls: int) -> float:
    root.mkdir()
    (root / "train.py").write_text(training_file(calls))
    (root / "run.sh").write_text("#!/bin/bash\ndeepspeed --num_nodes 2 train.py\n")  # what makes it a training entry
    # what MindIO ACP's guide is written for: the advice's premises hold
    (root / "requirements.txt").write_text("torch==2.7.1\nmindio-acp==7.3.0\n")
    request = LintRequest(paths=[root], cwd=root, config=Config(), rules=[all_rules()["RL401"]])
    start = time.process_time()
    outcome = fix_loop(request, unsafe=True)
    spent = time.process_time() - start
    fixed = outcome.fixed["train.py"]
    assert fixed.count("mindio_acp.save(") == calls and fixed.count("mindio_acp.load(CKPT)") == 1
    assert fixed.count("import mindio_acp\n") == 1
    return spent


def test_the_rl401_fix_of_many_calls_is_linear(tmp_path):
    small = fix_cpu_seconds(tmp_path / "small", 4_000)
    large = fix_cpu_seconds(tmp_path / "large", 16_000)
    # four times the calls: about four times the time; quadratic work would take sixteen
    assert large < 60, f"16,000 fixes took {large:.1f} s of CPU"
    assert large / small < 9, f"4,000 fixes: {small:.2f} s, 16,000: {large:.2f} s"
