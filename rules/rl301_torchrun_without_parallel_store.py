"""RL301: PyTorch is launched with torchrun instead of torch_npu_run (Parallel Store)."""

from __future__ import annotations

from recovery_lint.diagnostics import Edit, Severity, safe_fix, unsafe_fix
from recovery_lint.edits import edit, replace_words
from recovery_lint.jobs import Job, LaunchCommand
from recovery_lint.knowledge.features import feature_support
from recovery_lint.launchers.table import FRAMEWORK
from recovery_lint.lazyre import LazyPattern
from recovery_lint.premises import answer, release_facts
from recovery_lint.rule import Case, Rule, examples
from recovery_lint.shellwords import PURE_VARIABLE, option_value, word_value
from recovery_lint.sources.shell import Word

from . import _phases
from ._versions import with_origin

SAFE_LAUNCHERS = ("torchrun", "torch.distributed.run")
# what the MindIO TFT guide patches into the torchrun script (skipped when MindCluster is installed)
TFT_MARKERS = ("mindio_ttp.framework_ttp", "--enable-high-availability")
_PINS = "torch==2.1.0\ntorch-npu==2.1.0.post10\n"  # release 6.0.0: ships torch_npu_run, documented
_STATIC = (
    "torchrun --nnodes=2 --node_rank=$NODE_RANK --master_addr=$MASTER_ADDR --master_port=6000 \\\n    train.py  # go\n"
)
_STATIC_ENDPOINT = (
    "torchrun --nnodes=2 --node_rank=$NODE_RANK --rdzv_backend=static --rdzv_endpoint=${MASTER_ADDR}:29400 train.py\n"
)
_C10D = "torchrun --nnodes=4 --nproc_per_node=8 --rdzv_backend=c10d --rdzv_endpoint=${MASTER_ADDR}:29400 train.py\n"


