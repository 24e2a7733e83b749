"""Seeded generator of a synthetic Ascend NPU training monorepo for the recovery-lint benchmark.

    python bench/generate.py OUT_DIR --artifacts N [--seed S]

Writes exactly N files (for N >= 1) under OUT_DIR/<team>/<job>/: a multi-document job manifest
(ConfigMap + Volcano Job, or AscendJob with Master/Worker replicas), scripts/train_start.sh sourcing
scripts/env.sh, train.py, requirements.txt and, for some jobs, a Dockerfile, extra Python modules and
a single-node debug manifest. About 60 % of the jobs carry one to three recovery-time faults.

Each job draws from its own random stream keyed by (seed, job index), so the same seed gives
byte-identical output and a smaller repository is a prefix of a larger one.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

FAULTY_JOB_RATE = 0.6
CRLF_FILE_RATE = 0.03

TEAMS = ("nlp", "cv", "speech", "multimodal", "recsys", "foundation")
NAMESPACES = ("default", "vcjob", "train", "team-a", "research")
LLM_MODELS = (
    "gpt3-13b",
    "llama2-7b",
    "llama2-70b",
    "qwen2-7b",
    "qwen3-32b",
    "mixtral-8x7b",
    "glm4-9b",
    "baichuan2-13b",
    "deepseek-7b",
)
CV_MODELS = ("resnet50", "vit-h14", "yolov5", "swin-base", "unet3d")
PURPOSES = ("pretrain", "sft", "finetune", "dpo", "eval", "ablation", "longrun")
RECOVER_STRATEGIES = (
    "retry,recover,dump,exit",
    "recover",
    "retry,recover",
    "recover-in-place",
    "retry,recover,dump,exit,elastic-training",
    "recover,dump",
)

# (torch, torch_npu releases newer than 6.0.RC3, older releases)
TORCH_LINES = (
    ("2.1.0", ("2.1.0.post10", "2.1.0.post12", "2.1.0.post13", "2.1.0.post17"), ("2.1.0.post8",)),
    ("2.3.1", ("2.3.1.post4", "2.3.1.post6"), ("2.3.1.post2",)),
    ("2.4.0", ("2.4.0.post2", "2.4.0.post4"), ("2.4.0",)),
    ("2.5.1", ("2.5.1", "2.5.1.post1"), ()),
    ("2.6.0", ("2.6.0", "2.6.0.post3"), ()),
)
TORCH_LINE_WEIGHTS = (55, 15, 15, 10, 5)
CANN_FOR_TORCH = {
    "2.1.0": "8.0.0",
    "2.3.1": "8.0.0",
    "2.4.0": "8.0.0",
    "2.5.1": "8.1.RC1",
    "2.6.0": "8.2.RC1",
}
OTHER_PINS = (
    "numpy==1.24.4",
    "pyyaml==6.0.1",
    "sentencepiece==0.2.0",
    "transformers==4.40.2",
    "decorator==5.1.1",
    "attrs==23.2.0",
    "psutil==5.9.8",
    "scipy==1.10.1",
    "absl-py==2.1.0",
    "cloudpickle==3.0.0",
    "ml-dtypes==0.4.0",
    "tornado==6.4",
    "einops==0.7.0",
    "regex==2024.4.28",
    "datasets==2.19.1",
    "tensorboard==2.16.2",
    "protobuf==4.25.3",
    "pillow==10.3.0",
)

RANKTABLE_MOUNTS = ("/user/serverid/devindex/config", "/user/mindx-dl/ranktable")


@dataclass
class JobSpec:
    """Everything the renderers need to write one job; faults are applied by mutating it."""

    index: int
    name: str
    team: str
    namespace: str
    model: str
    kind: str  # "acjob" | "vcjob"
    chip: str  # "ascend-910b" | "ascend-910"
    nodes: int
    npus_per_node: int
    level: str  # "job" | "pod" | "process"
    fault_scheduling: str | None
    fault_retry_times: str | None
    restart_policy: str
    vc_policy: str | None  # "restart-job" | "ignore" | None
    ranktable: str  # "configmap" | "operator" | "none"
    ranktable_volume: str
    ranktable_mount: str
    rank_table_file: str | None
    framework_label: bool
    recover_strategy: str | None
    ttp_env_port: int | None
    grace_period: int | None
    host_network: bool
    watchdog: str | None
    resume_mode: bool
    launcher: str  # "torch_npu_run" | "torchrun" | "launch" | "run"
    max_restarts: bool
    checkpoint: str  # "mindio_acp" | "torch"
    compile_mode: str | None  # "binary" | "cache" | "binary+cache" | None
    torch: str
    torch_npu: str
    npu_pin_name: str
    docker_torch_npu: str | None  # None: no Dockerfile
    with_ckpt_module: bool
    with_model_module: bool
    with_debug_manifest: bool
    comments: str  # "none" | "en" | "zh"
    seq_indent: bool
    extra_configmaps: int
    helper_count: int
    crlf_train_start: bool = False
    faults: list[str] = field(default_factory=list)

    @property
    def is_llm(self) -> bool:
        return self.model in LLM_MODELS


# --------------------------------------------------------------------------------------------
# Planning: a clean job, then faults


def plan_job(index: int, seed: int) -> tuple[JobSpec, random.Random]:
    """Draw one job; the returned stream continues into rendering so the whole job is seeded."""
    rng = random.Random(f"recovery-lint-bench:{seed}:{index}")
    spec = _clean_job(index, rng)
    if rng.random() < FAULTY_JOB_RATE:
        _inject_faults(spec, rng, rng.choice((1, 1, 1, 2, 2, 3)))
    return spec, rng


def _clean_job(index: int, rng: random.Random) -> JobSpec:
    team = rng.choice(TEAMS)
    model = rng.choice(CV_MODELS if team == "cv" else LLM_MODELS + CV_MODELS[:1])
    kind = "acjob" if rng.random() < 0.6 else "vcjob"
    chip = "ascend-910" if rng.random() < 0.2 else "ascend-910b"
    nodes = rng.choice((1, 2, 2, 4, 4, 8, 16, 32))
    npus = 8 if chip == "ascend-910" or nodes > 1 else rng.choice((1, 2, 4, 8))
    level = "process" if kind == "acjob" and rng.random() < 0.45 else "pod"
    fault_scheduling = "grace" if level == "process" or rng.random() < 0.7 else "force"
    retry = rng.choice(("3", "5", "10")) if level == "process" or rng.random() < 0.5 else None
    ranktable = "operator" if kind == "acjob" and rng.random() < 0.6 else "none"
    mount = rng.choice(RANKTABLE_MOUNTS)
    torch, good_npu, _old = rng.choices(TORCH_LINES, weights=TORCH_LINE_WEIGHTS)[0]
    torch_npu = rng.choice(good_npu)
    return JobSpec(
        index=index,
        name=f"{model}-{rng.choice(PURPOSES)}-{index:05d}",
        team=team,
        namespace=rng.choice(NAMESPACES),
        model=model,
        kind=kind,
        chip=chip,
        nodes=nodes,
        npus_per_node=npus,
        level=level,
        fault_scheduling=fault_scheduling,
        fault_retry_times=retry,
        restart_policy="Never",
        vc_policy=("ignore" if retry else None) if kind == "vcjob" else None,
        ranktable=ranktable,
        ranktable_volume="ranktable",
        ranktable_mount=mount,
        rank_table_file=f"{mount}/hccl.json" if ranktable != "none" else None,
        framework_label=True,
        recover_strategy=rng.choice(RECOVER_STRATEGIES) if level == "process" else None,
        ttp_env_port=8000 if level == "process" else None,
        grace_period=rng.choice((None, 300, 600, 840)) if fault_scheduling == "grace" else None,
        host_network=rng.random() < 0.5,
        watchdog="0" if level == "process" else rng.choice(("1", None)),
        resume_mode=True,
        launcher="torch_npu_run",
        max_restarts=True,
        checkpoint="mindio_acp",
        compile_mode="cache" if rng.random() < 0.15 else "binary",
        torch=torch,
        torch_npu=torch_npu,
        npu_pin_name=rng.choice(("torch-npu", "torch_npu")),
        docker_torch_npu=torch_npu if rng.random() < 0.4 else None,
        with_ckpt_module=rng.random() < 0.3,
        with_model_module=rng.random() < 0.3,
        with_debug_manifest=rng.random() < 0.15,
        comments=rng.choices(("none", "en", "zh"), weights=(45, 40, 15))[0],
        seq_indent=rng.random() < 0.5,
        extra_configmaps=rng.choice((0, 0, 1, 1, 2)),
        helper_count=rng.choice((0, 1, 2, 3, 5, 8, 12)),
    )


@dataclass(frozen=True)
class Fault:
    name: str
    applies: Callable[[JobSpec], bool]
    apply: Callable[[JobSpec, random.Random], None]


def _set(**changes: object) -> Callable[[JobSpec, random.Random], None]:
    def apply(spec: JobSpec, _rng: random.Random) -> None:
        for key, value in changes.items():
            setattr(spec, key, value)

    return apply


def _always(_spec: JobSpec) -> bool:
    return True


def _older_torch_npu(spec: JobSpec, rng: random.Random) -> None:
    old = next(line[2] for line in TORCH_LINES if line[0] == spec.torch)
    spec.torch_npu = rng.choice(old)
    if spec.docker_torch_npu is not None:
        spec.docker_torch_npu = spec.torch_npu


def _legacy_launcher(spec: JobSpec, rng: random.Random) -> None:
    spec.launcher = rng.choice(("torchrun", "torchrun", "launch", "run"))


def _mismatched_rank_table_file(spec: JobSpec, _rng: random.Random) -> None:
    other = next(m for m in RANKTABLE_MOUNTS if m != spec.ranktable_mount)
    spec.rank_table_file = f"{other}/hccl.json"


def _configmap_ranktable(spec: JobSpec, _rng: random.Random) -> None:
    spec.ranktable = "configmap"
    spec.ranktable_mount = RANKTABLE_MOUNTS[0]
    spec.rank_table_file = f"{RANKTABLE_MOUNTS[0]}/hccl.json"


def _dockerfile_pin_drift(spec: JobSpec, _rng: random.Random) -> None:
    line = next(line for line in TORCH_LINES if line[0] == spec.torch)
    choices = [v for v in line[1] + line[2] if v != spec.torch_npu]
    spec.docker_torch_npu = choices[0]


FAULTS: tuple[Fault, ...] = (
    Fault("no-fault-scheduling", _always, _set(fault_scheduling=None, grace_period=None)),
    Fault("fault-scheduling-off", _always, _set(fault_scheduling="off", grace_period=None)),
    Fault("fault-scheduling-typo", _always, _set(fault_scheduling="Grace")),
    Fault("job-level-rescheduling", lambda s: s.level == "pod", _set(level="job", max_restarts=False)),
    Fault("acjob-without-framework", lambda s: s.kind == "acjob", _set(framework_label=False)),
    Fault("retry-with-onfailure", _always, _set(fault_retry_times="3", restart_policy="OnFailure")),
    Fault("retry-times-out-of-range", lambda s: s.fault_retry_times is not None, _set(fault_retry_times="150")),
    Fault(
        "configmap-ranktable-with-pod-rescheduling",
        lambda s: s.kind == "vcjob" and s.level == "pod",
        _configmap_ranktable,
    ),
    Fault(
        "restartjob-policy-with-pod-rescheduling",
        lambda s: s.kind == "vcjob" and s.level == "pod",
        _set(vc_policy="restart-job"),
    ),
    Fault("ranktable-volume-misnamed", lambda s: s.ranktable == "operator", _set(ranktable_volume="rank-table")),
    Fault("rank-table-file-mismatch", lambda s: s.ranktable == "operator", _mismatched_rank_table_file),
    Fault("ttp-port-mismatch", lambda s: s.level == "process", _set(ttp_env_port=8001)),
    Fault("grace-period-too-long", lambda s: s.fault_scheduling == "grace", _set(grace_period=1200)),
    Fault("watchdog-disabled", lambda s: s.level != "process", _set(watchdog="0")),
    Fault("watchdog-on-with-process-recovery", lambda s: s.level == "process", _set(watchdog="1")),
    Fault("recover-strategy-typo", lambda s: s.level == "process", _set(recover_strategy="retry,recovr,dump")),
    Fault("no-resume-mode", _always, _set(resume_mode=False)),
    Fault("legacy-launcher", lambda s: s.launcher == "torch_npu_run", _legacy_launcher),
    Fault("torch-npu-too-old", lambda s: s.torch in ("2.1.0", "2.3.1", "2.4.0"), _older_torch_npu),
    Fault("torch-save-checkpoint", _always, _set(checkpoint="torch")),
    Fault("no-binary-compile-mode", _always, _set(compile_mode=None)),
    Fault("binary-and-compile-cache", _always, _set(compile_mode="binary+cache")),
    Fault("no-max-restarts", lambda s: s.level in ("pod", "process"), _set(max_restarts=False)),
    Fault("dockerfile-pin-drift", lambda s: s.docker_torch_npu is not None, _dockerfile_pin_drift),
    Fault("crlf-launch-script", _always, _set(crlf_train_start=True)),
)


def _inject_faults(spec: JobSpec, rng: random.Random, count: int) -> None:
    for _ in range(count):
        candidates = [f for f in FAULTS if f.name not in spec.faults and f.applies(spec)]
        if not candidates:
            return
        fault = rng.choice(candidates)
        fault.apply(spec, rng)
        spec.faults.append(fault.name)


# --------------------------------------------------------------------------------------------
# Small text helpers


def fill(template: str, **values: object) -> str:
    """Replace @key@ tokens; shell and Python code keep their own braces and dollars untouched."""
    for key, value in values.items():
        template = template.replace(f"@{key}@", str(value))
    return template


NOTES: dict[str, tuple[str, str]] = {
    "apiVersion": ("Volcano batch API, keep as is", "使用Volcano批处理API，请勿修改"),
    "configmap": ("name must be rings-config-<job name>", "名称须为rings-config-<任务名>"),
    "ring": ("same value as the pod template label", "与Pod模板中的标签保持一致"),
    "fault-scheduling": ("delete faulty pods gracefully, then reschedule", "故障时先优雅删除Pod再重调度"),
    "pod-rescheduling": ("reschedule only the faulty pod", "仅重调度故障Pod"),
    "fault-retry-times": ("unconditional retries on service-plane faults", "业务面故障无条件重试次数"),
    "recover-strategy": ("process-level recovery strategies", "进程级恢复策略"),
    "policy": ("match the chip topology of the job", "按任务的芯片拓扑配置"),
    "scheduler": ("effective with gang scheduling", "开启gang调度时生效"),
    "minAvailable": ("equals the number of nodes", "与节点数一致"),
    "replicas": ("number of nodes", "节点数量"),
    "maxRetry": ("reschedule budget of the job", "任务重调度次数上限"),
    "container": ("do not rename", "请勿修改"),
    "image": ("training image, change as needed", "训练镜像，可按需修改"),
    "command": ("entry command of the training container", "训练容器启动命令"),
    "npu": ("NPUs per node; requests must equal limits", "每节点NPU数量，requests须与limits一致"),
    "ranktable": ("name checked by Ascend Operator, do not change", "名称由Ascend Operator校验，请勿修改"),
    "ranktable-path": ("<shared dir>/<namespace>.<job name>", "<共享目录>/<命名空间>.<任务名>"),
    "grace-period": ("keep below grace-over-time", "须小于grace-over-time"),
    "nfs": ("shared storage server", "共享存储服务器地址"),
    "hostNetwork": ("pods use the node network", "Pod使用主机网络"),
    "visible": ("must match resources.requests", "须与resources.requests一致"),
    "ttp": ("MindIO TTP controller port", "MindIO TTP控制器端口"),
    "taskd": ("TaskD manager port", "TaskD管理端口"),
}


class YamlText:
    """Writes YAML line by line so that comments and list indentation vary like hand-edited files."""

    def __init__(self, rng: random.Random, comments: str, seq_indent: bool) -> None:
        self._rng = rng
        self._comments = comments
        self._seq_indent = seq_indent
        self._lines: list[str] = []

    def line(self, depth: int, text: str, note: str | None = None) -> None:
        out = "  " * depth + text
        if note and self._comments != "none" and self._rng.random() < 0.6:
            pad = max(2, 44 - len(out)) if self._rng.random() < 0.5 else 2
            out = f"{out}{' ' * pad}# {self._note_text(note)}"
        self._lines.append(out)

    def remark(self, depth: int, note: str) -> None:
        if self._comments != "none" and self._rng.random() < 0.3:
            self._lines.append("  " * depth + "# " + self._note_text(note))

    def item_depth(self, key_depth: int) -> int:
        """Depth of the '- ' of a list under a key at key_depth."""
        return key_depth + 1 if self._seq_indent else key_depth

    def text(self) -> str:
        return "\n".join(self._lines) + "\n"

    def _note_text(self, note: str) -> str:
        en, zh = NOTES.get(note, (note, note))
        return zh if self._comments == "zh" else en


# --------------------------------------------------------------------------------------------
# Manifests


def render_manifest(spec: JobSpec, rng: random.Random) -> str:
    docs = _support_documents(spec, rng)
    job = _acjob_document(spec, rng) if spec.kind == "acjob" else _vcjob_document(spec, rng)
    if rng.random() < 0.8:
        docs.append(job)
    else:
        docs.insert(0, job)
    header = ""
    if spec.comments != "none":
        header = f"# {spec.name}: {spec.model} {spec.nodes}x{spec.npus_per_node} NPUs, owner team {spec.team}\n"
    lead = "---\n" if rng.random() < 0.2 else ""
    return header + lead + "---\n".join(docs)


def _support_documents(spec: JobSpec, rng: random.Random) -> list[str]:
    docs: list[str] = []
    if spec.ranktable == "configmap":
        docs.append(_rings_configmap(spec, rng))
    if spec.kind == "acjob" and spec.fault_scheduling == "grace" and rng.random() < 0.5:
        docs.append(_reset_configmap(spec, rng))
    # 2–4 documents in all, the job included
    for i in range(max(0, 1 + spec.extra_configmaps - len(docs))):
        docs.append(_train_configmap(spec, rng, i))
    return docs


def _configmap_head(doc: YamlText, name: str, spec: JobSpec, note: str | None = None) -> None:
    doc.line(0, "apiVersion: v1")
    doc.line(0, "kind: ConfigMap")
    doc.line(0, "metadata:")
    doc.line(1, f"name: {name}", note)
    doc.line(1, f"namespace: {spec.namespace}")


def _rings_configmap(spec: JobSpec, rng: random.Random) -> str:
    doc = YamlText(rng, spec.comments, spec.seq_indent)
    _configmap_head(doc, f"rings-config-{spec.name}", spec, "configmap")
    doc.line(1, "labels:")
    doc.line(2, f"ring-controller.atlas: {spec.chip}", "ring")
    doc.line(0, "data:")
    doc.line(1, "hccl.json: |")
    doc.line(2, "{")
    doc.line(4, '"status":"initializing"')
    doc.line(2, "}")
    return doc.text()


def _reset_configmap(spec: JobSpec, rng: random.Random) -> str:
    doc = YamlText(rng, spec.comments, spec.seq_indent)
    _configmap_head(doc, f"reset-config-{spec.name}", spec)
    doc.line(1, "labels:")
    doc.line(2, 'reset: "true"')
    doc.line(0, "data:")
    doc.line(1, "reset.json: |")
    doc.line(2, "{")
    doc.line(4, '"status":"initializing"')
    doc.line(2, "}")
    doc.line(1, 'checkCode: ""')
    return doc.text()


def _train_configmap(spec: JobSpec, rng: random.Random, serial: int) -> str:
    doc = YamlText(rng, spec.comments, spec.seq_indent)
    _configmap_head(doc, f"{spec.name}-params-{serial}", spec)
    doc.line(1, "labels:")
    doc.line(2, f"app: {spec.model}")
    doc.line(2, f"team: {spec.team}")
    doc.line(0, "data:")
    doc.line(1, "train.yaml: |")
    for section in rng.sample(("optimizer", "data", "model", "logging", "checkpoint", "schedule"), k=rng.randint(2, 5)):
        doc.line(2, f"{section}:")
        for key in rng.sample(
            (
                "lr",
                "warmup",
                "decay",
                "seed",
                "batch_size",
                "workers",
                "interval",
                "keep_last",
                "path",
                "dtype",
                "layers",
                "heads",
                "dropout",
            ),
            k=rng.randint(2, 6),
        ):
            doc.line(3, f"{key}: {_param_value(key, rng)}")
    doc.line(1, f'LOG_LEVEL: "{rng.choice(("INFO", "DEBUG", "WARNING"))}"')
    return doc.text()


def _param_value(key: str, rng: random.Random) -> str:
    if key in ("path",):
        return f"/job/output/{rng.choice(('ckpt', 'logs', 'cache'))}"
    if key == "dtype":
        return rng.choice(("bf16", "fp16", "fp32"))
    if key in ("lr", "decay", "dropout"):
        return f"{rng.choice((1, 2, 3, 5))}.0e-{rng.randint(1, 6)}"
    return str(rng.choice((1, 2, 4, 8, 16, 32, 100, 500, 1000, 2000)))


def _job_labels(doc: YamlText, spec: JobSpec) -> None:
    doc.line(1, "labels:")
    if spec.kind == "acjob" and spec.framework_label:
        doc.line(2, "framework: pytorch")
    doc.line(2, f"ring-controller.atlas: {spec.chip}", "ring")
    if spec.fault_scheduling is not None:
        doc.line(2, f'fault-scheduling: "{spec.fault_scheduling}"', "fault-scheduling")
    if spec.fault_retry_times is not None:
        doc.line(2, f'fault-retry-times: "{spec.fault_retry_times}"', "fault-retry-times")
    if spec.level in ("pod", "process"):
        doc.line(2, 'pod-rescheduling: "on"', "pod-rescheduling")
    if spec.level == "process":
        doc.line(2, 'process-recover-enable: "on"')
    if spec.kind == "acjob":
        doc.line(2, 'tor-affinity: "null"')
    if spec.index % 3 == 0:
        doc.line(2, 'subHealthyStrategy: "ignore"')


def _job_annotations(doc: YamlText, spec: JobSpec, rng: random.Random) -> None:
    entries: list[tuple[str, str | None]] = []
    if spec.npus_per_node == 8 and rng.random() < 0.7:
        entries.append(('huawei.com/schedule_policy: "chip8-node8"', "policy"))
    if spec.recover_strategy is not None:
        entries.append((f'recover-strategy: "{spec.recover_strategy}"', "recover-strategy"))
        entries.append(('wait-reschedule-timeout: "270"', None))
    if not entries:
        return
    doc.line(1, "annotations:")
    for text, note in entries:
        doc.line(2, text, note)


def _vcjob_document(spec: JobSpec, rng: random.Random) -> str:
    doc = YamlText(rng, spec.comments, spec.seq_indent)
    doc.line(0, "apiVersion: batch.volcano.sh/v1alpha1", "apiVersion")
    doc.line(0, "kind: Job")
    doc.line(0, "metadata:")
    doc.line(1, f"name: {spec.name}")
    doc.line(1, f"namespace: {spec.namespace}")
    _job_labels(doc, spec)
    _job_annotations(doc, spec, rng)
    doc.line(0, "spec:")
    doc.line(1, f"minAvailable: {spec.nodes}", "minAvailable")
    doc.line(1, "schedulerName: volcano")
    if spec.vc_policy is not None:
        event, action = ("PodEvicted", "RestartJob") if spec.vc_policy == "restart-job" else ("PodFailed", "Ignore")
        doc.line(1, "policies:")
        doc.line(doc.item_depth(1), f"- event: {event}")
        doc.line(doc.item_depth(1) + 1, f"action: {action}")
    doc.line(1, "plugins:")
    for plugin in ("ssh", "env", "svc"):
        doc.line(2, f"{plugin}: []")
    doc.line(1, f"maxRetry: {rng.choice((3, 3, 5, 10))}", "maxRetry")
    doc.line(1, "queue: default")
    doc.line(1, "tasks:")
    task = doc.item_depth(1)
    doc.line(task, '- name: "worker"')
    doc.line(task + 1, f"replicas: {spec.nodes}", "replicas")
    doc.line(task + 1, "template:")
    _template_metadata(doc, task + 2, spec, app=True)
    doc.line(task + 2, "spec:")
    _pod_spec(doc, task + 3, spec, rng, restart_policy=spec.restart_policy)
    return doc.text()


def _acjob_document(spec: JobSpec, rng: random.Random) -> str:
    doc = YamlText(rng, spec.comments, spec.seq_indent)
    doc.line(0, "apiVersion: mindxdl.gitee.com/v1")
    doc.line(0, "kind: AscendJob")
    doc.line(0, "metadata:")
    doc.line(1, f"name: {spec.name}")
    doc.line(1, f"namespace: {spec.namespace}")
    _job_labels(doc, spec)
    _job_annotations(doc, spec, rng)
    doc.line(0, "spec:")
    doc.line(1, "schedulerName: volcano", "scheduler")
    doc.line(1, "runPolicy:")
    if rng.random() < 0.4:
        doc.line(2, f"backoffLimit: {rng.choice((3, 5, 10))}")
    doc.line(2, "schedulingPolicy:", "scheduler")
    doc.line(3, f"minAvailable: {spec.nodes}", "minAvailable")
    doc.line(3, "queue: default")
    doc.line(1, "successPolicy: AllWorkers")
    doc.line(1, "replicaSpecs:")
    roles = [("Master", 1)] + ([("Worker", spec.nodes - 1)] if spec.nodes > 1 else [])
    for role, replicas in roles:
        doc.line(2, f"{role}:")
        doc.line(3, f"replicas: {replicas}", "replicas")
        doc.line(3, f"restartPolicy: {spec.restart_policy}")
        doc.line(3, "template:")
        _template_metadata(doc, 4, spec, app=False)
        doc.line(4, "spec:")
        _pod_spec(doc, 5, spec, rng, restart_policy=None)
    return doc.text()


def _template_metadata(doc: YamlText, depth: int, spec: JobSpec, app: bool) -> None:
    doc.line(depth, "metadata:")
    doc.line(depth + 1, "labels:")
    if app:
        doc.line(depth + 2, "app: pytorch")
    doc.line(depth + 2, f"ring-controller.atlas: {spec.chip}", "ring")


def _pod_spec(doc: YamlText, depth: int, spec: JobSpec, rng: random.Random, restart_policy: str | None) -> None:
    if spec.grace_period is not None:
        doc.line(depth, f"terminationGracePeriodSeconds: {spec.grace_period}", "grace-period")
    if spec.kind == "acjob":
        doc.line(depth, "automountServiceAccountToken: false")
    if spec.nodes > 1 and rng.random() < 0.6:
        _anti_affinity(doc, depth, spec)
    if spec.host_network:
        doc.line(depth, "hostNetwork: true", "hostNetwork")
    doc.line(depth, "containers:")
    _container(doc, doc.item_depth(depth), spec, rng)
    if rng.random() < 0.5:
        doc.line(depth, "nodeSelector:")
        doc.line(depth + 1, f"host-arch: {rng.choice(('huawei-arm', 'huawei-x86'))}")
        accel = "module-910b-8" if spec.chip == "ascend-910b" else "module"
        doc.line(depth + 1, f"accelerator-type: {accel}")
    _volumes(doc, depth, spec, rng)
    if restart_policy is not None:
        doc.line(depth, f"restartPolicy: {restart_policy}")


def _anti_affinity(doc: YamlText, depth: int, spec: JobSpec) -> None:
    key = "job-name" if spec.kind == "acjob" else "volcano.sh/job-name"
    doc.line(depth, "affinity:")
    doc.line(depth + 1, "podAntiAffinity:")
    doc.line(depth + 2, "requiredDuringSchedulingIgnoredDuringExecution:")
    doc.line(depth + 3, "- labelSelector:")
    doc.line(depth + 5, "matchExpressions:")
    doc.line(depth + 7, f"- key: {key}")
    doc.line(depth + 8, "operator: In")
    doc.line(depth + 8, "values:")
    doc.line(depth + 9, f"- {spec.name}")
    doc.line(depth + 4, "topologyKey: kubernetes.io/hostname")


def _container(doc: YamlText, depth: int, spec: JobSpec, rng: random.Random) -> None:
    image = f"registry.local/{spec.team}/pytorch-npu:{spec.torch}-cann{CANN_FOR_TORCH[spec.torch]}"
    inner = depth + 1
    if spec.kind == "acjob":
        doc.line(depth, "- name: ascend", "container")
        doc.line(inner, f"image: {image}", "image")
    else:
        doc.line(depth, f"- image: {image}", "image")
        doc.line(inner, "name: pytorch")
    doc.line(inner, "imagePullPolicy: IfNotPresent")
    _container_env(doc, inner, spec, rng)
    _container_command(doc, inner, spec, rng)
    _container_ports(doc, inner, spec)
    _container_resources(doc, inner, spec, rng)
    _volume_mounts(doc, inner, spec)


def _env_from_field(doc: YamlText, depth: int, name: str, path: str, note: str | None = None) -> None:
    doc.line(depth, f"- name: {name}")
    doc.line(depth + 1, "valueFrom:")
    doc.line(depth + 2, "fieldRef:")
    doc.line(depth + 3, f"fieldPath: {path}", note)


def _env_value(doc: YamlText, depth: int, name: str, value: str) -> None:
    doc.line(depth, f"- name: {name}")
    doc.line(depth + 1, f'value: "{value}"')


EXTRA_ENV = (
    ("PYTHONUNBUFFERED", "1"),
    ("TZ", "Asia/Shanghai"),
    ("LOG_LEVEL", "INFO"),
    ("HCCL_CONNECT_TIMEOUT", "1800"),
    ("WANDB_MODE", "offline"),
    ("DATA_ROOT", "/job/data"),
    ("OMP_NUM_THREADS", "8"),
)


def _container_env(doc: YamlText, depth: int, spec: JobSpec, rng: random.Random) -> None:
    doc.line(depth, "env:")
    item = doc.item_depth(depth)
    if spec.kind == "vcjob":
        _env_from_field(doc, item, spec.name, "metadata.name")
    _env_from_field(doc, item, "XDL_IP", "status.hostIP")
    if spec.ranktable == "operator":
        _env_from_field(doc, item, "POD_UID", "metadata.uid")
    if spec.level == "process":
        _env_from_field(doc, item, "POD_IP", "status.podIP")
    if spec.kind == "vcjob":
        _env_value(doc, item, "framework", "PyTorch")
    doc.remark(item, "visible")
    _env_from_field(doc, item, "ASCEND_VISIBLE_DEVICES", "metadata.annotations['huawei.com/Ascend910']", "visible")
    if spec.ttp_env_port is not None:
        _env_value(doc, item, "TTP_PORT", str(spec.ttp_env_port))
    if spec.host_network and rng.random() < 0.5:
        _env_from_field(doc, item, "HCCL_IF_IP", "status.hostIP")
    for name, value in rng.sample(EXTRA_ENV, k=rng.randint(0, 4)):
        _env_value(doc, item, name, value)


def _train_args(spec: JobSpec, rng: random.Random) -> str:
    if spec.is_llm:
        args = [
            f"--num-layers={rng.choice((24, 32, 40, 60, 80))}",
            f"--hidden-size={rng.choice((2048, 4096, 5120, 8192))}",
            f"--num-attention-heads={rng.choice((16, 32, 40, 64))}",
            f"--micro-batch-size={rng.choice((1, 2, 4))}",
            f"--global-batch-size={rng.choice((64, 128, 256, 512))}",
            f"--seq-length={rng.choice((2048, 4096, 8192))}",
            f"--train-iters={rng.choice((5000, 20000, 100000))}",
            "--save=/job/output/ckpt",
            "--load=/job/output/ckpt",
            f"--tensor-model-parallel-size={rng.choice((1, 2, 4, 8))}",
            f"--lr={rng.choice((1, 3, 6))}.0e-5",
            "--bf16",
        ]
        extra = [
            "--use-distributed-optimizer",
            "--recompute-granularity=full",
            "--log-interval=1",
            "--save-interval=1000",
            "--eval-interval=500",
            "--clip-grad=1.0",
            "--weight-decay=0.1",
        ]
    else:
        args = [
            "--data=/job/data/imagenet",
            f"--arch={spec.model.replace('-', '_')}",
            f"--epochs={rng.choice((30, 90, 120))}",
            f"--batch-size={rng.choice((256, 512, 1024))}",
            f"--lr={rng.choice((0.1, 0.8, 1.6))}",
            "--save=/job/output/ckpt",
        ]
        extra = ["--amp", "--seed=49", "-j=64", "--print-freq=50", "--label-smoothing=0.1"]
    return " ".join(args + rng.sample(extra, k=rng.randint(0, len(extra))))


def _container_command(doc: YamlText, depth: int, spec: JobSpec, rng: random.Random) -> None:
    script = f"cd /job/code; bash scripts/train_start.sh /job/code /job/output train.py {_train_args(spec, rng)}"
    if rng.random() < 0.3:
        script = script.replace("cd /job/code; ", "cd /job/code; chmod +x scripts/train_start.sh; ")
    style = rng.randrange(3)
    item = doc.item_depth(depth)
    if style == 0:
        doc.line(depth, "command:", "command")
        doc.line(item, "- /bin/bash")
        doc.line(item, "- -c")
        doc.line(depth, f'args: [ "{script}" ]')
    elif style == 1:
        doc.line(depth, "command:", "command")
        doc.line(item, '- "/bin/bash"')
        doc.line(item, '- "-c"')
        doc.line(item, f'- "{script}"')
    else:
        doc.line(depth, f'command: ["/bin/bash", "-c", "{script}"]', "command")


def _container_ports(doc: YamlText, depth: int, spec: JobSpec) -> None:
    ports: list[tuple[int, str, str | None]] = []
    if spec.kind == "acjob":
        ports.append((2222, "ascendjob-port", "container"))
    if spec.level == "process":
        ports.append((8000, "ttp-port", "ttp"))
    if spec.level in ("pod", "process") and spec.kind == "acjob":
        ports.append((9601, "taskd-port", "taskd"))
    if not ports:
        return
    doc.line(depth, "ports:")
    item = doc.item_depth(depth)
    for number, name, note in ports:
        doc.line(item, f"- containerPort: {number}")
        doc.line(item + 1, f"name: {name}", note)


def _container_resources(doc: YamlText, depth: int, spec: JobSpec, rng: random.Random) -> None:
    doc.line(depth, "resources:")
    order = ("requests", "limits") if rng.random() < 0.5 else ("limits", "requests")
    with_host = rng.random() < 0.3
    for section in order:
        doc.line(depth + 1, f"{section}:")
        doc.line(depth + 2, f"huawei.com/Ascend910: {spec.npus_per_node}", "npu")
        if with_host:
            doc.line(depth + 2, f"memory: {spec.npus_per_node * 64}Gi")
            doc.line(depth + 2, f'cpu: "{spec.npus_per_node * 20}"')


def _mounts(spec: JobSpec) -> list[tuple[str, str]]:
    mounts = [
        ("code", "/job/code"),
        ("data", "/job/data"),
        ("output", "/job/output"),
        ("ascend-driver", "/usr/local/Ascend/driver"),
        ("dshm", "/dev/shm"),
        ("localtime", "/etc/localtime"),
    ]
    if spec.ranktable == "configmap":
        mounts.insert(0, ("ascend-910-config", spec.ranktable_mount))
    elif spec.ranktable == "operator":
        mounts.append((spec.ranktable_volume, spec.ranktable_mount))
    if spec.index % 4 == 1:
        mounts.append(("slog", "/var/log/npu"))
    return mounts


def _volume_mounts(doc: YamlText, depth: int, spec: JobSpec) -> None:
    doc.line(depth, "volumeMounts:")
    item = doc.item_depth(depth)
    for name, path in _mounts(spec):
        doc.line(item, f"- name: {name}", "ranktable" if name == spec.ranktable_volume else None)
        doc.line(item + 1, f"mountPath: {path}")


def _volumes(doc: YamlText, depth: int, spec: JobSpec, rng: random.Random) -> None:
    doc.line(depth, "volumes:")
    item = doc.item_depth(depth)
    server = f"10.{spec.index % 250}.0.{rng.randint(2, 250)}"
    nfs_paths = {
        "code": f"/data/atlas_dls/public/code/{spec.team}/{spec.name}/",
        "data": "/data/atlas_dls/public/dataset/",
        "output": f"/data/atlas_dls/output/{spec.name}/",
    }
    for name, _path in _mounts(spec):
        doc.line(item, f"- name: {name}", "ranktable" if name == spec.ranktable_volume else None)
        if name in nfs_paths:
            doc.line(item + 1, "nfs:")
            doc.line(item + 2, f"server: {server}", "nfs")
            doc.line(item + 2, f'path: "{nfs_paths[name]}"')
        elif name == "dshm":
            doc.line(item + 1, "emptyDir:")
            doc.line(item + 2, "medium: Memory")
            if rng.random() < 0.4:
                doc.line(item + 2, "sizeLimit: 16Gi")
        elif name == "ascend-910-config":
            doc.line(item + 1, "configMap:")
            doc.line(item + 2, f"name: rings-config-{spec.name}", "configmap")
        elif name == spec.ranktable_volume and spec.ranktable == "operator":
            doc.line(item + 1, "hostPath:")
            doc.line(item + 2, f"path: /user/mindx-dl/ranktable/{spec.namespace}.{spec.name}", "ranktable-path")
            doc.line(item + 2, "type: Directory")
        else:
            doc.line(item + 1, "hostPath:")
            doc.line(item + 2, f"path: {_path}")


# --------------------------------------------------------------------------------------------
# Launch scripts

TRAIN_START_HEAD = """#!/bin/bash
# Launch @model@ training on one node of job @name@.
# usage: train_start.sh CODE_DIR OUTPUT_DIR ENTRY [TRAIN_ARGS...]
@set_e@
CODE_DIR=$1
OUTPUT_DIR=$2
ENTRY=$3
shift 3

