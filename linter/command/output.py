"""Where a check's report goes and how it looks: the output format's document (one renderer per
format, ``report/``), the statistics table or the scorecard instead of the findings, the summary
line, and a progress bar on a terminal."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from ..argv import UsageError
from ..diagnostics import Applicability, Diagnostic
from ..flow.request import LintResult
from ..report import View, renderer, write_report_file
from ..report.settle import withheld_line
from .outcome import read_by_a_run, summary_line

PROGRESS_THRESHOLD = 300  # files; fewer finish before a progress bar would be worth drawing


@dataclass(eq=False, repr=False)
class OutputOptions:
    """What the command line says about the report."""

    format: str | None  # None: full on a terminal, else concise
    output_file: str | None
    statistics: bool = False
    scorecard: bool = False
    quiet: bool = False
    no_color: bool = False
    unsafe_fixes: bool = False  # the unsafe fixes are applied, so they count as fixable


class Output:
    def __init__(self, options: OutputOptions, fail_on: str = "warning") -> None:
        self.options = options
        self.to_file = options.output_file is not None
        stdout_tty = sys.stdout.isatty() and not self.to_file
        self.format = options.format or ("full" if stdout_tty else "concise")
        self.terminal = stdout_tty
        self.report_only: set[str] | None = None
        self.stdin = False  # standard input is always something to lint
        self.fail_on = fail_on  # what fails the run: the machine formats mark only that as a failure
        self.documentation_url: str | None = None  # the configuration's, for the formats that link rule pages
        self.color = not self.to_file and colour(options.no_color, stdout_tty)  # a report file holds no escapes
        self._chunks: list[str] = []

    def check_options(self) -> None:
        """The reports that replace the findings print a table or JSON only, one at a time."""
        for asked, name in ((self.options.scorecard, "--scorecard"), (self.options.statistics, "--statistics")):
            if asked and self.format not in ("full", "concise", "json"):
                raise UsageError(f"{name} prints a table or JSON, not {self.format}")
        if self.options.statistics and self.options.scorecard:
            raise UsageError("--statistics and --scorecard are two different reports: choose one")

    def write(self, text: str) -> None:
        if not self.to_file:
            sys.stdout.write(text)
            return
        self._chunks.append(text)
        try:
            write_report_file(Path(self.options.output_file), "".join(self._chunks))  # type: ignore[arg-type]
        except OSError as exc:
            raise UsageError(f"cannot write {self.options.output_file}: {exc.strerror or exc}") from exc

    def report(self, diagnostics: list[Diagnostic], result: LintResult, fixed: int) -> None:
        machine = self.format == "json"
        if self.options.statistics:  # the table instead of the findings, as ruff prints it
            self.statistics(diagnostics)
            self._summary(diagnostics, fixed, result, sys.stderr if machine else None)
            return
        if self.options.scorecard:
            self._scorecard(diagnostics, result)
            self._summary(diagnostics, fixed, result, sys.stderr if machine else None)
            return
        document = renderer(self.format)
        self.write(document.document(self._view(diagnostics, result)))
        if document.SCORECARD_SECTION:
            self._scorecard(diagnostics, result, section=True)
        self._summary(diagnostics, fixed, result, sys.stderr if document.SUMMARY_TO_STDERR else None)

    def _view(self, diagnostics: list[Diagnostic], result: LintResult) -> View:
        linted = result.linted()
        found = {d.path for d in diagnostics}
        if self.report_only is not None:  # file mode: the files passed, and those of their jobs with a finding
            linted = [p for p in linted if p in self.report_only or p in found]
        return View(
            diagnostics=diagnostics,
            sources=result.sources_of(found),
            linted=linted,
            cwd=Path.cwd(),
            fail_on=self.fail_on,
            color=self.color,
            width=max(100, terminal_width()),
            warnings=result.warnings,
            internal_errors=result.internal_errors,
            documentation_url=self.documentation_url,
            withheld=list(getattr(result, "withheld", [])),
        )

    def _scorecard(self, diagnostics: list[Diagnostic], result: LintResult, section: bool = False) -> None:
        from ..report import scorecard

        # whole jobs as they are: also the findings outside the files passed in file mode, and those a
        # --baseline hides from the report
        every = result.all_diagnostics or diagnostics
        cards = scorecard.build(result.project, every, self.report_only)
        if self.format == "json":
            self.write(scorecard.render_json(cards))
            return
        if section and not cards:
            return
        cards = sorted(cards, key=scorecard.usefulness)  # what needs work first: the others follow
        limit = 10 if section else None
        text = scorecard.render_text(
            cards[:limit], terminal=self.terminal, color=self.color, width=max(100, terminal_width())
        )
        if limit is not None and len(cards) > limit:
            text += f"... and {len(cards) - limit} more jobs: recovery-lint --scorecard\n\n"
        self.write(text)

    def _nothing_linted(self, result: LintResult | None) -> bool:
        """No file the run reads was found: no candidate with a known kind, and no extensionless
        file with a shell shebang (what the kind of such a file is decided by)."""
        if self.stdin or result is None:
            return False
        return not any(read_by_a_run(display, path) for display, path in result.abs_paths.items())

    def _summary(self, diagnostics: list[Diagnostic], fixed: int, result: LintResult | None, stream=None) -> None:
        if self.options.quiet:
            return
        line = summary_line(diagnostics, fixed, self.options.unsafe_fixes, self._nothing_linted(result))
        stream = stream or (sys.stderr if self.to_file else sys.stdout)
        print(line, file=stream)
        withheld = getattr(result, "withheld", None)
        if withheld:
            print(withheld_line(withheld), file=stream)

    def statistics(self, diagnostics: list[Diagnostic]) -> None:
        counts: dict[tuple[str, str], list[int]] = {}
        for d in diagnostics:
            entry = counts.setdefault((d.code, d.name), [0, 0, 0])
            entry[0] += 1
            entry[1] += 1 if d.fix is not None else 0
            entry[2] += 1 if d.fix is not None and d.fix.applicability is Applicability.SAFE else 0
        rows = sorted(counts.items(), key=lambda kv: (-kv[1][0], kv[0]))
        if self.format == "json":
            table = [
                {"code": code, "name": name, "count": n, "fixable": fixable > 0, "fixable_count": fixable}
                for (code, name), (n, fixable, _safe) in rows
            ]
            self.write(json.dumps(table, indent=2) + "\n")
            return
        # as ruff: [*] a safe fix is there for some, [-] only unsafe fixes (--unsafe-fixes)
        lines = [
            f"{n:>6}  {code}  {'[*]' if safe else '[-]' if fixable else '   '} {name}\n"
            for (code, name), (n, fixable, safe) in rows
        ]
        self.write("".join(lines))


class ProgressBar:
    """Called by the run with (files done, files in total); shows one bar, for the first pass."""

    def __init__(self, stream, color: bool, threshold: int = PROGRESS_THRESHOLD) -> None:
        self.stream = stream
        self.color = color
        self.threshold = threshold
        self._bar = None
        self._task = None
        self.finished = False

    def __call__(self, done: int, total: int) -> None:
        if self.finished or total <= self.threshold:
            return
        if self._bar is None:
            from rich.console import Console  # rich only for a bar actually drawn
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            console = Console(file=self.stream, force_terminal=True, no_color=not self.color)
            self._bar = Progress(
                TextColumn("linting"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("files", total=total)
        self._bar.update(self._task, completed=done)
        if done >= total:
            self.close()

    def close(self) -> None:
        """Remove the bar and give the cursor back (the bar is transient)."""
        if self._bar is not None and not self.finished:
            self._bar.stop()
        self.finished = True


def progress_bar(no_color: bool) -> ProgressBar | None:
    """A progress callback for the run: a bar on standard error once more than PROGRESS_THRESHOLD files
    are parsed and standard error is a terminal; None otherwise."""
    if not sys.stderr.isatty():
        return None
    return ProgressBar(sys.stderr, colour(no_color, True))


def colour(no_color: bool, terminal: bool) -> bool:
    """Colour on a terminal; FORCE_COLOR (not empty) forces it anywhere, also over NO_COLOR, as in
    ruff; --no-color always wins."""
    if no_color:
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return terminal and not os.environ.get("NO_COLOR")


def terminal_width() -> int:
    try:
        return os.get_terminal_size().columns
    except OSError:
        return 100
