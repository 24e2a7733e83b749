"""Atomic, honest writes: ``--fix`` replaces a file through a temporary file in the same folder,
keeps its mode, and reports every file it could not write (exit 2) with the original intact; it
never follows a symbolic link out of the linted tree, and discovery never walks one."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

import pytest

from recovery_lint import cli
from recovery_lint import fix as fix_module
from recovery_lint.fix import WriteError, write_atomic

# torch_npu 2.1.0 (release 5.0.0) defaults the watchdog off: RL101's insertion of the missing export
# is a safe fix, so plain --fix writes it
PINS = {
    "requirements.txt": "torch==1.11.0\ntorch-npu==1.11.0.post14\n"
}  # release 6.0.rc2: the watchdog is off by default
FIXABLE = "#!/bin/bash\n# keep\ntorchrun --nnodes 2 --nproc_per_node 8 train.py\n"
FIXED = "#!/bin/bash\n# keep\nexport HCCL_ASYNC_ERROR_HANDLING=1\ntorchrun --nnodes 2 --nproc_per_node 8 train.py\n"


def run(monkeypatch, capsys, cwd: Path, *args: str) -> tuple[int, str, str]:
    monkeypatch.chdir(cwd)
    code = cli.main(["--isolated", "--output-format", "concise", "--select", "RL101", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def make(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")


def test_a_fix_goes_through_a_temporary_file_in_the_same_folder(tmp_path, monkeypatch, capsys):
    make(tmp_path, {**PINS, "run/train.sh": FIXABLE})
    target = tmp_path / "run" / "train.sh"
    inode = target.stat().st_ino
    renames: list[tuple[str, str]] = []
    real_replace = os.replace

    def recording_replace(src, dst):
        renames.append((str(src), str(dst)))
        assert Path(src).read_text("utf-8") == FIXED  # complete before it takes the file's place
        assert target.read_text("utf-8") == FIXABLE
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", recording_replace)
    code, _, err = run(monkeypatch, capsys, tmp_path, "--fix", ".")
    assert code == 0, err
    assert len(renames) == 1
    src, dst = map(Path, renames[0])
    assert dst == target and src.parent == target.parent and src.name.startswith(".train.sh.")
    assert target.read_text("utf-8") == FIXED
    assert target.stat().st_ino != inode  # renamed over, not rewritten in place
    assert sorted(p.name for p in target.parent.iterdir()) == ["train.sh"]  # no temporary file left


@pytest.mark.parametrize("mode", [0o755, 0o640, 0o600, 0o2775])
def test_mode_bits_are_kept(tmp_path, monkeypatch, capsys, mode):
    make(tmp_path, {**PINS, "train.sh": FIXABLE})
    target = tmp_path / "train.sh"
    os.chmod(target, mode)
    code, _, err = run(monkeypatch, capsys, tmp_path, "--fix", ".")
    assert code == 0, err
    assert target.read_text("utf-8") == FIXED
    assert stat.S_IMODE(target.stat().st_mode) == mode


def test_a_read_only_file_is_reported_and_the_others_are_written(tmp_path, monkeypatch, capsys):
    make(tmp_path, {**PINS, "a/train.sh": FIXABLE, "b/train.sh": FIXABLE})
    locked = tmp_path / "a" / "train.sh"
    os.chmod(locked, 0o444)
    code, out, err = run(monkeypatch, capsys, tmp_path, "--fix", ".")
    assert code == 2
    assert "recovery-lint: error: a/train.sh: is read-only; not written" in err
    assert locked.read_text("utf-8") == FIXABLE and stat.S_IMODE(locked.stat().st_mode) == 0o444
    assert (tmp_path / "b" / "train.sh").read_text("utf-8") == FIXED
    assert "a/train.sh" in out  # its finding is still reported


def test_a_file_changed_on_disk_while_linted_is_not_overwritten(tmp_path, monkeypatch, capsys):
    make(tmp_path, {**PINS, "a/train.sh": FIXABLE, "b/train.sh": FIXABLE})
    edited = tmp_path / "a" / "train.sh"
    real_loop = fix_module.fix_loop

    def loop_then_edit(request, unsafe):
        outcome = real_loop(request, unsafe)
        edited.write_text(FIXABLE + "echo edited meanwhile\n", "utf-8")  # the user saves in an editor
        return outcome

    monkeypatch.setattr(fix_module, "fix_loop", loop_then_edit)
    code, _, err = run(monkeypatch, capsys, tmp_path, "--fix", ".")
    assert code == 2
    assert "a/train.sh: changed on disk while it was being linted; not written" in err
    assert edited.read_text("utf-8") == FIXABLE + "echo edited meanwhile\n"
    assert (tmp_path / "b" / "train.sh").read_text("utf-8") == FIXED


@pytest.mark.parametrize("failing", ["replace", "mkstemp", "write"])
def test_a_disk_error_is_reported_per_file_with_the_original_intact(tmp_path, monkeypatch, capsys, failing):
    make(tmp_path, {**PINS, "a/train.sh": FIXABLE, "b/train.sh": FIXABLE})
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    broken = tmp_path / "a"
    if failing == "replace":
        real = os.replace

        def replace(src, dst):
            if Path(dst).parent == broken:
                raise full
            real(src, dst)

        monkeypatch.setattr(os, "replace", replace)
    elif failing == "mkstemp":
        real_mkstemp = tempfile.mkstemp

        def mkstemp(*args, **kwargs):
            if Path(kwargs["dir"]) == broken:
                raise full
            return real_mkstemp(*args, **kwargs)

        monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    else:
        real_fsync = os.fsync

        def fsync(fd):
            if os.readlink(f"/proc/self/fd/{fd}").startswith(str(broken)):
                raise full
            real_fsync(fd)

        monkeypatch.setattr(os, "fsync", fsync)
    code, _, err = run(monkeypatch, capsys, tmp_path, "--fix", ".")
    assert code == 2
    assert "a/train.sh: write failed: No space left on device" in err
    assert (broken / "train.sh").read_text("utf-8") == FIXABLE
    assert sorted(p.name for p in broken.iterdir()) == ["train.sh"]  # the temporary file is gone
    assert (tmp_path / "b" / "train.sh").read_text("utf-8") == FIXED


def test_a_symlink_out_of_the_tree_is_neither_linted_nor_written(tmp_path, monkeypatch, capsys):
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    make(tree, {**PINS, "train.sh": FIXABLE})
    make(outside, {"secret.sh": FIXABLE})
    (tree / "link.sh").symlink_to(outside / "secret.sh")
    code, out, err = run(monkeypatch, capsys, tree, "--fix", ".")
    assert code == 0, err
    assert "link.sh" not in out + err
    assert (outside / "secret.sh").read_text("utf-8") == FIXABLE
    assert (tree / "link.sh").is_symlink()
    assert (tree / "train.sh").read_text("utf-8") == FIXED


def test_write_atomic_refuses_a_link_that_leaves_the_tree(tmp_path):
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    make(outside, {"secret.sh": FIXABLE})
    tree.mkdir()
    link = tree / "link.sh"
    link.symlink_to(outside / "secret.sh")
    with pytest.raises(WriteError, match="symbolic link to a file outside the linted tree"):
        write_atomic(link, FIXABLE, FIXED, [tree])
    assert (outside / "secret.sh").read_text("utf-8") == FIXABLE
    loop = tree / "loop.sh"
    loop.symlink_to(loop)
    with pytest.raises(WriteError):
        write_atomic(loop, FIXABLE, FIXED, [tree])


def test_a_symlink_inside_the_tree_is_written_through_and_stays_a_link(tmp_path, monkeypatch, capsys):
    make(tmp_path, {**PINS, "scripts/real.sh": FIXABLE})
    (tmp_path / "train.sh").symlink_to(tmp_path / "scripts" / "real.sh")
    code, _, err = run(monkeypatch, capsys, tmp_path, "--fix", ".")
    assert code == 0, err
    assert (tmp_path / "train.sh").is_symlink()
    assert (tmp_path / "scripts" / "real.sh").read_text("utf-8") == FIXED


def test_an_explicitly_named_link_out_of_the_tree_is_not_written(tmp_path, monkeypatch, capsys):
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    make(outside, {"secret.sh": FIXABLE})
    make(tree, PINS)
    (tree / ".git").mkdir()  # a checkout: file mode reads the pins beside the named file
    (tree / "link.sh").symlink_to(outside / "secret.sh")
    code, _, err = run(monkeypatch, capsys, tree, "--fix", "link.sh")
    assert (outside / "secret.sh").read_text("utf-8") == FIXABLE
    assert code == 2  # linted as named, but the write through the link is refused
    assert "link.sh: is a symbolic link to a file outside the linted tree; not written" in err


def test_discovery_does_not_walk_a_symlinked_directory(tmp_path, monkeypatch, capsys):
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    make(tree, {"train.sh": "echo ok\n"})
    make(outside, {"jobs/train.sh": FIXABLE, "jobs/requirements.txt": PINS["requirements.txt"]})
    (tree / "jobs").symlink_to(outside / "jobs", target_is_directory=True)
    (tree / "up").symlink_to(tmp_path, target_is_directory=True)  # a loop back up the tree
    code, out, err = run(monkeypatch, capsys, tree, "--fix", ".")
    assert code == 0, err
    assert "jobs/" not in out and "up/" not in out
    assert (outside / "jobs" / "train.sh").read_text("utf-8") == FIXABLE


def test_fifo_and_dangling_links_are_skipped_without_blocking(tmp_path, monkeypatch, capsys):
    make(tmp_path, {**PINS, "train.sh": FIXABLE})
    os.mkfifo(tmp_path / "pipe.yaml")  # opening it would wait for a writer forever
    (tmp_path / "gone.sh").symlink_to(tmp_path / "missing.sh")
    (tmp_path / "self.yaml").symlink_to(tmp_path / "self.yaml")
    code, out, err = run(monkeypatch, capsys, tmp_path, "--fix", ".")
    assert code == 0, err
    assert (tmp_path / "train.sh").read_text("utf-8") == FIXED
    assert "pipe.yaml" not in out and "self.yaml" not in out
