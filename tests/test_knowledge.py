"""Tests for recovery_lint.knowledge: Ascend release names, the torch_npu table and requirements."""

from __future__ import annotations

import itertools
import json
from importlib.resources import files

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recovery_lint import knowledge
from recovery_lint.knowledge import (
    AscendVersion,
    compile_mode_support,
    documented_default,
    hccl_link_optimization,
    jit_compile_default,
    knowledge_source,
    mindio_support,
    parallel_store_support,
    parse_ascend_version,
    parse_torch_npu_version,
    ranktable_support,
    torch_npu_for_torch_mismatch,
    version_problem,
    watchdog_default,
)


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


# --- data file -----------------------------------------------------------------------------------------


def _json() -> dict:
    return json.loads(files("recovery_lint.schemas").joinpath("knowledge.json").read_text(encoding="utf-8"))


def test_every_table_and_entry_names_its_source() -> None:
    data = _json()
    assert data["torch_npu_table"]["source"]
    assert all(row["source"] for row in data["torch_npu_table"]["rows"])
    assert data["torch_npu_release_lines"]["source"]
    assert all(entry["source"] for entry in data["requirements"].values())
    assert all(entry["source"] for entry in data["defaults"].values())


def test_release_lines_are_listed_oldest_first() -> None:
    lines = [v(text) for text in _json()["torch_npu_release_lines"]["lines"]]
    assert lines == sorted(lines)
    assert len(set(lines)) == len(lines)
    assert str(lines[0]) == "3.0.RC1"
    assert str(lines[-1]) == "26.1.0"


def test_every_row_uses_a_known_release_line() -> None:
    data = _json()
    lines = {v(text) for text in data["torch_npu_release_lines"]["lines"]}
    for row in data["torch_npu_table"]["rows"]:
        assert v(row["release"]) in lines, row
        assert v(row["cann"]) is not None
        assert row["package"].startswith(row["torch"])


def test_release_and_cann_agree_across_rows() -> None:
    cann_of: dict[AscendVersion, AscendVersion] = {}
    for row in _json()["torch_npu_table"]["rows"]:
        assert cann_of.setdefault(v(row["release"]), v(row["cann"])) == v(row["cann"]), row


def test_data_is_read_once() -> None:
    knowledge._data.cache_clear()
    documented_default("HCCL_EXEC_TIMEOUT")
    parse_torch_npu_version("2.1.0.post8")
    assert knowledge._data.cache_info().misses == 1


# --- torch_npu versions --------------------------------------------------------------------------------


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
        ("1.11.0.rc2", "1.11.0", "3.0.0", "6.0.1"),
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


def test_package_newer_than_every_row_is_inferred() -> None:
    npu = parse_torch_npu_version("2.1.0.post20")
    assert npu is not None
    assert npu.torch == "2.1.0"
    assert npu.release == v("7.2.0")
    assert npu.release_inferred is True


def test_torch_base_newer_than_the_table_is_inferred_at_newest_line() -> None:
    npu = parse_torch_npu_version("2.14.0")
    assert npu is not None
    assert (npu.torch, npu.release, npu.release_inferred) == ("2.14.0", v("26.1.0"), True)


@pytest.mark.parametrize("text", ["2.5.1rc1", "2.4.0.post1", "1.11.0.post12", "1.5.0"])
def test_package_between_or_before_rows_has_no_release(text: str) -> None:
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


# --- requirements --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("torch", "torch_npu", "expected"),
    [
        ("2.1.0", "2.1.0.post8", False),  # release 6.0.rc3 is not newer than 6.0.RC3
        ("2.1.0", "2.1.0.post10", True),
        ("1.11.0", "1.11.0.post14", True),
        ("1.11.0", "1.11.0.post11", False),
        (None, "1.11.0.post14", True),
        ("2.4.0", "2.4.0", False),
        ("2.4.0", "2.4.0.post2", True),
        ("2.3.1", "2.3.1.post4", True),
        ("2.1.0", "2.1.0.post7", False),  # between 6.0.rc2 and 6.0.rc3 builds
        ("2.4.0", "2.4.0.post1", None),  # between 6.0.rc3 and 6.0.0 builds
        ("1.11.0", "1.11.0.post12", None),  # between 6.0.rc1 and 6.0.rc2 builds
        ("2.1.0", "2.1.0.post20", True),
        (None, "2.5.1rc1", True),  # torch 2.5.1 builds only exist after 6.0.0
        ("2.1.0", "7.0.0", True),
        ("2.1.0", "6.0.RC3", False),
        ("1.11.0", "6.0.RC2", True),
        ("2.0.1", "2.0.1.post1", False),
        ("1.8.1", "6.0.0", False),
        ("2.1.0", None, None),
        ("2.1.0", "garbage", None),
        (None, None, None),
        ("garbage", "2.1.0.post10", None),
        (None, "7.0.0", None),
        ("2.1.0+cpu", "2.1.0.post10", True),
    ],
)
def test_parallel_store_support(torch: str | None, torch_npu: str | None, expected: bool | None) -> None:
    verdict, reason = parallel_store_support(torch, torch_npu)
    assert verdict is expected
    assert reason.startswith("Parallel Store (torch_npu_run)")
    assert reason.endswith(".")


def test_parallel_store_reasons_name_requirement_and_assumption() -> None:
    _, reason = parallel_store_support("2.1.0", "2.1.0.post8")
    assert "newer than 6.0.RC3" in reason and "6.0.RC3, which is not newer" in reason
    _, reason = parallel_store_support(None, "1.11.0.post14")
    assert "assumed from torch_npu 1.11.0.post14" in reason and "6.0.RC1" in reason
    _, reason = parallel_store_support("2.1.0", "2.1.0.post20")
    assert "assumed to be release 7.2.0 or later" in reason
    _, reason = parallel_store_support("2.0.1", "2.0.1.post1")
    assert "torch 2.0.1 is not supported" in reason


@pytest.mark.parametrize(
    ("torch_npu", "expected"),
    [
        ("2.1.0.post8", False),
        ("2.1.0.post10", True),
        ("6.0.RC3", False),
        ("6.0.rc3", False),
        ("6.0.0", True),
        ("1.11.0.post14", False),
        ("2.4.0.post1", None),
        (None, None),
        ("garbage", None),
    ],
)
def test_ranktable_support(torch_npu: str | None, expected: bool | None) -> None:
    verdict, reason = ranktable_support(torch_npu)
    assert verdict is expected
    assert "6.0.RC3" in reason


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
    ("torch", "expected"),
    [
        ("1.11.0", 0),
        ("1.11", 0),
        ("2.1.0", 1),
        ("2.1.0+cpu", 1),
        ("2.4.0", 1),
        ("2.10.0", 1),
        ("2.0.1", None),
        ("1.8.1", None),
        (None, None),
        ("garbage", None),
    ],
)
def test_watchdog_default(torch: str | None, expected: int | None) -> None:
    assert watchdog_default(torch) == expected


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
