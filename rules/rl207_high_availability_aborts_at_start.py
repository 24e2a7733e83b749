"""RL207: MindSpeed-LLM arguments that its high-availability start-up checks refuse."""

from __future__ import annotations

import posixpath
from functools import cache
from typing import TYPE_CHECKING

from recovery_lint.diagnostics import Severity
from recovery_lint.jobs import Job, LaunchCommand
from recovery_lint.knowledge.features import mindspeed_llm_checks
from recovery_lint.premises import answer
from recovery_lint.rule import MISCONFIGURED, Case, Rule, examples
from recovery_lint.sources.manifest import OPERATOR_CONTAINER
from recovery_lint.sources.shell import Word
from recovery_lint.span import Span

from ._watchdog import HOT_SWITCH, HOT_SWITCH_LABEL

if TYPE_CHECKING:
    import ast

ENV = "HIGH_AVAILABILITY"
# the options that say a launch uses MindSpeed-LLM's high availability (MindIO TFT)
HA_OPTIONS = (
    "--enable-high-availability",
    "--enable-hbmfault-repair",
    "--enable-worker-reboot",
    "--enable-elastic-training",
    "--enable-optimizer-state-local-copy",
)

_SCRIPT = """\
#!/bin/bash
GPT_ARGS="
    --tensor-model-parallel-size 2
    --use-distributed-optimizer
    --swap-attention
"
torchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py $GPT_ARGS \\
    --enable-high-availability \\
    --enable-worker-reboot
"""
_ENTRY = "from mindspeed_llm import megatron_adaptor\nimport torch\n"
_V23 = {"versions": {"mindspeed-llm": "2.3.0"}}
_ACJOB = """\
apiVersion: mindxdl.gitee.com/v1
kind: AscendJob
metadata:
  name: llama
  labels:
    framework: pytorch
    ring-controller.atlas: ascend-910b
    fault-scheduling: "grace"
  annotations:
    recover-strategy: "recover,dump"
spec:
  replicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: ascend
            command: ["/bin/bash", "-c", "bash /job/code/train.sh"]
"""
_ELASTIC = """\
torchrun --nnodes 2 --nproc_per_node 8 pretrain_gpt.py \\
    --enable-high-availability --enable-elastic-training \\
    --expert-model-parallel-size 4 --use-distributed-optimizer
"""


