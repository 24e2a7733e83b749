"""Seeded generators of repositories laid out like real ones, for the recovery-lint benchmark.

    python bench/zoo.py gitignore-repro OUT_DIR

``gitignore-repro``: 100 folders, each with a 100-line .gitignore and 40 two-line Python files that no
line ignores (issue 11: matching every path against every rule of the tree took 86 s).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPRO_FOLDERS = 100
REPRO_LINES = 100
REPRO_FILES = 40


def gitignore_repro_lines(folder: int, lines: int = REPRO_LINES) -> list[str]:
    """A mix of the line shapes real .gitignore files hold; none matches the Python files."""
    shapes = (
        "*.tmp{i}",
        "cache{i}/",
        "/build{i}",
        "**/logs{i}",
        "out{i}/**",
        "!keep{i}.tmp",
        "data/raw{i}/",
        "*.ckpt{i}",
        "[Bb]in{i}/",
        "# section {i}",
    )
    return [shapes[i % len(shapes)].format(i=f"{folder}_{i}") for i in range(lines)]


def write_gitignore_repro(
    out: Path, folders: int = REPRO_FOLDERS, lines: int = REPRO_LINES, files: int = REPRO_FILES
) -> list[Path]:
    """Write the reproduction under ``out``; return the Python files (all of them are to be linted)."""
    written = []
    for f in range(folders):
        folder = out / f"pkg{f:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / ".gitignore").write_text("\n".join(gitignore_repro_lines(f, lines)) + "\n", encoding="utf-8")
        for i in range(files):
            path = folder / f"mod{i:02d}.py"
            path.write_text(f"import os\nVALUE = {i}\n", encoding="utf-8")
            written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    repro = sub.add_parser("gitignore-repro", help="the nested-.gitignore reproduction of issue 11")
    repro.add_argument("out_dir", type=Path)
    args = parser.parse_args(argv)
    files = write_gitignore_repro(args.out_dir)
    print(f"{args.out_dir}: {len(files)} Python files in {REPRO_FOLDERS} folders")
    return 0


if __name__ == "__main__":
    sys.exit(main())
