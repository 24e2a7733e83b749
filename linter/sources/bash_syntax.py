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

from .bash_tokens import (
    ARG,
    ARITH,
    ASSIGNMENT_START,
    CMD,
    COND,
    COND_EXTGLOB,
    COND_REGEX,
    DECL,
    EOF,
    MAX_DEPTH,
    NEWLINE,
    PATTERN,
    PLAIN_LINE,
    PREFIX,
    REDIRECTS,
    SIMPLE_COMMAND,
    TARGET,
    WORD,
    Error,
    Lexer,
    Token,
    TooDeep,
    continued,
)

# reserved words that end or continue a construct: where a command starts, one is an error unless the
# construct it belongs to is open and expects it
NOT_A_COMMAND = frozenset({"then", "else", "elif", "fi", "do", "done", "esac", "}", "in", "]]"})
COMPOUND_STARTS = frozenset({"{", "if", "while", "until", "for", "select", "case", "[["})
DECLARATION_BUILTINS = frozenset({"declare", "typeset", "local", "export", "readonly", "alias"})
COND_UNARY = frozenset("-" + c for c in "abcdefghknoprstuvwxzGLNORS")
COND_BINARY = frozenset(
    {"=", "==", "!=", "=~", "!~", "<", ">", "-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-nt", "-ot", "-ef"}
)
EXTGLOB_BINARY = frozenset({"=", "==", "!="})
FUNCTION_PARENS = re.compile(r"(?:[ \t]|\\\n)*\(")
# a template's placeholder, <master_ip_address> or <your data path>: letters first, no shell syntax
PLACEHOLDER = re.compile(r"<[A-Za-z_][\w .-]*>")
CONTINUATION = re.compile(r"(?<!\\)\\\n")
ANY_SUBSCRIPTED = re.compile(r"(?<![^ \t\n;&|])[A-Za-z_][A-Za-z0-9_]*\[")


@dataclass
class SyntaxProblem:
    """The first syntax error bash would report, with its place."""

    offset: int  # where bash reports it (character offsets)
    end: int
    message: str


@dataclass(eq=False, repr=False)
class Checked:
    """The outcome of checking a script's syntax: its problem and the rewrites tree-sitter needs."""

    problem: SyntaxProblem | None = None
    undecided: bool = False  # nested too deeply to check; nothing is known
    rewrites: list[tuple[int, int, str]] = field(default_factory=list)  # (start, end, same-length text)
    # backquoted commands tree-sitter cannot read, as opaque strings: their commands are lost to it
    lossy_rewrites: list[tuple[int, int, str]] = field(default_factory=list)


def check(text: str) -> Checked:
    parser = _Parser(text)
    try:
        parser.program()
        parser.rewrite_final_continuation()
    except Error as exc:
        end = min(exc.end, len(text))
        problem = SyntaxProblem(exc.offset, end, exc.message)
        return Checked(problem, False, outermost(parser.rewrites), outermost(parser.lossy_rewrites))
    except (TooDeep, RecursionError):
        return Checked(undecided=True)
    return Checked(None, False, outermost(parser.rewrites), outermost(parser.lossy_rewrites))