class TorchrunWithoutParallelStore(Rule):
    code = "RL301"
    name = "torchrun-without-parallel-store"
    phase = "comm-init"
    severity = Severity.WARNING
    fix_availability = "sometimes"
    holds_if = (
        (
            "release",
            "the job's torch_npu release ships torch_npu_run; the MindCluster docs support the Parallel "
            "Store with torch 1.11.0 and a torch_npu release newer than 6.0.RC1, or torch 2.1.0 and later with one "
            "newer than 6.0.RC3",
        ),
        ("multi-node", "the job spans more than one node, where the Parallel Store pays off"),
    )
    summary = "PyTorch is launched with torchrun instead of torch_npu_run (Parallel Store)"
    premises = ("pytorch", "torchrun-launch", "multi-node")
    also_asks = ("release",)
    what = """
A PyTorch training launch through `torchrun`, `python -m torch.distributed.run` or
`python -m torch.distributed.launch` (whatever the interpreter word is, for example
`${DLS_PROGRAM_EXECUTOR} -m torch.distributed.launch`), in a launch script or in a manifest's
inline command, of a job that spans more than one node (a manifest running more than one Pod,
`--nnodes` above 1, a variable such as `NNODES` holding it, or `target.nodes` in the
configuration), where the torch_npu release in use ships `torch_npu_run` (from 6.0.rc1 for torch
1.11, from 6.0.rc3 for torch 2.1.0, 2.3.1 and 2.4.0, never for 2.2.0). The message says the scale
it judged. A launch on one node is not reported: the Parallel Store shortens the rendezvous of
many ranks across nodes. Where the release ships it but the MindCluster docs support it only from
a later one (6.0.RC3 itself), the finding is a note. A job a MindCluster manifest runs that
declares no version runs one of the releases MindCluster supports, which all ship it. Where the
node count or the release is not known the advice is withheld, and the run names the key that
declares it.
"""
    why = """
torchrun exchanges rendezvous data through TCPStore, whose single-threaded server slows down as
the number of ranks grows; after every fault all ranks rendezvous again. `torch_npu_run` runs the
same launcher with the Parallel Store (a multi-threaded TCPStore), which shortens communication
setup on every restart.
"""
    example = """
```bash
torchrun --nnodes=2 --node_rank=$NODE_RANK --master_addr=$MASTER_ADDR --master_port=6000 train.py  # RL301
```
Use instead:
```bash
torch_npu_run --nnodes=2 --node_rank=$NODE_RANK --master_addr=$MASTER_ADDR --master_port=6000 train.py
```
"""
    fix = """
Replaces the launcher words with `torch_npu_run`, keeping every argument. `torch_npu_run` forces
the `parallel` rendezvous, which takes the store address from `--master_addr`/`--master_port`,
the node's rank from `--node_rank` and the world size from `--nnodes`, and ignores
`--rdzv_backend`/`--rdzv_endpoint`. So the swap keeps the same world only for a static launch (no
rendezvous backend, or `static`): safe there for `torchrun` and `python -m torch.distributed.run`
when the job's declared release is known to ship `torch_npu_run` within the documented range (a
job that declares no version and is taken to run a release MindCluster supports gets the swap as an
unsafe fix: an image with 6.0.rc2 or a 2.2.0 build has no `torch_npu_run`). A static launch
that names its endpoint (`--rdzv_backend=static --rdzv_endpoint=HOST:PORT`, which torchrun uses
as the store) gets an unsafe fix that also writes the endpoint as `--master_addr=HOST
--master_port=PORT`, the same store for the parallel rendezvous; none when it gives no
`--node_rank`, no literal port, or a master address beside the endpoint. No fix for a c10d/etcd
rendezvous or an elastic `--nnodes=MIN:MAX` (every node would become rank 0 of its own store),
nor where the job runs MindIO TFT/TTP or TaskD (`--enable-high-availability`, a `recover-strategy`
annotation, a `ttp-port` or `taskd-port`): MindIO TFT's guide edits the `torchrun` script, which
torch_npu_run does not run, and TaskD patches torch's elastic agent and store, which the parallel
rendezvous replaces, a combination the docs show nowhere. Unsafe
otherwise: a release that is not known, options held in a variable whose value is not known, and
`torch.distributed.launch`, whose scripts expect a `--local_rank` argument that torchrun-style
launchers pass as the `LOCAL_RANK` variable instead.
"""
    sources = (
        "MindCluster docs: 05_configuring_training_recovery (Parallel Store version requirements)",
        "Ascend/pytorch release tags: setup.py console script torch_npu_run; torch_npu/distributed/run.py "
        "(forces rdzv_backend='parallel'); torch_npu/distributed/rendezvous.py _create_parallel_handler "
        "(--master_addr/--master_port/--node_rank)",
        "MindCluster docs: references/fault_recovery_acceleration/03_usage_guidance (MindIO TFT patches the "
        "torchrun script)",
    )
    cases = examples(
        lambda: (
            Case(
                title="a static torchrun launch with a release that ships torch_npu_run: safe fix",
                files={"train.sh": _STATIC, "requirements.txt": _PINS},
                expect=("train.sh:1:1",),
                fixed={"train.sh": _STATIC.replace("torchrun", "torch_npu_run")},
            ),
            Case(
                title="no version declared on a Volcano Job: the releases MindCluster documents ship torch_npu_run, "
                "but an older image may not, so the fix is unsafe",
                files={
                    "job.yaml": "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: g\nspec:\n"
                    "  tasks:\n  - name: t\n    replicas: 2\n    template:\n      spec:\n        containers:\n"
                    '        - name: c\n          command: ["bash", "train.sh"]\n',
                    "train.sh": _STATIC,
                },
                expect=("train.sh:1:1",),
                unsafe=True,
                fixed={"train.sh": _STATIC.replace("torchrun", "torch_npu_run")},
            ),
            Case(
                title="a c10d rendezvous: torch_npu_run would give every node rank 0, so no fix",
                files={"train.sh": _C10D, "requirements.txt": _PINS},
                expect=("train.sh:1:1",),
                unsafe=True,
                fixed={"train.sh": _C10D},
            ),
            Case(
                title="a static rendezvous naming its endpoint: torch_npu_run ignores it, so the fix moves it to "
                "--master_addr/--master_port (unsafe)",
                files={"train.sh": _STATIC_ENDPOINT, "requirements.txt": _PINS},
                expect=("train.sh:1:1",),
                unsafe=True,
                fixed={
                    "train.sh": _STATIC_ENDPOINT.replace("torchrun", "torch_npu_run").replace(
                        "--rdzv_endpoint=${MASTER_ADDR}:29400", "--master_addr=${MASTER_ADDR} --master_port=29400"
                    )
                },
            ),
            Case(
                title="the endpoint as a separate word",
                files={
                    "train.sh": _STATIC_ENDPOINT.replace("--rdzv_endpoint=", "--rdzv_endpoint "),
                    "requirements.txt": _PINS,
                },
                expect=("train.sh:1:1",),
                unsafe=True,
                fixed={
                    "train.sh": _STATIC_ENDPOINT.replace("torchrun", "torch_npu_run").replace(
                        "--rdzv_endpoint=${MASTER_ADDR}:29400", "--master_addr ${MASTER_ADDR} --master_port 29400"
                    )
                },
            ),
            Case(
                title="a static endpoint without --node_rank: every node would be rank 0, so no fix",
                files={"train.sh": _STATIC_ENDPOINT.replace("--node_rank=$NODE_RANK ", ""), "requirements.txt": _PINS},
                expect=("train.sh:1:1",),
                unsafe=True,
                fixed={"train.sh": _STATIC_ENDPOINT.replace("--node_rank=$NODE_RANK ", "")},
            ),
            Case(
                title="a job with TaskD (taskd-port) or process-level recovery: no fix",
                files={
                    "job.yaml": "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: g\nspec:\n  tasks:\n"
                    "  - name: t\n    replicas: 2\n    template:\n      spec:\n        containers:\n        - name: c\n"
                    '          command: ["bash", "train.sh"]\n          ports:\n          - containerPort: 9601\n'
                    "            name: taskd-port\n",
                    "train.sh": _STATIC,
                    "requirements.txt": _PINS,
                },
                expect=("train.sh:1:1",),
                unsafe=True,
                fixed={"train.sh": _STATIC},
            ),
            Case(
                title="an elastic node range: no fix",
                files={"train.sh": "torchrun --nnodes=1:4 --nproc_per_node=8 train.py\n", "requirements.txt": _PINS},
                expect=("train.sh:1:1",),
                unsafe=True,
                fixed={"train.sh": "torchrun --nnodes=1:4 --nproc_per_node=8 train.py\n"},
            ),
            Case(
                title="an interpreter variable with torch.distributed.launch in a manifest's job: unsafe fix",
                files={
                    "job.yaml": "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: g\nspec:\n  tasks:\n"
                    "  - name: t\n    replicas: 2\n    template:\n      spec:\n        containers:\n        - name: c\n"
                    '          command: ["bash", "train.sh"]\n',
                    "train.sh": "${DLS_PROGRAM_EXECUTOR} -m torch.distributed.launch $ARGS train.py\n",
                    "requirements.txt": _PINS,
                },
                expect=("train.sh:1:1",),
                unsafe=True,
                fixed={"train.sh": "torch_npu_run $ARGS train.py\n"},
            ),
            Case(
                title="release 6.0.RC3 ships torch_npu_run, the docs support it from a later release: a note, no fix",
                files={
                    "train.sh": "torchrun --nnodes=2 --nproc_per_node=8 train.py\n",
                    "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post8\n",
                },
                expect=("train.sh:1:1",),
                unsafe=True,
                fixed={"train.sh": "torchrun --nnodes=2 --nproc_per_node=8 train.py\n"},
            ),
            Case(
                title="a torchrun patched for MindIO TFT: no fix",
                files={
                    "train.sh": "torchrun --nnodes=2 --nproc_per_node=8 pretrain_gpt.py --enable-high-availability\n",
                    "requirements.txt": _PINS,
                },
                expect=("train.sh:1:1",),
                unsafe=True,
                fixed={
                    "train.sh": "torchrun --nnodes=2 --nproc_per_node=8 pretrain_gpt.py --enable-high-availability\n"
                },
            ),
            Case(
                title="one node (NNODES=1): the Parallel Store pays off across nodes, so no finding",
                files={
                    "train.sh": "NNODES=1\ntorchrun --nnodes $NNODES --nproc_per_node 8 --master_addr localhost train.py\n",
                    "requirements.txt": _PINS,
                },
            ),
            Case(
                title="one node: no --nnodes",
                files={"train.sh": "torchrun --nproc_per_node=8 train.py\n", "requirements.txt": _PINS},
            ),
            Case(
                title="a manifest that runs one Pod is one node, whatever the script says",
                files={
                    "job.yaml": "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata:\n  name: g\nspec:\n  tasks:\n"
                    "  - name: t\n    replicas: 1\n    template:\n      spec:\n        containers:\n        - name: c\n"
                    '          command: ["bash", "train.sh"]\n',
                    "train.sh": "torchrun --nnodes $NNODES --nproc_per_node 8 train.py\n",
                    "requirements.txt": _PINS,
                },
            ),
            Case(
                title="the node count is set at run time: withheld (declare target.nodes)",
                files={
                    "train.sh": "torchrun --nnodes $NNODES --nproc_per_node 8 train.py\n",
                    "requirements.txt": _PINS,
                },
            ),
            Case(
                title="the node count is set at run time, and the configuration declares the nodes",
                files={
                    "train.sh": "torchrun --nnodes $NNODES --nproc_per_node 8 train.py\n",
                    "requirements.txt": _PINS,
                },
                config={"target": {"nodes": 4}},
                expect=("train.sh:1:1",),
            ),
            Case(
                title="torch_npu 2.2.0.post2 (no 2.2.0 build ships torch_npu_run)",
                files={"train.sh": _STATIC, "requirements.txt": "torch==2.2.0\ntorch-npu==2.2.0.post2\n"},
            ),
            Case(title="release unknown, no manifest: no claim", files={"train.sh": _STATIC}),
            Case(
                title="already torch_npu_run", files={"train.sh": "torch_npu_run train.py\n", "requirements.txt": _PINS}
            ),
        )
    )

    @classmethod
    def phase_status(cls, job: Job) -> tuple[str, str]:
        return _phases.pytorch_only(job) or _phases.comm_init(job)

    def check_job(self, job: Job):
        if not job.context.pytorch:
            return
        facts, evidence = release_facts(job)
        if facts is None:
            yield self.withhold(job, "release", evidence)
            return
        support = feature_support("torch_npu_run", facts)
        if support.status == "missing":
            return
        if support.status == "unknown":
            yield self.withhold(job, "release", support.reason)
            return
        scale = answer(job, "multi-node").evidence
        for launch in job.launches:
            for cmd in launch.torch_commands:
                if cmd.launcher == "torch_npu_run":
                    continue
                if cmd.row.family == FRAMEWORK:  # type: ignore[union-attr]
                    advice, how = cmd.parallel_store_form
                    if advice is not None:  # else no torch_npu_run form: --show-jobs says why
                        yield self._framework_finding(job, cmd, (advice, how), support.status, support.reason, scale)
                    continue
                yield self._finding(job, cmd, support.status, support.reason, scale, facts.assumed)

    def _framework_finding(
        self, job: Job, cmd: LaunchCommand, advice: tuple[str, str], status: str, reason: str, scale: str
    ):
        """A framework command that starts torchrun itself: the change is a different command line,
        never a swap of its words, so no fix."""
        start, end = cmd.launcher_words
        words = cmd.command.words[start:end]
        written = " ".join(w.text for w in words)
        note, severity = ("", None) if status == "available" else (f" Note: {with_origin(reason, job)}.", Severity.INFO)
        span = words[0].span
        if cmd.script.exact and not cmd.script.argv:
            span = cmd.script.source.span(words[0].span.start, words[-1].span.end)
        action, how = advice
        message = (
            f"'{written}' rendezvous through the single-threaded TCPStore; {action} to use the Parallel Store. "
            f"{how}. Every rank of the job ({scale}) connects to that store again after each fault.{note} No fix: "
            "the command line changes from the framework's own to torch_npu_run's."
        )
        return self.report(span, message, severity=severity)

    def _finding(self, job: Job, cmd: LaunchCommand, status: str, reason: str, scale: str, assumed: bool):
        start, end = cmd.launcher_words
        words = cmd.command.words[start:end]
        written = " ".join(w.text for w in words)
        # a launch no edit can rewrite gets no reason either: the job around it (TaskD, TFT) then cannot
        # change what the finding says
        blocked = _no_fix(job, cmd, status) if _rewritable(job, cmd, words) else ""
        endpoint = _static_endpoint(cmd) if not blocked else None
        if isinstance(endpoint, str):
            blocked = f"{endpoint}; torch_npu_run ignores --rdzv_endpoint"
        edits = None if blocked or not cmd.exact else _edits(job, cmd, words)
        fix = None
        risk = ""
        if edits and isinstance(endpoint, tuple):
            rewrite = _endpoint_edit(cmd, *endpoint)
            risk = "the rendezvous endpoint becomes --master_addr/--master_port, where torch_npu_run reads it"
            fix = (
                unsafe_fix(
                    f"Replace '{written}' with 'torch_npu_run', the endpoint with --master_addr/--master_port",
                    *edits,
                    rewrite,
                )
                if rewrite
                else None
            )
        elif edits:
            risk = _risk(cmd, status, assumed)
            make = unsafe_fix if risk else safe_fix
            fix = make(f"Replace '{written}' with 'torch_npu_run'", *edits)
        if status == "available":
            note, severity = "", None
        else:
            note, severity = f" Note: {with_origin(reason, job)}.", Severity.INFO
        tail = f" No fix: {blocked}." if blocked else (f" The fix is unsafe: {risk}." if fix and risk else "")
        span = words[0].span
        if cmd.script.exact and not cmd.script.argv:
            span = cmd.script.source.span(words[0].span.start, words[-1].span.end)
        message = (
            f"'{written}' rendezvous through the single-threaded TCPStore; launch with torch_npu_run to use the "
            f"Parallel Store. Every rank of the job ({scale}) connects to that store again after each fault."
            f"{note}{tail}"
        )
        return self.report(span, message, fix, severity=severity)


