"""Tests for recovery_lint.knowledge: Ascend release names, the torch_npu release table, requirements."""

from __future__ import annotations

import csv
import itertools
import json
import re
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.version import Version

from recovery_lint.knowledge import data as knowledge_data
from recovery_lint.knowledge import releases as knowledge_releases
from recovery_lint.knowledge.ascend_versions import AscendVersion, parse_ascend_version
from recovery_lint.knowledge.data import documented_default, knowledge_source
from recovery_lint.knowledge.features import (
    compile_mode_support,
    feature_support,
    hccl_link_optimization,
    jit_compile_default,
    mindio_support,
    parallel_store_support,
    ranktable_support,
)
from recovery_lint.knowledge.releases import (
    NpuFacts,
    Release,
    npu_facts,
    parse_torch_npu_version,
    release_table,
    torch_npu_for_torch_mismatch,
    version_problem,
)
from recovery_lint.knowledge.watchdog import watchdog_default, watchdog_facts, watchdog_value


def v(text: str) -> AscendVersion:
    parsed = parse_ascend_version(text)
    assert parsed is not None, text
    return parsed


# --- Ascend release names ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("6.0.RC3", "6.0.RC3"),
        ("6.0.rc3", "6.0.RC3"),
        ("6.0.Rc3", "6.0.RC3"),
        ("8.0.RC2.alpha002", "8.0.RC2.alpha002"),
        ("8.0.rc2.ALPHA002", "8.0.RC2.alpha002"),
        ("6.0.0", "6.0.0"),
        ("6.3.RC3.1", "6.3.RC3.1"),
        ("26.1.0", "26.1.0"),
        ("80RC3alpha003", "8.0.RC3.alpha003"),
        ("900beta2", "9.0.0.beta2"),
        ("81RC1", "8.1.RC1"),
        ("  7.2.RC1\n", "7.2.RC1"),
        ("v7.3.0", "7.3.0"),
    ],
)
def test_ascend_spellings(text: str, canonical: str) -> None:
    assert str(v(text)) == canonical


def test_rc_case_does_not_matter() -> None:
    assert v("6.0.rc3") == v("6.0.RC3")
    assert hash(v("6.0.rc3")) == hash(v("6.0.RC3"))


@pytest.mark.parametrize(
    "text",
    ["", "garbage", "8.0", "8", "800", "8.0.RC", "8.0.RCx", "8.0.RC2.gamma1", "8.0.0-1", "٨.٠.٠", "1" * 5000],
)
def test_unreadable_ascend_names(text: str) -> None:
    assert parse_ascend_version(text) is None


def test_non_string_is_not_an_ascend_name() -> None:
    assert parse_ascend_version(None) is None  # type: ignore[arg-type]
    assert parse_ascend_version(800) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "chain",
    [
        ["8.0.RC1", "8.0.RC2.alpha002", "8.0.RC2", "8.0.RC3.alpha003", "8.0.RC3", "8.0.0", "8.1.RC1"],
        ["6.3.RC1", "6.3.RC2", "6.3.RC3", "6.3.RC3.1", "6.3.0", "6.3.1"],
        ["9.0.0.alpha001", "9.0.0.beta1", "900beta2", "9.0.0", "9.1.0", "26.0.0"],
        ["5.0.rc2", "5.0.rc2.1", "5.0.rc2.2", "5.0.rc3", "5.0.0", "6.0.rc1"],
        ["6.0.RC1", "6.0.RC2", "6.0.RC3", "6.0.0", "7.0.0", "7.2.RC1", "7.2.0", "7.10.0"],
    ],
)
def test_ordering_chains(chain: list[str]) -> None:
    versions = [v(text) for text in chain]
    assert all(a < b for a, b in itertools.pairwise(versions))
    assert sorted(reversed(versions)) == versions


def test_ascend_version_rejects_inconsistent_fields() -> None:
    with pytest.raises(ValueError):
        AscendVersion(8, 0)
    with pytest.raises(ValueError):
        AscendVersion(8, 0, rc=1, micro=0)
    with pytest.raises(ValueError):
        AscendVersion(8, 0, micro=0, pre="gamma1")


@given(st.text())
def test_parse_never_raises_and_round_trips(text: str) -> None:
    parsed = parse_ascend_version(text)
    if parsed is not None:
        assert parse_ascend_version(str(parsed)) == parsed


_NUM = st.integers(min_value=0, max_value=99).map(str)
_WELL_FORMED = st.builds(
    lambda major, minor, third, patch, pre: f"{major}.{minor}.{third}{patch}{pre}",
    _NUM,
    _NUM,
    st.one_of(_NUM, _NUM.map(lambda n: f"rc{n}"), _NUM.map(lambda n: f"RC{n}")),
    st.one_of(st.just(""), _NUM.map(lambda n: f".{n}")),
    st.one_of(
        st.just(""),
        st.sampled_from(["alpha", "beta", ".alpha", ".beta"]).flatmap(lambda k: _NUM.map(k.__add__)),
    ),
)


@given(_WELL_FORMED)
def test_well_formed_names_parse_and_round_trip(text: str) -> None:
    parsed = parse_ascend_version(text)
    assert parsed is not None
    assert parse_ascend_version(str(parsed)) == parsed
    assert str(parse_ascend_version(str(parsed))) == str(parsed)