"""

SOURCE_FORMS = (
    'source "${CODE_DIR}/scripts/env.sh"\n',
    'SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)\n. "${SCRIPT_DIR}/env.sh"\n',
    "source $(dirname $0)/env.sh\n",
)

LOG_SETUP = """
LOG_DIR=${OUTPUT_DIR}/logs/$(hostname)
mkdir -p "${LOG_DIR}" "${OUTPUT_DIR}/ckpt"
"""

RANKTABLE_WAIT = """
# The rank table is filled in after all pods are scheduled; wait for it.
wait_for_rank_table() {
    local tries=0
    until grep -q '"status":"completed"' "${RANK_TABLE_FILE}" 2>/dev/null; do
        tries=$((tries + 1))
        if [[ ${tries} -gt 600 ]]; then
            echo "rank table not ready after ${tries}s" >&2
            return 1
        fi
        sleep 1
    done
}
wait_for_rank_table
"""

ACJOB_TOPOLOGY = """
NPUS_PER_NODE=@npus@
NNODES=${WORLD_SIZE:-1}
NODE_RANK=${RANK:-0}
MASTER_PORT=${MASTER_PORT:-2222}
"""

VCJOB_TOPOLOGY = """
NPUS_PER_NODE=@npus@
NNODES=@nodes@
NODE_RANK=${VC_TASK_INDEX:-0}
MASTER_ADDR=$(echo "${VC_WORKER_HOSTS}" | cut -d',' -f1)
MASTER_PORT=${MASTER_PORT:-29500}
"""

TASKD_MANAGER = """
if [[ "${NODE_RANK}" == "0" ]]; then
    python -c "from taskd.api import init_taskd_manager, start_taskd_manager; \\
