"""Read one file once and parse it with the parser for its kind.

Runs in worker processes for large runs, so everything it returns is plain picklable data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .kinds import MANIFEST, MAYBE_SHELL, OTHER, PIN_KINDS, PYTHON, README, SHELL, SHELL_KINDS
from .lazyre import LazyPattern
from .span import SourceText, Span

MAX_FILE_BYTES = 10 * 1024 * 1024
HEAD_BYTES = 64 * 1024  # what is kept of a larger file, to tell what it is for


# what a file issue is: the file could not be read or parsed; it is a template, not checked; it is a
# script for another shell than bash, not checked (rules map these to their findings)
UNREADABLE, TEMPLATE, OTHER_SHELL = "unreadable", "template", "other-shell"


@dataclass
class FileIssue:
    """A problem reading or parsing a file, of one of the kinds below."""

    span: Span
    message: str
    kind: str = UNREADABLE


@dataclass(eq=False, repr=False)
class ParsedFile:
    """One file as parsed: its display path, kind, text and model, and the issues reading it."""

    path: str  # display path
    kind: str  # manifest | shell | python | requirements | pyproject | dockerfile | other
    source: SourceText | None
    model: object = None  # ManifestFile | ShellScript | PythonFile | PinFile
    issues: list[FileIssue] = field(default_factory=list)
    relevant: bool = True  # False for YAML that is not a Kubernetes object

    @property
    def text(self) -> str:
        return self.source.text if self.source else ""


def decode(path: str, data: bytes, kind: str = "") -> tuple[SourceText | None, FileIssue | None]:
    """The file's text, or why it is not linted. A shell script may hold bytes that are not UTF-8
    (bash reads bytes: a GBK comment is fine); they are kept as U+DC80..U+DCFF (``span.to_bytes``)."""
    nul = data.find(b"\x00", 0, 8192)
    if nul >= 0:
        # the text around the NULs is kept (not linted): a folder run still sees what the file is for
        kept = SourceText(path, data.decode("utf-8", "replace").replace("\x00", "\ufffd"))
        at = len(data[:nul].decode("utf-8", "replace"))
        return None, FileIssue(kept.span(at, at + 1), "binary file (contains NUL bytes); not linted")
    try:
        return SourceText(path, data.decode("utf-8")), None
    except UnicodeDecodeError as exc:
        kept = SourceText(path, data.decode("utf-8", "surrogateescape"))
        if kind in SHELL_KINDS:
            return kept, None
        declared = declared_encoding(data) if kind == PYTHON else None
        if declared is not None:
            try:
                return SourceText(path, data.decode(declared), declared), None
            except UnicodeDecodeError as wrong:
                at = len(data[: wrong.start].decode(declared, "replace"))
                message = f"not valid {declared}, the encoding its coding line declares (byte {wrong.start})"
                message += "; not linted"
                return None, FileIssue(kept.span(at, at + 1), message)
        at = len(data[: exc.start].decode("utf-8"))  # the bytes before the first bad one are valid
        return None, FileIssue(kept.span(at, at + 1), f"not valid UTF-8 (byte {exc.start}); not linted")


# PEP 263: a comment on the first or second line naming the source encoding (``# -*- coding: gbk -*-``)
_CODING = LazyPattern(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


def declared_encoding(data: bytes) -> str | None:
    """The codec a Python file declares on its first two lines (PEP 263), when Python knows it and it is
    not UTF-8; None otherwise."""
    import codecs

    for line in data.split(b"\n", 2)[:2]:
        match = _CODING.match(line)
        if match is None:
            if line.strip() and not line.lstrip().startswith(b"#"):
                return None  # code before any declaration: the second line no longer counts
            continue
        try:
            name = codecs.lookup(match.group(1).decode("ascii")).name
        except (LookupError, UnicodeDecodeError):
            return None
        return None if name == "utf-8" else name
    return None


def read_source(path: str, abs_path: str, kind: str) -> SourceText | None:
    """A file's text as its parse reads it, for a report of findings kept from an earlier run; None
    when it cannot be read or is not linted."""
    try:
        with open(abs_path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None
    return decode(path, data, kind)[0] if len(data) <= MAX_FILE_BYTES else None


def read_and_parse(path: str, abs_path: str, kind: str, text: str | None = None) -> ParsedFile:
    if text is None:
        try:
            with open(abs_path, "rb") as handle:
                data = handle.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            empty = SourceText(path, "")
            return ParsedFile(path, kind, empty, None, [FileIssue(empty.span(0), f"cannot read: {exc.strerror}")])
        if len(data) > MAX_FILE_BYTES:
            # its head is kept (not linted): a folder run still sees what the file is for
            head = SourceText(path, data[:HEAD_BYTES].decode("utf-8", "replace").replace("\x00", "\ufffd"))
            return ParsedFile(
                path,
                kind,
                head,
                None,
                [FileIssue(head.span(0), f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; not linted")],
            )
        source, problem = decode(path, data, kind)
        if source is None:
            assert problem is not None
            return ParsedFile(path, kind, problem.span.source, None, [problem], kind != MAYBE_SHELL)
    else:
        source = SourceText(path, text)
    return parse_guarded(source, kind)


def parse_guarded(source: SourceText, kind: str) -> ParsedFile:
    """``parse_source``, where a parser failure costs this one file (an issue), never the run."""
    try:
        return parse_source(source, kind)
    except Exception as exc:
        message = f"could not be parsed ({type(exc).__name__}: {str(exc)[:200]}); not linted"
        return ParsedFile(source.path, kind, source, None, [FileIssue(source.span(0), message)])


def shell_shebang(first_line: str) -> bool:
    """Whether a file without an extension is a shell script: its first line names a shell."""
    return first_line.startswith("#!") and any(sh in first_line for sh in ("bash", "/sh", " sh", "zsh", "dash"))


def parse_source(source: SourceText, kind: str) -> ParsedFile:
    if kind == MAYBE_SHELL:
        if shell_shebang(source.text.split("\n", 1)[0]):
            kind = SHELL
        else:
            return ParsedFile(source.path, OTHER, source, None, [], relevant=False)
    if kind == MANIFEST:
        return _manifest(source)
    if kind == SHELL:
        from .sources.shell import parse_shell

        script = parse_shell(source)
        issues = [FileIssue(i.span, i.message, i.kind) for i in script.issues]
        return ParsedFile(source.path, kind, source, script, issues)
    if kind == PYTHON:
        from .sources.python_parse import parse_python

        py = parse_python(source)
        return ParsedFile(source.path, kind, source, py, [FileIssue(i.span, i.message) for i in py.issues])
    if kind in PIN_KINDS:
        from .sources.versions import parse_pins

        # a README is read for its version tables only: it is no file the run lints
        return ParsedFile(source.path, kind, source, parse_pins(source, kind), relevant=kind != README)
    return ParsedFile(source.path, OTHER, source, None, [], relevant=False)


_KUBERNETES_KEY = LazyPattern(r"(?m)^[ \t-]*[\"']?(?:apiVersion|kind)[\"']?[ \t]*:")  # has_kubernetes_key


def has_kubernetes_key(text: str) -> bool:
    """Whether a line of ``text`` starts with an ``apiVersion`` or ``kind`` key (``_KUBERNETES_KEY``,
    matched without compiling it: a tenth of a millisecond of a one-manifest run)."""
    looked = 0
    for key in ("apiVersion", "kind"):
        at = text.find(key)
        while at != -1:
            if _key_line_start(text, at) and _key_colon_follows(text, at + len(key)):
                return True
            looked += 1
            if looked > 64:  # a text full of the words that are not keys: the pattern reads it faster
                return _KUBERNETES_KEY.search(text) is not None
            at = text.find(key, at + 1)
    return False


def _key_line_start(text: str, at: int) -> bool:
    """Only dashes, blanks and at most one quote right before ``at`` on its line (read backwards,
    so a long line with many keys in it is not read again for each)."""
    if at > 0 and text[at - 1] in "\"'":
        at -= 1
    while at > 0 and text[at - 1] in " \t-":
        at -= 1
    return at == 0 or text[at - 1] == "\n"


def _key_colon_follows(text: str, at: int) -> bool:
    """An optional quote, blanks, then ':' from ``at``."""
    if at < len(text) and text[at] in "\"'":
        at += 1
    while at < len(text) and text[at] in " \t":
        at += 1
    return at < len(text) and text[at] == ":"


def yaml_named(source: SourceText) -> ParsedFile:
    """A YAML file named on the command line that holds no Kubernetes object: read for its syntax
    (the user asked about it), its errors reported; nothing else in it is checked."""
    from .sources.manifest import parse_manifest

    mf = parse_manifest(source)
    issues = [FileIssue(i.span, i.message) for i in mf.issues]
    return ParsedFile(source.path, MANIFEST, source, mf, issues, relevant=bool(issues))


def _manifest(source: SourceText) -> ParsedFile:
    if not has_kubernetes_key(source.text):
        # a YAML file with no apiVersion or kind key anywhere (a model config) is no manifest: not composed
        return ParsedFile(source.path, MANIFEST, source, None, [], relevant=False)
    from .sources.manifest import parse_manifest

    mf = parse_manifest(source)
    issues: list[FileIssue] = []
    if mf.templated is not None:
        if mf.is_kubernetes:
            issues.append(
                FileIssue(
                    mf.templated,
                    "templated manifest (Helm/Jinja/Go template markers); "
                    "not checked: lint the rendered output instead",
                    TEMPLATE,
                )
            )
        return ParsedFile(source.path, MANIFEST, source, mf, issues, relevant=mf.is_kubernetes)
    issues.extend(FileIssue(i.span, i.message) for i in mf.issues)
    return ParsedFile(source.path, MANIFEST, source, mf, issues, relevant=mf.is_kubernetes)
