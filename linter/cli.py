"""The ``recovery-lint`` command."""

from __future__ import annotations

import gc
import os
import re
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .argv import OPTIONS, UsageError, check_parser, rule_parser
from .config import Config, ConfigError, find_config, load_config

if TYPE_CHECKING:
    import argparse
    from typing import NoReturn

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143  # 128 + SIGINT, 128 + SIGTERM, as a shell reports them
COMMANDS = ("check", "rule")
ALWAYS_REPORTED = ("RL900",)  # parse errors: see _always_reported
PROGRESS_THRESHOLD = 300  # files; fewer finish before a progress bar would be worth drawing
NOTHING_TO_LINT = "No files to lint (no manifests, shell scripts, Python files or version pins found)."


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM: unwinds the run like Ctrl-C, so that every ``finally`` and ``except
    BaseException`` on the way ends worker processes, the progress bar and unfinished writes."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _on_stop_signal(signum: int, frame: object) -> None:
    _ignore_stop_signals()  # one interruption: a second Ctrl-C must not break the unwinding
    raise Interrupted(signum)


def _ignore_stop_signals() -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)


# A process leaves with os._exit once its output is written (``_exit_now``): freeing the models
# of a run one by one, when ``_run`` returns and at interpreter shutdown, took 0.26-0.35 s at
# 10,000 files, and nothing else is left to do by then (the workers are ended and reaped, every
# write is complete or undone). The models are held here until that exit; None: a call from Python.
_held: list[object] | None = None


def _hold_until_exit(value: object) -> None:
    if _held is not None:
        _held.append(value)


def main(argv: list[str] | None = None) -> int:
    global _held
    process = argv is None  # the command itself, not a call from Python
    argv = list(sys.argv[1:] if argv is None else argv)
    verbose = "--verbose" in argv
    if process:
        _held = []
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, _on_stop_signal)
    # The models of a run live until it ends and hold almost no garbage cycles: the cyclic collector
    # would only rescan them (seconds on 10,000 files), during the run and again at interpreter exit.
    collecting = gc.isenabled()
    gc.disable()
    if process:
        _write_undecodable_bytes_as_read()
    try:
        code = _main(argv, verbose)
    except KeyboardInterrupt as exc:
        code = EXIT_TERMINATED if getattr(exc, "signum", None) == signal.SIGTERM else EXIT_INTERRUPTED
        if not process:
            return code
        _ignore_stop_signals()
        _exit_now(code)
    finally:
        if process:
            _ignore_stop_signals()  # the run is over: a late signal changes nothing
            gc.freeze()  # left by an exception: nothing for the exit-time collection to scan
        elif collecting:
            gc.enable()
    if process:
        _exit_now(code)
    return code


def _write_undecodable_bytes_as_read() -> None:
    """A shell script may hold bytes that are not UTF-8 (kept as U+DC80..U+DCFF): source lines, diffs
    and job listings print them as the bytes they are, whatever the locale's error handler."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and (getattr(stream, "encoding", "") or "").lower().replace("-", "") == "utf8":
            reconfigure(errors="surrogateescape")


def _exit_now(code: int) -> NoReturn:
    """Leave at once, after the run or an interruption (then without a traceback): the workers are
    gone and the writes finished or undone, and interpreter shutdown would free every model one by
    one and could still wait on pool threads."""
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - not contextlib.suppress: a run that needs no other part of contextlib skips its import
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _dispatch(argv: list[str]) -> int:
    if argv and argv[0] == "rule":
        return _rule_command(argv[1:])
    if argv and argv[0] == "check":
        argv = argv[1:]
    elif argv:
        _refuse_mistyped_command(argv[0], Path.cwd())
    return _check_command(check_parser().parse_args(argv))


def _main(argv: list[str], verbose: bool) -> int:
    try:
        code = _dispatch(argv)
        sys.stdout.flush()  # a closed pipe shows here rather than as a message at interpreter exit
        return code
    except UsageError as exc:
        print(f"recovery-lint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except ConfigError as exc:
        print(f"recovery-lint: configuration error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        # the reader went away (`recovery-lint . | head -1`): end quietly with 0, as ruff does
        _discard_stdout()
        return EXIT_CLEAN
    except Exception as exc:
        if verbose:
            raise
        print(
            f"recovery-lint: internal error: {type(exc).__name__}: {exc} (rerun with --verbose)",
            file=sys.stderr,
        )
        return EXIT_ERROR


def _discard_stdout() -> None:
    """Point standard output at /dev/null, so the interpreter's final flush has nowhere to fail."""
    import contextlib

    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