# --- data files ----------------------------------------------------------------------------------------


def _json(name: str = "knowledge.json") -> dict:
    return json.loads(files("recovery_lint.schemas").joinpath(name).read_text(encoding="utf-8"))


def _release_rows() -> list[dict]:
    return _json("torch_npu_releases.json")["releases"]


def test_every_table_and_entry_names_its_source() -> None:
    data = _json()
    assert all(entry["source"] for entry in data["requirements"].values())
    assert all(entry["source"] for entry in data["defaults"].values())
    assert data["torch_builds"]["source"]
    releases = _json("torch_npu_releases.json")
    assert releases["source"] and releases["compatibility_table"]["source"] and releases["left_out_tags"]["source"]
    assert all(row["source"].startswith(f"Ascend/pytorch@{row['tag']}:") for row in releases["releases"])
    assert all(re.fullmatch(r"[0-9a-f]{40}", row["commit"]) for row in releases["releases"])
    assert all(group["reason"] for group in releases["left_out_tags"]["groups"])


def test_every_row_is_named_by_its_tag() -> None:
    for row in _release_rows():
        assert row["tag"].lower() == f"v{row['release']}-pytorch{row['torch']}", row
        assert v(row["release"]) is not None
        assert row["package"].startswith(row["torch"].rsplit(".0", 1)[0]), row


def test_packages_are_unique_so_a_lookup_finds_one_release() -> None:
    packages = [Version(row["package"]) for row in _release_rows()]
    assert len(set(packages)) == len(packages)


def test_compatibility_table_names_parse_and_each_release_has_one_cann() -> None:
    cann_of: dict[AscendVersion, AscendVersion] = {}
    for row in _json("torch_npu_releases.json")["compatibility_table"]["rows"]:
        assert Version(row["package"])
        assert row["branch"] == f"v{row['torch']}-{row['release']}"
        assert cann_of.setdefault(v(row["release"]), v(row["cann"])) == v(row["cann"]), row


def test_where_the_compatibility_table_disagrees_with_a_tag_the_row_says_so() -> None:
    compat = _json("torch_npu_releases.json")["compatibility_table"]["rows"]
    listed = {Version(row["package"]): v(row["release"]) for row in compat}
    disagreeing = [
        row for row in _release_rows() if listed.get(Version(row["package"]), v(row["release"])) != v(row["release"])
    ]
    assert [row["package"] for row in disagreeing] == ["2.1.0.post4"]
    assert all("COMPATIBILITY.en.md" in row["note"] for row in disagreeing)


def test_data_is_read_once() -> None:
    knowledge_data.data.cache_clear()
    knowledge_data.release_data.cache_clear()
    knowledge_releases.release_table.cache_clear()
    knowledge_releases._by_package.cache_clear()
    knowledge_releases.npu_facts.cache_clear()
    documented_default("HCCL_EXEC_TIMEOUT")
    npu_facts("2.1.0", "2.1.0.post8")
    npu_facts("2.3.1", "2.3.1.post2")
    assert knowledge_data.data.cache_info().misses == 1
    assert knowledge_data.release_data.cache_info().misses == 1


