"""``recovery-lint server``: a Language Server over standard input and output (pygls).

Every open document is linted with the repository it belongs to, as ``recovery-lint FILE ...``
lints named files (file mode), with the editor's unsaved texts in place of the files on disk. A
change to one document lints every open document of that repository again, so editing a manifest
updates the findings of the launch script it runs. Each fix is a code action (labelled safe or
unsafe), the rule's page is the hover of a finding, and advice withheld for an unknown premise is an
information diagnostic saying what would settle it."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

from . import __version__
from .argv import UsageError, check_parser
from .scope import find_root
from .span import SourceText

SOURCE = "recovery-lint"


@dataclass
class Finding:
    """A finding as an editor shows it: its place in the document, and what the server answers about it."""

    code: str
    message: str
    severity: str  # error | warning | info
    start: tuple[int, int]  # 0-based line, UTF-16 column
    end: tuple[int, int]
    fix: dict | None = None  # {"title": ..., "safe": bool, "edits": {path: [(start, end, text)]}}


@dataclass
class Documents:
    """The open documents and what the last lint found in each."""

    texts: dict[str, str] = field(default_factory=dict)  # absolute path -> the editor's text
    found: dict[str, list[Finding]] = field(default_factory=dict)
    workspace: Path | None = None  # the client's root folder, for files in no repository

    def lint_repository_of(self, path: str) -> list[str]:
        """Lint every open document of the repository ``path`` belongs to; the paths linted."""
        root = self.root_of(path)
        members = sorted(p for p in self.texts if self.root_of(p) == root)
        for member in members:
            self.found[member] = []
        if not members:
            return []
        result = _lint(root, {p: self.texts[p] for p in members})
        for member, findings in result.items():
            if member in self.found:
                self.found[member] = findings
        return members

    def root_of(self, path: str) -> Path:
        """The repository a file belongs to (a folder with ``.git`` or a configuration), else the
        client's workspace folder when the file lies in it, else the file's folder."""
        folder = Path(path).parent
        found = find_root(folder)
        if found is not None:
            return found
        if self.workspace is not None and folder.is_relative_to(self.workspace):
            return self.workspace
        return folder


def _utf16(before: str, column: int) -> int:
    """A 0-based character column as the UTF-16 code units LSP counts by default (characters beyond
    the Basic Multilingual Plane count twice)."""
    return column + sum(1 for char in before if ord(char) > 0xFFFF)


def _position(src: SourceText, offset: int) -> tuple[int, int]:
    """A character offset as LSP's 0-based line and UTF-16 column."""
    line = src.line_of(offset)
    begin = src.line_starts[line]
    return line, _utf16(src.text[begin:offset], offset - begin)


def _lint(root: Path, texts: dict[str, str]) -> dict[str, list[Finding]]:
    """Lint the files (absolute paths, with the editor's texts) in file mode from ``root``."""
    from .command.check import Check
    from .report.settle import remedy

    display = {os.path.relpath(p, root): p for p in texts}
    on_disk = [p for p in texts if os.path.isfile(p)]
    if not on_disk:
        return {}
    check = Check(check_parser().parse_args(["--no-cache", "--quiet", "--jobs", "1", *on_disk]))
    check.cwd = root
    try:
        result = check.lint_only({d: texts[p] for d, p in display.items()})
    except UsageError:
        return {}
    out: dict[str, list[Finding]] = {p: [] for p in texts}
    sources = {p: SourceText(p, t) for p, t in texts.items()}
    for d in result.diagnostics:
        path = display.get(d.path)
        if path is None:
            continue
        src = sources[path]
        out[path].append(
            Finding(
                d.code,
                d.message,
                d.severity.value,
                _position(src, d.span.start),
                _position(src, d.span.end),
                _fix_in(d, root),
            )
        )
    for w in result.withheld:
        path = display.get(w.path)
        if path is None or not w.line:
            continue
        src = sources[path]
        line0 = min(w.line - 1, len(src.line_starts) - 1)
        begin = min(src.line_starts[line0] + max(w.column - 1, 0), len(src.text))
        key = w.settling_key
        settle = remedy(key, w.premise) if key else "see recovery-lint --show-withheld"
        out[path].append(
            Finding(
                w.code,
                f"{w.headline}; {settle}",
                "withheld",
                _position(src, begin),
                _position(src, begin),
            )
        )
    return out


