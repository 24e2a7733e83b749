"""Find the files to lint and say what kind each one is."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from . import gitlisting
from .gitlisting import DEFAULT_EXCLUDES
from .ignore import NoRules, rules_of, wildmatch_regex, work_tree_top
from .kinds import PYTHON, classify

if TYPE_CHECKING:
    from .ignore import Rules


class Candidate:
    """A file to lint: where it is, how it is shown, and what kind it is (from its name). The
    ``Path`` is made on first use: a large repository has tens of thousands of candidates and a
    run reads few of them."""

    __slots__ = ("_path", "display", "kind", "location", "unchecked_in")

    def __init__(self, path: Path | str, display: str, kind: str, unchecked_in: str | None = None) -> None:
        self.location = os.fspath(path)  # absolute
        self.display = display  # relative to the working directory, '/' separated
        self.kind = kind  # manifest | shell | python | requirements | pyproject | dockerfile | readme | maybe-shell
        self._path = path if isinstance(path, Path) else None
        # the walked root, while it is not yet known to be a regular file or a link inside that root
        # (see ``readable``); None once checked
        self.unchecked_in = unchecked_in

    @property
    def path(self) -> Path:
        if self._path is None:
            self._path = Path(self.location)
        return self._path

    def _key(self) -> tuple[str, str, str]:
        return (self.location, self.display, self.kind)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Candidate) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Candidate({self.location!r}, {self.display!r}, {self.kind!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (Candidate, (self.location, self.display, self.kind, self.unchecked_in))


def readable(candidate: Candidate) -> bool:
    """Whether a candidate may be read: a regular file, or a link to one inside the walked tree (a
    FIFO would block the read, a link out of the tree would read someone else's file). A listing
    leaves this to the first read for the files most runs never open (Python files nothing reaches)."""
    root = candidate.unchecked_in
    if root is None:
        return True
    if _usable(candidate.location, root, {}) is None:
        return False
    candidate.unchecked_in = None
    return True


def display_path(path: Path, cwd: Path) -> str:
    """``path`` as shown to the user: relative to the working directory, with ``../`` when the two
    share a folder below the filesystem root (a run from a subfolder of the repository), else absolute."""
    try:
        return path.relative_to(cwd).as_posix()
    except ValueError:
        pass
    common = os.path.commonpath([str(path), str(cwd)])
    if common in ("/", "") or os.path.dirname(common) == common:
        return path.as_posix()
    return Path(os.path.relpath(path, cwd)).as_posix()


def _glob_regex(pattern: str, covering: bool = True) -> re.Pattern[str]:
    """A .gitignore pattern as a regex over '/'-separated relative paths, its wildcards as git's
    wildmatch reads them; ``covering``: a match of a folder also matches everything below it."""
    anchored = "/" in pattern.rstrip("/")  # a '/' at the start or in the middle, as in .gitignore
    body = wildmatch_regex(pattern.lstrip("/"), pathname=True)
    if body is None:  # git never matches an unclosed bracket or a trailing backslash
        return re.compile(r"(?!)")
    prefix = "" if anchored else "(?:.*/)?"
    return re.compile(f"^{prefix}{body}(?:/.*)?$" if covering else f"^{prefix}{body}$")


class ExcludeSet:
    """Configured ``exclude`` (and ``per-file-ignores``) globs, matched as .gitignore patterns
    against paths relative to the project root: a pattern without '/' matches a name at any depth,
    '*' stays within a folder, '**' crosses folders, and a folder's match covers what is below it."""

    def __init__(self, patterns: list[str], root: Path) -> None:
        self.root = root
        self._below = os.fspath(root).rstrip("/") + "/"  # what the text of a path below the root starts with
        self.regexes = [_glob_regex(p.rstrip("/")) for p in patterns]
        self.own = [_glob_regex(p.rstrip("/"), covering=False) for p in patterns]

    def match(self, path: Path) -> bool:
        """The path, or a folder above it, is excluded."""
        return self.match_relative(self._relative(path))

    def match_relative(self, rel: str) -> bool:
        return any(r.match(rel) for r in self.regexes)

    def match_entry(self, path: Path | str) -> bool:
        """The path itself is excluded: what a walk asks of each entry it meets (the folders above
        it were asked on the way down), so that a folder named on the command line is walked even
        when it is excluded, as ruff does."""
        rel = self._relative(path)
        return any(r.match(rel) for r in self.own)

    def _relative(self, path: Path | str) -> str:
        if isinstance(path, str):  # a walk's own text: normalised already, no Path per entry
            if path.startswith(self._below):
                return path[len(self._below) :]
            path = Path(path)
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.as_posix()


def discover(
    paths: list[Path],
    cwd: Path,
    excludes: ExcludeSet | None = None,
    respect_gitignore: bool = True,
    defer_checks: Collection[str] = (),
    tracked_only: bool = False,
    later: ListedFiles | None = None,
) -> tuple[list[Candidate], list[str]]:
    """Walk the given files and folders; returns the candidates and warnings for missing paths.

    With ``defer_checks`` (kinds), files of those kinds from git's listing are not checked here (one
    lstat each, most of a large repository's listing); ``readable`` checks each the first time it is
    read, so one that turns out to be deleted, a FIFO or a link out of the tree is never read.
    With ``tracked_only``, a folder in a git work tree yields the files git tracks (what a commit
    holds); where git cannot list them (no git, submodules) the folder is walked as usual. Files
    given by name are kept either way. With ``later``, the Python files of a git listing are no
    candidates but go there, each made one when a run asks for it (see ``ListedFiles``)."""
    found: dict[str, Candidate] = {}  # absolute location -> candidate
    links: set[str] = set()  # the locations that are symbolic links
    warnings: list[str] = []
    for given in paths:
        path = given if given.is_absolute() else cwd / given
        if not path.exists() and not path.is_symlink():
            warnings.append(f"{given}: no such file or directory")
            continue
        if path.is_dir() and not path.is_symlink():
            root = path.resolve() if not path.is_symlink() else path
            _walk(root, cwd, excludes, respect_gitignore, found, links, defer_checks, tracked_only, later)
        elif path.is_file():
            kind = classify(path.name, path.parent.name)
            if kind:  # a file named explicitly is linted even when ignored
                abs_path = path.absolute()
                found[os.fspath(abs_path)] = Candidate(abs_path, display_path(abs_path, cwd), kind)
                if abs_path.is_symlink():
                    links.add(os.fspath(abs_path))
    # a link to a file that is linted under its own name is the same file: lint (and fix) it once
    kept = list(found.values())
    if links:  # walked folders are resolved and links to folders not followed: only links need resolving
        kept = [c for c in kept if not (c.location in links and _links_to_a_found_file(c.location, found, links))]
    return sorted(kept, key=lambda c: c.display), warnings


def _links_to_a_found_file(link: str, found: dict[str, Candidate], links: set[str]) -> bool:
    target = os.fspath(_real(link) or "")
    return target in found and target not in links


def _walk(
    root: Path,
    cwd: Path,
    excludes: ExcludeSet | None,
    respect_gitignore: bool,
    found: dict[str, Candidate],
    links: set[str],
    defer_checks: Collection[str] = (),
    tracked_only: bool = False,
    later: ListedFiles | None = None,
) -> None:
    root_rules: Rules = NoRules()
    if respect_gitignore:
        top = work_tree_top(root)
        listing = gitlisting.git_listing(root, top, not tracked_only) if top is not None else None
        if listing is not None and not _has_submodules(root):
            listed: dict[str, Candidate] = {}
            listed_links: set[str] = set()
            python: list[str] | None = [] if later is not None else None
            try:  # the tracked files first, while git lists the untracked ones
                _from_listing(root, cwd, excludes, listing.tracked, listed, listed_links, defer_checks, python)
            except BaseException:
                listing.abandon()
                raise
            if listing.finish() and not listing.repositories:
                _from_listing(root, cwd, excludes, listing.untracked, listed, listed_links, defer_checks, python)
                if later is not None and python:
                    later.add(_ListedRoot(root, cwd, excludes, python))
                found.update(listed)
                links.update(listed_links)
                return
        root_rules = rules_of(root, top, listing)
    _walk_folders(root, cwd, excludes, root_rules, found, links)


def _walk_folders(
    root: Path,
    cwd: Path,
    excludes: ExcludeSet | None,
    root_rules: Rules,
    found: dict[str, Candidate],
    links: set[str],
) -> None:
    """The candidates below ``root`` where git cannot list them, folder by folder. Paths are kept as
    text and each folder's display prefix is worked out once, and no file that the folder's listing
    already tells is a regular file is lstat'ed again: per-file objects and calls are what a walk of
    a large tree spends its time on."""
    base = os.fspath(root).rstrip("/")  # the filesystem root: "" (its files are "/name")
    prefixes = _FolderPrefixes(root, cwd)
    real: dict[str, Path | None] = {}  # the root resolved, at the first link met
    pending: list[tuple[str, str, Rules | None]] = [(base, "", None)]  # (folder, below the root, rules above)
    filtered = excludes is not None and bool(excludes.regexes)
    while pending:
        folder, rel, above = pending.pop()
        listed = _list_folder(folder or "/")
        if listed is None:
            continue
        folders, files = listed
        rules = root_rules if above is None else above.below(rel.rpartition("/")[2], _names(folders, files))
        prefix = prefixes[rel]
        below = []
        for name, is_link in sorted(folders):
            if name in DEFAULT_EXCLUDES or is_link:
                continue
            path = f"{folder}/{name}"
            if rules.ignored(name, True) or (filtered and excludes.match_entry(path)):  # type: ignore[union-attr]
                continue
            below.append((path, f"{rel}/{name}" if rel else name, rules))
        pending.extend(reversed(below))  # walked in name order
        if prefix is None:
            continue
        for name, regular in sorted(files):
            kind = classify(name, folder)
            if not kind:
                continue
            location = f"{folder}/{name}"
            link = False if regular else _usable(location, base or "/", real)
            if link is None:
                continue
            if link:
                links.add(location)
            if rules.ignored(name, False) or (filtered and excludes.match_entry(location)):  # type: ignore[union-attr]
                continue
            found[location] = Candidate(location, prefix + name, kind)


def _list_folder(folder: str) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]] | None:
    """A folder's subfolders, each with whether it is a symbolic link (a link to a folder counts as
    one, as ``os.walk`` lists it), and its other entries, each with whether it is a regular file (as
    the folder's listing tells; an lstat when it does not); None when it cannot be listed."""
    folders: list[tuple[str, bool]] = []
    files: list[tuple[str, bool]] = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    is_folder = entry.is_dir()
                except OSError:
                    is_folder = False
                if is_folder:
                    folders.append((entry.name, entry.is_symlink()))
                else:
                    try:
                        files.append((entry.name, entry.is_file(follow_symlinks=False)))
                    except OSError:
                        files.append((entry.name, False))
    except OSError:
        return None
    return folders, files


