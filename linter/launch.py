"""A launch command read the way the shell runs it: wrappers stripped, executor variables expanded,
the launcher and its entry recognized, and the number of processes it starts.

Nothing here runs anything: values come from the static assignments seen before the command.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .lazyre import LazyPattern
from .sources.shell import Word

PYTHON = LazyPattern(r"^(?:python[0-9.]*|pypy[0-9.]*)$")
DISTRIBUTED_MODULES = {
    "torch.distributed.run": "torch.distributed.run",
    "torch.distributed.launch": "torch.distributed.launch",
    "torch_npu.distributed.run": "torch_npu_run",
}
TORCH_LAUNCHERS = frozenset({"torchrun", "torch.distributed.run", "torch.distributed.launch", "torch_npu_run"})
# launchers that start a PyTorch process group over several devices
DISTRIBUTED_LAUNCHERS = TORCH_LAUNCHERS | {"deepspeed"}
COMMAND_LAUNCHERS = frozenset({"torchrun", "torch_npu_run", "msrun", "deepspeed"})

# $NAME, ${NAME}, ${NAME:-default}, and the positional parameters $1 .. ${12}
_VAR = LazyPattern(
    r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*|[0-9]+)(?::?-(?P<default>[^}]*))?\}"
    r"|(?P<plain>[A-Za-z_][A-Za-z0-9_]*|[0-9]))"
)


# -- wrappers ----------------------------------------------------------------------------------
def _skip_options(words: list[str], i: int, with_value: frozenset[str]) -> int:
    """Past the options of a wrapper; ``with_value`` names the options that take the next word."""
    while i < len(words) and words[i].startswith("-") and words[i] != "-":
        option = words[i]
        i += 1
        if option == "--":
            break
        if option in with_value and i < len(words):
            i += 1
    return i


def _plain(words: list[str], i: int) -> int:
    return _skip_options(words, i, frozenset())


def _taskset(words: list[str], i: int) -> int:
    i = _skip_options(words, i, frozenset())
    return i + 1  # the CPU mask or list


def _numactl(words: list[str], i: int) -> int:
    return _skip_options(
        words,
        i,
        frozenset({"-N", "-m", "-C", "-i", "-p", "-P", "-w", "--cpunodebind", "--membind", "--physcpubind"}),
    )


def _timeout(words: list[str], i: int) -> int:
    i = _skip_options(words, i, frozenset({"-s", "-k", "--signal", "--kill-after"}))
    return i + 1  # the duration


def _nice(words: list[str], i: int) -> int:
    return _skip_options(words, i, frozenset({"-n", "-c", "-p", "-u", "-P", "-U"}))


def _exec(words: list[str], i: int) -> int:
    return _skip_options(words, i, frozenset({"-a"}))


def _stdbuf(words: list[str], i: int) -> int:
    return _skip_options(words, i, frozenset({"-i", "-o", "-e"}))


WRAPPERS: dict[str, Callable[[list[str], int], int]] = {
    "nohup": _plain,
    "exec": _exec,
    "time": _plain,
    "command": _plain,
    "builtin": _plain,
    "setsid": _plain,
    "stdbuf": _stdbuf,
    "nice": _nice,
    "ionice": _nice,
    "taskset": _taskset,
    "numactl": _numactl,
    "timeout": _timeout,
}


@dataclass(slots=True)
class Unwrapped:
    words: list[Word]  # the command after its wrappers
    offset: int  # how many words were stripped
    assignments: list[tuple[str, str | None, Word]]  # ``env NAME=value`` settings, in order


def _written(word: Word) -> str:
    value = word.value
    return word.text if value is None else value


def unwrap(words: list[Word]) -> Unwrapped:
    """Strip ``nohup``, ``taskset -c 0-23``, ``numactl --cpunodebind=0``, ``env A=1``, ``timeout 1h``…"""
    if words:
        first = posixpath.basename(_written(words[0]))
        if first != "env" and first not in WRAPPERS:
            return Unwrapped(words[0:], 0, [])  # most commands: nothing to strip, and no word read past the first
    texts = [_written(w) for w in words]
    assignments: list[tuple[str, str | None, Word]] = []
    i = 0
    while i < len(words):
        base = posixpath.basename(texts[i])
        if base == "env":
            i = _skip_options(texts, i + 1, frozenset({"-u", "-C", "--unset", "--chdir", "-S"}))
            while i < len(words) and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", texts[i]):
                name, _, value = texts[i].partition("=")
                assignments.append((name, value if words[i].value is not None else None, words[i]))
                i += 1
            continue
        step = WRAPPERS.get(base)
        if step is None:
            break
        i = step(texts, i + 1)
    return Unwrapped(words[i:], i, assignments)


# -- variables ---------------------------------------------------------------------------------
Lookup = Mapping[str, str | None]


def expand(text: str, values: Lookup) -> str | None:
    """``text`` with ``$NAME``/``${NAME}``/``${NAME:-default}`` replaced by static values; None when
    one is unknown or the text holds another expansion."""
    failed = False

    def value(match: re.Match[str]) -> str:
        nonlocal failed
        name = match.group("braced") or match.group("plain")
        known = values.get(name)
        if known is None or (known == "" and match.group("default") is not None):
            default = match.group("default")
            if default is not None and "$" not in default:
                return default
            failed = True
            return ""
        return known

    body = _strip_quotes(text)
    if "\\\n" in body and not text.startswith("'"):
        # a backslash before a line break joins the lines, inside double quotes too (bash removes both):
        # DISTRIBUTED_ARGS="--nnodes $NNODES \<newline> --node_rank $NODE_RANK"
        body = _CONTINUATION.sub(r"\1", body)
    out = _VAR.sub(value, body)
    if failed or "$" in out or "`" in out:
        return None
    return out


_CONTINUATION = LazyPattern(r"(?<!\\)((?:\\\\)*)\\\n")  # an unescaped backslash, then a line break


def _strip_quotes(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text.replace('"', "")


def word_value(word: Word, values: Lookup) -> str | None:
    return word.value if word.value is not None else expand(word.text, values)


PURE_VARIABLE = LazyPattern(r"^\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)$")


def split_arguments(words: list[Word], values: Lookup) -> list[Word]:
    """Unquoted ``$ARGS`` words whose value is known, split as the shell splits them
    (``torchrun $DISTRIBUTED_ARGS pretrain.py``); each part keeps the variable's position."""
    out: list[Word] = []
    template = getattr(values, "template", None)
    for word in words:
        if word.value is None and PURE_VARIABLE.match(word.text):
            line = expand(word.text, values)
            if line is not None:
                out.extend(Word(part, part, word.span) for part in line.split())
                continue
            # options whose values are only known at run time ("--master_addr $MASTER_ADDR"): the
            # options themselves are still known, each dynamic part stays dynamic
            raw = template(word.text.strip("${}")) if template is not None else None
            if raw is not None and "$(" not in raw and "`" not in raw:
                parts = re.sub(r"\\\r?\n", " ", raw).split()  # line continuations join the words
                out.extend(Word(part, None if "$" in part else part, word.span) for part in parts)
                continue
        out.append(word)
    return out