class HighAvailabilityAbortsAtStart(Rule):
    code = "RL207"
    scorecard = MISCONFIGURED
    name = "high-availability-aborts-at-start"
    phase = "rescheduling"
    severity = Severity.ERROR
    fix_availability = "none"
    also_asks = ("mindspeed-llm-release",)
    summary = "MindSpeed-LLM refuses this combination of high-availability arguments at start-up"
    what = """
A MindSpeed-LLM training launch whose arguments trip one of the checks its release runs on the
high-availability (MindIO TFT) arguments before training starts, for example:

- `--enable-high-availability` with `--swap-attention` (2.3 and later), `--swap-optimizer` (2.2 and
  later), `--disable-gloo-group` or `--lora-target-modules` (26.0 and later);
- `--enable-elastic-training` without `--enable-high-availability` or without
  `--use-distributed-optimizer`, with `--use-custom-fsdp` or `--reuse-fp32-param`, or with an
  expert- or context-parallel size above 1 (2.2 and later);
- `--enable-hbmfault-repair` without `--enable-high-availability`;
- on 2.0 and 2.1, `--enable-high-availability` on a `pretrain_*.py` entry at all (`pretrain()`
  raises "High availability feature do not support core_r0.8.0").

`HIGH_AVAILABILITY=dump,recover,retry,elastic-training` in the launch environment turns the same
options on (2.2 and later) and is read like them. The checks are those of the release line the job
declares (`versions.mindspeed-llm`, or a `mindspeed-llm` pin), read from its tag; an argument set
from a variable whose value is not known in the repository makes an absence unknown, and then
nothing is said about it.
"""
    why = """
The check raises `AssertionError` while the arguments are parsed, on every rank: the job never
trains. Under MindCluster each failure counts as a fault, so the job is rescheduled, fails the same
way, and uses up its retry budget before anyone reads the log; the recovery the options were meant
to buy never starts.
"""
    example = """
```bash
# MindSpeed-LLM 2.3.0
torchrun $DISTRIBUTED_ARGS pretrain_gpt.py --enable-high-availability --swap-attention ...   # RL207
```
Use instead (either feature, not both):
```bash
torchrun $DISTRIBUTED_ARGS pretrain_gpt.py --enable-high-availability ...
```
"""
    fix = """
No fix: which of the two features to give up is the user's choice.
"""
    sources = (
        "Ascend/MindSpeed-LLM tags v2.2.0 to v26.1.0: mindspeed_llm/features_manager/high_availability/"
        "high_availability.py validate_args; v2.0.0: training/arguments.py _validate_high_availability; "
        "v2.0.0/v2.1.0: training/training.py pretrain() (recovery_lint schemas/mindspeed_llm_checks.json)",
        "Ascend/MindSpeed-LLM high_availability_helper.py get_env_args (HIGH_AVAILABILITY, 2.2.0 and later)",
        "Ascend/MindSpeed-LLM training/arguments.py _add_dummy_args_v2 (use_dist_ckpt forced off, 2.2.0 to 26.0.0)",
    )
    cases = examples(
        lambda: (
            Case(
                title="2.3.0: high availability with swap attention, one option from a variable",
                files={"train.sh": _SCRIPT, "pretrain_gpt.py": _ENTRY},
                config=_V23,
                expect=("train.sh:8:5",),
            ),
            Case(
                title="2.2.0 has no swap-attention check",
                files={"train.sh": _SCRIPT, "pretrain_gpt.py": _ENTRY},
                config={"versions": {"mindspeed-llm": "2.2.0"}},
            ),
            Case(
                title="elastic training with expert parallelism, 26.1.0",
                files={"train.sh": _ELASTIC, "pretrain_gpt.py": _ENTRY},
                config={"versions": {"mindspeed-llm": "26.1.0"}},
                expect=("train.sh:3:5",),
            ),
            Case(
                title="elastic training without the distributed optimizer, the arguments all known",
                files={
                    "train.sh": _ELASTIC.replace(" --use-distributed-optimizer", "").replace(
                        "--expert-model-parallel-size 4", "--expert-model-parallel-size 1"
                    ),
                    "pretrain_gpt.py": _ENTRY,
                },
                config=_V23,
                expect=("train.sh:2:32",),
            ),
            Case(
                title="an absence behind an unknown variable is not claimed",
                files={
                    "train.sh": _ELASTIC.replace(" --use-distributed-optimizer", " $EXTRA_ARGS").replace(
                        "--expert-model-parallel-size 4", "--expert-model-parallel-size 1"
                    ),
                    "pretrain_gpt.py": _ENTRY,
                },
                config=_V23,
            ),
            Case(
                title="HIGH_AVAILABILITY turns high availability on: retry with swap optimizer",
                files={
                    "train.sh": "export HIGH_AVAILABILITY=retry\n"
                    "torchrun --nproc_per_node 8 pretrain_gpt.py --swap-optimizer\n",
                    "pretrain_gpt.py": _ENTRY,
                },
                config=_V23,
                expect=("train.sh:2:45",),
            ),
            Case(
                title="Ascend Operator turns high availability on for a recover-strategy: swap attention stops it",
                files={
                    "job.yaml": _ACJOB,
                    "train.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --swap-attention\n",
                    "pretrain_gpt.py": _ENTRY,
                },
                config=_V23,
                expect=("train.sh:1:45",),
            ),
            Case(
                title="HBM fault repair without the flag: the operator's HIGH_AVAILABILITY turns it on",
                files={
                    "job.yaml": _ACJOB,
                    "train.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --enable-hbmfault-repair\n",
                    "pretrain_gpt.py": _ENTRY,
                },
                config=_V23,
            ),
            Case(
                title="2.1.0: pretrain() refuses high availability",
                files={
                    "train.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --enable-high-availability\n",
                    "pretrain_gpt.py": _ENTRY,
                },
                config={"versions": {"mindspeed-llm": "2.1.0"}},
                expect=("train.sh:1:45",),
            ),
            Case(
                title="MindSpeed-LLM version not declared: withheld",
                files={"train.sh": _SCRIPT, "pretrain_gpt.py": _ENTRY},
                withheld=("mindspeed-llm-release",),
            ),
            Case(
                title="a compatible set: high availability with the distributed optimizer",
                files={
                    "train.sh": "torchrun --nproc_per_node 8 pretrain_gpt.py --enable-high-availability "
                    "--enable-worker-reboot --use-distributed-optimizer\n",
                    "pretrain_gpt.py": _ENTRY,
                },
                config=_V23,
            ),
            Case(
                title="an entry that is not MindSpeed-LLM",
                files={
                    "train.sh": "torchrun --nproc_per_node 8 train.py --enable-high-availability --swap-attention\n",
                    "train.py": "import torch\n",
                },
                config=_V23,
            ),
        )
    )

    def check_job(self, job: Job):
        series = None
        seen: set[tuple[str, int]] = set()
        for launch in job.launches:
            for cmd in launch.commands:
                args = _launch_arguments(cmd)
                if args is None or not _uses_high_availability(job, args, cmd):
                    continue
                if series is None:
                    release = answer(job, "mindspeed-llm-release")
                    series = _series_of(job) if release.held else ""
                    if not series:
                        yield self.withhold(job, "mindspeed-llm-release", release.evidence)
                if not series:
                    return
                for check, trigger in _failing(job, series, args, cmd):
                    key = (trigger.path, trigger.start)
                    if key in seen:
                        continue
                    seen.add(key)
                    yield self._finding(job, series, check, trigger, args)

    def _finding(self, job: Job, series: str, check: dict, trigger: Span, args: _Arguments):
        table = mindspeed_llm_checks()["series"][series]
        names = " and ".join(args.describe(name) for name in _shown(check["when"], args))
        where = f"{check.get('file', table['file'])}:{check['line']} at {table['tag']}"
        version = job.context.versions.describe("mindspeed-llm")
        return self.report(
            trigger,
            f"MindSpeed-LLM stops at start-up on {names}: '{check['message']}' ({where}; {version}). The job "
            "never trains, and every rescheduling fails the same way",
            related=[(span, "set here") for span in args.spans(_names(check["when"])) if span != trigger],
        )