def test_importing_the_modules_reads_nothing_and_skips_packaging() -> None:
    code = (
        "import sys; from recovery_lint.knowledge import ascend_versions, data, features, releases, watchdog; "
        "print('packaging' in sys.modules, data.release_data.cache_info().misses, data.data.cache_info().misses)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "0", "0"]


def _shared_tsv() -> Path | None:
    for folder in Path(__file__).resolve().parents[1].parents:
        tsv = folder / "shared" / "releases" / "torch_npu-releases.tsv"
        if tsv.is_file():
            return tsv
    return None


TSV = _shared_tsv()
_NOT_IN_TSV = "not in torch_npu-releases.tsv"


def _tsv_row(row: dict) -> dict[str, str]:
    """A data row written as the shared TSV writes it."""
    values = row["watchdog_values"]

    def yes(flag: bool) -> str:
        return "yes" if flag else "no"

    return {
        "tag": row["tag"],
        "release": row["release"],
        "torch": row["torch"],
        "torch_npu_version": row["package"],
        "watchdog_default": "none" if row["watchdog_default"] is None else str(row["watchdog_default"]),
        "watchdog_values_accepted": "-"
        if values == []
        else "any integer (no check)"
        if values is None
        else ",".join(map(str, values)),
        "starts_watchdog_thread": yes(row["starts_watchdog_thread"]),
        "reads_TORCH_HCCL_ASYNC_ERROR_HANDLING": yes(row["reads_torch_hccl_async_error_handling"]),
        "ships_torch_npu_run": yes(row["ships_torch_npu_run"]),
        "reads_RANK_TABLE_FILE": yes(row["reads_rank_table_file"]),
        "reads_RESUME_MODE_ENABLE": yes(row["reads_resume_mode_enable"]),
    }


@pytest.mark.skipif(TSV is None, reason="../shared/releases/torch_npu-releases.tsv is not present")
def test_data_file_holds_the_shared_release_table_row_for_row() -> None:
    assert TSV is not None
    with TSV.open(encoding="utf-8", newline="") as handle:
        shared = list(csv.DictReader(handle, delimiter="\t"))
    ours = [_tsv_row(row) for row in _release_rows() if _NOT_IN_TSV not in row["source"]]
    assert ours == shared
    added = [row["tag"] for row in _release_rows() if _NOT_IN_TSV in row["source"]]
    assert added == ["V7.2.0.1-pytorch2.1.0"]


# --- every release, looked up by its exact package -------------------------------------------------------


@pytest.mark.parametrize("row", _release_rows(), ids=lambda row: row["tag"])
def test_every_release_is_found_by_its_package(row: dict) -> None:
    for torch in (row["torch"], None):
        facts = npu_facts(torch, row["package"])
        assert [release.tag for release in facts.releases] == [row["tag"]]
        assert facts.basis == f"torch_npu {row['package']} is release {row['release']}"
        assert not facts.no_npu
        watchdog = watchdog_facts(facts)
        assert watchdog.default == row["watchdog_default"]
        assert watchdog.read is (row["watchdog_default"] is not None)
        assert watchdog.on_by_default is (row["watchdog_default"] == 1)
        values = row["watchdog_values"]
        assert facts.answer("watchdog_values") == (None if values is None else tuple(values))
        assert watchdog.checked is bool(values)
        assert watchdog.values == (tuple(values) if values else None)
        assert watchdog.accepts("1") is True
        assert watchdog.accepts("2") is (not values or 2 in values)
        assert watchdog.reads_torch_name is row["reads_torch_hccl_async_error_handling"]
        assert facts.answer("ships_torch_npu_run") is row["ships_torch_npu_run"]
        assert facts.answer("reads_rank_table_file") is row["reads_rank_table_file"]
        assert facts.answer("reads_resume_mode_enable") is row["reads_resume_mode_enable"]
        for feature, has in (
            ("torch_npu_run", row["ships_torch_npu_run"]),
            ("rank_table", row["reads_rank_table_file"]),
        ):
            status = feature_support(feature, facts).status
            assert status in ("available", "undocumented") if has else status == "missing"


@pytest.mark.parametrize("row", _release_rows(), ids=lambda row: row["tag"])
def test_every_release_is_found_by_its_name_and_torch(row: dict) -> None:
    facts = npu_facts(row["torch"], row["release"])
    assert [release.tag for release in facts.releases] == [row["tag"]]


# --- exact lookup: the cases the release table corrects -----------------------------------------------------


def _only(facts: NpuFacts) -> Release:
    assert len(facts.releases) == 1, facts
    return facts.releases[0]


def test_2_1_0_post4_is_the_5_0_1_2_build_and_the_disagreement_is_told() -> None:
    facts = npu_facts("2.1.0", "2.1.0.post4")
    release = _only(facts)
    assert (release.release, release.tag, release.watchdog_default) == ("5.0.1.2", "v5.0.1.2-pytorch2.1.0", 0)
    assert release.cann is None  # maintenance releases are not in the compatibility table
    assert watchdog_default("2.1.0", "2.1.0.post4") == 0
    assert facts.conflict is not None
    assert "COMPATIBILITY.en.md" in facts.conflict and "6.0.rc1" in facts.conflict
    assert "v6.0.rc1-pytorch2.1.0 builds 2.1.0.post3" in facts.conflict
    support = feature_support("torch_npu_run", facts)
    assert support.status == "missing"
    assert facts.conflict in support.reason


def test_post_numbers_are_not_ordered_by_release() -> None:
    post13, post15 = _only(npu_facts(None, "2.1.0.post13")), _only(npu_facts(None, "2.1.0.post15"))
    assert (post13.release, post15.release) == ("7.1.0", "7.0.0.1")
    assert post15.release_version < post13.release_version
    assert _only(npu_facts(None, "2.1.0.post18")).release == "7.2.0.1"
    assert _only(npu_facts(None, "1.11.0.post12")).release == "5.0.1.2"  # after 6.0.rc1's .post11


@pytest.mark.parametrize("package", ["2.1.0.post99", "2.1.0.post19", "2.12.0.post3", "2.5.1rc1", "2.4.0.post1"])
def test_a_package_no_tag_builds_is_unknown_not_guessed(package: str) -> None:
    facts = npu_facts(None, package)
    assert facts.releases == ()
    assert facts.basis.startswith(f"torch_npu {package} is not a known release")
    assert not facts.no_npu
    assert watchdog_default(None, package) is None
    assert feature_support("torch_npu_run", facts).status == "unknown"


def test_an_old_package_named_by_the_compatibility_table_says_where_it_is_listed() -> None:
    facts = npu_facts(None, "1.11.0.rc2")
    assert facts.releases == ()
    assert "the compatibility table lists it under release 3.0.0" in facts.basis


def test_torch_npu_2_1_0_is_release_5_0_0_with_the_watchdog_off() -> None:
    facts = npu_facts("2.1.0", "2.1.0")
    assert _only(facts).release == "5.0.0"
    assert watchdog_facts(facts).default == 0
    assert watchdog_facts(facts).on_by_default is False
    assert watchdog_default("2.1.0", "2.1.0") == 0


def test_torch_2_1_0_alone_leaves_the_default_unknown() -> None:
    facts = npu_facts("2.1.0", None)
    assert facts.basis == "torch 2.1.0 is declared but torch_npu is not: releases 5.0.rc3 to 7.2.0.1 are possible"
    assert {release.torch for release in facts.releases} == {"2.1.0"}
    assert len(facts.releases) == 19
    watchdog = watchdog_facts(facts)
    assert (watchdog.default, watchdog.on_by_default, watchdog.read) == (None, None, None)
    assert watchdog_default("2.1.0") is None
    assert feature_support("torch_npu_run", facts).status == "unknown"


def test_torch_1_11_alone_never_defaults_the_watchdog_on() -> None:
    watchdog = watchdog_facts(npu_facts("1.11.0", None))
    assert watchdog.default is None  # 5.0.rc1/rc2 builds do not read it, later ones default to 0
    assert watchdog.on_by_default is False
    assert watchdog.checked is False and watchdog.accepts("2") is True


@pytest.mark.parametrize(("torch", "builds"), [("2.0.1", 6), ("1.8.1", 2), ("1.10.0", 0), ("1.5.0", 0)])
def test_torch_without_any_torch_npu_watchdog_is_no_npu(torch: str, builds: int) -> None:
    facts = npu_facts(torch, None)
    assert facts.no_npu is True
    assert len(facts.releases) == builds
    assert "HCCL_ASYNC_ERROR_HANDLING" in facts.basis
    watchdog = watchdog_facts(facts)
    assert (watchdog.read, watchdog.default, watchdog.on_by_default) == (False, None, False)
    assert watchdog_default(torch) is None
    assert feature_support("torch_npu_run", facts).status == "missing"
    assert feature_support("watchdog", facts).status == "missing"


@pytest.mark.parametrize("torch", ["2.1.0+cu118", "2.4.0+cu121", "2.1.0+rocm5.6", "2.5.1+xpu"])
def test_a_cuda_rocm_or_xpu_torch_has_no_torch_npu(torch: str) -> None:
    facts = npu_facts(torch, None)
    assert facts.no_npu is True and facts.releases == ()
    assert f"torch {torch} is a" in facts.basis and "torch_npu does not run on" in facts.basis
    assert watchdog_facts(facts).read is False
    assert watchdog_facts(facts).accepts("2") is True
    assert feature_support("rank_table", facts).status == "missing"


def test_a_cuda_torch_beside_a_torch_npu_pin_is_a_conflict() -> None:
    facts = npu_facts("2.1.0+cu118", "2.1.0.post10")
    assert facts.no_npu is True
    assert facts.conflict is not None and "2.1.0.post10" in facts.conflict


def test_the_cpu_torch_build_is_the_one_torch_npu_uses_on_x86() -> None:
    facts = npu_facts("2.1.0+cpu", "2.1.0.post10")
    assert not facts.no_npu
    assert _only(facts).release == "6.0.0"
    assert npu_facts("2.1.0+cpu", None).releases == npu_facts("2.1.0", None).releases


def test_a_torch_newer_than_the_table_has_no_candidates() -> None:
    facts = npu_facts("2.13.0", None)
    assert facts.releases == () and not facts.no_npu
    assert "newer than every torch in the release table (the newest is 2.12.0)" in facts.basis
    assert feature_support("torch_npu_run", facts).status == "unknown"


def test_a_torch_between_table_entries_has_no_candidates() -> None:
    facts = npu_facts("1.13.1", None)
    assert facts.releases == () and not facts.no_npu
    assert "no torch_npu release in the release table is built for torch 1.13.1" in facts.basis


def test_nothing_declared_gives_every_release() -> None:
    facts = npu_facts(None, None)
    assert facts.releases == release_table()
    assert facts.basis == "neither torch nor torch_npu is declared: releases 5.0.rc1 to 26.1.0 are possible"
    assert watchdog_facts(facts).reads_torch_name is False  # no final release reads the new name


@pytest.mark.parametrize(
    ("torch_npu", "release"),
    [
        ("2.1.0.post10+git1a2b3c4", "6.0.0"),
        ("2.1.0.post10.git1a2b3c4", "6.0.0"),
        ("2.1.0.post8+cxx11-abi", "6.0.rc3"),
        ("2.1.0.post8.gitabcdef0+cxx11-abi", "6.0.rc3"),
        ("2.4.0+git0123abc", "6.0.rc3"),
    ],
)
def test_build_suffixes_are_stripped(torch_npu: str, release: str) -> None:
    facts = npu_facts("2.1.0", torch_npu)
    assert _only(facts).release == release
    assert facts.basis.startswith(f"torch_npu {torch_npu} is a build of ")


@pytest.mark.parametrize("torch_npu", ["2.1.0-post8", "2.1.0.POST8", " 2.1.0.post8 "])
def test_pep440_spellings_of_one_version_are_the_same_package(torch_npu: str) -> None:
    assert _only(npu_facts(None, torch_npu)).package == "2.1.0.post8"


def test_release_names_give_the_builds_of_that_release() -> None:
    assert [r.package for r in npu_facts(None, "6.0.RC3").releases] == ["2.1.0.post8", "2.3.1.post2", "2.4.0"]
    assert _only(npu_facts("2.3.1", "6.0.rc3")).package == "2.3.1.post2"
    assert [r.package for r in npu_facts(None, "6.0.RC1").releases] == ["1.11.0.post11", "2.1.0.post3", "2.2.0"]
    narrowed = npu_facts("2.2.0", "6.0.RC3")
    assert narrowed.releases == ()
    assert narrowed.conflict is not None and "2.2.0" in narrowed.conflict
    unknown = npu_facts(None, "6.0.RC4")
    assert unknown.releases == () and unknown.basis == "torch_npu 6.0.RC4 is not a known release"


def test_a_torch_npu_built_for_another_torch_is_a_conflict() -> None:
    facts = npu_facts("2.3.1", "2.1.0.post8")
    assert _only(facts).release == "6.0.rc3"
    assert facts.conflict == "torch_npu 2.1.0.post8 is built for torch 2.1.0, but torch 2.3.1 is declared."


def test_unreadable_versions_fall_back_and_say_so() -> None:
    facts = npu_facts("2.1.0", "garbage")
    assert facts.releases == npu_facts("2.1.0", None).releases
    assert "torch_npu 'garbage' is unreadable" in facts.basis
    assert npu_facts("garbage", None).basis.startswith("torch 'garbage' is unreadable and torch_npu is not declared")
    assert _only(npu_facts("garbage", "2.1.0.post10")).release == "6.0.0"


def test_lookups_are_cached() -> None:
    assert npu_facts("2.1.0", "2.1.0.post8") is npu_facts("2.1.0", "2.1.0.post8")


def test_answer_is_none_when_candidates_differ_or_there_are_none() -> None:
    assert npu_facts("2.1.0", None).answer("watchdog_default") is None
    assert npu_facts("2.4.0", None).answer("watchdog_default") == 1
    assert npu_facts("2.13.0", None).answer("ships_torch_npu_run") is None
    assert npu_facts(None, "6.0.RC3").answer("release") == "6.0.rc3"
    with pytest.raises(AttributeError):
        npu_facts(None, "2.4.0").answer("no_such_field")


# --- features: the release has it, the docs support it -------------------------------------------------------


@pytest.mark.parametrize("torch_npu", ["2.1.0.post8", "2.3.1.post2", "2.4.0", "6.0.RC3"])
@pytest.mark.parametrize("feature", ["torch_npu_run", "rank_table"])
def test_release_6_0_rc3_has_both_features_outside_the_documented_range(torch_npu: str, feature: str) -> None:
    support = feature_support(feature, npu_facts(None, torch_npu))
    assert support.status == "undocumented"
    assert "6.0.RC3" in support.reason and "only for" in support.reason
    assert support.reason.endswith(".")


@pytest.mark.parametrize("torch_npu", ["2.1.0.post10", "2.1.0.post15", "2.4.0.post2", "2.12.0", "7.0.0"])
@pytest.mark.parametrize("feature", ["torch_npu_run", "rank_table"])
def test_releases_after_6_0_rc3_have_both_features_documented(torch_npu: str, feature: str) -> None:
    assert feature_support(feature, npu_facts(None, torch_npu)).status == "available"


@pytest.mark.parametrize(
    "torch_npu", ["2.2.0", "2.2.0.post1", "2.2.0.post2", "2.2.0.post3", "2.1.0.post7", "2.1.0.post3"]
)
def test_releases_without_torch_npu_run(torch_npu: str) -> None:
    support = feature_support("torch_npu_run", npu_facts(None, torch_npu))
    assert support.status == "missing"
    assert "cannot work" in support.reason


def test_no_torch_2_2_0_build_ships_torch_npu_run() -> None:
    support = feature_support("torch_npu_run", npu_facts("2.2.0", None))
    assert support.status == "missing"
    assert "no torch_npu release for torch 2.2.0 ships torch_npu_run" in support.reason


@pytest.mark.parametrize(
    ("torch_npu", "torch_npu_run"),
    [
        ("1.11.0.post11", "undocumented"),  # 6.0.rc1: the docs ask for newer than 6.0.RC1
        ("1.11.0.post13", "undocumented"),  # 6.0.rc1.1, a maintenance release of that line
        ("1.11.0.post14", "available"),  # 6.0.rc2
        ("1.11.0.post15", "available"),  # 6.0.rc2.1
        ("1.11.0.post12", "missing"),  # 5.0.1.2, a later maintenance build without it
        ("1.11.0.post10", "missing"),
    ],
)
def test_torch_1_11_builds(torch_npu: str, torch_npu_run: str) -> None:
    facts = npu_facts("1.11.0", torch_npu)
    assert feature_support("torch_npu_run", facts).status == torch_npu_run
    assert feature_support("rank_table", facts).status == "missing"  # no 1.11 build reads RANK_TABLE_FILE


def test_undocumented_names_the_releases_outside_the_range() -> None:
    support = feature_support("torch_npu_run", npu_facts("2.4.0", None))
    assert support.status == "undocumented"  # every 2.4.0 build ships it; 6.0.rc3's is outside the docs
    assert "(6.0.rc3 is not)" in support.reason


@pytest.mark.parametrize(
    ("torch_npu", "status"),
    [
        ("2.1.0", "undocumented"),
        ("2.1.0.post3", "undocumented"),
        ("2.1.0.post6", "available"),
        ("2.0.1.post1", "missing"),
    ],
)
def test_watchdog_feature_follows_the_release(torch_npu: str, status: str) -> None:
    assert feature_support("watchdog", npu_facts(None, torch_npu)).status == status


def test_unknown_feature_is_a_caller_error() -> None:
    with pytest.raises(ValueError):
        feature_support("mindio", npu_facts(None, None))


# --- the watchdog value ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1", 1),
        ("0", 0),
        (" 2", 2),
        ("+3", 3),
        ("-1", -1),
        ("1abc", 1),
        ("true", 0),
        ("", 0),
        ("0x1", 0),
        ("9" * 30, 2**63 - 1),
        ("-" + "9" * 5000, -(2**63)),
        ("0" * 30 + "1", 1),
    ],
)
def test_watchdog_value_reads_like_strtol(text: str, value: int) -> None:
    assert watchdog_value(text) == value


