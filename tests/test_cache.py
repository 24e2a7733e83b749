"""The content-hash cache: unchanged runs come from it, changed files are re-parsed, and cross-file
findings are always computed from the current files."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from recovery_lint import cli
from recovery_lint.flow import read as read_module
from recovery_lint.rules.rl101_watchdog_disabled import _ACJOB, _MANIFEST, _PROCESS_LABELS
from recovery_lint.speed.cache import CACHE_DIR_NAME

SCRIPT_OFF = "#!/bin/bash\nexport HCCL_ASYNC_ERROR_HANDLING=0\ntorchrun --nnodes 2 train.py\n"
SCRIPT_ON = "#!/bin/bash\nexport HCCL_ASYNC_ERROR_HANDLING=1\ntorchrun --nnodes 2 train.py\n"
# process-level recovery exists only for an AscendJob (on a Volcano Job the labels do nothing)
PROCESS_RECOVERY = _ACJOB.replace("    framework: pytorch\n", "    framework: pytorch\n" + _PROCESS_LABELS)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))  # where the signing key lives
    monkeypatch.delenv("RECOVERY_LINT_NO_CACHE", raising=False)
    root = tmp_path / "repo"
    root.mkdir()
    (root / "job.yaml").write_text(_MANIFEST)
    (root / "train.sh").write_text(SCRIPT_OFF)
    (root / "requirements.txt").write_text("torch==2.1.0\ntorch-npu==2.1.0.post10\n")
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The display paths the engine parses (instead of loading from the cache), run by run."""
    seen: list[str] = []
    real = read_module.read_and_parse

    def spy(*args):
        seen.append(args[0])
        return real(*args)

    monkeypatch.setattr(read_module, "read_and_parse", spy)
    return seen


def findings(capsys: pytest.CaptureFixture[str], *args: str) -> list[tuple[str, str, int]]:
    capsys.readouterr()
    code = cli.main(["check", *args, "--output-format", "json", "--isolated", "--jobs", "1"])
    assert code in (0, 1)
    return [(d["code"], d["path"], d["line"]) for d in json.loads(capsys.readouterr().out)]


def test_default_cache_is_git_ignored_and_an_unchanged_rerun_parses_nothing(repo, parsed, capsys):
    first = findings(capsys, ".")
    assert ("RL101", "train.sh", 2) in first
    assert sorted(parsed) == ["job.yaml", "requirements.txt", "train.sh"]
    cache = repo / CACHE_DIR_NAME
    assert (cache / ".gitignore").read_text().splitlines()[-1] == "*"
    parsed.clear()
    assert findings(capsys, ".") == first
    assert parsed == []  # the whole run came from the cache


def test_no_cache_neither_reads_nor_writes(repo, parsed, capsys):
    findings(capsys, ".", "--no-cache")
    assert not (repo / CACHE_DIR_NAME).exists()
    parsed.clear()
    findings(capsys, ".", "--no-cache")
    assert len(parsed) == 3


def test_cache_dir_option(repo, tmp_path, capsys):
    findings(capsys, ".", "--cache-dir", str(tmp_path / "elsewhere"))
    assert (tmp_path / "elsewhere" / ".gitignore").is_file()
    assert not (repo / CACHE_DIR_NAME).exists()


def test_changed_script_changes_the_finding_of_its_cached_manifest_job(repo, parsed, capsys):
    assert ("RL101", "train.sh", 2) in findings(capsys, ".")
    # the script the manifest runs changes: only it is parsed again, the job is linked afresh
    (repo / "train.sh").write_text(SCRIPT_ON)
    parsed.clear()
    assert not [f for f in findings(capsys, ".") if f[0] == "RL101"]
    assert parsed == ["train.sh"]
    # and back: the old script's model comes from the cache, the finding returns
    (repo / "train.sh").write_text(SCRIPT_OFF)
    parsed.clear()
    assert ("RL101", "train.sh", 2) in findings(capsys, ".")
    assert parsed == []


def test_changed_manifest_changes_the_finding_on_its_cached_script(repo, parsed, capsys):
    assert ("RL101", "train.sh", 2) in findings(capsys, ".")
    # process-level recovery needs the watchdog off: the unchanged script is now right
    (repo / "job.yaml").write_text(PROCESS_RECOVERY)
    parsed.clear()
    assert not [f for f in findings(capsys, ".") if f[0] in ("RL101", "RL102")]
    assert parsed == ["job.yaml"]


def test_file_mode_uses_the_cache_and_still_links_the_repository(repo, parsed, capsys):
    (repo / ".git").mkdir()  # the repository root, where file mode looks for the job's other files
    assert ("RL101", "train.sh", 2) in findings(capsys, "train.sh")
    (repo / "job.yaml").write_text(PROCESS_RECOVERY)
    parsed.clear()
    assert not [f for f in findings(capsys, "train.sh") if f[0] == "RL101"]
    assert parsed == ["job.yaml"]


