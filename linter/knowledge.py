"""Version knowledge: Ascend release names, what each torch_npu release does, documented requirements.

The facts live in ``recovery_lint.schemas``, each with its source: ``torch_npu_releases.json`` holds
every final torch_npu release tag of Ascend/pytorch with what its code does (package version,
watchdog default and accepted values, ``torch_npu_run``, ``RANK_TABLE_FILE`` …) and the mapping
table of the repository's COMPATIBILITY.en.md; ``knowledge.json`` holds the ranges the MindCluster
docs support and documented defaults. This module parses version strings and answers questions
against that data. The files are read once, on first use, and ``packaging`` is imported lazily, so
importing this module stays cheap.

A torch_npu package is looked up by its exact version, never placed by ordering post numbers: they
are not ordered by release (``2.1.0.post4`` is release 5.0.1.2, ``2.1.0.post15`` of 7.0.0.1 comes
after ``2.1.0.post13`` of 7.1.0). A version the table does not have is unknown.

Release lookup, for rules:

``Release``
    One release build (frozen): ``tag``, ``release`` (``"6.0.rc3"``), ``torch`` (``"2.1.0"``),
    ``package`` (``"2.1.0.post8"``), ``watchdog_default`` (int, or None when the release does not
    read ``HCCL_ASYNC_ERROR_HANDLING``), ``watchdog_values`` (the values its start-up check accepts;
    None = any integer, no check; ``()`` = not read), ``reads_torch_hccl_async_error_handling``,
    ``ships_torch_npu_run``, ``reads_rank_table_file``, ``reads_resume_mode_enable``; also ``cann``
    (from the compatibility table; None for maintenance releases), ``source`` and ``note``.
``npu_facts(torch: str | None, torch_npu: str | None) -> NpuFacts`` (cached)
    ``releases``: the releases consistent with the declared versions (an exact torch_npu package
    gives one, build suffixes ``+git…``/``.git…``/``+cxx11-abi`` stripped first; a release name such
    as ``6.0.RC3`` gives that release's builds, narrowed by torch; torch alone gives every build for
    its X.Y.Z base; neither gives all). ``basis``: a clause saying what was looked up and assumed.
    ``conflict``: a sentence where sources disagree, else None. ``no_npu``: torch_npu cannot be
    present (a CUDA/ROCm/XPU torch build) or no torch_npu for that torch reads the watchdog (torch
    below 1.11, 2.0.1). ``answer(field_name)``: the value every candidate shares, else None.
``feature_support(feature: str, facts: NpuFacts) -> Support``
    ``feature`` is ``"torch_npu_run"``, ``"rank_table"`` or ``"watchdog"``. ``Support.status``:
    ``"available"`` (every candidate has it and the docs support it), ``"undocumented"`` (every
    candidate has it, the docs support it only from a later release: a note, not an error),
    ``"missing"`` (no candidate has it: it cannot work), ``"unknown"``. ``Support.reason``: a sentence
    naming the release(s), the documented range and any conflict.
``watchdog_facts(facts: NpuFacts) -> WatchdogFacts``
    ``read``, ``default``, ``on_by_default``, ``values``, ``checked``, ``reads_torch_name`` and
    ``accepts(text)``: what the candidates do with ``HCCL_ASYNC_ERROR_HANDLING`` (None where they
    differ). ``watchdog_value(text)`` is the integer
    torch_npu reads from a value (C ``strtol``: ``"true"`` reads as 0).
``release_table() -> tuple[Release, ...]``
    Every release, in the order of the data file. ``Release.reads_hccl_async_error_handling`` says
    whether a release has the watchdog at all; ``Release.release_version`` is the release name
    parsed (release names are ordered; package numbers are not).

Older helpers, kept for the current rules (reimplemented on the release table):
``parallel_store_support``, ``ranktable_support`` (True/False/None with a reason; a release that has
the feature outside the documented range gives None), ``watchdog_default(torch, torch_npu=None)``,
``parse_torch_npu_version``, ``torch_npu_for_torch_mismatch``, ``version_problem``,
``hccl_link_optimization``, ``compile_mode_support``, ``mindio_support``, ``documented_default``,
``jit_compile_default``, ``knowledge_source``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .lazyre import LazyPattern

if TYPE_CHECKING:
    from typing import Any

    from packaging.version import Version

__all__ = [
    "AscendVersion",
    "NpuFacts",
    "Release",
    "Support",
    "TorchNpuVersion",
    "WatchdogFacts",
    "compile_mode_support",
    "documented_default",
    "feature_support",
    "hccl_link_optimization",
    "jit_compile_default",
    "knowledge_source",
    "mindio_support",
    "newest_release",
    "npu_facts",
    "parallel_store_support",
    "parse_ascend_version",
    "parse_torch_npu_version",
    "ranktable_support",
    "release_table",
    "torch_npu_for_torch_mismatch",
    "version_problem",
    "watchdog_default",
    "watchdog_facts",
    "watchdog_value",
]

# ---------------------------------------------------------------------------------------------------
# Ascend release names (CANN, torch_npu release lines, MindCluster, MindIO)

# Digit runs are capped so int() never meets Python's limit on huge digit strings.
_N = r"(\d{1,9})"
_PRE = r"(?:\.?(alpha|beta)(\d{1,9}))?"
_DOTTED = LazyPattern(rf"v?{_N}\.{_N}\.(?:rc{_N}|{_N})(?:\.{_N})?{_PRE}", re.ASCII | re.IGNORECASE)
# Community builds drop the dots (80RC3alpha003, 900beta2); only single-digit major/minor are
# unambiguous, and an RC or build tag is required so plain numbers such as "800" are not taken.
_COMPACT = LazyPattern(r"(\d)(\d)(?:rc(\d{1,9})|(\d))(?:(alpha|beta)(\d{1,9}))?", re.ASCII | re.IGNORECASE)
_PRE_RANK = {"alpha": 0, "beta": 1}


@functools.total_ordering
@dataclass(frozen=True, eq=False)
class AscendVersion:
    """A parsed Ascend release name such as ``6.0.RC3``, ``8.0.RC2.alpha002`` or ``6.0.0``.

    Exactly one of ``rc`` (release candidate number) and ``micro`` (final release number) is set.
    ``patch`` is a trailing ``.n`` (``6.3.RC3.1``); ``pre`` is a build tag such as ``alpha002`` that
    precedes the release it is attached to. Equality and ordering use :attr:`sort_key`.
    """

    major: int
    minor: int
    rc: int | None = None
    micro: int | None = None
    patch: int | None = None
    pre: str | None = None

    def __post_init__(self) -> None:
        if (self.rc is None) == (self.micro is None):
            raise ValueError("exactly one of rc and micro must be set")
        if self.pre is not None and _pre_parts(self.pre) is None:
            raise ValueError(f"build tag must look like alpha002 or beta2, not {self.pre!r}")

    @property
    def is_rc(self) -> bool:
        """True for a release candidate (``RCn``)."""
        return self.rc is not None

    @property
    def sort_key(self) -> tuple[int, ...]:
        """Key that orders RC1 < RC2 < .0 < .1, RC3 < RC3.1, and build tags before their release."""
        stage, number = (0, self.rc) if self.rc is not None else (1, self.micro or 0)
        kind, build = (_pre_parts(self.pre) if self.pre is not None else None) or (2, 0)
        patch = -1 if self.patch is None else self.patch
        return (self.major, self.minor, stage, number, patch, kind, build)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AscendVersion):
            return NotImplemented
        return self.sort_key == other.sort_key

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, AscendVersion):
            return NotImplemented
        return self.sort_key < other.sort_key

    def __hash__(self) -> int:
        return hash(self.sort_key)

    def __str__(self) -> str:
        third = f"RC{self.rc}" if self.rc is not None else str(self.micro)
        text = f"{self.major}.{self.minor}.{third}"
        if self.patch is not None:
            text += f".{self.patch}"
        if self.pre is not None:
            text += f".{self.pre}"
        return text


def _pre_parts(tag: str) -> tuple[int, int] | None:
    match = re.fullmatch(r"(alpha|beta)(\d{1,9})", tag, re.ASCII)
    return (_PRE_RANK[match[1]], int(match[2])) if match else None


def parse_ascend_version(text: str) -> AscendVersion | None:
    """Parse an Ascend release name; None when ``text`` is not one. Never raises."""
    if not isinstance(text, str):
        return None
    return _parse_ascend_version(text)


@functools.lru_cache(maxsize=4096)  # rules ask about the same few pins for every job
def _parse_ascend_version(text: str) -> AscendVersion | None:
    text = text.strip()
    if match := _DOTTED.fullmatch(text):
        major, minor, rc, micro, patch, kind, build = match.groups()
    elif (match := _COMPACT.fullmatch(text)) and (match[3] is not None or match[5] is not None):
        major, minor, rc, micro, kind, build = match.groups()
        patch = None
    else:
        return None
    return AscendVersion(
        major=int(major),
        minor=int(minor),
        rc=None if rc is None else int(rc),
        micro=None if micro is None else int(micro),
        patch=None if patch is None else int(patch),
        pre=None if kind is None else f"{kind.lower()}{build}",
    )


# ---------------------------------------------------------------------------------------------------
# Data files


@functools.cache
def _data() -> dict[str, Any]:
    """knowledge.json: documented requirements and defaults."""
    from .schemas import read_json

    return read_json("knowledge.json")


@functools.cache
def _release_data() -> dict[str, Any]:
    """torch_npu_releases.json: what each release tag does, and the compatibility table."""
    from .schemas import read_json

    return read_json("torch_npu_releases.json")


def _ascend(text: str) -> AscendVersion:
    """Parse a release name from the data files, where a bad spelling is a packaging bug."""
    version = parse_ascend_version(text)
    if version is None:
        raise ValueError(f"the knowledge data holds an unreadable release name {text!r}")
    return version


def _requirement(name: str) -> dict[str, Any]:
    return _data()["requirements"][name]


def knowledge_source(name: str) -> str | None:
    """The source of a requirement (``parallel_store`` …), a documented default, or ``torch_npu_releases``."""
    if name == "torch_npu_releases":
        return _release_data()["source"]
    entry = _data()["requirements"].get(name) or _data()["defaults"].get(name)
    return None if entry is None else entry["source"]


# the variable every final torch_npu release reads for the HCCL watchdog, and the upstream name that
# no final release up to 26.1.0 reads (torch_npu_releases.json: reads_torch_name)
WATCHDOG_VAR = "HCCL_ASYNC_ERROR_HANDLING"
WATCHDOG_NEW_VAR = "TORCH_HCCL_ASYNC_ERROR_HANDLING"


def documented_default(name: str) -> int | float | str | bool | None:
    """The documented scalar default of ``name`` (e.g. ``HCCL_EXEC_TIMEOUT`` → 1836).

    None when unknown or when the default depends on context (use :func:`watchdog_facts` and
    :func:`jit_compile_default` for those).
    """
    entry = _data()["defaults"].get(name)
    return None if entry is None else entry.get("value")


# ---------------------------------------------------------------------------------------------------
# PEP 440 versions (torch, torch_npu packages)


def _pep440(text: str) -> Version | None:
    return _pep440_cached(text) if isinstance(text, str) else None


@functools.lru_cache(maxsize=4096)
def _pep440_cached(text: str) -> Version | None:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(text.strip())
    except (InvalidVersion, ValueError):  # ValueError: a digit run past Python's int() limit
        return None


def _base(version: Version) -> str:
    """The ``X.Y.Z`` base of a version, ignoring pre/post/dev/local parts (2.1.0.post8 → 2.1.0)."""
    parts = (*version.release, 0, 0)[:3]
    return ".".join(str(part) for part in parts)


def _torch_base(text: str | None) -> str | None:
    version = None if text is None else _pep440(text)
    if version is None:
        return None
    if len(version.release) == 2:  # "PyTorch 1.8" in a README: the 1.8 torch_npu was built for (1.8.1)
        return _series_torch(version.release[0], version.release[1]) or _base(version)
    return _base(version)


@functools.lru_cache(maxsize=64)
def _series_torch(major: int, minor: int) -> str | None:
    """The newest torch of a ``major.minor`` series that a torch_npu build (or a compatibility row) is for."""
    from packaging.version import Version

    rows = _release_data()["compatibility_table"]["rows"]
    torches = {r.torch for r in release_table()} | {row["torch"] for row in rows}
    series = [Version(t) for t in torches if Version(t).release[:2] == (major, minor)]
    return _base(max(series)) if series else None


def _strip_build_tag(text: str) -> str:
    # Source builds append +git<sha7>, or .git<sha7> for x86 cxx11-ABI builds, which is not PEP 440.
    public, _, _local = text.strip().partition("+")
    return re.sub(r"\.git[0-9a-f]{4,40}$", "", public, flags=re.IGNORECASE)


def _looks_like_release(version: AscendVersion) -> bool:
    # torch_npu package versions start with the torch version (1.x, 2.x); release names are 3.0 onwards.
    return version.is_rc or version.pre is not None or version.major >= 3


def _non_npu_build(torch: str | None) -> str | None:
    """The kind of torch build (``CUDA`` …) when its local label says torch_npu cannot run on it."""
    version = None if torch is None else _pep440(torch)
    if version is None or version.local is None:
        return None
    for build in _data()["torch_builds"]["without_npu"]:
        if re.match(rf"{re.escape(build['prefix'])}(\d|\.|$)", version.local):
            return build["kind"]
    return None


# ---------------------------------------------------------------------------------------------------
# The release table


@dataclass(frozen=True)
class Release:
    """One torch_npu release build, as its tag in Ascend/pytorch has it (see the module docstring)."""

    tag: str
    release: str
    torch: str
    package: str
    watchdog_default: int | None
    watchdog_values: tuple[int, ...] | None
    starts_watchdog_thread: bool
    reads_torch_hccl_async_error_handling: bool
    has_distributed_run_module: bool
    ships_torch_npu_run: bool
    reads_rank_table_file: bool
    reads_resume_mode_enable: bool
    cann: str | None = None
    source: str = field(default="", compare=False, repr=False)
    note: str | None = field(default=None, compare=False, repr=False)

    @property
    def reads_hccl_async_error_handling(self) -> bool:
        """Whether the release reads ``HCCL_ASYNC_ERROR_HANDLING`` (has the HCCL watchdog) at all."""
        return self.watchdog_default is not None

    @property
    def release_version(self) -> AscendVersion:
        """The release name parsed; release names are ordered, package numbers are not."""
        return _ascend(self.release)


@functools.cache
def release_table() -> tuple[Release, ...]:
    """Every final torch_npu release build, in the order of the data file."""
    return tuple(_release_at(at) for at in range(len(_release_data()["releases"])))


@functools.cache
def _release_at(at: int) -> Release:
    """Row ``at`` of the release table, built once: a job that declares no version needs only the
    rows of the release lines MindCluster supports, a fifth of the table."""
    return _release_from_row(_release_data()["releases"][at])


def _release_from_row(row: dict[str, Any]) -> Release:
    values = row["watchdog_values"]
    return Release(
        tag=row["tag"],
        release=row["release"],
        torch=row["torch"],
        package=row["package"],
        watchdog_default=row["watchdog_default"],
        watchdog_values=None if values is None else tuple(values),
        starts_watchdog_thread=row["starts_watchdog_thread"],
        reads_torch_hccl_async_error_handling=row["reads_torch_hccl_async_error_handling"],
        has_distributed_run_module=row["has_distributed_run_module"],
        ships_torch_npu_run=row["ships_torch_npu_run"],
        reads_rank_table_file=row["reads_rank_table_file"],
        reads_resume_mode_enable=row["reads_resume_mode_enable"],
        cann=_cann_by_release().get(_ascend(row["release"])),
        source=row["source"],
        note=row.get("note"),
    )


@functools.cache
def _cann_by_release() -> dict[AscendVersion, str]:
    return {_ascend(row["release"]): row["cann"] for row in _release_data()["compatibility_table"]["rows"]}


@functools.cache
def _by_package() -> dict[Version, Release]:
    from packaging.version import Version

    return {Version(release.package): release for release in release_table()}


@functools.lru_cache(maxsize=256)
def _builds_for_torch(base: str) -> tuple[Release, ...]:
    return tuple(release for release in release_table() if release.torch == base)


@functools.lru_cache(maxsize=256)
def _compat_releases(package: Version) -> tuple[str, ...]:
    """The releases the compatibility table lists ``package`` under."""
    from packaging.version import Version

    rows = _release_data()["compatibility_table"]["rows"]
    return tuple(row["release"] for row in rows if _pep440(row["package"]) == Version(package.public))


@functools.cache
def _oldest_watchdog_torch() -> Version:
    """The oldest torch base any torch_npu release that reads HCCL_ASYNC_ERROR_HANDLING is built for."""
    from packaging.version import Version

    return min(Version(r.torch) for r in release_table() if r.reads_hccl_async_error_handling)


@functools.cache
def newest_release() -> str:
    """The newest release in the release table (what "every release up to ..." claims reach)."""
    return max(release_table(), key=lambda release: release.release_version).release


def _newest_torch() -> Version:
    from packaging.version import Version

    return max(Version(release.torch) for release in release_table())


def _line(version: AscendVersion) -> AscendVersion:
    """The release line of a maintenance release (6.0.rc1.1 → 6.0.rc1), the granularity of the docs."""
    return AscendVersion(version.major, version.minor, version.rc, version.micro, None, version.pre)


def _release_names(releases: tuple[Release, ...] | list[Release]) -> list[str]:
    """Distinct release names, oldest first."""
    names: dict[AscendVersion, str] = {}
    for release in releases:
        names.setdefault(release.release_version, release.release)
    return [names[key] for key in sorted(names)]


def _span(releases: tuple[Release, ...] | list[Release]) -> str:
    names = _release_names(releases)
    return f"release {names[0]}" if len(names) == 1 else f"releases {names[0]} to {names[-1]}"


def _and_list(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


# ---------------------------------------------------------------------------------------------------
# Looking up declared versions


@dataclass(frozen=True)
class NpuFacts:
    """The torch_npu releases a job's declared versions allow, and how they were found."""

    releases: tuple[Release, ...]
    basis: str
    conflict: str | None = None
    no_npu: bool = False
    # some of the versions the job may run have no torch_npu at all (torch 1.5, a CUDA build) while
    # others have the releases above: each answer must hold for those too
    mixed: bool = False

    def answer(self, field_name: str) -> Any:
        """The value of ``field_name`` shared by every candidate release; None when they differ or none."""
        values = [getattr(release, field_name) for release in self.releases]
        if self.mixed:
            values.append(_WITHOUT_TORCH_NPU.get(field_name))
        if values and all(value == values[0] for value in values):
            return values[0]
        return None


