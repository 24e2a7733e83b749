"""``recovery-lint init [PATH]``: a configuration for a repository, from what it shows. The repository
is linted as it is (no configuration read); every key some advice waited for becomes a line of
``.recovery-lint.toml``: set to the value the whole repository agrees on (every pin or every manifest
label says the same, and the comment says where), commented out with what it holds back where the
repository does not settle it."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..argv import UsageError, check_parser
from ..config import find_config
from ..premises import Withheld
from ..report.settle import VALUE_HINTS, remedy, unknown_for
from ..sources.versions import COMPONENTS
from .outcome import EXIT_CLEAN

CONFIG_NAME = ".recovery-lint.toml"


@dataclass
class KeyNeed:
    """One configuration key some advice waited for."""

    key: str
    jobs: set[str] = field(default_factory=set)
    rules: set[str] = field(default_factory=set)
    premise: str = ""


def init_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="recovery-lint init",
        description="Write .recovery-lint.toml for a repository: each key the advice waits for, set where "
        "the repository agrees on a value, commented out where it does not say.",
    )
    p.add_argument("path", nargs="?", default=".", help="the repository's folder (default: .)")
    p.add_argument("--stdout", action="store_true", help="print the configuration instead of writing it")
    return p


def init_command(argv: list[str]) -> int:
    args = init_parser().parse_args(argv)
    folder = Path(args.path)
    if not folder.is_dir():
        raise UsageError(f"init: {args.path} is not a folder")
    existing = find_config(folder.absolute())
    if existing is not None and not args.stdout:
        raise UsageError(
            f"init: {existing} already configures recovery-lint; 'recovery-lint --show-withheld' says what is "
            "still unknown (or 'init --stdout' prints a configuration to compare)"
        )
    from .check import Check

    result = Check(check_parser().parse_args(["--isolated", "--no-cache", "--quiet", str(folder)])).lint_only()
    text = render(needs(result.withheld), result.project.jobs if result.project is not None else [])
    if args.stdout:
        sys.stdout.write(text)
        return EXIT_CLEAN
    from ..atomic import replace_file

    target = folder / CONFIG_NAME
    replace_file(target, text.encode("utf-8"))
    print(f"Wrote {target}: {_summary(text)}", file=sys.stderr)
    return EXIT_CLEAN


def needs(withheld: list[Withheld]) -> dict[str, KeyNeed]:
    found: dict[str, KeyNeed] = {}
    for w in withheld:
        key = w.settling_key
        need = found.setdefault(key, KeyNeed(key, premise=w.premise))
        need.jobs.add(w.job)
        need.rules.add(w.code)
    return found


def _agreed(jobs, key: str) -> tuple[str | None, str]:
    """The value the repository's jobs agree on for ``key`` and where it was read ('' when they do not
    agree or say nothing)."""
    table, _, name = key.partition(".")
    values: Counter[str] = Counter()
    places: dict[str, str] = {}
    for job in jobs:
        ctx = job.context
        if table == "versions" and name in COMPONENTS:
            value, origin = ctx.versions.get(name), ctx.versions.origin(name)
        elif key == "target.platform":
            value, origin = ctx.platform, job.manifest.path if job.manifest is not None else None
        elif key == "target.framework":
            value, origin = ctx.framework, job.manifest.path if job.manifest is not None else None
        else:
            return None, ""
        if value:
            values[value] += 1
            places.setdefault(value, origin or "")
    if len(values) != 1:
        return None, ""
    ((value, count),) = values.items()
    said = "1 job of the repository says so" if count == 1 else f"{count} jobs of the repository say so"
    return value, f"{said} ({places[value]} among them)"


def _line(need: KeyNeed, jobs) -> str:
    waits = unknown_for(need.premise, len(need.jobs), need.rules)
    _table, _, name = need.key.partition(".")
    value, said = _agreed(jobs, need.key)
    if value is not None:
        shown = (
            value
            if need.key in VALUE_HINTS and need.key not in ("target.platform", "target.framework")
            else f'"{value}"'
        )
        return f"{name} = {shown}  # {said}; {waits} else: check it holds for them"
    hint = VALUE_HINTS.get(need.key, '"<version>"' if need.key.startswith("versions.") else '"<value>"')
    return f"# {name} = {hint}  # {waits}"


def render(found: dict[str, KeyNeed], jobs) -> str:
    lines = [
        "# recovery-lint's configuration, written by 'recovery-lint init' from what the repository shows.",
        "# Each key below is one some advice waits for; a commented line is one the repository does not",
        "# settle: set it to what the cluster runs and the advice it holds back is given.",
    ]
    for table in ("versions", "target"):
        keys = sorted(k for k in found if k.startswith(f"{table}."))
        if keys:
            lines += ["", f"[{table}]", *(_line(found[k], jobs) for k in keys)]
    others = [found[k] for k in sorted(found) if not k.startswith(("versions.", "target."))]
    if others:
        lines.append("")
        lines.append("# Not settled by a key of this file:")
        for need in others:
            lines.append(
                f"# - {unknown_for(need.premise, len(need.jobs), need.rules)}: {remedy(need.key, need.premise)}"
            )
    if not found:
        lines += ["", "# Nothing is unknown: every premise the rules asked about is settled by the repository."]
    return "\n".join(lines) + "\n"


def _summary(text: str) -> str:
    set_keys = sum(1 for line in text.splitlines() if line and not line.startswith(("#", "[")))
    open_keys = sum(1 for line in text.splitlines() if line.startswith("# ") and " = " in line.split("#")[1])
    return f"{set_keys} key{'s' if set_keys != 1 else ''} set, {open_keys} left for you to declare"
