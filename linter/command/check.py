"""The ``check`` command: from the command line to a lint request (the paths and what they mean,
the configuration, the rules selected), then the run in the mode asked for (report, fix, diff,
baseline, suppressions, a listing of files or jobs) and its exit code."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from ..argv import UsageError
from ..config import Config, find_config, load_config, with_command_line
from ..discover import ExcludeSet
from ..engine import lint
from ..flow.gather import gather
from ..flow.reach import split_candidates
from ..flow.request import LintRequest, LintResult
from ..registry import indexed_rules, is_known_selector, select
from ..rule import Rule
from ..scope import STDIN_DISPLAY, Scope, ScopeError, resolve
from .outcome import EXIT_CLEAN, EXIT_ERROR, exit_code, linted
from .output import Output, OutputOptions, progress_bar

# the environment switch that turns the speed wing off (no pool, parse-ahead or cache): same findings
NO_SPEED_VARIABLE = "RECOVERY_LINT_NO_SPEED"


class Check:
    """One ``check``: the parsed command line, and what it resolves to."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.cwd = Path.cwd()
        self.result: LintResult | None = None  # kept: the command's caller decides when the models go
        self._since = None  # the findings at --new-since, read once
        self.config_path: Path | None = None

    def run(self) -> int:
        args = self.args
        scope, config, rules, request = self._prepared()
        fail_on = args.fail_on or config.fail_on
        if args.show_files:
            return show_files(request)
        request.cache = self._cache(config, rules, scope)
        out = Output(self._output_options(), fail_on)
        out.documentation_url = config.documentation_url
        out.report_only = request.report_only
        out.stdin = scope.stdin is not None
        out.check_options()
        if args.verbose:
            verbose(f"config: {self._config_shown(config)}")
        progress = request.progress = progress_bar(args.no_color)
        try:
            return self._mode(request, scope, out, fail_on)
        finally:
            if progress is not None:
                progress.close()  # ends the bar's line, also when the run is interrupted

    def lint_only(self, overrides: dict[str, str] | None = None) -> LintResult:
        """The run's result with nothing reported or written (what ``init`` and the editor server read
        the repository with); ``overrides`` gives files' texts as an editor holds them (display path ->
        text), in place of what is on disk."""
        self.result = lint(self._prepared(overrides)[3])
        return self.result

    def _prepared(self, overrides: dict[str, str] | None = None) -> tuple[Scope, Config, list[Rule], LintRequest]:
        """What the command line resolves to: the scope (with the texts ``overrides`` gives), the
        configuration, the rules and the request the engine runs."""
        args = self.args
        scope = self._scope()
        config = self._config(scope)
        self.config_path = config.path  # the file --new-since lints the old tree with
        if (args.force_exclude or config.force_exclude) and config.exclude and scope.stdin is None:
            scope = _force_exclude(args.paths, scope, config, self.cwd)
        scope.overrides.update(overrides or {})
        rules = self._rules(config)
        return scope, config, rules, self._request(scope, config, rules)

    # -- the run, in the mode asked for -------------------------------------------------------------
    def _mode(self, request: LintRequest, scope: Scope, out: Output, fail_on: str) -> int:
        args = self.args
        if args.add_suppressions or args.fix or args.diff:
            from . import fixing  # the fix engine: loaded by a run that writes or shows fixes

        if args.add_suppressions:
            return fixing.add_suppressions(request, self.warn)
        if args.fix or args.diff:
            options = self._fix_options()
            if scope.stdin is not None:
                original = scope.overrides[scope.stdin]
                return fixing.fix_standard_input(options, request, scope.stdin, original, out, fail_on, self.baseline)
            return fixing.fix_files(options, request, out, fail_on, self.baseline, self.warn)
        result = self.result = lint(request)
        if args.write_baseline:
            return self._write_baseline(result)
        result.diagnostics = self.baseline(result)
        for warning in result.warnings:
            self.warn(warning)
        if args.verbose:
            verbose_files(result.abs_paths)
        if args.show_jobs:
            from ..report.jobs import render_jobs, render_jobs_json

            out.write(
                render_jobs_json(result.project, result.withheld)
                if out.format == "json"
                else render_jobs(result.project, result.withheld)
            )
            return EXIT_CLEAN
        if args.show_withheld:
            from ..report.withheld import render_withheld, render_withheld_json

            out.write(
                render_withheld_json(result.withheld) if out.format == "json" else render_withheld(result.withheld)
            )
            return EXIT_CLEAN
        out.report(result.diagnostics, result, fixed=0)
        if result.internal_errors:
            for err in result.internal_errors:
                print(f"recovery-lint: internal error: {err}", file=sys.stderr)
            return EXIT_ERROR
        return exit_code(result.diagnostics, fail_on, args.exit_zero)

    # -- what the command line resolves to -----------------------------------------------------------
    def _scope(self) -> Scope:
        args = self.args
        given = list(args.paths)
        if args.stdin_filename is not None and not given:
            given = [STDIN_DISPLAY]
        if args.add_suppressions and (args.fix or args.diff or args.write_baseline):
            raise UsageError("--add-suppressions cannot be combined with --fix, --diff or --write-baseline")
        if args.new_since and (args.write_baseline or STDIN_DISPLAY in given or args.stdin_filename is not None):
            raise UsageError(
                "--new-since compares the files of the repository with a revision: not with standard "
                "input or --write-baseline"
            )
        if args.write_baseline and (args.fix or args.diff):
            raise UsageError("--write-baseline cannot be combined with --fix or --diff")
        if STDIN_DISPLAY in given and args.add_suppressions:
            raise UsageError("--add-suppressions writes files; it cannot read standard input")
        if STDIN_DISPLAY not in given and args.stdin_filename is None:
            require_paths(given, self.cwd)  # with standard input, scope.resolve says what is wrong
        data = sys.stdin.buffer.read() if STDIN_DISPLAY in given else None
        try:
            return resolve(given, self.cwd, args.stdin_filename, data, tracked_only=bool(args.tracked_only))
        except ScopeError as exc:
            raise UsageError(str(exc)) from exc

    def _config(self, scope: Scope) -> Config:
        """The configuration file's settings (none with --isolated), with --target and --versions over them."""
        return with_command_line(self._config_file(scope), self.args.target, self.args.versions)

    def _config_file(self, scope: Scope) -> Config:
        args = self.args
        if args.isolated and args.config:
            raise UsageError("--config and --isolated contradict each other (--isolated reads no config file)")
        if args.isolated:
            return Config()
        if args.config:
            return load_config(Path(args.config))
        start = scope.config_start
        start = start if start.is_absolute() else self.cwd / start
        found = find_config(start)
        return load_config(found) if found else Config()

    def _rules(self, config: Config) -> list[Rule]:
        args = self.args
        chosen = _split(args.select) or None
        if chosen is not None:
            # as in ruff, a selection on the command line starts over: the configuration's select, ignore
            # and extend-select give way to it (its per-file-ignores still apply)
            sel, ignore, extend = chosen, _split(args.ignore), _split(args.extend_select)
        else:
            sel = config.select
            ignore = config.ignore + _split(args.ignore)
            extend = config.extend_select + _split(args.extend_select)
        for selector in (sel or []) + ignore + extend:  # the configuration's were checked where it was read
            if not is_known_selector(selector):
                raise UsageError(f"unknown rule selector '{selector}' (see 'recovery-lint rule --all')")
        chosen_rules = select(sel, ignore, extend)
        return chosen_rules + _always_reported(chosen_rules, ignore)

    def _request(self, scope: Scope, config: Config, rules: list[Rule]) -> LintRequest:
        workers = self.args.jobs or os.cpu_count() or 1
        return LintRequest(
            paths=scope.paths,
            cwd=self.cwd,
            config=config,
            rules=rules,
            workers=workers,
            overrides=dict(scope.overrides),
            report_only=scope.report_only,
            whole_jobs=scope.stdin is None,  # an editor's buffer is reported alone
            extra_candidates=scope.extra,
            folders=scope.folders,
            folder_files=scope.folder_files,
            speed=os.environ.get(NO_SPEED_VARIABLE, "") in ("", "0"),
            tracked_only=bool(self.args.tracked_only),
        )

    def _cache(self, config: Config, rules: list[Rule], scope: Scope):
        """The cache for this run, or None with --no-cache; by default in the project root: the config
        file's folder, else the repository (a folder with .git), else the working directory."""
        args = self.args
        if args.no_cache or os.environ.get("RECOVERY_LINT_NO_CACHE", "") not in ("", "0"):
            return None
        from ..scope import find_root
        from ..speed.cache import CACHE_DIR_NAME, Cache  # the cache's code: loaded by a run with a cache

        if args.cache_dir:
            directory = Path(args.cache_dir)
            directory = directory if directory.is_absolute() else self.cwd / directory
        else:
            start = scope.root or (scope.paths[0] if scope.paths else self.cwd)
            start = start if start.is_absolute() else self.cwd / start
            root = config.root or find_root(start if start.is_dir() else start.parent) or self.cwd
            directory = root / CACHE_DIR_NAME
        return Cache.open(directory, config.fingerprint(), [r.code for r in rules])

    def _output_options(self) -> OutputOptions:
        args = self.args
        return OutputOptions(
            format=args.output_format,
            output_file=args.output_file,
            statistics=args.statistics,
            scorecard=args.scorecard,
            quiet=args.quiet,
            no_color=args.no_color,
            unsafe_fixes=args.unsafe_fixes,
        )

    def _fix_options(self):
        from .fixing import FixOptions

        args = self.args
        return FixOptions(
            unsafe=args.unsafe_fixes,
            diff=args.diff,
            exit_non_zero_on_fix=args.exit_non_zero_on_fix,
            exit_zero=args.exit_zero,
            quiet=args.quiet,
            verbose=args.verbose,
        )

    def _config_shown(self, config: Config) -> str:
        if config.path is not None:
            try:
                return config.path.relative_to(self.cwd).as_posix()
            except ValueError:
                return config.path.as_posix()
        return "none (--isolated)" if self.args.isolated else "none found (defaults)"

    # -- baseline and messages -------------------------------------------------------------------------
    def baseline(self, result: LintResult) -> list:
        """The findings a ``--baseline`` file does not record and that were not there at ``--new-since``
        (all of them without either)."""
        if not self.args.baseline and not self.args.new_since:
            return result.diagnostics
        from ..adopt import BaselineError, filter_baseline, read_baseline  # loaded by a run with a baseline

        kept = result.diagnostics
        quoted = result.sources_of({d.path for d in result.diagnostics})
        if self.args.baseline:
            file = Path(self.args.baseline)
            try:
                known = read_baseline(file)
            except BaselineError as exc:
                raise UsageError(f"baseline: {exc}") from exc
            kept, _ = filter_baseline(kept, known, quoted, self.cwd, file.absolute().parent)
        if self.args.new_since:
            from .since import findings_then

            if self._since is None:
                self._since = findings_then(self.args, self.cwd, self.config_path)
            then, root = self._since
            kept, _ = filter_baseline(kept, then, quoted, self.cwd, root)
        return kept

    def _write_baseline(self, result: LintResult) -> int:
        from ..adopt import BaselineError, write_baseline

        target = self.args.write_baseline
        try:
            quoted = result.sources_of({d.path for d in result.diagnostics})
            written = write_baseline(Path(target), result.diagnostics, quoted, self.cwd)
        except BaselineError as exc:
            raise UsageError(f"baseline: {exc}") from exc
        print(f"Wrote {written} finding{'s' if written != 1 else ''} to {target}", file=sys.stderr)
        return EXIT_ERROR if result.internal_errors else EXIT_CLEAN

    def warn(self, message: str) -> None:
        if not self.args.quiet:
            print(f"recovery-lint: warning: {message}", file=sys.stderr)


