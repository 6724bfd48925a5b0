"""Splits a multi-line bash command into top-level commands, as SWE-ReX does with bashlex.

SWE-ReX joins the top-level commands with " ; " so a multi-line command yields exactly one prompt
(swerex-protocol.md §6.2 step 2). bashlex is not in the standard library, so this is a small lexer that
reproduces its observable behaviour for the constructs agents send:

- newlines at top level separate commands; newlines inside quotes, substitutions, compound commands
  (if/for/while/until/case/{ }/( )), after `&&`, `||`, `|` and backslash-newline do not;
- a heredoc (unquoted delimiter) stays with its command, body included;
- comments and blank lines are dropped; a trailing `;` or `&` stays on its command (so `a &` + newline + `b`
  becomes `a & ; b`, which bash rejects: a documented quirk of the reference);
- constructs bashlex cannot parse raise `Unsupported` so the caller uses the fallback terminator:
  `[[ ]]`, `(( ))`, `for ((`, `select`, `coproc`, `time`, array assignments `A=(...)` and heredocs with a
  quoted delimiter (`<<'EOF'`).
"""

_META = " \t\n;&|()<>"
_OPENERS = {"if": "fi", "for": "done", "while": "done", "until": "done", "case": "esac", "{": "}"}
_CLOSERS = {"fi", "done", "esac", "}"}
_KEEP_CMD_POS = {"then", "do", "else", "elif", "!", "in"}
_UNSUPPORTED_WORDS = {"[[", "select", "coproc", "time"}
_CONTINUATION_OPS = {"&&", "||", "|", "|&"}
_OPERATORS = ["<<<", "<<-", ";;&", "&>>", "<<", ">>", "&&", "||", ";;", ";&", "|&", "<&", ">&", "<>", ">|", "&>", ";", "&", "|", "(", ")", "<", ">"]


class Unsupported(Exception):
    pass


class _Token(object):
    __slots__ = ("kind", "value", "start", "end", "heredoc_end")

    def __init__(self, kind, value, start, end):
        self.kind, self.value, self.start, self.end, self.heredoc_end = kind, value, start, end, -1


class _Lexer(object):
    def __init__(self, text):
        self.s = text
        self.i = 0
        self.tokens = []
        self.pending_heredocs = []  # (delimiter, strip_tabs)

    def run(self):
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c in " \t":
                self.i += 1
            elif c == "\\" and s.startswith("\\\n", self.i):
                self.i += 2
            elif c == "#":
                while self.i < len(s) and s[self.i] != "\n":
                    self.i += 1
            elif c == "\n":
                tok = _Token("newline", "\n", self.i, self.i + 1)
                self.i += 1
                if self.pending_heredocs:
                    tok.heredoc_end = self._read_heredoc_bodies()
                self.tokens.append(tok)
            elif c in ";&|()<>" and not self._is_process_substitution():
                self._read_operator()
            else:
                start = self.i
                self._read_word()
                self.tokens.append(_Token("word", s[start:self.i], start, self.i))
        if self.pending_heredocs:
            raise Unsupported("heredoc without body")
        return self.tokens

    def _is_process_substitution(self):
        return self.s[self.i] in "<>" and self.s.startswith("(", self.i + 1)

    def _read_operator(self):
        s = self.s
        for op in _OPERATORS:
            if s.startswith(op, self.i):
                tok = _Token("op", op, self.i, self.i + len(op))
                self.i += len(op)
                self.tokens.append(tok)
                if op in ("<<", "<<-"):
                    self._read_heredoc_delimiter(strip_tabs=(op == "<<-"))
                return

    def _read_heredoc_delimiter(self, strip_tabs):
        s = self.s
        while self.i < len(s) and s[self.i] in " \t":
            self.i += 1
        start = self.i
        self._read_word()
        word = s[start:self.i]
        if not word:
            raise Unsupported("heredoc without delimiter")
        if any(q in word for q in "'\"\\"):
            raise Unsupported("quoted heredoc delimiter")
        self.tokens.append(_Token("word", word, start, self.i))
        self.pending_heredocs.append((word, strip_tabs))

    def _read_heredoc_bodies(self):
        """Consumes heredoc bodies after a newline; returns the end offset of the last delimiter line."""
        s = self.s
        end = -1
        for delimiter, strip_tabs in self.pending_heredocs:
            while True:
                if self.i >= len(s):
                    raise Unsupported("unterminated heredoc")
                nl = s.find("\n", self.i)
                line_end = len(s) if nl < 0 else nl
                line = s[self.i:line_end]
                self.i = line_end + 1 if nl >= 0 else line_end
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    end = line_end
                    break
        self.pending_heredocs = []
        return end

    def _read_word(self):
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c in _META:
                if c in "<>" and self._is_process_substitution():
                    self.i += 1
                    self._skip_group("(", ")")
                    continue
                return
            if c == "\\":
                self.i += 2
            elif c == "'":
                self._skip_single_quote()
            elif c == '"':
                self._skip_double_quote()
            elif c == "`":
                self._skip_backtick()
            elif c == "$" and s.startswith("$'", self.i):
                self.i += 1
                self._skip_ansi_quote()
            elif c == "$" and s.startswith("$(", self.i):
                self.i += 1
                self._skip_group("(", ")")
            elif c == "$" and s.startswith("${", self.i):
                self.i += 1
                self._skip_group("{", "}")
            else:
                self.i += 1

    def _skip_single_quote(self):
        end = self.s.find("'", self.i + 1)
        self.i = len(self.s) if end < 0 else end + 1

    def _skip_ansi_quote(self):
        s = self.s
        self.i += 1
        while self.i < len(s) and s[self.i] != "'":
            self.i += 2 if s[self.i] == "\\" else 1
        self.i += 1

    def _skip_double_quote(self):
        s = self.s
        self.i += 1
        while self.i < len(s):
            c = s[self.i]
            if c == "\\":
                self.i += 2
            elif c == '"':
                self.i += 1
                return
            elif c == "`":
                self._skip_backtick()
            elif c == "$" and s.startswith("$(", self.i):
                self.i += 1
                self._skip_group("(", ")")
            elif c == "$" and s.startswith("${", self.i):
                self.i += 1
                self._skip_group("{", "}")
            else:
                self.i += 1

    def _skip_backtick(self):
        s = self.s
        self.i += 1
        while self.i < len(s) and s[self.i] != "`":
            self.i += 2 if s[self.i] == "\\" else 1
        self.i += 1

    def _skip_group(self, open_, close):
        """Skips a balanced `(...)` or `{...}` starting at self.i, honouring quotes inside."""
        s = self.s
        depth = 0
        while self.i < len(s):
            c = s[self.i]
            if c == "\\":
                self.i += 2
                continue
            if c == "'":
                self._skip_single_quote()
                continue
            if c == '"':
                self._skip_double_quote()
                continue
            if c == "`":
                self._skip_backtick()
                continue
            if c == "#" and open_ == "(" and (self.i == 0 or s[self.i - 1] in " \t\n;"):
                while self.i < len(s) and s[self.i] != "\n":
                    self.i += 1
                continue
            self.i += 1
            if c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    return


