"""What a rule's advice takes for granted, asked of each job in one place.

A finding is a claim about someone's cluster, true only under premises: the scale the optimization
pays off at (the Parallel Store: more than one node), the platform whose default it changes (online
operator compilation is the default on the Atlas training series only), the stack it is documented
for (MindIO ACP: DeepSpeed, X1 and MindSpeed-LLM), that a MindCluster scheduler runs the job. Each
premise is a named question with three answers, each with the evidence behind it:

- ``held``: the repository (or the configuration) establishes it;
- ``failed``: it establishes the opposite; the advice does not apply and nothing is said;
- ``unknown``: nothing establishes either; the advice is withheld, counted, and the run ends with the
  configuration key that would settle it.

Rules declare the premises they need (``Rule.premises``); the engine runs a rule for a job only where
every one of them is held. A rule whose claim depends on finer facts (what the torch_npu release in
use does) answers them itself and yields a :class:`Withheld` where they are unknown. The
configuration (``[tool.recovery-lint.target]``) is evidence like any other: it fills what the
repository does not say, and a job's own manifest wins over it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from .kinds import MANIFEST, MAYBE_SHELL, SHELL
from .launchers.scale import devices_named
from .lazyre import LazyPattern
from .parse import OTHER_SHELL

if TYPE_CHECKING:
    from .jobs import Job, LaunchCommand, Project
    from .knowledge.releases import NpuFacts
    from .parse import ParsedFile

HELD = "held"
FAILED = "failed"
UNKNOWN = "unknown"
# the key of an unknown answer no configuration key can settle (a declared version outside the tables)
NO_KEY = "-"


@dataclass
class Answer:
    """One premise answered for one job."""

    status: str  # held | failed | unknown
    evidence: str  # what the answer was read from (or why nothing was found)
    key: str = ""  # the configuration key that would settle an unknown answer, when not the premise's own
    where: str = ""  # the place the evidence was read (``run.sh:3``), kept apart: a message names it only when asked

    @property
    def located(self) -> str:
        """The evidence with its place, as --show-jobs shows it."""
        return f"{self.evidence} at {self.where}" if self.where else self.evidence

    @property
    def held(self) -> bool:
        return self.status == HELD

    @property
    def unknown(self) -> bool:
        return self.status == UNKNOWN


@dataclass(eq=False)
class Premise:
    """A question a rule's advice depends on, with the configuration key that answers it."""

    name: str  # how rules name it: "multi-node"
    question: str  # what it asks, as --show-jobs and the documentation say it
    key: str  # the configuration key that declares it where the repository does not
    decide: Callable[[Job], Answer]


@dataclass(frozen=True)
class Withheld:
    """Advice a rule did not give because a premise of it is unknown for a job."""

    code: str  # the rule
    job: str  # the job's id
    premise: str  # the premise's name
    evidence: str  # why it is unknown
    key: str = ""  # the configuration key that declares it ('' for the premise's own)
    # where the advice would be given (its finding's place, else the job's launch or manifest) and what
    # it would say ('' when the rule stopped before it had a finding to give)
    path: str = ""
    line: int = 0
    column: int = 0
    advice: str = ""
    condition: str = ""  # what would have to hold for the advice to be given

    @property
    def headline(self) -> str:
        """``RL301 withheld: the torch_npu release is unknown (why)``, as the report and the editor say it."""
        return f"{self.code} withheld: {subject(self.premise)} is unknown ({self.evidence.rstrip('.')})"

    @property
    def settling_key(self) -> str:
        """The configuration key that settles it: the answer's own, else the premise's."""
        return self.key or (PREMISES[self.premise].key if self.premise in PREMISES else "")

    def at(self, span, advice: str = "") -> Withheld:
        """The same withheld advice, placed at ``span``."""
        if span is None:
            return self
        return replace(self, path=span.path, line=span.line, column=span.column, advice=advice or self.advice)


PREMISES: dict[str, Premise] = {}