@pytest.mark.parametrize(
    ("torch_npu", "text", "accepted"),
    [
        ("2.1.0.post10", "2", False),  # 6.0.0 to 7.2.x: "should be 0 or 1"
        ("2.1.0.post17", "3", False),
        ("2.1.0.post10", "true", True),  # strtol reads 0
        ("2.6.0.post5", "2", True),  # 7.3.0 accepts 0,1,2,3
        ("2.6.0.post5", "4", False),
        ("2.1.0", "2", True),  # 5.0.0: no check
        ("2.1.0.post8", "7", True),  # 6.0.rc3: no check yet
        ("2.0.1.post1", "2", True),  # not read at all
    ],
)
def test_watchdog_values_accepted_at_start_up(torch_npu: str, text: str, accepted: bool) -> None:
    assert watchdog_facts(npu_facts(None, torch_npu)).accepts(text) is accepted


def test_accepted_values_unknown_when_candidates_differ() -> None:
    assert watchdog_facts(npu_facts("2.6.0", None)).accepts("2") is None  # 7.1.0 rejects, 7.3.0 accepts
    assert watchdog_facts(npu_facts("2.6.0", None)).accepts("1") is True


# --- torch_npu versions (older helper) ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "torch", "release", "cann"),
    [
        ("2.1.0.post8", "2.1.0", "6.0.RC3", "8.0.RC3"),
        ("2.1.0.post10", "2.1.0", "6.0.0", "8.0.0"),
        ("2.1.0.post10+git1a2b3c4", "2.1.0", "6.0.0", "8.0.0"),
        ("2.1.0.post10.git1a2b3c4", "2.1.0", "6.0.0", "8.0.0"),
        ("2.4.0", "2.4.0", "6.0.RC3", "8.0.RC3"),
        ("2.4.0.post2", "2.4.0", "6.0.0", "8.0.0"),
        ("1.11.0.post11", "1.11.0", "6.0.RC1", "8.0.RC1"),
        ("1.11.0.post14", "1.11.0", "6.0.RC2", "8.0.RC2"),
        ("2.2.0", "2.2.0", "6.0.RC1", "8.0.RC1"),
        ("2.3.1", "2.3.1", "6.0.RC2", "8.0.RC2"),
        ("2.5.1", "2.5.1", "7.0.0", "8.1.RC1"),
        ("2.1.0", "2.1.0", "5.0.0", "7.0.0"),
        ("2.1.0.rc1", "2.1.0", "5.0.RC3", "7.0.RC1"),
        ("2.0.1.post1", "2.0.1", "5.0.0", "7.0.0"),
        ("2.1.0.post17", "2.1.0", "7.2.0", "8.3.RC1"),
        ("2.6.0.post5", "2.6.0", "7.3.0", "8.5.0"),
        ("2.9.0.post2", "2.9.0", "26.0.0", "9.0.0"),
        ("2.12.0", "2.12.0", "26.1.0", "9.1.0"),
        ("2.10.0", "2.10.0", "26.0.0", "9.0.0"),
    ],
)
def test_table_rows(text: str, torch: str, release: str, cann: str) -> None:
    npu = parse_torch_npu_version(text)
    assert npu is not None
    assert npu.raw == text
    assert npu.torch == torch
    assert npu.release == v(release)
    assert npu.release_inferred is False
    assert npu.cann == v(cann)