def _is_assignment_prefix(word):
    name = word[:-2] if word.endswith("+=") else word[:-1] if word.endswith("=") else None
    return bool(name) and (name[0].isalpha() or name[0] == "_") and all(ch.isalnum() or ch == "_" for ch in name)


def split_bash_command(text):
    """Returns the top-level commands of `text` (possibly empty). Raises Unsupported for the fallback path."""
    text = text.strip()
    if not text or all(line.strip().startswith("#") for line in text.splitlines()):
        return []
    tokens = _Lexer(text).run()
    items = []
    stack = []
    cmd_pos = True
    start = None
    end = None
    prev = None  # previous significant token
    for idx, tok in enumerate(tokens):
        if tok.kind == "newline":
            if tok.heredoc_end >= 0 and start is not None:
                end = max(end, tok.heredoc_end)
            continuation = prev is not None and prev.kind == "op" and prev.value in _CONTINUATION_OPS
            if not stack and not continuation and start is not None:
                items.append(text[start:end])
                start = end = None
                prev = None
            cmd_pos = True
            continue
        if start is None:
            start = tok.start
        end = max(end if end is not None else tok.end, tok.end)
        nxt = tokens[idx + 1] if idx + 1 < len(tokens) else None
        if tok.kind == "word":
            word = tok.value
            if prev is not None and prev.kind == "op" and prev.value in ("<", ">", ">>", "<<", "<<-", "<<<", "<&", ">&", "<>", ">|", "&>", "&>>"):
                pass  # redirection target: does not change command position
            elif cmd_pos:
                if word in _UNSUPPORTED_WORDS or word.startswith("(("):
                    raise Unsupported(word)
                if _is_assignment_prefix(word) and nxt is not None and nxt.kind == "op" and nxt.value == "(" and nxt.start == tok.end:
                    raise Unsupported("array assignment")
                if word in _OPENERS:
                    if word == "for" and nxt is not None and nxt.kind == "op" and nxt.value == "(":
                        raise Unsupported("arithmetic for")
                    stack.append(_OPENERS[word])
                    cmd_pos = word == "{"
                elif word in _CLOSERS:
                    if stack and stack[-1] == word:
                        stack.pop()
                    cmd_pos = False
                elif word in _KEEP_CMD_POS:
                    cmd_pos = True
                elif "=" in word and _is_assignment_prefix(word[: word.index("=") + 1]):
                    cmd_pos = True  # `A=1 cmd`: the command word still follows
                else:
                    cmd_pos = False
            elif word in ("do", "in") and stack and stack[-1] in ("done", "esac"):
                cmd_pos = True
        else:
            op = tok.value
            if op == "(":
                if cmd_pos and nxt is not None and nxt.kind == "op" and nxt.value == "(" and nxt.start == tok.end:
                    raise Unsupported("arithmetic command")
                if cmd_pos:
                    stack.append(")")
                cmd_pos = True
            elif op == ")":
                if stack and stack[-1] == ")":
                    stack.pop()
                cmd_pos = True
            elif op in (";", "&", "&&", "||", "|", "|&", ";;", ";&", ";;&"):
                cmd_pos = True
        prev = tok
    if start is not None:
        items.append(text[start:end])
    return items
