"""Rescheduling rules (RL201-RL206) beyond their own examples: the label schema and its evaluator
(held to jsonschema's verdict, never imported by a run), comment-keeping policy removal, the MindSpore fixture and the corpus."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from recovery_lint.registry import all_rules
from recovery_lint.rule import Case
from recovery_lint.rules.rl205_invalid_recovery_label import (
    ANNOTATION_KEYWORDS,
    CHECKED_KEYWORDS,
    LOCATIONS,
    failed_keywords,
    key_rules,
    label_schema,
)
from recovery_lint.rules.rl206_fault_retry_needs_never_restart import retry_times
from recovery_lint.testing import run_case

from .conftest import FIXTURES, ROOT, SHARED, run_cli

KEYS = [(location, key) for location, rules in key_rules().items() for key in rules]


def _keywords(schema: dict) -> set[str]:
    found = set(schema)
    for sub in schema.get("anyOf", ()):
        found |= _keywords(sub)
    return found


# -- the schema --------------------------------------------------------------------------------
def test_schema_is_a_valid_json_schema():
    import jsonschema

    jsonschema.validators.validator_for(label_schema()).check_schema(label_schema())


@pytest.mark.parametrize(("location", "key"), KEYS)
def test_every_key_is_documented_and_uses_only_keywords_the_precheck_knows(location, key):
    rule = key_rules()[location][key]
    assert rule.schema.get("description"), f"{key} has no description"
    assert rule.schema.get("x-source"), f"{key} has no source"
    assert rule.expected, f"{key} has no x-expected wording"
    assert rule.applies_to <= {"vcjob", "acjob"} and rule.applies_to
    unknown = _keywords(rule.schema) - CHECKED_KEYWORDS - ANNOTATION_KEYWORDS
    assert not unknown, f"{key} uses {unknown}, which the pre-check would ignore"
    assert rule.schema.get("type") == "string", "labels and annotations are strings"


def test_locations_match_the_schema():
    assert set(LOCATIONS) == set(label_schema()["properties"])


def _interesting_values(draw_text):
    literals = [m for _, rules in key_rules().items() for r in rules.values() for m in r.enum]
    return st.one_of(
        st.sampled_from(literals),
        st.sampled_from(literals).map(str.upper),
        st.sampled_from(literals).map(str.title),
        st.integers(-5, 400).map(str),
        st.integers(0, 400).map(lambda n: f"0{n}"),
        st.lists(st.sampled_from(["retry", "recover", "dump", "exit", "Retry", " recover", "x"]), min_size=1).map(
            ",".join
        ),
        st.sampled_from(["external-grace", "external-force-x", "external-off", "", " on", "on "]),
        draw_text,
        st.integers(),
        st.booleans(),
        st.none(),
        st.floats(allow_nan=False),
    )


@settings(max_examples=400, deadline=None)
@given(
    key=st.sampled_from(KEYS),
    value=_interesting_values(st.text(alphabet="aceflnoprsty-,0123456789 AEG", max_size=12)),
)
def test_evaluator_agrees_with_jsonschema(key, value):
    location, name = key
    rule = key_rules()[location][name]
    expected = jsonschema_errors(location, {name: value}).get(name, [])
    assert sorted(failed_keywords(rule.schema, value)) == sorted(expected), (name, value)
    assert rule.accepts(value) == (not expected), (name, value)


def jsonschema_errors(location: str, instance: dict[str, object]) -> dict[str, list[str]]:
    """jsonschema's verdict on one location of the label schema: key -> the failing keywords."""
    import jsonschema

    schema = label_schema()
    found: dict[str, list[str]] = {}
    for error in jsonschema.validators.validator_for(schema)(schema).iter_errors({location: instance}):
        path = list(error.absolute_path)
        if len(path) >= 2 and path[0] == location:
            found.setdefault(str(path[1]), []).append(str(error.validator))
    return found


@pytest.mark.parametrize(
    ("key", "value", "ok"),
    [
        ("fault-retry-times", "0", True),
        ("fault-retry-times", "100", True),
        # any integer strconv.Atoi reads: the 0-100 of the API table is not enforced by the code, and
        # the official MindIE sample uses 10000
        ("fault-retry-times", "101", True),
        ("fault-retry-times", "10000", True),
        ("fault-retry-times", "-1", True),
        ("fault-retry-times", "3.0", False),
        ("fault-retry-times", "three", False),
        ("fault-scheduling", "external-force", True),
        ("fault-scheduling", "Grace", False),
        ("pod-rescheduling", "true", False),
        ("ring-controller.atlas", "ascend-310P", True),
    ],
)
def test_documented_bounds(key, value, ok):
    assert key_rules()["labels"][key].accepts(value) is ok


@pytest.mark.parametrize(
    ("value", "ok"),
    [("30", True), ("270", True), ("29", False), ("271", False), ("1e2", False)],
)
def test_wait_reschedule_timeout_range(value, ok):
    assert key_rules()["annotations"]["wait-reschedule-timeout"].accepts(value) is ok


@pytest.mark.parametrize(
    ("value", "ok"),
    [("retry,recover,dump,exit,elastic-training,recover-in-place", True), ("retry, recover", False), ("", False)],
)
def test_recover_strategy_tokens(value, ok):
    assert key_rules()["annotations"]["recover-strategy"].accepts(value) is ok


def test_retry_times_reads_like_atoi():
    assert [retry_times(t) for t in ("3", "+3", "-2", "03", "3.0", " 3", "x", "")] == [3, 3, -2, 3, 0, 0, 0, 0]


