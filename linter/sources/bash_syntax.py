"""Does bash accept this script? A reader of bash's own grammar (``bash -n``), without running bash.

tree-sitter-bash reads some valid scripts as errors (``for i do``, ``$(( 16#$h ))``, a trailing
``\\``, ``${!${i}@}`` ...) and some invalid ones as fine (a stray ``done`` or ``fi``, ``;;`` outside
``case``, an extglob pattern outside ``[[ ]]``). Whether a script is a syntax error is decided here
instead, the way bash 5 parses: reserved words only where a command starts, ``$( )`` parsed as
commands, ``$(( ))``, ``${ }``, ``$[ ]`` and backquotes only matched (their contents are read at run
time), here-document bodies skipped, ``[[ ]]`` checked with its own grammar. Like ``bash -n``, the
first error stops the check; an unterminated here-document is only a warning in bash, so it passes.

``check`` also returns rewrites: same-length replacements that let tree-sitter read constructs it
gets wrong (the commands around them are then parsed as bash parses them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# reserved words that end or continue a construct: where a command starts, one is an error unless the
# construct it belongs to is open and expects it
NOT_A_COMMAND = frozenset({"then", "else", "elif", "fi", "do", "done", "esac", "}", "in", "]]"})
COMPOUND_STARTS = frozenset({"{", "if", "while", "until", "for", "select", "case", "[["})
DECLARATION_BUILTINS = frozenset({"declare", "typeset", "local", "export", "readonly", "alias"})
CLOSER_OF = {
    "if": "fi",
    "then": "fi",
    "elif": "fi",
    "else": "fi",
    "while": "done",
    "until": "done",
    "for": "done",
    "select": "done",
    "do": "done",
    "case": "esac",
    "{": "}",
    "(": ")",
    "$(": ")",
    "[[": "]]",
}
NOTHING_OPEN = {"fi": "no 'if' is open", "done": "no loop is open", "esac": "no 'case' is open", "}": "no '{' is open"}
COND_UNARY = frozenset("-" + c for c in "abcdefghknoprstuvwxzGLNORS")
COND_BINARY = frozenset(
    {"=", "==", "!=", "=~", "!~", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef"}
)
EXTGLOB_BINARY = frozenset({"=", "==", "!="})

# operators, longest first; a '<' or '>' right before '(' starts a process substitution (a word)
OPERATOR = re.compile(r";;&|;;|;&|&&|&>>|&>|\|\||\|&|<<<|<<-|<<|<&|<>|>>|>&|>\||[;&|()<>]")
REDIRECTS = frozenset({"<", ">", ">>", "<<", "<<-", "<<<", "<&", ">&", "<>", ">|", "&>", "&>>"})
# the common tokens in one match: blanks, then a newline (after a comment or not), an operator that
# cannot start anything longer, or a word of plain characters followed by what must end a word
FAST_TOKEN = re.compile(
    r"(?:[ \t]|\\\n)*(?:(#[^\n]*)?(\n)|(;;&|;;|;&|;|&&|&(?!>)|\|\||\|&|\||\))"
    r"|([^ \t\n;&|()<>\"'`$\\#][^ \t\n;&|()<>\"'`$\\]*)(?=[ \t\n;&|)]|\Z))"
)
# Fast paths. A line continuation separates words only after a blank ('i\\<newline>f' is the word
# 'if'); a '\\' at the end of the file is nothing.
_BLANK = r"(?:[ \t]|(?<=[ \t\n])\\(?:\n|\Z))"
_VAR = r"\$(?:[A-Za-z_][A-Za-z0-9_]*(?![A-Za-z0-9_])|[0-9@*#?$!-]|\{[A-Za-z_][A-Za-z0-9_]*\})"
_WORD = (  # every alternative starts with a different character: no backtracking between them
    r"(?:[^ \t\n;&|()<>\"'`$\\]|" + _VAR + r"|'[^']*'|\\[^\n]"
    r"|\"(?:[^\"\\$`]|\\[\s\S]|" + _VAR + r")*\")+"
)
# a target right before '<' or '>' ('>2>f', '<{fd}>f') would be the next descriptor: left to the slow path
_REDIRECT = r"(?:>>|>\||>&|<&|&>>|&>|<>|>|<(?!<))" + _BLANK + r"*(?!#)" + _WORD + r"(?![<>])"
# a whole simple command of plain words, simple expansions, quotes and redirections, up to what ends
# it: nothing in it can be a syntax error
SIMPLE_COMMAND = re.compile(
    rf"{_BLANK}*(?!#)(?:{_REDIRECT}|{_WORD})(?:{_BLANK}*{_REDIRECT}|{_BLANK}+(?!#){_WORD})*"
    rf"{_BLANK}*(?=[\n;|)]|(?<=[ \t\n])#|&(?!>)|\Z)"
)
# whole lines of such commands, joined by ';', '&&', '||', '|' or '&' (no reserved word, '[' test or
# subshell in command position): the check skips them in one match
_PLAIN_START = (
    r"(?!(?:if|then|else|elif|fi|do|done|case|esac|while|until|for|select|function|coproc|time|in"
    r"|\{|\}|!|\[\[|\]\]|\[)(?![^ \t\n;&|()<>\\]))(?!#)"
)
_PLAIN_COMMAND = rf"{_BLANK}*{_PLAIN_START}(?:{_REDIRECT}|{_WORD})(?:{_BLANK}*{_REDIRECT}|{_BLANK}+(?!#){_WORD})*"
_JOIN = rf"{_BLANK}*(?:&&|\|\||;(?![;&])|\|(?![|&])|&(?![&>]))"
PLAIN_LINE = re.compile(
    rf"{_PLAIN_COMMAND}(?:{_JOIN}{_PLAIN_COMMAND})*(?:{_BLANK}*(?:;(?![;&])|&(?![&>])))?"
    rf"{_BLANK}*(?:(?<=[ \t;&])#[^\n]*)?(?:\n|\Z)"
)
EMPTY_LINES = re.compile(r"(?:(?:[ \t]|\\\n)*(?:#[^\n]*)?\n)+")
FUNCTION_PARENS = re.compile(r"(?:[ \t]|\\\n)*\(")
BLANKS = re.compile(r"(?:[ \t]|\\\n|\\\Z)+")
# a template's placeholder, <master_ip_address> or <your data path>: letters first, no shell syntax
PLACEHOLDER = re.compile(r"<[A-Za-z_][\w .-]*>")
WORD_RUN = re.compile(r"[^ \t\n;&|()<>\"'`$\\]+")
DQUOTE_RUN = re.compile(r"[^\"\\$`]+")
BACKQUOTE_RUN = re.compile(r"[^`\\]+")
CONTINUATION = re.compile(r"(?<!\\)\\\n")
PLAIN_BACKQUOTED = re.compile(r"[A-Za-z0-9_ ./+%:=,-]+")
ANSI_RUN = re.compile(r"[^'\\]+")
PAIR_STOP = re.compile(r"[()\\'\"`$]")
BRACE_STOP = re.compile(r"[{}\\'\"`$<>]")
BRACKET_STOP = re.compile(r"[\[\]\\'\"`$<>]")
ASSIGNMENT_START = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
SUBSCRIPTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\[")
ANY_SUBSCRIPTED = re.compile(r"(?<![^ \t\n;&|])[A-Za-z_][A-Za-z0-9_]*\[")
FD_PREFIX = re.compile(r"\d+|\{[A-Za-z_][A-Za-z0-9_]*\}")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
MAX_DEPTH = 50  # nesting bash itself would handle, but Python recursion would not

# token kinds besides the operator texts
WORD, NEWLINE, EOF, ARITH = "word", "newline", "end of file", "(("
# Where a token is read decides what it is (bash's lexer depends on the parser's state too): CMD a
# command start ('((' arithmetic, 'a=(' arrays, 'a[...]' subscripts), PREFIX after an assignment or
# redirection before the command name, ARG an argument, DECL an argument of declare/local/export
# (assignments again), ARRAY an element of 'a=( )', PATTERN a case pattern, TARGET a redirection
# target after '>&', COND inside [[ ]] ('<' compares), COND_EXTGLOB right of '==' there (extglob
# patterns), COND_REGEX right of '=~' ('(' and '|' are part of the word).
CMD, PREFIX, ARG, DECL, ARRAY, PATTERN, TARGET, COND, COND_EXTGLOB, COND_REGEX = range(10)


@dataclass
class SyntaxProblem:
    offset: int  # where bash reports it (character offsets)
    end: int
    message: str


@dataclass
class Checked:
    problem: SyntaxProblem | None = None
    undecided: bool = False  # nested too deeply to check; nothing is known
    rewrites: list[tuple[int, int, str]] = field(default_factory=list)  # (start, end, same-length text)
    # backquoted commands tree-sitter cannot read, as opaque strings: their commands are lost to it
    lossy_rewrites: list[tuple[int, int, str]] = field(default_factory=list)


class _Error(Exception):
    def __init__(self, offset: int, message: str, end: int | None = None) -> None:
        super().__init__(message)
        self.offset = offset
        self.end = offset + 1 if end is None else end
        self.message = message


class _TooDeep(Exception):
    pass


def check(text: str) -> Checked:
    parser = _Parser(text)
    try:
        parser.program()
        parser.rewrite_final_continuation()
    except _Error as exc:
        end = min(exc.end, len(text))
        problem = SyntaxProblem(exc.offset, end, exc.message)
        return Checked(problem, False, outermost(parser.rewrites), outermost(parser.lossy_rewrites))
    except (_TooDeep, RecursionError):
        return Checked(undecided=True)
    return Checked(None, False, outermost(parser.rewrites), outermost(parser.lossy_rewrites))


def outermost(rewrites: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Each rewrite once, in text order; one inside another (an expansion in an expansion) is dropped."""
    out: list[tuple[int, int, str]] = []
    for rewrite in sorted(set(rewrites), key=lambda r: (r[0], -r[1])):
        if not out or rewrite[0] >= out[-1][1]:
            out.append(rewrite)
    return out