def premise(name: str, question: str, key: str) -> Callable[[Callable[[Job], Answer]], Callable[[Job], Answer]]:
    """Register a premise's decision function under ``name``."""

    def register(decide: Callable[[Job], Answer]) -> Callable[[Job], Answer]:
        PREMISES[name] = Premise(name, question, key, decide)
        return decide

    return register


def answer(job: Job, name: str) -> Answer:
    """The premise ``name`` for ``job``, decided once per job."""
    answers = job.premise_answers
    found = answers.get(name)
    if found is None:
        found = answers[name] = PREMISES[name].decide(job)
    return found


def unmet(job: Job, names: Iterable[str]) -> list[tuple[str, Answer]]:
    """The premises among ``names`` that do not hold for ``job``: the first failed one alone (a job
    the evidence rules out is not counted as unknown), else every unknown one; empty when all hold."""
    unknown: list[tuple[str, Answer]] = []
    for name in names:
        found = answer(job, name)
        if found.status == FAILED:
            return [(name, found)]
        if found.status == UNKNOWN:
            unknown.append((name, found))
    return unknown


def job_anchor(job: Job):
    """Where advice about a job as a whole is placed: its training launch, else its manifest."""
    for launch in job.launches:
        cmd = launch.training_command
        if cmd is not None:
            return cmd.command.span
    for launch in job.launches:  # a launcher of another family (a Ray trainer module, a framework's CLI)
        if launch.commands:
            return launch.commands[0].command.span
    doc = job.manifest
    return doc.span if doc is not None else None


def withheld_for(rule, job: Job) -> list[Withheld] | None:
    """What ``rule`` withholds for ``job`` because a premise it declares is unknown (with the unknown
    ones among the premises some of its findings also ask, so that one run names every key to
    declare); an empty list when one fails; None when every declared premise holds."""
    gaps = unmet(job, rule.premises)
    if not gaps:
        return None
    if gaps[0][1].status == FAILED:
        return []
    for name in rule.also_asks:
        found = answer(job, name)
        if found.status == FAILED:
            return []
        if found.status == UNKNOWN:
            gaps.append((name, found))
    return [
        Withheld(rule.code, job.id, name, found.evidence, found.key, condition=holds_if(rule, name))
        for name, found in gaps
    ]


def holds_if(rule, premise_name: str) -> str:
    """What would have to hold for ``rule``'s advice withheld on ``premise_name``: the rule's own words
    where it gives them (the release a feature needs), else the premise's question."""
    own = dict(getattr(rule, "holds_if", ())).get(premise_name)
    if own:
        return own
    return PREMISES[premise_name].question if premise_name in PREMISES else ""


# -- the premises ----------------------------------------------------------------------------------
def configured(job: Job, key: str) -> str | None:
    """What the configuration's ``target.<key>`` says of the job, if it says it."""
    return job.context.settings.get(f"target.{key}")


@premise(
    "cluster",
    "a MindCluster scheduler (Volcano with the Ascend plugins, or Ascend Operator) runs the job",
    "target.mindcluster",
)
def cluster(job: Job) -> Answer:
    doc = job.manifest
    if doc is not None and doc.is_ascendjob:
        return Answer(HELD, f"an AscendJob ({doc.path}), which Ascend Operator runs")
    if doc is not None and doc.is_vcjob:
        return Answer(HELD, f"a Volcano Job ({doc.path})")
    said = configured(job, "mindcluster")
    if said is not None:
        return Answer(HELD if said == "true" else FAILED, f"the configuration (target.mindcluster = {said})")
    if doc is not None:
        return Answer(UNKNOWN, f"a {doc.kind}, which MindCluster's scheduler may or may not run")
    return Answer(UNKNOWN, "no manifest runs it")