class _Arguments:
    """A launch's training arguments as MindSpeed-LLM's parser would read them (argparse dests), and
    whether every argument is known (none comes from a variable whose value is not)."""

    def __init__(self, words: list[Word]) -> None:
        self.values: dict[str, object] = {}
        self.where: dict[str, Span] = {}
        self.complete = True
        self.from_env: dict[str, str] = {}
        i = 0
        while i < len(words):
            word = words[i]
            text = word.value
            i += 1
            if text is None:
                self.complete = False  # "$EXTRA_ARGS", "$@": any option may be in it
                continue
            if not text.startswith("--"):
                continue
            name, eq, value = text[2:].partition("=")
            dest = name.replace("-", "_")
            found: object = True
            if eq:
                found = value
            elif i < len(words) and (words[i].value is None or not words[i].value.startswith("-")):
                found = words[i].value  # None: the value is only known at run time
                i += 1
            self.values[dest] = found
            self.where.setdefault(dest, word.span)

    def value(self, dest: str, defaults: dict[str, object]) -> object:
        """The argument's value; its default when absent and every argument is known; else None."""
        if dest in self.values:
            return self.values[dest]
        if not self.complete:
            return None
        return defaults.get(dest, False)

    def describe(self, dest: str) -> str:
        option = "--" + dest.replace("_", "-")
        if dest in self.from_env:
            return self.from_env[dest]
        if dest in self.values:
            value = self.values[dest]
            return option if value is True else f"{option} {value}"
        return f"no {option}"

    def spans(self, dests: list[str]) -> list[Span]:
        return [self.where[d] for d in dests if d in self.where]


