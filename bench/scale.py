"""Growth and batch measurements on real files: how the cost of a run grows with the repository,
and what a pre-commit batch costs.

- ``scale``: a real repository's files copied into numbered subfolders (``copy-000/``, ``copy-001/``,
  ...) until the tree holds N files, for each N of ``--scale``. Each tree is linted whole, cold, on
  one core and on every core, against a floor measured in-process over the same files: every file
  read, every YAML file loaded with libyaml, every Python file compiled. The cost per file at the
  largest size is compared with that at the smallest: a run whose cost grows faster than the
  repository shows it there.
- ``batch``: the first N files (sorted) of a real git checkout that the pre-commit hook's filter
  passes, given to one process as the hook gives them (``--force-exclude``), cold.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import yaml
from measure import (
    OURS_OK,
    MeasureError,
    Row,
    Timing,
    argv_batches,
    error_row,
    fmt_ratio,
    fmt_seconds,
    median_timing,
    progress,
    run_once,
    timing_row,
)

# the file filter of .pre-commit-hooks.yaml, as pre-commit matches it (re.search on the path)
HOOK_FILES = re.compile(
    r"(?i)(\.(ya?ml|sh|bash|py)$|(^|/)[^/]*requirements[^/]*\.txt$|(^|/)constraints[^/]*\.txt$|(^|/)pyproject\.toml$"
    r"|(^|/)(dockerfile|containerfile)[^/]*$|(^|/)readme[^/]*\.md$|(^|/)[^/.]+$)"
)
HOOK_EXCLUDE = re.compile(
    r"(^|/)(AUTHORS|CHANGELOG|CONTRIBUTING|COPYING|LICENSE|MAINTAINERS|NEWS|NOTICE|PATENTS|README)$"
)


def source_files(root: Path) -> list[Path]:
    """Every regular file below ``root`` (``.git`` left out), relative, sorted."""
    out = []
    for folder, folders, files in os.walk(root):
        folders[:] = sorted(name for name in folders if name != ".git")
        for name in files:
            path = Path(folder, name)
            if path.is_file() and not path.is_symlink():
                out.append(path.relative_to(root))
    return sorted(out)


def copy_tree(source: Path, out: Path, size: int) -> list[Path]:
    """``out`` made of ``source``'s files copied into ``copy-NNN/`` folders until it holds ``size``
    files (the last copy partial); the files written, absolute. An existing tree of that size is kept."""
    files = source_files(source)
    if not files:
        raise SystemExit(f"--scale-source {source}: no files")
    marker = out / ".scale-tree"
    expected = f"{source.resolve()} {size}\n"
    if marker.is_file() and marker.read_text() == expected:
        return [p for p in (out / rel for rel in _written(out)) if p.is_file()]
    if out.exists():
        shutil.rmtree(out)
    written: list[Path] = []
    copy = 0
    while len(written) < size:
        for rel in files:
            if len(written) == size:
                break
            target = out / f"copy-{copy:03d}" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / rel, target)
            written.append(target)
        copy += 1
    marker.write_text(expected)
    return written


def _written(out: Path) -> list[Path]:
    return [p.relative_to(out) for p in out.rglob("*") if p.is_file() and p.name != ".scale-tree"]


def floor_seconds(files: Sequence[Path], repeat: int) -> float:
    """The median of ``repeat`` in-process passes that read every file, load every YAML file with
    libyaml and compile every Python file (what any linter of these files does at the least)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    totals = []
    for _ in range(repeat):
        start = time.process_time()
        for path in files:
            try:
                data = path.read_bytes()
            except OSError:
                continue
            name = path.name.lower()
            try:
                if name.endswith((".yaml", ".yml")):
                    for _doc in yaml.load_all(data, Loader=loader):
                        pass
                elif name.endswith(".py"):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        compile(data, str(path), "exec", dont_inherit=True)
            except Exception:  # a file that does not load still cost its time
                continue
        totals.append(time.process_time() - start)
    return statistics.median(totals)