@pytest.mark.parametrize(("text", "release"), [("2.1.0.post4", "5.0.1.2"), ("1.11.0.post13", "6.0.RC1.1")])
def test_maintenance_releases_have_no_cann_in_the_compatibility_table(text: str, release: str) -> None:
    npu = parse_torch_npu_version(text)
    assert npu is not None and npu.release == v(release) and npu.cann is None


@pytest.mark.parametrize("text", ["2.1.0.post20", "2.14.0", "2.5.1rc1", "2.4.0.post1", "1.5.0", "1.11.0.rc2"])
def test_package_no_tag_builds_has_no_release(text: str) -> None:
    npu = parse_torch_npu_version(text)
    assert npu is not None
    assert npu.release is None
    assert npu.release_inferred is False


def test_prerelease_keeps_its_torch_base() -> None:
    npu = parse_torch_npu_version("2.5.1rc1")
    assert npu is not None and npu.torch == "2.5.1"


@pytest.mark.parametrize(("text", "release"), [("6.0.RC3", "6.0.RC3"), ("6.0.rc3", "6.0.RC3"), ("7.0.0", "7.0.0")])
def test_release_names_given_directly(text: str, release: str) -> None:
    npu = parse_torch_npu_version(text)
    assert npu is not None
    assert npu.torch is None
    assert npu.release == v(release)