def test_a_run_over_named_files_keeps_no_whole_run_entry(repo, parsed, capsys, monkeypatch):
    """A run over named files runs because they changed: it stats no file of the repository for a
    whole-run key (a stat of each of tens of thousands of files), and its parsed models still come
    from the cache; a folder run keeps its entry."""
    from recovery_lint.speed import runcache

    keyed: list[int] = []
    real = runcache.run_key_of
    monkeypatch.setattr(runcache, "run_key_of", lambda *a, **k: keyed.append(1) or real(*a, **k))
    (repo / ".git").mkdir()
    first = findings(capsys, "train.sh")
    parsed.clear()
    assert findings(capsys, "train.sh") == first
    assert keyed == [] and parsed == []
    findings(capsys, ".")
    assert keyed == [1]


def test_corrupt_entries_are_ignored(repo, parsed, capsys):
    first = findings(capsys, ".")
    entries = [p for p in (repo / CACHE_DIR_NAME).rglob("*") if p.is_file() and p.name != ".gitignore"]
    assert entries
    for path in entries:
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2] + b"\0garbage")
    parsed.clear()
    assert findings(capsys, ".") == first
    assert len(parsed) == 3


def test_entries_signed_with_another_key_are_ignored(repo, parsed, capsys, tmp_path, monkeypatch):
    first = findings(capsys, ".")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "another-user"))  # a cache that came with a checkout
    parsed.clear()
    assert findings(capsys, ".") == first
    assert len(parsed) == 3


def test_other_configuration_does_not_reuse_results(repo, parsed, capsys):
    assert ("RL101", "train.sh", 2) in findings(capsys, ".")
    parsed.clear()
    assert [f[0] for f in findings(capsys, ".", "--select", "RL3")] == ["RL301"]
    assert ("RL101", "train.sh", 2) in findings(capsys, ".")


def test_environment_variable_turns_the_cache_off(repo, parsed, capsys, monkeypatch):
    monkeypatch.setenv("RECOVERY_LINT_NO_CACHE", "1")
    findings(capsys, ".")
    assert not (repo / CACHE_DIR_NAME).exists()


def test_fix_with_the_cache_then_a_clean_rerun(repo, parsed, capsys):
    findings(capsys, ".")
    capsys.readouterr()
    # rewriting the 0 the user exported is an unsafe fix: --fix alone leaves it
    assert cli.main(["check", ".", "--fix", "--isolated", "--jobs", "1", "--select", "RL101"]) == 1
    assert (repo / "train.sh").read_text() == SCRIPT_OFF
    assert cli.main(["check", ".", "--fix", "--unsafe-fixes", "--isolated", "--jobs", "1", "--select", "RL101"]) == 0
    assert (repo / "train.sh").read_text() == SCRIPT_ON
    parsed.clear()
    assert not [f for f in findings(capsys, ".") if f[0] == "RL101"]
    assert parsed == ["train.sh"]


def test_the_cache_stays_bounded(repo, capsys, monkeypatch):
    from recovery_lint.speed import cache as cache_module

    monkeypatch.setattr(cache_module, "MAX_RUNS", 3)
    monkeypatch.setattr(cache_module, "MAX_PACKS", 2)
    for n in range(6):  # six repository states, each with a new script
        (repo / "train.sh").write_text(SCRIPT_OFF + f"echo {n}\n")
        findings(capsys, ".")
    folder = repo / CACHE_DIR_NAME
    assert len(list((folder / "runs").iterdir())) == 3
    assert len(list((folder / "files").glob("*.pack"))) <= 3
    # what the last state needs is still there: nothing is parsed again
    real = read_module.read_and_parse
    seen = []
    monkeypatch.setattr(read_module, "read_and_parse", lambda *args: seen.append(args[0]) or real(*args))
    (repo / "train.sh").write_text(SCRIPT_OFF + "echo 5\n")
    (repo / "requirements.txt").write_text("torch==2.1.0\n# pinned\n")
    findings(capsys, ".")
    assert seen == ["requirements.txt"]


def test_a_run_over_other_paths_of_the_same_repository_is_not_served_from_another_runs_entry(repo, capsys):
    # two jobs in two folders of one repository: linting one folder, then the other, then a file,
    # parses and links different files each time, so each scope has its own entry
    assert "train.sh" in _MANIFEST
    subprocess.run(["git", "init", "-q", str(repo)], check=True)  # the repository is the context of a folder
    for name in ("a", "b"):
        (repo / name).mkdir()
        (repo / name / "job.yaml").write_text(_MANIFEST.replace("train.sh", f"run_{name}.sh"))
        (repo / name / f"run_{name}.sh").write_text(SCRIPT_OFF)
    scopes = (["a/run_a.sh"], ["b"], ["."], ["b/run_b.sh"], ["a"])
    cached = [sorted(findings(capsys, *paths)) for paths in scopes]
    fresh = [sorted(findings(capsys, "--no-cache", *paths)) for paths in scopes]
    assert ("RL101", "b/run_b.sh", 2) in fresh[1]
    assert cached == fresh