@premise(
    "rescheduling",
    "MindCluster reschedules the job after a fault: its fault-scheduling label is grace or force (Job- or "
    "Pod-level rescheduling, or process-level recovery)",
    "[[jobs]] manifest",
)
def rescheduling(job: Job) -> Answer:
    level, doc = job.context.recovery, job.manifest  # the level is known where a manifest is
    if doc is None:
        return Answer(UNKNOWN, "no manifest says how the cluster reschedules it")
    if level is None:
        return Answer(
            UNKNOWN,
            f"a {doc.kind}: the resumable-training guide describes rescheduling for AscendJobs and Volcano Jobs only",
            NO_KEY,  # what MindCluster does with it is not documented: no configuration can say it
        )
    if level == "none":
        return Answer(FAILED, f"{doc.path} sets no fault-scheduling grace or force: the job is not rescheduled")
    return Answer(HELD, f"{doc.path} asks for {LEVELS.get(level, level)}")


LEVELS = {"job": "Job-level rescheduling", "pod": "Pod-level rescheduling", "process": "process-level recovery"}


@premise("multi-node", "the job spans more than one node (where the Parallel Store pays off)", "target.nodes")
def multi_node(job: Job) -> Answer:
    doc = job.manifest
    if doc is not None and doc.pods:
        pods = sum(pod.replicas if pod.replicas is not None else 1 for pod in doc.pods if pod.containers)
        where = f"{doc.path} runs {pods} Pod{'s' if pods != 1 else ''}"
        return Answer(HELD if pods > 1 else FAILED, where + ("" if pods > 1 else " (one node)"))
    found = _launch_nodes(job)
    if found is not None:
        return found
    said = configured(job, "nodes")
    if said is not None:
        return Answer(HELD if int(said) > 1 else FAILED, f"the configuration (target.nodes = {said})")
    return Answer(UNKNOWN, "no launch gives the node count")


def _launch_nodes(job: Job) -> Answer | None:
    """The node count of the job's distributed launches (as the linker read their scale): held where
    one spans several nodes, failed where every one is known to run on one, None where one of them
    is not known."""
    single: list[Answer] = []
    for launch in job.launches:
        for cmd in launch.commands:
            if not cmd.judged:
                continue
            where = f"{cmd.command.span.path}:{cmd.command.span.line}"
            if not cmd.is_distributed:
                found = _python_nodes(cmd, where)
                if found is None:
                    continue
                if found.held:
                    return found
                single.append(found)
                continue
            scale = cmd.scale
            if scale is None:
                return None
            if scale.nodes is None:
                return None
            if scale.nodes > 1:
                return Answer(HELD, scale.node_evidence, where=where)
            single.append(Answer(FAILED, scale.node_evidence, where=where))
    if single:
        return single[0]
    return None


def _python_nodes(cmd, where: str) -> Answer | None:
    """The nodes of a per-device Python launch (a device loop, a program that starts its own
    processes): held with a node-count option above 1 (``--nnodes 2``) or a script named for more
    devices than it starts on this node (``train_full_16p.sh`` looping over 8); failed for a loop
    over this node's devices; None when nothing says."""
    import posixpath

    scale = cmd.scale
    if cmd.launcher != "python" or scale is None:
        return None
    if (scale.nodes or 1) > 1:
        return Answer(HELD, scale.node_evidence or scale.evidence, where=where)
    named = devices_named(posixpath.basename(cmd.script.source.path))
    if named and scale.per_node and named[0] > scale.per_node:
        return Answer(HELD, f"{named[1]} in the script's name, {scale.per_node} per node", where=where)
    if scale.per_node is not None and scale.per_node > 1:
        return Answer(FAILED, f"{scale.per_node} processes on this node ({scale.evidence})", where=where)
    return None