# -- rule ---------------------------------------------------------------------------------------
def _rule_command(argv: list[str]) -> int:
    args = rule_parser().parse_args(argv)
    from .registry import all_rules, by_name

    rules = all_rules()
    if args.output_format == "markdown" and (args.all or not args.code):
        from .docs import rules_markdown

        sys.stdout.write(rules_markdown())
        return EXIT_CLEAN
    if args.all or not args.code:
        if args.output_format == "json":
            import json

            print(json.dumps([_rule_json(r) for r in rules.values()], indent=2))
        else:
            print(_rule_table(rules.values()), end="")
        return EXIT_CLEAN
    rule = rules.get(args.code.upper()) or by_name().get(args.code)
    if rule is None:
        raise UsageError(f"unknown rule '{args.code}' (see 'recovery-lint rule --all')")
    if args.output_format == "json":
        import json

        print(json.dumps(_rule_json(rule), indent=2))
    else:
        print(rule.documentation(), end="")
    return EXIT_CLEAN


FIX_LEGEND = (
    "fix: safe = applied by --fix; unsafe = applied with --unsafe-fixes; "
    "sometimes = safe or unsafe, by finding; none = no fix\n"
)


def _rule_table(rules) -> str:
    rows = [("CODE", "NAME", "SEVERITY", "FIX", "SUMMARY")]
    rows += [(r.code, r.name, r.severity.value, fix_safety(r), r.summary) for r in rules]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:4])) + "  " + row[4] for row in rows]
    return "\n".join(lines) + "\n\n" + FIX_LEGEND


def fix_safety(rule) -> str:
    """safe, unsafe, sometimes (safe or unsafe by finding) or none, read from the rule's own fix
    documentation, whose contract is to say which (see Rule.fix): "Safe. ...", "Unsafe: ...",
    "Safe for X ... Unsafe for Y", "No fix ..."."""
    if rule.fix_availability == "none":
        return "none"
    safe = re.search(r"\bsafe\b", rule.fix, re.IGNORECASE) is not None
    unsafe = re.search(r"\bunsafe\b", rule.fix, re.IGNORECASE) is not None
    if safe and unsafe:
        return "sometimes"
    return "unsafe" if unsafe else "safe"


def _rule_json(rule) -> dict[str, object]:
    return {
        "code": rule.code,
        "name": rule.name,
        "phase": rule.phase,
        "severity": rule.severity.value,
        "fix": rule.fix_availability,
        "fix_safety": fix_safety(rule),
        "summary": rule.summary,
        "documentation": rule.documentation(),
    }


# -- check -------------------------------------------------------------------------------------
def _split(values: list[str] | None) -> list[str]:
    """Repeated options accumulate (``--select RL1 --select RL3`` selects both), as in ruff."""
    return [v.strip() for value in values or () for v in value.split(",") if v.strip()]


def _load_config(args: argparse.Namespace, cwd: Path, paths: list[Path]) -> Config:
    if args.isolated and args.config:
        raise UsageError("--config and --isolated contradict each other (--isolated reads no config file)")
    if args.isolated:
        return Config()
    if args.config:
        return load_config(Path(args.config))
    start = paths[0] if paths else cwd
    start = start if start.is_absolute() else cwd / start
    found = find_config(start)
    return load_config(found) if found else Config()


def _select_rules(args: argparse.Namespace, config: Config):
    from .registry import is_known_selector, select

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


def _always_reported(chosen: list, ignore: list[str]) -> list:
    """A file that could not be parsed was not checked at all, so its RL900 is reported whatever
    the selection (as ruff reports syntax errors), unless RL900 itself is ignored by code or name."""
    from .registry import indexed_rules

    named = {s.strip().upper() for s in ignore} | {s.strip() for s in ignore}
    have = {r.code for r in chosen}
    rules = indexed_rules()
    return [
        rules[code]
        for code in ALWAYS_REPORTED
        if code in rules and code not in have and code not in named and rules[code].name not in named
    ]


