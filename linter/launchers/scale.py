"""How many processes a launch starts: per node and on how many nodes, read from every place the
launcher's row says the counts are written (its options, the launch environment, Hydra overrides,
a hostfile or config file in the repository, a wrapper such as srun), then for a plain Python
program from a device loop, the device variables and the ``Np`` in the script's name.

Nothing here runs anything: values come from the static assignments seen before the command."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..lazyre import LazyPattern
from ..shellwords import PURE_VARIABLE, Lookup, array_elements, count_of, expand, option_value, word_value
from ..sources.shell import Word
from .table import MINDSPORE, PYTHON, TORCH_NPU_RUN, TORCHRUN, Count, Launcher

ReadFile = Callable[[str], "str | None"]  # the text of a file a launch names, when it is in the repository


@dataclass
class Scale:
    """How many processes a launch starts: per node and nodes (None when not known statically)."""

    per_node: int | None
    nodes: int | None
    evidence: str  # what the per-node count was read from
    spawns: bool = False  # the program starts one process per device itself (--multiprocessing-distributed)
    node_evidence: str = ""  # what the node count was read from (or why it is not known)
    nodes_unknown: bool = False  # the launcher takes a node count that is set at run time, or not said

    @property
    def single(self) -> bool:
        """Known to run one process on one device."""
        one_node = self.nodes == 1 or (self.nodes is None and not self.nodes_unknown)
        return self.per_node == 1 and one_node

    @property
    def multi(self) -> bool:
        return (self.per_node or 1) > 1 or (self.nodes or 1) > 1 or (self.spawns and self.per_node != 1)


# -- the counts a row declares ------------------------------------------------------------------
@dataclass
class Found:
    """A count read for a launch: the number (None: not known) and where it was read."""

    count: int | None
    evidence: str


def read_count(
    count: Count, words: list[Word], values: Lookup, environment: Lookup, read_file: ReadFile, config: dict | None
) -> Found | None:
    """The count as the launch writes it, in the order the row declares; None when nothing writes it.
    ``values`` are the shell's variables (what its words expand to), ``environment`` what the launcher
    process inherits (the exported ones and the command's own prefix assignments)."""
    for flag in count.flags:
        value, seen = option_value(words, (flag,), values)
        if seen:
            if value is None:
                hosts = _host_count(_variable_after(words, flag), values)
                if hosts is not None:
                    return Found(None, f"{flag} {hosts} (the lines of a host list, set at run time)")
            return _number(value, f"{flag} {value if value is not None else '(set at run time)'}")
    for name in count.env:
        if name in environment:
            value = environment.get(name)
            hosts = _host_count(name, values) if value is None else None
            if hosts is not None:
                return Found(None, f"{name}={hosts} (the lines of a host list, set at run time)")
            return _number(value, f"{name}={value if value is not None else '(set at run time)'}")
    for key in count.hydra:
        for word in words:
            text = word_value(word, values) or word.text
            if text.startswith(key + "="):
                value = expand(text.split("=", 1)[1], values)
                return _number(value, f"{key}={value if value is not None else '(set at run time)'}")
    for flag in count.hostfile:
        value, seen = option_value(words, (flag,), values)
        if seen:
            return _hostfile(flag, value, read_file)
    for flag in count.hosts:
        value, seen = option_value(words, (flag,), values)
        if seen:
            if value is None:
                return Found(None, f"{flag} set at run time")
            # host1:0,1@host2:2 (DeepSpeed) or host1:8,host2:8 (mpirun): a part that is a number is a
            # device or slot of the host before it
            hosts = [h for h in re.split(r"[@,]", value) if h and not h.isdigit()]
            return Found(len(hosts), f"{flag} {value}")
    for key in count.config:
        if config is not None and isinstance(config.get(key), int):
            return Found(config[key], f"{key}: {config[key]} in its config file")
    return None


_HOST_LIST = LazyPattern(r"(?i)\$\(.*host.*\|\s*wc\s+-l\s*\)|\$\(\s*wc\s+-l\s*<?\s*\S*host")


def _host_count(name: str | None, values: Lookup) -> str | None:
    """A count the script computes from a host list at run time (``NNODES=$(cat $HOSTFILE | wc -l)``):
    one host or many, not known until the list is (a script may even insist on one line). Its
    assignment, else None."""
    written = getattr(values, "written", None)
    text = written(name) if written is not None and name else None
    return text if text is not None and _HOST_LIST.search(text) else None


def _variable_after(words: list[Word], flag: str) -> str | None:
    """The variable a flag's value is, when it is one (``--nnodes $NNODES``)."""
    for i, word in enumerate(words[:-1]):
        if (word.value or word.text) == flag:
            match = PURE_VARIABLE.match(words[i + 1].text)
            return words[i + 1].text.strip("${}") if match else None
    return None


def _number(value: str | None, evidence: str) -> Found:
    found = count_of(value)
    return Found(found, evidence)


def _hostfile(flag: str, path: str | None, read_file: ReadFile) -> Found:
    """The hosts of a ``host slots=N`` file (DeepSpeed's format; blank and ``#`` lines skipped)."""
    text = read_file(path) if path is not None else None
    if text is None:
        where = path or "a path set at run time"
        return Found(None, f"{flag} {where} (a host list not in the repository, read at run time)")
    hosts = [line.split()[0] for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return Found(len(hosts), f"{flag} {path}: {len(hosts)} host{'s' if len(hosts) != 1 else ''}")


# -- a launch's scale ------------------------------------------------------------------------------
def launch_scale(
    row: Launcher,
    words: list[Word],
    values: Lookup,
    environment: Lookup,
    loops: tuple[str, ...],
    script_name: str,
    read_file: ReadFile,
    wrapper: tuple[Launcher, list[Word]] | None = None,
) -> Scale:
    """The processes a launch through ``row`` starts; ``words`` are the launcher's own options and
    arguments (after the words that spell it), ``wrapper`` an srun/mpirun around it with its words."""
    config = _config(row, words, values, read_file)
    if row.family == PYTHON:
        scale = _python_scale(words, values, loops, script_name)
    else:
        scale = _row_scale(row, words, values, environment, read_file, config)
    if wrapper is not None:
        scale = _with_wrapper(scale, *wrapper, values, environment, read_file, row.family == PYTHON)
    return scale


def _row_scale(
    row: Launcher, words: list[Word], values: Lookup, environment: Lookup, read_file: ReadFile, config: dict | None
) -> Scale:
    per = read_count(row.per_node, words, values, environment, read_file, config)
    nodes = read_count(row.nodes, words, values, environment, read_file, config)
    total = read_count(row.total, words, values, environment, read_file, config)
    node_count, node_evidence = _nodes(row, nodes, words, values)
    # msrun --worker_num=16 --local_worker_num=8: two nodes
    every, each = (total.count if total else None), (per.count if per else None)
    if nodes is None and every and each and every % each == 0:
        node_count, node_evidence = every // each, f"{row.name} {total.evidence} over {per.evidence}"
    per_node = per.count if per is not None else row.per_node.default
    evidence = _per_node_evidence(row, per)
    if per is None and total is not None and total.count is not None:
        divisor = node_count or 1
        per_node, evidence = (
            total.count // divisor,
            f"{total.evidence} over {divisor} node{'s' if divisor != 1 else ''}",
        )
    unknown = node_count is None
    return Scale(per_node, node_count, evidence, node_evidence=node_evidence, nodes_unknown=unknown)


def _per_node_evidence(row: Launcher, per: Found | None) -> str:
    if row.family in (TORCHRUN, TORCH_NPU_RUN):
        return "launcher options"
    if row.name == "deepspeed":
        return "deepspeed options"
    if row.family == MINDSPORE:
        return "msrun options"
    if per is not None:
        return per.evidence
    return row.per_node.default_note or "not given"


def _nodes(row: Launcher, nodes: Found | None, words: list[Word], values: Lookup) -> tuple[int | None, str]:
    """The node count (None: not known) and the evidence."""
    name = row.name
    if nodes is not None:
        if nodes.count is None:
            written = nodes.evidence.replace("=(set at run time)", "")
            if written.endswith(" (set at run time)"):
                written = written[: -len(" (set at run time)")] + " set at run time"
            elif "set at run time" not in written and "read at run time" not in written:
                written += " set at run time"
            return None, f"{name} {written}"
        return nodes.count, f"{name} {nodes.evidence}"
    if row.family in (TORCHRUN, TORCH_NPU_RUN) and any(w.value is None and PURE_VARIABLE.match(w.text) for w in words):
        return None, f"{name} options held in a variable whose value is not known"
    if row.nodes.default is None:
        return None, f"{name}: {row.nodes.default_note or 'the node count is not given'}"
    return row.nodes.default, f"{name} {row.nodes.default_note} (one node)"


def _with_wrapper(
    scale: Scale,
    wrapper: Launcher,
    wrapper_words: list[Word],
    values: Lookup,
    environment: Lookup,
    read_file: ReadFile,
    tasks_are_ranks: bool,
) -> Scale:
    """An srun/mpirun around a launch: its nodes stand where the launch gives none, and its tasks too
    when each task is a rank (a plain Python program). Around a launcher (torchrun, a Ray trainer's
    driver) a task is one launcher, which starts the ranks itself: its count says nothing of them."""
    inner = _row_scale(wrapper, wrapper_words, values, environment, read_file, None)
    nodes, node_evidence = scale.nodes, scale.node_evidence
    if (nodes is None or nodes == 1) and inner.nodes is not None:
        nodes, node_evidence = inner.nodes, inner.node_evidence
    per_node, evidence = scale.per_node, scale.evidence
    unsaid = per_node is None or (per_node == 1 and evidence.startswith("one process"))
    if tasks_are_ranks and unsaid and inner.per_node is not None:
        per_node, evidence = inner.per_node, f"{wrapper.name} {inner.evidence}"
    return Scale(per_node, nodes, evidence, scale.spawns, node_evidence, nodes is None)


def _config(row: Launcher, words: list[Word], values: Lookup, read_file: ReadFile) -> dict | None:
    """The config file a launch names (accelerate's --config_file), read when it is in the repository."""
    for flag in row.config_flags:
        value, seen = option_value(words, (flag,), values)
        if seen and value is not None:
            text = read_file(value)
            return mapping_of(text) if text is not None else None
    return None


def mapping_of(text: str) -> dict | None:
    """The mapping a small YAML or JSON file holds (a launcher's config, a Ray runtime environment);
    None when it holds something else or does not load."""
    import yaml  # the YAML reader is loaded already for the manifests; JSON is YAML too

    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    return loaded if isinstance(loaded, dict) else None


# -- a Python program started as it is ---------------------------------------------------------------
_DEVICE_OPTIONS = ("--gpus", "--ngpu", "--ngpus", "--npus", "--device_num", "--device-num", "--num_gpus", "--n_gpus")
_WORLD_OPTIONS = ("--world_size", "--world-size")
_NODE_OPTIONS = ("--nnodes", "--num_nodes", "--num-nodes")
_SPAWN_OPTIONS = ("--multiprocessing-distributed", "--multiprocessing_distributed", "--distributed")
_DEVICE_LIST_OPTIONS = ("--device-list", "--device_list")
_NP_NAME = LazyPattern(r"(?:^|[_-])(\d{1,4})p(?:[_.-]|$)")


def devices_named(script_name: str) -> tuple[int, str] | None:
    """The device count a script's name gives (``train_full_16p.sh``: 16, "16p"), if it gives one."""
    named = _NP_NAME.search(script_name.lower())
    return (int(named.group(1)), named.group(0).strip("_-.")) if named else None


def _python_scale(words: list[Word], values: Lookup, loops: tuple[str, ...], script_name: str) -> Scale:
    """A device loop around a per-device launch, the device variables, a world size over the devices
    of this node, the ``Np`` in the script's name: in the order that proved reliable on real scripts."""
    per: int | None = None
    evidence = ""
    # a count of 0 starts no process: it is an id (``--gpus 0``: the first device) or a CPU run
    # (``--ngpu 0``), so it says nothing of how many processes run
    # the innermost loop whose count is known: the one that starts a process per device (a loop
    # around it may run once per node, ``for((RANK_ID=0;RANK_ID<$((RANK_SIZE));...))`` with RANK_SIZE=1)
    for header in reversed(loops):
        count = loop_count(header, values)
        if count is not None and count > 0:
            per, evidence = count, f"the loop '{header.rstrip(';')}'"
            break
    if per is None:
        devices, _ = option_value(words, _DEVICE_OPTIONS, values)
        count = count_of(devices)
        if count is not None and count > 0:
            per, evidence = count, "a device-count option"
    spawns = any((word_value(w, values) or w.text) in _SPAWN_OPTIONS for w in words)
    if spawns and not loops:
        spawned = _spawned_nodes(words, values, script_name)
        if spawned is not None:
            return spawned
    if per is None:
        for name in ("RANK_SIZE", "NPU_NUM", "NPUS_PER_NODE", "GPUS_PER_NODE", "NUM_GPUS", "DEVICE_NUM"):
            count = count_of(values.get(name))
            if count is not None and count > 0 and (spawns or name != "RANK_SIZE" or loops):
                per, evidence = count, f"{name}={count}"
                break
    nodes, node_evidence = _python_nodes(words, values, per)
    if per is None:
        named = devices_named(script_name)
        if named and (spawns or loops):
            per, evidence = named[0], f"the script name ({named[1]})"
    if per is None and nodes is None:
        if spawns:
            return Scale(None, None, "--multiprocessing-distributed", spawns=True)
        world, _ = option_value(words, _WORLD_OPTIONS, values)
        if (count_of(world) or 1) > 1:  # the program starts its processes itself, on nodes not said
            return Scale(None, None, f"a world size of {world}", spawns=True)
        return Scale(1, 1, "one process (no distributed launcher, device loop or device count)")
    if per is None:
        return Scale(None, nodes, node_evidence, spawns=spawns, node_evidence=node_evidence)
    return Scale(per, nodes, evidence, spawns=spawns, node_evidence=node_evidence)


def _spawned_nodes(words: list[Word], values: Lookup, script_name: str) -> Scale | None:
    """A program that spawns a process per device itself (``--multiprocessing-distributed``, the
    PyTorch ImageNet example the model zoos copy) reads ``--world-size`` as its number of nodes and
    multiplies it by the devices of each; ``RANK_SIZE`` then counts every rank. None without a
    world size."""
    world, _ = option_value(words, _WORLD_OPTIONS, values)
    nodes = count_of(world)
    if nodes is None or nodes < 1:
        return None
    ranks = count_of(values.get("RANK_SIZE"))
    per = ranks // nodes if ranks is not None and ranks % nodes == 0 else None
    where = f"--world-size {nodes} with --multiprocessing-distributed (nodes, each spawning its devices)"
    evidence = f"RANK_SIZE={ranks} over {nodes} node{'s' if nodes != 1 else ''}" if per is not None else where
    if per is None:  # the devices each node spawns on, when listed: --device_list 0,1,2,3,4,5,6,7
        listed, _ = option_value(words, _DEVICE_LIST_OPTIONS, values)
        ids = listed.split(",") if listed and "$" not in listed else []
        if len(ids) > 1 and all(i.strip().isdigit() for i in ids):
            per, evidence = len(ids), f"--device_list {listed} on each of {nodes} node{'s' if nodes != 1 else ''}"
    named = devices_named(script_name) if per is None else None
    if named is not None and named[0] % nodes == 0:  # train_full_1p.sh: every rank of the job
        per, evidence = named[0] // nodes, f"the script name ({named[1]}) over {nodes}"
    return Scale(per, nodes, evidence, spawns=True, node_evidence=where)


def _python_nodes(words: list[Word], values: Lookup, per: int | None) -> tuple[int | None, str]:
    """The nodes a per-device Python launch names: a node-count option, or a world size larger than
    the processes it starts on this node (a world size alone is no node count: ``--world-size 8`` on
    one node of eight devices is one node)."""
    nodes, _ = option_value(words, _NODE_OPTIONS, values)
    count = count_of(nodes)
    if count is not None and count > 1:
        return count, f"a node-count option ({nodes} nodes)"
    world, _ = option_value(words, _WORLD_OPTIONS, values)
    sizes = (
        (count_of(world), "a world size of"),
        (count_of(values.get("WORLD_SIZE")), "WORLD_SIZE="),  # env:// reads it as every rank of the job
        (count_of(values.get("RANK_SIZE")), "RANK_SIZE="),
    )
    for size, what in sizes:
        if size is not None and per and size >= per:  # every rank is started here: one node
            return -(-size // per), f"{what}{'' if what.endswith('=') else ' '}{size} over {per} processes on this node"
    return None, ""


_OVER_ARRAY = LazyPattern(r"""for\s+\w+\s+in\s+"?\$\{(\w+)\[[@*]\]\}"?$""")


def loop_count(header: str, values: Lookup) -> int | None:
    """Iterations of ``for((i=0;i<8;i++))``, ``for i in $(seq 0 7)``, ``for i in {0..7}``, ``for i in 0 1 2``,
    and of ``for i in ${NPUS[@]}`` over an array the script writes as one of those (``NPUS=($(seq 0 7))``)."""
    text = header.rstrip(";").strip()
    over_array = _OVER_ARRAY.match(text)
    if over_array:
        elements = array_elements(over_array.group(1), values)
        inner = f"for i in {' '.join(elements or ())}"
        return loop_count(inner, values) if elements and not _OVER_ARRAY.match(inner) else None
    c_style = re.match(r"for\s*\(\(\s*\w+\s*=\s*([^;]*);\s*\w+\s*(<=|<)\s*([^;]*);", text)
    if c_style:
        low = count_of(expand(c_style.group(1).strip(), values))
        high = count_of(expand(c_style.group(3).strip(), values))
        if low is None or high is None:
            return None
        return high - low + (1 if c_style.group(2) == "<=" else 0)
    seq = re.match(r"for\s+\w+\s+in\s+\$\(\s*seq\s+(\S+)(?:\s+(\S+))?\s*\)", text) or re.match(
        r"for\s+\w+\s+in\s+`\s*seq\s+(\S+)(?:\s+(\S+))?\s*`", text
    )
    if seq:
        first, last = seq.group(1), seq.group(2)
        low, high = (
            (count_of(expand(first, values)), count_of(expand(last, values)))
            if last
            else (1, count_of(expand(first, values)))
        )
        return None if low is None or high is None else high - low + 1
    brace = re.match(r"for\s+\w+\s+in\s+\{(\d+)\.\.(\d+)\}", text)
    if brace:
        return int(brace.group(2)) - int(brace.group(1)) + 1
    listed = re.match(r"for\s+\w+\s+in\s+((?:\d+\s*)+)$", text)
    if listed:
        return len(listed.group(1).split())
    return None
