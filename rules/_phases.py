"""What the scorecard shows for a phase in which no rule has a finding, as the rule that owns the
phase tells it (``Rule.phase_status``): whether the job visibly uses the phase's optimization, and,
for fault detection, the worst case of noticing a fault without the watchdog."""

from __future__ import annotations

from recovery_lint.jobs import EnvValue, Job
from recovery_lint.rule import WorstCase

FRAMEWORK_NAMES = {"mindspore": "MindSpore", "tensorflow": "TensorFlow", "pytorch": "PyTorch"}


def pytorch_only(job: Job) -> tuple[str, str] | None:
    """A phase whose optimizations are PyTorch's, for a job known to train with another framework."""
    if job.context.pytorch:
        return None
    framework = FRAMEWORK_NAMES.get(job.context.framework or "", job.context.framework)
    return "not applicable", f"{framework} job: the optimizations are PyTorch's"


def _torch_launches(job: Job):
    return [launch for launch in job.launches if launch.torch_commands]


def _env_values(job: Job, *names: str) -> list[EnvValue | None]:
    """Per PyTorch launch, the first of ``names`` set in its launch environment."""
    out = []
    for launch in _torch_launches(job):
        env = launch.launch_env
        out.append(next((env[n] for n in names if n in env), None))
    return out


def detection(job: Job) -> tuple[str, str]:
    ctx = job.context
    if ctx.recovery == "process":
        return "optimized", "process-level recovery (the watchdog stays off, as it requires)"
    from recovery_lint.knowledge.data import WATCHDOG_VAR
    from recovery_lint.knowledge.releases import npu_facts
    from recovery_lint.knowledge.watchdog import watchdog_facts, watchdog_value
    from recovery_lint.premises import release_facts

    values = _env_values(job, WATCHDOG_VAR)
    if not values:
        return "unknown", "no PyTorch launch command linked"
    found, basis = release_facts(job)
    facts = watchdog_facts(found if found is not None else npu_facts(None, None))
    if facts.thread is not True:  # a release without a watchdog thread is on by no value
        return "unknown", "no watchdog thread is known to start with the declared versions"
    if all(
        v is not None and v.known is not None and watchdog_value(v.known) != 0 and facts.accepts(v.known) is not False
        for v in values
    ):
        return "optimized", f"watchdog on ({values[0].name}={values[0].known})"
    if all(v is None for v in values) and facts.default == 1:  # the default follows the torch_npu release
        return "optimized", f"watchdog on by default: {basis}"
    return "unknown", "watchdog setting not visible"


def rescheduling(job: Job) -> tuple[str, str]:
    recovery = job.context.recovery
    if job.manifest is None:
        return "unknown", "no manifest links this job"
    if recovery == "pod":
        return "optimized", "Pod-level rescheduling"
    if recovery == "process":
        return "optimized", "process-level recovery"
    if recovery == "job":
        return "unknown", "Job-level rescheduling, no finding reported"
    return "unknown", "no resumable training label, no finding reported"


def comm_init(job: Job) -> tuple[str, str]:
    launches = _torch_launches(job)
    if not launches:
        return "unknown", "no PyTorch launch command linked"
    ways = []
    for launch in launches:
        if all(c.launcher == "torch_npu_run" for c in launch.torch_commands):
            ways.append("Parallel Store (torch_npu_run)")
        elif "RANK_TABLE_FILE" in launch.launch_env:
            ways.append("RankTable mode")
        else:
            return "unknown", "rendezvous method not visible"
    return "optimized", ", ".join(dict.fromkeys(ways))


def checkpoint(job: Job) -> tuple[str, str]:
    if not job.entries:
        return "unknown", "no Python entry linked"
    from recovery_lint.premises import answer

    for name in ("without-mindio-tft", "mindio-acp-stack"):
        found = answer(job, name)
        if found.status == "failed":
            return "not applicable", f"MindIO ACP does not apply: {found.evidence}"
    if any(e.imports_module("mindio_acp") for e in job.entries):
        return "optimized", "MindIO ACP"
    patched = _env_values(job, "MINDIO_AUTO_PATCH_MEGATRON")
    if patched and all(v is not None and (v.value or "").lower() == "true" for v in patched):
        return "optimized", "MindIO ACP (MINDIO_AUTO_PATCH_MEGATRON)"
    return "unknown", "MindIO ACP not visible"


def compile_mode(job: Job) -> tuple[str, str]:
    from recovery_lint.premises import answer

    cann = answer(job, "binary-operators")
    if cann.status == "failed":
        return "not applicable", f"no operator binaries: {cann.evidence}"
    calls = [c for e in job.entries for c in e.calls_to("set_compile_mode")]
    jit = [c.keywords["jit_compile"].value for c in calls if "jit_compile" in c.keywords]
    if jit and all(v is False for v in jit):
        return "optimized", "binary operators (set_compile_mode(jit_compile=False))"
    cache = _env_values(job, "ASCEND_CACHE_PATH")
    if jit and all(v is True for v in jit) and cache and all(v is not None for v in cache):
        return "optimized", "operator compile cache (ASCEND_CACHE_PATH)"
    if not jit:
        from recovery_lint.knowledge.features import jit_compile_default

        platform = job.context.platform
        if platform and jit_compile_default(platform) is False:
            return "optimized", f"binary operators are the default on {platform}"
    return "unknown", "compile mode not visible"


def detection_worst_case(job: Job) -> WorstCase:
    """Without the watchdog a fault is noticed when HCCL_EXEC_TIMEOUT runs out: the job's own
    value where its launch environment sets one, else the documented default."""
    from recovery_lint.knowledge.data import documented_default

    name = "HCCL_EXEC_TIMEOUT"
    for value in _env_values(job, name):
        if value is None:
            continue
        if value.value is None:
            return WorstCase(f"{name} (set dynamically)", None, name, "job")
        try:
            seconds = int(value.value.strip().strip("\"'"))
        except ValueError:
            return WorstCase(f"{name}={value.value}", None, name, "job")
        if seconds == 0:
            return WorstCase(f"never times out ({name}=0)", None, name, "job")
        return WorstCase(f"{seconds} s ({name} set by the job)", seconds, name, "job")
    default = documented_default(name)
    seconds = int(default) if isinstance(default, (int, float)) else None
    return WorstCase(f"{seconds} s ({name} default)", seconds, name, "default")
