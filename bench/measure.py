"""What the benchmark's sections share: running one command under a probe that reads its wall time,
CPU and peak memory, the tools measured, the parse floor, and the table rows."""

from __future__ import annotations

import ast
import contextlib
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from generate import file_kind

# --------------------------------------------------------------------------------------------
# Running one command and reading its resource use


class MeasureError(Exception):
    """A measured command could not be run or reported failure; the message goes into the row."""


@dataclass(frozen=True)
class Sample:
    wall: float
    cpu: float | None  # user + system of the whole reaped process tree
    rss_kib: int | None  # largest resident set of any single process in that tree


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float | None
    rss_kib: int | None

    @property
    def cores_busy(self) -> float | None:
        return self.cpu / self.wall if self.cpu is not None and self.wall > 0 else None


# A fresh, site-less interpreter forks the measured command and reports its wall time, CPU and peak
# RSS. Measuring from the runner itself would be wrong twice: getrusage(RUSAGE_CHILDREN).ru_maxrss is a
# high-water mark over every child ever reaped, and Linux charges a child the RSS its parent had when
# it forked, so each child would inherit the runner's parsers and repository lists. The probe's own
# footprint (about 8 MiB) is below that of `python -c pass`, so it never shows through.
PROBE = """
import os, sys, time
stats, argv = sys.argv[1], sys.argv[2:]
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        os.write(2, ("cannot run %s: %s\\n" % (argv[0], exc.strerror)).encode())
    os._exit(127)
_, status, usage = os.wait4(pid, 0)
wall = time.perf_counter() - start
with open(stats, "w") as out:
    out.write("%r %r %d" % (wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):  # it may have exited just now
        os.killpg(proc.pid, signal.SIGKILL)


def _failure_text(code: int, stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    last = lines[-1] if lines else "(no stderr)"
    return f"exit {code}: {last[:140]}"


def _read_probe_stats(path: Path, fallback_wall: float) -> Sample:
    try:
        wall, cpu, rss = path.read_text().split()
    except (OSError, ValueError):
        return Sample(fallback_wall, None, None)
    rss_kib = int(rss) // 1024 if sys.platform == "darwin" else int(rss)  # macOS reports bytes
    return Sample(float(wall), float(cpu), rss_kib)


def run_once(argv: Sequence[str], cwd: Path, timeout: float, ok_codes: Sequence[int]) -> Sample:
    """Run argv once under the probe; raise MeasureError unless it exits with one of ok_codes."""
    with tempfile.TemporaryDirectory(prefix="recovery-lint-probe-") as scratch:
        stats, err_path = Path(scratch) / "stats", Path(scratch) / "stderr"
        with open(os.devnull, "wb") as out, open(err_path, "wb") as err:
            start = time.perf_counter()
            proc = subprocess.Popen(
                [sys.executable, "-S", "-I", "-c", PROBE, str(stats), *argv],
                cwd=cwd,
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
            try:
                code = proc.wait(timeout)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                proc.wait()
                raise MeasureError(f"timed out after {timeout:.0f} s") from None
            except BaseException:
                _kill_group(proc)
                proc.wait()
                raise
        sample = _read_probe_stats(stats, time.perf_counter() - start)
        stderr = err_path.read_text(encoding="utf-8", errors="replace")
    if code not in ok_codes or "Traceback (most recent call last)" in stderr:
        raise MeasureError(_failure_text(code, stderr))
    return sample


def median_timing(samples: Sequence[Sample]) -> Timing:
    cpus = [s.cpu for s in samples if s.cpu is not None]
    rsss = [s.rss_kib for s in samples if s.rss_kib is not None]
    return Timing(
        wall=statistics.median(s.wall for s in samples),
        cpu=statistics.median(cpus) if cpus else None,
        rss_kib=max(rsss) if rsss else None,
    )


@dataclass
class Runner:
    repeat: int
    timeout: float

    def measure(self, label: str, argv: Sequence[str], cwd: Path, ok_codes: Sequence[int] = (0,)) -> Timing:
        progress(f"{label} ({self.repeat}x)")
        return median_timing([run_once(argv, cwd, self.timeout, ok_codes) for _ in range(self.repeat)])


def progress(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# The tool under test and its peers

OURS_OK = (0, 1)  # 0 clean, 1 findings; 2 means the tool itself failed
PEER_OK = (0, 1)  # yamllint and shellcheck exit 1 when they report problems


@dataclass
class Tool:
    argv: list[str]
    unavailable: str | None = None  # why every run of ours would fail, found once up front

    def check(self, *args: str) -> list[str]:
        return [*self.argv, "check", *args]


def which(name: str) -> str | None:
    """A command's own executable: the one installed beside this interpreter first, so that a
    version-manager shim on PATH (pyenv's is a bash script that starts pyenv) is not timed with it."""
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which(name)


def find_ours(cwd: Path, timeout: float) -> Tool:
    exe = which("recovery-lint")
    tool = Tool([exe] if exe else [sys.executable, "-m", "recovery_lint"])
    # `python -m missing_module` exits 1, which would pass for "findings"; ask for help first.
    try:
        run_once(tool.check("--help"), cwd, timeout, (0,))
    except MeasureError as exc:
        tool.unavailable = f"{' '.join(tool.argv)} unusable: {exc}"
    return tool


def ours_flags(jobs: int, cache_dir: Path | None = None) -> list[str]:
    cache = ["--cache-dir", str(cache_dir)] if cache_dir else ["--no-cache"]
    return ["--output-format", "concise", "--isolated", *cache, "--jobs", str(jobs)]


def peer(name: str) -> str | None:
    return which(name)


# --------------------------------------------------------------------------------------------
# The parse floor: the tool's parsers and nothing else, in this process


@dataclass
class Floor:
    total: float
    by_kind: dict[str, float]
    yaml_loader: str
    parse_errors: int


def _load_parsers() -> tuple[Callable[[str], None], Callable[[bytes], None], str]:
    import tree_sitter
    import tree_sitter_bash
    import yaml

    loader = getattr(yaml, "CSafeLoader", None) if yaml.__with_libyaml__ else None
    loader_name = "CSafeLoader" if loader else "SafeLoader (libyaml missing)"
    loader = loader or yaml.SafeLoader
    bash = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))

    def compose_yaml(text: str) -> None:
        for _node in yaml.compose_all(text, Loader=loader):
            pass

    def parse_bash(data: bytes) -> None:
        bash.parse(data)

    return compose_yaml, parse_bash, loader_name