def _rewritable(job: Job, cmd: LaunchCommand, words) -> bool:
    """Whether an edit can name torch_npu_run in place of the launcher words at all."""
    if not cmd.exact:
        return False
    if cmd.script.argv:
        return len(words) == 1 and job.manifest_file is not None
    return True


def _edits(job: Job, cmd: LaunchCommand, words) -> list[Edit] | None:
    if cmd.script.argv:
        if len(words) == 1 and job.manifest_file is not None:
            return [edit(job.manifest_file.source, words[0].span.start, words[0].span.end, "torch_npu_run")]
        return None
    one = replace_words(cmd.script, words, "torch_npu_run")
    return [one] if one else None


def _endpoint_edit(cmd: LaunchCommand, word: Word, host: str, port: str) -> Edit | None:
    """``--rdzv_endpoint=H:P`` (or its value word) written as ``--master_addr=H --master_port=P``."""
    if not cmd.script.exact or cmd.script.argv:
        return None
    text = word.text
    if text.startswith(ENDPOINT):  # --rdzv_endpoint=H:P, one word
        return edit(cmd.script.source, word.span.start, word.span.end, f"--master_addr={host} --master_port={port}")
    # --rdzv_endpoint H:P: the option word and its value, from the option to the value's end
    words = cmd.words
    k = next((i for i, w in enumerate(words) if w is word), 0)
    option = words[k - 1] if k else None
    if option is None or option.text not in ENDPOINT:
        return None
    return edit(cmd.script.source, option.span.start, word.span.end, f"--master_addr {host} --master_port {port}")