def expand_command(words: list[Word], values: Lookup) -> tuple[list[Word], bool]:
    """A command whose name is a variable holding a command line (``$CMD``, ``${EXECUTOR}``) with
    the variable's words put in its place; True when anything was expanded (positions then point
    at the variable, so no edit can be made there)."""
    if not words or words[0].value is not None or "$" not in words[0].text:
        return words, False
    line = expand(words[0].text, values)
    if not line:
        return words, False
    import shlex  # only a command held in a variable is split: a run without one skips the import

    try:
        parts = shlex.split(line)
    except ValueError:
        return words, False
    if not parts:
        return words, False
    anchor = words[0].span
    return [Word(p, p, anchor) for p in parts] + words[1:], True


# -- launchers ---------------------------------------------------------------------------------
def classify_launcher(words: list[Word], values: Lookup | None = None) -> tuple[str, tuple[int, int]] | None:
    """The launcher a command runs and the range of words that spell it, or None.

    ``torchrun``, ``torch_npu_run``, ``msrun``, ``deepspeed``; ``python -m torch.distributed.run``
    (``launch``, ``torch_npu.distributed.run``); ``python [options] entry.py``.
    """
    if not words:
        return None
    values = values or {}
    first = word_value(words[0], values) or ""
    name = posixpath.basename(first)
    if name in COMMAND_LAUNCHERS:
        return name, (0, 1)
    dynamic_interpreter = words[0].value is None and not first and "$" in words[0].text
    if not (PYTHON.match(name) or dynamic_interpreter):
        return None
    for i, word in enumerate(words[1:], start=1):
        value = word_value(word, values) or word.text.strip("\"'")
        if value == "-m" and i + 1 < len(words):
            module = word_value(words[i + 1], values) or ""
            if module in DISTRIBUTED_MODULES:
                return DISTRIBUTED_MODULES[module], (0, i + 2)
            if module == "deepspeed.launcher.runner":
                return "deepspeed", (0, i + 2)
            return None
        if value.startswith("-m") and len(value) > 2:
            module = value[2:]
            return (DISTRIBUTED_MODULES[module], (0, i + 1)) if module in DISTRIBUTED_MODULES else None
        if value.endswith(".py"):
            return "python", (0, 1)  # an interpreter (checked above) running a file
        if value in ("-c",):
            return None
        if not value.startswith("-"):
            return None
    return None