def _launch_arguments(cmd: LaunchCommand) -> _Arguments | None:
    """The arguments after a MindSpeed-LLM entry; None when the launch runs another entry (one whose
    file is known and imports no mindspeed_llm)."""
    if cmd.entry is None or not cmd.judged:
        return None
    if cmd.entry_file is not None and not cmd.entry_file.imports_module("mindspeed_llm"):
        return None
    at = next((k for k, w in enumerate(cmd.words) if w.span == cmd.entry.span), None)
    if at is None:
        return None
    return _Arguments(cmd.words[at + 1 :])


def _uses_high_availability(job: Job, args: _Arguments, cmd: LaunchCommand) -> bool:
    env = cmd.env.get(ENV)
    options = {o[2:].replace("-", "_") for o in HA_OPTIONS}
    if options & set(args.values) or (env is not None and bool(env.known)):
        return True
    return _in_operator_container(job, cmd) and _operator_value(job) is not None


def _series_of(job: Job) -> str:
    versions = job.context.versions.alternatives("mindspeed-llm")
    return ".".join(versions[0].split(".")[:2]) if versions else ""


def _failing(job: Job, series: str, args: _Arguments, cmd: LaunchCommand):
    """Each check of the release line the launch certainly trips, with where to report it."""
    data = mindspeed_llm_checks()
    table = data["series"][series]
    values = _effective(job, args, cmd, table, data)
    entry = posixpath.basename(cmd.entry_path or (cmd.entry.text if cmd.entry else ""))
    checks = list(table["checks"])
    checks += [c for c in table.get("entry_checks", ()) if entry.startswith(c["entry_prefix"])]
    for check in checks:
        if _evaluate(_condition(check["when"]), values) is True:
            yield check, _trigger(check, args, cmd)


def _effective(job: Job, args: _Arguments, cmd: LaunchCommand, table: dict, data: dict) -> dict[str, object]:
    """Every argument a check names, as the release sees it at validation."""
    defaults = data["defaults"]
    names = {n for c in table["checks"] + table.get("entry_checks", []) for n in _names(c["when"])}
    values = {n: args.value(n, defaults) for n in names}
    mode = table.get("use_dist_ckpt")
    if mode == "false":
        values["use_dist_ckpt"] = False
    elif mode == "unknown":
        values["use_dist_ckpt"] = None
    if not table.get("high_availability_env"):
        return values
    known, span, said = _high_availability_env(job, cmd, data)
    if known is None:
        return {n: (v if v is True else None) for n, v in values.items()}  # any switch may be on
    turns_on = data["high_availability_env"]["turns_on"]
    for strategy in known.split(","):
        for dest in turns_on.get(strategy.lower(), ()):
            if values.get(dest) is not True:
                values[dest] = True
                args.from_env.setdefault(dest, said)
                if span is not None:
                    args.where.setdefault(dest, span)
    return values


def _high_availability_env(job: Job, cmd: LaunchCommand, data: dict) -> tuple[str | None, Span | None, str]:
    """HIGH_AVAILABILITY as the training process sees it ("" when unset, None when unknown), and where
    it is set: a launch script's export wins; otherwise Ascend Operator's value for a PyTorch AscendJob
    with a recover-strategy or hot switch (beside a container env entry of the same name: unknown)."""
    env = cmd.env.get(ENV)
    if env is not None and env.origin in ("script", "inline"):
        return env.known, env.span, f"{ENV}={env.known}"
    injected = _operator_value(job) if _in_operator_container(job, cmd) else None
    if injected is not None:
        if env is not None:
            return None, None, ""
        return (
            injected[0],
            injected[1],
            f"{ENV}={injected[0]} (which Ascend Operator sets for the manifest's {injected[2]})",
        )
    if env is not None:
        return env.known, env.span, f"{ENV}={env.known}"
    if cmd.may_set(ENV):
        return None, None, ""  # a script sourced before the launch, not read, may set it
    return "", None, ""