@premise(
    "online-compile-default",
    "the platform compiles operators online unless told otherwise (jit_compile defaults to True: the Atlas "
    "training series, ring-controller.atlas ascend-910)",
    "target.platform",
)
def online_compile_default(job: Job) -> Answer:
    from .knowledge.features import jit_compile_default

    platform = job.context.platform
    where = f"ring-controller.atlas: {platform}" if platform else None
    if platform is None:
        platform = configured(job, "platform")
        where = f"the configuration (target.platform = {platform})" if platform else None
    if platform is None or where is None:
        return Answer(UNKNOWN, "no ring-controller.atlas label and no target.platform")
    default = jit_compile_default(platform)
    if default is None:
        return Answer(UNKNOWN, f"{where} is not a platform this tool knows")
    if default:
        return Answer(HELD, f"{where}: jit_compile defaults to True (Atlas training series)")
    return Answer(FAILED, f"{where}: binary operators are the default (jit_compile=False)")


# -- the file a finding is about ---------------------------------------------------------------------
@premise(
    "training-file",
    "the file belongs to a training job (its manifest, a launch script it runs, a Python entry it launches) "
    "or is named on the command line",
    "jobs",
)
def training_job_file(job: Job) -> Answer:
    return Answer(HELD, "a file of a training job")  # a job's own files are, by definition


_TRAINING_KIND = LazyPattern(r"(?m)^[ \t-]*[\"']?kind[\"']?[ \t]*:[ \t]*[\"']?(AscendJob|Job|PyTorchJob|VolcanoJob)\b")
_LAUNCHER = LazyPattern(
    r"(?m)(?:^|[\s;&|(`])(?:torchrun|torch_npu_run|deepspeed|python[0-9.]*\s+(?:-\S+\s+)*-m\s+torch(?:_npu)?\.distributed\.(?:launch|run))\b"
)


def training_file(parsed: ParsedFile, project: Project, job_files: set[str], unreadable: set[str]) -> bool:
    """Whether a file-level finding (a parse error, a skipped template or shell) may be reported on
    ``parsed``: it is a file of a training job, or named on the command line. A file that could not be
    read at all (a templated manifest, a zsh script) cannot be linked; it counts when its text says
    what a training job's file says: a training workload's ``kind``, or a distributed launcher, and
    neither its folder nor its name says it is something else (inference, CI, vendored code).
    ``job_files`` are the files of the training jobs, ``unreadable`` their entries that could not be
    read (``unreadable_entries``)."""
    path = parsed.path
    if path in job_files or path in project.named or path in unreadable:
        return True
    if not _unread(parsed) or parsed.source is None:
        return False  # read and linked: the linker has said what it is
    from .roles import ci_path, role_by_folder, role_by_name, vendored

    if vendored(path) or ci_path(path):
        return False
    text = parsed.source.text
    if parsed.kind == MANIFEST:  # a manifest's file name says little ("deploy.yaml" trains as often as not)
        match = _TRAINING_KIND.search(text)
        kind = match is not None and (match.group(1) != "Job" or "batch.volcano.sh" in text)
        return kind and role_by_folder(path) is None
    if parsed.kind in (SHELL, MAYBE_SHELL):
        return _LAUNCHER.search(text) is not None and role_by_name(path) is None
    return False


def _unread(parsed: ParsedFile) -> bool:
    """Whether the linker could not see into a file: no model, a manifest whose documents could not be
    read (a syntax error, template markers), a script for another shell."""
    model = parsed.model
    if model is None:
        return True
    if parsed.kind == MANIFEST:
        return not getattr(model, "docs", None)
    return any(issue.kind == OTHER_SHELL for issue in parsed.issues)


def unreadable_entries(project: Project) -> set[str]:
    """Python entries a training launch names that could not be read (invalid text, binary)."""
    return {
        cmd.entry_path
        for job in project.jobs
        for launch in job.launches
        for cmd in launch.commands
        if cmd.entry_path is not None and cmd.entry_file is None and cmd.judged
    }


