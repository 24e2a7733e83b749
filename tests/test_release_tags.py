"""Re-read the release table (schemas/torch_npu_releases.json) from the tagged Ascend/pytorch code.

Needs a git mirror of Ascend/pytorch: ``$TORCH_NPU_MIRROR``, else ``.mirror/Ascend+pytorch/repo`` in a
folder above the project. Skipped when there is none (CI). Run as a script to print the columns
read from every tag of the data file as TSV:
``python tests/test_release_tags.py [TAG ...]``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from functools import cache
from importlib.resources import files
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OPTIONS = "torch_npu/csrc/core/npu/register/OptionsManager.cpp"
# 1.11 builds register run:main, later ones run:_main (the same wrapper)
TORCH_NPU_RUN = re.compile(r"['\"]torch_npu_run\s*=\s*torch_npu\.distributed\.run:_?main['\"]")
COLUMNS = (
    "package",
    "watchdog_default",
    "watchdog_values",
    "starts_watchdog_thread",  # the thread is started as hcclCommWatchdog, or Watchdog::run from 26.0.0
    "reads_torch_hccl_async_error_handling",
    "has_distributed_run_module",
    "ships_torch_npu_run",
    "reads_rank_table_file",
    "reads_resume_mode_enable",
)


def _find_mirror() -> Path | None:
    if env := os.environ.get("TORCH_NPU_MIRROR"):
        return Path(env) if Path(env).is_dir() else None
    for folder in ROOT.parents:
        candidate = folder / ".mirror" / "Ascend+pytorch" / "repo"
        if candidate.is_dir():
            return candidate
    return None


MIRROR = _find_mirror()


def _git(*args: str) -> str | None:
    done = subprocess.run(["git", "-C", str(MIRROR), *args], capture_output=True, text=True, errors="replace")
    return done.stdout if done.returncode == 0 else None


def _show(tag: str, path: str) -> str | None:
    return _git("show", f"{tag}:{path}")


def _csrc_mentions(tag: str, pattern: str) -> list[str]:
    """Lines of torch_npu/csrc at ``tag`` matching the extended regex ``pattern``."""
    out = _git("grep", "-h", "-E", "-e", pattern, tag, "--", "torch_npu/csrc")
    return out.splitlines() if out else []


def _package(tag: str) -> str | None:
    """The last ``VERSION = …`` of setup.py: a literal, or the contents of version.txt it reads."""
    setup = _show(tag, "setup.py") or ""
    assignments = re.findall(r"^\s*VERSION\s*=\s*(.+)$", setup, re.MULTILINE)
    literal = re.fullmatch(r"['\"]([^'\"]+)['\"]", assignments[-1].strip()) if assignments else None
    if literal:
        return literal[1]
    text = _show(tag, "version.txt")
    return text.strip() if text else None


def _function_body(source: str, name: str) -> str | None:
    """The text of C++ function ``name`` from its signature to the closing brace at column 0."""
    match = re.search(rf"OptionsManager::{name}\(\)\s*\{{(.*?)\n\}}", source, re.DOTALL)
    return match[1] if match else None


def _accepted_values(tag: str, body: str) -> list[int] | None:
    """The values the release's TORCH_CHECK lets through; None when it takes any integer."""
    if "TORCH_CHECK" not in body:
        return None
    sources = [_show(tag, OPTIONS) or "", _show(tag, OPTIONS.replace(".cpp", ".h")) or ""]
    for text in sources:
        if match := re.search(r"asyncErrorHandlingMode\s*=\s*\{(\{.*?\})\};", text):
            return sorted(int(key) for key in re.findall(r"\{\s*(-?\d+)\s*,", match[1]))
    raise AssertionError(f"{tag}: TORCH_CHECK without a readable asyncErrorHandlingMode map")


def _watchdog(tag: str) -> tuple[int | None, list[int] | None]:
    """(default when unset, accepted values) of HCCL_ASYNC_ERROR_HANDLING; (None, []) when not read."""
    body = _function_body(_show(tag, OPTIONS) or "", "CheckUseHcclAsyncErrorHandleEnable")
    called = _csrc_mentions(tag, r"CheckUseHcclAsyncErrorHandleEnable\(\)\s*\)")
    if body is None or '"HCCL_ASYNC_ERROR_HANDLING"' not in body or not called:
        return None, []
    default = re.search(r"strtol\([^;]*\)\s*:\s*(\d+)\s*;", body)
    if default is None:
        raise AssertionError(f"{tag}: no default in CheckUseHcclAsyncErrorHandleEnable")
    return int(default[1]), _accepted_values(tag, body)


@cache
def derive(tag: str) -> dict[str, object]:
    """The release table columns as the code at ``tag`` has them."""
    default, values = _watchdog(tag)
    options = _show(tag, OPTIONS) or ""
    return {
        "package": _package(tag),
        "watchdog_default": default,
        "watchdog_values": values,
        "starts_watchdog_thread": bool(
            _csrc_mentions(tag, r"std::thread\(&ProcessGroupHCCL::(hcclCommWatchdog|Watchdog::run)\b")
        ),
        "reads_torch_hccl_async_error_handling": bool(_csrc_mentions(tag, r'"TORCH_HCCL_ASYNC_ERROR_HANDLING"')),
        "has_distributed_run_module": _show(tag, "torch_npu/distributed/run.py") is not None,
        "ships_torch_npu_run": TORCH_NPU_RUN.search(_show(tag, "setup.py") or "") is not None,
        "reads_rank_table_file": bool(_csrc_mentions(tag, r'(getenv|get_and_log_env)\("RANK_TABLE_FILE"\)')),
        "reads_resume_mode_enable": "OptionsManager::IsResumeModeEnable()" in options,
    }


def _data() -> dict:
    return json.loads(files("recovery_lint.schemas").joinpath("torch_npu_releases.json").read_text(encoding="utf-8"))


def _rows() -> list[dict]:
    return _data()["releases"]


needs_mirror = pytest.mark.skipif(MIRROR is None, reason="no git mirror of Ascend/pytorch (set TORCH_NPU_MIRROR)")


@needs_mirror
@pytest.mark.parametrize("row", _rows(), ids=lambda row: row["tag"])
def test_row_matches_its_tag(row: dict) -> None:
    assert {column: row[column] for column in COLUMNS} == derive(row["tag"])
    assert (_git("rev-parse", row["tag"] + "^{commit}") or "").strip() == row["commit"]


@needs_mirror
def test_every_final_release_tag_is_a_row_or_left_out_with_a_reason() -> None:
    tags = set((_git("tag") or "").split())
    left_out = {tag for group in _data()["left_out_tags"]["groups"] for tag in group["tags"]}
    known = {row["tag"] for row in _rows()} | left_out
    pre_release = re.compile(r"alpha|beta", re.IGNORECASE)
    final = {tag for tag in tags if re.match(r"[vV]\d", tag) and not pre_release.search(tag)}
    assert final - known == set()
    assert {row["tag"] for row in _rows()} <= tags


def main(tags: list[str]) -> None:
    if MIRROR is None:
        sys.exit("no git mirror of Ascend/pytorch (set TORCH_NPU_MIRROR)")
    print("tag", *COLUMNS, sep="\t")
    for tag in tags or [row["tag"] for row in _rows()]:
        print(tag, *(json.dumps(value) for value in derive(tag).values()), sep="\t")


if __name__ == "__main__":
    main(sys.argv[1:])