@pytest.mark.parametrize("text", ["", "   ", "garbage", "torch_npu", "2.1.0.post8.x", "==2.1.0", None, 3])
def test_unreadable_torch_npu(text: object) -> None:
    assert parse_torch_npu_version(text) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("torch", "torch_npu", "expected"),
    [
        ("2.3.1", "2.1.0.post8", "2.1.0"),
        ("2.1.0+cpu", "2.1.0.post8", None),
        ("2.1.0", "2.1.0.post10+git1a2b3c4", None),
        ("2.1", "2.1.0.post8", None),
        ("1.11.0", "2.1.0.post8", "2.1.0"),
        ("2.1.0", "6.0.RC3", None),
        ("garbage", "2.1.0.post8", None),
        ("2.1.0", "garbage", None),
    ],
)
def test_torch_npu_for_torch_mismatch(torch: str, torch_npu: str, expected: str | None) -> None:
    assert torch_npu_for_torch_mismatch(torch, torch_npu) == expected


# --- requirements (older helpers) -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("torch", "torch_npu", "expected"),
    [
        ("2.1.0", "2.1.0.post8", None),  # 6.0.rc3 ships it; the docs support it only after 6.0.RC3
        ("2.1.0", "2.1.0.post10", True),
        ("1.11.0", "1.11.0.post14", True),
        ("1.11.0", "1.11.0.post11", None),  # 6.0.rc1 ships it; the docs: newer than 6.0.RC1
        (None, "1.11.0.post14", True),
        ("2.4.0", "2.4.0", None),
        ("2.4.0", "2.4.0.post2", True),
        ("2.3.1", "2.3.1.post4", True),
        ("2.1.0", "2.1.0.post7", False),  # 6.0.rc2.1 does not ship it
        ("2.4.0", "2.4.0.post1", None),  # no tag builds it
        ("1.11.0", "1.11.0.post12", False),  # 5.0.1.2 does not ship it
        ("2.1.0", "2.1.0.post20", None),  # not guessed from its number
        (None, "2.5.1rc1", None),
        ("2.1.0", "7.0.0", True),
        ("2.1.0", "6.0.RC3", None),
        ("1.11.0", "6.0.RC2", True),
        ("2.0.1", "2.0.1.post1", False),
        ("2.2.0", "2.2.0.post2", False),
        ("1.8.1", "6.0.0", None),  # release 6.0.0 has no build for torch 1.8.1: a conflict, not a verdict
        ("2.1.0", None, None),
        ("2.1.0", "garbage", None),
        (None, None, None),
        ("garbage", "2.1.0.post10", True),
        (None, "7.0.0", True),
        ("2.1.0+cpu", "2.1.0.post10", True),
        ("2.1.0+cu118", None, False),
    ],
)
def test_parallel_store_support(torch: str | None, torch_npu: str | None, expected: bool | None) -> None:
    verdict, reason = parallel_store_support(torch, torch_npu)
    assert verdict is expected
    assert "torch_npu_run" in reason
    assert reason.endswith(".")


