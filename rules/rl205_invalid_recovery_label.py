"""RL205: recovery labels and annotations whose value the scheduler or operator will not take.

The allowed values live in ``recovery_lint.schemas/labels.schema.json``. Each value is checked
by a small evaluator of the keywords that schema uses (``type``, ``enum``, ``pattern``, ``anyOf``
and local ``$ref``; the tests hold it to jsonschema's verdict on every key), because importing
jsonschema would about double the CPU of a one-manifest run that holds a wrong value (bench/README.md).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from recovery_lint.diagnostics import Severity, safe_fix
from recovery_lint.edits import replace_scalar
from recovery_lint.jobs import Job
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples
from recovery_lint.sources.manifest import ManifestDoc
from recovery_lint.sources.yamlnodes import STR_TAG, YMap, YNode, YScalar, YSeq

from ._common import manifest_source

if TYPE_CHECKING:
    from typing import Any

SCHEMA_FILE = "labels.schema.json"
# keywords the pre-check evaluates; everything else in a key's schema must be an annotation
CHECKED_KEYWORDS = frozenset({"type", "enum", "pattern", "anyOf", "$ref"})
ANNOTATION_KEYWORDS = frozenset({"description", "x-source", "x-applies-to", "x-expected"})
LOCATIONS = {"labels": "label", "annotations": "annotation", "podLabels": "pod template label"}


# -- schema data -------------------------------------------------------------------------------
@functools.cache
def label_schema() -> dict[str, Any]:
    """The schema document, read once per process."""
    from recovery_lint.schemas import read_json

    return read_json(SCHEMA_FILE)


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    """Follow a local ``$ref`` (``#/a/b``) inside the schema document."""
    seen = 0
    while "$ref" in schema:
        ref = schema["$ref"]
        if not ref.startswith("#/") or seen > 16:
            raise ValueError(f"{SCHEMA_FILE}: unsupported $ref {ref!r}")
        node: Any = label_schema()
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        schema = node
        seen += 1
    return schema


@dataclass(eq=False)
class KeyRule:
    """What one key accepts at one location, as the pre-check reads it from the schema."""

    location: str
    key: str
    schema: dict[str, Any]  # the key's schema, $ref resolved
    applies_to: frozenset[str]
    expected: str
    enum: tuple[str, ...]  # every allowed literal, for case-only fixes

    def accepts(self, value: object) -> bool:
        return _accepts(self.schema, value)

    def canonical(self, text: str) -> str | None:
        """The allowed spelling of a value that differs from one only by letter case."""
        for member in self.enum:
            if member.lower() == text.lower():
                return member
        lowered = text.lower()
        if lowered != text and self.accepts(lowered):
            return lowered
        return None


def failed_keywords(schema: dict[str, Any], value: object) -> list[str]:
    """The keywords of a key's schema that ``value`` fails, as jsonschema names the errors it reports
    for that key (a failing ``anyOf`` is one error, whichever branch failed how)."""
    schema = _resolve(schema)
    failed = []
    if schema.get("type") == "string" and not isinstance(value, str):
        failed.append("type")
    if "enum" in schema and not any(type(value) is type(m) and value == m for m in schema["enum"]):
        failed.append("enum")
    if "pattern" in schema and isinstance(value, str) and not _pattern(schema["pattern"]).search(value):
        failed.append("pattern")
    if "anyOf" in schema and not any(_accepts(s, value) for s in schema["anyOf"]):
        failed.append("anyOf")
    return failed


def _accepts(schema: dict[str, Any], value: object) -> bool:
    return not failed_keywords(schema, value)


@functools.cache
def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(text)


def _enum_members(schema: dict[str, Any]) -> tuple[str, ...]:
    schema = _resolve(schema)
    members = [m for m in schema.get("enum", ()) if isinstance(m, str)]
    for sub in schema.get("anyOf", ()):
        members.extend(_enum_members(sub))
    return tuple(members)


@functools.cache
def key_rules() -> dict[str, dict[str, KeyRule]]:
    """location -> key -> KeyRule, built once from the schema."""
    out: dict[str, dict[str, KeyRule]] = {}
    for location in LOCATIONS:
        props = label_schema()["properties"][location]["properties"]
        out[location] = {}
        for key, raw in props.items():
            schema = _resolve(raw)
            out[location][key] = KeyRule(
                location=location,
                key=key,
                schema=schema,
                applies_to=frozenset(schema.get("x-applies-to", ("vcjob", "acjob"))),
                expected=schema.get("x-expected", ""),
                enum=_enum_members(schema),
            )
    return out


# -- YAML values -------------------------------------------------------------------------------
def yaml_value(node: YNode) -> object:
    """A stand-in with the JSON type the API server would receive for this YAML node."""
    if isinstance(node, YMap):
        return {}
    if isinstance(node, YSeq):
        return []
    if node.tag == STR_TAG:
        return node.value
    kind = node.tag.rsplit(":", 1)[-1]
    if kind == "int":
        return 0
    if kind == "float":
        return 0.0
    if kind == "bool":
        return False
    if kind == "null":
        return None
    return node.value  # timestamps and other tags reach the API server as the text written


def _type_name(node: YNode) -> str:
    if isinstance(node, YMap):
        return "mapping"
    if isinstance(node, YSeq):
        return "sequence"
    return {"int": "integer", "float": "number", "bool": "boolean", "null": "null"}.get(
        node.tag.rsplit(":", 1)[-1], node.tag
    )


def _kind(doc: ManifestDoc) -> str | None:
    if doc.is_ascendjob:
        return "acjob"
    if doc.is_vcjob:
        return "vcjob"
    return None


_JOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: qwen3
  labels:
    framework: pytorch
    ring-controller.atlas: ascend-910b
    fault-scheduling: "grace"
    fault-retry-times: "10"
    pod-rescheduling: "on"
    process-recover-enable: "on"
    subHealthyStrategy: "ignore"
  annotations:
    wait-reschedule-timeout: "270"
    recover-strategy: "retry,recover,dump,exit,elastic-training"
spec:
  replicaSpecs:
    Master:
      replicas: 1
      template:
        metadata:
          labels:
            ring-controller.atlas: ascend-910b
        spec:
          containers:
          - name: ascend
            image: pytorch:latest
"""

_VCJOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: gpt
  labels:
    ring-controller.atlas: ascend-910b
    fault-scheduling: "grace"
spec:
  tasks:
  - name: default
    template:
      spec:
        containers:
        - name: train
          image: torch:latest
"""


class InvalidRecoveryLabel(Rule):
    code = "RL205"
    scorecard = MISCONFIGURED
    name = "invalid-recovery-label"
    phase = "rescheduling"
    severity = Severity.ERROR
    fix_availability = "sometimes"
    summary = "A recovery label or annotation has a value the scheduler or operator will reject or ignore"
    what = """
A fault-recovery label or annotation of a Volcano Job or AscendJob whose value is not one the
Volcano scheduler plugin or Ascend Operator accepts:
`fault-scheduling` not `grace`/`force`/`off`, `pod-rescheduling` not `on`/`off`,
`process-recover-enable` not `on`/`pause`/`off`, `recover-strategy` tokens outside
`retry`, `recover`, `recover-in-place`, `elastic-training`, `dump`, `exit` (comma-separated, no
spaces), `fault-retry-times` not an integer, `subHealthyStrategy` not
`ignore`/`graceExit`/`forceExit`/`hotSwitch` (and `hotSwitch` on a workload that is not an
AscendJob, where it does nothing), `ring-controller.atlas` (job or pod template) not a
known product family, an AscendJob `framework` label not `pytorch`/`mindspore`/`tensorflow`, an
AscendJob `wait-reschedule-timeout` outside 30..270, and any of these written as a YAML number,
boolean or null instead of a string (`fault-retry-times: 3`, or `pod-rescheduling: on`, which
YAML 1.1 reads as a boolean).

Only keys that apply are checked: labels under `metadata.labels`, annotations under
`metadata.annotations`, `framework` and `wait-reschedule-timeout` only on an AscendJob. The
allowed values, with their sources, are in `schemas/labels.schema.json`.
"""
    why = """
A misspelt value does not fail loudly. The scheduler plugin treats an unknown `fault-scheduling`
value as unsupported, so the job runs without resumable training; any `pod-rescheduling` value
other than `on` keeps Job-level rescheduling; Ascend Operator silently drops a `recover-strategy`
token it does not know (a space after a comma is enough). Every fault then costs a full job
restart, or a manual resubmission, instead of the recovery that was configured. A non-string
value is worse: Kubernetes stores labels and annotations as strings and the API server rejects the
whole manifest.
"""
    example = """
```yaml
metadata:
  labels:
    fault-scheduling: "Grace"     # RL205: only lower-case grace is accepted
    fault-retry-times: 3          # RL205: a YAML integer; the API server rejects it
    pod-rescheduling: on          # RL205: YAML 1.1 reads on as a boolean
```
Use instead:
```yaml
metadata:
  labels:
    fault-scheduling: "grace"
    fault-retry-times: "3"
    pod-rescheduling: "on"
```
"""
    fix = """
Safe when a non-string value is quoted (`3` becomes `"3"`, `on` becomes `"on"`): the text the user
wrote stays the same. Unsafe when a value that differs from an allowed one only by letter case is
rewritten to the allowed spelling (`Grace` to `grace`, `graceexit` to `graceExit`, keeping the quote
style): it changes a value set explicitly, and the job then behaves as that label asks, which it did
not before. Other invalid values (out-of-range numbers, unknown words, spaces in `recover-strategy`)
have no automatic fix: the intended value cannot be known.
"""
    sources = (
        "MindCluster docs: 06_api/15_yaml_configuration (acjob and vcjob label and annotation tables)",
        "MindCluster docs: api/volcano.md (fault-retry-times 0-100, subHealthyStrategy, PodGroup labels)",
        "MindCluster docs: 04_resumable_training/01_solutions_principles.md, 亚健康热切 使用约束 (只支持…acjob类型训练任务)",
        "ascend-for-volcano: rescheduling/type.go and util/type.go (accepted label values)",
        "ascend-operator: pkg/api/v1/defaults.go GetJobFramework; controllers/v1/env.go addEnvByStrategy",
        "Kubernetes API: ObjectMeta.labels and annotations are map[string]string",
    )
    cases = examples(
        lambda: (
            Case(
                title="hot switch on a Volcano Job does nothing",
                files={"job.yaml": _VCJOB.replace('"grace"\n', '"grace"\n    subHealthyStrategy: "hotSwitch"\n')},
                expect=("job.yaml:8:25",),
            ),
            Case(
                title="valid values of the current process-recovery sample",
                files={"job.yaml": _JOB},
            ),
            Case(
                title="a value that differs only by case",
                files={"job.yaml": _JOB.replace('fault-scheduling: "grace"', 'fault-scheduling: "Grace"')},
                expect=("job.yaml:8:23",),
                unsafe=True,
                fixed={"job.yaml": _JOB},
            ),
            Case(
                title="an unquoted integer is not a string",
                files={"job.yaml": _JOB.replace('fault-retry-times: "10"', "fault-retry-times: 10  # retries")},
                expect=("job.yaml:9:24",),
                fixed={"job.yaml": _JOB.replace('fault-retry-times: "10"', 'fault-retry-times: "10"  # retries')},
            ),
            Case(
                title="YAML 1.1 reads a plain on as a boolean, and ON differs by case too",
                files={
                    "job.yaml": _JOB.replace('pod-rescheduling: "on"', "pod-rescheduling: ON").replace(
                        'process-recover-enable: "on"', "process-recover-enable: on"
                    )
                },
                expect=("job.yaml:10:23", "job.yaml:11:29"),
                fixed={"job.yaml": _JOB},
            ),
            Case(
                title="camel-case values keep their allowed spelling",
                files={
                    "job.yaml": _JOB.replace('subHealthyStrategy: "ignore"', "subHealthyStrategy: graceexit").replace(
                        "    framework: pytorch\n", "    framework: PyTorch\n"
                    )
                },
                expect=("job.yaml:6:16", "job.yaml:12:25"),
                unsafe=True,
                fixed={"job.yaml": _JOB.replace('subHealthyStrategy: "ignore"', "subHealthyStrategy: graceExit")},
            ),
            Case(
                title="pod template ring-controller.atlas is checked too",
                files={
                    "job.yaml": _JOB.replace(
                        "            ring-controller.atlas: ascend-910b\n",
                        "            ring-controller.atlas: Ascend-910B\n",
                    )
                },
                expect=("job.yaml:23:36",),
                unsafe=True,
                fixed={"job.yaml": _JOB},
            ),
            Case(
                title="values without an automatic fix",
                files={
                    "job.yaml": _JOB.replace('fault-retry-times: "10"', 'fault-retry-times: "3 times"')
                    .replace('"retry,recover,dump,exit,elastic-training"', '"retry, recover"')
                    .replace('wait-reschedule-timeout: "270"', 'wait-reschedule-timeout: "300"')
                    .replace('pod-rescheduling: "on"', 'pod-rescheduling: "true"')
                },
                expect=("job.yaml:9", "job.yaml:10", "job.yaml:14", "job.yaml:15"),
                fixed={
                    "job.yaml": _JOB.replace('fault-retry-times: "10"', 'fault-retry-times: "3 times"')
                    .replace('"retry,recover,dump,exit,elastic-training"', '"retry, recover"')
                    .replace('wait-reschedule-timeout: "270"', 'wait-reschedule-timeout: "300"')
                    .replace('pod-rescheduling: "on"', 'pod-rescheduling: "true"')
                },
            ),
            Case(
                title="any integer is taken: the official MindIE sample retries 10000 times",
                files={"job.yaml": _JOB.replace('fault-retry-times: "10"', 'fault-retry-times: "10000"')},
            ),
            Case(
                title="an empty value",
                files={"job.yaml": _VCJOB.replace('fault-scheduling: "grace"', "fault-scheduling:")},
                expect=("job.yaml:7:5",),
            ),
            Case(
                title="a Volcano Job: framework is no label there and wait-reschedule-timeout is AscendJob-only",
                files={
                    "job.yaml": _VCJOB.replace(
                        '    fault-scheduling: "grace"\n',
                        '    fault-scheduling: "grace"\n    framework: PyTorch\n'
                        '  annotations:\n    wait-reschedule-timeout: "600"\n',
                    )
                },
            ),
            Case(
                title="a label written as an annotation is not checked as one",
                files={
                    "job.yaml": _VCJOB.replace(
                        '    fault-scheduling: "grace"\n',
                        '    fault-scheduling: "grace"\n  annotations:\n    pod-rescheduling: "yes"\n',
                    )
                },
            ),
            Case(
                title="a MindSpore job on a 910B platform with valid values",
                files={
                    "job.yaml": _JOB.replace("framework: pytorch", "framework: mindspore").replace(
                        "image: pytorch:latest", "image: mindspore:latest"
                    )
                },
            ),
            Case(
                title="the external prefixes the scheduler code knows",
                files={"job.yaml": _VCJOB.replace('fault-scheduling: "grace"', 'fault-scheduling: "external-grace"')},
            ),
            Case(
                title="not a training job",
                files={
                    "deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  labels:\n"
                    "    fault-retry-times: 3\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n"
                    "        image: i\n"
                },
            ),
        )
    )

    def check_job(self, job: Job):
        doc = job.manifest
        kind = _kind(doc) if doc is not None else None
        src = manifest_source(job)
        if doc is None or kind is None or src is None:
            return
        places: list[tuple[str, YMap | None]] = [("labels", doc.labels), ("annotations", doc.annotations)]
        places += [("podLabels", pod.labels) for pod in doc.pods]
        rules = key_rules()
        for location, mapping in places:
            if mapping is None:
                continue
            entries = [
                (k, v, rules[location][k.value])
                for k, v in mapping.items
                if k.value in rules[location] and kind in rules[location][k.value].applies_to
            ]
            for key, value, rule in entries:
                failed = failed_keywords(rule.schema, yaml_value(value))
                if failed:
                    yield self._finding(src, location, key, value, rule, failed)
        hot = doc.label("subHealthyStrategy")
        if hot is not None and hot.value == "hotSwitch" and not doc.is_ascendjob:
            yield self.report(
                hot.span,
                f"subHealthyStrategy: hotSwitch does nothing on a {doc.kind}: the docs support hot switch for AscendJob "
                "training jobs only (Ascend Operator brings up the standby Pod), so a sub-healthy node is not handled "
                "the way it was meant",
            )

    def _finding(self, src, location: str, key: YScalar, value: YNode, rule: KeyRule, failed: list[str]):
        where = LOCATIONS[location]
        span = value.span if value.span.end > value.span.start else key.span
        editable = isinstance(value, YScalar) and value.style not in ("|", ">")
        if "type" in failed:
            if isinstance(value, YScalar) and value.tag.endswith(":null"):
                return self.report(
                    span,
                    f"{where} {key.value} has no value (a YAML null, not a string); expected {rule.expected}; "
                    f"{_consequence(key.value)}",
                )
            text = value.value if isinstance(value, YScalar) else ""
            canonical = (rule.canonical(text) or text) if editable else None
            also = ""
            if editable and not rule.accepts(canonical):
                also = f"; as a string it would still not be accepted (expected {rule.expected})"
            fix = (
                safe_fix(f'Quote the value as "{canonical}"', replace_scalar(src, value, canonical))
                if editable
                else None
            )
            kind = _type_name(value)
            read_as = f"{text} is read as a YAML 1.1 boolean" if kind == "boolean" else f"{text} is a YAML {kind}"
            if not isinstance(value, YScalar):
                read_as = f"the value is a YAML {kind}"
            return self.report(
                span,
                f"{where} {key.value}: {read_as}, not a string; the API server rejects the manifest{also}",
                fix,
            )
        assert isinstance(value, YScalar)
        canonical = rule.canonical(value.value) if editable else None
        fix = None
        if canonical is not None and rule.accepts(canonical):
            fix = safe_fix(
                f"Write {canonical}",
                replace_scalar(src, value, canonical),
                overrides=f'{key.value} "{value.value}"',
            )
        hint = f" (did you mean {canonical}?)" if fix else ""
        return self.report(
            span,
            f'{where} {key.value} "{value.value}" is not accepted{hint}: expected {rule.expected}; '
            f"{_consequence(key.value)}",
            fix,
        )


def _consequence(key: str) -> str:
    return {
        "fault-scheduling": "the scheduler does not support the value and the job runs without resumable training",
        "pod-rescheduling": "any value other than on keeps Job-level rescheduling",
        "process-recover-enable": "process-level recovery is not switched the way it was meant",
        "fault-retry-times": "the Volcano plugin reads a value that is not a number as 0 (no unconditional retry), "
        "and on an AscendJob without spec.runPolicy.backoffLimit Ascend Operator fails to read it and never "
        "reconciles the job",
        "subHealthyStrategy": "sub-healthy nodes are not handled the way it was meant",
        "ring-controller.atlas": "the scheduler cannot tell which NPU product the job runs on",
        "framework": "Ascend Operator rejects the job",
        "recover-strategy": "Ascend Operator ignores every token it does not know",
        "wait-reschedule-timeout": "process-level rescheduling does not wait the time that was meant",
    }.get(key, "the value is not taken as written")
