"""Kubernetes job manifests: one located model per YAML document."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

import yaml

from ..lazyre import LazyPattern
from ..span import SourceText, Span
from .shell import ShellScript, inline_script_at, parse_detached, parse_embedded
from .yamlnodes import (
    MAX_EXPANDED,
    PLAIN,
    NodeConverter,
    YamlIssue,
    YamlTooLarge,
    YMap,
    YNode,
    YScalar,
    YSeq,
    expanded_size,
)

TEMPLATE_MARKERS = LazyPattern(r"\{\{-?\s|\{\{[.$a-zA-Z_]|\{%-?\s|\{#")
MAX_DOCUMENTS = 5_000


# the recover-strategy tokens that arm process-level recovery (Ascend Operator env.go addEnvByStrategy)
PROCESS_RECOVERY_STRATEGIES = frozenset({"retry", "recover", "recover-in-place", "elastic-training", "dump", "exit"})


# the only container of an AscendJob Pod whose environment Ascend Operator writes (api.DefaultContainerName;
# the YAML reference: "容器名称，当前必须为ascend")
OPERATOR_CONTAINER = "ascend"


@dataclass(slots=True)
class EnvVar:
    """One env entry of a container."""

    name: YScalar
    value: YScalar | None  # None for valueFrom or a missing value
    entry: YMap
    value_from: bool = False


@dataclass(slots=True)
class VolumeMount:
    """One volumeMounts entry of a container."""

    name: YScalar
    mount_path: YScalar | None
    entry: YMap


@dataclass(slots=True)
class Volume:
    """One volumes entry of a pod."""

    name: YScalar
    kind: str | None  # hostPath, nfs, configMap, emptyDir, ...
    path: YScalar | None  # hostPath.path / nfs.path
    config_map: YScalar | None
    entry: YMap


@dataclass(eq=False, repr=False)
class Container:
    """One container of a pod template: its command, args, env and mounts."""

    name: str | None
    node: YMap
    command: list[YScalar]
    args: list[YScalar]
    env: list[EnvVar]
    env_node: YSeq | None
    mounts: list[VolumeMount]
    mounts_node: YSeq | None
    resources: set[str]
    image: str | None = None
    working_dir: str | None = None
    script: ShellScript | None = None  # what ``bash -c TEXT`` runs, parsed with the manifest
    script_at: int | None = None  # where that TEXT is in ``argv``

    @property
    def argv(self) -> list[YScalar]:
        return self.command + self.args

    @property
    def name_span(self) -> Span:
        """Where the container is named (the container itself when it has no name)."""
        name = self.node.scalar("name")
        return name.span if name is not None else self.node.span


@dataclass(eq=False, repr=False)
class PodSpec:
    """A pod template inside a job: one vcjob task or one AscendJob replica type."""

    role: str  # task name or replica type (Master/Worker), "" for a plain pod spec
    node: YMap
    containers: list[Container]
    volumes: list[Volume]
    volumes_node: YSeq | None
    restart_policy: YScalar | None  # effective: on AscendJob only the replica-level one (None = Never)
    restart_policy_owner: YMap  # the mapping where restartPolicy lives / should be inserted
    replicas: int | None
    labels: YMap | None
    policies: list[Policy] = field(default_factory=list)  # a Volcano task's own lifecycle policies
    annotations: YMap | None = None  # the Pod template's
    policies_entry: tuple[YScalar, YNode] | None = None

    @property
    def main_containers(self) -> list[Container]:
        """The containers that run the Pod's work: ``containers``, not ``initContainers``."""
        listed = self.node.seq("containers")
        nodes = {id(m) for m in listed.maps()} if listed is not None else set()
        return [c for c in self.containers if id(c.node) in nodes]

    @property
    def host_network(self) -> YScalar | None:
        """``hostNetwork: true`` of the pod, where it is written; None when the pod has its own network."""
        value = self.node.scalar("hostNetwork")
        return value if value is not None and value.value.lower() == "true" else None


