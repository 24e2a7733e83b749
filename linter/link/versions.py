"""The versions a job runs: the closest exact declaration of each component (a ``pip install`` in
the job's own scripts, pin files in the nearest folder or a declaration folder beside it, a README's
version table), the configuration filling what no file declares."""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

from ..jobs import Launch, Versions
from ..kinds import PIN_KINDS
from ..paths import depth, folder_and_ancestors, under
from ..sources.versions import COMPONENTS, GPU_CONTENT, PinFile, VersionPin, pins_in_words
from .entries import guarded_torch
from .files import FileIndex

if TYPE_CHECKING:
    from ..sources.python import PythonFile

# folders beside a job's folders (or the repository root) that declare the versions of the whole tree
DECLARATION_FOLDERS = ("docker", "dockerfiles", "ci", "build", "env", "install", "requirements", "image", "images")
_DECLARATION_RANK = {name: rank for rank, name in enumerate(DECLARATION_FOLDERS)}


class VersionReader:
    """The version declarations of a repository, by folder, read for each job that asks."""

    def __init__(self, index: FileIndex, configured: dict[str, str]) -> None:
        self.index = index
        self.configured = configured
        # version declaration files by absolute folder (display paths, parsed when a job asks)
        self.pins_by_dir: dict[str, list[str]] = {}
        for path, kind in index.kinds().items():
            if kind in PIN_KINDS:
                self.pins_by_dir.setdefault(index.folder_of(path), []).append(path)
        # the declaration folders holding pins (``docker/``), by the folder they are beside, in the
        # order of DECLARATION_FOLDERS: looked up for every ancestor of every file of every job
        self.pins_beside: dict[str, list[str]] = {}
        found = []  # (rank of the name, folder beside, declaration folder): one pass over the folders
        for folder in self.pins_by_dir:
            parent, base = posixpath.split(folder)
            rank = _DECLARATION_RANK.get(base)
            if rank is not None and under(parent, base) == folder:
                found.append((rank, parent, folder))
        for _, parent, folder in sorted(found, key=lambda item: item[0]):
            self.pins_beside.setdefault(parent, []).append(folder)

    def _pins_over(self, paths: list[str]) -> list[tuple[int, PinFile]]:
        """Pin files in the folders of ``paths`` or their ancestors (and the declaration folders
        beside those, such as ``docker/``), with the depth of the ancestor they belong to."""
        seen: set[str] = set()
        out: list[tuple[int, PinFile]] = []
        for path in paths:
            for folder in folder_and_ancestors(self.index.folder_of(path)):
                if folder in seen:
                    continue
                seen.add(folder)
                level = depth(folder)
                for pin in self._pins_in(folder):
                    out.append((level * 2 + 1, pin))
                for beside in self.pins_beside.get(folder, ()):
                    for pin in self._pins_in(beside):
                        out.append((level * 2, pin))
        return out

    def _pins_in(self, folder: str) -> list[PinFile]:
        out = []
        for path in self.pins_by_dir.get(folder, ()):
            parsed = self.index.get(path)
            if parsed is not None and isinstance(parsed.model, PinFile):
                out.append(parsed.model)
        return out

    def of(
        self,
        paths: list[str],
        launches: list[Launch],
        entries: list[PythonFile] = (),  # type: ignore[assignment]
    ) -> tuple[Versions, list[PinFile]]:
        """The closest exact declaration of each component wins (a ``pip install`` in the job's
        own scripts, then pin files in the nearest folder); declarations that disagree at the same
        distance leave it unknown; configuration values fill what no file declares. Also the pin
        files read for it, by path."""
        versions = Versions(configured=dict(self.configured))
        pin_files = []
        for rank, model in self._pins_over(paths):
            if model.gpu_stack:  # a CUDA or ROCm declaration says nothing of the job on NPUs
                versions.set_aside.setdefault(model.source.path, model.gpu_stack)
            else:
                pin_files.append((rank, model))
        candidates: list[tuple[int, VersionPin]] = []
        for rank, model in pin_files:
            candidates += [(rank, pin) for pin in model.pins]
        for entry in entries:
            candidates += guarded_torch(entry, depth(self.index.folder_of(entry.source.path)) * 2 + 1)
        top = 10_000
        for launch in launches:
            for script in launch.scripts:
                for cmd in script.commands:
                    if len(cmd.words) > 2 and (cmd.words[0].value or "").startswith(("pip", "python")):
                        if any(GPU_CONTENT.search(w.value or w.text) for w in cmd.words):
                            continue  # pip install ... --index-url .../whl/cu121: a GPU build
                        candidates += [(top, pin) for pin in pins_in_words(cmd.words)]
        best: dict[str, tuple[tuple[bool, int, int], list[tuple[int, VersionPin]]]] = {}  # component -> (key, pins)
        for rank, pin in candidates:
            if pin.component not in COMPONENTS:
                continue
            # a bound declares no version, so any version declared farther away wins over it; at one
            # distance an exact pin wins over the versions a README lists
            key = (pin.exact or pin.alternative, rank, 2 if pin.exact else 1 if pin.alternative else 0)
            held = best.get(pin.component)
            if held is None or key > held[0]:
                best[pin.component] = (key, [(rank, pin)])
            elif key == held[0]:
                held[1].append((rank, pin))
        for component, (key, found) in best.items():
            if key[2] == 1:
                versions.choices[component] = tuple(pin for _, pin in found)
                continue
            distinct = {pin.version for _, pin in found if pin.exact}
            if len(distinct) > 1:
                where = ", ".join(sorted({f"{p.span.path}:{p.span.line}" for _, p in found}))
                versions.conflicts[component] = f"declared as {', '.join(sorted(distinct))} in {where}"
                continue
            versions.pins[component] = found[0][1]
        return versions, [model for _, model in sorted(pin_files, key=lambda item: item[1].source.path)]