def _names(folders: list[tuple[str, bool]], files: list[tuple[str, bool]]) -> set[str]:
    return {name for name, _ in folders} | {name for name, _ in files}


def _has_submodules(root: Path) -> bool:
    return os.path.lexists(root / ".gitmodules")


def _from_listing(
    root: Path,
    cwd: Path,
    excludes: ExcludeSet | None,
    listed: Collection[str],
    found: dict[str, Candidate],
    links: set[str],
    defer_checks: Collection[str] = (),
    python: list[str] | None = None,
) -> None:
    """The candidates of a work tree without nested repositories, straight from git's listing: the
    same files the walk would keep, without visiting every folder. With ``python``, the Python
    files go there instead, as git lists them (see ``ListedFiles``)."""
    if python is not None:  # two list comprehensions cost less than a test of each name in the loop below
        python.extend([rel for rel in listed if rel.endswith(".py")])
        listed = [rel for rel in listed if not rel.endswith(".py")]
    base = os.fspath(root)
    prefixes = _FolderPrefixes(root, cwd)
    real: dict[str, Path | None] = {}  # the root resolved, at the first link met
    verdicts: dict[str, bool] = {}  # folder below the root -> excluded
    filtered = bool(excludes and excludes.regexes)
    for rel in listed:  # the result is sorted at the end
        folder, _, name = rel.rpartition("/")
        kind = PYTHON if name.endswith(".py") else classify(name, folder)  # most of a listing: no lower()
        if not kind:
            continue
        prefix = prefixes[folder]
        if prefix is None:
            continue
        location = f"{base}/{rel}"
        if kind in defer_checks:
            # most Python files are never read (only what a launch reaches), nor most files of a run
            # over named files: checked when first read
            if filtered and _excluded_below(base, rel, excludes, verdicts):  # type: ignore[arg-type]
                continue
            found[location] = Candidate(location, prefix + name, kind, base)
            continue
        link = _usable(location, base, real)  # git lists a link as a file, never files through a linked folder
        if link is None:
            continue
        if link:
            links.add(location)
        if filtered and _excluded_below(base, rel, excludes, verdicts):  # type: ignore[arg-type]
            continue
        found[location] = Candidate(location, prefix + name, kind)