# options of torchrun / torch.distributed.launch that take a value (so it is not the entry)
_TORCH_VALUE_OPTIONS = frozenset(
    {
        "--nnodes",
        "--nproc_per_node",
        "--nproc-per-node",
        "--node_rank",
        "--node-rank",
        "--master_addr",
        "--master-addr",
        "--master_port",
        "--master-port",
        "--rdzv_backend",
        "--rdzv-backend",
        "--rdzv_endpoint",
        "--rdzv-endpoint",
        "--rdzv_id",
        "--rdzv-id",
        "--rdzv_conf",
        "--rdzv-conf",
        "--max_restarts",
        "--max-restarts",
        "--monitor_interval",
        "--monitor-interval",
        "--start_method",
        "--start-method",
        "--role",
        "--log_dir",
        "--log-dir",
        "-r",
        "--redirects",
        "-t",
        "--tee",
        "--local_addr",
        "--local-addr",
        "--logs_specs",
        "--logs-specs",
        "--local-ranks-filter",
        "--enable_tiered_parallel_tcpstore",
        "--num_gpus",
        "--num_nodes",
        "--include",
        "--exclude",
        "--hostfile",
        "--launcher",
        "--worker_num",
        "--local_worker_num",
        "-W",
        "-X",
    }
)


def entry_word(words: list[Word], after: int, values: Lookup) -> Word | None:
    """The Python file a launcher runs: the first argument after the launcher's own options that
    ends in ``.py`` (a module run with ``-m`` is returned as its word, ending in ``.py`` once mapped)."""
    i = after
    while i < len(words):
        word = words[i]
        text = word_value(word, values) or word.text.strip("\"'")
        if text == "-m" and i + 1 < len(words):
            return words[i + 1]
        if text.endswith(".py") and not text.startswith("-"):
            return word
        if text in _TORCH_VALUE_OPTIONS:
            i += 2
            continue
        if text.startswith("-") or text.startswith("$"):  # an option, or options held in a variable
            i += 1
            continue
        if not text.endswith(".py"):
            # the first positional of a launcher is its program; one that is not a Python file is not ours
            return None
    return None