@dataclass
class Policy:
    """A Volcano lifecycle policy: ``event`` (or ``events``) and ``action``."""

    event: str | None
    action: str | None
    node: YMap
    events: tuple[str, ...] = ()

    def handles(self, event: str) -> bool:
        return self.event == event or event in self.events


@dataclass(eq=False, repr=False)
class ManifestDoc:
    """One YAML document of a manifest file, read as a Kubernetes or Volcano object."""

    path: str
    index: int  # 0-based document number in the file
    root: YMap
    api_version: str
    kind: str
    name: YScalar | None
    namespace: str  # "default" when the manifest sets none (see namespace_declared)
    metadata: YMap | None
    labels: YMap | None
    annotations: YMap | None
    pods: list[PodSpec]
    policies: list[Policy]
    policies_node: YSeq | None
    policies_entry: tuple[YScalar, YNode] | None
    span: Span
    namespace_declared: bool = True  # False: the namespace comes from `kubectl -n` (or is default)

    @property
    def job_name(self) -> str:
        return self.name.value if self.name else ""

    @property
    def identity(self) -> str:
        return f"{self.path}#{self.index + 1} {self.kind}/{self.namespace}/{self.job_name}"

    @property
    def is_vcjob(self) -> bool:
        return self.kind == "Job" and self.api_version.startswith("batch.volcano.sh/")

    @property
    def is_ascendjob(self) -> bool:
        return self.kind == "AscendJob"

    @property
    def is_training_job(self) -> bool:
        return self.is_vcjob or self.is_ascendjob

    @property
    def rank_table_written(self) -> bool:
        """Whether Ascend Operator writes this workload's rank table: an AscendJob, or a Volcano Job,
        Deployment or StatefulSet labelled ``ring-controller.atlas`` or with a volume named
        ``ranktable`` (ascend-operator pkg/ranktable/plugins.go ShouldGenerateRankTable)."""
        if self.is_ascendjob:
            return True
        if not (self.is_vcjob or (self.kind in ("Deployment", "StatefulSet") and self.api_version == "apps/v1")):
            return False
        return self.label("ring-controller.atlas") is not None or any(
            v.name.value == "ranktable" for pod in self.pods for v in pod.volumes
        )

    def label(self, key: str) -> YScalar | None:
        node = self.labels.get(key) if self.labels else None
        return node if isinstance(node, YScalar) else None

    def annotation(self, key: str) -> YScalar | None:
        node = self.annotations.get(key) if self.annotations else None
        return node if isinstance(node, YScalar) else None

    @property
    def hot_switch(self) -> YScalar | None:
        """The ``subHealthyStrategy: hotSwitch`` label of an AscendJob (the only workload the docs
        support hot switch on; Ascend Operator then sets HIGH_AVAILABILITY=recover, env.go
        addSubHealthyEnv), or None."""
        label = self.label("subHealthyStrategy") if self.is_ascendjob else None
        return label if label is not None and label.value == "hotSwitch" else None

    def scheduling_annotation(self, key: str) -> YScalar | None:
        """An annotation the Volcano plugin reads from the job or from its Pods (it copies these onto
        the PodGroup: ascend-for-volcano plugin/type.go annotationKeysForPodGroup): the job's own,
        else the first Pod template's that sets it."""
        found = self.annotation(key)
        for pod in self.pods:
            if found is not None:
                break
            node = pod.annotations.get(key) if pod.annotations else None
            found = node if isinstance(node, YScalar) else None
        return found

    @property
    def recover_strategy(self) -> YScalar | None:
        """The ``recover-strategy`` annotation that asks for process-level recovery: an AscendJob's only."""
        return self.annotation("recover-strategy") if self.is_ascendjob else None

    @property
    def asks_process_recovery(self) -> bool:
        """An AscendJob whose ``recover-strategy`` annotation asks for process-level recovery (it starts
        only once fault-scheduling is on). On any other workload it does nothing (MindCluster
        constraint), and the ``process-recover-enable`` label alone arms nothing: Ascend Operator sets it
        on the PodGroup from the annotation, and only the annotation brings the strategies and the
        environment."""
        strategy = self.recover_strategy
        strategies = set(strategy.value.replace(" ", "").split(",")) if strategy is not None else set()
        return bool(strategies & PROCESS_RECOVERY_STRATEGIES)

    def containers(self) -> list[tuple[PodSpec, Container]]:
        return [(pod, c) for pod in self.pods for c in pod.containers]

    def main_containers(self) -> list[tuple[PodSpec, Container]]:
        """The containers that run the Pods' work, not their initContainers."""
        return [(pod, c) for pod in self.pods for c in pod.main_containers]


