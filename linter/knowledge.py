"""Version knowledge: Ascend release names, the torch_npu release table and documented requirements.

The facts live in ``recovery_lint.schemas/knowledge.json`` (each with its source); this module only
parses version strings and answers questions against that data. The JSON is read once, on first use,
and ``packaging`` is imported lazily so that importing this module stays cheap.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from packaging.version import Version

__all__ = [
    "AscendVersion",
    "TorchNpuVersion",
    "compile_mode_support",
    "documented_default",
    "hccl_link_optimization",
    "jit_compile_default",
    "knowledge_source",
    "mindio_support",
    "parallel_store_support",
    "parse_ascend_version",
    "parse_torch_npu_version",
    "ranktable_support",
    "torch_npu_for_torch_mismatch",
    "version_problem",
    "watchdog_default",
]

# ---------------------------------------------------------------------------------------------------
# Ascend release names (CANN, torch_npu release lines, MindCluster, MindIO)

# Digit runs are capped so int() never meets Python's limit on huge digit strings.
_N = r"(\d{1,9})"
_PRE = r"(?:\.?(alpha|beta)(\d{1,9}))?"
_DOTTED = re.compile(rf"v?{_N}\.{_N}\.(?:rc{_N}|{_N})(?:\.{_N})?{_PRE}", re.ASCII | re.IGNORECASE)
# Community builds drop the dots (80RC3alpha003, 900beta2); only single-digit major/minor are
# unambiguous, and an RC or build tag is required so plain numbers such as "800" are not taken.
_COMPACT = re.compile(r"(\d)(\d)(?:rc(\d{1,9})|(\d))(?:(alpha|beta)(\d{1,9}))?", re.ASCII | re.IGNORECASE)
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
# Data file


@functools.cache
def _data() -> dict[str, Any]:
    import json

    from .schemas import read_text

    return json.loads(read_text("knowledge.json"))


def _ascend(text: str) -> AscendVersion:
    """Parse a release name from the data file, where a bad spelling is a packaging bug."""
    version = parse_ascend_version(text)
    if version is None:
        raise ValueError(f"knowledge.json holds an unreadable release name {text!r}")
    return version


@dataclass(frozen=True)
class _Row:
    package: Version
    torch: str
    release: AscendVersion
    cann: AscendVersion


@functools.cache
def _rows() -> tuple[_Row, ...]:
    from packaging.version import Version

    return tuple(
        _Row(Version(row["package"]), row["torch"], _ascend(row["release"]), _ascend(row["cann"]))
        for row in _data()["torch_npu_table"]["rows"]
    )


@functools.cache
def _release_lines() -> tuple[AscendVersion, ...]:
    return tuple(_ascend(line) for line in _data()["torch_npu_release_lines"]["lines"])


@functools.cache
def _cann_by_release() -> dict[AscendVersion, AscendVersion]:
    return {row.release: row.cann for row in _rows()}


def _requirement(name: str) -> dict[str, Any]:
    return _data()["requirements"][name]


def knowledge_source(name: str) -> str | None:
    """The source reference of a requirement (``parallel_store`` …) or documented default, if known."""
    entry = _data()["requirements"].get(name) or _data()["defaults"].get(name)
    return None if entry is None else entry["source"]


def documented_default(name: str) -> int | float | str | bool | None:
    """The documented scalar default of ``name`` (e.g. ``HCCL_EXEC_TIMEOUT`` → 1836).

    None when unknown or when the default depends on context (use :func:`watchdog_default` and
    :func:`jit_compile_default` for those).
    """
    entry = _data()["defaults"].get(name)
    return None if entry is None else entry.get("value")


# ---------------------------------------------------------------------------------------------------
# torch and torch_npu package versions


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
    return None if version is None else _base(version)


@dataclass(frozen=True)
class TorchNpuVersion:
    """A torch_npu version: a package version (``2.1.0.post10``) or a release name (``6.0.RC3``).

    ``release`` is the torch_npu release line from the table; when the package is newer than every
    known build for its torch base it is the newest known line and ``release_inferred`` is True
    (read it as "at least"). ``cann`` is the CANN version that release line was published with.
    """

    raw: str
    torch: str | None
    release: AscendVersion | None
    release_inferred: bool = False
    cann: AscendVersion | None = None
    package: Version | None = field(default=None, repr=False)


def _strip_build_tag(text: str) -> str:
    # Source builds append +git<sha7>, or .git<sha7> for x86 cxx11-ABI builds, which is not PEP 440.
    public, _, _local = text.strip().partition("+")
    return re.sub(r"\.git[0-9a-f]{4,40}$", "", public, flags=re.IGNORECASE)


def _looks_like_release(version: AscendVersion) -> bool:
    # torch_npu package versions start with the torch version (1.x, 2.x); release lines are 3.0 onwards.
    return version.is_rc or version.pre is not None or version.major >= 3


def parse_torch_npu_version(text: str) -> TorchNpuVersion | None:
    """Parse a torch_npu package version or release name; None when unreadable. Never raises."""
    if not isinstance(text, str) or not text.strip():
        return None
    return _parse_torch_npu_version(text)


@functools.lru_cache(maxsize=4096)
def _parse_torch_npu_version(text: str) -> TorchNpuVersion | None:
    release = parse_ascend_version(text)
    if release is not None and _looks_like_release(release):
        return TorchNpuVersion(text, None, release, cann=_cann_by_release().get(release))
    from packaging.version import Version

    package = _pep440(_strip_build_tag(text))
    if package is None:
        return None
    public = Version(package.public)
    release, inferred = _release_for_package(public)
    cann = None if release is None else _cann_by_release().get(release)
    return TorchNpuVersion(text, _base(public), release, inferred, cann, public)


def _rows_for_base(base: str) -> list[_Row]:
    return list(_sorted_rows_for_base(base))


@functools.lru_cache(maxsize=256)
def _sorted_rows_for_base(base: str) -> tuple[_Row, ...]:
    return tuple(sorted((row for row in _rows() if row.torch == base), key=lambda row: row.package))


@functools.cache
def _newest_torch_base() -> Version:
    from packaging.version import Version

    return max(Version(row.torch) for row in _rows())


@functools.lru_cache(maxsize=1024)
def _release_for_package(package: Version) -> tuple[AscendVersion | None, bool]:
    """Exact table release, or (newest line for that base, True) when the package is newer than all."""
    from packaging.version import Version

    base = _base(package)
    rows = _rows_for_base(base)
    for row in rows:
        if row.package == package:
            return row.release, False
    if rows and package > rows[-1].package:
        return max(row.release for row in rows), True
    if not rows and Version(base) > _newest_torch_base():
        # A torch base newer than any in the table can only ship with the newest line or a later one.
        return _release_lines()[-1], True
    return None, False


def _release_bounds(npu: TorchNpuVersion) -> tuple[AscendVersion | None, AscendVersion | None]:
    """Inclusive (lowest, highest) release line the torch_npu version can belong to; None = open."""
    if npu.release is not None:
        return npu.release, None if npu.release_inferred else npu.release
    if npu.package is None:
        return None, None
    rows = _rows_for_base(npu.torch or "")
    older = [row.release for row in rows if row.package < npu.package]
    newer = [row.release for row in rows if row.package > npu.package]
    high = min(newer) if newer else None
    if older:
        return max(older), high
    # Older than every known build of its base: published before the first line that has one,
    # so after the line preceding it.
    lines = _release_lines()
    if high is not None and high in lines and lines.index(high) > 0:
        return lines[lines.index(high) - 1], high
    return None, high


def _newer_than(npu: TorchNpuVersion, floor: AscendVersion) -> bool | None:
    low, high = _release_bounds(npu)
    if low is not None and low > floor:
        return True
    if high is not None and high <= floor:
        return False
    return None


def _describe(npu: TorchNpuVersion) -> str:
    """How the torch_npu version was placed on a release line, for reason sentences."""
    if npu.torch is None:
        return f"torch_npu is release {npu.release}"
    if npu.release is not None and npu.release_inferred:
        return (
            f"torch_npu {npu.raw} is newer than every known torch {npu.torch} build, "
            f"so it is assumed to be release {npu.release} or later"
        )
    if npu.release is not None:
        return f"torch_npu {npu.raw} is release {npu.release}"
    low, high = _release_bounds(npu)
    unknown = f"torch_npu {npu.raw} is not in the release table"
    if low is None and high is None:
        return unknown
    if low is None:
        return f"{unknown} and is assumed to be release {high} or earlier"
    if high is None:
        return f"{unknown} and is assumed to be release {low} or later"
    return f"{unknown} and is assumed to be from release {low} to {high}"


def torch_npu_for_torch_mismatch(torch: str, torch_npu: str) -> str | None:
    """The torch base a torch_npu package was built for when it differs from ``torch``, else None."""
    npu = parse_torch_npu_version(torch_npu)
    base = _torch_base(torch)
    if npu is None or npu.torch is None or base is None:
        return None
    return None if npu.torch == base else npu.torch


# ---------------------------------------------------------------------------------------------------
# Requirements


@functools.lru_cache(maxsize=1024)
def _torch_matches(base: str, specifier: str) -> bool:
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(specifier).contains(base, prereleases=True)


def _parallel_store_floor(base: str) -> AscendVersion | None:
    """The release torch_npu must be newer than for Parallel Store with torch ``base``; None = unsupported."""
    for rule in _requirement("parallel_store")["torch_npu_newer_than"]:
        if _torch_matches(base, rule["torch"]):
            return _ascend(rule["release"])
    return None


def parallel_store_support(torch: str | None, torch_npu: str | None) -> tuple[bool | None, str]:
    """Whether torch_npu_run's Parallel Store is available: (True/False/None for unknown, reason)."""
    npu = None if torch_npu is None else parse_torch_npu_version(torch_npu)
    base = _torch_base(torch)
    assumed = ""
    if base is None and torch is None and npu is not None and npu.torch is not None:
        # Without a declared torch, the torch_npu package names the torch it was built for.
        base, assumed = npu.torch, f" (assumed from torch_npu {npu.raw})"
    need = "Parallel Store (torch_npu_run) needs torch 1.11.0 or >= 2.1.0"
    if base is None:
        what = "not declared" if torch is None else f"unreadable ({torch!r})"
        return None, f"{need}, and the torch version is {what}."
    floor = _parallel_store_floor(base)
    if floor is None:
        return False, f"{need}; torch {base} is not supported."
    need = f"Parallel Store (torch_npu_run) with torch {base}{assumed} needs a torch_npu release newer than"
    need += f" {floor}"
    return _release_verdict(need, npu, torch_npu, floor)