def test_parallel_store_reasons_name_the_release_and_the_documented_range() -> None:
    _, reason = parallel_store_support("2.1.0", "2.1.0.post8")
    assert reason.startswith("torch_npu 2.1.0.post8 is release 6.0.rc3, which ships torch_npu_run")
    assert "only for torch 1.11.0 with a torch_npu release newer than 6.0.RC1" in reason
    _, reason = parallel_store_support("2.1.0", "2.1.0.post7")
    assert "does not ship torch_npu_run" in reason
    assert "for torch 2.1.0 the first release that ships torch_npu_run is 6.0.rc3" in reason
    _, reason = parallel_store_support("2.1.0", "2.1.0.post20")
    assert "is not a known release" in reason


@pytest.mark.parametrize(
    ("torch_npu", "expected"),
    [
        ("2.1.0.post8", None),
        ("2.3.1.post2", None),
        ("2.4.0", None),
        ("2.1.0.post10", True),
        ("6.0.RC3", None),
        ("6.0.rc3", None),
        ("6.0.0", True),
        ("1.11.0.post14", False),
        ("1.11.0.post11", False),
        ("2.1.0.post6", False),
        ("2.4.0.post1", None),
        (None, None),
        ("garbage", None),
    ],
)
def test_ranktable_support(torch_npu: str | None, expected: bool | None) -> None:
    verdict, reason = ranktable_support(torch_npu)
    assert verdict is expected
    assert "RankTable link setup" in reason or "RANK_TABLE_FILE" in reason


@pytest.mark.parametrize(
    ("cann", "expected"),
    [
        ("8.0.RC2", True),
        ("8.0.rc2", True),
        ("8.0.RC3", True),
        ("8.0.0", True),
        ("9.1.0", True),
        ("80RC3alpha003", True),
        ("8.0.RC1", False),
        ("8.0.RC2.alpha002", False),
        ("7.0.0", False),
        ("6.3.RC3.1", False),
        (None, None),
        ("latest", None),
    ],
)
def test_hccl_link_optimization(cann: str | None, expected: bool | None) -> None:
    verdict, reason = hccl_link_optimization(cann)
    assert verdict is expected
    assert "CANN 8.0.RC2" in reason


