"""Shell words read statically: variables expanded from the assignments seen so far, wrappers
stripped (``nohup``, ``taskset -c 0-23``, ``env A=1``, ``timeout 1h``, ``ray job submit ... --``),
command lines held in variables split as the shell splits them, and options' values read.

Nothing here runs anything: values come from the static assignments seen before the command."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .lazyre import LazyPattern
from .sources.shell import Word

if TYPE_CHECKING:
    from .span import Span

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


def _ray(words: list[str], i: int) -> int | None:
    """``ray job submit [options] -- CMD``: the driver command after ``--`` (any other ``ray`` command
    is no wrapper)."""
    if words[i : i + 2] != ["job", "submit"] or "--" not in words[i + 2 :]:
        return None
    return words.index("--", i + 2) + 1


_SRUN_VALUES = frozenset(
    {
        *("-N", "--nodes", "-n", "--ntasks", "--ntasks-per-node", "-p", "--partition", "-c", "--cpus-per-task"),
        *("-J", "--job-name", "-t", "--time", "-w", "--nodelist", "-o", "--output", "-e", "--error", "-G"),
        *("--gpus", "--gres", "--mem", "--export", "--mpi", "-A", "--account", "-q", "--qos", "--chdir", "-D"),
    }
)


def _srun(words: list[str], i: int) -> int:
    return _skip_options(words, i, _SRUN_VALUES)


_MPIRUN_VALUES = frozenset(
    {
        *("-np", "-n", "-c", "--np", "-H", "--host", "-host", "--hostfile", "-hostfile", "-machinefile"),
        *("--machinefile", "-x", "-npernode", "--npernode", "-N", "--map-by", "-map-by", "--bind-to", "-bind-to"),
        *("-wdir", "--wdir", "-wd", "--prefix", "-genv", "-env", "-ppn", "-f", "--output-filename"),
    }
)


def _mpirun(words: list[str], i: int) -> int:
    while i < len(words) and words[i].startswith("-") and words[i] != "-":
        option = words[i]
        i += 1
        if option == "--":
            break
        if option in ("--mca", "-mca", "-genv") and i + 1 < len(words):  # a key and a value
            i += 2
        elif option in _MPIRUN_VALUES and i < len(words):
            i += 1
    return i


# the launchers of launchers: their options are read for the scale (launchers.scale), the command
# after them is the launch
SCALE_WRAPPERS = frozenset({"srun", "mpirun", "mpiexec"})

WRAPPERS: dict[str, Callable[[list[str], int], int | None]] = {
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
    "ray": _ray,
    "srun": _srun,
    "mpirun": _mpirun,
    "mpiexec": _mpirun,
}


@dataclass(eq=False, repr=False, slots=True)
class Unwrapped:
    """A command with its wrappers (env, nohup, srun, ...) taken off."""

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
        following = step(texts, i + 1) if step is not None else None
        if following is None:
            break
        i = following
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
    if "$((" in body and not text.startswith("'"):
        body = _arithmetic_expanded(body, values)
        if body is None:
            return None
    out = _VAR.sub(value, body)
    if failed or "$" in out or "`" in out:
        return None
    return out


def _arithmetic_expanded(body: str, values: Lookup) -> str | None:
    """``body`` with each ``$(( ... ))`` replaced by its integer value; None when one cannot be
    worked out statically (an unknown variable, an operator other than + - * / %)."""
    out: list[str] = []
    at = 0
    while (start := body.find("$((", at)) != -1:
        end = _closing(body, start + 1)
        if end is None or body[end - 1 : end + 1] != "))":
            return None
        number = arithmetic(body[start + 3 : end - 1], values)
        if number is None:
            return None
        out += [body[at:start], str(number)]
        at = end + 1
    out.append(body[at:])
    return "".join(out)


def _closing(text: str, opening: int) -> int | None:
    """The index of the parenthesis that closes the one at ``opening``."""
    depth = 0
    for i in range(opening, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return None


_ARITHMETIC_NESTING = 32  # parentheses in one expression; scripts use one or two
_ARITHMETIC_TOKENS = 256  # numbers, names and operators in one expression
_ARITHMETIC_TOKEN = LazyPattern(r"\s*(?:(\d+)|\$?\{?([A-Za-z_][A-Za-z0-9_]*)\}?|([-+*/%()]))")


def arithmetic(expression: str, values: Lookup) -> int | None:
    """The value of a shell arithmetic expression of integers, variables (``NNODES``, ``$NNODES``,
    ``${NNODES}``), + - * / % and parentheses, as bash works it out (division truncates toward zero);
    None for anything else or an unknown variable. Read, never evaluated by Python."""
    tokens: list[int | str] = []
    at = 0
    text = expression.strip()
    if text.count("(") > _ARITHMETIC_NESTING:
        return None  # read by recursion: a hostile nesting must not exhaust the stack
    while at < len(text):
        match = _ARITHMETIC_TOKEN.match(text, at)
        if match is None or match.end() == at:
            return None
        at = match.end()
        number, name, operator = match.groups()
        if number is not None:
            tokens.append(int(number))
        elif name is not None:
            known = (values.get(name) or "").strip()
            if not known.lstrip("-").isdigit():
                return None  # unset (bash would read 0: the value is not known statically) or no integer
            tokens.append(int(known))
        else:
            tokens.append(operator)
        if len(tokens) > _ARITHMETIC_TOKENS:
            return None  # a chain of signs recurses too
    parsed = _sum(tokens, 0)
    if parsed is None or parsed[1] != len(tokens):
        return None
    return parsed[0]


def _sum(tokens: list[int | str], at: int) -> tuple[int, int] | None:
    left = _product(tokens, at)
    while left is not None and left[1] < len(tokens) and tokens[left[1]] in ("+", "-"):
        right = _product(tokens, left[1] + 1)
        if right is None:
            return None
        left = (left[0] + right[0] if tokens[left[1]] == "+" else left[0] - right[0], right[1])
    return left


def _product(tokens: list[int | str], at: int) -> tuple[int, int] | None:
    left = _unary(tokens, at)
    while left is not None and left[1] < len(tokens) and tokens[left[1]] in ("*", "/", "%"):
        operator = tokens[left[1]]
        right = _unary(tokens, left[1] + 1)
        if right is None or (operator != "*" and right[0] == 0):
            return None  # bash stops at a division by zero
        if operator == "*":
            value = left[0] * right[0]
        else:
            quotient = abs(left[0]) // abs(right[0]) * (1 if (left[0] >= 0) == (right[0] > 0) else -1)
            value = quotient if operator == "/" else left[0] - quotient * right[0]
        left = (value, right[1])
    return left


def _unary(tokens: list[int | str], at: int) -> tuple[int, int] | None:
    if at >= len(tokens):
        return None
    token = tokens[at]
    if token in ("-", "+"):
        inner = _unary(tokens, at + 1)
        return None if inner is None else ((-inner[0] if token == "-" else inner[0]), inner[1])
    if token == "(":
        inner = _sum(tokens, at + 1)
        if inner is None or inner[1] >= len(tokens) or tokens[inner[1]] != ")":
            return None
        return inner[0], inner[1] + 1
    return (token, at + 1) if isinstance(token, int) else None


def known_tail(text: str, values: Lookup) -> str:
    """What ``text`` ends with after its last expansion whose value is not known, expanded
    (``${app_url}${boot_file}`` with only ``boot_file`` known gives its value): '' when nothing."""
    body = _strip_quotes(text)
    start = 0
    for match in _VAR.finditer(body):
        name = match.group("braced") or match.group("plain")
        if values.get(name) is None and match.group("default") is None:
            start = match.end()
    return expand(body[start:], values) or ""


_CONTINUATION = LazyPattern(r"(?<!\\)((?:\\\\)*)\\\n")  # an unescaped backslash, then a line break


def _strip_quotes(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text.replace('"', "")


def word_value(word: Word, values: Lookup) -> str | None:
    return word.value if word.value is not None else expand(word.text, values)


# [ A == B ], [ A = B ], [ A != B ] and their [[ ]] forms, each side one word
_TEST = LazyPattern(
    r"^(?P<open>\[\[?)\s+(?P<left>\"[^\"]*\"|'[^']*'|[^\s\"'\]]+)\s+(?P<op>==|=|!=)\s+"
    r"(?P<right>\"[^\"]*\"|'[^']*'|[^\s\"'\]]+)\s+\]\]?$"
)


def comparison_holds(condition: str, values: Lookup) -> bool | None:
    """Whether a string comparison test (``[ "$framework" == "PyTorch" ]``) holds with the values
    known; None when a side is not known or the test is of another kind (a glob pattern on the
    right of ``[[ ]]`` included)."""
    found = _TEST.match(condition.strip())
    if found is None:
        return None
    right = found.group("right")
    if found.group("open") == "[[" and not right.startswith(("'", '"')) and any(c in right for c in "*?["):
        return None
    left_value, right_value = expand(found.group("left"), values), expand(right, values)
    if left_value is None or right_value is None:
        return None
    return (left_value == right_value) == (found.group("op") != "!=")


def undecided(guards: tuple[tuple[str, bool], ...], values: Lookup) -> bool:
    """Whether one of a command's if/elif conditions compares a string whose value is not known
    (``[ "$framework" == "MindSpore" ]``): a branch picked by a name (a framework, a mode), not by a
    count or a file test."""
    return any(_TEST.match(text.strip()) and comparison_holds(text, values) is None for text, _runs in guards)


def unreachable(guards: tuple[tuple[str, bool], ...], values: Lookup) -> bool:
    """Whether one of a command's if/elif conditions is known to take another branch."""
    return any(comparison_holds(text, values) is (not runs) for text, runs in guards)


