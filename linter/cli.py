"""The ``recovery-lint`` command."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import __version__
from .config import FAIL_ON, Config, ConfigError, find_config, load_config

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
CHECK_FORMATS = ("full", "concise", "json")


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse exits 2 as well; keep our one-line style
        raise UsageError(message)


def _check_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="recovery-lint",
        description="Find missing or misconfigured recovery-time optimizations "
        "in Ascend NPU PyTorch training jobs (manifests, launch scripts, training code, version pins).",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to lint (default: .)")
    p.add_argument("--fix", action="store_true", help="apply safe fixes")
    p.add_argument("--unsafe-fixes", action="store_true", help="also apply unsafe fixes (with --fix or --diff)")
    p.add_argument("--diff", action="store_true", help="print the fixes as a unified diff instead of writing")
    p.add_argument("--select", metavar="RULES", help="comma-separated codes, prefixes (RL3) or names")
    p.add_argument("--ignore", metavar="RULES", help="comma-separated codes, prefixes or names to skip")
    p.add_argument("--extend-select", metavar="RULES", help="add rules to the selection")
    p.add_argument("--output-format", choices=CHECK_FORMATS, help="default: full on a terminal, else concise")
    p.add_argument("--output-file", metavar="FILE", help="write the report to FILE")
    p.add_argument("--fail-on", choices=FAIL_ON, help="lowest severity that makes the exit code 1 (default warning)")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings remain")
    p.add_argument("--exit-non-zero-on-fix", action="store_true", help="exit 1 when a fix was applied")
    p.add_argument("--statistics", action="store_true", help="print the number of findings per rule")
    p.add_argument("--config", metavar="FILE", help="use this config file (pyproject.toml or .recovery-lint.toml)")
    p.add_argument("--isolated", action="store_true", help="ignore every config file")
    p.add_argument("--show-jobs", action="store_true", help="print how the files were linked into jobs")
    p.add_argument("--jobs", type=int, default=0, metavar="N", help="worker processes (default: all cores)")
    p.add_argument("--no-color", action="store_true", help="no colour, even on a terminal")
    p.add_argument("--verbose", action="store_true", help="show tracebacks of internal errors")
    p.add_argument("--version", action="version", version=f"recovery-lint {__version__}")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    verbose = "--verbose" in argv
    try:
        if argv and argv[0] == "rule":
            return _rule_command(argv[1:])
        if argv and argv[0] == "check":
            argv = argv[1:]
        return _check_command(_check_parser().parse_args(argv))
    except UsageError as exc:
        print(f"recovery-lint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except ConfigError as exc:
        print(f"recovery-lint: configuration error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_ERROR
    except Exception as exc:
        if verbose:
            raise
        print(
            f"recovery-lint: internal error: {type(exc).__name__}: {exc} (rerun with --verbose)",
            file=sys.stderr,
        )
        return EXIT_ERROR


# -- rule ---------------------------------------------------------------------------------------
def _rule_command(argv: list[str]) -> int:
    p = _Parser(prog="recovery-lint rule", description="Print a rule's documentation, or list every rule.")
    p.add_argument("code", nargs="?", help="rule code (RL301) or name")
    p.add_argument("--all", action="store_true", help="list every rule")
    p.add_argument("--output-format", choices=("text", "json", "markdown"), default="text")
    args = p.parse_args(argv)
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
            for rule in rules.values():
                fix = {"always": "fix", "sometimes": "fix?", "none": ""}[rule.fix_availability]
                print(f"{rule.code}  {rule.name:<45} {rule.severity.value:<8} {fix:<5} {rule.summary}")
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


def _rule_json(rule) -> dict[str, object]:
    return {
        "code": rule.code,
        "name": rule.name,
        "phase": rule.phase,
        "severity": rule.severity.value,
        "fix": rule.fix_availability,
        "summary": rule.summary,
        "documentation": rule.documentation(),
    }


# -- check -------------------------------------------------------------------------------------
def _split(value: str | None) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()] if value else []


def _load_config(args: argparse.Namespace, cwd: Path, paths: list[Path]) -> Config:
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
    ignore = config.ignore + _split(args.ignore)
    extend = config.extend_select + _split(args.extend_select)
    sel = chosen if chosen is not None else config.select
    for selector in (sel or []) + ignore + extend:
        if not is_known_selector(selector):
            raise UsageError(f"unknown rule selector '{selector}' (see 'recovery-lint rule --all')")
    return select(sel, ignore, extend)


def _check_command(args: argparse.Namespace) -> int:
    from .engine import LintRequest, lint

    cwd = Path.cwd()
    paths = [Path(p) for p in args.paths] or [Path(".")]
    config = _load_config(args, cwd, paths)
    rules = _select_rules(args, config)
    fail_on = args.fail_on or config.fail_on
    workers = args.jobs if args.jobs > 0 else (os.cpu_count() or 1)
    request = LintRequest(paths=paths, cwd=cwd, config=config, rules=rules, workers=workers)
    out = _Output(args)
    if args.fix or args.diff:
        return _fix_command(args, request, out, fail_on)
    result = lint(request)
    for warning in result.warnings:
        print(f"recovery-lint: warning: {warning}", file=sys.stderr)
    if args.show_jobs:
        from .report.jobs import render_jobs

        out.write(render_jobs(result.project))
        return EXIT_CLEAN
    out.report(result.diagnostics, result, fixed=0)
    if args.statistics:
        out.statistics(result.diagnostics)
    if result.internal_errors:
        for err in result.internal_errors:
            print(f"recovery-lint: internal error: {err}", file=sys.stderr)
        return EXIT_ERROR
    return _exit_code(result.diagnostics, fail_on, args.exit_zero)


def _exit_code(diagnostics, fail_on: str, exit_zero: bool) -> int:
    if exit_zero:
        return EXIT_CLEAN
    from .diagnostics import Severity

    threshold = Severity(fail_on).rank
    return EXIT_FINDINGS if any(d.severity.rank >= threshold for d in diagnostics) else EXIT_CLEAN


def _fix_command(args: argparse.Namespace, request, out: _Output, fail_on: str) -> int:
    from .fix import WriteError, fix_loop, unified_diff, write_atomic

    outcome = fix_loop(request, unsafe=args.unsafe_fixes)
    for warning in outcome.result.warnings:
        print(f"recovery-lint: warning: {warning}", file=sys.stderr)
    for message in outcome.reverted:
        print(f"recovery-lint: error: {message}", file=sys.stderr)
    if not outcome.converged:
        print(
            "recovery-lint: warning: fixes did not converge after the maximum number of passes",
            file=sys.stderr,
        )
    status = EXIT_ERROR if outcome.reverted else EXIT_CLEAN
    if args.diff:
        text = "".join(unified_diff(p, outcome.original[p], t) for p, t in sorted(outcome.fixed.items()))
        out.write(text)
        return EXIT_FINDINGS if text else status
    roots = [(p if p.is_absolute() else request.cwd / p).resolve() for p in request.paths]
    roots = [r if r.is_dir() else r.parent for r in roots]
    written = 0
    for path, text in sorted(outcome.fixed.items()):
        try:
            write_atomic(outcome.result.abs_paths[path], outcome.original[path], text, roots)
            written += 1
        except (WriteError, KeyError) as exc:
            print(f"recovery-lint: error: {path}: {exc}", file=sys.stderr)
            status = EXIT_ERROR
    out.report(outcome.result.diagnostics, outcome.result, fixed=outcome.applied if written else 0)
    if args.statistics:
        out.statistics(outcome.result.diagnostics)
    if status == EXIT_ERROR:
        return status
    if args.exit_non_zero_on_fix and written:
        return EXIT_FINDINGS
    return _exit_code(outcome.result.diagnostics, fail_on, args.exit_zero)


class _Output:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.to_file = args.output_file is not None
        stdout_tty = sys.stdout.isatty() and not self.to_file
        self.format = args.output_format or ("full" if stdout_tty else "concise")
        self.color = stdout_tty and not args.no_color and not os.environ.get("NO_COLOR")
        self._chunks: list[str] = []

    def write(self, text: str) -> None:
        if self.to_file:
            self._chunks.append(text)
            Path(self.args.output_file).write_text("".join(self._chunks), "utf-8")
        else:
            sys.stdout.write(text)

    def report(self, diagnostics, result, fixed: int) -> None:
        if self.format == "json":
            from .report import json as json_report

            self.write(json_report.render(diagnostics))
            return
        if self.format == "full":
            self._full(diagnostics, result)
        else:
            from .report import concise

            self.write(concise.render(diagnostics))
        self._summary(diagnostics, fixed)

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

    def _summary(self, diagnostics, fixed: int) -> None:
        files = len({d.path for d in diagnostics})
        safe = sum(1 for d in diagnostics if d.fix is not None and d.fix.applicability.value == "safe")
        unsafe = sum(1 for d in diagnostics if d.fix is not None and d.fix.applicability.value == "unsafe")
        noun = "finding" if len(diagnostics) == 1 else "findings"
        extra = f", {unsafe} more with --unsafe-fixes" if unsafe else ""
        line = f"{len(diagnostics)} {noun} ({safe} fixable{extra}) in {files} file{'s' if files != 1 else ''}"
        if fixed:
            done = f"Fixed {fixed} finding{'s' if fixed != 1 else ''}"
            line = f"{done}; {line} remain" if diagnostics else f"{done}; no findings remain."
        elif not diagnostics:
            line = "All checks passed."
        stream = sys.stderr if self.to_file else sys.stdout
        print(line, file=stream)

    def statistics(self, diagnostics) -> None:
        counts: dict[tuple[str, str], list[int]] = {}
        for d in diagnostics:
            entry = counts.setdefault((d.code, d.name), [0, 0])
            entry[0] += 1
            entry[1] += 1 if d.fix is not None else 0
        stream = sys.stderr if self.to_file else sys.stdout
        for (code, name), (n, fixable) in sorted(counts.items(), key=lambda kv: (-kv[1][0], kv[0])):
            mark = "[*]" if fixable else "   "
            print(f"{n:>6}  {code}  {mark} {name}", file=stream)


def _terminal_width() -> int:
    try:
        return os.get_terminal_size().columns
    except OSError:
        return 100
