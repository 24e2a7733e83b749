"""Hypothesis strategies: small training repositories in many textual styles.

A repository is a ``dict`` of relative path -> text: a job manifest (Volcano Job or AscendJob), the
launch scripts it starts, a training entry and version pins. Every choice a user can make in how a
file is written is drawn: block or flow YAML, quoting, indentation, sequence style, anchors and
aliases, comments before entries and after values (some with tabs), CRLF, a BOM, a missing final
newline, multi-document streams with empty and comment-only documents; scripts with functions, ``if``
blocks, continuation lines and comments; Python files with comments and CRLF.

Every comment carries a unique token (``cmt<N>``) so a test can check that each one survives a fix.
"""

from __future__ import annotations

import io
import os
import re
import tokenize
from collections import Counter
from dataclasses import dataclass

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# -- profiles ------------------------------------------------------------------------------------
# Applied per test (``@PROFILE``) so the suite's other hypothesis tests keep their own settings.
settings.register_profile(
    "ci",
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)  # derandomize as the loaded profile says: the suite's draws the same inputs every run, fuzz.run new ones
settings.register_profile(
    "long",
    max_examples=5000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROFILE_NAME = os.environ.get("HYPOTHESIS_PROFILE", "ci")
PROFILE = settings.get_profile(PROFILE_NAME if PROFILE_NAME in ("ci", "long") else "ci")


def scaled(n: int) -> settings:
    """``n`` examples in the normal run, 25 times that with HYPOTHESIS_PROFILE=long."""
    return settings(PROFILE, max_examples=n * 25 if PROFILE_NAME == "long" else n)


# -- YAML model ----------------------------------------------------------------------------------
@dataclass
class Scalar:
    value: str
    style: str = "auto"  # auto | plain | single | double | literal | literal-strip | folded


@dataclass
class Map:
    items: list[Entry]
    flow: bool = False
    anchor: str | None = None


@dataclass
class Seq:
    items: list[Item]
    flow: bool = False
    anchor: str | None = None


@dataclass
class Alias:
    name: str


Node = Scalar | Map | Seq | Alias


@dataclass
class Entry:
    key: str
    value: Node
    before: str | None = None  # a comment line before the entry (text after '#')
    after: str | None = None  # a comment after the entry's line


@dataclass
class Item:
    value: Node
    before: str | None = None
    after: str | None = None


PLAIN_UNSAFE = re.compile(
    r"^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|null|Null|NULL|~|"
    r"[-+]?[0-9][0-9_.eE+:-]*|0x[0-9a-fA-F]+|0o[0-7]+|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|)$"
)
SPECIAL = re.compile(r"^[\s\-?:,\[\]{}#&*!|>'\"%@`]|:\s|\s#|:$|[\r\n]|\s$")
FLOW_SPECIAL = re.compile(r"[,\[\]{}]")


def scalar_text(s: Scalar, flow: bool) -> str:
    value = s.value
    style = s.style
    needs = bool(SPECIAL.search(value)) or (flow and bool(FLOW_SPECIAL.search(value)))
    if style in ("auto", "plain"):
        if (PLAIN_UNSAFE.match(value) and style == "auto") or needs:
            style = "double"
        else:
            return value
    if style == "single" and "'" not in value and "\n" not in value:
        return f"'{value}'"
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


BLOCK = {"literal": "|", "literal-strip": "|-", "folded": ">"}
BLOCKS = ("literal", "literal", "literal-strip", "folded")


class Renderer:
    """Writes the model as YAML text in a drawn style; comments are numbered as written."""

    def __init__(self, step: int, seq_indent: bool, counter: list[int]) -> None:
        self.step = step
        self.seq_indent = seq_indent  # "key:\n  - item" (True) or "key:\n- item" (False)
        self.counter = counter
        self.lines: list[str] = []

    def comment(self, text: str) -> str:
        self.counter[0] += 1
        return text.replace("{n}", str(self.counter[0]))

    def _tail(self, after: str | None) -> str:
        return f"  #{self.comment(after)}" if after else ""

    def flow(self, node: Node) -> str:
        if isinstance(node, Alias):
            return f"*{node.name}"
        if isinstance(node, Scalar):
            return scalar_text(node, flow=True)
        anchor = f"&{node.anchor} " if node.anchor else ""
        if isinstance(node, Map):
            return anchor + "{" + ", ".join(f"{e.key}: {self.flow(e.value)}" for e in node.items) + "}"
        return anchor + "[" + ", ".join(self.flow(i.value) for i in node.items) + "]"

    def _inline(self, node: Node) -> str | None:
        """The text after ``key:`` when the node fits on the key's line, else None."""
        if isinstance(node, Alias):
            return f"*{node.name}"
        if isinstance(node, Scalar):
            if node.style in BLOCK:
                return None
            return scalar_text(node, flow=False)
        if node.flow or not node.items:
            return self.flow(node)
        return None

    def map(self, m: Map, indent: int, first_prefix: str | None = None) -> None:
        """Block mapping at ``indent``; ``first_prefix`` replaces the first line's indentation ("- ")."""
        pad = " " * indent
        for i, e in enumerate(m.items):
            lead = first_prefix if (i == 0 and first_prefix is not None) else pad
            if e.before and not (i == 0 and first_prefix is not None):
                self.lines.append(f"{pad}#{self.comment(e.before)}")
            inline = self._inline(e.value)
            if inline is not None:
                self.lines.append(f"{lead}{e.key}: {inline}{self._tail(e.after)}")
                continue
            v = e.value
            if isinstance(v, Scalar):  # a block scalar
                self.lines.append(f"{lead}{e.key}: {BLOCK[v.style]}{self._tail(e.after)}")
                for line in v.value.rstrip("\n").split("\n"):
                    self.lines.append(f"{pad}{' ' * self.step}{line}" if line else "")
                continue
            anchor = f" &{v.anchor}" if v.anchor else ""
            self.lines.append(f"{lead}{e.key}:{anchor}{self._tail(e.after)}")
            if isinstance(v, Map):
                self.map(v, indent + self.step)
            else:
                self.seq(v, indent + (self.step if self.seq_indent else 0))

    def seq(self, s: Seq, indent: int) -> None:
        pad = " " * indent
        for item in s.items:
            if item.before:
                self.lines.append(f"{pad}#{self.comment(item.before)}")
            v = item.value
            if isinstance(v, Map) and not v.flow and v.items and not v.anchor:
                self.map(v, indent + 2, first_prefix=f"{pad}- ")
                if item.after:
                    self.lines[-1] += self._tail(item.after)
                continue
            if isinstance(v, Scalar) and v.style in BLOCK:
                self.lines.append(f"{pad}- {BLOCK[v.style]}{self._tail(item.after)}")
                for line in v.value.rstrip("\n").split("\n"):
                    self.lines.append(f"{pad}  {line}" if line else "")
                continue
            inline = self._inline(v)
            if inline is None:
                inline = self.flow(v)
            self.lines.append(f"{pad}- {inline}{self._tail(item.after)}")


# -- drawing helpers -----------------------------------------------------------------------------
COMMENT_TEXTS = (" cmt{n}", " cmt{n} note: keep me", "\tcmt{n} tab", " cmt{n}\twith a tab", "cmt{n} no space")


@st.composite
def comment(draw, p: float = 0.3) -> str | None:
    if draw(st.floats(0, 1)) < p:
        return draw(st.sampled_from(COMMENT_TEXTS))
    return None


def styled(value: str):
    return st.builds(Scalar, st.just(value), st.sampled_from(("auto", "auto", "single", "double")))


@st.composite
def entry(draw, key: str, value: Node) -> Entry:
    return Entry(key, value, draw(comment()), draw(comment()))


# -- the parts of a job --------------------------------------------------------------------------
# Every launch starts a multi-process training (a launcher with a process count, a device loop),
# so a script no manifest runs is judged too; msrun is the MindSpore launch no PyTorch rule judges.
LAUNCHERS = (
    "torchrun --nproc_per_node 8 {entry}",
    "torchrun --nnodes=$NNODES \\\n    --nproc_per_node=8 \\\n    {entry} --lr 0.1",
    "torchrun --nnodes=2 --node_rank=$NODE_RANK --master_addr=$MASTER_ADDR --master_port=6000 \\\n"
    "    --nproc_per_node=8 {entry}",
    "torchrun --nnodes=2 --nproc_per_node=8 --rdzv_backend=c10d --rdzv_endpoint=$MASTER_ADDR:29400 {entry}",
    "python -m torch.distributed.launch --nproc_per_node=8 {entry}",
    "python3 -m torch.distributed.run --nproc_per_node 8 {entry}",
    "${PYTHON} -m torch.distributed.launch $DISTRIBUTED_ARGS {entry}",
    "nohup torchrun --nproc_per_node 8 {entry} > train.log 2>&1 &",
    "torch_npu_run --nproc_per_node 8 {entry}",
    "for i in $(seq 0 7); do\n    RANK_ID=$i python {entry} --epochs 1 &\ndone\nwait",
    "for i in {0..7}; do python {entry} --local_rank $i & done",
    "msrun --worker_num=8 {entry}",
    "cd /job/code && torchrun --nproc_per_node 8 {entry}",
    "echo start; torchrun --nproc_per_node 8 {entry} | tee log.txt",
    "HCCL_ASYNC_ERROR_HANDLING=0 torchrun {entry}",
    "RESULT=$(torchrun --nproc_per_node 8 {entry})",
)
WATCHDOG_VALUES = ("0", "1", '"0"', "'1'", "2")


@st.composite
def shell_lines(draw, entry_path: str, counter: list[int], with_launch: bool = True) -> list[str]:
    """The body of a launch script (no CRLF: bash rejects it)."""

    def c() -> str:
        counter[0] += 1
        return draw(st.sampled_from(COMMENT_TEXTS)).replace("{n}", str(counter[0]))

    lines: list[str] = []
    if draw(st.booleans()):
        lines.append(draw(st.sampled_from(("#!/bin/bash", "#!/usr/bin/env bash", "#!/bin/sh"))))
    if draw(st.booleans()):
        lines.append("#" + c())
    if draw(st.booleans()):
        lines.append("set -e")
    for name in ("HCCL_ASYNC_ERROR_HANDLING", "TORCH_HCCL_ASYNC_ERROR_HANDLING", "RESUME_MODE_ENABLE"):
        how = draw(st.sampled_from(("none", "none", "export", "assign-then-export", "prefix-export")))
        value = draw(st.sampled_from(WATCHDOG_VALUES))
        tail = f"  #{c()}" if draw(st.booleans()) else ""
        if how == "export":
            lines.append(f"export {name}={value}{tail}")
        elif how == "assign-then-export":
            lines.append(f"{name}={value}{tail}")
            lines.append(f"export {name}")
        elif how == "prefix-export":
            lines.append(f"export ASCEND_GLOBAL_LOG_LEVEL=3 {name}={value}{tail}")
    if draw(st.booleans()):
        lines.append(f'export ASCEND_CACHE_PATH="/cache"  #{c()}')
    if draw(st.booleans()):
        lines.append("export RANK_TABLE_FILE=/user/serverid/devindex/config/hccl.json")
    if not with_launch:
        return lines
    if draw(st.booleans()):
        lines.append("source ./env.sh")
    launch = draw(st.sampled_from(LAUNCHERS)).replace("{entry}", entry_path)
    if draw(st.floats(0, 1)) < 0.2:
        launch += "  # recovery-lint: ignore[RL301] -- reviewed"
    elif draw(st.booleans()):
        first, *rest = launch.split("\n")
        launch = "\n".join([first + (f"  #{c()}" if not first.endswith("\\") else ""), *rest])
    wrap = draw(st.sampled_from(("none", "none", "function", "if", "if-function")))
    body = launch.split("\n")
    indent = draw(st.sampled_from(("    ", "  ", "\t")))
    if wrap == "function":
        lines.append("train() {  #" + c())
        lines += [indent + b for b in body]
        lines += ["}", "train"]
    elif wrap == "if":
        lines.append('if [ "$RANK" = "0" ]; then')
        lines.append(indent + "#" + c())
        lines += [indent + b for b in body]
        lines.append("else")
        lines.append(indent + 'echo "worker"')
        lines.append("fi")
    elif wrap == "if-function":
        lines += ["function launch {", f'{indent}if [[ -n "$X" ]]; then']
        lines += [indent * 2 + b for b in body]
        lines += [f"{indent}fi", "}", "launch"]
    else:
        lines += body
    if draw(st.floats(0, 1)) < 0.15:
        lines.append("# recovery-lint: ignore[RL501] -- unused on purpose")
    if draw(st.booleans()):
        lines.append("#" + c())
    return lines


@st.composite
def python_lines(draw, counter: list[int]) -> list[str]:
    def c() -> str:
        counter[0] += 1
        return draw(st.sampled_from(COMMENT_TEXTS)).replace("{n}", str(counter[0]))

    lines: list[str] = []
    if draw(st.booleans()):
        lines.append('"""Training entry."""')
    if draw(st.booleans()):
        lines.append("#" + c())
    imports = draw(
        st.lists(
            st.sampled_from(
                (
                    "import os",
                    "import torch",
                    "import torch_npu",
                    "import torch_npu  #" + "{c}",
                    "from torch_npu.contrib import transfer_to_npu",
                    "import torch.distributed as dist",
                    "import mindio_acp",
                    "from mindspeed_llm import megatron_adaptor",
                )
            ),
            min_size=1,
            max_size=4,
            unique=True,
        )
    )
    lines += [i.replace("{c}", c()) for i in imports]
    if draw(st.booleans()):
        mode = draw(st.sampled_from(("True", "False")))
        lines.append(f"torch.npu.set_compile_mode(jit_compile={mode})  #{c()}")
    if draw(st.booleans()):
        lines.append('os.environ["HCCL_ASYNC_ERROR_HANDLING"] = "1"')
    if draw(st.floats(0, 1)) < 0.15:
        return lines  # imports only: an insertion after the last line
    if draw(st.floats(0, 1)) < 0.15:
        lines += ["try:", "    import torch_npu  #" + c(), "except ImportError:", "    torch_npu = None"]
    lines.append("")
    lines.append("")
    lines.append("def train(model, path):")
    lines.append("    #" + c())
    if draw(st.booleans()):
        lines.append("    state = torch.load(path)  #" + c())
    lines.append("    for step in range(10):")
    if draw(st.booleans()):  # a training loop: what makes a file no launch reaches a training entry
        lines.append("        loss = model(step).sum()")
        lines.append("        loss.backward()")
        lines.append("        optimizer.step()")
    else:
        lines.append("        pass")
    if draw(st.booleans()):
        lines.append("    torch.save(model.state_dict(), path)  #" + c())
    else:
        lines.append("    torch.save(")
        lines.append("        model.state_dict(),  #" + c())
        lines.append("        path,")
        lines.append("    )")
    if draw(st.booleans()):
        lines += ["", "", 'if __name__ == "__main__":', "    train(None, 'ckpt.pt')  #" + c()]
    if draw(st.floats(0, 1)) < 0.2:
        lines.append(draw(st.sampled_from(("# recovery-lint: ignore[RL501]", "x = 1  # recovery-lint: ignore[RL402]"))))
    if draw(st.floats(0, 1)) < 0.2:  # tab indentation
        lines = ["\t" * ((len(x) - len(x.lstrip(" "))) // 4) + x.lstrip(" ") for x in lines]
    return lines


# Versions decide what the rules may claim: each pair is a torch_npu release of the release table
# (or a declaration that leaves the release unknown)
PINS = (
    ("torch==2.1.0", "torch-npu==2.1.0.post10"),  # 6.0.0: watchdog on by default, 0 and 1 accepted
    ("torch==2.1.0", "torch-npu==2.1.0"),  # 5.0.0: watchdog off by default, no torch_npu_run
    ("torch==2.1.0", "torch_npu==2.1.0.post8"),  # 6.0.rc3: torch_npu_run before the documented range
    ("torch==1.11.0", "torch-npu==1.11.0.post4"),  # 5.0.rc3: watchdog off by default, no torch_npu_run
    ("torch==1.11.0", "torch-npu==1.11.0.post11"),  # 6.0.rc1: watchdog off by default, torch_npu_run
    ("torch==2.4.0", "torch-npu==2.4.0.post2"),  # 6.0.0 for torch 2.4.0
    ("torch>=2.1", ""),  # the release unknown
    ("torch==2.1.0", "torch-npu==not.a.version"),
    ("", ""),
)


def env_list(draw, names: list[tuple[str, str]]) -> Seq:
    items = []
    for name, value in names:
        if value == "@from":
            v: Node = Map([Entry("fieldRef", Map([Entry("fieldPath", Scalar("status.podIP"))]))])
            items.append(Item(Map([Entry("name", Scalar(name)), Entry("valueFrom", v)]), draw(comment())))
            continue
        flow = draw(st.floats(0, 1)) < 0.25
        m = Map(
            [Entry("name", Scalar(name), None, None), Entry("value", draw(styled(value)), None, draw(comment()))],
            flow=flow,
        )
        items.append(Item(m, draw(comment()), draw(comment()) if flow else None))
    return Seq(items, flow=draw(st.floats(0, 1)) < 0.15)


ENV_CHOICES = (
    ("HCCL_ASYNC_ERROR_HANDLING", "0"),
    ("HCCL_ASYNC_ERROR_HANDLING", "1"),
    ("RESUME_MODE_ENABLE", "1"),
    ("ASCEND_CACHE_PATH", "/cache/op"),
    ("RANK_TABLE_FILE", "/user/serverid/devindex/config/hccl.json"),
    ("HCCL_EXEC_TIMEOUT", "600"),
    ("framework", "PyTorch"),
    ("POD_IP", "@from"),
    ("XDL_IP", "@from"),
)


@st.composite
def container(draw, script_ref: str, entry_ref: str, counter: list[int]) -> Map:
    form = draw(st.sampled_from(("bash-c", "bash-c", "bash-c-args", "script", "inline", "direct", "none")))
    items = [
        Entry("name", Scalar(draw(st.sampled_from(("train", "ascend")))), draw(comment())),
        Entry("image", Scalar("swr.example.com/ascend/pytorch:24.0.RC1"), None, draw(comment())),
    ]
    flow = draw(st.booleans())
    if form == "bash-c":
        items.append(
            entry_plain(
                "command",
                Seq([Item(Scalar(w)) for w in ("/bin/bash", "-c", f"cd /job/code; bash {script_ref}")], flow=flow),
                draw(comment()),
            )
        )
    elif form == "bash-c-args":
        items.append(entry_plain("command", Seq([Item(Scalar("/bin/bash")), Item(Scalar("-c"))], flow=True)))
        items.append(entry_plain("args", Seq([Item(Scalar(f"bash {script_ref} --rank 0"))], flow=flow)))
    elif form == "script":
        items.append(entry_plain("command", Seq([Item(Scalar("bash")), Item(Scalar(script_ref))], flow=flow)))
    elif form == "inline":
        body = draw(shell_lines(entry_ref, counter))
        text = "\n".join(b for b in body if not b.startswith("#!")) + "\n"
        items.append(
            entry_plain(
                "command",
                Seq([Item(Scalar("/bin/bash")), Item(Scalar("-c")), Item(Scalar(text, draw(st.sampled_from(BLOCKS))))]),
            )
        )
    elif form == "direct":
        words = draw(
            st.sampled_from(
                (
                    ["torchrun", "--nproc_per_node=8", entry_ref],
                    ["python", "-m", "torch.distributed.launch", entry_ref],
                    ["python", entry_ref],
                )
            )
        )
        items.append(entry_plain("command", Seq([Item(Scalar(w)) for w in words], flow=flow)))
    if draw(st.booleans()):
        names = draw(st.lists(st.sampled_from(ENV_CHOICES), max_size=4, unique_by=lambda x: x[0]))
        if names:
            items.append(Entry("env", env_list(draw, names), draw(comment()), draw(comment())))
    if draw(st.booleans()):
        res = Map([Entry("huawei.com/Ascend910", Scalar(draw(st.sampled_from(("8", "16")))))], flow=draw(st.booleans()))
        items.append(Entry("resources", Map([Entry("requests", res), Entry("limits", res)]), draw(comment())))
    if draw(st.booleans()):
        mounts = Seq(
            [
                Item(
                    Map(
                        [
                            Entry("name", Scalar("ranktable")),
                            Entry("mountPath", Scalar("/user/serverid/devindex/config")),
                        ]
                    )
                )
            ]
        )
        items.append(Entry("volumeMounts", mounts, draw(comment())))
    if draw(st.booleans()):
        ports = Seq(
            [Item(Map([Entry("containerPort", Scalar("2222", "plain")), Entry("name", Scalar("ascendjob-port"))]))]
        )
        items.append(Entry("ports", ports, draw(comment())))
    return Map(items[:2] + draw(st.permutations(items[2:])))


def entry_plain(key: str, value: Node, before: str | None = None) -> Entry:
    return Entry(key, value, before)


@st.composite
def pod_spec(draw, script_ref: str, entry_ref: str, counter: list[int], with_restart: bool) -> Map:
    containers = [draw(container(script_ref, entry_ref, counter))]
    items = [Entry("containers", Seq([Item(c, draw(comment())) for c in containers]), draw(comment()), draw(comment()))]
    if draw(st.booleans()):
        items.insert(0, Entry("nodeSelector", Map([Entry("host-arch", Scalar("huawei-arm"))]), draw(comment())))
    if draw(st.booleans()):
        volume = Map(
            [
                Entry("name", Scalar(draw(st.sampled_from(("ranktable", "rank-table"))))),
                Entry("hostPath", Map([Entry("path", Scalar("/user/mindx-dl/ranktable/default.job"))])),
            ]
        )
        items.append(Entry("volumes", Seq([Item(volume)]), draw(comment())))
    if with_restart and draw(st.booleans()):
        items.append(Entry("restartPolicy", Scalar(draw(st.sampled_from(("Never", "OnFailure")))), draw(comment())))
    return Map(items)


@st.composite
def labels(draw, ascend: bool) -> Map:
    items: list[Entry] = []
    if draw(st.booleans()):
        items.append(Entry("ring-controller.atlas", draw(styled(draw(st.sampled_from(("ascend-910", "ascend-910b")))))))
    if ascend and draw(st.booleans()):
        items.append(Entry("framework", draw(styled(draw(st.sampled_from(("pytorch", "mindspore", "PyTorch")))))))
    fault = draw(st.sampled_from(("grace", "force", "off", None, "grace")))
    if fault:
        items.append(Entry("fault-scheduling", draw(styled(fault)), draw(comment()), draw(comment())))
    pod = draw(st.sampled_from(("on", "off", None, None)))
    if pod:
        items.append(Entry("pod-rescheduling", draw(styled(pod)), draw(comment()), draw(comment())))
    if draw(st.floats(0, 1)) < 0.15:
        items.append(Entry("process-recover-enable", draw(styled("on"))))
    if draw(st.floats(0, 1)) < 0.2:
        retry = st.sampled_from((Scalar("3"), Scalar("3", "plain"), Scalar("10000")))
        items.append(Entry("fault-retry-times", draw(retry)))
    for e in items:
        if e.before is None:
            e.before = draw(comment(0.15))
        if draw(st.floats(0, 1)) < 0.1:
            e.key = draw(st.sampled_from((f'"{e.key}"', f"'{e.key}'")))  # a quoted key
    flow = draw(st.floats(0, 1)) < 0.2
    if flow:
        for e in items:
            e.before = e.after = None
    return Map(items, flow=flow)


@st.composite
def manifest_doc(draw, script_ref: str, entry_ref: str, counter: list[int]) -> Map:
    ascend = draw(st.booleans())
    name = draw(st.sampled_from(("gpt3", "resnet50", "llama-7b")))
    meta_items = [Entry("name", draw(styled(name)), draw(comment()), draw(comment()))]
    if draw(st.booleans()):
        meta_items.append(Entry("namespace", Scalar("training")))
    lab = draw(labels(ascend))
    use_anchor = draw(st.floats(0, 1)) < 0.25 and not lab.flow
    if use_anchor:
        lab.anchor = "labels"
    if lab.items or draw(st.booleans()):
        meta_items.append(Entry("labels", lab, draw(comment()), draw(comment())))
    if draw(st.floats(0, 1)) < 0.15:
        meta_items.append(Entry("annotations", Map([Entry("recover-strategy", Scalar("recover,dump"))])))
    template_meta: Node = Alias("labels") if use_anchor and lab.items else Map([Entry("app", Scalar("train"))])
    if ascend:
        replicas = []
        for role, count in (("Master", "1"), ("Worker", "1")):
            rep_items = [Entry("replicas", Scalar(count, "plain"), draw(comment()))]
            if draw(st.booleans()):
                rep_items.append(Entry("restartPolicy", Scalar(draw(st.sampled_from(("Never", "OnFailure"))))))
            rep_items.append(
                Entry(
                    "template",
                    Map(
                        [
                            Entry("metadata", Map([Entry("labels", template_meta)])),
                            Entry("spec", draw(pod_spec(script_ref, entry_ref, counter, False))),
                        ]
                    ),
                    draw(comment()),
                )
            )
            replicas.append(Entry(role, Map(rep_items), draw(comment())))
            if draw(st.floats(0, 1)) < 0.25:  # a job of one Pod now and then (no Pod-level advice)
                break
        spec_items = [
            Entry("schedulerName", Scalar("volcano")),
            Entry("runPolicy", Map([Entry("schedulingPolicy", Map([Entry("minAvailable", Scalar("2", "plain"))]))])),
            Entry("successPolicy", Scalar("AllWorkers")),
            Entry("replicaSpecs", Map(replicas), draw(comment())),
        ]
        api, kind = "mindxdl.gitee.com/v1", "AscendJob"
    else:
        spec_items = [
            Entry("minAvailable", Scalar("1", "plain")),
            Entry("schedulerName", Scalar("volcano"), draw(comment())),
            Entry("maxRetry", Scalar("3", "plain")),
        ]
        if draw(st.booleans()):
            policies = []
            for event, action in draw(
                st.lists(
                    st.sampled_from(
                        (("PodEvicted", "RestartJob"), ("PodFailed", "Ignore"), ("PodFailed", "RestartJob"))
                    ),
                    min_size=1,
                    max_size=3,
                    unique=True,
                )
            ):
                policies.append(
                    Item(
                        Map([Entry("event", Scalar(event)), Entry("action", Scalar(action))], draw(st.booleans())),
                        draw(comment()),
                        None,
                    )
                )
            spec_items.append(Entry("policies", Seq(policies), draw(comment())))
        task = Map(
            [
                Entry("name", Scalar("default")),
                Entry("replicas", Scalar("2", "plain")),
                Entry(
                    "template",
                    Map(
                        [
                            Entry("metadata", Map([Entry("labels", template_meta)])),
                            Entry("spec", draw(pod_spec(script_ref, entry_ref, counter, True))),
                        ]
                    ),
                ),
            ]
        )
        spec_items.append(Entry("tasks", Seq([Item(task, draw(comment()))]), draw(comment())))
        api, kind = "batch.volcano.sh/v1alpha1", "Job"
    return Map(
        [
            Entry("apiVersion", Scalar(api), draw(comment())),
            Entry("kind", Scalar(kind), None, draw(comment())),
            Entry("metadata", Map(meta_items), draw(comment())),
            Entry("spec", Map(spec_items), draw(comment()), draw(comment())),
        ]
    )


@dataclass
class TextStyle:
    newline: str = "\n"
    bom: bool = False
    final_newline: bool = True


def finish(lines: list[str], style: TextStyle) -> str:
    text = style.newline.join(lines)
    if style.final_newline:
        text += style.newline
    return ("\ufeff" if style.bom else "") + text


@st.composite
def text_style(draw, crlf: bool = True, bom: bool = True) -> TextStyle:
    return TextStyle(
        newline="\r\n" if crlf and draw(st.floats(0, 1)) < 0.3 else "\n",
        bom=bom and draw(st.floats(0, 1)) < 0.15,
        final_newline=draw(st.floats(0, 1)) < 0.8,
    )


@st.composite
def manifest_text(draw, script_ref: str, entry_ref: str, counter: list[int]) -> str:
    r = Renderer(draw(st.sampled_from((2, 2, 4))), draw(st.booleans()), counter)
    doc = draw(manifest_doc(script_ref, entry_ref, counter))
    lines: list[str] = []
    if draw(st.booleans()):
        lines.append("#" + r.comment(draw(st.sampled_from(COMMENT_TEXTS))))
    if draw(st.floats(0, 1)) < 0.3:
        lines.append("---")
    extra = draw(
        st.sampled_from(("none", "none", "configmap-before", "configmap-after", "comment-doc", "empty-doc", "doc-end"))
    )
    if extra == "configmap-before":
        lines += [
            "apiVersion: v1",
            "kind: ConfigMap",
            "metadata:",
            "  name: rings-config-job",
            "data:",
            "  a: '1'",
            "---",
        ]
    r.map(doc, 0)
    lines += r.lines
    if extra == "configmap-after":
        lines += ["---", "apiVersion: v1", "kind: ConfigMap", "metadata: {name: cfg}  #" + r.comment(" cmt{n}")]
    elif extra == "comment-doc":
        lines += ["---", "#" + r.comment(" cmt{n} only a comment")]
    elif extra == "empty-doc":
        lines += ["---"]
    elif extra == "doc-end":
        lines += ["...", "# cmt-end after the document end marker" if draw(st.booleans()) else "..."]
    return finish(lines, draw(text_style()))


@st.composite
def repositories(draw) -> dict[str, str]:
    """A small training repository: path -> text."""
    counter = [0]
    files: dict[str, str] = {}
    layout = draw(st.sampled_from(("scripts", "flat")))
    script_path = "scripts/train.sh" if layout == "scripts" else "train.sh"
    entry_path = "train.py"
    with_manifest = draw(st.floats(0, 1)) < 0.8
    if with_manifest:
        files["job.yaml"] = draw(manifest_text(f"/job/code/{script_path}", f"/job/code/{entry_path}", counter))
    body = draw(shell_lines(entry_path if layout == "flat" else f"../{entry_path}", counter))
    files[script_path] = finish(body, draw(text_style(crlf=False, bom=False)))
    if draw(st.booleans()):
        env_path = "scripts/env.sh" if layout == "scripts" else "env.sh"
        env_body = draw(shell_lines(entry_path, counter, with_launch=False))
        files[env_path] = finish(env_body or ["true"], draw(text_style(crlf=False, bom=False)))
    files[entry_path] = finish(draw(python_lines(counter)), draw(text_style()))
    torch, npu = draw(st.sampled_from(PINS))
    pins = [p for p in (torch, npu) if p]
    if pins and all("==" in p for p in pins) and draw(st.floats(0, 1)) < 0.2:
        # the versions installed by the launch script itself
        lines = files[script_path].split("\n")
        at = 1 if lines[0].startswith("#!") else 0
        files[script_path] = "\n".join([*lines[:at], "pip install " + " ".join(pins), *lines[at:]])
    elif pins:
        if draw(st.booleans()):
            pins.insert(0, "# pins")
        files["requirements.txt"] = "\n".join(pins) + "\n"
    return files


# -- checks shared by the tests and the fuzz targets -----------------------------------------------
COMMENT_TOKEN = re.compile(r"cmt\d+")


def comment_tokens(text: str) -> Counter[str]:
    return Counter(COMMENT_TOKEN.findall(text))


def yaml_comments(text: str) -> Counter[str]:
    """Every YAML comment's text (from '#', stripped), found outside the scanner's tokens."""
    import yaml

    body = text[1:] if text.startswith("\ufeff") else text
    covered: list[tuple[int, int]] = []
    try:
        for token in yaml.scan(body, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            if isinstance(token, yaml.ScalarToken):
                covered.append((token.start_mark.index, token.end_mark.index))
    except yaml.YAMLError:
        pass
    out: Counter[str] = Counter()
    ci = 0
    for m in re.finditer(r"#", body):
        pos = m.start()
        while ci < len(covered) and covered[ci][1] <= pos:
            ci += 1
        if ci < len(covered) and covered[ci][0] <= pos < covered[ci][1]:
            continue
        if pos > 0 and body[pos - 1] not in " \t\n\r":
            continue
        end = body.find("\n", pos)
        line = body[pos : end if end != -1 else len(body)].rstrip("\r")
        out[line.strip()] += 1
    return out


def shell_comments(text: str) -> Counter[str]:
    from recovery_lint.sources.shell import parse_shell
    from recovery_lint.span import SourceText

    script = parse_shell(SourceText("x.sh", text))
    return Counter(text[s.start : s.end].strip() for s in script.comments)


def python_comments(text: str) -> Counter[str]:
    out: Counter[str] = Counter()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text.lstrip("\ufeff")).readline):
            if tok.type == tokenize.COMMENT:
                out[tok.string.strip()] += 1
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return out


def comments_of(path: str, text: str) -> Counter[str]:
    if path.endswith((".yaml", ".yml")):
        return yaml_comments(text)
    if path.endswith((".sh", ".bash")):
        return shell_comments(text)
    if path.endswith(".py"):
        return python_comments(text)
    return Counter(line.strip() for line in text.splitlines() if line.lstrip().startswith("#"))


def line_endings(text: str) -> set[str]:
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    lone_cr = text.count("\r") - crlf
    kinds = set()
    if crlf:
        kinds.add("crlf")
    if lf:
        kinds.add("lf")
    if lone_cr:
        kinds.add("cr")
    return kinds