def _in_operator_container(job: Job, cmd: LaunchCommand) -> bool:
    """Whether the launch runs in the container whose environment Ascend Operator writes."""
    launch = next((launch for launch in job.launches if cmd in launch.commands), None)
    return launch is not None and launch.container is not None and launch.container.name == OPERATOR_CONTAINER


def _operator_value(job: Job) -> tuple[str, Span, str] | None:
    """What Ascend Operator sets HIGH_AVAILABILITY to on the job's containers, where, and why."""
    doc = job.manifest
    if doc is None or not doc.is_ascendjob or job.context.framework != "pytorch":
        return None  # decided before the release data is read: most jobs are not PyTorch AscendJobs
    table = mindspeed_llm_checks()["operator_env"]
    values: list[str] = []
    strategy = doc.recover_strategy
    if strategy is not None and strategy.value:
        values += [table["strategies"][s] for s in strategy.value.split(",") if s in table["strategies"]]
    hot = doc.label(HOT_SWITCH_LABEL)
    if hot is not None and hot.value == HOT_SWITCH:
        values.append(table["hot_switch"])
    where = strategy if strategy is not None else hot
    if not values or where is None:
        return None
    named = f"recover-strategy: {strategy.value}" if where is strategy else f"{HOT_SWITCH_LABEL}: {HOT_SWITCH}"
    return ",".join(sorted(set(values))), where.span, named


@cache
def _condition(text: str) -> ast.expr:
    import ast

    return ast.parse(text, mode="eval").body


def _evaluate(node: ast.expr, values: dict[str, object]) -> bool | None:
    """A check's condition in three values: True, False, or None where an argument is unknown."""
    import ast

    if isinstance(node, ast.Name):
        value = values.get(node.id)
        return None if value is None else bool(value) and value != "false"
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = _evaluate(node.operand, values)
        return None if inner is None else not inner
    if isinstance(node, ast.BoolOp):
        parts = [_evaluate(v, values) for v in node.values]
        if isinstance(node.op, ast.And):
            return False if False in parts else (None if None in parts else True)
        return True if True in parts else (None if None in parts else False)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Gt):
        left, right = node.left, node.comparators[0]
        if isinstance(left, ast.Name) and isinstance(right, ast.Constant):
            try:
                return int(str(values.get(left.id))) > right.value if values.get(left.id) is not None else None
            except ValueError:
                return None
    return None


def _shown(condition: str, args: _Arguments) -> list[str]:
    """The arguments that make a check fail, for its message: those set, and those whose absence it
    asks about (``not use_distributed_optimizer``)."""
    import ast

    tree = _condition(condition)
    negated = {
        n.operand.id
        for n in ast.walk(tree)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not) and isinstance(n.operand, ast.Name)
    }
    return [n for n in _names(condition) if n in args.values or n in args.from_env or n in negated]


def _names(condition: str) -> list[str]:
    import ast

    tree = _condition(condition)
    return list(dict.fromkeys(n.id for n in ast.walk(tree) if isinstance(n, ast.Name)))


def _trigger(check: dict, args: _Arguments, cmd: LaunchCommand) -> Span:
    """Where to report: the last option the check names that is set (the one added to a working
    set), else the entry."""
    spans = args.spans(_names(check["when"]))
    if spans:
        return max(spans, key=lambda s: (s.path, s.start))
    assert cmd.entry is not None
    return cmd.entry.span
