"""Re-read MindSpeed-LLM's high-availability start-up checks (schemas/mindspeed_llm_checks.json) from
its release tags.

Needs a git mirror of Ascend/MindSpeed-LLM: ``$MINDSPEED_LLM_MIRROR``, else
``.mirror/Ascend+MindSpeed-LLM/repo`` in a folder above the project. Skipped when there is none (CI).
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
from importlib.resources import files
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _find_mirror() -> Path | None:
    if env := os.environ.get("MINDSPEED_LLM_MIRROR"):
        return Path(env) if Path(env).is_dir() else None
    for folder in ROOT.parents:
        candidate = folder / ".mirror" / "Ascend+MindSpeed-LLM" / "repo"
        if candidate.is_dir():
            return candidate
    return None


MIRROR = _find_mirror()
DATA = json.loads(files("recovery_lint.schemas").joinpath("mindspeed_llm_checks.json").read_text(encoding="utf-8"))
# the function of each tag's file that holds the checks
FUNCTIONS = {"mindspeed_llm/training/arguments.py": "_validate_high_availability"}


def _show(tag: str, path: str) -> str:
    done = subprocess.run(["git", "-C", str(MIRROR), "show", f"{tag}:{path}"], capture_output=True, text=True)
    assert done.returncode == 0, f"{tag}:{path}: {done.stderr}"
    return done.stdout


def checks_in(source: str, function: str) -> list[dict]:
    """Every ``if <condition>: raise AssertionError("...")`` directly in ``function``, as the data file
    writes it (``args.`` dropped)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.FunctionDef) and node.name == function):
            continue
        for stmt in node.body:
            if not (isinstance(stmt, ast.If) and len(stmt.body) == 1 and isinstance(stmt.body[0], ast.Raise)):
                continue
            exc = stmt.body[0].exc
            if isinstance(exc, ast.Call) and getattr(exc.func, "id", "") == "AssertionError":
                message = exc.args[0]
                if isinstance(message, ast.Constant):
                    condition = ast.unparse(stmt.test).replace("args.", "")
                    found.append({"when": condition, "message": message.value, "line": stmt.lineno})
    return found


@pytest.mark.skipif(MIRROR is None, reason="no Ascend/MindSpeed-LLM mirror")
@pytest.mark.parametrize("series", sorted(DATA["series"]))
def test_the_checks_are_those_of_the_tag(series):
    entry = DATA["series"][series]
    if not entry["checks"]:
        assert entry.get("note"), "a release line without checks says why"
        return
    function = FUNCTIONS.get(entry["file"], "validate_args")
    assert checks_in(_show(entry["tag"], entry["file"]), function) == entry["checks"]


@pytest.mark.skipif(MIRROR is None, reason="no Ascend/MindSpeed-LLM mirror")
@pytest.mark.parametrize("series", sorted(s for s in DATA["series"] if DATA["series"][s].get("entry_checks")))
def test_the_pretrain_refusal_is_where_the_data_says(series):
    for check in DATA["series"][series]["entry_checks"]:
        lines = _show(DATA["series"][series]["tag"], check["file"]).splitlines()
        assert check["message"] in lines[check["line"] - 1]


@pytest.mark.skipif(MIRROR is None, reason="no Ascend/MindSpeed-LLM mirror")
def test_use_dist_ckpt_is_forced_off_where_the_data_says():
    for series, entry in DATA["series"].items():
        arguments = _show(entry["tag"], "mindspeed_llm/training/arguments.py")
        forced = "args.use_dist_ckpt = False" in arguments.split("def _add_dummy_args_v2", 1)[-1].split("\ndef ", 1)[0]
        assert forced == (entry["use_dist_ckpt"] == "false") or entry["use_dist_ckpt"] == "flag", series