class ListedFiles:
    """The Python files of a git listing that a run over named files makes no candidates of.

    Most files of a large repository are Python files that no job of the named files reaches; a
    candidate of each, and its entry in every table of the run, would cost more than the rest of
    such a run. A link that reaches one asks ``at`` and the file becomes a candidate then, after
    the checks the listing makes of every file (a folder never walked, an excluded path), so the
    run finds the same files as when every one is a candidate."""

    def __init__(self) -> None:
        self._roots: list[_ListedRoot] = []
        self.made: dict[str, Candidate] = {}  # display path -> the candidate made when asked for

    def add(self, root: _ListedRoot) -> None:
        self._roots.append(root)

    def at(self, location: str) -> Candidate | None:
        """The candidate of the file at an absolute, normal location, if the listing holds one there."""
        for root in self._roots:
            found = root.at(location)
            if found is not None:
                return self.made.setdefault(found.display, found)  # one candidate per file, however often asked
        return None

    def unmade(self, known: Collection[str]) -> list[Candidate]:
        """Every file not made a candidate yet whose display path is not in ``known``, in path order
        (a report of every file of the repository asks)."""
        out = []
        for root in self._roots:
            for location in root.locations():
                found = root.at(location)
                if found is not None and found.display not in known and found.display not in self.made:
                    out.append(found)
        return out

    def folders(self) -> set[str]:
        """The absolute folders holding a file of the listing that would be a candidate."""
        return {folder for root in self._roots for folder in root.folders()}