def _parse_pass(
    files: Sequence[Path], compose_yaml: Callable[[str], None], parse_bash: Callable[[bytes], None]
) -> tuple[dict[str, float], int]:
    spent = dict.fromkeys(("manifest", "shell", "python", "pins"), 0.0)
    errors = 0
    for path in files:
        kind = file_kind(path)
        start = time.perf_counter()
        data = path.read_bytes()
        try:
            if kind == "manifest":
                compose_yaml(data.decode("utf-8"))
            elif kind == "shell":
                parse_bash(data)
            elif kind == "python":
                ast.parse(data.decode("utf-8"))
            else:
                data.decode("utf-8")
        except Exception:  # a file that fails to parse still cost its time; count it and go on
            errors += 1
        spent[kind] += time.perf_counter() - start
    return spent, errors


def measure_parse_floor(files: Sequence[Path], repeat: int) -> Floor:
    try:
        compose_yaml, parse_bash, loader_name = _load_parsers()
    except ImportError as exc:
        raise MeasureError(f"parser missing: {exc.name}") from exc
    passes = [_parse_pass(files, compose_yaml, parse_bash) for _ in range(repeat)]
    totals = [sum(spent.values()) for spent, _ in passes]
    middle = statistics.median_low(totals)  # a real pass, so its per-kind split adds up to the total
    spent, errors = passes[totals.index(middle)]
    return Floor(middle, spent, loader_name, errors)