# what each premise is about, in the words of a user who has to settle it
SUBJECTS = {
    "cluster": "whether MindCluster schedules the job",
    "rescheduling": "how the cluster reschedules the job",
    "multi-node": "how many nodes the job spans",
    "online-compile-default": "the NPU platform",
    "release": "the torch_npu release",
    "binary-operators": "the CANN version",
    "mindio-acp-stack": "whether the training stack is one MindIO ACP supports",
    "resumable-framework": "the training framework",
    "grace-over-time": "the cluster's grace-over-time",
    "mindspeed-llm-release": "the MindSpeed-LLM version",
    "mindio": "whether the cluster runs MindIO 6.0.RC2 or later",
    "launch-environment": "what a sourced script sets",
    "jobs": "which manifest runs the script",
}


def subject(premise_name: str) -> str:
    return SUBJECTS.get(premise_name, premise_name)


# -- the torch_npu release ---------------------------------------------------------------------------
@premise(
    "release",
    "the torch_npu release the job runs is known: pinned, listed in a README's version table, configured, "
    "or, for a job MindCluster runs, any release its documentation supports",
    "versions.torch-npu",
)
def release(job: Job) -> Answer:
    facts, evidence = release_facts(job)
    if facts is not None:
        return Answer(HELD, evidence)
    declared = job.context.versions.alternatives("torch-npu") or job.context.versions.alternatives("torch")
    # a declared version wins over the configuration's: declaring another cannot settle it
    return Answer(UNKNOWN, evidence, key=NO_KEY if declared else "")


def release_facts(job: Job) -> tuple[NpuFacts | None, str]:
    """The torch_npu releases the job may run, and where that was read; None when nothing says.

    A job MindCluster runs that declares no version runs one of the releases the MindCluster docs
    support: advice that holds for each of them holds for it."""
    from .knowledge.features import mindcluster_releases
    from .knowledge.releases import npu_facts, npu_facts_any

    versions = job.context.versions
    torches, npus = versions.alternatives("torch"), versions.alternatives("torch-npu")
    if torches or npus:
        if len(torches) <= 1 and len(npus) <= 1:
            facts = npu_facts(torches[0] if torches else None, npus[0] if npus else None)
        else:
            where = "; ".join(
                filter(None, (versions.alternatives_origin("torch"), versions.alternatives_origin("torch-npu")))
            )
            facts = npu_facts_any(torches, npus, where)
        if not facts.releases and not facts.no_npu and not facts.mixed:
            # a version outside the release table (a newer build, a post-release) is unknown, not old
            return None, f"{_described(job)}: {facts.basis}"
        return facts, _described(job)
    conflicts = [f"{c}: {why}" for c, why in versions.conflicts.items() if c in ("torch", "torch-npu")]
    if conflicts:
        return None, f"declared differently ({'; '.join(conflicts)})"
    if cluster(job).held:
        facts = mindcluster_releases()
        return facts, facts.basis
    return None, "neither torch nor torch_npu is declared for it"


def _described(job: Job) -> str:
    versions = job.context.versions
    return "; ".join(versions.describe(c) for c in ("torch-npu", "torch") if versions.alternatives(c))


@premise(
    "binary-operators",
    "CANN is 8.0.RC2 or later, which the operator binaries and the operator compile cache need",
    "versions.cann",
)
def binary_operators(job: Job) -> Answer:
    from .knowledge.features import cann_of_releases, compile_mode_support

    versions = job.context.versions
    declared = versions.alternatives("cann")
    if declared:
        verdicts = {compile_mode_support(v)[0] for v in declared}
        where = versions.describe("cann")
    else:
        facts, _ = release_facts(job)
        built = cann_of_releases(facts) if facts is not None else ()
        if not built:
            return Answer(UNKNOWN, "the CANN version is not declared, nor a torch_npu release it would follow from")
        verdicts = {compile_mode_support(v)[0] for v in built}
        where = f"CANN {' or '.join(built)}, which the torch_npu releases the job may run are built for"
    if verdicts == {True}:
        return Answer(HELD, where)
    if verdicts == {False}:
        return Answer(FAILED, f"{where}: older than 8.0.RC2")
    return Answer(UNKNOWN, f"{where}: not all of them 8.0.RC2 or later")