init_taskd_manager({'job_id': '${MINDX_TASK_ID}'}); start_taskd_manager()" &
fi
"""

CLEANUP_TRAP = """
cleanup() {
    local code=$?
    echo "training exited with ${code} at $(date '+%F %T')" >> "${LOG_DIR}/exit.log"
    exit ${code}
}
trap cleanup EXIT
"""

DEVICE_LOOP = """
for ((i = 0; i < NPUS_PER_NODE; i++)); do
    npu-smi info -t health -i "${i}" >> "${LOG_DIR}/npu_health.log" 2>&1 || true
done
"""

ARGS_ARRAY = """
declare -a EXTRA_ARGS=()
case "${JOB_PROFILE:-default}" in
    debug) EXTRA_ARGS+=(--log-interval 1) ;;
    perf) EXTRA_ARGS+=(--timing-log-level 2) ;;
    *) ;;
esac
"""

HEREDOC_CONFIG = """
cat > "${OUTPUT_DIR}/run_info.txt" <<'EOF'
job: @name@
model: @model@
EOF
"""

LAUNCHERS = {
    "torch_npu_run": "torch_npu_run",
    "torchrun": "torchrun",
    "launch": "${DLS_PROGRAM_EXECUTOR:-python3} -m torch.distributed.launch",
    "run": "python3 -m torch.distributed.run",
}


def render_train_start(spec: JobSpec, rng: random.Random) -> str:
    parts = [fill(TRAIN_START_HEAD, model=spec.model, name=spec.name, set_e="set -e\n" if rng.random() < 0.5 else "")]
    parts.append(rng.choice(SOURCE_FORMS))
    parts.append(LOG_SETUP)
    if spec.ranktable != "none":
        parts.append(RANKTABLE_WAIT)
    topology = ACJOB_TOPOLOGY if spec.kind == "acjob" else VCJOB_TOPOLOGY
    parts.append(fill(topology, npus=spec.npus_per_node, nodes=spec.nodes))
    for block in (CLEANUP_TRAP, DEVICE_LOOP, ARGS_ARRAY, HEREDOC_CONFIG):
        if rng.random() < 0.4:
            parts.append(fill(block, name=spec.name, model=spec.model))
    if spec.level == "process":
        parts.append(TASKD_MANAGER)
    parts.append(_launch_block(spec, rng, with_extra_args=ARGS_ARRAY in parts))
    return "".join(parts)


def _launch_block(spec: JobSpec, rng: random.Random, with_extra_args: bool) -> str:
    flags = [
        "--nproc_per_node ${NPUS_PER_NODE}",
        "--nnodes ${NNODES}",
        "--node_rank ${NODE_RANK}",
        "--master_addr ${MASTER_ADDR}",
        "--master_port ${MASTER_PORT}",
    ]
    if spec.max_restarts and spec.launcher != "launch":
        flags += ["--max_restarts 32767", "--monitor_interval 5"]
    entry = '"${CODE_DIR}/${ENTRY}"' if rng.random() < 0.7 else '"${CODE_DIR}/train.py"'
    extra = ' "${EXTRA_ARGS[@]}"' if with_extra_args else ""
    lines = ["", 'DISTRIBUTED_ARGS="' + " ".join(flags) + '"', ""]
    if rng.random() < 0.5:
        lines.append(f'{LAUNCHERS[spec.launcher]} ${{DISTRIBUTED_ARGS}} {entry} "$@"{extra} \\')
        lines.append('    2>&1 | tee "${LOG_DIR}/train_${NODE_RANK}.log"')
    else:
        lines.append(f"{LAUNCHERS[spec.launcher]} ${{DISTRIBUTED_ARGS}} \\")
        lines.append(f'    {entry} "$@"{extra} > "${{LOG_DIR}}/train.log" 2>&1')
    lines.append("")
    return "\n".join(lines)


ENV_BASE = (
    ("HCCL_CONNECT_TIMEOUT", ("600", "1200", "1800")),
    ("HCCL_WHITELIST_DISABLE", ("1",)),
    ("TASK_QUEUE_ENABLE", ("1", "2")),
    ("CPU_AFFINITY_CONF", ("1",)),
    ("ASCEND_GLOBAL_LOG_LEVEL", ("1", "3")),
    ("ASCEND_SLOG_PRINT_TO_STDOUT", ("0",)),
    ("COMBINED_ENABLE", ("1",)),
    ("PYTORCH_NPU_ALLOC_CONF", ("expandable_segments:True",)),
    ("GLOO_SOCKET_IFNAME", ("eth0", "enp189s0f0")),
    ("HCCL_SOCKET_IFNAME", ("eth0", "enp189s0f0")),
    ("NPU_ASD_ENABLE", ("0",)),
    ("MULTI_STREAM_MEMORY_REUSE", ("1",)),
)


def render_env(spec: JobSpec, rng: random.Random) -> str:
    lines = ["#!/bin/bash", f"# Environment for {spec.name}; sourced by train_start.sh.", ""]
    if rng.random() < 0.6:
        lines.append("source /usr/local/Ascend/ascend-toolkit/set_env.sh")
    lines.append(
        "export LD_LIBRARY_PATH=/usr/local/Ascend/driver/lib64:/usr/local/Ascend/driver/lib64/common:${LD_LIBRARY_PATH}"
    )
    lines.append("")
    recovery: list[str] = []
    if spec.resume_mode:
        recovery.append("export RESUME_MODE_ENABLE=1" + ("    # resumable training" if rng.random() < 0.4 else ""))
    if spec.watchdog is not None:
        recovery.append(
            rng.choice(
                (
                    f"export HCCL_ASYNC_ERROR_HANDLING={spec.watchdog}",
                    f'export HCCL_ASYNC_ERROR_HANDLING="{spec.watchdog}"',
                )
            )
        )
    if spec.rank_table_file is not None:
        recovery.append(f"export RANK_TABLE_FILE={spec.rank_table_file}")
    if spec.level == "process":
        recovery += [
            "export TTP_OT=360",
            "export TTP_LOG_PATH=${OUTPUT_DIR:-/job/output}/ttp_logs",
            'export TASKD_PROCESS_ENABLE="on"',
        ]
    if spec.compile_mode in ("cache", "binary+cache"):
        recovery += ["export ASCEND_CACHE_PATH=/job/output/op_cache", "export ASCEND_MAX_OP_CACHE_SIZE=-1"]
    if spec.checkpoint == "mindio_acp" and spec.is_llm and rng.random() < 0.3:
        recovery.append("export MINDIO_AUTO_PATCH_MEGATRON=true")
    if spec.host_network:
        recovery.append("export HCCL_IF_IP=${XDL_IP}")
    rng.shuffle(recovery)
    lines += recovery
    for name, values in rng.sample(ENV_BASE, k=rng.randint(3, len(ENV_BASE))):
        value = rng.choice(values)
        lines.append(f"export {name}={value}" if rng.random() < 0.85 else f"{name}={value}; export {name}")
    lines += ["", 'echo "env ready on $(hostname): RANK=${RANK:-?}"' if rng.random() < 0.5 else ""]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------
# Python sources

HELPERS = (
    '''
def warmup_cosine_lr_$i(step, base_lr, warmup, total):
    """Linear warm-up followed by cosine decay."""
    if step < warmup:
        return base_lr * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return 0.5 * base_lr * (1.0 + math.cos(math.pi * progress))
''',
    '''
def reduce_mean_$i(value):
    """Average a scalar over all ranks."""
    tensor = torch.tensor([value], device="npu")
    dist.all_reduce(tensor)
    return tensor.item() / dist.get_world_size()
''',
    """