def show_files(request: LintRequest) -> int:
    """--show-files: the files a run would read, found as the run finds them, one per line."""
    found, _, _ = gather(request, defer_checks=False)
    if request.named:  # file mode reads the files named and what can reach them, not the whole repository
        eager, lazy = split_candidates(found, request)
        found = eager + [c for c in lazy if c.display in request.named]  # a named README: read for its table
    for display in linted({c.display: c.path for c in found}):
        print(display)
    return EXIT_CLEAN


def verbose(line: str) -> None:
    print(f"recovery-lint: {line}", file=sys.stderr)


def verbose_files(candidates) -> None:
    files = linted(dict(candidates.items()))
    verbose(f"linted {len(files)} file{'' if len(files) == 1 else 's'}:")
    for display in files:
        print(f"  {display}", file=sys.stderr)


def require_paths(given: list[str], cwd: Path) -> None:
    """A path that does not exist is a usage error: a typo must not pass CI."""
    missing = [p for p in given if not os.path.lexists(cwd / p)]
    if not missing:
        return
    hint = ""
    codes = [p for p in missing if re.fullmatch(r"(?i)RL\d{3}", p)]
    if codes:
        hint = f" (a rule's documentation: recovery-lint rule {codes[0].upper()})"
    raise UsageError(f"{', '.join(missing)}: No such file or directory{hint}")