# what a stack without torch_npu has of each release fact (torch 1.5's own NPU build, a CUDA build)
_WITHOUT_TORCH_NPU: dict[str, Any] = {
    "watchdog_default": None,
    "watchdog_values": (),
    "starts_watchdog_thread": False,
    "has_distributed_run_module": False,
    "reads_hccl_async_error_handling": False,
    "reads_torch_hccl_async_error_handling": False,
    "ships_torch_npu_run": False,
    "reads_rank_table_file": False,
    "reads_resume_mode_enable": False,
}


def npu_facts_any(torches: tuple[str, ...], torch_npus: tuple[str, ...], where: str = "") -> NpuFacts:
    """The candidate releases when the job may run any of several versions (a README lists the
    PyTorch versions a model supports): the releases of every one of them. ``where`` says where the
    versions were listed."""
    pairs = [(t, n) for t in (torches or (None,)) for n in (torch_npus or (None,))]
    if len(pairs) == 1:
        return npu_facts(*pairs[0])
    every = [npu_facts(t, n) for t, n in pairs]
    listed = " or ".join(f"torch {t}" if n is None else f"torch_npu {n}" for t, n in pairs if t or n)
    releases = tuple(dict.fromkeys(r for facts in every for r in facts.releases))
    without = [facts for facts in every if not facts.releases and facts.no_npu]
    basis = f"{listed} may run{f' ({where})' if where else ''}"
    if not releases:
        return NpuFacts((), f"{basis}, and none of them has a torch_npu release with these features", no_npu=True)
    if without:
        basis += f"; {without[0].basis}"
    return NpuFacts(releases, basis, mixed=bool(without))