def outermost(rewrites: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Each rewrite once, in text order; one inside another (an expansion in an expansion) is dropped."""
    out: list[tuple[int, int, str]] = []
    for rewrite in sorted(set(rewrites), key=lambda r: (r[0], -r[1])):
        if not out or rewrite[0] >= out[-1][1]:
            out.append(rewrite)
    return out


class _Parser(Lexer):
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
        if end and self.s[end - 1] == "\\" and continued(self.s[:end]):
            self.rewrites.append((end - 1, end, " "))

    def rewrite_missing_separator(self, closer: Token) -> None:
        """``{ ...; } fi``: bash reads the word after a closing '}', 'done', 'fi', 'esac' or ')' as a
        command start; tree-sitter wants a ';' there, and gets it in place of the blank before."""
        before = self.s[: closer.start].rstrip(" \t")
        if len(before) < closer.start and before and before[-1] not in ";&|\n":
            self.rewrites.append((closer.start - 1, closer.start, ";"))

    def body(self, after: Token, stops) -> Token:
        """A compound list that must hold a command (after the keyword ``after``), then its closing word."""
        if not self.compound_list(stops):
            tok = self.peek(CMD)
            if tok.kind == EOF:
                raise self.unexpected_eof()
            shown = after.text or after.kind
            message = f"syntax error near unexpected token '{self.shown(tok)}': no command after '{shown}'"
            raise Error(tok.start, f"{message} (line {self.line(after.start)})", tok.end)
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

    def command_after(self, op: Token) -> None:
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

    def compound(self, tok: Token) -> None:
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

    def is_compound_start(self, tok: Token) -> bool:
        return tok.kind in (ARITH, "(") or (tok.kind == WORD and tok.text in COMPOUND_STARTS)

    def redirections(self) -> None:
        tok = self.peek()
        while tok.kind in REDIRECTS:
            self.take(tok)
            self.redirect_target(tok)
            tok = self.peek()

    def redirect_target(self, op: Token) -> None:
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

    def placeholder_before(self, op: Token) -> str:
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
            self.function_definition(first, self.lex(first.end, ARG))
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

    def function_definition(self, name: Token, paren: Token) -> None:
        self.take(name)
        self.take(paren)
        close = self.peek()
        if close.kind != ")":
            raise self.unexpected(close)
        self.take(close)
        self.function_body()

    def function_keyword(self, keyword: Token) -> None:
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

    def coproc(self, keyword: Token) -> None:
        self.take(keyword)
        tok = self.peek(CMD)
        if tok.kind == WORD and tok.text in NOT_A_COMMAND:
            raise self.unexpected(tok)
        if self.is_compound_start(tok):
            self.command()
            return
        if tok.kind != WORD and tok.kind not in REDIRECTS:
            raise self.unexpected(tok)
        after = self.lex(tok.end, CMD)
        if tok.kind == WORD and self.is_compound_start(after) and not ASSIGNMENT_START.match(tok.text):
            self.take(tok)  # the coprocess's name
            self.command()
            return
        if tok.kind == WORD and after.kind == WORD and after.text in NOT_A_COMMAND:
            raise self.unexpected(after)  # bash reads the word after 'coproc NAME' as a command start
        self.simple_command()

    def subshell(self, tok: Token) -> None:
        self.take(tok)
        self.enter("(", tok.start)
        close = self.body(tok, lambda t: t.kind == ")")
        self.take(close)
        self.leave()

    def group(self, tok: Token) -> None:
        self.take(tok)
        self.enter("{", tok.start)
        self.take(self.body(tok, lambda t: t.is_word("}")))
        self.leave()

    def if_command(self, tok: Token) -> None:
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

    def while_command(self, tok: Token) -> None:
        self.take(tok)
        self.enter(tok.text, tok.start)
        do = self.take(self.body(tok, lambda t: t.is_word("do")))
        self.take(self.body(do, lambda t: t.is_word("done")))
        self.leave()

    def for_command(self, tok: Token) -> None:
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
                raise Error(head.start, "syntax error: the '((' after 'for' is not closed by '))'", head.end + 1)
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

    def for_words(self, name: Token) -> None:
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

    def _check_arith_for(self, head: Token) -> None:
        inner = head.text[2:-2]
        if _top_level_semicolons(inner) != 2:
            raise Error(head.start, "syntax error: 'for (( ... ))' needs three expressions separated by ';'", head.end)

    def case_command(self, tok: Token) -> None:
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
    def cond_command(self, tok: Token) -> None:
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

    def cond_error(self, tok: Token, message: str) -> Error:
        if tok.kind == EOF:
            return self.unexpected_eof()
        return Error(tok.start, f"{message}: unexpected token '{self.shown(tok)}' in '[[ ]]'", tok.end)

    def cond_skip_newlines(self) -> Token:
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
            raise TooDeep
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