class Candidates(Mapping[str, Candidate]):
    """Display path -> candidate: the files a run gathered, and those of ``ListedFiles`` a link has
    made candidates of so far."""

    def __init__(self, gathered: dict[str, Candidate], later: ListedFiles | None = None) -> None:
        self._gathered = gathered
        self._later = later

    def __getitem__(self, display: str) -> Candidate:
        found = self._gathered.get(display)
        if found is None and self._later is not None:
            found = self._later.made.get(display)
        if found is None:
            raise KeyError(display)
        return found

    def __iter__(self) -> Iterator[str]:
        yield from self._gathered
        if self._later is not None:
            yield from (d for d in self._later.made if d not in self._gathered)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _ListedRoot:
    """The Python files git lists below one walked root, as text until asked for."""

    def __init__(self, root: Path, cwd: Path, excludes: ExcludeSet | None, rels: list[str]) -> None:
        self.base = os.fspath(root)
        self.below = self.base.rstrip("/") + "/"
        self.prefixes = _FolderPrefixes(root, cwd)
        self.excludes = excludes if excludes is not None and excludes.regexes else None
        self.verdicts: dict[str, bool] = {}
        self.rels = set(rels)

    def at(self, location: str) -> Candidate | None:
        if not location.startswith(self.below):
            return None
        rel = location[len(self.below) :]
        if rel not in self.rels or not self._kept(rel):
            return None
        folder, _, name = rel.rpartition("/")
        return Candidate(location, f"{self.prefixes[folder]}{name}", PYTHON, self.base)

    def _kept(self, rel: str) -> bool:
        """Whether the listing makes the file a candidate (as ``_from_listing`` decides)."""
        if self.prefixes[rel.rpartition("/")[0]] is None:
            return False
        return self.excludes is None or not _excluded_below(self.base, rel, self.excludes, self.verdicts)

    def locations(self) -> list[str]:
        return [self.below + rel for rel in sorted(self.rels)]

    def folders(self) -> set[str]:
        kept = self.rels if self.excludes is None else {rel for rel in self.rels if self._kept(rel)}
        folders = {rel.rpartition("/")[0] for rel in kept}
        return {self.below + f if f else self.base for f in folders if self.prefixes[f] is not None}