@pytest.mark.parametrize(
    ("cann", "expected"),
    [("8.0.RC2", True), ("8.0.RC1", False), ("7.0.0", False), ("8.1.RC1", True), (None, None), ("eight", None)],
)
def test_compile_mode_support(cann: str | None, expected: bool | None) -> None:
    verdict, reason = compile_mode_support(cann)
    assert verdict is expected
    assert "CANN 8.0.RC2" in reason


@pytest.mark.parametrize(
    ("mindio", "mindcluster", "expected"),
    [
        ("6.0.RC2", "6.0.RC2", True),
        ("7.0.0", "26.0.0", True),
        ("6.0.RC1", "6.0.RC2", False),
        ("6.0.RC2", "6.0.RC1", False),
        ("6.0.RC1", None, False),
        (None, "6.0.RC1", False),
        ("6.0.RC2", None, None),
        (None, None, None),
        ("garbage", "7.0.0", None),
    ],
)
def test_mindio_support(mindio: str | None, mindcluster: str | None, expected: bool | None) -> None:
    verdict, reason = mindio_support(mindio, mindcluster)
    assert verdict is expected
    assert "6.0.RC2" in reason


# --- documented defaults -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("torch", "torch_npu", "expected"),
    [
        ("1.11.0", None, None),  # 5.0.rc1/rc2 builds do not read it; later ones default to 0
        ("1.11", None, None),
        (None, "1.11.0.post14", 0),
        ("1.11.0", "1.11.0.post4", 0),
        ("1.11.0", "1.11.0.post1", None),  # 5.0.rc2: not read
        ("2.1.0", None, None),  # 5.0.x builds default to 0, 6.0.rc1 and later to 1
        ("2.1.0", "2.1.0", 0),
        ("2.1.0", "2.1.0.post2", 0),
        ("2.1.0", "2.1.0.post4", 0),
        ("2.1.0", "2.1.0.post3", 1),
        ("2.1.0", "2.1.0.post10", 1),
        ("2.1.0+cpu", "2.1.0.post10", 1),
        ("2.1.0+cu118", "2.1.0.post10", None),
        ("2.4.0", None, 1),
        ("2.10.0", None, 1),
        ("2.0.1", None, None),
        ("1.8.1", None, None),
        (None, None, None),
        ("garbage", None, None),
    ],
)
def test_watchdog_default(torch: str | None, torch_npu: str | None, expected: int | None) -> None:
    assert watchdog_default(torch, torch_npu) == expected


@pytest.mark.parametrize(
    ("platform", "expected"),
    [
        ("ascend-910", True),
        ("Ascend-910", True),
        ("ascend-910b", False),
        ("ascend-npu", False),
        ("ascend-310p", None),
        (None, None),
    ],
)
def test_jit_compile_default(platform: str | None, expected: bool | None) -> None:
    assert jit_compile_default(platform) is expected


def test_documented_defaults() -> None:
    assert documented_default("HCCL_EXEC_TIMEOUT") == 1836
    assert documented_default("HCCL_CONNECT_TIMEOUT") == 120
    assert documented_default("HCCL_ASYNC_ERROR_HANDLING") is None  # depends on torch
    assert documented_default("NO_SUCH_VARIABLE") is None


def test_knowledge_source() -> None:
    assert "03_configuring_training_recovery" in (knowledge_source("parallel_store") or "")
    assert "envref_07_0078" in (knowledge_source("HCCL_EXEC_TIMEOUT") or "")
    assert knowledge_source("nothing") is None


# --- readability of declared versions ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("component", "text"),
    [
        ("torch", "2.1.0"),
        ("torch", "2.1.0+cpu"),
        ("torch", "1.11"),
        ("torch-npu", "2.1.0.post10"),
        ("torch_npu", "2.5.1rc1"),
        ("torch-npu", "6.0.RC3"),
        ("cann", "8.0.RC2"),
        ("cann", "8.0.RC2.alpha002"),
        ("cann", "900beta2"),
        ("mindcluster", "6.0.RC2"),
        ("mindio", "26.0.0"),
    ],
)
def test_readable_versions(component: str, text: str) -> None:
    assert version_problem(component, text) is None


@pytest.mark.parametrize(
    ("component", "text", "hint"),
    [
        ("torch", "latest", "PyTorch version"),
        ("torch-npu", "x", "2.1.0.post10"),
        ("cann", "8.0", "expected a CANN release such as 8.0.RC2 or 8.0.0"),
        ("cann", "2.1.0.post8", "CANN"),
        ("mindcluster", "v6", "MindCluster"),
        ("mindio", "", "MindIO"),
    ],
)
def test_unreadable_versions(component: str, text: str, hint: str) -> None:
    problem = version_problem(component, text)
    assert problem is not None and problem.startswith("expected")
    assert hint in problem


def test_unknown_component_is_a_caller_error() -> None:
    with pytest.raises(ValueError):
        version_problem("driver", "24.1.0")
