"""A tiny run of the benchmark: it starts, measures every row it can and prints the table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_quick_run_prints_the_table(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    argv = [sys.executable, str(ROOT / "bench" / "run.py"), "--artifacts", "20", "--repeat", "1", "--quick"]
    result = subprocess.run(
        [*argv, "--out", str(out), "--repos", str(tmp_path / "repos")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    header = next(line for line in lines if line.startswith("| measurement"))
    assert "wall (median)" in header and "peak RSS" in header
    rows = {line.split("|")[1].strip(): line for line in lines if line.startswith("| ") and line is not header}
    for row in (
        "`python -c pass`",
        "ours, one manifest, cold (`--no-cache --isolated`)",
        "parse floor @20, in-process",
        "ours @20, full repository",
        "ours @20, cache warm, unchanged repo",
    ):
        assert row in rows, f"missing row {row!r} in:\n{result.stdout}"
        assert "| error |" not in rows[row], rows[row]
    assert "cold / warm = " in rows["ours @20, cache warm, unchanged repo"]
    assert (out / "results.md").read_text(encoding="utf-8").endswith(result.stdout)