def _check_command(args: argparse.Namespace) -> int:
    from .flow.request import LintRequest

    cwd = Path.cwd()
    scope = _scope(args, cwd)
    config = _load_config(args, cwd, [scope.config_start])
    if (args.force_exclude or config.force_exclude) and config.exclude and scope.stdin is None:
        scope = _force_exclude(args, scope, config, cwd)
    paths = scope.paths
    rules = _select_rules(args, config)
    fail_on = args.fail_on or config.fail_on
    workers = args.jobs or os.cpu_count() or 1
    request = LintRequest(paths=paths, cwd=cwd, config=config, rules=rules, workers=workers)
    request.overrides, request.report_only = dict(scope.overrides), scope.report_only
    request.whole_jobs = scope.stdin is None  # an editor's buffer is reported alone
    request.extra_candidates = scope.extra
    request.folders = scope.folders
    request.folder_files = scope.folder_files
    if args.show_files:
        return _show_files(request)
    request.cache = _open_cache(args, config, rules, scope, cwd)
    out = _Output(args)
    out.report_only = request.report_only
    out.stdin = scope.stdin is not None
    out.fail_on = fail_on
    _check_report_options(args, out.format)
    if args.verbose:
        _verbose(f"config: {_config_shown(args, config)}")
    progress = request.progress = _progress(args)
    try:
        return _run(args, request, scope, out, fail_on)
    finally:
        if progress is not None:
            progress.close()  # ends the bar's line, also when the run is interrupted


def _run(args: argparse.Namespace, request, scope, out: _Output, fail_on: str) -> int:
    from .engine import lint

    cwd = request.cwd
    if args.add_suppressions:
        return _add_suppressions(args, request)
    if scope.stdin is not None and (args.fix or args.diff):
        return _stdin_fix_command(args, request, scope, fail_on)
    if args.fix or args.diff:
        return _fix_command(args, request, out, fail_on)
    result = lint(request)
    _hold_until_exit(result)
    if args.write_baseline:
        return _write_baseline(args, result, cwd)
    result.diagnostics = _baseline_filter(args, result, cwd)
    for warning in result.warnings:
        _warn(args, warning)
    if args.verbose:
        _verbose_files(result.abs_paths)
    if args.show_jobs:
        from .report.jobs import render_jobs, render_jobs_json

        out.write(render_jobs_json(result.project) if out.format == "json" else render_jobs(result.project))
        return EXIT_CLEAN
    out.report(result.diagnostics, result, fixed=0)
    if result.internal_errors:
        for err in result.internal_errors:
            print(f"recovery-lint: internal error: {err}", file=sys.stderr)
        return EXIT_ERROR
    return _exit_code(result.diagnostics, fail_on, args.exit_zero)


def _check_report_options(args: argparse.Namespace, output_format: str) -> None:
    if args.scorecard and output_format not in ("full", "concise", "json"):
        raise UsageError(f"--scorecard prints a table or JSON, not {output_format}")
    if args.statistics and output_format not in ("full", "concise", "json"):
        raise UsageError(f"--statistics prints a table or JSON, not {output_format}")
    if args.statistics and args.scorecard:
        raise UsageError("--statistics and --scorecard are two different reports: choose one")


def _verbose(line: str) -> None:
    print(f"recovery-lint: {line}", file=sys.stderr)


def _config_shown(args: argparse.Namespace, config: Config) -> str:
    if config.path is not None:
        try:
            return config.path.relative_to(Path.cwd()).as_posix()
        except ValueError:
            return config.path.as_posix()
    return "none (--isolated)" if args.isolated else "none found (defaults)"


def _linted(candidates: dict[str, Path]) -> list[str]:
    """Display paths of the files a run reads: an extensionless file only with a shell shebang."""
    return sorted(display for display, path in candidates.items() if _read_by_a_run(display, path))


def _verbose_files(candidates: dict[str, Path]) -> None:
    files = _linted(candidates)
    _verbose(f"linted {_count(len(files), 'file')}:")
    for display in files:
        print(f"  {display}", file=sys.stderr)


def _show_files(request) -> int:
    """--show-files: the files a run would read, found as the engine finds them, one per line."""
    from .flow.gather import gather
    from .flow.reach import split_candidates

    found, _ = gather(request, defer_python_checks=False)
    if request.named:  # file mode reads the files named and what can reach them, not the whole repository
        eager, lazy = split_candidates(found, request)
        found = eager + [c for c in lazy if c.display in request.named]  # a named README: read for its table
    for display in _linted({c.display: c.path for c in found}):
        print(display)
    return EXIT_CLEAN