def _declared(text: str | None) -> str | None:
    return text.strip() if isinstance(text, str) and text.strip() else None


@functools.lru_cache(maxsize=1024)
def npu_facts(torch: str | None, torch_npu: str | None) -> NpuFacts:
    """The candidate releases for a declared torch and torch_npu version (either may be None)."""
    torch, torch_npu = _declared(torch), _declared(torch_npu)
    kind = _non_npu_build(torch)
    if kind is not None:
        return _facts_for_non_npu_torch(torch or "", torch_npu, kind)
    if torch_npu is None:
        return _facts_for_torch(torch, None)
    facts = _facts_for_torch_npu(torch, torch_npu)
    return facts or _facts_for_torch(torch, torch_npu)


def _facts_for_non_npu_torch(torch: str, torch_npu: str | None, kind: str) -> NpuFacts:
    basis = f"torch {torch} is a {kind} build, which torch_npu does not run on"
    conflict = None
    if torch_npu is not None:
        conflict = f"torch_npu {torch_npu} is declared beside torch {torch}, a {kind} build torch_npu does not run on."
    return NpuFacts((), basis, conflict, no_npu=True)


def _facts_for_torch_npu(torch: str | None, torch_npu: str) -> NpuFacts | None:
    """Facts from the torch_npu version; None when it is unreadable."""
    name = parse_ascend_version(torch_npu)
    if name is not None and _looks_like_release(name):
        return _facts_for_release_name(torch, torch_npu, name)
    from packaging.version import Version

    stripped = _strip_build_tag(torch_npu)
    package = _pep440(stripped)
    if package is None:
        return None
    release = _by_package().get(Version(package.public))
    if release is None:
        return _facts_for_unknown_package(torch, torch_npu, package)
    basis = f"torch_npu {torch_npu} is release {release.release}"
    if stripped != torch_npu:
        basis = f"torch_npu {torch_npu} is a build of {release.package}, release {release.release}"
    conflicts = [_compat_conflict(release), _torch_conflict(torch, release)]
    return NpuFacts((release,), basis, " ".join(c for c in conflicts if c) or None)