def clip_gradients_$i(model, max_norm=1.0):
    total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    if not torch.isfinite(total):
        logger.warning("non-finite gradient norm %s", total)
    return total
""",
    """
def seed_everything_$i(seed):
    random.seed(seed)
    torch.manual_seed(seed)
    torch.npu.manual_seed_all(seed)
""",
    """
class AverageMeter$i:
    def __init__(self, name):
        self.name = name
        self.total = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.total += value * n
        self.count += n

    @property
    def avg(self):
        return self.total / max(1, self.count)
""",
    """
def count_parameters_$i(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
""",
    """
def collate_$i(batch):
    inputs = torch.stack([item[0] for item in batch])
    labels = torch.tensor([item[1] for item in batch], dtype=torch.long)
    return inputs, labels
""",
    """
class EarlyStop$i:
    def __init__(self, patience=5):
        self.patience = patience
        self.best = float("inf")
        self.bad = 0

    def step(self, loss):
        if loss < self.best:
            self.best, self.bad = loss, 0
        else:
            self.bad += 1
        return self.bad >= self.patience
""",
)

MODEL_CODE = """
class Block(torch.nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1 = torch.nn.LayerNorm(dim)
        self.attn = torch.nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = torch.nn.LayerNorm(dim)
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(dim, 4 * dim), torch.nn.GELU(), torch.nn.Linear(4 * dim, dim)
        )

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class Model(torch.nn.Module):
    def __init__(self, vocab=32000, dim=$dim, heads=$heads, layers=$layers):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim)
        self.blocks = torch.nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.head = torch.nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(x)
