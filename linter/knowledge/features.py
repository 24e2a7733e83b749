"""Feature support: whether a job's versions have a feature, and the range the MindCluster docs support.

``feature_support(feature: str, facts: NpuFacts) -> Support``
    ``feature`` is ``"torch_npu_run"``, ``"rank_table"`` or ``"watchdog"``. ``Support.status``:
    ``"available"`` (every candidate has it and the docs support it), ``"undocumented"`` (every
    candidate has it, the docs support it only from a later release: a note, not an error),
    ``"missing"`` (no candidate has it: it cannot work), ``"unknown"``. ``Support.reason``: a sentence
    naming the release(s), the documented range and any conflict.

Older helpers, kept for the current rules (reimplemented on the release table):
``parallel_store_support``, ``ranktable_support`` (True/False/None with a reason; a release that has
the feature outside the documented range gives None), ``hccl_link_optimization``,
``compile_mode_support``, ``mindio_support``, ``jit_compile_default``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .ascend_versions import AscendVersion, parse_ascend_version, torch_matches
from .data import ascend, data, release_data, requirement
from .releases import NpuFacts, Release, and_list, builds_for_torch, npu_facts, release_at, release_names

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "Support",
    "compile_mode_support",
    "feature_support",
    "hccl_link_optimization",
    "jit_compile_default",
    "mindio_support",
    "parallel_store_support",
    "ranktable_support",
]

# ---------------------------------------------------------------------------------------------------
# Features a release has, and the range the docs support


@dataclass(eq=False)
class Support:
    """Whether a feature is there for a job's versions: ``status`` (see the module docstring) and why."""

    status: str
    reason: str


@dataclass(eq=False)
class _Feature:
    """A release feature: the Release field that says whether a build has it and its documented range."""

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


def _line(version: AscendVersion) -> AscendVersion:
    """The release line of a maintenance release (6.0.rc1.1 → 6.0.rc1), the granularity of the docs."""
    return AscendVersion(version.major, version.minor, version.rc, version.micro, None, version.pre)


def _documented(feature: _Feature, release: Release) -> bool:
    """Whether the MindCluster docs support the feature with this release (strictly newer than a line)."""
    for rule in requirement(feature.requirement)["torch_npu_newer_than"]:
        if rule["torch"] is None or torch_matches(release.torch, rule["torch"]):
            return _line(release.release_version) > ascend(rule["release"])
    return False


@functools.cache
def mindspeed_llm_checks() -> dict[str, Any]:
    """mindspeed_llm_checks.json: the start-up checks of MindSpeed-LLM's high-availability arguments, by
    release line (``2.3``), read from the release tags."""
    from ..schemas import read_json

    return read_json("mindspeed_llm_checks.json")


@functools.cache
def mindcluster_releases() -> NpuFacts:
    """The torch_npu releases the current MindCluster release is documented to work with (its release
    notes' compatibility table): a job MindCluster runs that declares no version runs one of them, so
    advice that holds for each of them holds for it."""
    entry = data()["mindcluster_torch_npu"]
    lines = [ascend(f"{line}.0") for line in entry["release_lines"]]
    rows = release_data()["releases"]
    releases = tuple(
        release_at(at)
        for at, row in enumerate(rows)
        if any(
            (version := ascend(row["release"])).major == line.major and version.minor == line.minor for line in lines
        )
    )
    names = ", ".join(f"{line}.x" for line in entry["release_lines"])
    basis = (
        f"no torch_npu version is declared and MindCluster runs the job: every torch_npu release MindCluster "
        f"{entry['mindcluster']} supports ({names})"
    )
    return NpuFacts(releases, basis, assumed=True)


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
    documented = requirement(spec.requirement)["documented_range"]
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
    names = release_names(outside)
    note = "" if single else f" ({and_list(names)} {'is' if len(names) == 1 else 'are'} not)"
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
        having = [r for r in builds_for_torch(base) if getattr(r, spec.attribute)]
        if having:
            first = min(having, key=lambda r: r.release_version)
            clauses.append(f"for torch {base} the first release that {spec.has} is {first.release}")
        else:
            clauses.append(f"no torch_npu release for torch {base} {spec.has}")
    return f" ({'; '.join(clauses)})"


# ---------------------------------------------------------------------------------------------------
# Older helpers on the release table (the current rules call these)


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
    floor = ascend(requirement("hccl_link_optimization")["cann_at_least"])
    verdict, clause = _at_least("CANN", cann, floor)
    return verdict, f"Native HCCL link setup optimization needs CANN {floor} or later; {clause}."


def compile_mode_support(cann: str | None) -> tuple[bool | None, str]:
    """Whether the operator binary / operator compile cache optimizations are available with CANN."""
    floor = ascend(requirement("compile_mode")["cann_at_least"])
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
        rows = release_data()["compatibility_table"]["rows"]
        builtin = [row["cann"] for row in rows if row["torch"] == "1.5.0"]
        if not builtin:
            return ()
        found.append(max(builtin, key=ascend))
    return tuple(dict.fromkeys(found))


def mindio_support(mindio: str | None, mindcluster: str | None) -> tuple[bool | None, str]:
    """Whether MindIO ACP async save / in-memory restore is available with these versions."""
    req = requirement("mindio_acp")
    mindio_floor, cluster_floor = ascend(req["mindio_at_least"]), ascend(req["mindcluster_at_least"])
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
    value = data()["defaults"]["jit_compile"]["by_platform"].get(platform.strip().lower())
    return None if value is None else bool(value)