def _compat_conflict(release: Release) -> str | None:
    """Where COMPATIBILITY.en.md puts the package under another release than the tag that builds it."""
    others = [name for name in _compat_releases(_pep440(release.package)) if _ascend(name) != release.release_version]
    if not others:
        return None
    text = (
        f"The compatibility table of Ascend/pytorch (COMPATIBILITY.en.md) lists torch_npu {release.package} "
        f"under release {_and_list(others)}, but tag {release.tag} builds it"
    )
    built = [r for r in _builds_for_torch(release.torch) if r.release in others]
    if built:
        text += f" ({_and_list([f'{r.tag} builds {r.package}' for r in built])})"
    return f"{text}; the tag is taken."


def _torch_conflict(torch: str | None, release: Release) -> str | None:
    base = _torch_base(torch)
    if base is None or base == release.torch:
        return None
    return f"torch_npu {release.package} is built for torch {release.torch}, but torch {torch} is declared."


def _facts_for_release_name(torch: str | None, torch_npu: str, name: AscendVersion) -> NpuFacts:
    builds = tuple(release for release in release_table() if release.release_version == name)
    if not builds:
        return NpuFacts((), f"torch_npu {torch_npu} is not a known release")
    base = _torch_base(torch)
    torches = _and_list([release.torch for release in builds])
    if base is None:
        if len(builds) == 1:
            basis = f"torch_npu release {torch_npu} is package {builds[0].package} (for torch {builds[0].torch})"
        else:
            basis = f"torch_npu release {torch_npu} has builds for torch {torches}"
        return NpuFacts(builds, basis)
    narrowed = tuple(release for release in builds if release.torch == base)
    if narrowed:
        return NpuFacts(narrowed, f"torch_npu release {torch_npu} for torch {base} is package {narrowed[0].package}")
    conflict = f"Release {torch_npu} has builds for torch {torches} only, but torch {torch} is declared."
    return NpuFacts((), f"torch_npu release {torch_npu} has no build for torch {base}", conflict)