def _release_verdict(
    need: str, npu: TorchNpuVersion | None, raw: str | None, floor: AscendVersion
) -> tuple[bool | None, str]:
    if npu is None:
        what = "not declared" if raw is None else f"unreadable ({raw!r})"
        return None, f"{need}, and the torch_npu version is {what}."
    verdict = _newer_than(npu, floor)
    tail = {True: "", False: ", which is not newer", None: ", so it cannot be told"}[verdict]
    return verdict, f"{need}; {_describe(npu)}{tail}."


def ranktable_support(torch_npu: str | None) -> tuple[bool | None, str]:
    """Whether RankTable link setup is available for PyTorch with this torch_npu."""
    floor = _ascend(_requirement("ranktable")["torch_npu_newer_than"])
    need = f"RankTable link setup needs a torch_npu release newer than {floor}"
    npu = None if torch_npu is None else parse_torch_npu_version(torch_npu)
    return _release_verdict(need, npu, torch_npu, floor)


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


# ---------------------------------------------------------------------------------------------------
# Documented defaults


def watchdog_default(torch: str | None) -> int | None:
    """Default of HCCL_ASYNC_ERROR_HANDLING for a torch version: 0 (1.11.x), 1 (>= 2.1.0), else None."""
    base = _torch_base(torch)
    if base is None:
        return None
    for rule in _data()["defaults"]["HCCL_ASYNC_ERROR_HANDLING"]["by_torch"]:
        if _torch_matches(base, rule["torch"]):
            return int(rule["value"])
    return None


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
}


def version_problem(component: str, text: str) -> str | None:
    """None when ``text`` reads as a version of ``component``, else what form was expected.

    ``component`` is one of ``torch``, ``torch-npu`` (``torch_npu`` accepted), ``cann``,
    ``mindcluster``, ``mindio``; any other name raises ValueError.
    """
    key = component.strip().lower().replace("_", "-")
    if key not in _EXPECTED:
        raise ValueError(f"unknown component {component!r}; expected one of {', '.join(_EXPECTED)}")
    if key == "torch":
        readable = _pep440(text) is not None
    elif key == "torch-npu":
        readable = parse_torch_npu_version(text) is not None
    else:
        readable = parse_ascend_version(text) is not None
    return None if readable else _EXPECTED[key]