@dataclass(slots=True)
class _Token:
    kind: str  # WORD, NEWLINE, EOF, ARITH or the operator itself
    start: int
    end: int
    text: str = ""  # a word's text as written

    def is_word(self, *texts: str) -> bool:
        return self.kind == WORD and self.text in texts


@dataclass
class _Heredoc:
    delimiter: str
    strip_tabs: bool
    quoted: bool


class _Parser:
    def __init__(self, text: str) -> None:
        self.s = text
        self.n = len(text)
        self.pos = 0
        self.depth = 0
        self.pending: list[_Heredoc] = []
        self.open: list[tuple[str, int]] = []  # constructs being read: (keyword, offset)
        self.rewrites: list[tuple[int, int, str]] = []
        self.lossy_rewrites: list[tuple[int, int, str]] = []
        self._peeked: tuple[int, int, _Token] | None = None
        self._comsub_end: dict[int, int] = {}  # one parse per $( ), however often its word is read
        self._paren_end: dict[int, int] = {}  # one scan per '(' of arithmetic, however deep the nesting

    # -- errors ----------------------------------------------------------------------------
    def line(self, offset: int) -> int:
        return self.s.count("\n", 0, offset) + 1

    def shown(self, tok: _Token) -> str:
        return "newline" if tok.kind == NEWLINE else (tok.text if tok.kind == WORD else tok.kind)

    def unexpected(self, tok: _Token, hint: str = "") -> _Error:
        if tok.kind == EOF:
            return self.unexpected_eof(hint)
        message = f"syntax error near unexpected token '{self.shown(tok)}'"
        if hint:
            return _Error(tok.start, f"{message}: {hint}", tok.end)
        if tok.kind == "(" and tok.start and self.s[tok.start - 1] in "@!+*?":
            pattern = self.s[tok.start - 1] + "(...)"
            message += f": {pattern} is an extglob pattern, parsed only once 'shopt -s extglob' has run"
            message += " (bash -n runs nothing)"
            return _Error(tok.start, message, tok.end)
        if tok.kind == WORD and tok.text in NOTHING_OPEN and not self._is_open(tok.text):
            message += f": {NOTHING_OPEN[tok.text]}"
        if self.open:
            keyword, offset = self.open[-1]
            message += f" ('{keyword}' at line {self.line(offset)} expects '{CLOSER_OF[keyword]}')"
        return _Error(tok.start, message, tok.end)

    def unexpected_eof(self, hint: str = "") -> _Error:
        """Reported where the script ends (bash names the line after it), with what is left open."""
        end = len(self.s.rstrip())
        if hint:
            return _Error(end, f"syntax error: unexpected end of file: {hint}", end)
        if self.open:
            keyword, offset = self.open[-1]
            where = f"'{keyword}' at line {self.line(offset)}"
            message = f"syntax error: unexpected end of file: {where} is never closed by '{CLOSER_OF[keyword]}'"
            return _Error(end, message, end)
        return _Error(end, "syntax error: unexpected end of file", end)

    def unmatched(self, start: int, closer: str, what: str) -> _Error:
        """An unclosed quote or expansion: reported where it opens, as bash does."""
        return _Error(start, f"unterminated {what}: no closing {closer} before the end of the file")

    def _is_open(self, closer: str) -> bool:
        return any(CLOSER_OF[k] == closer for k, _ in self.open)

    def enter(self, keyword: str, offset: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _TooDeep
        self.open.append((keyword, offset))

    def leave(self) -> None:
        self.depth -= 1
        self.open.pop()

    # -- tokens ----------------------------------------------------------------------------
    def peek(self, mode: int = ARG) -> _Token:
        cached = self._peeked
        if cached is not None and cached[0] == self.pos and cached[1] == mode:
            return cached[2]
        tok = self._lex(self.pos, mode)
        self._peeked = (self.pos, mode, tok)
        return tok

    def take(self, tok: _Token) -> _Token:
        self.pos = tok.end
        if tok.kind == NEWLINE and self.pending:
            self.pos = self._skip_heredoc_bodies(self.pos)
        return tok

    def skip_newlines(self) -> _Token:
        if not self.pending:
            lines = EMPTY_LINES.match(self.s, self.pos)
            if lines:
                self.pos = lines.end()
        tok = self.peek(CMD)
        while tok.kind == NEWLINE:
            self.take(tok)
            tok = self.peek(CMD)
        return tok

    def _lex(self, pos: int, mode: int) -> _Token:
        s = self.s
        fast = FAST_TOKEN.match(s, pos) if mode != COND_REGEX else None
        if fast and fast.lastindex == 4 and mode in (CMD, PREFIX, DECL, ARRAY) and "[" in fast.group(4):
            fast = None
        if fast:
            group = fast.lastindex
            if group == 2:
                return _Token(NEWLINE, fast.start(2), fast.end())
            if group == 3:
                return _Token(fast.group(3), fast.start(3), fast.end())
            return _Token(WORD, fast.start(4), fast.end(), fast.group(4))
        blanks = BLANKS.match(s, pos)
        if blanks:
            pos = blanks.end()
        if pos >= self.n:
            return _Token(EOF, self.n, self.n)
        c = s[pos]
        if c == "#":
            end = s.find("\n", pos)
            pos = self.n if end == -1 else end
            if pos >= self.n:
                return _Token(EOF, self.n, self.n)
            c = "\n"
        if c == "\n":
            return _Token(NEWLINE, pos, pos + 1)
        if c in "<>" and s.startswith("(", pos + 1) and mode not in (COND, COND_EXTGLOB, COND_REGEX):
            return self._word(pos, mode)
        if mode == CMD and s.startswith("((", pos):
            arith = self._arith_command(pos)
            if arith is not None:
                return arith
        if mode == COND_REGEX and c in "(|":
            return self._word(pos, mode)  # a regex group or alternative
        op = OPERATOR.match(s, pos)
        if op:
            if mode in (COND, COND_EXTGLOB, COND_REGEX) and s[pos] in "<>":
                return _Token(s[pos], pos, pos + 1)  # in [[ ]] a comparison, not a redirection
            return _Token(op.group(), pos, op.end())
        return self._word(pos, mode)

    def _word(self, pos: int, mode: int) -> _Token:
        end = self._scan_word(pos, mode)
        text = self.s[pos:end]
        if "\\\n" in text:
            text = text.replace("\\\n", "")  # 'sele\<newline>ct' is the reserved word 'select'
        if end < self.n and self.s[end] in "<>" and FD_PREFIX.fullmatch(text) and mode < TARGET:
            op = OPERATOR.match(self.s, end)
            if op and op.group() in REDIRECTS:  # '2>&1', '{fd}>file': the number belongs to the operator
                return _Token(op.group(), pos, op.end())
        return _Token(WORD, pos, end, text)

    def _arith_command(self, pos: int) -> _Token | None:
        """``(( ... ))`` at a command start; bash reads two subshells when the parentheses do not
        close as a pair (``((a) || (b))``)."""
        inner_close = self._matched_parens(pos + 1, "'(('")
        if self.s.startswith(")", inner_close + 1):
            self._rewrite_arithmetic(pos + 2, inner_close)
            return _Token(ARITH, pos, inner_close + 2, self.s[pos : inner_close + 2])
        return None

    # -- words -----------------------------------------------------------------------------
    def _scan_word(self, pos: int, mode: int) -> int:
        s, n = self.s, self.n
        start = pos
        subscript = self._subscript_start(pos, mode)
        if subscript is not None:
            pos = self._scan_brackets(subscript, "'['")
        while pos < n:
            run = WORD_RUN.match(s, pos)
            if run:
                pos = run.end()
                if pos >= n:
                    break
            c = s[pos]
            if c in "\\'\"`$":
                pos = self._skip_quoted(pos, in_word=True)
            elif c in "<>" and s.startswith("(", pos + 1) and mode not in (COND, COND_EXTGLOB, COND_REGEX):
                pos = self._comsub(pos + 2, pos)
            elif c == "(" and self._opens_word_group(start, pos, mode):
                pos = self._word_group(start, pos, mode)
            elif c == "|" and mode == COND_REGEX:
                pos += 1
            else:
                break
        return min(pos, n)

    def _subscript_start(self, pos: int, mode: int) -> int | None:
        """Where an assignment may stand, bash reads ``name[...]`` (``a[ $i ]=1``) or, inside an array,
        ``[...]`` to the matching ']' as one piece, blanks and newlines included."""
        if mode == ARRAY:
            return pos if self.s.startswith("[", pos) else None
        if mode in (CMD, PREFIX, DECL):
            name = SUBSCRIPTED.match(self.s, pos)
            return name.end() - 1 if name else None
        return None

    def _opens_word_group(self, start: int, pos: int, mode: int) -> bool:
        """A '(' that belongs to the word: a compound array assignment, an extglob pattern (only
        where bash turns extglob on while parsing: right of ``==`` in ``[[ ]]``), a regex group."""
        if mode == COND_REGEX:
            return True
        if pos == start:
            return False
        before = self.s[pos - 1]
        if mode in (CMD, PREFIX, DECL) and before == "=":
            return ASSIGNMENT_START.fullmatch(self.s, start, pos) is not None
        return mode == COND_EXTGLOB and before in "@!+*?"

    def _word_group(self, start: int, pos: int, mode: int) -> int:
        if mode in (CMD, PREFIX, DECL) and self.s[pos - 1] == "=":
            return self._compound_assignment(pos)
        return self._matched_parens(pos, "'('") + 1

    def _compound_assignment(self, pos: int) -> int:
        """``name=( words )``: words, newlines and comments up to ')'; any operator is an error."""
        open_at = pos
        pos += 1
        while True:
            tok = self._lex(pos, ARRAY)
            if tok.kind == ")":
                return tok.end
            if tok.kind == EOF:
                raise self.unmatched(open_at, "')'", "array '('")
            if tok.kind not in (WORD, NEWLINE):
                raise self.unexpected(tok)
            pos = tok.end

    def _scan_dquote(self, pos: int) -> int:
        s, n = self.s, self.n
        open_at = pos
        pos += 1
        while pos < n:
            run = DQUOTE_RUN.match(s, pos)
            if run:
                pos = run.end()
                if pos >= n:
                    break
            c = s[pos]
            if c == '"':
                return pos + 1
            if c == "\\":
                pos += 2
            elif c == "`":
                pos = self._scan_backquote(pos)
            else:  # '$', outside $'...' (no ANSI-C quoting inside double quotes)
                pos = self._scan_dollar(pos, in_dquote=True)
        raise self.unmatched(open_at, "'\"'", "double-quoted string")

    def _scan_backquote(self, pos: int, in_word: bool = False) -> int:
        """Backquoted commands are parsed when they run: only the closing backquote is looked for."""
        end = self._backquote_end(pos)
        body = self.s[pos + 1 : end - 1]
        if body and not PLAIN_BACKQUOTED.fullmatch(body):
            self._rewrite_backquoted(pos, end, in_word)
        return end

    def _rewrite_backquoted(self, start: int, end: int, in_word: bool) -> None:
        """tree-sitter misreads backquotes holding quotes, '#' or newlines; as a last resort it gets an
        opaque string of U+FFFD in their place (its value unknown), newlines kept."""
        opaque = re.sub(r"[^\n]", "\ufffd", self.s[start + 1 : end - 1])
        quote = '"' if in_word else "\ufffd"  # inside "..." or ${...} the string is already quoted
        self.lossy_rewrites.append((start, end, quote + opaque + quote))

    def _backquote_end(self, pos: int) -> int:
        s = self.s
        open_at = pos
        pos += 1
        if s.startswith("`", pos):
            self.rewrites.append((open_at, pos + 1, '""'))  # tree-sitter rejects an empty ``
            return pos + 1
        end = self._past_close(pos, BACKQUOTE_RUN, "`")
        if end is None:
            raise self.unmatched(open_at, "'`'", "backquoted command")
        return end

    def _past_close(self, pos: int, run: re.Pattern[str], close: str) -> int | None:
        """Past the ``close`` ending a string that goes on from ``pos``: ``run`` skips what needs no
        look, a backslash escapes the next character; None when the text ends first."""
        s, n = self.s, self.n
        while pos < n:
            plain = run.match(s, pos)
            if plain:
                pos = plain.end()
                if pos >= n:
                    break
            if s[pos] == close:
                return pos + 1
            pos += 2  # a backslash and what it escapes
        return None

    def _scan_dollar(self, pos: int, in_dquote: bool = False) -> int:
        s = self.s
        nxt = s[pos + 1] if pos + 1 < self.n else ""
        if nxt == "(":
            if s.startswith("(", pos + 2):
                return self._arith_expansion(pos)
            return self._comsub(pos + 2, pos)
        if nxt == "{":
            return self._scan_braces(pos)
        if nxt == "$":
            return pos + 2  # the parameter $$: a '{' after it opens nothing
        if nxt == "[":
            return self._scan_brackets(pos + 1)
        if nxt == "'" and not in_dquote:
            return self._scan_ansi(pos + 1)
        if nxt == '"' and not in_dquote:
            return self._scan_dquote(pos + 1)
        return pos + 1

    def _arith_expansion(self, pos: int) -> int:
        """``$(( ... ))``: bash only matches the parentheses here (``$((cmd) | wc)`` is a command
        substitution, decided when it runs)."""
        end = self._matched_parens(pos + 1, "'$(('") + 1
        inner_close = end - 2
        if self.s[inner_close] == ")" and self._closes_pair(pos + 2, inner_close):
            self._rewrite_arithmetic(pos + 3, inner_close)
        else:
            self._rewrite_subshell_in_comsub(pos + 2)
        return end

    def _closes_pair(self, open_at: int, close_at: int) -> bool:
        return self._matched_parens(open_at, "'('") == close_at

    def _rewrite_arithmetic(self, start: int, end: int) -> None:
        """tree-sitter reads ``16#ff`` as a comment and rejects expressions bash evaluates only when
        they run; no command lives in arithmetic, so a ``0`` per expression is all it needs."""
        body = self.s[start:end]
        if body.strip():
            blank = re.sub(r"[^;\n]", " ", body)
            self.rewrites.append((start, end, re.sub(r"(^|;) ", lambda m: m.group(1) + "0", blank)))

    def _rewrite_subshell_in_comsub(self, open_at: int) -> None:
        """``$((cmd) | wc)``: tree-sitter takes the ``$((`` for arithmetic; blank the inner
        parentheses so that it reads the same commands (a subshell adds no command)."""
        close_at = self._matched_parens(open_at, "'('")
        self.rewrites.append((open_at, open_at + 1, " "))
        self.rewrites.append((close_at, close_at + 1, " "))

    def _comsub(self, pos: int, open_at: int) -> int:
        """``$( ... )`` or a process substitution: commands, parsed now (bash 5 does)."""
        known = self._comsub_end.get(pos)
        if known is not None:
            return known
        saved = (self.pos, self._peeked)
        self.pos = pos
        self.enter("$(", open_at)
        self.compound_list(lambda tok: tok.kind == ")")
        tok = self.peek(CMD)
        if tok.kind != ")":
            raise self.unexpected(tok) if tok.kind != EOF else self.unexpected_eof()
        self.leave()
        end = tok.end
        self.pos, self._peeked = saved
        self._comsub_end[pos] = end
        return end

    def _matched_parens(self, pos: int, what: str) -> int:
        """Offset of the ')' matching the '(' at ``pos``; quotes and ``$( )`` inside are skipped (a
        ``${`` is not matched here: bash reads the braces of arithmetic only when it evaluates it)."""
        known = self._paren_end.get(pos)
        if known is None:
            known = self._paren_end[pos] = self._scan_parens(pos, what)
        return known

    def _scan_parens(self, pos: int, what: str) -> int:
        return self._scan_nested(pos, PAIR_STOP, "()", what, opaque_braces=True)

    def _scan_nested(self, pos: int, stop: re.Pattern[str], pair: str, what: str, opaque_braces: bool = False) -> int:
        """Offset of the closer of ``pair`` matching its opener at ``pos``; quotes and expansions
        inside are skipped (``opaque_braces``: a ``${`` is not, see ``_matched_parens``)."""
        s = self.s
        opener, closer = pair
        open_at = pos
        depth = 1
        pos += 1
        while True:
            found = stop.search(s, pos)
            if found is None:
                raise self.unmatched(open_at, f"'{closer}'", what)
            pos = found.start()
            c = s[pos]
            if c == opener:
                depth += 1
                pos += 1
            elif c == closer:
                depth -= 1
                if depth == 0:
                    return pos
                pos += 1
            elif opaque_braces and c == "$" and s.startswith("{", pos + 1):
                pos += 2
            else:
                pos = self._skip_quoted(pos)

    def _skip_quoted(self, pos: int, in_word: bool = False) -> int:
        """Past a quoted string, an escape or an expansion at ``pos`` (a process substitution too:
        bash parses ``<(...)`` inside ``${ }`` and subscripts, not inside arithmetic); ``in_word``:
        a backquoted command in a plain word (see ``_rewrite_backquoted``)."""
        c = self.s[pos]
        if c in "<>":
            return self._comsub(pos + 2, pos) if self.s.startswith("(", pos + 1) else pos + 1
        if c == "\\":
            return pos + 2
        if c == "'":
            close = self.s.find("'", pos + 1)
            if close == -1:
                raise self.unmatched(pos, '"\'"', "single-quoted string")
            return close + 1
        if c == '"':
            return self._scan_dquote(pos)
        if c == "`":
            return self._scan_backquote(pos, in_word)
        return self._scan_dollar(pos)

    def _scan_braces(self, pos: int) -> int:
        """``${ ... }``: the first unnested '}' ends it (a bare '{' inside does not nest)."""
        s = self.s
        open_at = pos
        pos += 2
        while True:
            stop = BRACE_STOP.search(s, pos)
            if stop is None:
                raise self.unmatched(open_at, "'}'", "'${'")
            pos = stop.start()
            c = s[pos]
            if c == "}":
                self._rewrite_expansion(open_at, pos + 1)
                return pos + 1
            if c == "{":
                pos += 1
            else:
                pos = self._skip_quoted(pos)

    def _rewrite_expansion(self, start: int, end: int) -> None:
        """tree-sitter rejects some expansions bash checks only when they run (``${!${i}@}``,
        zsh's ``${(%):-%N}``); for it any ``${...}`` other than a name can be ``${_____}``."""
        body = self.s[start + 2 : end - 1]
        if body and not NAME.match(body):
            self.rewrites.append((start, end, "${" + "_" * len(body) + "}"))

    def _scan_brackets(self, pos: int, what: str = "'$['") -> int:
        """Past the ']' matching the '[' at ``pos``."""
        return self._scan_nested(pos, BRACKET_STOP, "[]", what) + 1

    def _scan_ansi(self, pos: int) -> int:
        end = self._past_close(pos + 1, ANSI_RUN, "'")
        if end is None:
            raise self.unmatched(pos - 1, '"\'"', "$'...' string")
        return end

    # -- here-documents --------------------------------------------------------------------
    def heredoc(self, word: _Token, strip_tabs: bool) -> None:
        text = word.text
        quoted = any(q in text for q in "'\"\\")
        self.pending.append(_Heredoc(_quote_removed(text), strip_tabs, quoted))

    def _skip_heredoc_bodies(self, pos: int) -> int:
        s, n = self.s, self.n
        for doc in self.pending:
            while pos < n:
                line_end = s.find("\n", pos)
                next_line = n if line_end == -1 else line_end + 1
                line = s[pos : n if line_end == -1 else line_end]
                while not doc.quoted and _continued(line) and next_line < n:
                    more_end = s.find("\n", next_line)
                    line = line[:-1] + s[next_line : n if more_end == -1 else more_end]
                    next_line = n if more_end == -1 else more_end + 1
                pos = next_line
                if (line.lstrip("\t") if doc.strip_tabs else line) == doc.delimiter:
                    break
            # at the end of the file the body just ends: bash only warns
        self.pending = []
        return pos

    # -- grammar ---------------------------------------------------------------------------
    def plain_lines(self) -> int:
        """Whole lines of plain simple commands (most of a launch script), skipped in one match each:
        nothing in them can be a syntax error. Returns how many."""
        count = 0
        # only from where a line starts: retried after every command of a long line, it would be quadratic
        while not self.pending and (self.pos == 0 or self.s[self.pos - 1] == "\n"):
            line = PLAIN_LINE.match(self.s, self.pos)
            if not line or line.end() == self.pos or ("[" in line.group() and ANY_SUBSCRIPTED.search(line.group())):
                break
            self.pos = line.end()
            count += 1
        return count

    def program(self) -> None:
        self.compound_list(lambda tok: False)  # up to the end of the text, or a token out of place
        tok = self.peek()
        if tok.kind != EOF:
            raise self.unexpected(tok)

    def compound_list(self, stops) -> int:
        """Commands up to a token ``stops`` accepts at a command start; returns how many."""
        count = 0
        while True:
            tok = self.skip_newlines()
            lines = self.plain_lines()
            if lines:
                count += lines
                continue
            if stops(tok) or tok.kind == EOF:
                return count
            self.and_or()
            count += 1
            tok = self.peek()
            if tok.kind not in (";", "&", NEWLINE):
                return count
            self.take(tok)

    def rewrite_final_continuation(self) -> None:
        """A '\\' that only blanks follow to the end of the file continues onto nothing (bash is fine
        with it); tree-sitter wants a next line, so for it the '\\' is a blank."""
        end = len(self.s.rstrip(" \t\n"))
        if end and self.s[end - 1] == "\\" and _continued(self.s[:end]):
            self.rewrites.append((end - 1, end, " "))

    def rewrite_missing_separator(self, closer: _Token) -> None:
        """``{ ...; } fi``: bash reads the word after a closing '}', 'done', 'fi', 'esac' or ')' as a
        command start; tree-sitter wants a ';' there, and gets it in place of the blank before."""
        before = self.s[: closer.start].rstrip(" \t")
        if len(before) < closer.start and before and before[-1] not in ";&|\n":
            self.rewrites.append((closer.start - 1, closer.start, ";"))

    def body(self, after: _Token, stops) -> _Token:
        """A compound list that must hold a command (after the keyword ``after``), then its closing word."""
        if not self.compound_list(stops):
            tok = self.peek(CMD)
            if tok.kind == EOF:
                raise self.unexpected_eof()
            shown = after.text or after.kind
            message = f"syntax error near unexpected token '{self.shown(tok)}': no command after '{shown}'"
            raise _Error(tok.start, f"{message} (line {self.line(after.start)})", tok.end)
        tok = self.peek(CMD)
        if not stops(tok):
            raise self.unexpected(tok)
        self.rewrite_missing_separator(tok)
        return tok

    def and_or(self) -> None:
        self.pipeline()
        tok = self.peek()
        while tok.kind in ("&&", "||"):
            self.take(tok)
            self.command_after(tok)
            self.pipeline()
            tok = self.peek()

    def command_after(self, op: _Token) -> None:
        """After '|', '&&' or '||' (and newlines) a command must follow."""
        tok = self.skip_newlines()
        if tok.kind == EOF or (tok.kind != WORD and tok.kind not in REDIRECTS and tok.kind not in (ARITH, "(")):
            raise self.unexpected(tok, f"no command after '{op.kind}' (line {self.line(op.start)})")

    def pipeline(self) -> None:
        tok = self.peek(CMD)
        while tok.is_word("!", "time"):
            self.take(tok)
            if tok.text == "time":
                option = self.peek(CMD)
                if option.is_word("-p"):
                    self.take(option)
            tok = self.peek(CMD)
            if tok.kind in (";", NEWLINE, EOF, "&"):
                return  # 'time' or '!' alone
        self.command()
        tok = self.peek()
        while tok.kind in ("|", "|&"):
            self.take(tok)
            self.command_after(tok)
            if self.peek(CMD).is_word("!"):
                raise self.unexpected(self.peek(CMD))  # '!' only starts a pipeline
            self.command()
            tok = self.peek()

    def command(self) -> None:
        tok = self.peek(CMD)
        if tok.kind == ARITH:
            self.take(tok)
        elif tok.kind == "(":
            self.subshell(tok)
        elif tok.kind == WORD and tok.text in COMPOUND_STARTS:
            self.compound(tok)
        elif tok.kind == WORD and tok.text == "function":
            self.function_keyword(tok)
        elif tok.kind == WORD and tok.text == "coproc":
            self.coproc(tok)
        elif tok.kind == WORD and tok.text in NOT_A_COMMAND:
            raise self.unexpected(tok)
        elif tok.kind == WORD or tok.kind in REDIRECTS:
            self.simple_command()
            return
        else:
            raise self.unexpected(tok)
        self.redirections()

    def compound(self, tok: _Token) -> None:
        kind = tok.text
        if kind == "{":
            self.group(tok)
        elif kind == "if":
            self.if_command(tok)
        elif kind in ("while", "until"):
            self.while_command(tok)
        elif kind in ("for", "select"):
            self.for_command(tok)
        elif kind == "case":
            self.case_command(tok)
        else:
            self.cond_command(tok)

    def is_compound_start(self, tok: _Token) -> bool:
        return tok.kind in (ARITH, "(") or (tok.kind == WORD and tok.text in COMPOUND_STARTS)

    def redirections(self) -> None:
        tok = self.peek()
        while tok.kind in REDIRECTS:
            self.take(tok)
            self.redirect_target(tok)
            tok = self.peek()

    def redirect_target(self, op: _Token) -> None:
        # after '>&' a number is the target ('2>&1>/dev/null'); after '>' it would be the next descriptor
        target = self.peek(TARGET if op.kind in ("<&", ">&") else ARG)
        if target.kind != WORD:
            placeholder = self.placeholder_before(op)
            if placeholder:
                hint = f"'{placeholder}' is a placeholder to fill in: bash reads its '<' and '>' as redirections"
            else:
                hint = f"'{op.kind}' needs a file name or descriptor after it"
            raise self.unexpected(target, hint)
        self.take(target)
        if op.kind in ("<<", "<<-"):
            self.heredoc(target, op.kind == "<<-")

    def placeholder_before(self, op: _Token) -> str:
        """``<master_ip_address>`` when ``op`` is the '>' that closes such a placeholder (templates
        shipped to be edited: ``MASTER_ADDR=<master_ip_address>``), else ''."""
        if op.kind != ">":
            return ""
        line_start = self.s.rfind("\n", 0, op.start) + 1
        opening = self.s.rfind("<", line_start, op.start)
        if opening < 0:
            return ""
        text = self.s[opening : op.end]
        return text if PLACEHOLDER.fullmatch(text) else ""

    def simple_command(self) -> None:
        first = self.peek(CMD)
        whole = SIMPLE_COMMAND.match(self.s, self.pos)
        if whole and "[" in whole.group() and ANY_SUBSCRIPTED.search(whole.group()):
            whole = None  # 'a[ 1 ]=x cmd': read word by word
        if whole:
            self.pos = whole.end()
            if first.is_word("["):
                self.rewrites.append((first.start, first.end, ":"))
            return
        if first.kind == WORD and FUNCTION_PARENS.match(self.s, first.end) and not ASSIGNMENT_START.match(first.text):
            self.function_definition(first, self._lex(first.end, ARG))
            return
        mode = CMD
        while True:
            tok = self.peek(mode)
            if tok.kind in REDIRECTS:
                self.take(tok)
                self.redirect_target(tok)
                mode = PREFIX if mode == CMD else mode
                continue
            if tok.kind == "(":
                raise self.unexpected(tok)  # 'echo (', an extglob pattern, 'a= (1)'
            if tok.kind != WORD:
                return
            self.take(tok)
            if mode not in (CMD, PREFIX):
                continue
            if ASSIGNMENT_START.match(tok.text):
                mode = PREFIX  # after an assignment no reserved word is recognized
                continue
            mode = DECL if tok.text in DECLARATION_BUILTINS else ARG
            if tok.text == "[":
                # tree-sitter rejects '[ ]' tests it cannot read as an expression ('[ "$a" \\< "$b" ]');
                # read as a plain command they keep their words
                self.rewrites.append((tok.start, tok.end, ":"))

    def function_definition(self, name: _Token, paren: _Token) -> None:
        self.take(name)
        self.take(paren)
        close = self.peek()
        if close.kind != ")":
            raise self.unexpected(close)
        self.take(close)
        self.function_body()

    def function_keyword(self, keyword: _Token) -> None:
        self.take(keyword)
        name = self.peek()
        if name.kind != WORD:
            raise self.unexpected(name)
        self.take(name)
        paren = self.peek()
        if paren.kind == "(":
            self.take(paren)
            close = self.peek()
            if close.kind != ")":
                raise self.unexpected(close)
            self.take(close)
        self.function_body()

    def function_body(self) -> None:
        tok = self.skip_newlines()
        if not self.is_compound_start(tok):
            raise self.unexpected(tok, "a function body is a compound command, such as '{ ...; }'")
        self.command()

    def coproc(self, keyword: _Token) -> None:
        self.take(keyword)
        tok = self.peek(CMD)
        if tok.kind == WORD and tok.text in NOT_A_COMMAND:
            raise self.unexpected(tok)
        if self.is_compound_start(tok):
            self.command()
            return
        if tok.kind != WORD and tok.kind not in REDIRECTS:
            raise self.unexpected(tok)
        after = self._lex(tok.end, CMD)
        if tok.kind == WORD and self.is_compound_start(after) and not ASSIGNMENT_START.match(tok.text):
            self.take(tok)  # the coprocess's name
            self.command()
            return
        if tok.kind == WORD and after.kind == WORD and after.text in NOT_A_COMMAND:
            raise self.unexpected(after)  # bash reads the word after 'coproc NAME' as a command start
        self.simple_command()

    def subshell(self, tok: _Token) -> None:
        self.take(tok)
        self.enter("(", tok.start)
        close = self.body(tok, lambda t: t.kind == ")")
        self.take(close)
        self.leave()

    def group(self, tok: _Token) -> None:
        self.take(tok)
        self.enter("{", tok.start)
        self.take(self.body(tok, lambda t: t.is_word("}")))
        self.leave()

    def if_command(self, tok: _Token) -> None:
        self.take(tok)
        self.enter("if", tok.start)
        then = self.take(self.body(tok, lambda t: t.is_word("then")))
        while True:
            end = self.take(self.body(then, lambda t: t.is_word("elif", "else", "fi")))
            if end.text == "fi":
                break
            if end.text == "else":
                self.take(self.body(end, lambda t: t.is_word("fi")))
                break
            then = self.take(self.body(end, lambda t: t.is_word("then")))
        self.leave()

    def while_command(self, tok: _Token) -> None:
        self.take(tok)
        self.enter(tok.text, tok.start)
        do = self.take(self.body(tok, lambda t: t.is_word("do")))
        self.take(self.body(do, lambda t: t.is_word("done")))
        self.leave()

    def for_command(self, tok: _Token) -> None:
        self.take(tok)
        self.enter(tok.text, tok.start)
        head = self.peek(CMD if tok.text == "for" else ARG)
        if head.kind == ARITH:
            self.take(head)
            self._check_arith_for(head)
            nxt = self.peek()
            if nxt.kind in (";", NEWLINE):
                self.take(nxt)
        else:
            if head.kind == "(" and self.s.startswith("((", head.start):
                raise _Error(head.start, "syntax error: the '((' after 'for' is not closed by '))'", head.end + 1)
            if head.kind != WORD:
                raise self.unexpected(head)
            self.take(head)
            self.for_words(head)
        tok = self.skip_newlines()
        if tok.is_word("do"):
            self.take(tok)
            self.take(self.body(tok, lambda t: t.is_word("done")))
        elif tok.is_word("{"):
            self.group(tok)
        else:
            raise self.unexpected(tok)
        self.leave()

    def for_words(self, name: _Token) -> None:
        tok = self.peek()
        if tok.kind == ";":
            self.take(tok)
            return
        tok = self.skip_newlines()
        if tok.is_word("do") and self.s[name.end : tok.start].strip(" \t") == "":
            # 'for i do': bash loops over "$@"; tree-sitter wants the ';' bash lets one leave out
            self.rewrites.append((tok.start - 1, tok.start, ";"))
            return
        if not tok.is_word("in"):
            if tok.is_word("do", "{"):
                return
            raise self.unexpected(tok)
        self.take(tok)
        tok = self.peek()
        while tok.kind == WORD:
            self.take(tok)
            tok = self.peek()
        if tok.kind not in (";", NEWLINE):
            raise self.unexpected(tok)
        self.take(tok)

    def _check_arith_for(self, head: _Token) -> None:
        inner = head.text[2:-2]
        if _top_level_semicolons(inner) != 2:
            raise _Error(head.start, "syntax error: 'for (( ... ))' needs three expressions separated by ';'", head.end)

    def case_command(self, tok: _Token) -> None:
        self.take(tok)
        self.enter("case", tok.start)
        word = self.peek()
        if word.kind != WORD:
            raise self.unexpected(word)
        self.take(word)
        self.expect_word_after_newlines("in")
        while True:
            tok = self.skip_newlines()
            if tok.is_word("esac"):
                self.take(tok)
                break
            self.case_item()
            tok = self.peek(CMD)
            if tok.kind in (";;", ";&", ";;&"):
                if tok.kind != ";;":
                    self.rewrites.append((tok.start, tok.end, ";;" + " " * (tok.end - tok.start - 2)))
                self.take(tok)
                continue
            if tok.is_word("esac"):
                self.take(tok)
                break
            raise self.unexpected(tok)
        self.leave()

    def expect_word_after_newlines(self, text: str) -> None:
        tok = self.skip_newlines()
        if not tok.is_word(text):
            raise self.unexpected(tok)
        self.take(tok)

    def case_item(self) -> None:
        tok = self.peek(PATTERN)
        if tok.kind == "(":
            self.take(tok)
            tok = self.peek(PATTERN)
        while True:
            if tok.kind != WORD:
                raise self.unexpected(tok)
            self.take(tok)
            tok = self.peek(PATTERN)
            if tok.kind == ")":
                self.take(tok)
                break
            if tok.kind != "|":
                raise self.unexpected(tok)
            self.take(tok)
            tok = self.peek(PATTERN)
        self.compound_list(lambda t: t.kind in (";;", ";&", ";;&") or t.is_word("esac"))

    # -- [[ ... ]] ------------------------------------------------------------------------
    def cond_command(self, tok: _Token) -> None:
        self.take(tok)
        self.enter("[[", tok.start)
        self.cond_or()
        end = self.peek(COND)
        if not end.is_word("]]"):
            raise self.cond_error(end, "syntax error in conditional expression")
        self.take(end)
        self.leave()
        # tree-sitter cannot read a line continuation inside [[ ]]; a newline there it can
        for continuation in CONTINUATION.finditer(self.s, tok.end, end.start):
            self.rewrites.append((continuation.start(), continuation.start() + 1, " "))

    def cond_error(self, tok: _Token, message: str) -> _Error:
        if tok.kind == EOF:
            return self.unexpected_eof()
        return _Error(tok.start, f"{message}: unexpected token '{self.shown(tok)}' in '[[ ]]'", tok.end)

    def cond_skip_newlines(self) -> _Token:
        tok = self.peek(COND)
        while tok.kind == NEWLINE:
            self.take(tok)
            tok = self.peek(COND)
        return tok

    def cond_or(self) -> None:
        self.cond_and()
        while self.peek(COND).kind == "||":
            self.take(self.peek(COND))
            self.cond_and()

    def cond_and(self) -> None:
        self.cond_term()
        while self.peek(COND).kind == "&&":
            self.take(self.peek(COND))
            self.cond_term()

    def cond_term(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _TooDeep
        tok = self.cond_skip_newlines()
        if tok.kind == "(":
            self.take(tok)
            self.cond_or()
            close = self.peek(COND)
            if close.kind != ")":
                raise self.cond_error(close, "expected ')'")
            self.take(close)
            self.cond_skip_newlines()
        elif tok.is_word("!"):
            self.take(tok)
            self.cond_term()
        elif tok.kind == WORD and tok.text != "]]" and tok.text in COND_UNARY:
            self.take(tok)
            arg = self.peek(COND)
            if arg.kind != WORD or arg.text == "]]":
                raise self.cond_error(arg, "argument expected after a conditional unary operator")
            self.take(arg)
            self.cond_skip_newlines()
        elif tok.kind == WORD and tok.text != "]]":
            self.take(tok)
            self.cond_binary()
        else:
            raise self.cond_error(tok, "syntax error in conditional expression")
        self.depth -= 1

    def cond_binary(self) -> None:
        op = self.peek(COND)
        if op.kind in ("&&", "||", ")") or op.is_word("]]"):
            return  # [[ word ]]
        if op.kind not in ("<", ">") and (op.kind != WORD or op.text not in COND_BINARY):
            raise self.cond_error(op, "conditional binary operator expected")
        self.take(op)
        mode = COND_REGEX if op.text == "=~" else COND_EXTGLOB if op.text in EXTGLOB_BINARY else COND
        right = self.peek(mode)
        if right.kind != WORD or right.text == "]]":
            raise self.cond_error(right, "argument expected after a conditional binary operator")
        self.take(right)
        self.cond_skip_newlines()


def _quote_removed(word: str) -> str:
    out: list[str] = []
    i, n = 0, len(word)
    quote = ""
    while i < n:
        c = word[i]
        if quote == "'":
            if c == "'":
                quote = ""
            else:
                out.append(c)
        elif c == "\\" and i + 1 < n and (not quote or word[i + 1] in '$`"\\\n'):
            out.append(word[i + 1])
            i += 1
        elif quote == '"':
            if c == '"':
                quote = ""
            else:
                out.append(c)
        elif c in "'\"":
            quote = c
        elif c == "$" and i + 1 < n and word[i + 1] in "'\"":
            pass  # $'..' and $".." lose the '$' too
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _continued(line: str) -> bool:
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1


def _top_level_semicolons(expr: str) -> int:
    depth = count = 0
    for c in expr:
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == ";" and depth == 0:
            count += 1
    return count