def _facts_for_unknown_package(torch: str | None, torch_npu: str, package: Version) -> NpuFacts:
    basis = f"torch_npu {torch_npu} is not a known release (no final release tag of Ascend/pytorch builds it)"
    listed = _compat_releases(package)
    if listed:
        basis += f"; the compatibility table lists it under release {_and_list(list(listed))}"
    absence = _watchdog_absence(_torch_base(torch) or _base(package))
    if absence is not None:
        basis += f"; {absence}"
    return NpuFacts((), basis, no_npu=absence is not None)


def _facts_for_torch(torch: str | None, unreadable_npu: str | None) -> NpuFacts:
    """Facts from the torch version alone: torch_npu is not declared, or ``unreadable_npu`` is unreadable."""
    npu = "torch_npu is not" if unreadable_npu is None else f"torch_npu {unreadable_npu!r} is unreadable"
    base = _torch_base(torch)
    if base is None:
        releases = release_table()
        if torch is None and unreadable_npu is None:
            lead = "neither torch nor torch_npu is declared"
        elif torch is None:
            lead = f"{npu} and torch is not declared"
        elif unreadable_npu is None:
            lead = f"torch {torch!r} is unreadable and torch_npu is not declared"
        else:
            lead = f"torch {torch!r} and torch_npu {unreadable_npu!r} are unreadable"
        return NpuFacts(releases, f"{lead}: {_possible(releases)}")
    lead = f"torch {torch} is declared but {npu}"
    builds = _builds_for_torch(base)
    absence = _watchdog_absence(base)
    if absence is not None:
        return NpuFacts(builds, f"{lead}, and {absence}", no_npu=True)
    if builds:
        return NpuFacts(builds, f"{lead}: {_possible(builds)}")
    return NpuFacts((), f"{lead}, and {_no_build_for(base)}")


def _possible(releases: tuple[Release, ...]) -> str:
    if len(releases) == 1:
        return f"release {releases[0].release} (package {releases[0].package}) is the only one possible"
    return f"{_span(releases)} are possible"


def _no_build_for(base: str) -> str:
    from packaging.version import Version

    newest = _newest_torch()
    if Version(base) > newest:
        return f"torch {base} is newer than every torch in the release table (the newest is {newest})"
    return f"no torch_npu release in the release table is built for torch {base}"


def _watchdog_absence(base: str) -> str | None:
    """Why no torch_npu for torch ``base`` has the HCCL watchdog; None when some build may have it."""
    from packaging.version import Version

    builds = _builds_for_torch(base)
    if builds:
        if any(release.reads_hccl_async_error_handling for release in builds):
            return None
        return f"no torch_npu release for torch {base} ({_span(builds)}) reads HCCL_ASYNC_ERROR_HANDLING"
    oldest = _oldest_watchdog_torch()
    if Version(base) < oldest:
        return (
            f"no torch_npu release is built for torch {base}; only builds for torch {oldest} "
            "and later read HCCL_ASYNC_ERROR_HANDLING"
        )
    return None


# ---------------------------------------------------------------------------------------------------
# The HCCL watchdog (HCCL_ASYNC_ERROR_HANDLING)

_INT64 = (-(2**63), 2**63 - 1)


def watchdog_value(text: str) -> int:
    """The integer torch_npu reads from a value of HCCL_ASYNC_ERROR_HANDLING.

    torch_npu parses it with C ``strtol(value, nullptr, 10)``: leading white space and a sign are
    taken, the digits that follow are read, and a value without leading digits reads as 0 (so
    ``true`` turns the watchdog off). Out-of-range values saturate as strtol does.
    """
    match = re.match(r"[ \t\n\v\f\r]*([+-]?)(\d+)", text, re.ASCII)
    if match is None:
        return 0
    sign = -1 if match[1] == "-" else 1
    digits = match[2].lstrip("0")[:20] or "0"  # 20 digits are past the range already: no huge int()
    return max(_INT64[0], min(_INT64[1], sign * int(digits)))