"""

CKPT_TORCH = """
def save_checkpoint(model, optimizer, step, directory):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}
    torch.save(state, os.path.join(directory, f"step_{step:08d}.pt"))


def load_checkpoint(model, optimizer, directory):
    names = sorted(n for n in os.listdir(directory) if n.endswith(".pt")) if os.path.isdir(directory) else []
    if not names:
        return 0
    state = torch.load(os.path.join(directory, names[-1]), map_location="cpu")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return state["step"]
"""

CKPT_MINDIO = """
def save_checkpoint(model, optimizer, step, directory):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}
    mindio_acp.save(state, os.path.join(directory, f"step_{step:08d}.pt"))


def load_checkpoint(model, optimizer, directory):
    names = sorted(n for n in os.listdir(directory) if n.endswith(".pt")) if os.path.isdir(directory) else []
    if not names:
        return 0
    state = mindio_acp.load(os.path.join(directory, names[-1]), map_location="cpu")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    return state["step"]
"""

TRAIN_MAIN = """

def parse_args():
    parser = argparse.ArgumentParser(description="$model $purpose")
    parser.add_argument("--save", default="/job/output/ckpt")
    parser.add_argument("--load", default=None)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--train-iters", type=int, default=1000)
    parser.add_argument("--save-interval", type=int, default=500)
    args, _unknown = parser.parse_known_args()
    return args


