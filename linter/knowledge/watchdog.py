"""The HCCL watchdog: what the candidate torch_npu releases do with ``HCCL_ASYNC_ERROR_HANDLING``.

``watchdog_facts(facts: NpuFacts) -> WatchdogFacts``
    ``read``, ``default``, ``on_by_default``, ``values``, ``checked``, ``reads_torch_name`` and
    ``accepts(text)``: what the candidates do with ``HCCL_ASYNC_ERROR_HANDLING`` (None where they
    differ). ``watchdog_value(text)`` is the integer
    torch_npu reads from a value (C ``strtol``: ``"true"`` reads as 0).

Older helper, kept for the current rules (reimplemented on the release table):
``watchdog_default(torch, torch_npu=None)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .releases import NpuFacts, Release, npu_facts, release_names

__all__ = [
    "WatchdogFacts",
    "watchdog_default",
    "watchdog_facts",
    "watchdog_value",
]

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


@dataclass
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
        return release_names([release for release in self.releases if not _starts_with(release, text)])


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
# Older helpers on the release table (the current rules call these)


def watchdog_default(torch: str | None, torch_npu: str | None = None) -> int | None:
    """Default of HCCL_ASYNC_ERROR_HANDLING for the declared versions; None when unknown or not read.

    It follows the torch_npu release (5.0.x builds for torch 2.1.0 default to 0), so torch alone
    rarely decides it.
    """
    return watchdog_facts(npu_facts(torch, torch_npu)).default