@dataclass(frozen=True)
class WatchdogFacts:
    """What the candidate releases do with HCCL_ASYNC_ERROR_HANDLING; None where they differ or are unknown."""

    read: bool | None  # HCCL_ASYNC_ERROR_HANDLING is read at all
    default: int | None  # the value used when it is unset
    on_by_default: bool | None  # False also where it is not read: the watchdog is then off unless set
    values: tuple[int, ...] | None  # the values the start-up check accepts, when ``checked``
    checked: bool | None  # values outside ``values`` stop the process at start-up
    reads_torch_name: bool | None  # TORCH_HCCL_ASYNC_ERROR_HANDLING is read
    basis: str
    thread: bool | None = (
        None  # a watchdog thread starts at all (the 5.0.x torch 2.1.0 builds read the variable, start none)
    )
    releases: tuple[Release, ...] = field(default=(), repr=False)
    no_npu: bool = False

    def accepts(self, text: str) -> bool | None:
        """Whether ``HCCL_ASYNC_ERROR_HANDLING=text`` lets every candidate start.

        False when every candidate stops at start-up on it ("should be 0 or 1"); True when none does
        (a release that does not read the variable ignores it); None when they differ or are unknown.
        """
        if not self.releases:
            return True if self.no_npu else None
        verdicts = {_starts_with(release, text) for release in self.releases}
        return verdicts.pop() if len(verdicts) == 1 else None

    def refusing(self, text: str) -> list[str]:
        """The candidate releases whose start-up check refuses ``HCCL_ASYNC_ERROR_HANDLING=text``, oldest first."""
        return _release_names([release for release in self.releases if not _starts_with(release, text)])


def _starts_with(release: Release, text: str) -> bool:
    if not release.reads_hccl_async_error_handling or release.watchdog_values is None:
        return True
    return watchdog_value(text) in release.watchdog_values


def watchdog_facts(facts: NpuFacts) -> WatchdogFacts:
    """The watchdog behaviour shared by the candidate releases of ``facts``."""
    releases = facts.releases
    if not releases and facts.no_npu:
        return WatchdogFacts(False, None, False, None, False, False, facts.basis, False, no_npu=True)
    checked = _shared([_checks_values(release) for release in releases] + ([False] if facts.mixed else []))
    return WatchdogFacts(
        read=facts.answer("reads_hccl_async_error_handling"),
        default=facts.answer("watchdog_default"),
        on_by_default=_shared(
            [release.watchdog_default == 1 for release in releases] + ([False] if facts.mixed else [])
        ),
        values=facts.answer("watchdog_values") if checked else None,
        checked=checked,
        reads_torch_name=facts.answer("reads_torch_hccl_async_error_handling"),
        basis=facts.basis,
        thread=facts.answer("starts_watchdog_thread"),
        releases=releases,
        no_npu=facts.no_npu,
    )


def _checks_values(release: Release) -> bool:
    return release.reads_hccl_async_error_handling and release.watchdog_values is not None


def _shared(values: list[bool]) -> bool | None:
    return values[0] if values and all(value == values[0] for value in values) else None


# ---------------------------------------------------------------------------------------------------
# Features a release has, and the range the docs support


@dataclass(frozen=True)
class Support:
    """Whether a feature is there for a job's versions: ``status`` (see the module docstring) and why."""

    status: str
    reason: str


@dataclass(frozen=True)
class _Feature:
    attribute: str  # the Release field that says whether a build has it
    requirement: str  # the knowledge.json requirement with the documented range
    name: str
    has: str
    lacks: str


_FEATURES = {
    "distributed_run_module": _Feature(
        "has_distributed_run_module",
        "parallel_store",
        "the module torch_npu.distributed.run",
        "has the module torch_npu.distributed.run",
        "has no module torch_npu.distributed.run",
    ),
    "torch_npu_run": _Feature(
        "ships_torch_npu_run",
        "parallel_store",
        "torch_npu_run (Parallel Store)",
        "ships torch_npu_run",
        "does not ship torch_npu_run",
    ),
    "rank_table": _Feature(
        "reads_rank_table_file",
        "ranktable",
        "RankTable link setup",
        "reads RANK_TABLE_FILE",
        "does not read RANK_TABLE_FILE",
    ),
    "watchdog": _Feature(
        "reads_hccl_async_error_handling",
        "watchdog",
        "the HCCL watchdog",
        "reads HCCL_ASYNC_ERROR_HANDLING",
        "does not read HCCL_ASYNC_ERROR_HANDLING",
    ),
}


def _documented(feature: _Feature, release: Release) -> bool:
    """Whether the MindCluster docs support the feature with this release (strictly newer than a line)."""
    for rule in _requirement(feature.requirement)["torch_npu_newer_than"]:
        if rule["torch"] is None or _torch_matches(release.torch, rule["torch"]):
            return _line(release.release_version) > _ascend(rule["release"])
    return False


@functools.cache
def mindspeed_llm_checks() -> dict[str, Any]:
    """mindspeed_llm_checks.json: the start-up checks of MindSpeed-LLM's high-availability arguments, by
    release line (``2.3``), read from the release tags."""
    from .schemas import read_json

    return read_json("mindspeed_llm_checks.json")


@functools.cache
def mindcluster_releases() -> NpuFacts:
    """The torch_npu releases the current MindCluster release is documented to work with (its release
    notes' compatibility table): a job MindCluster runs that declares no version runs one of them, so
    advice that holds for each of them holds for it."""
    entry = _data()["mindcluster_torch_npu"]
    lines = [_ascend(f"{line}.0") for line in entry["release_lines"]]
    rows = _release_data()["releases"]
    releases = tuple(
        _release_at(at)
        for at, row in enumerate(rows)
        if any(
            (version := _ascend(row["release"])).major == line.major and version.minor == line.minor for line in lines
        )
    )
    names = ", ".join(f"{line}.x" for line in entry["release_lines"])
    basis = (
        f"no torch_npu version is declared and MindCluster runs the job: every torch_npu release MindCluster "
        f"{entry['mindcluster']} supports ({names})"
    )
    return NpuFacts(releases, basis)