def setup_distributed():
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.npu.set_device(local_rank)
    dist.init_process_group(backend="hccl", timeout=timedelta(minutes=$timeout))
    return local_rank


def train(args):
    model = Model().npu()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    start = load_checkpoint(model, optimizer, args.load or args.save)
    for step in range(start, args.train_iters):
        tokens = torch.randint(0, 32000, (4, 512), device="npu")
        loss = torch.nn.functional.cross_entropy(model(tokens).flatten(0, 1), tokens.flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % args.save_interval == 0 and dist.get_rank() == 0:
            save_checkpoint(model, optimizer, step, args.save)
            logger.info("step %d loss %.4f", step, loss.item())


def main():
$compile    args = parse_args()
    setup_distributed()
$mindio_init    train(args)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
"""


def _compile_lines(spec: JobSpec, rng: random.Random) -> str:
    if spec.compile_mode is None:
        return ""
    target = rng.choice(("torch.npu", "torch_npu.npu"))
    if spec.compile_mode in ("binary", "binary+cache"):
        return f"    {target}.set_compile_mode(jit_compile=False)\n"
    return f"    {target}.set_compile_mode(jit_compile=True)\n"


def _helpers(spec: JobSpec, rng: random.Random) -> str:
    chosen = [rng.choice(HELPERS).replace("$i", str(i)) for i in range(spec.helper_count)]
    return "".join(chosen)


def _model_code(spec: JobSpec, rng: random.Random) -> str:
    return (
        MODEL_CODE.replace("$dim", str(rng.choice((512, 1024, 2048))))
        .replace("$heads", str(rng.choice((8, 16))))
        .replace("$layers", str(rng.choice((4, 12, 24))))
    )


def render_train_py(spec: JobSpec, rng: random.Random) -> str:
    imports = [
        "import argparse",
        "import logging",
        "import math",
        "import os",
        "import random",
        "from datetime import timedelta",
        "",
        "import torch",
        "import torch.distributed as dist",
        "import torch_npu  # noqa: F401",
    ]
    if rng.random() < 0.3:
        imports.append("from torch_npu.contrib import transfer_to_npu  # noqa: F401")
    if spec.checkpoint == "mindio_acp" and not spec.with_ckpt_module:
        imports.append("import mindio_acp")
    if spec.with_model_module:
        imports.append(f"from models.{_module_name(spec)} import Model")
    if spec.with_ckpt_module:
        imports.append("from utils.checkpoint import load_checkpoint, save_checkpoint")
    parts = [
        f'"""{spec.model} {spec.name.split("-")[-2]} entry point for job {spec.name}."""',
        "",
        "\n".join(imports),
        "",
        'logger = logging.getLogger("train")',
        "",
    ]
    if not spec.with_model_module:
        parts.append(_model_code(spec, rng))
    if not spec.with_ckpt_module:
        parts.append(CKPT_MINDIO if spec.checkpoint == "mindio_acp" else CKPT_TORCH)
    parts.append(_helpers(spec, rng))
    mindio_init = "    mindio_acp.initialize()\n" if "import mindio_acp" in imports else ""
    parts.append(
        TRAIN_MAIN.replace("$model", spec.model)
        .replace("$purpose", spec.name.split("-")[-2])
        .replace("$timeout", str(rng.choice((30, 45, 60))))
        .replace("$compile", _compile_lines(spec, rng))
        .replace("$mindio_init", mindio_init)
    )
    return "\n".join(parts)


def _module_name(spec: JobSpec) -> str:
    return spec.model.split("-")[0].replace(".", "_")


def render_model_module(spec: JobSpec, rng: random.Random) -> str:
    return f'"""Model definition for {spec.model}."""\n\nimport torch\n' + _model_code(spec, rng)


def render_ckpt_module(spec: JobSpec, _rng: random.Random) -> str:
    header = '"""Checkpoint save and restore."""\n\nimport os\n\n'
    if spec.checkpoint == "mindio_acp":
        return header + "import mindio_acp\n" + CKPT_MINDIO
    return header + "import torch\n" + CKPT_TORCH


# --------------------------------------------------------------------------------------------
# Version pins


def render_requirements(spec: JobSpec, rng: random.Random) -> str:
    lines = [f"# CANN {CANN_FOR_TORCH[spec.torch]}"] if rng.random() < 0.5 else []
    lines += [f"torch=={spec.torch}", f"{spec.npu_pin_name}=={spec.torch_npu}"]
    lines += sorted(rng.sample(OTHER_PINS, k=rng.randint(2, 10)))
    if spec.checkpoint == "mindio_acp" and rng.random() < 0.3:
        lines.append("# mindio_acp is installed from the MindIO wheel in the image")
    return "\n".join(lines) + "\n"


DOCKERFILE = """ARG BASE=registry.local/base/ascend-cann:@cann@-ubuntu22.04
FROM ${BASE}

WORKDIR /job/code
COPY requirements.txt /tmp/requirements.txt
RUN pip install --no-cache-dir torch==@torch@ torch_npu==@torch_npu@ && \\
    pip install --no-cache-dir -r /tmp/requirements.txt
@taskd@
COPY . /job/code
"""

TASKD_PATCH = """ARG TASKD_WHL=/tmp/taskd-py3-none-linux_aarch64.whl
RUN pip install ${TASKD_WHL} && \\
    sed -i '/import os/i import taskd.python.adaptor.patch' \\
    $(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')/distributed/run.py
"""


def render_dockerfile(spec: JobSpec, _rng: random.Random) -> str:
    taskd = TASKD_PATCH if spec.level in ("pod", "process") else ""
    return fill(
        DOCKERFILE,
        cann=CANN_FOR_TORCH[spec.torch],
        torch=spec.torch,
        torch_npu=spec.docker_torch_npu,
        taskd=taskd,
    )


# --------------------------------------------------------------------------------------------
# Putting a job on disk


def _manifest_name(spec: JobSpec) -> str:
    chip = "910b" if spec.chip == "ascend-910b" else "910"
    if spec.kind == "vcjob":
        return f"yamls/pytorch_vcjob_{chip}.yaml" if spec.index % 2 else f"{spec.name}.yaml"
    layout = "multinodes" if spec.nodes > 1 else "standalone"
    return f"yamls/pytorch_{layout}_acjob_{chip}.yaml" if spec.index % 2 else f"deploy/{spec.name}.yaml"


def _debug_manifest(spec: JobSpec, rng: random.Random) -> str:
    debug = dataclasses.replace(
        spec,
        nodes=1,
        kind="acjob",
        ranktable="none",
        rank_table_file=None,
        vc_policy=None,
        name=f"{spec.name}-debug",
        faults=[],
    )
    return render_manifest(debug, rng)


def job_files(spec: JobSpec, rng: random.Random) -> list[tuple[str, str]]:
    """(relative path, text) pairs, most important first so a trimmed job still makes sense."""
    files = [
        (_manifest_name(spec), render_manifest(spec, rng)),
        ("scripts/train_start.sh", render_train_start(spec, rng)),
        ("scripts/env.sh", render_env(spec, rng)),
        ("train.py", render_train_py(spec, rng)),
        ("requirements.txt", render_requirements(spec, rng)),
    ]
    if spec.docker_torch_npu is not None:
        files.append(("Dockerfile", render_dockerfile(spec, rng)))
    if spec.with_model_module:
        files.append((f"models/{_module_name(spec)}.py", render_model_module(spec, rng)))
    if spec.with_ckpt_module:
        files.append(("utils/checkpoint.py", render_ckpt_module(spec, rng)))
    if spec.with_debug_manifest:
        files.append(("yamls/debug_acjob.yaml", _debug_manifest(spec, rng)))
    return [(path, _line_endings(path, text, spec, rng)) for path, text in files]


def _line_endings(path: str, text: str, spec: JobSpec, rng: random.Random) -> str:
    crlf = rng.random() < CRLF_FILE_RATE or (spec.crlf_train_start and path.endswith("train_start.sh"))
    return text.replace("\n", "\r\n") if crlf else text


def file_kind(path: Path) -> str:
    """The artifact kind recovery-lint reads a file as: manifest, shell, python or pins."""
    if path.suffix in (".yaml", ".yml"):
        return "manifest"
    if path.suffix == ".sh":
        return "shell"
    if path.suffix == ".py":
        return "python"
    return "pins"


def generate(out_dir: Path, artifacts: int, seed: int = 0) -> list[Path]:
    """Write exactly `artifacts` files under out_dir (which must be empty or absent); return them sorted."""
    out_dir = Path(out_dir)
    if out_dir.exists() and any(out_dir.iterdir()):
        raise FileExistsError(f"{out_dir} is not empty")
    written: list[Path] = []
    index = 0
    while len(written) < artifacts:
        spec, rng = plan_job(index, seed)
        job_dir = out_dir / spec.team / spec.name
        for rel, text in job_files(spec, rng)[: artifacts - len(written)]:
            path = job_dir / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text.encode("utf-8"))
            written.append(path)
        index += 1
    return sorted(written)


def planned_jobs(artifacts: int, seed: int = 0) -> list[JobSpec]:
    """The job specs generate() would write for this size, for tests that want the injected faults."""
    specs: list[JobSpec] = []
    total = 0
    while total < artifacts:
        spec, rng = plan_job(len(specs), seed)
        specs.append(spec)
        total += len(job_files(spec, rng))
    return specs


def describe(files: list[Path]) -> str:
    kinds = Counter(file_kind(p) for p in files)
    crlf = sum(1 for p in files if b"\r\n" in p.read_bytes())
    size = sum(p.stat().st_size for p in files)
    mix = ", ".join(f"{kinds[k]} {k}" for k in ("manifest", "shell", "python", "pins"))
    return f"{len(files)} files ({mix}; {crlf} CRLF; {size / 1e6:.1f} MB)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--artifacts", type=int, default=1000, help="number of files to write")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        files = generate(args.out_dir, args.artifacts, args.seed)
    except FileExistsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{args.out_dir}: {describe(files)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