def _open_cache(args: argparse.Namespace, config: Config, rules, scope, cwd: Path):
    """The cache for this run, or None with --no-cache; by default in the project root: the config
    file's folder, else the repository (a folder with .git), else the working directory."""
    if args.no_cache or os.environ.get("RECOVERY_LINT_NO_CACHE", "") not in ("", "0"):
        return None
    from .speed.cache import CACHE_DIR_NAME, Cache

    if args.cache_dir:
        directory = Path(args.cache_dir)
        directory = directory if directory.is_absolute() else cwd / directory
    else:
        from .scope import find_root

        start = scope.root or (scope.paths[0] if scope.paths else cwd)
        start = start if start.is_absolute() else cwd / start
        root = config.root or find_root(start if start.is_dir() else start.parent) or cwd
        directory = root / CACHE_DIR_NAME
    return Cache.open(directory, config.fingerprint(), [r.code for r in rules])


def _exit_code(diagnostics, fail_on: str, exit_zero: bool) -> int:
    if exit_zero:
        return EXIT_CLEAN
    from .diagnostics import Severity

    threshold = Severity(fail_on).rank
    return EXIT_FINDINGS if any(d.severity.rank >= threshold for d in diagnostics) else EXIT_CLEAN


def _follow_up_note(follow_ups: dict[str, int], diff: bool) -> str:
    """Fixes of findings the run did not report at first: they appeared once earlier fixes were in."""
    total = sum(follow_ups.values())
    codes = ", ".join(f"{code} ({n})" for code, n in sorted(follow_ups.items()))
    verb = "would also fix" if diff else "also fixed"
    noun = "finding" if total == 1 else "findings"
    return f"{verb} {total} {noun} that appeared only after earlier fixes: {codes}"


def _fix_command(args: argparse.Namespace, request, out: _Output, fail_on: str) -> int:
    from .fix import WriteError, fix_loop, unified_diff, write_atomic

    outcome = fix_loop(request, unsafe=args.unsafe_fixes)
    outcome.result.diagnostics = _baseline_filter(args, outcome.result, request.cwd)
    for warning in outcome.result.warnings:
        _warn(args, warning)
    if args.verbose:
        _verbose_files(outcome.result.abs_paths)
    for message in outcome.reverted:
        print(f"recovery-lint: error: {message}", file=sys.stderr)
    if not outcome.converged:
        _warn(args, "fixes did not converge after the maximum number of passes")
    if outcome.follow_ups and outcome.fixed:
        _warn(args, _follow_up_note(outcome.follow_ups, args.diff))
    status = EXIT_ERROR if outcome.reverted else EXIT_CLEAN
    if args.diff:
        text = "".join(unified_diff(p, outcome.original[p], t) for p, t in sorted(outcome.fixed.items()))
        out.write(text)
        _would_fix(args, outcome.applied if text else 0, outcome.result.diagnostics)
        return EXIT_FINDINGS if text else status
    roots = _write_roots(request)
    written = 0
    failed: set[str] = set()
    for path, text in sorted(outcome.fixed.items()):
        try:
            write_atomic(outcome.result.abs_paths[path], outcome.original[path], text, roots)
            written += 1
        except (WriteError, KeyError) as exc:
            print(f"recovery-lint: error: {path}: {exc}", file=sys.stderr)
            status = EXIT_ERROR
            failed.add(path)
    fixed = outcome.applied if written else 0
    if failed:
        # report what is on disk now: a file left unwritten keeps its findings
        from .engine import lint

        request.overrides = {p: t for p, t in request.overrides.items() if p not in failed}
        outcome.result = lint(request)
        outcome.result.diagnostics = _baseline_filter(args, outcome.result, request.cwd)
        before = len(outcome.before.diagnostics) if outcome.before is not None else 0
        fixed = max(0, before - len(outcome.result.diagnostics)) if written else 0
    out.report(outcome.result.diagnostics, outcome.result, fixed=fixed)
    outside = _fixes_outside(outcome.result.diagnostics, request.report_only, args.unsafe_fixes)
    if outside:
        files = sorted(set(outside.values()))
        shown = ", ".join(files[:3]) + (", ..." if len(files) > 3 else "")
        _warn(
            args,
            f"{_count(len(outside), 'fixable finding')} left: the fix edits {shown}, not passed to this run "
            "(pass the file, or the folder)",
        )
    if status == EXIT_ERROR:
        return status
    if args.exit_non_zero_on_fix and written:
        return EXIT_FINDINGS
    return _exit_code(outcome.result.diagnostics, fail_on, args.exit_zero)