def _rendezvous(cmd: LaunchCommand) -> str | None:
    """Why the launch's rendezvous is not one torch_npu_run keeps, or None for a static launch (a
    static one naming its endpoint is kept only by the rewrite ``_endpoint_edits`` makes)."""
    words, after = cmd.words, cmd.launcher_words[1] - cmd.launcher_words[0]
    backend, _ = option_value(words, ("--rdzv_backend", "--rdzv-backend"), {}, after)
    if backend is not None and backend != "static":
        return f"this launch uses the {backend} rendezvous, which torch_npu_run replaces by its parallel one"
    _endpoint, given = option_value(words, ENDPOINT, {}, after)
    if given and backend is None:
        return "this launch names a rendezvous endpoint, which torch_npu_run ignores"
    if any((word_value(w, {}) or w.text) == "--standalone" for w in words):
        return "--standalone uses a c10d rendezvous on a free local port, which torch_npu_run replaces"
    nodes, _ = option_value(words, ("--nnodes",), {}, after)
    if nodes is not None and ":" in nodes:
        low, _, high = nodes.partition(":")
        if low != high:
            return f"--nnodes={nodes} is an elastic range, while torch_npu_run's world is fixed at its maximum"
    return None


def _no_fix(job: Job, cmd: LaunchCommand, status: str) -> str:
    """Why the swap cannot be offered at all ('' when it can)."""
    if status == "undocumented":
        return "the release ships torch_npu_run, but outside the documented support (RL302 would note it)"
    why = _rendezvous(cmd)
    if why:
        return (
            f"{why}: every node would become rank 0 of its own store unless --master_addr, --master_port and "
            "--node_rank are given"
        )
    texts = [w.text for w in cmd.words] + [s.source.text for s in job.scripts] + [p.source.text for p in job.pin_files]
    if any(marker in text for text in texts for marker in TFT_MARKERS):
        return "the job uses MindIO TFT, whose guide patches the torchrun script; torch_npu_run would not run the patch"
    taskd = _taskd_or_ttp(job)
    if taskd:
        return (
            f"{taskd}: TaskD patches torch's elastic agent and its store (taskd.python.adaptor.patch, imported by "
            "torch/distributed/run.py), which the Parallel Store's rendezvous replaces, and the docs show that "
            "combination nowhere"
        )
    return ""