def hook_batch(checkout: Path, count: int) -> list[str]:
    """The first ``count`` files of the checkout's git index that the hook's filter passes."""
    import subprocess

    listed = subprocess.run(["git", "ls-files", "-z"], cwd=checkout, capture_output=True, check=True).stdout
    paths = sorted(p for p in listed.decode("utf-8", "surrogateescape").split("\0") if p)
    chosen = [p for p in paths if HOOK_FILES.search(p) and not HOOK_EXCLUDE.search(p) and (checkout / p).is_file()]
    return chosen[:count]


def scale_rows(bench, repos: Path, source: Path, sizes: Sequence[int]) -> str:
    """Rows for each size: the floor, ours on one core and on every core (CPU, and CPU / floor);
    then the CPU per file at the largest size against the smallest."""

    per_file: dict[int, dict[int, float]] = {}
    jobs_list = sorted({1, bench.cores})
    for size in sizes:
        root = repos / f"scale-{source.name}-{size}"
        progress(f"copying {source} into {root} ({size} files)")
        files = copy_tree(source, root, size)
        floor = floor_seconds(files, bench.runner.repeat)
        bench.rows.append(
            Row(
                f"floor @{source.name}×{size}, in-process",
                str(size),
                "1",
                fmt_seconds(floor),
                note="CPU: read every file, libyaml load_all for YAML, compile() for Python",
            )
        )
        for jobs in jobs_list:
            label = f"ours @{source.name}×{size}, full tree, cold"
            progress(f"{label}, --jobs {jobs} ({bench.runner.repeat}x)")
            try:
                flags = ("--output-format", "concise", "--isolated", "--no-cache", "--jobs", str(jobs))
                argv = bench.ours.check(".", *flags)
                samples = [run_once(argv, root, bench.runner.timeout, OURS_OK) for _ in range(bench.runner.repeat)]
            except MeasureError as exc:
                bench.rows.append(error_row(label, str(exc), size, jobs))
                continue
            cpu = statistics.median(s.cpu for s in samples if s.cpu is not None)
            wall = statistics.median(s.wall for s in samples)
            rss = max(s.rss_kib or 0 for s in samples)
            timing = Timing(wall, cpu, rss)
            per_file.setdefault(jobs, {})[size] = cpu / size
            note = f"CPU {fmt_seconds(cpu)}; CPU / floor = {fmt_ratio(cpu, floor)}"
            note += f"; {1000 * cpu / size:.2f} ms CPU per file"
            bench.rows.append(timing_row(label, timing, size, jobs, note))
    small, large = min(sizes), max(sizes)
    for jobs in jobs_list:
        found = per_file.get(jobs, {})
        if small != large and small in found and large in found:
            ratio = fmt_ratio(found[large], found[small])
            bench.rows.append(
                Row(f"CPU per file @{large} / @{small}", jobs=str(jobs), note=f"{ratio} (1.00× is linear)")
            )
    listed = ", ".join(map(str, sizes))
    return f"- scale trees: {source} ({len(source_files(source))} files) copied into subfolders, sizes {listed}"


def batch_rows(bench, checkout: Path, count: int) -> str:
    """One row: a pre-commit batch of ``count`` files of a real checkout, in one process, cold."""

    files = hook_batch(checkout, count)
    label = f"ours @{checkout.name}, pre-commit batch of {len(files)} files, cold"
    progress(f"{label} ({bench.runner.repeat}x)")
    prefix = bench.ours.check("--force-exclude", "--output-format", "concise", "--isolated", "--no-cache")
    lines = argv_batches(prefix, files)
    if len(lines) != 1:
        bench.rows.append(error_row(label, f"the batch needs {len(lines)} command lines", len(files)))
        return ""
    try:
        samples = [run_once(lines[0], checkout, bench.runner.timeout, OURS_OK) for _ in range(bench.runner.repeat)]
    except MeasureError as exc:
        bench.rows.append(error_row(label, str(exc), len(files)))
        return ""

    timing = median_timing(samples)
    note = f"CPU {fmt_seconds(timing.cpu or 0)}; the hook's file filter, first {count} of `git ls-files` sorted"
    bench.rows.append(timing_row(label, timing, len(files), "default", note))
    return f"- batch: {checkout} (`git ls-files`), {len(files)} files"


if __name__ == "__main__":  # a tree for a run by hand: python bench/scale.py SOURCE OUT SIZE
    made = copy_tree(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]))
    print(f"{len(made)} files in {sys.argv[2]}")