# -- MindIO ACP ---------------------------------------------------------------------------------------
ACP_TORCH = "2.7.1"  # the torch MindIO ACP's installation table names
ACP_MINDSPEED_LLM = "2.3"  # the MindSpeed-LLM branch its guide is written for (with Megatron core_v0.12.1)


@premise(
    "mindio-acp-stack",
    f"the job trains on a stack MindIO ACP supports at the versions its guide names: MindSpeed-LLM "
    f"{ACP_MINDSPEED_LLM}.x on Megatron, or DeepSpeed, with torch {ACP_TORCH} (X1 cannot be told from its code)",
    "versions.torch",
)
def acp_stack(job: Job) -> Answer:
    if not job.entries:
        return Answer(FAILED, "no Python entry of the job is known: no training code to judge")
    stack = _acp_stack(job)
    if stack is None:
        return Answer(
            FAILED, "its entry imports neither mindspeed_llm nor deepspeed: MindIO ACP supports no other stack"
        )
    versions = job.context.versions
    if stack == "MindSpeed-LLM":
        found = versions.alternatives("mindspeed-llm")
        if not found:
            return Answer(UNKNOWN, "MindSpeed-LLM, whose version is not declared", "versions.mindspeed-llm")
        if not all(_series(v) == ACP_MINDSPEED_LLM for v in found):
            return Answer(FAILED, f"MindSpeed-LLM {' or '.join(found)}; the ACP guide is for {ACP_MINDSPEED_LLM}.x")
    torches = versions.alternatives("torch")
    if not torches:
        return Answer(UNKNOWN, f"{stack}, with the torch version not declared", "versions.torch")
    if all(_series(t, 3) == ACP_TORCH for t in torches):
        return Answer(HELD, f"{stack} with torch {ACP_TORCH} ({versions.describe('torch')})")
    if any(_series(t, 3) == ACP_TORCH for t in torches):
        return Answer(UNKNOWN, f"{stack}; {versions.describe('torch')}: not only {ACP_TORCH}", "versions.torch")
    return Answer(FAILED, f"{stack} with {versions.describe('torch')}; MindIO ACP is for torch {ACP_TORCH}")


def _acp_stack(job: Job) -> str | None:
    for entry in job.entries:
        if entry.imports_module("mindspeed_llm"):
            return "MindSpeed-LLM"
    for entry in job.entries:
        if entry.imports_module("deepspeed"):
            return "DeepSpeed"
    if any(cmd.launcher == "deepspeed" for launch in job.launches for cmd in launch.commands):
        return "DeepSpeed"
    return None


def _series(version: str, parts: int = 2) -> str:
    return ".".join(version.split(".")[:parts])


@premise(
    "resumable-framework",
    "the job trains with a framework MindCluster documents resumable training for (PyTorch or MindSpore)",
    "target.framework",
)
def resumable_framework(job: Job) -> Answer:
    framework = job.context.framework or configured(job, "framework")
    if framework is None:
        return Answer(UNKNOWN, "neither its manifest nor its launches say which framework it trains with")
    if framework == "mindspore" and job.context.platform == "ascend-npu":
        return Answer(
            FAILED,
            "it trains with mindspore on Atlas 350/850/950 (ascend-npu), where the support tables list PyTorch only",
        )
    if framework in RESUMABLE_FRAMEWORKS:
        return Answer(HELD, f"it trains with {framework}")
    return Answer(FAILED, f"it trains with {framework}, which the resumable-training support tables do not list")


RESUMABLE_FRAMEWORKS = ("pytorch", "mindspore")


@premise(
    "grace-over-time",
    "the cluster's Volcano grace-over-time (how long a graceful deletion waits before it forces) is known",
    "target.grace-over-time",
)
def grace_over_time(job: Job) -> Answer:
    said = configured(job, "grace-over-time")
    if said is None:
        return Answer(
            UNKNOWN,
            "the cluster's grace-over-time is not in the repository (900 s unless Volcano's configuration sets it)",
        )
    return Answer(HELD, f"the configuration (target.grace-over-time = {said})")