def _fixes_outside(diagnostics, report_only: set[str] | None, unsafe: bool) -> dict[int, str]:
    """Findings left with a fix that edits a file the run may not write (a run over named files
    writes those files only): finding -> the first such file."""
    if report_only is None:
        return {}
    from .fix import applicable

    out: dict[int, str] = {}
    for d in diagnostics:
        if applicable(d.fix, unsafe):
            others = sorted({e.path for e in d.fix.edits} - report_only)
            if others:
                out[id(d)] = others[0]
    return out


def _warn(args: argparse.Namespace, message: str) -> None:
    if not args.quiet:
        print(f"recovery-lint: warning: {message}", file=sys.stderr)


def _would_fix(args: argparse.Namespace, count: int, remaining) -> None:
    """--diff's summary, on standard error so that the patch on standard output stays a patch."""
    if args.quiet:
        return
    unsafe = args.unsafe_fixes
    more = 0 if unsafe else sum(1 for d in remaining if d.fix is not None and d.fix.applicability.value == "unsafe")
    extra = f" ({more} more with --unsafe-fixes)" if more else ""
    if count:
        print(f"Would fix {_count(count, 'finding')}{extra}.", file=sys.stderr)
    else:
        print(f"No findings would be fixed{f' ({more} fixable with --unsafe-fixes)' if more else ''}.", file=sys.stderr)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


# -- file mode, standard input, adoption -------------------------------------------------------
def _refuse_mistyped_command(word: str, cwd: Path) -> None:
    """A first word that names no path but is close to a command (or is an option without its
    dashes: `recovery-lint fix .`) is a mistyped command."""
    if word.startswith("-") or not re.fullmatch(r"[a-z][a-z-]*", word) or os.path.lexists(cwd / word):
        return
    import difflib

    close = difflib.get_close_matches(word, COMMANDS, n=1, cutoff=0.6)
    if close:
        raise UsageError(f"{word}: no such command, file or directory (did you mean 'recovery-lint {close[0]}'?)")
    if any(f"--{word}" in option.flags for option in OPTIONS):
        raise UsageError(f"{word}: no such command, file or directory (did you mean '--{word}'?)")


def _require_paths(given: list[str], cwd: Path) -> None:
    """A path that does not exist is a usage error: a typo must not pass CI."""
    missing = [p for p in given if not os.path.lexists(cwd / p)]
    if not missing:
        return
    hint = ""
    codes = [p for p in missing if re.fullmatch(r"(?i)RL\d{3}", p)]
    if codes:
        hint = f" (a rule's documentation: recovery-lint rule {codes[0].upper()})"
    raise UsageError(f"{', '.join(missing)}: No such file or directory{hint}")


def _scope(args: argparse.Namespace, cwd: Path):
    from .scope import STDIN_DISPLAY, ScopeError, resolve

    given = list(args.paths)
    if args.stdin_filename is not None and not given:
        given = [STDIN_DISPLAY]
    if args.add_suppressions and (args.fix or args.diff or args.write_baseline):
        raise UsageError("--add-suppressions cannot be combined with --fix, --diff or --write-baseline")
    if args.write_baseline and (args.fix or args.diff):
        raise UsageError("--write-baseline cannot be combined with --fix or --diff")
    if STDIN_DISPLAY in given and args.add_suppressions:
        raise UsageError("--add-suppressions writes files; it cannot read standard input")
    if STDIN_DISPLAY not in given and args.stdin_filename is None:
        _require_paths(given, cwd)  # with standard input, scope.resolve says what is wrong
    data = sys.stdin.buffer.read() if STDIN_DISPLAY in given else None
    try:
        return resolve(given, cwd, args.stdin_filename, data)
    except ScopeError as exc:
        raise UsageError(str(exc)) from exc