def feature_support(feature: str, facts: NpuFacts) -> Support:
    """Whether ``feature`` (``torch_npu_run``, ``rank_table``, ``watchdog``) is there for ``facts``."""
    spec = _FEATURES.get(feature)
    if spec is None:
        raise ValueError(f"unknown feature {feature!r}; expected one of {', '.join(_FEATURES)}")
    status, reason = _support(spec, facts)
    if facts.conflict:
        reason = f"{reason} {facts.conflict}"
    return Support(status, reason)


def _support(spec: _Feature, facts: NpuFacts) -> tuple[str, str]:
    releases = facts.releases
    documented = _requirement(spec.requirement)["documented_range"]
    if not releases:
        if facts.no_npu:
            return "missing", f"{facts.basis}, so {spec.name} is not available."
        return "unknown", f"{facts.basis}, so it is unknown whether {spec.name} is available."
    having = [release for release in releases if getattr(release, spec.attribute)]
    single = len(releases) == 1 and not facts.mixed
    if not having:
        which = f", which {spec.lacks}" if single else f"; none of them {spec.has}"
        return "missing", f"{facts.basis}{which}, so {spec.name} cannot work{_first_with(spec, releases)}."
    if facts.mixed:
        return "unknown", f"{facts.basis}, so it is unknown whether the job has {spec.name}."
    if len(having) < len(releases):
        return "unknown", (
            f"{facts.basis}; {spec.name} is in only {len(having)} of these {len(releases)} release builds"
            f"{_first_with(spec, releases)}, so it is unknown whether the job has it."
        )
    which = f", which {spec.has}" if single else f"; every one {spec.has}"
    outside = [release for release in releases if not _documented(spec, release)]
    if not outside:
        return "available", f"{facts.basis}{which}; the MindCluster docs support {spec.name} for {documented}."
    names = _release_names(outside)
    note = "" if single else f" ({_and_list(names)} {'is' if len(names) == 1 else 'are'} not)"
    return "undocumented", (
        f"{facts.basis}{which}, but the MindCluster docs support {spec.name} only for {documented}{note}."
    )


def _first_with(spec: _Feature, releases: tuple[Release, ...]) -> str:
    """For each torch base of ``releases``, the oldest release that has the feature, as a clause."""
    bases = list(dict.fromkeys(release.torch for release in releases))
    if len(bases) > 3:  # a clause per torch base would drown the message
        return ""
    clauses = []
    for base in bases:
        having = [r for r in _builds_for_torch(base) if getattr(r, spec.attribute)]
        if having:
            first = min(having, key=lambda r: r.release_version)
            clauses.append(f"for torch {base} the first release that {spec.has} is {first.release}")
        else:
            clauses.append(f"no torch_npu release for torch {base} {spec.has}")
    return f" ({'; '.join(clauses)})"


# ---------------------------------------------------------------------------------------------------
# Older helpers on the release table (the current rules call these)


@dataclass(frozen=True)
class TorchNpuVersion:
    """A torch_npu version: a package version (``2.1.0.post10``) or a release name (``6.0.RC3``).

    ``release`` is the release of the tag that builds the package (None when no release tag does);
    ``cann`` the CANN version the compatibility table gives for that release. ``release_inferred``
    is always False: a release is never inferred from the position of a package number.
    """

    raw: str
    torch: str | None
    release: AscendVersion | None
    release_inferred: bool = False
    cann: AscendVersion | None = None
    package: Version | None = field(default=None, repr=False)


def parse_torch_npu_version(text: str) -> TorchNpuVersion | None:
    """Parse a torch_npu package version or release name; None when unreadable. Never raises."""
    if not isinstance(text, str) or not text.strip():
        return None
    return _parse_torch_npu_version(text)


@functools.lru_cache(maxsize=4096)
def _parse_torch_npu_version(text: str) -> TorchNpuVersion | None:
    release = parse_ascend_version(text)
    if release is not None and _looks_like_release(release):
        return TorchNpuVersion(text, None, release, cann=_cann_of(release))
    from packaging.version import Version

    package = _pep440(_strip_build_tag(text))
    if package is None:
        return None
    public = Version(package.public)
    build = _by_package().get(public)
    release = None if build is None else build.release_version
    return TorchNpuVersion(text, _base(public), release, False, _cann_of(release), public)


def _cann_of(release: AscendVersion | None) -> AscendVersion | None:
    cann = None if release is None else _cann_by_release().get(release)
    return None if cann is None else _ascend(cann)


def torch_npu_for_torch_mismatch(torch: str, torch_npu: str) -> str | None:
    """The torch base a torch_npu package was built for when it differs from ``torch``, else None."""
    npu = parse_torch_npu_version(torch_npu)
    base = _torch_base(torch)
    if npu is None or npu.torch is None or base is None:
        return None
    return None if npu.torch == base else npu.torch


@functools.lru_cache(maxsize=1024)
def _torch_matches(base: str, specifier: str) -> bool:
    simple = _simple_match(base, specifier)
    if simple is not None:
        return simple
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(specifier).contains(base, prereleases=True)


_SIMPLE_SPECIFIER = LazyPattern(r"(==|>=)\s*(\d+(?:\.\d+)*)")
_RELEASE_NUMBER = LazyPattern(r"\d+(?:\.\d+)*")


def _simple_match(base: str, specifier: str) -> bool | None:
    """``==X`` and ``>=X`` on plain release numbers, as PEP 440 compares them (zeros padded); None for
    anything else. The data files use only these, and a run need not import packaging for them."""
    spec = _SIMPLE_SPECIFIER.fullmatch(specifier.strip())
    if spec is None or _RELEASE_NUMBER.fullmatch(base) is None:
        return None
    have = [int(part) for part in base.split(".")]
    want = [int(part) for part in spec.group(2).split(".")]
    width = max(len(have), len(want))
    have += [0] * (width - len(have))
    want += [0] * (width - len(want))
    return have == want if spec.group(1) == "==" else have >= want


_VERDICT = {"available": True, "missing": False}


