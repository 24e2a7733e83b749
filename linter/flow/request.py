"""What a lint run is asked and what it answers: plain records every stage of the flow reads."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the records sit below every stage: the types they hold are named, not imported
    from ..config import Config
    from ..diagnostics import Diagnostic
    from ..discover import Candidate
    from ..jobs import Project
    from ..parse import ParsedFile
    from ..premises import Withheld
    from ..rule import Rule
    from ..span import SourceText


@dataclass(eq=False, repr=False)
class LintRequest:
    """What one lint asks for: the paths, the configuration, the rules and how to run them."""

    paths: list[Path]
    cwd: Path
    config: Config
    rules: list[Rule]
    overrides: dict[str, str] = field(default_factory=dict)  # display path -> text (fix passes, stdin)
    report_only: set[str] | None = None  # display paths to report (a subfolder, or the files of pre-commit)
    folders: list[Path] = field(default_factory=list)  # folders given inside a larger repository (absolute)
    workers: int = 1
    cache: object | None = None  # a parse cache with get(key)/put(key, value)
    # the files named, linted even if the walk skips them
    extra_candidates: list[Candidate] = field(default_factory=list)
    folder_files: list[Candidate] | None = None  # the walk of ``folders`` without excludes, if made already
    # a run over named files reports every finding of their jobs; an editor's buffer (standard input) only its own
    whole_jobs: bool = True
    # models an earlier pass of the fix loop parsed from the very text each file has in this request:
    # taken as they are, so that a pass parses only the files the previous one changed
    earlier: dict[str, ParsedFile] = field(default_factory=dict)
    progress: Callable[[int, int], None] | None = None  # called with (files parsed, files in total)
    speed: bool = True  # False: no process pool, no parse-ahead, no cache (the run gives the same findings)
    tracked_only: bool = False  # in a git work tree, only the files git tracks (and those named)

    @property
    def named(self) -> set[str]:
        """Display paths named on the command line (or read from standard input): always parsed."""
        return {c.display for c in self.extra_candidates}


@dataclass(eq=False, repr=False)
class LintResult:
    """What one lint found: the diagnostics, the parsed files and the linked project."""

    diagnostics: list[Diagnostic]
    files: list[ParsedFile]
    project: Project
    abs_paths: Mapping[str, Path]
    warnings: list[str]
    internal_errors: list[str]
    suppressed: int = 0
    # every finding of the linked jobs, also those outside ``report_only`` (the scorecard judges whole jobs)
    all_diagnostics: list[Diagnostic] = field(default_factory=list)
    withheld: list[Withheld] = field(default_factory=list)  # advice not given: a premise was unknown

    def sources(self) -> dict[str, SourceText]:
        """The text of every file the run read, by display path."""
        return {f.path: f.source for f in self.files if f.source is not None}

    def sources_of(self, paths: set[str]) -> dict[str, SourceText]:
        """The text of those of ``paths`` the run read (the files a report quotes)."""
        return {f.path: f.source for f in self.files if f.path in paths and f.source is not None}

    def linted(self) -> list[str]:
        """The display paths of the files linted (not a YAML file that is no Kubernetes object)."""
        return [f.path for f in self.files if f.relevant]


class Locations(Mapping):
    """Display path -> absolute ``Path`` of every candidate, made when asked (a fix writes a few)."""

    def __init__(self, by_display: Mapping[str, Candidate]) -> None:
        self._by_display = by_display

    def __getitem__(self, display: str) -> Path:
        return self._by_display[display].path

    def __iter__(self):
        return iter(self._by_display)

    def __len__(self) -> int:
        return len(self._by_display)


class CachedResult(LintResult):
    """The findings of an unchanged repository, from the cache, with the files it linted. The texts a
    report quotes are read as they are asked for; the parsed files and the linked project are built
    (``rebuild``, a run without the cached findings) only when a report needs the jobs."""

    def __init__(
        self,
        rebuild: Callable[[], LintResult],
        linted: list[str],
        read: Callable[[set[str]], dict[str, SourceText]],
        **fields: object,
    ) -> None:
        self._rebuild = rebuild
        self._linted = linted
        self._read = read  # the texts of some files, read as the run read them: no parse, no link
        self._files: list[ParsedFile] | None = None
        self._project: Project | None = None
        super().__init__(files=None, project=None, **fields)  # type: ignore[arg-type]

    def sources_of(self, paths: set[str]) -> dict[str, SourceText]:
        return super().sources_of(paths) if self._files is not None else self._read(paths)

    def linted(self) -> list[str]:
        return self._linted

    def _build(self) -> None:
        fresh = self._rebuild()
        self._files, self._project = fresh.files, fresh.project

    @property  # type: ignore[override]
    def files(self) -> list[ParsedFile]:
        if self._files is None:
            self._build()
        return self._files  # type: ignore[return-value]

    @files.setter
    def files(self, value: list[ParsedFile] | None) -> None:
        self._files = value

    @property  # type: ignore[override]
    def project(self) -> Project:
        if self._project is None:
            self._build()
        return self._project  # type: ignore[return-value]

    @project.setter
    def project(self, value: Project | None) -> None:
        self._project = value
