"""A tiny run of the benchmark: it starts, measures every row it can and prints the table."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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
        "one small manifest, paired CPU: ours (`--no-cache --isolated`)",
        "parse floor @20, in-process",
        "ours @20, full repository",
        "ours @20, cache warm, unchanged repo",
    ):
        assert row in rows, f"missing row {row!r} in:\n{result.stdout}"
        assert "| error |" not in rows[row], rows[row]
    assert "cold / warm = " in rows["ours @20, cache warm, unchanged repo"]
    if (os.cpu_count() or 1) > 1:  # the core counts alternate, against what the machine gives
        machine = rows["machine: the same Python loop alone / one per core at once"]
        assert "cores give" in machine and "| error |" not in machine
        assert "(rounds: " in rows["ours @20, full repository"]
        assert "independent one-core runs give" in rows["ours @20, full repository"]
        assert "cores give this run" in rows["ours @20, --jobs 1, 2 copies at once"]
    assert (out / "results.md").read_text(encoding="utf-8").endswith(result.stdout)


def run_bench(tmp_path: Path, *args: str) -> tuple[str, dict[str, str]]:
    argv = [sys.executable, str(ROOT / "bench" / "run.py"), "--artifacts", "20", "--repeat", "1", *args]
    result = subprocess.run(
        [*argv, "--out", str(tmp_path / "out"), "--repos", str(tmp_path / "repos")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    rows = {line.split("|")[1].strip(): line for line in result.stdout.splitlines() if line.startswith("| ")}
    return result.stdout, rows


def small_checkout(tmp_path: Path) -> Path:
    """A generated zoo of 150 files made a git work tree: what --real is pointed at."""
    real = tmp_path / "checkout"
    zoo = [sys.executable, str(ROOT / "bench" / "zoo.py"), "zoo", str(real), "--files", "150", "--git"]
    subprocess.run(zoo, check=True, capture_output=True, timeout=120)
    return real


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_bench_zoo_repro_real_and_paired_rows(tmp_path: Path) -> None:
    real = small_checkout(tmp_path)
    only = "startup,repro,zoo,real"
    stdout, rows = run_bench(tmp_path, "--quick", "--zoo", "200", "--pairs", "2", "--real", str(real), "--only", only)
    for row in (
        "one manifest, paired CPU: `python -c pass`",
        "one manifest, paired CPU: ours (`--no-cache --isolated`)",
        "discovery only @gitignore-repro-plain (the .gitignore matcher, git hidden)",
        "ours @gitignore-repro-plain, full repository, cold",
        "discovery only @gitignore-repro-git (git ls-files)",
        "ours @gitignore-repro-git, full repository, cold",
        "discovery only @zoo-200 (git ls-files)",
        "ours @zoo-200, full repository, cold",
        "ours @zoo-200, one changed file (file mode, cold)",
        "ours @checkout, full repository, cold",
        "ours @checkout, one changed file (file mode, cold)",
    ):
        assert row in rows, f"missing row {row!r} in:\n{stdout}"
        assert "| error |" not in rows[row], rows[row]
    assert "parse floor @20, in-process" not in rows  # --only leaves the synthetic rows out
    assert "ours / `python -c pass` = " in rows["one manifest, paired CPU: ours (`--no-cache --isolated`)"]
    assert "/test/train_" in rows["ours @zoo-200, one changed file (file mode, cold)"]
    assert f"- checkout: {real}" in stdout


def beside_or_on_path(name: str) -> str | None:
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.is_file() else shutil.which(name)


@pytest.mark.skipif(
    not (beside_or_on_path("yamllint") and beside_or_on_path("shellcheck")),
    reason="peers not installed (pip install -e '.[bench]')",
)
def test_bench_peers_over_a_real_repository(tmp_path: Path) -> None:
    real = small_checkout(tmp_path)
    stdout, rows = run_bench(tmp_path, "--zoo", "0", "--real", str(real), "--only", "real")
    for row in ("yamllint @checkout, all YAML files", "shellcheck @checkout, all shell files"):
        assert row in rows and "| error |" not in rows[row], stdout
    assert "(yamllint + shellcheck) / ours full = " in rows["yamllint + shellcheck @checkout"]


def test_long_file_lists_are_split_like_xargs(monkeypatch: pytest.MonkeyPatch) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    import measure

    monkeypatch.setattr(measure.os, "sysconf", lambda _name: 4096)
    monkeypatch.setattr(measure.os, "environ", {})
    files = [f"folder/file_{i:04d}.yaml" for i in range(500)]
    batches = measure.argv_batches(["yamllint", "-f", "parsable"], files)
    assert len(batches) > 1
    assert all(b[:3] == ["yamllint", "-f", "parsable"] for b in batches)
    assert [f for b in batches for f in b[3:]] == files
    assert all(sum(len(a) + 1 for a in b) <= 2048 for b in batches)
