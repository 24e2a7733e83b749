"""The torch_npu release table, and the releases a job's declared torch and torch_npu versions allow.

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
``release_table() -> tuple[Release, ...]``
    Every release, in the order of the data file. ``Release.reads_hccl_async_error_handling`` says
    whether a release has the watchdog at all; ``Release.release_version`` is the release name
    parsed (release names are ordered; package numbers are not).

Older helpers, kept for the current rules (reimplemented on the release table):
``parse_torch_npu_version``, ``torch_npu_for_torch_mismatch``, ``version_problem``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .ascend_versions import AscendVersion, parse_ascend_version, pep440
from .data import ascend, data, release_data

if TYPE_CHECKING:
    from typing import Any

    from packaging.version import Version

__all__ = [
    "NpuFacts",
    "Release",
    "TorchNpuVersion",
    "newest_release",
    "npu_facts",
    "parse_torch_npu_version",
    "release_table",
    "torch_npu_for_torch_mismatch",
    "version_problem",
]

# ---------------------------------------------------------------------------------------------------
# PEP 440 versions (torch, torch_npu packages)


def _base(version: Version) -> str:
    """The ``X.Y.Z`` base of a version, ignoring pre/post/dev/local parts (2.1.0.post8 → 2.1.0)."""
    parts = (*version.release, 0, 0)[:3]
    return ".".join(str(part) for part in parts)


def _torch_base(text: str | None) -> str | None:
    version = None if text is None else pep440(text)
    if version is None:
        return None
    if len(version.release) == 2:  # "PyTorch 1.8" in a README: the 1.8 torch_npu was built for (1.8.1)
        return _series_torch(version.release[0], version.release[1]) or _base(version)
    return _base(version)


@functools.lru_cache(maxsize=64)
def _series_torch(major: int, minor: int) -> str | None:
    """The newest torch of a ``major.minor`` series that a torch_npu build (or a compatibility row) is for."""
    from packaging.version import Version

    rows = release_data()["compatibility_table"]["rows"]
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
    version = None if torch is None else pep440(torch)
    if version is None or version.local is None:
        return None
    for build in data()["torch_builds"]["without_npu"]:
        if re.match(rf"{re.escape(build['prefix'])}(\d|\.|$)", version.local):
            return build["kind"]
    return None


# ---------------------------------------------------------------------------------------------------
# The release table


@dataclass(eq=False)
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
        return ascend(self.release)


@functools.cache
def release_table() -> tuple[Release, ...]:
    """Every final torch_npu release build, in the order of the data file."""
    return tuple(release_at(at) for at in range(len(release_data()["releases"])))


@functools.cache
def release_at(at: int) -> Release:
    """Row ``at`` of the release table, built once: a job that declares no version needs only the
    rows of the release lines MindCluster supports, a fifth of the table."""
    return _release_from_row(release_data()["releases"][at])


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
        cann=_cann_by_release().get(ascend(row["release"])),
        source=row["source"],
        note=row.get("note"),
    )


@functools.cache
def _cann_by_release() -> dict[AscendVersion, str]:
    return {ascend(row["release"]): row["cann"] for row in release_data()["compatibility_table"]["rows"]}


@functools.cache
def _by_package() -> dict[Version, Release]:
    from packaging.version import Version

    return {Version(release.package): release for release in release_table()}


@functools.lru_cache(maxsize=256)
def builds_for_torch(base: str) -> tuple[Release, ...]:
    return tuple(release for release in release_table() if release.torch == base)


@functools.lru_cache(maxsize=256)
def _compat_releases(package: Version) -> tuple[str, ...]:
    """The releases the compatibility table lists ``package`` under."""
    from packaging.version import Version

    rows = release_data()["compatibility_table"]["rows"]
    return tuple(row["release"] for row in rows if pep440(row["package"]) == Version(package.public))


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


def release_names(releases: tuple[Release, ...] | list[Release]) -> list[str]:
    """Distinct release names, oldest first."""
    names: dict[AscendVersion, str] = {}
    for release in releases:
        names.setdefault(release.release_version, release.release)
    return [names[key] for key in sorted(names)]


def _span(releases: tuple[Release, ...] | list[Release]) -> str:
    names = release_names(releases)
    return f"release {names[0]}" if len(names) == 1 else f"releases {names[0]} to {names[-1]}"


def and_list(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


# ---------------------------------------------------------------------------------------------------
# Looking up declared versions


@dataclass
class NpuFacts:
    """The torch_npu releases a job's declared versions allow, and how they were found."""

    releases: tuple[Release, ...]
    basis: str
    conflict: str | None = None
    no_npu: bool = False
    # some of the versions the job may run have no torch_npu at all (torch 1.5, a CUDA build) while
    # others have the releases above: each answer must hold for those too
    mixed: bool = False
    # no version is declared: the releases are those the job's platform documents, not the job's own
    # (an older image may run any release), so advice may rest on them but never a safe fix
    assumed: bool = False

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
    package = pep440(stripped)
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
    others = [name for name in _compat_releases(pep440(release.package)) if ascend(name) != release.release_version]
    if not others:
        return None
    text = (
        f"The compatibility table of Ascend/pytorch (COMPATIBILITY.en.md) lists torch_npu {release.package} "
        f"under release {and_list(others)}, but tag {release.tag} builds it"
    )
    built = [r for r in builds_for_torch(release.torch) if r.release in others]
    if built:
        text += f" ({and_list([f'{r.tag} builds {r.package}' for r in built])})"
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
    torches = and_list([release.torch for release in builds])
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
        basis += f"; the compatibility table lists it under release {and_list(list(listed))}"
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
    builds = builds_for_torch(base)
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

    builds = builds_for_torch(base)
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
# Older helpers on the release table (the current rules call these)


@dataclass
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

    package = pep440(_strip_build_tag(text))
    if package is None:
        return None
    public = Version(package.public)
    build = _by_package().get(public)
    release = None if build is None else build.release_version
    return TorchNpuVersion(text, _base(public), release, False, _cann_of(release), public)


def _cann_of(release: AscendVersion | None) -> AscendVersion | None:
    cann = None if release is None else _cann_by_release().get(release)
    return None if cann is None else ascend(cann)


def torch_npu_for_torch_mismatch(torch: str, torch_npu: str) -> str | None:
    """The torch base a torch_npu package was built for when it differs from ``torch``, else None."""
    npu = parse_torch_npu_version(torch_npu)
    base = _torch_base(torch)
    if npu is None or npu.torch is None or base is None:
        return None
    return None if npu.torch == base else npu.torch


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
        readable = pep440(text) is not None
    elif key == "torch-npu":
        readable = parse_torch_npu_version(text) is not None
    else:
        readable = parse_ascend_version(text) is not None
    return None if readable else _EXPECTED[key]