def _taskd_or_ttp(job: Job) -> str:
    """What in the job's manifest says MindIO TTP or TaskD takes part in its recovery ('' when nothing)."""
    doc = job.manifest
    if doc is None:
        return ""
    if doc.annotation("recover-strategy") is not None:
        return "the manifest asks for process-level recovery (recover-strategy), which runs TaskD and MindIO TTP"
    for _, container in doc.containers():
        ports = container.node.seq("ports")
        for item in ports.maps() if ports is not None else ():
            if item.text("name") in ("ttp-port", "taskd-port"):
                return f"the container opens {item.text('name')}, for MindIO TTP or TaskD"
    return ""


ENDPOINT = ("--rdzv_endpoint", "--rdzv-endpoint")
# HOST:PORT with a literal port; HOST may be a variable (${MASTER_ADDR}) or an IPv6 address in brackets
_HOST_PORT = LazyPattern(r"^(?P<host>\[[^\]]+\]|[^:\[\]]+):(?P<port>\d{1,5})$")


def _static_endpoint(cmd: LaunchCommand) -> tuple[Word, str, str] | str | None:
    """A static rendezvous that names its endpoint (``--rdzv_backend=static --rdzv_endpoint=H:P``): the
    endpoint word with its host and port text, for the rewrite torch_npu_run needs (its parallel
    rendezvous reads --master_addr/--master_port and ignores the endpoint); why it cannot be rewritten
    (a string); None when the launch names no endpoint."""
    words, after = cmd.words, cmd.launcher_words[1] - cmd.launcher_words[0]
    backend, _ = option_value(words, ("--rdzv_backend", "--rdzv-backend"), {}, after)
    if backend != "static":
        return None
    for i in range(after, len(words)):
        text = words[i].text
        for name in ENDPOINT:
            if text == name or text.startswith(name + "="):
                value = text[len(name) + 1 :] if "=" in text else (words[i + 1].text if i + 1 < len(words) else "")
                found = _HOST_PORT.match(value.strip("\"'"))
                if found is None:
                    return f"the endpoint {value or '(missing)'} has no literal port to give --master_port"
                taken, _ = option_value(
                    words, ("--master_addr", "--master-addr", "--master_port", "--master-port"), {}, after
                )
                if taken is not None:
                    return "the launch names both --rdzv_endpoint and --master_addr/--master_port"
                _rank, given = option_value(words, ("--node_rank", "--node-rank"), {}, after)
                if not given:
                    return "the launch gives no --node_rank, from which torch_npu_run takes each node's rank"
                return words[i] if "=" in text else words[i + 1], found["host"], found["port"]
    return None


def _risk(cmd: LaunchCommand, status: str, assumed: bool) -> str:
    """Why the swap is unsafe ('' when it is safe)."""
    if status != "available":
        return "the release is not known to ship torch_npu_run within the documented range"
    if assumed:
        return (
            "no torch_npu version is declared, and an image with an older release (6.0.rc2 or earlier, any 2.2.0 build) ships "
            "no torch_npu_run: declare versions.torch-npu to make it safe"
        )
    if cmd.launcher not in SAFE_LAUNCHERS:
        return "torch.distributed.launch passes --local_rank, torch_npu_run sets LOCAL_RANK"
    # a "$ARGS" word left whole: its value was not known at all, so neither are the options in it
    whole = {id(w) for w in cmd.command.words if w.value is None and PURE_VARIABLE.match(w.text)}
    if any(id(w) in whole for w in cmd.words):
        return "options held in a variable whose value is not known"
    return ""
