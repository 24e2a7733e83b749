"""Run a fuzz target for a bounded time: ``python -m fuzz.run --target manifest --seconds 600``.

Hypothesis generates the inputs in batches until the time is up; a failing input is shrunk, printed,
and saved under ``fuzz/crashes/`` (turn it into a regression test), and the exit status is 1.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings

CRASHES = Path(__file__).resolve().parent / "crashes"
BATCH = 500


@dataclass
class Report:
    target: str
    executions: int = 0
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)


def _settings(examples: int, derandomize: bool) -> settings:
    """No deadline, no example database, no health check: a target is judged by its failures only."""
    return settings(
        max_examples=examples,
        derandomize=derandomize,
        deadline=None,
        database=None,
        phases=[Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        print_blob=False,
    )


def run_fixed(name: str, examples: int) -> Report:
    """The same ``examples`` inputs on every run and machine (hypothesis derandomized, no time
    bound): what the test suite runs, so that a failure there is the code's, reproducible, and never
    a new input drawn by chance or by a machine's speed. ``run_target`` explores for new ones."""
    from .targets import TARGETS

    strategy, body = TARGETS[name]
    report = Report(name)
    start = time.monotonic()

    def counted(value) -> None:
        report.executions += 1
        body(value)

    test = _settings(examples, derandomize=True)(given(strategy)(counted))
    try:
        test()
    except Exception:
        report.failures.append(traceback.format_exc())
    report.seconds = time.monotonic() - start
    return report


def run_target(name: str, seconds: float, save: bool = True, last_input: Path | None = None) -> Report:
    from .targets import TARGETS

    strategy, body = TARGETS[name]
    report = Report(name)
    start = time.monotonic()
    deadline = start + seconds

    def counted(value) -> None:
        report.executions += 1
        if last_input is not None:  # survives a crash of the process itself (a segfault in a C parser)
            last_input.write_text(repr(value), "utf-8")
        body(value)

    batch = 5
    while time.monotonic() < deadline:
        # batches sized to end near the deadline: hypothesis stops on its own, nothing is interrupted
        # new inputs in every batch, whatever profile is loaded
        test = _settings(batch, derandomize=False)(given(strategy)(counted))
        began, done = time.monotonic(), report.executions
        try:
            test()
        except Exception:
            text = traceback.format_exc()
            report.failures.append(text)
            if save:
                CRASHES.mkdir(exist_ok=True)
                digest = hashlib.sha1(text.encode()).hexdigest()[:12]
                (CRASHES / f"{name}-{digest}.txt").write_text(text, "utf-8")
            break
        per_example = (time.monotonic() - began) / max(1, report.executions - done)
        batch = int(min(BATCH, max(1, (deadline - time.monotonic()) / max(per_example, 1e-4))))
    report.seconds = time.monotonic() - start
    return report


def main(argv: list[str] | None = None) -> int:
    from .targets import TARGETS

    p = argparse.ArgumentParser(prog="python -m fuzz.run", description=__doc__)
    p.add_argument("--target", choices=[*TARGETS, "all"], default="all")
    p.add_argument("--seconds", type=float, default=60.0, help="time per target (default 60)")
    p.add_argument("--last-input", type=Path, help="write each input here before running it (to catch a crash)")
    args = p.parse_args(argv)
    names = list(TARGETS) if args.target == "all" else [args.target]
    status = 0
    for name in names:
        report = run_target(name, args.seconds, last_input=args.last_input)
        rate = report.executions / report.seconds if report.seconds else 0.0
        print(f"{name}: {report.executions} executions in {report.seconds:.0f} s ({rate:.0f}/s)", flush=True)
        for failure in report.failures:
            print(failure, file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