@pytest.mark.parametrize("output_format", ["concise", "sarif", "junit"])  # full adds the scorecard: the jobs
def test_an_unchanged_rerun_quotes_its_findings_without_linking_again(repo, capsys, monkeypatch, output_format):
    """The report of a cached run quotes the lines of its findings and lists the linted files as the
    first run did, reading only the files it quotes: the jobs are not linked again."""
    from recovery_lint import engine

    def report() -> str:
        capsys.readouterr()
        code = cli.main(["check", ".", "--output-format", output_format, "--isolated", "--jobs", "1"])
        assert code == 1
        return capsys.readouterr().out

    cold = report()
    assert "train.sh" in cold
    links: list[int] = []
    real = engine.build_project
    monkeypatch.setattr(engine, "build_project", lambda *a, **k: links.append(1) or real(*a, **k))
    assert report() == cold
    assert links == []


def show_jobs(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    capsys.readouterr()
    assert cli.main(["check", *args, "--show-jobs", "--isolated", "--jobs", "1"]) in (0, 1)
    return capsys.readouterr().out


def test_a_named_entry_is_reached_through_launchers_changed_since_the_names_were_kept(repo, capsys, monkeypatch):
    """A run over named files keeps the names each launcher writes, each trusted while the launcher's
    stat is unchanged: unchanged launchers are not read again, and a script that starts running the
    named entry (and the script that runs it) is seen at once."""
    from recovery_lint.flow import reach

    subprocess.run(["git", "init", "-q"], check=True)
    (repo / "job.yaml").unlink()
    (repo / "train.sh").unlink()
    (repo / "train.py").write_text(
        'import torch\nimport torch_npu\nif __name__ == "__main__":\n    torch.save({}, "x")\n'
    )
    (repo / "run.sh").write_text("#!/bin/bash\necho nothing\n")
    (repo / "top.sh").write_text("#!/bin/bash\nbash run.sh\n")
    from recovery_lint.speed.cache import NAMES, Cache

    read: list[str] = []
    real = reach.launcher_text
    monkeypatch.setattr(reach, "launcher_text", lambda c: read.append(c.display) or real(c))
    written: list[str] = []
    put = Cache.put_entry
    monkeypatch.setattr(Cache, "put_entry", lambda self, folder, *a: written.append(folder) or put(self, folder, *a))
    assert "train.py (standalone)\n  not judged" in show_jobs(capsys, "train.py")
    assert sorted(read) == ["run.sh", "top.sh"]
    assert written == [NAMES] and len(list((repo / CACHE_DIR_NAME / NAMES).iterdir())) == 1
    read.clear()
    written.clear()
    assert "train.py (standalone)\n  not judged" in show_jobs(capsys, "train.py")
    assert read == [] and written == []  # nothing names the entry, nothing changed: nothing read or written
    (repo / "run.sh").write_text(SCRIPT_OFF)
    read.clear()
    shown = show_jobs(capsys, "train.py")
    assert "top.sh (standalone)\n  judged: training" in shown
    assert "launch torchrun at run.sh:3 -> entry train.py" in shown
    # run.sh read for its names, then for the path to train.py it writes; top.sh for its path to run.sh
    assert sorted(read) == ["run.sh", "run.sh", "top.sh"]


def test_a_named_launchers_kept_names_stay_for_the_next_run_that_looks_in_it(repo, capsys, monkeypatch):
    """A run over a named script does not look in that script's text for names, and keeps what the
    cache holds of them: a later run over another file reads the names of neither script again."""
    from recovery_lint.flow import reach

    subprocess.run(["git", "init", "-q"], check=True)
    (repo / "job.yaml").unlink()
    (repo / "train.py").write_text(
        'import torch\nimport torch_npu\nif __name__ == "__main__":\n    torch.save({}, "x")\n'
    )
    (repo / "run.sh").write_text("#!/bin/bash\nbash train.sh\n")
    named: list[str] = []  # the launchers whose names are read from their text
    real = reach._WordIndex._runnable_names
    monkeypatch.setattr(
        reach._WordIndex, "_runnable_names", lambda self, i: named.append(self.launchers[i].display) or real(self, i)
    )
    show_jobs(capsys, "train.py")
    assert sorted(named) == ["run.sh", "train.sh"]
    named.clear()
    show_jobs(capsys, "train.sh")  # its own names are not read, and what the cache holds of them stays
    assert named == []
    assert "run.sh (standalone)" in show_jobs(capsys, "train.py")
    assert named == []