def _force_exclude(args: argparse.Namespace, scope, config: Config, cwd: Path):
    """--force-exclude: drop the paths passed that ``exclude`` matches (themselves or a folder
    above them, as the walk would), then resolve what is left; nothing left lints nothing."""
    from .discover import ExcludeSet
    from .scope import Scope, resolve

    excludes = ExcludeSet(config.exclude, config.root or cwd)
    given = args.paths or ["."]
    kept = [p for p in given if not excludes.match(Path(os.path.abspath(cwd / p)))]
    if kept == given:
        return scope
    if not kept:
        return Scope([], scope.config_start, report_only=set())
    return resolve(kept, cwd)


def _sources(result) -> dict:
    return {f.path: f.source for f in result.files if f.source is not None}


def _baseline_filter(args: argparse.Namespace, result, cwd: Path) -> list:
    if not args.baseline:
        return result.diagnostics
    from .adopt import BaselineError, filter_baseline, read_baseline

    file = Path(args.baseline)
    try:
        known = read_baseline(file)
    except BaselineError as exc:
        raise UsageError(f"baseline: {exc}") from exc
    kept, _ = filter_baseline(result.diagnostics, known, _sources(result), cwd, file.absolute().parent)
    return kept


def _write_baseline(args: argparse.Namespace, result, cwd: Path) -> int:
    from .adopt import BaselineError, write_baseline

    try:
        count = write_baseline(Path(args.write_baseline), result.diagnostics, _sources(result), cwd)
    except BaselineError as exc:
        raise UsageError(f"baseline: {exc}") from exc
    print(f"Wrote {count} finding{'s' if count != 1 else ''} to {args.write_baseline}", file=sys.stderr)
    return EXIT_ERROR if result.internal_errors else EXIT_CLEAN


def _write_roots(request) -> list[Path]:
    """The linted trees a fix may write in: each folder given, or the folder holding each file
    given (taken before links are followed, so a link named on the command line does not make
    its target's folder writable)."""
    roots = []
    for p in request.paths:
        path = Path(os.path.abspath(p if p.is_absolute() else request.cwd / p))
        roots.append(path.resolve() if path.is_dir() and not path.is_symlink() else path.parent.resolve())
    return roots


def _add_suppressions(args: argparse.Namespace, request) -> int:
    from .adopt import plan_suppressions
    from .engine import lint
    from .fix import WriteError, _parse_regression, write_atomic

    result = lint(request)
    for warning in result.warnings:
        _warn(args, warning)
    kinds = {f.path: f.kind for f in result.files}
    wanted = result.diagnostics
    if request.report_only is not None and request.named:  # as --fix: only the files passed are written
        wanted = [d for d in wanted if d.path in request.report_only]
    plan = plan_suppressions(wanted, _sources(result), kinds)
    parsed = {f.path: f for f in result.files}
    status = EXIT_CLEAN
    added = extended = files = 0
    for path, text in sorted(plan.texts.items()):
        problem = _parse_regression(parsed[path], text)
        try:
            if problem:
                raise WriteError(f"not written: {problem}")
            write_atomic(result.abs_paths[path], parsed[path].text, text, _write_roots(request))
        except WriteError as exc:
            print(f"recovery-lint: error: {path}: {exc}", file=sys.stderr)
            status = EXIT_ERROR
            continue
        files += 1
        added += plan.counts[path][0]
        extended += plan.counts[path][1]
    for line in plan.skipped:
        print(f"recovery-lint: warning: {line}", file=sys.stderr)  # the lines that were not suppressed
    line = f"Added {added} suppression directive{'s' if added != 1 else ''}"
    if extended:
        line += f" and extended {extended}"
    print(f"{line} in {files} file{'s' if files != 1 else ''}.")
    if plan.skipped and status == EXIT_CLEAN:
        print(f"{len(plan.skipped)} finding line(s) could not be suppressed (see above).")
        status = EXIT_FINDINGS
    return status


