"""What a manifest document says about its job: platform, framework, recovery level, the recovery
labels that do nothing, and the words that say what it runs."""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

from ..jobs import Launch
from ..roles import (
    Verdict,
    tokens,
)
from ..sources.manifest import ManifestDoc
from ..sources.shell import Command
from ..sources.yamlnodes import YScalar
from ..span import Span

if TYPE_CHECKING:
    from ..sources.python import PythonFile


# programs that only inspect a node: a job that runs nothing else trains nothing (environment
# checks such as mindcluster-deploy's env_validation jobs, which run `npu-smi info`)
UTILITIES = frozenset(
    {"npu-smi", "hccn_tool", "nvidia-smi", "sleep", "echo", "cat", "ls", "env", "printenv", "true", "hostname", "date"}
)


def utility_verdict(launches: list[Launch]) -> Verdict | None:
    """A job whose every container runs, in a command known statically, only node-inspection
    programs (no script, no launcher)."""
    programs: set[str] = set()
    for launch in launches:
        if launch.scripts or launch.commands or launch.inline is None:
            return None
        for event in launch.inline.events:
            if isinstance(event, Command):
                first = event.words[0].value if event.words else None
                if first is None:
                    return None
                programs.add(posixpath.basename(first))
    if not programs or not programs <= UTILITIES:
        return None
    return Verdict("utility", f"its containers run only {', '.join(sorted(programs))}: no training program")


def manifest_words(doc: ManifestDoc, launches: list[Launch]) -> set[str]:
    """Words of a manifest's names, labels, images and commands: what it says it runs."""
    words: set[str] = set()
    words |= tokens(doc.job_name)
    for node in (doc.labels, doc.annotations):
        if node is not None:
            for key, value in node.items:
                if key.value in ("app", "job", "jobName", "task", "type") and isinstance(value, YScalar):
                    words |= tokens(value.value)
    for pod, container in doc.containers():
        words |= tokens(pod.role)
        words |= tokens(container.name or "")
        words |= tokens((container.image or "").split(":")[0])
        for scalar in container.argv:
            for part in re.split(r"[\s;&|]+", scalar.value):
                words |= tokens(posixpath.basename(part))
        if pod.labels is not None:
            app = pod.labels.scalar("app")
            if app is not None:
                words |= tokens(app.value)
    for launch in launches:
        for script in launch.scripts:
            words |= tokens(posixpath.splitext(posixpath.basename(script.source.path))[0])
    return words


def ignored_recovery_labels(doc: ManifestDoc) -> list[tuple[Span, str]]:
    """Process-level recovery settings that do nothing: on a workload that is not an AscendJob, and the
    ``process-recover-enable`` label on an AscendJob without a ``recover-strategy`` annotation."""
    if doc.is_ascendjob:
        label = doc.label("process-recover-enable")
        if label is None or label.value != "on" or doc.annotation("recover-strategy") is not None:
            return []
        return [
            (
                label.span,
                'process-recover-enable: "on" arms nothing by itself: Ascend Operator and ClusterD act on the '
                "recover-strategy annotation (and set this label on the PodGroup themselves), which is missing",
            )
        ]
    found = [
        ("recover-strategy", doc.annotation("recover-strategy")),
        ("process-recover-enable", doc.label("process-recover-enable")),
    ]
    return [
        (node.span, f"{key} has no effect on a {doc.kind}: process-level recovery exists only for an AscendJob")
        for key, node in found
        if node is not None
    ]


# the device resource of the Atlas 350/850/950 series, whose label value is ascend-npu (DOMAIN.md:
# MindCluster's device names, default_name.go); huawei.com/Ascend910 covers 910, 910B and A3 alike
NPU_SERIES_RESOURCE = "huawei.com/npu"


def platform_of(doc: ManifestDoc) -> str | None:
    """The platform the manifest says: its ``ring-controller.atlas`` label (on the job or its Pod
    template), else ``ascend-npu`` for a job requesting the Atlas 350/850/950 device resource."""
    label = doc.label("ring-controller.atlas")
    if label:
        return label.value
    for pod in doc.pods:
        if pod.labels is not None:
            node = pod.labels.scalar("ring-controller.atlas")
            if node:
                return node.value
    if any(NPU_SERIES_RESOURCE in container.resources for _, container in doc.containers()):
        return "ascend-npu"
    return None


def framework_of(doc: ManifestDoc | None, launches: list[Launch], entries: list[PythonFile]) -> str | None:
    if doc is not None and doc.is_ascendjob:
        label = doc.label("framework")
        if label and label.value.lower() in ("pytorch", "mindspore", "tensorflow"):
            return label.value.lower()
    for launch in launches:
        if launch.container:
            for var in launch.container.env:
                if var.name.value == "framework" and var.value is not None:
                    return var.value.value.lower()
        for cmd in launch.commands:
            if cmd.launcher == "msrun":
                return "mindspore"
            if cmd.is_distributed:
                return "pytorch"
    for entry in entries:
        if entry.imports_module("torch", "torch_npu"):
            return "pytorch"
        if entry.imports_module("mindspore"):
            return "mindspore"
        if entry.imports_module("tensorflow"):
            return "tensorflow"
    return None


def recovery_level(doc: ManifestDoc) -> str | None:
    """The recovery level the cluster gives the job. Process-level rescheduling and recovery exist
    only for an AscendJob (MindCluster constraint): on any other workload their labels do nothing.
    None for a Deployment or StatefulSet: the resumable-training guide gives its levels for AscendJobs
    and Volcano Jobs only, so what it does with one is not known."""
    if doc.kind in ("Deployment", "StatefulSet"):
        return None
    fault = doc.label("fault-scheduling")
    value = fault.value if fault else ""
    if value not in ("grace", "force") and not value.startswith(("external-grace", "external-force")):
        return "none"
    if doc.asks_process_recovery:
        return "process"
    pod = doc.label("pod-rescheduling")
    if pod and pod.value == "on":
        return "pod"
    return "job"
