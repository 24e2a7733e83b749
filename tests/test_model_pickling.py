"""Every parsed model crosses a process boundary (the parse pool) and goes to the parse cache as a pickle:
what comes back must say the same things as what was parsed."""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from pathlib import Path

import pytest

from recovery_lint.discover import discover
from recovery_lint.parse import read_and_parse
from recovery_lint.sources.python import DYNAMIC
from recovery_lint.span import SourceText, Span

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
EXTRA = {
    "calls.py": (
        "import torch, torch_npu as tn\nfrom mindio_acp import save as s\n"
        "def main(args):\n    if args.resume:\n        torch.load(args.resume, map_location='cpu')\n"
        "    torch.save({'a': (1, -2.0, {3})}, f'x{1}.pt', pickle_protocol=4)\n    tn.npu.set_compile_mode(jit_compile=False)\n"
        "    s(model, *rest, **kw)\n    (f)(1)\n"
    ),
    "job.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  containers:\n    - name: c\n      env: []\n",
}


def facts(value: object, seen: set[int] | None = None) -> object:
    """What a model says, as plain data: every attribute, with spans as (path, start, end)."""
    seen = set() if seen is None else seen
    if isinstance(value, Span):
        return ("span", value.path, value.start, value.end)
    if isinstance(value, SourceText):
        return ("source", value.path, value.text)
    if value is None or isinstance(value, str | int | float | bool | complex | bytes):
        return value
    if isinstance(value, list | tuple):
        return [facts(v, seen) for v in value]
    if isinstance(value, set | frozenset):
        return sorted(repr(facts(v, seen)) for v in value)
    if isinstance(value, Mapping):
        return {k: facts(v, seen) for k, v in value.items()}
    if id(value) in seen:
        return "<seen>"
    seen.add(id(value))
    names: list[str] = []
    for cls in type(value).__mro__:
        names += [n for n in getattr(cls, "__slots__", ()) if n not in ("__weakref__", "__dict__")]
    names += list(getattr(value, "__dict__", {}))
    names += [n for n in ("span", "func_span", "value", "tag", "content_end", "key_column") if hasattr(value, n)]
    return (type(value).__name__, {n: facts(getattr(value, n), seen) for n in sorted(set(names))})


def parsed_files(tmp_path: Path):
    for name, text in EXTRA.items():
        (tmp_path / name).write_text(text)
    candidates, _ = discover([FIXTURES, tmp_path], tmp_path)
    for c in candidates:
        kind = "python" if c.kind == "maybe-python" else c.kind
        yield read_and_parse(c.display, str(c.path), kind)


def test_every_model_says_the_same_after_a_pickle_round_trip(tmp_path):
    kinds = set()
    for parsed in parsed_files(tmp_path):
        if parsed.model is None:
            continue
        kinds.add(parsed.kind)
        back = pickle.loads(pickle.dumps(parsed))
        assert facts(back.model) == facts(parsed.model), parsed.path
    assert {"manifest", "shell", "python", "requirements"} <= kinds


@pytest.mark.parametrize("name", ["calls.py"])
def test_calls_keep_their_arguments_and_spans(tmp_path, name):
    (tmp_path / name).write_text(EXTRA[name])
    parsed = read_and_parse(name, str(tmp_path / name), "python")
    back = pickle.loads(pickle.dumps(parsed)).model
    by_name = {c.qualname: c for c in back.calls}
    save = by_name["torch.save"]
    assert save.positional[0].value == {"a": (1, -2.0, {3})}
    assert save.keywords["pickle_protocol"].value == 4
    assert back.source.text[save.func_span.start : save.func_span.end] == "torch.save"
    assert by_name["torch_npu.npu.set_compile_mode"].keywords["jit_compile"].value is False
    assert dict(by_name["f"].keywords) == {}
    # a value that is no literal is the one DYNAMIC object after the trip too, which rules test with ``is``
    assert by_name["torch.load"].positional[0].value is DYNAMIC
    assert by_name["torch.load"].keywords["map_location"].value == "cpu"
    assert back.source.text[by_name["f"].func_span.start : by_name["f"].func_span.end] == "f"