@premise(
    "mindspeed-llm-release",
    "the MindSpeed-LLM release the job trains with is one whose start-up checks are known (2.0 to 26.1)",
    "versions.mindspeed-llm",
)
def mindspeed_llm_release(job: Job) -> Answer:
    from .knowledge.features import mindspeed_llm_checks

    versions = job.context.versions
    found = versions.alternatives("mindspeed-llm")
    if not found:
        return Answer(UNKNOWN, "no MindSpeed-LLM version is declared")
    lines = {_series(v) for v in found}
    where = versions.describe("mindspeed-llm")
    if len(lines) > 1:
        return Answer(UNKNOWN, f"{where}: more than one release line")
    if lines.pop() not in mindspeed_llm_checks()["series"]:
        return Answer(UNKNOWN, f"{where}: a release whose start-up checks are not in the table")
    return Answer(HELD, where)


@premise(
    "mindio",
    "MindIO is deployed at 6.0.RC2 or later (MindCluster too, where declared), which ACP's asynchronous save and "
    "in-memory load need",
    "versions.mindio",
)
def mindio(job: Job) -> Answer:
    from .knowledge.features import mindio_support

    versions = job.context.versions
    mindio, cluster = versions.get("mindio"), versions.get("mindcluster")
    # MindCluster's components are released together ("请勿跨版本混用各组件"): a declared MindIO stands for both
    verdict, reason = mindio_support(mindio, cluster or mindio)
    if verdict is True:
        return Answer(HELD, f"MindIO {mindio} ({versions.origin('mindio')})")
    if verdict is False:
        return Answer(FAILED, reason)
    return Answer(UNKNOWN, "the MindIO version is not declared" if mindio is None else reason)


@premise("pytorch", "nothing says the job runs another framework than PyTorch (MindSpore, TensorFlow)", "jobs")
def pytorch(job: Job) -> Answer:
    framework = job.context.framework
    if framework not in (None, "pytorch"):
        return Answer(FAILED, f"a {framework} job")
    # a torchrun launch or a torch_npu import, which the PyTorch advice also asks, shows PyTorch itself
    return Answer(HELD, "a PyTorch job" if framework else "nothing says it runs another framework")


@premise(
    "without-mindio-tft",
    "MindIO TFT is not in use (process-level recovery, hot switch, MindSpeed-LLM's high availability, an entry "
    "importing mindio_ttp): MindIO ACP cannot be installed beside it",
    "jobs",
)
def without_mindio_tft(job: Job) -> Answer:
    if job.context.recovery == "process":
        return Answer(FAILED, "process-level recovery, which runs MindIO TFT")
    hot = job.manifest.hot_switch if job.manifest is not None else None
    if hot is not None:
        return Answer(FAILED, f"{_at(hot.span)} subHealthyStrategy: hotSwitch, which runs MindIO TFT")
    for entry in job.entries:
        if entry.imports_module("mindio_ttp"):
            return Answer(FAILED, f"{entry.source.path} imports mindio_ttp (MindIO TFT)")
    return _high_availability_launch(job) or Answer(
        HELD, "no process-level recovery, hot switch, high-availability launch or mindio_ttp import"
    )