PURE_VARIABLE = LazyPattern(r"^\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)$")


# "${NAME[@]}": every element of an array, each one word
ARRAY_ALL = LazyPattern(r'^"?\$\{([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}"?$')


def array_elements(name: str, values: Lookup) -> list[str] | None:
    """The elements of ``NAME=( ... )`` as the shell splits them (quotes removed, comments and line
    continuations dropped; an element holding an expansion keeps it as text), or None when the
    variable is not an array written in the script."""
    written = getattr(values, "written", None)
    text = written(name) if written is not None else None
    if not text or not (text.startswith("(") and text.endswith(")")):
        return None
    import shlex  # only an array expanded into a launch is split: a run without one skips the import

    lexer = shlex.shlex(re.sub(r"\\\r?\n", " ", text[1:-1]), posix=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError:  # an unclosed quote: nothing is known of the elements
        return None


def split_arguments(words: list[Word], values: Lookup) -> list[Word]:
    """Unquoted ``$ARGS`` words whose value is known, split as the shell splits them
    (``torchrun $DISTRIBUTED_ARGS pretrain.py``), and arrays expanded whole (``"${ARGS[@]}"``); each
    part keeps the variable's position."""
    out: list[Word] = []
    template = getattr(values, "template", None)
    for word in words:
        array = ARRAY_ALL.match(word.text) if word.value is None else None
        elements = array_elements(array.group(1), values) if array else None
        if elements is not None:
            out.extend(Word(e, None if "$" in e or "`" in e else e, word.span) for e in elements)
            continue
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
    anchor = words[0].span
    line = expand(words[0].text, values)
    if not line:
        partial = _held_words(words[0].text, values, anchor, 0)
        if not partial or partial[0].value is None:
            return words, False  # not even the command's name is known
        return partial + words[1:], True
    import shlex  # only a command held in a variable is split: a run without one skips the import

    try:
        parts = shlex.split(line)
    except ValueError:
        return words, False
    if not parts:
        return words, False
    return [Word(p, p, anchor) for p in parts] + words[1:], True


_HELD_DEPTH = 4  # CMD="$LAUNCHER $SCRIPT $ARGS", LAUNCHER="accelerate launch $DIST_ARGS", ...


def _held_words(text: str, values: Lookup, anchor: Span, depth: int) -> list[Word] | None:
    """The words of a command line held in a variable whose value is known only in part
    (``LAUNCHER="accelerate launch --main_process_ip $head_node_ip"``), as the shell splits it: each
    expansion whose value is not known stays one word without a value. None when the variable's
    value, as its assignment writes it, is not known."""
    template = getattr(values, "template", None)
    if depth >= _HELD_DEPTH or template is None or not PURE_VARIABLE.match(text):
        return None
    raw = template(text.strip("${}"))
    if raw is None:
        return None
    import shlex

    out: list[Word] = []
    for token in _split_like_the_shell(_CONTINUATION.sub(r"\1", raw)):
        known = expand(token, values)
        if known is not None:
            out += [Word(part, part, anchor) for part in known.split()]
            continue
        if "$" not in token and "`" not in token:
            try:
                out += [Word(part, part, anchor) for part in shlex.split(token)]
            except ValueError:
                out.append(Word(token, None, anchor))
            continue
        inner = _held_words(token, values, anchor, depth + 1)
        out += inner if inner is not None else [Word(token, None, anchor)]
    return out


def _split_like_the_shell(text: str) -> list[str]:
    """``text`` split at blanks outside quotes and outside ``$(...)``, ``$((...))``, ``${...}`` and
    backquotes: an expansion is one word until its value is known."""
    tokens: list[str] = []
    current: list[str] = []
    depth = 0  # open parentheses and braces of expansions
    quote = ""
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and quote != "'" and i + 1 < len(text):
            current += [char, text[i + 1]]
            i += 2
            continue
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"`":
            quote = char
        elif char == "$" and text[i + 1 : i + 2] in ("(", "{"):
            depth += 1
            current.append(char)
            char = text[i + 1]
            i += 1
        elif char in "({" and depth:
            depth += 1
        elif char in ")}" and depth:
            depth -= 1
        elif char.isspace() and not depth:
            if current:
                tokens.append("".join(current))
                current = []
            i += 1
            continue
        current.append(char)
        i += 1
    if current:
        tokens.append("".join(current))
    return tokens


def count_of(text: str | None) -> int | None:
    if text is None:
        return None
    text = text.strip()
    if ":" in text:  # MIN:MAX nodes of an elastic launch
        text = text.rsplit(":", 1)[1]
    return int(text) if text.isdigit() and len(text) < 7 else None


def option_at(
    words: list[Word], names: tuple[str, ...], values: Lookup, start: int = 0, end: int | None = None
) -> tuple[int, int | None] | None:
    """Where the first option in ``names`` is among ``words[start:end]``: the index of its word and of
    the word holding its value (the same word for ``--x=8``; None when ``--x`` ends the words); None
    when absent."""
    stop = len(words) if end is None else end
    for i in range(start, stop):
        text = word_value(words[i], values) or words[i].text
        for name in names:
            if text == name:
                return i, (i + 1 if i + 1 < stop else None)
            if text.startswith(name + "="):
                return i, i
    return None


def option_value(words: list[Word], names: tuple[str, ...], values: Lookup, start: int = 0) -> tuple[str | None, bool]:
    """The value of the first option in ``names`` (``--x 8`` or ``--x=8``); (None, False) when absent,
    (None, True) when present but not static."""
    found = option_at(words, names, values, start)
    if found is None:
        return None, False
    at, value_at = found
    if value_at is None:
        return None, True
    if value_at == at:
        return expand(words[at].text.split("=", 1)[1], values), True
    return word_value(words[value_at], values), True