@dataclass(eq=False, repr=False)
class ManifestFile:
    """A manifest file: its documents and the issues reading them."""

    source: SourceText
    docs: list[ManifestDoc] = field(default_factory=list)
    issues: list[YamlIssue] = field(default_factory=list)
    templated: Span | None = None  # first template marker, when the file was skipped
    is_kubernetes: bool = False
    documents: int = 0


def looks_templated(text: str) -> re.Match[str] | None:
    return TEMPLATE_MARKERS.search(text)


@lru_cache(maxsize=1)
def _loader() -> type:
    """libyaml's composer with a resolver that defers plain scalars' tags (``PLAIN``) to first use;
    PyYAML's pure SafeLoader when libyaml is missing."""
    try:
        from yaml.cyaml import CParser
    except ImportError:
        return yaml.SafeLoader
    from yaml.resolver import BaseResolver

    default = {yaml.SequenceNode: BaseResolver.DEFAULT_SEQUENCE_TAG, yaml.MappingNode: BaseResolver.DEFAULT_MAPPING_TAG}

    class FastLoader(CParser, BaseResolver):
        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            BaseResolver.__init__(self)

        def resolve(self, kind: type, value: object, implicit: tuple[bool, bool]) -> str:
            if kind is yaml.ScalarNode:
                return PLAIN if implicit[0] else BaseResolver.DEFAULT_SCALAR_TAG
            return default[kind]

    return FastLoader


def compose_documents(src: SourceText) -> tuple[list[YNode], list[YamlIssue]]:
    """Compose every document with libyaml; stops at the first syntax error, keeping the documents before it."""
    text = src.text
    # every leading BOM is skipped here: libyaml skips one at the start of what it is given and counts
    # its marks from after it, so a second BOM left in put every span one character early
    base = len(text) - len(text.lstrip("\ufeff"))
    conv = NodeConverter(src, base)
    nodes: list[YNode] = []
    loader = _loader()(text[base:])
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            if len(nodes) >= MAX_DOCUMENTS:
                line = src.span(min(node.start_mark.index + base, len(text))).line
                conv.issues.append(
                    YamlIssue(
                        src.span(0),
                        f"more than {MAX_DOCUMENTS} YAML documents; document {MAX_DOCUMENTS + 1} "
                        f"(line {line}) and the rest are not linted",
                        "too-large",
                    )
                )
                break
            conv.memo.clear()  # anchors are per document, and ids of the freed nodes of the last one get reused
            conv.aliased = False
            nodes.append(conv.convert(node))
            if conv.aliased and expanded_size(nodes[-1]) > MAX_EXPANDED:
                conv.issues.append(
                    YamlIssue(
                        src.span(nodes[-1].span.start),
                        f"YAML document {len(nodes)}: its aliases expand to more than {MAX_EXPANDED:,} nodes "
                        "(an alias bomb); read without expanding them",
                        "too-large",
                    )
                )
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        offset = (mark.index + base) if mark is not None else 0
        message = " ".join(p for p in (exc.context, exc.problem) if p) or "invalid YAML"
        if "tab" not in message and text[offset : offset + 1] == "\t":
            message += " (a tab: YAML indents with spaces, never tabs)"  # libyaml names no character here
        if "nesting depth" in message:  # newer libyaml builds stop deep nesting themselves
            conv.issues.append(YamlIssue(src.span(offset), f"document nested too deeply ({message})", "too-large"))
        else:
            conv.issues.append(YamlIssue(src.span(offset), f"YAML syntax error: {message}"))
    except yaml.YAMLError as exc:
        conv.issues.append(YamlIssue(src.span(0), f"YAML error: {exc}"))
    except YamlTooLarge as exc:
        conv.issues.append(YamlIssue(src.span(0), f"document refused: {exc}", "too-large"))
    except RecursionError:
        conv.issues.append(YamlIssue(src.span(0), "document nested too deeply", "too-large"))
    finally:
        loader.dispose()
    return nodes, conv.issues