def module_path(word: Word, words: list[Word], values: Lookup) -> str | None:
    """``pkg.train`` after ``-m`` as the file ``pkg/train.py``."""
    text = word_value(word, values) or ""
    index = next((k for k, w in enumerate(words) if w is word), -1)
    if index > 0 and (word_value(words[index - 1], values) or "") == "-m" and re.fullmatch(r"[\w.]+", text):
        return text.replace(".", "/") + ".py"
    return None


# -- scale -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Scale:
    """How many processes a launch starts: per node and nodes (None when not known statically)."""

    per_node: int | None
    nodes: int | None
    evidence: str  # what the numbers were read from
    spawns: bool = False  # the program starts one process per device itself (--multiprocessing-distributed)

    @property
    def single(self) -> bool:
        """Known to run one process on one device."""
        return self.per_node == 1 and (self.nodes or 1) == 1

    @property
    def multi(self) -> bool:
        return (self.per_node or 1) > 1 or (self.nodes or 1) > 1 or (self.spawns and self.per_node != 1)


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    text = text.strip()
    if ":" in text:  # MIN:MAX nodes of an elastic launch
        text = text.rsplit(":", 1)[1]
    return int(text) if text.isdigit() and len(text) < 7 else None


def option_value(words: list[Word], names: tuple[str, ...], values: Lookup, start: int = 0) -> tuple[str | None, bool]:
    """The value of the first option in ``names`` (``--x 8`` or ``--x=8``); (None, False) when absent,
    (None, True) when present but not static."""
    for i in range(start, len(words)):
        text = word_value(words[i], values) or words[i].text
        for name in names:
            if text == name:
                if i + 1 < len(words):
                    return word_value(words[i + 1], values), True
                return None, True
            if text.startswith(name + "="):
                raw = words[i].text.split("=", 1)[1]
                value = expand(raw, values)
                return value, True
    return None, False


def _loop_count(header: str, values: Lookup) -> int | None:
    """Iterations of ``for((i=0;i<8;i++))``, ``for i in $(seq 0 7)``, ``for i in {0..7}``, ``for i in 0 1 2``."""
    text = header.rstrip(";").strip()
    c_style = re.match(r"for\s*\(\(\s*\w+\s*=\s*([^;]*);\s*\w+\s*(<=|<)\s*([^;]*);", text)
    if c_style:
        low = _int(expand(c_style.group(1).strip(), values))
        high = _int(expand(c_style.group(3).strip(), values))
        if low is None or high is None:
            return None
        return high - low + (1 if c_style.group(2) == "<=" else 0)
    seq = re.match(r"for\s+\w+\s+in\s+\$\(\s*seq\s+(\S+)(?:\s+(\S+))?\s*\)", text) or re.match(
        r"for\s+\w+\s+in\s+`\s*seq\s+(\S+)(?:\s+(\S+))?\s*`", text
    )
    if seq:
        first, last = seq.group(1), seq.group(2)
        low, high = (
            (_int(expand(first, values)), _int(expand(last, values))) if last else (1, _int(expand(first, values)))
        )
        return None if low is None or high is None else high - low + 1
    brace = re.match(r"for\s+\w+\s+in\s+\{(\d+)\.\.(\d+)\}", text)
    if brace:
        return int(brace.group(2)) - int(brace.group(1)) + 1
    listed = re.match(r"for\s+\w+\s+in\s+((?:\d+\s*)+)$", text)
    if listed:
        return len(listed.group(1).split())
    return None


_DEVICE_OPTIONS = ("--gpus", "--ngpu", "--ngpus", "--npus", "--device_num", "--device-num", "--num_gpus", "--n_gpus")
_WORLD_OPTIONS = ("--world_size", "--world-size")
_NODE_OPTIONS = ("--nnodes", "--num_nodes", "--num-nodes")
_NP_NAME = LazyPattern(r"(?:^|[_-])(\d{1,3})p(?:[_.-]|$)")