def _stdin_fix_command(args: argparse.Namespace, request, scope, fail_on: str) -> int:
    """'-' with --fix or --diff: the fixed text (or the diff) on standard output, the report on standard error."""
    from .fix import fix_loop, unified_diff
    from .span import to_bytes

    original = scope.overrides[scope.stdin]
    outcome = fix_loop(request, unsafe=args.unsafe_fixes)
    outcome.result.diagnostics = _baseline_filter(args, outcome.result, request.cwd)
    for message in [*outcome.result.warnings, *outcome.reverted]:
        _warn(args, message)
    fixed = outcome.fixed.get(scope.stdin, original)
    if args.diff:
        sys.stdout.write(unified_diff(scope.stdin, original, fixed))
        _would_fix(args, outcome.applied if fixed != original else 0, outcome.result.diagnostics)
    else:
        sys.stdout.flush()
        sys.stdout.buffer.write(to_bytes(fixed))
    sys.stdout.flush()
    if not args.diff:  # --diff says what it would fix (above); the fixed text's own report would be of no file
        import contextlib

        with contextlib.redirect_stdout(sys.stderr):
            out = _Output(args)
            out.stdin, out.fail_on = True, fail_on
            applied = outcome.applied if fixed != original else 0
            out.report(outcome.result.diagnostics, outcome.result, fixed=applied)
    if outcome.reverted or outcome.result.internal_errors:
        return EXIT_ERROR
    if fixed != original and (args.diff or args.exit_non_zero_on_fix):
        return EXIT_FINDINGS
    return _exit_code(outcome.result.diagnostics, fail_on, args.exit_zero)


class _Output:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.to_file = args.output_file is not None
        stdout_tty = sys.stdout.isatty() and not self.to_file
        self.format = args.output_format or ("full" if stdout_tty else "concise")
        self.terminal = stdout_tty
        self.report_only: set[str] | None = None
        self.stdin = False  # standard input is always something to lint
        self.fail_on = "warning"  # what fails the run: the machine formats mark only that as a failure
        self.color = not self.to_file and _colour(args, stdout_tty)  # a report file never holds escapes
        self._chunks: list[str] = []

    def write(self, text: str) -> None:
        if self.to_file:
            from .report import write_report_file

            self._chunks.append(text)
            try:
                write_report_file(Path(self.args.output_file), "".join(self._chunks))
            except OSError as exc:
                raise UsageError(f"cannot write {self.args.output_file}: {exc.strerror or exc}") from exc
        else:
            sys.stdout.write(text)

    def report(self, diagnostics, result, fixed: int) -> None:
        if self.args.statistics:  # the table instead of the findings, as ruff prints it
            self.statistics(diagnostics)
            self._summary(diagnostics, fixed, sys.stderr if self.format == "json" else None, result)
            return
        if self.args.scorecard:
            self._scorecard(diagnostics, result)
            self._summary(diagnostics, fixed, sys.stderr if self.format == "json" else None, result)
            return
        if self.format == "json":
            from .report import json as json_report

            self.write(json_report.render(diagnostics))
            self._summary(diagnostics, fixed, sys.stderr, result)
            return
        if self.format in ("sarif", "github", "junit"):
            self._machine(diagnostics, result)
            if self.format != "github":
                self._summary(diagnostics, fixed, sys.stderr, result)
                return
        elif self.format == "full":
            self._full(diagnostics, result)
            self._scorecard(diagnostics, result, section=True)
        else:
            from .report import concise

            self.write(concise.render(diagnostics, color=self.color))
        self._summary(diagnostics, fixed, result=result)

    def _machine(self, diagnostics, result) -> None:
        cwd = Path.cwd()
        if self.format == "sarif":
            from .report import sarif

            sources = {f.path: f.source for f in result.files if f.source is not None}
            self.write(
                sarif.render(
                    diagnostics,
                    sources=sources,
                    cwd=cwd,
                    warnings=result.warnings,
                    internal_errors=result.internal_errors,
                    fail_on=self.fail_on,
                )
            )
        elif self.format == "github":
            from .report import github

            self.write(github.render(diagnostics, cwd=cwd, fail_on=self.fail_on))
        else:
            from .report import junit

            linted = [f.path for f in result.files if f.relevant]
            if self.report_only is not None:  # file mode: the files passed, and those of their jobs with a finding
                found = {d.path for d in diagnostics}
                linted = [p for p in linted if p in self.report_only or p in found]
            self.write(junit.render(diagnostics, files=linted, fail_on=self.fail_on))

    def _scorecard(self, diagnostics, result, section: bool = False) -> None:
        from .report import scorecard

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
            cards[:limit], terminal=self.terminal, color=self.color, width=max(100, _terminal_width())
        )
        if limit is not None and len(cards) > limit:
            text += f"... and {len(cards) - limit} more jobs: recovery-lint --scorecard\n\n"
        self.write(text)

    def _full(self, diagnostics, result) -> None:
        import io

        from rich.console import Console

        from .report import full

        sources = {f.path: f.source for f in result.files if f.source is not None}
        buffer = io.StringIO()
        console = Console(
            file=buffer,
            force_terminal=self.color,
            no_color=not self.color,
            width=max(100, _terminal_width()),
            highlight=False,
        )
        full.render(console, diagnostics, sources)
        self.write(buffer.getvalue())

    def _nothing_linted(self, result) -> bool:
        """No file the run reads was found: no candidate with a known kind, and no extensionless
        file with a shell shebang (what the kind of such a file is decided by)."""
        if self.stdin or result is None:
            return False
        return not any(_read_by_a_run(display, path) for display, path in result.abs_paths.items())

    def _summary(self, diagnostics, fixed: int, stream=None, result=None) -> None:
        if self.args.quiet:
            return
        files = len({d.path for d in diagnostics})
        safe = sum(1 for d in diagnostics if d.fix is not None and d.fix.applicability.value == "safe")
        unsafe = sum(1 for d in diagnostics if d.fix is not None and d.fix.applicability.value == "unsafe")
        if self.args.unsafe_fixes:  # the unsafe fixes are applied too: they count as fixable
            safe, unsafe = safe + unsafe, 0
        noun = "finding" if len(diagnostics) == 1 else "findings"
        extra = f", {unsafe} more with --unsafe-fixes" if unsafe else ""
        line = f"{len(diagnostics)} {noun} ({safe} fixable{extra}) in {files} file{'s' if files != 1 else ''}"
        if fixed:
            done = f"Fixed {fixed} finding{'s' if fixed != 1 else ''}"
            verb = "remains" if len(diagnostics) == 1 else "remain"
            line = f"{done}; {line} {verb}" if diagnostics else f"{done}; no findings remain."
        elif not diagnostics:
            line = NOTHING_TO_LINT if self._nothing_linted(result) else "All checks passed."
        stream = stream or (sys.stderr if self.to_file else sys.stdout)
        print(line, file=stream)
        withheld = getattr(result, "withheld", None)
        if withheld:
            from .premises import withheld_line

            print(withheld_line(withheld), file=stream)

    def statistics(self, diagnostics) -> None:
        counts: dict[tuple[str, str], list[int]] = {}
        for d in diagnostics:
            entry = counts.setdefault((d.code, d.name), [0, 0])
            entry[0] += 1
            entry[1] += 1 if d.fix is not None else 0
        rows = sorted(counts.items(), key=lambda kv: (-kv[1][0], kv[0]))
        if self.format == "json":
            import json

            table = [
                {"code": code, "name": name, "count": n, "fixable": fixable > 0, "fixable_count": fixable}
                for (code, name), (n, fixable) in rows
            ]
            self.write(json.dumps(table, indent=2) + "\n")
            return
        lines = [f"{n:>6}  {code}  {'[*]' if fixable else '   '} {name}\n" for (code, name), (n, fixable) in rows]
        self.write("".join(lines))