def parse_manifest(src: SourceText) -> ManifestFile:
    result = ManifestFile(src)
    marker = looks_templated(src.text)
    if marker:
        result.templated = src.span(marker.start(), marker.end())
        result.is_kubernetes = bool(re.search(r"(?m)^\s*(apiVersion|kind)\s*:", src.text))
        return result
    nodes, issues = compose_documents(src)
    result.issues = issues
    result.documents = len(nodes)
    for index, node in enumerate(nodes):
        if not isinstance(node, YMap):
            continue
        api = node.text("apiVersion")
        kind = node.text("kind")
        if api is None or kind is None:
            continue
        result.is_kubernetes = True
        result.docs.append(build_doc(src.path, index, node, api, kind))
    if issues and not result.is_kubernetes:
        # a broken file is only ours to report if it reads as a manifest
        result.is_kubernetes = bool(re.search(r"(?m)^\s*(apiVersion|kind)\s*:", src.text))
    return result


def build_doc(path: str, index: int, root: YMap, api: str, kind: str) -> ManifestDoc:
    metadata = root.map("metadata")
    name = metadata.scalar("name") if metadata else None
    namespace = (metadata.text("namespace") if metadata else None) or "default"
    spec = root.map("spec")
    policies_node = spec.seq("policies") if spec else None
    return ManifestDoc(
        path=path,
        index=index,
        root=root,
        api_version=api,  # the same few words in every manifest: kept once
        kind=kind,
        name=name,
        namespace=namespace,
        metadata=metadata,
        labels=metadata.map("labels") if metadata else None,
        annotations=metadata.map("annotations") if metadata else None,
        pods=list(_pod_specs(kind, spec)) if spec else [],
        policies=[_policy(p) for p in policies_node.maps()] if policies_node else [],
        policies_node=policies_node,
        policies_entry=spec.entry("policies") if spec else None,
        span=root.span,
        namespace_declared=bool(metadata and metadata.text("namespace")),
    )


def _pod_specs(kind: str, spec: YMap):
    if kind == "Pod":
        yield _pod("", spec, None, None, None)
        return
    tasks = spec.seq("tasks")
    if tasks:
        for task in tasks.maps():
            template = task.map("template")
            if template and template.map("spec"):
                pod = _pod(
                    task.text("name") or "",
                    template.map("spec"),
                    None,
                    task.text("replicas"),
                    template.map("metadata"),
                )
                task_policies = task.seq("policies")
                pod.policies = [_policy(p) for p in task_policies.maps()] if task_policies else []
                pod.policies_entry = task.entry("policies")
                yield pod
    replica_specs = spec.map("replicaSpecs")
    if replica_specs:
        for role_key, replica in replica_specs.items:
            if not isinstance(replica, YMap):
                continue
            template = replica.map("template")
            if template and template.map("spec"):
                yield _pod(
                    role_key.value,
                    template.map("spec"),
                    replica,
                    replica.text("replicas"),
                    template.map("metadata"),
                )
    template = spec.map("template")
    if template and template.map("spec"):
        yield _pod("", template.map("spec"), None, spec.text("replicas"), template.map("metadata"))
    job_template = spec.map("jobTemplate")
    if job_template:
        inner = job_template.map("spec")
        tmpl = inner.map("template") if inner else None
        if tmpl and tmpl.map("spec"):
            yield _pod("", tmpl.map("spec"), None, None, tmpl.map("metadata"))


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _pod(role: str, pod: YMap, replica: YMap | None, replicas: str | None, meta: YMap | None) -> PodSpec:
    volumes_node = pod.seq("volumes")
    restart = None
    owner = pod
    if replica is not None:
        # the operator overwrites the pod template's restartPolicy with the replica's (default Never)
        restart, owner = replica.scalar("restartPolicy"), replica
    elif pod.scalar("restartPolicy"):
        restart = pod.scalar("restartPolicy")
    containers: list[Container] = []
    for key in ("initContainers", "containers"):
        seq = pod.seq(key)
        if seq:
            containers.extend(_container(c) for c in seq.maps())
    return PodSpec(
        role=role,
        node=pod,
        containers=containers,
        volumes=[_volume(v) for v in volumes_node.maps()] if volumes_node else [],
        volumes_node=volumes_node,
        restart_policy=restart,
        restart_policy_owner=owner,
        replicas=_int(replicas),
        labels=meta.map("labels") if meta else None,
        annotations=meta.map("annotations") if meta else None,
    )