def launch_scale(
    launcher: str, words: list[Word], after: int, values: Lookup, loops: tuple[str, ...], script_name: str
) -> Scale:
    """The processes a launch starts, read in the order that proved reliable on real scripts: the
    launcher's own options, a device loop around a per-device launch, the device variables, the
    ``Np`` in the script's name."""
    if launcher in TORCH_LAUNCHERS:
        per, seen = option_value(words, ("--nproc_per_node", "--nproc-per-node"), values, after)
        nodes, nodes_seen = option_value(words, ("--nnodes",), values, after)
        # without the options torchrun starts one process, but a bare launcher line is a template
        # whose counts come from elsewhere (an elastic agent, a wrapper): unknown, not single
        return Scale(_int(per) if seen else None, _int(nodes) if nodes_seen else None, "launcher options")
    if launcher == "deepspeed":
        per, _ = option_value(words, ("--num_gpus", "--num-gpus"), values, after)
        nodes, _ = option_value(words, ("--num_nodes", "--num-nodes"), values, after)
        return Scale(_int(per), _int(nodes), "deepspeed options")
    if launcher == "msrun":
        per, _ = option_value(words, ("--local_worker_num",), values, after)
        return Scale(_int(per), None, "msrun options")
    for header in loops:
        count = _loop_count(header, values)
        if count is not None:
            return Scale(count, None, f"the loop '{header.rstrip(';')}'")
    devices, _ = option_value(words, _DEVICE_OPTIONS, values, after)
    if _int(devices) is not None:
        return Scale(_int(devices), None, "a device-count option")
    spawns = any((word_value(w, values) or w.text) in ("--multiprocessing-distributed", "--distributed") for w in words)
    for name in ("RANK_SIZE", "NPU_NUM", "NPUS_PER_NODE", "GPUS_PER_NODE", "NUM_GPUS", "DEVICE_NUM"):
        count = _int(values.get(name))
        if count is not None and (spawns or name != "RANK_SIZE" or loops):
            return Scale(count, None, f"{name}={count}", spawns=spawns)
    nodes, _ = option_value(words, _NODE_OPTIONS, values, after)
    if _int(nodes) is not None and _int(nodes) > 1:  # type: ignore[operator]
        return Scale(None, _int(nodes), f"a node-count option ({nodes} nodes)")
    world, _ = option_value(words, _WORLD_OPTIONS, values, after)
    if _int(world) is not None and _int(world) > 1:  # type: ignore[operator]
        return Scale(None, _int(world), "a world-size option")
    named = _NP_NAME.search(script_name.lower())
    if named and (spawns or loops):
        return Scale(int(named.group(1)), None, f"the script name ({named.group(0).strip('_-.')})")
    if spawns:
        return Scale(None, None, "--multiprocessing-distributed", spawns=True)
    return Scale(1, 1, "one process (no distributed launcher, device loop or device count)")


def node_count(launcher: str, words: list[Word], after: int) -> tuple[int | None, str]:
    """How many nodes a distributed launch spans, read from its own options, and the evidence; None
    when an option gives it at run time. A launch without the option runs on one node (torchrun's
    and torch.distributed.launch's ``--nnodes`` default to 1; deepspeed without a hostfile runs on
    the local node)."""
    if launcher == "deepspeed":
        nodes, seen = option_value(words, ("--num_nodes", "--num-nodes"), {}, after)
        if seen:
            return _int(nodes), f"deepspeed --num_nodes {nodes or '(set at run time)'}"
        _hosts, given = option_value(words, ("--hostfile", "-H", "--include", "-i"), {}, after)
        if given:
            return None, "deepspeed reads its nodes from a hostfile"
        return 1, "deepspeed without --num_nodes or a hostfile (the local node)"
    nodes, seen = option_value(words, ("--nnodes",), {}, after)
    if not seen and any(w.value is None and PURE_VARIABLE.match(w.text) for w in words[after:]):
        return None, f"{launcher} options held in a variable whose value is not known"
    if not seen:
        return 1, f"{launcher} without --nnodes (one node)"
    count = _int(nodes)
    return count, f"{launcher} --nnodes {nodes}" if count is not None else f"{launcher} --nnodes set at run time"
