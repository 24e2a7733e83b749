"""The lexer of the bash syntax check (``bash_syntax``): tokens, words, quotes, expansions and
here-document bodies, each read the way bash's lexer reads it where the parser stands."""

from __future__ import annotations

import re
from dataclasses import dataclass

# what closes each construct, named when one is left open
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
BLANKS = re.compile(r"(?:[ \t]|\\\n|\\\Z)+")
WORD_RUN = re.compile(r"[^ \t\n;&|()<>\"'`$\\]+")
DQUOTE_RUN = re.compile(r"[^\"\\$`]+")
BACKQUOTE_RUN = re.compile(r"[^`\\]+")
PLAIN_BACKQUOTED = re.compile(r"[A-Za-z0-9_ ./+%:=,-]+")
ANSI_RUN = re.compile(r"[^'\\]+")
PAIR_STOP = re.compile(r"[()\\'\"`$]")
BRACE_STOP = re.compile(r"[{}\\'\"`$<>]")
BRACKET_STOP = re.compile(r"[\[\]\\'\"`$<>]")
ASSIGNMENT_START = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=")
SUBSCRIPTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\[")
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


class Error(Exception):
    def __init__(self, offset: int, message: str, end: int | None = None) -> None:
        super().__init__(message)
        self.offset = offset
        self.end = offset + 1 if end is None else end
        self.message = message


class TooDeep(Exception):
    pass


@dataclass(slots=True)
class Token:
    """One token of a bash script."""

    kind: str  # WORD, NEWLINE, EOF, ARITH or the operator itself
    start: int
    end: int
    text: str = ""  # a word's text as written

    def is_word(self, *texts: str) -> bool:
        return self.kind == WORD and self.text in texts


@dataclass(eq=False, repr=False)
class _Heredoc:
    """A here-document whose body starts at the next line."""

    delimiter: str
    strip_tabs: bool
    quoted: bool


class Lexer:
    """The script read token by token; what the grammar (``bash_syntax``) is reading decides what a
    token is, and a ``$( )`` in a word is parsed as commands by the grammar's ``compound_list``."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.n = len(text)
        self.pos = 0
        self.depth = 0
        self.pending: list[_Heredoc] = []
        self.open: list[tuple[str, int]] = []  # constructs being read: (keyword, offset)
        self.rewrites: list[tuple[int, int, str]] = []
        self.lossy_rewrites: list[tuple[int, int, str]] = []
        self._peeked: tuple[int, int, Token] | None = None
        self._comsub_end: dict[int, int] = {}  # one parse per $( ), however often its word is read
        self._paren_end: dict[int, int] = {}  # one scan per '(' of arithmetic, however deep the nesting

    # -- errors ----------------------------------------------------------------------------
    def line(self, offset: int) -> int:
        return self.s.count("\n", 0, offset) + 1

    def shown(self, tok: Token) -> str:
        return "newline" if tok.kind == NEWLINE else (tok.text if tok.kind == WORD else tok.kind)

    def unexpected(self, tok: Token, hint: str = "") -> Error:
        if tok.kind == EOF:
            return self.unexpected_eof(hint)
        message = f"syntax error near unexpected token '{self.shown(tok)}'"
        if hint:
            return Error(tok.start, f"{message}: {hint}", tok.end)
        if tok.kind == "(" and tok.start and self.s[tok.start - 1] in "@!+*?":
            pattern = self.s[tok.start - 1] + "(...)"
            message += f": {pattern} is an extglob pattern, parsed only once 'shopt -s extglob' has run"
            message += " (bash -n runs nothing)"
            return Error(tok.start, message, tok.end)
        if tok.kind == WORD and tok.text in NOTHING_OPEN and not self._is_open(tok.text):
            message += f": {NOTHING_OPEN[tok.text]}"
        if self.open:
            keyword, offset = self.open[-1]
            message += f" ('{keyword}' at line {self.line(offset)} expects '{CLOSER_OF[keyword]}')"
        return Error(tok.start, message, tok.end)

    def unexpected_eof(self, hint: str = "") -> Error:
        """Reported where the script ends (bash names the line after it), with what is left open."""
        end = len(self.s.rstrip())
        if hint:
            return Error(end, f"syntax error: unexpected end of file: {hint}", end)
        if self.open:
            keyword, offset = self.open[-1]
            where = f"'{keyword}' at line {self.line(offset)}"
            message = f"syntax error: unexpected end of file: {where} is never closed by '{CLOSER_OF[keyword]}'"
            return Error(end, message, end)
        return Error(end, "syntax error: unexpected end of file", end)

    def unmatched(self, start: int, closer: str, what: str) -> Error:
        """An unclosed quote or expansion: reported where it opens, as bash does."""
        return Error(start, f"unterminated {what}: no closing {closer} before the end of the file")

    def _is_open(self, closer: str) -> bool:
        return any(CLOSER_OF[k] == closer for k, _ in self.open)

    def enter(self, keyword: str, offset: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise TooDeep
        self.open.append((keyword, offset))

    def leave(self) -> None:
        self.depth -= 1
        self.open.pop()

    # -- tokens ----------------------------------------------------------------------------
    def peek(self, mode: int = ARG) -> Token:
        cached = self._peeked
        if cached is not None and cached[0] == self.pos and cached[1] == mode:
            return cached[2]
        tok = self.lex(self.pos, mode)
        self._peeked = (self.pos, mode, tok)
        return tok

    def take(self, tok: Token) -> Token:
        self.pos = tok.end
        if tok.kind == NEWLINE and self.pending:
            self.pos = self._skip_heredoc_bodies(self.pos)
        return tok

    def skip_newlines(self) -> Token:
        if not self.pending:
            lines = EMPTY_LINES.match(self.s, self.pos)
            if lines:
                self.pos = lines.end()
        tok = self.peek(CMD)
        while tok.kind == NEWLINE:
            self.take(tok)
            tok = self.peek(CMD)
        return tok

    def lex(self, pos: int, mode: int) -> Token:
        s = self.s
        fast = FAST_TOKEN.match(s, pos) if mode != COND_REGEX else None
        if fast and fast.lastindex == 4 and mode in (CMD, PREFIX, DECL, ARRAY) and "[" in fast.group(4):
            fast = None
        if fast:
            group = fast.lastindex
            if group == 2:
                return Token(NEWLINE, fast.start(2), fast.end())
            if group == 3:
                return Token(fast.group(3), fast.start(3), fast.end())
            return Token(WORD, fast.start(4), fast.end(), fast.group(4))
        blanks = BLANKS.match(s, pos)
        if blanks:
            pos = blanks.end()
        if pos >= self.n:
            return Token(EOF, self.n, self.n)
        c = s[pos]
        if c == "#":
            end = s.find("\n", pos)
            pos = self.n if end == -1 else end
            if pos >= self.n:
                return Token(EOF, self.n, self.n)
            c = "\n"
        if c == "\n":
            return Token(NEWLINE, pos, pos + 1)
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
                return Token(s[pos], pos, pos + 1)  # in [[ ]] a comparison, not a redirection
            return Token(op.group(), pos, op.end())
        return self._word(pos, mode)

    def _word(self, pos: int, mode: int) -> Token:
        end = self._scan_word(pos, mode)
        text = self.s[pos:end]
        if "\\\n" in text:
            text = text.replace("\\\n", "")  # 'sele\<newline>ct' is the reserved word 'select'
        if end < self.n and self.s[end] in "<>" and FD_PREFIX.fullmatch(text) and mode < TARGET:
            op = OPERATOR.match(self.s, end)
            if op and op.group() in REDIRECTS:  # '2>&1', '{fd}>file': the number belongs to the operator
                return Token(op.group(), pos, op.end())
        return Token(WORD, pos, end, text)

    def _arith_command(self, pos: int) -> Token | None:
        """``(( ... ))`` at a command start; bash reads two subshells when the parentheses do not
        close as a pair (``((a) || (b))``)."""
        inner_close = self._matched_parens(pos + 1, "'(('")
        if self.s.startswith(")", inner_close + 1):
            self._rewrite_arithmetic(pos + 2, inner_close)
            return Token(ARITH, pos, inner_close + 2, self.s[pos : inner_close + 2])
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
            tok = self.lex(pos, ARRAY)
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
    def heredoc(self, word: Token, strip_tabs: bool) -> None:
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
                while not doc.quoted and continued(line) and next_line < n:
                    more_end = s.find("\n", next_line)
                    line = line[:-1] + s[next_line : n if more_end == -1 else more_end]
                    next_line = n if more_end == -1 else more_end + 1
                pos = next_line
                if (line.lstrip("\t") if doc.strip_tabs else line) == doc.delimiter:
                    break
            # at the end of the file the body just ends: bash only warns
        self.pending = []
        return pos

    def compound_list(self, stops) -> int:
        """Commands up to a token ``stops`` accepts at a command start; the grammar reads them."""
        raise NotImplementedError


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


def continued(line: str) -> bool:
    return (len(line) - len(line.rstrip("\\"))) % 2 == 1