class _FolderPrefixes(dict[str, "str | None"]):
    """Folder below the walked root -> what the display paths (as ``display_path`` gives them) of
    its files start with; None for a folder below one that is never walked. Worked out once per
    folder: ``relpath`` for each of tens of thousands of files costs a large part of a one-file run."""

    def __init__(self, root: Path, cwd: Path) -> None:
        super().__init__()
        shown = display_path(root, cwd)
        self.root_shown = "" if shown == "." else shown + "/"
        # the working directory inside the walked tree: folders are reached by climbing from it
        # (root-relative text behind "../../" would climb to the root and down again)
        inside = os.path.relpath(cwd, root).replace(os.sep, "/") if self.root_shown.startswith("../") else ".."
        self.climb = [] if inside.startswith("..") else inside.split("/")

    def __missing__(self, folder: str) -> str | None:
        # skipped when its own name or a folder above it is (the folder above is looked up once)
        parent, _, name = folder.rpartition("/")
        skipped = name in DEFAULT_EXCLUDES or (parent != "" and self[parent] is None)
        prefix = None if skipped else self._prefix(folder)
        self[folder] = prefix
        return prefix

    def _prefix(self, folder: str) -> str:
        if not self.climb:
            return f"{self.root_shown}{folder}/" if folder else self.root_shown
        parts = folder.split("/") if folder else []
        shared = 0
        for mine, theirs in zip(self.climb, parts, strict=False):
            if mine != theirs:
                break
            shared += 1
        shown = "/".join([".."] * (len(self.climb) - shared) + parts[shared:])
        return f"{shown}/" if shown else ""


def _excluded_below(base: str, rel: str, excludes: ExcludeSet, verdicts: dict[str, bool]) -> bool:
    """Whether a listed file, or a folder between the walked root and it, is excluded: the same
    entries the walk asks about (the root itself may be excluded and named on the command line)."""
    folder = ""
    for part in rel.split("/")[:-1]:
        folder = f"{folder}/{part}" if folder else part
        hit = verdicts.get(folder)
        if hit is None:
            hit = verdicts[folder] = excludes.match_entry(f"{base}/{folder}")
        if hit:
            return True
    return excludes.match_entry(f"{base}/{rel}")


def _regular(path: Path | str) -> bool:
    """A regular file that is not a symbolic link."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _usable(location: Path | str, root: str, real: dict[str, Path | None]) -> bool | None:
    """Whether a file below ``root`` may be read, and whether it is a symbolic link: False for a
    regular file (one lstat tells), True for a link to a file inside the tree; None for what is
    never read: a FIFO, socket or device (reading would block), a dangling or looping link, or a
    link out of the tree (someone else's file). ``real`` keeps the root resolved once per walk."""
    if _regular(location):
        return False
    path = Path(location)
    if not path.is_symlink():
        return None
    if root not in real:
        real[root] = _real(root)
    return True if _inside_real(path, real[root]) and path.is_file() else None


def _real(root: str) -> Path | None:
    try:
        return Path(root).resolve()
    except (OSError, RuntimeError):
        return None


def _inside_real(path: Path, real_root: Path | None) -> bool:
    if real_root is None:
        return False
    try:
        path.resolve().relative_to(real_root)
        return True
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a symlink loop (Python < 3.13)
        return False
