"""What Pod-level rescheduling needs, shared by RL202-RL204: where the MindCluster docs say it does not
apply or fails, and what a job must add before it works (labels, Volcano policies, TaskD).

Docs: MindCluster 04_resumable_training/01_solutions_principles (Pod-level rescheduling: constraints and
the supported products and frameworks) and 03_configuration/02_configuring_fault_handling_policies
(configuring Pod-level rescheduling: the TaskD patch in the image, ``taskd-port`` 9601 on every Pod,
the TaskD manager on rank 0, and no ``force`` with host network).
"""

from __future__ import annotations

from dataclasses import dataclass

from recovery_lint.diagnostics import Edit
from recovery_lint.edits import append_item, insert_sequence_entry, remove_block_keep_comments, remove_items
from recovery_lint.jobs import Job
from recovery_lint.sources.manifest import Container, ManifestDoc, Policy
from recovery_lint.sources.yamlnodes import YNode, YScalar, YSeq, content_end
from recovery_lint.span import SourceText

from ._ranktable import configmap_tables, replica_count

TASKD_PORT = 9601
TASKD_PORT_NAME = "taskd-port"


def not_applicable(job: Job) -> str | None:
    """Why Pod-level rescheduling cannot be advised for this job, or None."""
    doc = job.manifest
    if doc is None:
        return "no manifest"
    if replica_count(doc) <= 1:
        return "the job runs a single Pod: Pod-level rescheduling has nothing to keep running"
    framework = job.context.framework
    if framework == "tensorflow":
        return "the MindCluster docs list Pod-level rescheduling for PyTorch and MindSpore only"
    if framework == "mindspore" and job.context.platform == "ascend-npu":
        return "on Atlas 850/950 the MindCluster docs support Pod-level rescheduling for PyTorch only"
    return None


def host_network(doc: ManifestDoc) -> YScalar | None:
    for pod in doc.pods:
        node = pod.node.scalar("hostNetwork")
        if node is not None and node.value.lower() == "true":
            return node
    return None


def blockers(doc: ManifestDoc) -> list[str]:
    """What makes Pod-level rescheduling fail as the job is written (no fix adds it safely)."""
    out = []
    tables = configmap_tables(doc)
    if tables:
        out.append(
            f"the rank table comes from ConfigMap {tables[0][0].value}, with which the docs say Pod-level rescheduling "
            "may fail (use the shared file Ascend Operator writes, RL204)"
        )
    fault = doc.label("fault-scheduling")
    network = host_network(doc)
    if fault is not None and fault.value == "force" and network is not None:
        out.append('with fault-scheduling "force" the docs say Pods cannot use hostNetwork: true')
    return out


def missing_taskd(job: Job) -> list[str]:
    """TaskD pieces a PyTorch job needs for Pod-level rescheduling that the repository does not show."""
    if not job.context.pytorch:
        return []
    texts = [p.source.text for p in job.pin_files] + [s.source.text for s in job.scripts]
    out = []
    if not any("taskd.python.adaptor.patch" in t for t in texts):
        out.append(
            "the TaskD patch in the image (pip install taskd; import taskd.python.adaptor.patch in torch/distributed/run.py)"
        )
    if not any("start_taskd_manager" in t or "manager.py" in t for t in texts):
        out.append("the TaskD manager started on rank 0")
    return out


@dataclass(eq=False, repr=False)
class PolicyGroup:
    """One Volcano policy list (the job's or a task's) and the policies Pod-level rescheduling needs gone."""

    policies: list[Policy]
    entry: tuple[YScalar, YNode]
    where: str
    remove: list[Policy]


def policy_groups(doc: ManifestDoc) -> list[PolicyGroup]:
    """The Volcano policy lists of a job. Every policy goes, as the docs say, except the documented
    ``PodFailed -> Ignore`` of unconditional retry (``fault-retry-times`` above 0) and
    ``PodFailed -> RestartTask`` of ``huawei.com/recover_policy_path: pod``."""
    if not doc.is_vcjob:
        return []
    retry = doc.label("fault-retry-times")
    path = doc.scheduling_annotation("huawei.com/recover_policy_path")
    kept = set()
    if retry is not None and retry.value.strip().isdigit() and int(retry.value) > 0:
        kept.add(("PodFailed", "Ignore"))
    if path is not None and path.value == "pod":
        kept.add(("PodFailed", "RestartTask"))
    groups = [(doc.policies, doc.policies_entry, "spec.policies")]
    groups += [(pod.policies, pod.policies_entry, f"task {pod.role or '(unnamed)'} policies") for pod in doc.pods]
    return [
        PolicyGroup(
            policies, entry, where, [p for p in policies if not any(p.handles(e) and p.action == a for e, a in kept)]
        )
        for policies, entry, where in groups
        if entry is not None and policies
    ]


def _alone_on_line(src: SourceText, key: YScalar) -> bool:
    start = src.line_start(src.line_of(key.span.start))
    return not src.text[start : key.span.start].strip()


def policy_removal(src: SourceText, policies: list[Policy], remove: list[Policy], entry) -> list[Edit]:
    key, value = entry
    if len(remove) == len(policies) and _alone_on_line(src, key):
        return [remove_block_keep_comments(src, key.span.start, max(content_end(value), key.span.end))]
    if isinstance(value, YSeq) and not value.flow:
        return remove_items(src, value, [p.node for p in remove])
    return []


def taskd_port_edits(src: SourceText, doc: ManifestDoc) -> list[Edit] | None:
    """``containerPort: 9601, name: taskd-port`` for every training container that lacks it; None when
    a container's ports cannot be edited (a flow list)."""
    edits: list[Edit] = []
    for pod in doc.pods:
        for container in pod.containers:
            if has_taskd_port(container):
                continue
            fields = [("containerPort", str(TASKD_PORT)), ("name", TASKD_PORT_NAME)]
            ports = container.node.seq("ports")
            if ports is not None:
                if ports.flow:
                    return None
                edits.append(append_item(src, ports, fields))
            else:
                edits.append(insert_sequence_entry(src, container.node, "ports", fields))
    return edits


def has_taskd_port(container: Container) -> bool:
    ports = container.node.seq("ports")
    if ports is None:
        return False
    for item in ports.maps():
        if item.text("name") == TASKD_PORT_NAME or item.text("containerPort") == str(TASKD_PORT):
            return True
    return False