# --------------------------------------------------------------------------------------------
# Table


@dataclass
class Row:
    measurement: str
    files: str = "—"
    jobs: str = "—"
    wall: str = "—"
    files_per_s: str = "—"
    rss: str = "—"
    cores_busy: str = "—"
    note: str = ""


HEADERS = ("measurement", "files", "jobs", "wall (median)", "files/s", "peak RSS", "CPU/wall", "ratio / note")


def fmt_seconds(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def fmt_ratio(numerator: float | None, denominator: float | None) -> str:
    if numerator is None or not denominator:
        return "n/a"
    return f"{numerator / denominator:.2f}×"


def timing_row(measurement: str, timing: Timing, files: int | None, jobs: int | str, note: str = "") -> Row:
    return Row(
        measurement=measurement,
        files=str(files) if files is not None else "—",
        jobs=str(jobs),
        wall=fmt_seconds(timing.wall),
        files_per_s=f"{files / timing.wall:,.0f}" if files else "—",
        rss=f"{timing.rss_kib / 1024:.0f} MiB" if timing.rss_kib is not None else "—",
        cores_busy=f"{timing.cores_busy:.2f}" if timing.cores_busy is not None else "—",
        note=note,
    )


def error_row(measurement: str, error: str, files: int | None = None, jobs: int | str = "—") -> Row:
    return Row(measurement, files=str(files) if files is not None else "—", jobs=str(jobs), wall="error", note=error)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_table(rows: Sequence[Row]) -> str:
    cells = [list(HEADERS)] + [
        [_cell(v) for v in (r.measurement, r.files, r.jobs, r.wall, r.files_per_s, r.rss, r.cores_busy, r.note)]
        for r in rows
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(HEADERS))]
    right = {1, 2, 3, 4, 5, 6}

    def line(values: list[str]) -> str:
        padded = [v.rjust(w) if i in right else v.ljust(w) for i, (v, w) in enumerate(zip(values, widths, strict=True))]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join(("-" * (w + 1) + ":" if i in right else "-" * (w + 2)) for i, w in enumerate(widths)) + "|"
    return "\n".join([line(cells[0]), rule, *(line(c) for c in cells[1:])])


def argv_batches(prefix: Sequence[str], files: Sequence[str]) -> list[list[str]]:
    """Split a long file list into command lines that fit the kernel's limit, as xargs does."""
    limit = min(os.sysconf("SC_ARG_MAX") if hasattr(os, "sysconf") else 131072, 2**21) // 2
    limit -= sum(len(k) + len(v) + 2 for k, v in os.environ.items()) + sum(len(a) + 1 for a in prefix)
    batches: list[list[str]] = []
    current: list[str] = []
    size = 0
    for name in files:
        if current and size + len(name) + 1 > limit:
            batches.append([*prefix, *current])
            current, size = [], 0
        current.append(name)
        size += len(name) + 1
    if current:
        batches.append([*prefix, *current])
    return batches


def measure_batches(runner: Runner, label: str, batches: Sequence[Sequence[str]], cwd: Path) -> Timing:
    """Each repeat runs every batch in turn; its wall and CPU are the sums, its RSS the largest."""
    progress(f"{label} ({runner.repeat}x, {len(batches)} command lines)")
    samples = []
    for _ in range(runner.repeat):
        parts = [run_once(argv, cwd, runner.timeout, PEER_OK) for argv in batches]
        cpus = [p.cpu for p in parts if p.cpu is not None]
        rss = [p.rss_kib for p in parts if p.rss_kib is not None]
        samples.append(Sample(sum(p.wall for p in parts), sum(cpus) if cpus else None, max(rss) if rss else None))
    return median_timing(samples)