def _force_exclude(paths: list[str], scope: Scope, config: Config, cwd: Path) -> Scope:
    """--force-exclude: drop the paths passed that ``exclude`` matches (themselves or a folder
    above them, as the walk would), then resolve what is left; nothing left lints nothing."""
    excludes = ExcludeSet(config.exclude, config.root or cwd)
    given = paths or ["."]
    kept = [p for p in given if not excludes.match(Path(os.path.abspath(cwd / p)))]
    if kept == given:
        return scope
    if not kept:
        return Scope([], scope.config_start, report_only=set())
    return resolve(kept, cwd)


def _split(values: list[str] | None) -> list[str]:
    """Repeated options accumulate (``--select RL1 --select RL3`` selects both), as in ruff."""
    return [v.strip() for value in values or () for v in value.split(",") if v.strip()]


def _always_reported(chosen: list[Rule], ignore: list[str]) -> list[Rule]:
    """A file that could not be parsed was not checked at all, so the rules saying so
    (``Rule.file_not_checked``) report whatever the selection (as ruff reports syntax errors),
    unless one is itself ignored by code or name."""
    named = {s.strip().upper() for s in ignore} | {s.strip() for s in ignore}
    have = {r.code for r in chosen}
    return [
        rule
        for rule in indexed_rules().values()
        if rule.file_not_checked and rule.code not in have and rule.code not in named and rule.name not in named
    ]