def parallel_store_support(torch: str | None, torch_npu: str | None) -> tuple[bool | None, str]:
    """Whether torch_npu_run's Parallel Store is there: True, False (it cannot work) or None, and why.

    None also when the release ships it outside the documented range (the reason says so).
    """
    support = feature_support("torch_npu_run", npu_facts(torch, torch_npu))
    return _VERDICT.get(support.status), support.reason


def ranktable_support(torch_npu: str | None) -> tuple[bool | None, str]:
    """Whether RankTable link setup is there for PyTorch with this torch_npu (as :func:`parallel_store_support`)."""
    support = feature_support("rank_table", npu_facts(None, torch_npu))
    return _VERDICT.get(support.status), support.reason


def watchdog_default(torch: str | None, torch_npu: str | None = None) -> int | None:
    """Default of HCCL_ASYNC_ERROR_HANDLING for the declared versions; None when unknown or not read.

    It follows the torch_npu release (5.0.x builds for torch 2.1.0 default to 0), so torch alone
    rarely decides it.
    """
    return watchdog_facts(npu_facts(torch, torch_npu)).default


# ---------------------------------------------------------------------------------------------------
# CANN, MindIO and MindCluster requirements


def _at_least(label: str, text: str | None, floor: AscendVersion) -> tuple[bool | None, str]:
    """Check one Ascend-named component against a minimum release; reason is a clause."""
    if text is None:
        return None, f"the {label} version is not declared"
    version = parse_ascend_version(text)
    if version is None:
        return None, f"the {label} version {text!r} is unreadable"
    if version < floor:
        return False, f"{label} {version} is older"
    return True, f"{label} {version} is recent enough"


def hccl_link_optimization(cann: str | None) -> tuple[bool | None, str]:
    """Whether CANN's native HCCL link setup optimization applies (no configuration needed)."""
    floor = _ascend(_requirement("hccl_link_optimization")["cann_at_least"])
    verdict, clause = _at_least("CANN", cann, floor)
    return verdict, f"Native HCCL link setup optimization needs CANN {floor} or later; {clause}."


def compile_mode_support(cann: str | None) -> tuple[bool | None, str]:
    """Whether the operator binary / operator compile cache optimizations are available with CANN."""
    floor = _ascend(_requirement("compile_mode")["cann_at_least"])
    verdict, clause = _at_least("CANN", cann, floor)
    return verdict, f"The operator binary and the operator compile cache need CANN {floor} or later; {clause}."


def cann_of_releases(facts: NpuFacts) -> tuple[str, ...]:
    """The CANN versions the candidate torch_npu releases are built for (the compatibility table of
    Ascend/pytorch), and for a stack without torch_npu (torch 1.5) the newest CANN its torch served;
    empty when one of them is not known."""
    found: list[str] = []
    for release in facts.releases:
        if release.cann is None:
            return ()
        found.append(release.cann)
    if facts.mixed or (facts.no_npu and not facts.releases):
        rows = _release_data()["compatibility_table"]["rows"]
        builtin = [row["cann"] for row in rows if row["torch"] == "1.5.0"]
        if not builtin:
            return ()
        found.append(max(builtin, key=_ascend))
    return tuple(dict.fromkeys(found))


def mindio_support(mindio: str | None, mindcluster: str | None) -> tuple[bool | None, str]:
    """Whether MindIO ACP async save / in-memory restore is available with these versions."""
    req = _requirement("mindio_acp")
    mindio_floor, cluster_floor = _ascend(req["mindio_at_least"]), _ascend(req["mindcluster_at_least"])
    checks = [_at_least("MindIO", mindio, mindio_floor), _at_least("MindCluster", mindcluster, cluster_floor)]
    need = f"MindIO ACP needs MindIO {mindio_floor} and MindCluster {cluster_floor} or later"
    failed = [clause for verdict, clause in checks if verdict is False]
    if failed:
        return False, f"{need}; {' and '.join(failed)}."
    unknown = [clause for verdict, clause in checks if verdict is None]
    if unknown:
        return None, f"{need}; {' and '.join(unknown)}."
    return True, f"{need}; both are recent enough."


def jit_compile_default(platform: str | None) -> bool | None:
    """Default ``jit_compile`` for a ``ring-controller.atlas`` value (ascend-910 → True), else None."""
    if not isinstance(platform, str):
        return None
    value = _data()["defaults"]["jit_compile"]["by_platform"].get(platform.strip().lower())
    return None if value is None else bool(value)


# ---------------------------------------------------------------------------------------------------
# Readability of declared versions

_EXPECTED = {
    "torch": "expected a PyTorch version such as 2.1.0 or 1.11.0",
    "torch-npu": ("expected a torch_npu package version such as 2.1.0.post10 or a torch_npu release such as 6.0.RC3"),
    "cann": "expected a CANN release such as 8.0.RC2 or 8.0.0",
    "mindcluster": "expected a MindCluster release such as 6.0.RC2 or 7.0.0",
    "mindio": "expected a MindIO release such as 6.0.RC2 or 7.0.0",
    "mindspeed-llm": "expected a MindSpeed-LLM release such as 2.3.0 or 26.1.0",
}


def version_problem(component: str, text: str) -> str | None:
    """None when ``text`` reads as a version of ``component``, else what form was expected.

    ``component`` is one of ``torch``, ``torch-npu`` (``torch_npu`` accepted), ``cann``,
    ``mindcluster``, ``mindio``, ``mindspeed-llm``; any other name raises ValueError.
    """
    key = component.strip().lower().replace("_", "-")
    if key not in _EXPECTED:
        raise ValueError(f"unknown component {component!r}; expected one of {', '.join(_EXPECTED)}")
    if key in ("torch", "mindspeed-llm"):
        readable = _pep440(text) is not None
    elif key == "torch-npu":
        readable = parse_torch_npu_version(text) is not None
    else:
        readable = parse_ascend_version(text) is not None
    return None if readable else _EXPECTED[key]