def _high_availability_launch(job: Job) -> Answer | None:
    """A launch that turns on MindSpeed-LLM's high availability (MindIO TFT): one of its switches on
    the command line, or HIGH_AVAILABILITY in the ranks' environment (unknown when its value is)."""
    from .knowledge.features import mindspeed_llm_checks

    data = mindspeed_llm_checks()
    options = set(data["launch_options"]["options"])
    name = data["high_availability_env"]["name"]
    unknown = None
    for launch in job.launches:
        for cmd in launch.commands:
            word = next((w for w in cmd.words if w.value in options), None)
            if word is not None:
                return Answer(FAILED, f"{_at(word.span)} passes {word.value} (MindIO TFT)")
            env = cmd.env.get(name)
            if env is None:
                if cmd.unread_sources and cmd.entry_file is not None and cmd.entry_file.imports_module("mindspeed_llm"):
                    first = cmd.unread_sources[0]
                    unknown = Answer(UNKNOWN, f"{_at(first.span)} sources {first.template}, which could not be read")
                continue
            if env.known:
                return Answer(FAILED, f"{_at(env.span)} sets {name}={env.known} (MindIO TFT)")
            if env.known is None:
                unknown = Answer(UNKNOWN, f"{_at(env.span)} sets {name} to a value the repository does not show")
    return unknown


def _at(span) -> str:
    return f"{span.path}:{span.line}" if span is not None else "the job"


@premise(
    "launch-environment",
    "every script a launch sources before it starts is read: a variable it does not set is unset",
    "add the sourced script to the repository",
)
def launch_environment(job: Job) -> Answer:
    for launch in job.launches:
        for cmd in launch.commands:
            if cmd.judged and cmd.unread_sources:
                first = cmd.unread_sources[0]
                return Answer(UNKNOWN, f"{_at(first.span)} sources {first.template}, which is not in the repository")
    return Answer(HELD, "every script the launches source is read")


def unread_source_evidence(cmd: LaunchCommand) -> str:
    """Why a variable of ``cmd``'s environment is not known to be unset."""
    first = cmd.unread_sources[0]
    return f"{_at(first.span)} sources {first.template}, which is not in the repository; it may set the variable"


@premise("mindio-acp-import", "an entry of the job imports mindio_acp (MindIO ACP is in use)", "[[jobs]] entry")
def mindio_acp_import(job: Job) -> Answer:
    return _entry_importing(job, "mindio_acp")


@premise("npu-entry", "a training entry of the job imports torch_npu (the code the advice is about)", "[[jobs]] entry")
def npu_entry(job: Job) -> Answer:
    return _entry_importing(job, "torch_npu")


def _entry_importing(job: Job, module: str) -> Answer:
    for entry in job.entries:
        if entry.imports_module(module):
            return Answer(HELD, f"{entry.source.path} imports {module}")
    if module == "torch_npu":
        for entry in job.entries:
            route = job.npu_routes.get(entry.source.path)
            if route is not None:
                first, modules = route
                where = f"{' -> '.join(modules)} (line {first.span.line})"
                return Answer(HELD, f"{entry.source.path} imports {where}, which loads torch_npu")
    if module == "torch_npu" and not job.npu_routes_followed:
        return Answer(
            FAILED,
            "no entry of the job imports torch_npu itself (the modules an entry imports are followed only "
            "for a job shown to run on NPUs: a platform, a torch_npu or CANN version, a launch on NPU devices)",
        )
    return Answer(FAILED, f"no entry of the job imports {module}, itself or through the modules it imports")


@premise("torch-npu-run-launch", "the job launches PyTorch through torch_npu_run", "jobs")
def torch_npu_run_launch(job: Job) -> Answer:
    return _launch_through(job, lambda launcher: launcher == "torch_npu_run", "no torch_npu_run launch")


@premise(
    "torchrun-launch",
    "the job launches PyTorch through torchrun, python -m torch.distributed.run or python -m torch.distributed.launch",
    "jobs",
)
def torchrun_launch(job: Job) -> Answer:
    return _launch_through(job, lambda launcher: launcher != "torch_npu_run", "no torchrun-style launch")


def _launch_through(job: Job, wanted: Callable[[str], bool], missing: str) -> Answer:
    """The first PyTorch launch command whose launcher is ``wanted``, as the evidence."""
    for launch in job.launches:
        for cmd in launch.torch_commands:
            if wanted(cmd.launcher):
                return Answer(HELD, cmd.launcher, where=f"{cmd.command.span.path}:{cmd.command.span.line}")
    return Answer(FAILED, missing)