def _words(node: YNode | None) -> list[YScalar]:
    if isinstance(node, YSeq):
        return [i for i in node.items if isinstance(i, YScalar) and not i.is_null]
    if isinstance(node, YScalar) and not node.is_null:
        return [node]
    return []


def scalar_script(scalar: YScalar) -> ShellScript:
    """Parse the shell script a scalar holds (a ``bash -c`` argument, a ConfigMap's data), in place
    in the manifest when its characters are the file's (a block, a quoted or plain scalar without
    escapes), else detached from it with every span on the scalar."""
    span = scalar.span
    src = span.source
    text = src.text
    if scalar.style in ("|", ">"):
        header_end = text.find("\n", span.start)
        start = header_end + 1 if header_end != -1 else span.start
        return parse_embedded(src, start, scalar.content_end, fold=scalar.style == ">")
    if scalar.style in ('"', "'"):
        inner = text[span.start + 1 : span.end - 1]
        if inner == scalar.value:
            return parse_embedded(src, span.start + 1, span.end - 1)
    elif text[span.start : span.end] == scalar.value:
        return parse_embedded(src, span.start, span.end)
    return parse_detached(src, scalar.value, span)


def _container(node: YMap) -> Container:
    env_node = node.seq("env")
    mounts_node = node.seq("volumeMounts")
    resources: set[str] = set()
    res = node.map("resources")
    if res:
        for part in ("requests", "limits"):
            m = res.map(part)
            if m:
                resources.update(k.value for k in m.key_nodes())
    command, args = _words(node.get("command")), _words(node.get("args"))
    # parsed here, not when the job is linked: a run parses files in a pool of processes, and links in one
    at = inline_script_at([a.value for a in command + args])
    return Container(
        name=node.text("name"),
        node=node,
        command=command,
        args=args,
        env=[_env(e) for e in env_node.maps() if e.scalar("name")] if env_node else [],
        env_node=env_node,
        mounts=[_mount(m) for m in mounts_node.maps() if m.scalar("name")] if mounts_node else [],
        mounts_node=mounts_node,
        resources=resources,
        image=node.text("image"),
        working_dir=node.text("workingDir"),
        script=scalar_script((command + args)[at]) if at is not None else None,
        script_at=at,
    )


def _env(entry: YMap) -> EnvVar:
    return EnvVar(entry.scalar("name"), entry.scalar("value"), entry, entry.get("valueFrom") is not None)


def _mount(entry: YMap) -> VolumeMount:
    return VolumeMount(entry.scalar("name"), entry.scalar("mountPath"), entry)


def _volume(entry: YMap) -> Volume:
    kind = path = config_map = None
    for k, v in entry.items:
        if k.value == "name":
            continue
        if isinstance(v, YMap):
            kind = k.value
            path = v.scalar("path")
            config_map = v.scalar("name") if k.value == "configMap" else None
            break
    name = entry.scalar("name") or YScalar("", "", None, entry.span)
    return Volume(name, kind, path, config_map, entry)


def _policy(node: YMap) -> Policy:
    events = node.seq("events")
    names = tuple(e.value for e in events.items if isinstance(e, YScalar)) if events else ()
    return Policy(node.text("event"), node.text("action"), node, names)