# -- start-up cost -----------------------------------------------------------------------------
LAZY_PROBE = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from recovery_lint.config import Config
    from recovery_lint.engine import LintRequest, lint
    from recovery_lint.registry import all_rules
    root = Path(sys.argv[1])
    result = lint(LintRequest(paths=[root], cwd=root, config=Config(), rules=[all_rules()["RL205"]]))
    print(len(result.diagnostics), "jsonschema" in sys.modules)
    """
)

CLEAN = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: j
  labels:
    framework: pytorch
    fault-scheduling: "grace"
    pod-rescheduling: "on"
    fault-retry-times: "3"
spec:
  replicaSpecs:
    Worker:
      template:
        spec:
          containers:
          - name: ascend
            image: i
"""


@pytest.mark.parametrize(("text", "expected"), [(CLEAN, "0 False"), (CLEAN.replace('"3"', "3"), "1 False")])
def test_jsonschema_is_never_imported_to_judge_a_value(tmp_path, text, expected):
    (tmp_path / "job.yaml").write_text(text, "utf-8")
    out = subprocess.run(
        [sys.executable, "-c", LAZY_PROBE, str(tmp_path)], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.split() == expected.split()


# -- RL203 keeps comments ----------------------------------------------------------------------
# fault-retry-times makes PodFailed -> Ignore the documented companion of unconditional retry, the
# one policy entry RL203 keeps
POLICIES_WITH_COMMENTS = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: gpt  # job name
  labels:
    fault-scheduling: "force"
    pod-rescheduling: "on"  # Pod-level
    fault-retry-times: "3"
spec:
  # lifecycle policies follow
  policies:   # from the sample
  - event: PodEvicted   # eviction
    # then restart all
    action: RestartJob
  - {event: PodFailed, action: RestartJob}  # flow item
  # between items
  - event: PodFailed
    action: Ignore  # keep for retry
  maxRetry: 3  # retries
  tasks:
  - policies:
    - event: PodEvicted
      action: RestartJob  # task level
    name: default
    template:
      spec:
        containers:
        - name: train  # container
          image: torch:latest
"""


def _comments(text: str) -> list[str]:
    return [m.group(1).rstrip() for m in re.finditer(r"(?:^|\s)(#.*)$", text, re.M)]


@pytest.mark.parametrize("crlf", [False, True])
def test_rl203_fix_keeps_every_comment_and_the_other_policies(tmp_path, crlf):
    text = POLICIES_WITH_COMMENTS.replace("\n", "\r\n") if crlf else POLICIES_WITH_COMMENTS
    rule = all_rules()["RL203"]
    outcome = run_case(rule, Case(files={"job.yaml": text}, unsafe=True), tmp_path)
    assert len(outcome.positions) == 2, outcome.messages
    fixed = outcome.fixed["job.yaml"]
    assert _comments(fixed) == _comments(text)
    assert "RestartJob" not in fixed
    doc = yaml.safe_load(fixed)
    assert doc["spec"]["policies"] == [{"event": "PodFailed", "action": "Ignore"}]
    assert doc["spec"]["tasks"][0]["name"] == "default" and doc["spec"]["tasks"][0]["policies"] is None
    if crlf:
        assert "\n" not in fixed.replace("\r\n", "")


def test_rl203_fix_removes_the_ignore_policy_too_without_unconditional_retry(tmp_path):
    text = POLICIES_WITH_COMMENTS.replace('    fault-retry-times: "3"\n', "")
    outcome = run_case(all_rules()["RL203"], Case(files={"job.yaml": text}, unsafe=True), tmp_path)
    assert len(outcome.positions) == 2, outcome.messages
    fixed = outcome.fixed["job.yaml"]
    assert _comments(fixed) == _comments(text)
    doc = yaml.safe_load(fixed)
    assert "policies" not in doc["spec"] and doc["spec"]["maxRetry"] == 3
    assert doc["spec"]["tasks"][0]["policies"] is None


# -- the MindSpore fixture ---------------------------------------------------------------------
PYTORCH_RULES = re.compile(r"^RL[1345]\d\d$")


def _codes(path, cwd=ROOT) -> list[str]:
    result = run_cli("--isolated", "--output-format", "json", str(path), cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    return [d["code"] for d in json.loads(result.stdout)]


def test_mindspore_fixture_gives_no_pytorch_finding():
    codes = _codes(FIXTURES / "mindspore-job")
    assert not [c for c in codes if PYTORCH_RULES.match(c)], codes
    assert not [c for c in codes if c.startswith("RL9")], codes


def test_the_same_job_labelled_pytorch_does_get_pytorch_findings(tmp_path):
    import shutil

    repo = tmp_path / "job"
    shutil.copytree(FIXTURES / "mindspore-job", repo)
    manifest = repo / "job.yaml"
    manifest.write_text(manifest.read_text("utf-8").replace("framework: mindspore", "framework: pytorch"), "utf-8")
    assert [c for c in _codes(repo) if PYTORCH_RULES.match(c)], "the negative fixture would not catch a regression"


# -- the real manifests ------------------------------------------------------------------------
CORPUS = SHARED / "corpus" / "manifests"


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")
def test_corpus_findings_of_the_rescheduling_rules():
    result = run_cli(
        "--isolated", "--output-format", "json", "--select", "RL201,RL203,RL204,RL205,RL206,RL900", ".", cwd=CORPUS
    )
    assert result.returncode in (0, 1) and "Traceback" not in result.stderr, result.stderr
    found = sorted((d["code"], d["path"].split("__")[-1]) for d in json.loads(result.stdout))
    # the three basic-training AscendJobs have no fault-scheduling label; every other value is valid
    assert found == [
        ("RL201", "mindspore_multinodes_acjob_910b.yaml"),
        ("RL201", "pytorch_multinodes_acjob_910b_with_ranktable.yaml"),
        ("RL201", "pytorch_standalone_acjob_quickstart.yaml"),
    ]
