"""Fuzz targets: one per parser front end (manifest, shell, python, pins) and one for the fix engine.

Each target is a hypothesis test body: it draws an input (generated files in many styles, then
mutated at the character level, or plain random text) and checks what must hold for any input:
the parser returns instead of raising, and every position it reports lies inside the text and
points at what it claims to. The fix target runs the whole fix loop and the safety checks of
``tests/test_fix_properties.py``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from hypothesis import strategies as st

from recovery_lint.span import SourceText, Span
from tests import strategies as gen

# characters that matter to one of the grammars, and multi-byte ones for the offset tables
INTERESTING = [*":-#'\"{}[],&*!|>?%@`\\$()=;\n\r\t ", "é", "中", "😀", "\ufeff", "\x00", "\u2028", "\x85"]

# any character a UTF-8 file can hold (files are decoded strictly: no lone surrogates)
CHARS = st.characters(codec="utf-8")
# except shell scripts: bytes that are not UTF-8 (a GBK comment) are kept as U+DC80..U+DCFF
UNDECODABLE = ["\udcd6", "\udcd0", "\udcb1", "\udcff"]


@st.composite
def mutated(draw, base: st.SearchStrategy[str], pieces: tuple[str, ...] = ()) -> str:
    """A text from ``base`` with a few character-level mutations."""
    interesting = st.sampled_from([*INTERESTING, *pieces])
    text = draw(base)
    for _ in range(draw(st.integers(0, 6))):
        op = draw(st.sampled_from(("insert", "delete", "duplicate", "replace", "truncate")))
        n = len(text)
        at = draw(st.integers(0, n))
        if op == "insert":
            piece = draw(st.text(interesting | CHARS, min_size=1, max_size=4))
            text = text[:at] + piece + text[at:]
        elif op == "delete" and n:
            text = text[:at] + text[at + draw(st.integers(1, 8)) :]
        elif op == "duplicate" and n:
            end = min(n, at + draw(st.integers(1, 40)))
            text = text[:end] + text[at:end] + text[end:]
        elif op == "replace" and n:
            text = text[:at] + draw(interesting) + text[at + 1 :]
        elif op == "truncate":
            text = text[:at]
    return text


def inputs(base: st.SearchStrategy[str], pieces: tuple[str, ...] = ()) -> st.SearchStrategy[str]:
    random_text = st.text(st.sampled_from([*INTERESTING, *pieces]) | CHARS, max_size=300)
    return st.one_of(base, mutated(base, pieces), random_text)


def _lines(strategy) -> st.SearchStrategy[str]:
    return strategy.map(lambda lines: "\n".join(lines) + "\n")


# each draw starts its own comment counter
MANIFESTS = st.just(None).flatmap(lambda _: gen.manifest_text("/job/code/train.sh", "/job/code/train.py", [0]))
SCRIPTS = st.just(None).flatmap(lambda _: _lines(gen.shell_lines("train.py", [0])))
PYTHON = st.just(None).flatmap(lambda _: _lines(gen.python_lines([0])))
PINS = st.lists(
    st.sampled_from(
        (
            "torch==2.1.0",
            "torch-npu==2.1.0.post10  # pinned",
            "torch_npu>=2.1.0.post8",
            '  "torch==1.11.0",',
            "RUN pip install torch_npu-2.1.0.post10-cp39-cp39-linux_aarch64.whl",
            "ARG CANN_VERSION=8.0.RC2",
            "Ascend-cann-toolkit_8.0.RC3_linux-aarch64.run",
            "mindio_acp-1.0.0-py3-none-linux_aarch64.whl",
            "dependencies = [",
            "-r other.txt",
        )
    ),
    max_size=8,
).map("\n".join)


YAML_BREAKS = ("\n", "\r", "\x85", "\u2028", "\u2029")


def _check_span(src: SourceText, span: Span, what: str) -> None:
    text = src.text
    assert 0 <= span.start <= span.end <= len(text), f"{what}: {span} outside a text of {len(text)}"
    assert span == src.span(span.start, span.end), f"{what}: inconsistent {span}"


def manifest_target(text: str) -> None:
    from recovery_lint.parse import parse_source
    from recovery_lint.sources.yamlnodes import YMap, YScalar, YSeq

    src = SourceText("job.yaml", text)
    parsed = parse_source(src, "manifest")
    for issue in parsed.issues:
        _check_span(src, issue.span, "issue")
    model = parsed.model
    for doc in getattr(model, "docs", []):
        stack = [doc.root]
        seen: set[int] = set()
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            _check_span(src, node.span, "node")
            if isinstance(node, YScalar):
                written = text[node.span.start : node.span.end]
                # a line break inside a plain scalar (YAML's: \n, \r, NEL, LS, PS) is folded into its value
                if node.style is None and node.value and not any(b in written for b in YAML_BREAKS):
                    assert written == node.value, f"plain scalar {node.value!r} spans {written!r}"
            elif isinstance(node, YMap):
                for k, v in node.items:
                    stack += [k, v]
            elif isinstance(node, YSeq):
                stack += node.items
        for _, container in doc.containers():
            for var in container.env:
                _check_span(src, var.name.span, "env name")


def shell_target(text: str) -> None:
    from recovery_lint.sources.shell import Assignment, parse_shell
    from recovery_lint.span import to_bytes

    src = SourceText("train.sh", text)
    script = parse_shell(src)
    data = to_bytes(text)
    for issue in script.issues:
        _check_span(src, issue.span, "issue")
    for span in script.comments:
        _check_span(src, span, "comment")
        assert text[span.start : span.start + 1] == "#", f"comment span {span} starts at {text[span.start :][:5]!r}"
    for event in script.events:
        _check_span(src, event.span, "event")
        _check_span(src, event.statement, "statement")
        if isinstance(event, Assignment):
            _check_span(src, event.name_span, "name")
            if event.kind != "unset":
                assert text[event.name_span.start : event.name_span.end] == event.name
        else:
            for word in event.words:
                _check_span(src, word.span, "word")
                assert text[word.span.start : word.span.end] == word.text, f"word {word.text!r} misplaced"
                raw = data[word.span.start_byte : word.span.end_byte]
                assert raw == to_bytes(word.text), f"word {word.text!r} at bytes {raw!r}"


def python_target(text: str) -> None:
    from recovery_lint.sources.python_parse import parse_python

    src = SourceText("train.py", text)
    py = parse_python(src)
    for issue in py.issues:
        _check_span(src, issue.span, "issue")
    for imp in py.imports:
        _check_span(src, imp.span, "import")
        assert text[imp.span.start : imp.span.end].lstrip("\ufeff").startswith(("import", "from"))
    for call in py.calls:
        _check_span(src, call.span, "call")
        _check_span(src, call.func_span, "func")
        for arg in [*call.keywords.values(), *call.positional]:
            assert arg.source == text[arg.span.start : arg.span.end]


def pins_target(text: str) -> None:
    from recovery_lint.sources.versions import parse_pins

    for kind in ("requirements", "pyproject", "dockerfile"):
        src = SourceText("requirements.txt", text)
        for pin in parse_pins(src, kind).pins:
            _check_span(src, pin.span, "pin")
            _check_span(src, pin.line_span, "pin line")
            assert text[pin.span.start : pin.span.end] == pin.version, f"pin {pin.version!r} misplaced"


@st.composite
def mutated_repositories(draw) -> tuple[dict[str, str], bool]:
    """A generated repository, sometimes with one file mutated (then it may not parse any more)."""
    files = draw(gen.repositories())
    if draw(st.booleans()):
        return files, True
    path = draw(st.sampled_from(sorted(files)))
    files[path] = draw(mutated(st.just(files[path])))
    return files, False


def fix_target(case: tuple[dict[str, str], bool]) -> None:
    from recovery_lint.fix import fix_loop
    from recovery_lint.parse import parse_source
    from tests.test_fix_properties import check_fix_safety, request_for, write_repo

    files, intact = case
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_repo(root, files)
        if intact:
            check_fix_safety(root, files)
            return
        # a mutated file: the fix loop still ends, no fixed file parses worse than before (the
        # engine reverts such a file), and a second run over the result changes nothing
        outcome = fix_loop(request_for(root), unsafe=True)
        kinds = {f.path: (f.kind, len(f.issues)) for f in lint_files(root)}
        for path, new in outcome.fixed.items():
            kind, before = kinds[path]
            after = parse_source(SourceText(path, new), kind)
            assert len(after.issues) <= before, f"{path}: {before} -> {[i.message for i in after.issues]}"
        write_repo(root, outcome.fixed)
        again = fix_loop(request_for(root), unsafe=True)
        assert again.fixed == {}, f"a second run still changes {sorted(again.fixed)}"


def lint_files(root: Path):
    from recovery_lint.engine import lint
    from tests.test_fix_properties import request_for

    return lint(request_for(root)).files


TARGETS: dict[str, tuple[st.SearchStrategy, Callable[[object], None]]] = {
    "manifest": (inputs(MANIFESTS), manifest_target),
    "shell": (inputs(SCRIPTS, tuple(UNDECODABLE)), shell_target),
    "python": (inputs(PYTHON), python_target),
    "pins": (inputs(PINS), pins_target),
    "fix": (mutated_repositories(), fix_target),
}