def _progress(args: argparse.Namespace):
    """A progress callback for the engine: a rich bar on standard error once more than
    PROGRESS_THRESHOLD files are parsed and standard error is a terminal; None otherwise."""
    if not sys.stderr.isatty():
        return None
    return ProgressBar(sys.stderr, _colour(args, True))


class ProgressBar:
    """Called by the engine with (files done, files in total); shows one bar, for the first pass."""

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
            from rich.console import Console
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


def _colour(args: argparse.Namespace, terminal: bool) -> bool:
    """Colour on a terminal; FORCE_COLOR (not empty) forces it anywhere, also over NO_COLOR, as in
    ruff; --no-color always wins."""
    if args.no_color:
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return terminal and not os.environ.get("NO_COLOR")


def _read_by_a_run(display: str, path: Path) -> bool:
    """Whether a run reads a candidate: any with a known kind, an extensionless file only with a
    shell shebang (what decides its kind)."""
    from .discover import classify
    from .parse import shell_shebang

    if display == "-" or classify(path.name) != "maybe-shell":
        return True
    try:
        with open(path, "rb") as handle:
            first = handle.readline(200)
    except OSError:
        return False
    return shell_shebang(first.decode("utf-8", "replace"))


def _terminal_width() -> int:
    try:
        return os.get_terminal_size().columns
    except OSError:
        return 100