def _fix_in(d, root: Path) -> dict | None:
    """The finding's fix as edits per file (absolute path -> [(start, end, text)]), positions taken in
    the editor's text of an open file and in the file on disk otherwise."""
    fix = d.fix
    if fix is None:
        return None
    edits: dict[str, list] = {}
    for e in fix.edits:
        path = os.path.normpath(root / e.span.path)
        src = e.span.source  # the text the lint read: the editor's for an open file, else the file on disk
        edits.setdefault(path, []).append((_position(src, e.span.start), _position(src, e.span.end), e.content))
    return {"title": fix.message, "safe": fix.applicability.value == "safe", "edits": edits}


def _path_of(uri: str) -> str:
    parsed = urlparse(uri)
    return os.path.normpath(unquote(parsed.path))


def serve() -> int:
    """Run the server on standard input and output until the client ends it."""
    try:
        from lsprotocol import types
        from pygls.lsp.server import LanguageServer
    except ImportError as exc:
        raise UsageError(
            f"the editor server needs pygls ({exc.name} is not installed): pip install 'recovery-lint[server]'"
        ) from exc

    server = LanguageServer("recovery-lint", __version__)
    documents = Documents()
    severities = {
        "error": types.DiagnosticSeverity.Error,
        "warning": types.DiagnosticSeverity.Warning,
        "info": types.DiagnosticSeverity.Information,
        "withheld": types.DiagnosticSeverity.Hint,
    }

    def rng(start: tuple[int, int], end: tuple[int, int]) -> types.Range:
        return types.Range(types.Position(*start), types.Position(*end))

    def publish(paths: list[str]) -> None:
        for path in paths:
            diagnostics = [
                types.Diagnostic(
                    range=rng(f.start, f.end),
                    message=f.message,
                    severity=severities[f.severity],
                    code=f.code,
                    source=SOURCE,
                )
                for f in documents.found.get(path, [])
            ]
            server.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=Path(path).as_uri(), diagnostics=diagnostics)
            )

    def relint(uri: str) -> None:
        if documents.workspace is None and server.workspace.root_path:
            documents.workspace = Path(server.workspace.root_path).resolve()
        path = _path_of(uri)
        documents.texts[path] = server.workspace.get_text_document(uri).source
        publish(documents.lint_repository_of(path))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls, params: types.DidOpenTextDocumentParams) -> None:
        relint(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls, params: types.DidChangeTextDocumentParams) -> None:
        relint(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls, params: types.DidSaveTextDocumentParams) -> None:
        relint(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls, params: types.DidCloseTextDocumentParams) -> None:
        path = _path_of(params.text_document.uri)
        documents.texts.pop(path, None)
        documents.found.pop(path, None)
        server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[])
        )
        publish(documents.lint_repository_of(path))

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION)
    def code_action(ls, params: types.CodeActionParams) -> list[types.CodeAction]:
        path = _path_of(params.text_document.uri)
        wanted = params.range
        actions = []
        for f in documents.found.get(path, []):
            if f.fix is None or f.start[0] > wanted.end.line or f.end[0] < wanted.start.line:
                continue
            label = "safe fix" if f.fix["safe"] else "unsafe fix"
            changes = {
                Path(target).as_uri(): [types.TextEdit(range=rng(a, b), new_text=text) for a, b, text in edits]
                for target, edits in f.fix["edits"].items()
            }
            actions.append(
                types.CodeAction(
                    title=f"{f.code}: {f.fix['title']} ({label})",
                    kind=types.CodeActionKind.QuickFix,
                    is_preferred=f.fix["safe"],
                    edit=types.WorkspaceEdit(changes=changes),
                )
            )
        return actions

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls, params: types.HoverParams) -> types.Hover | None:
        from .registry import all_rules

        path, at = _path_of(params.text_document.uri), params.position
        for f in documents.found.get(path, []):
            if f.start <= (at.line, at.character) <= f.end or (f.start[0] == at.line == f.end[0]):
                rule = all_rules().get(f.code)
                if rule is not None:
                    return types.Hover(
                        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=rule.documentation())
                    )
        return None

    server.start_io()
    # the client's exit closed standard output: what the command does on its way out writes nowhere
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115
    return 0
