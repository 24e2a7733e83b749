"""Parsing version strings: Ascend release names (``6.0.RC3``) and PEP 440 versions (torch, torch_npu).

Nothing here reads the data files, and ``packaging`` is imported lazily, so importing this module
stays cheap.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..lazyre import LazyPattern

if TYPE_CHECKING:
    from packaging.version import Version

__all__ = [
    "AscendVersion",
    "parse_ascend_version",
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
@dataclass(eq=False)
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
# PEP 440 versions (torch, torch_npu packages)


def pep440(text: str) -> Version | None:
    return _pep440_cached(text) if isinstance(text, str) else None


@functools.lru_cache(maxsize=4096)
def _pep440_cached(text: str) -> Version | None:
    from packaging.version import InvalidVersion, Version

    try:
        return Version(text.strip())
    except (InvalidVersion, ValueError):  # ValueError: a digit run past Python's int() limit
        return None


@functools.lru_cache(maxsize=1024)
def torch_matches(base: str, specifier: str) -> bool:
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
