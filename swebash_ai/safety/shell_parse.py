"""The shell parser of the command policy: bash text to simple commands, words and the features it cannot check.

Contract:
    :func:`parse` returns a :class:`ParsedCommand` (the simple commands with their words after quote removal,
    the pipelines, the input and output redirect targets, and ``problems``: every shell feature outside the
    checked set, each a reason the command asks) or ``None`` on a syntax error.  It never runs anything.

Why:
    The policy must judge the words bash will run, so this walker reads tree-sitter-bash's tree the way bash
    reads the text, and says so wherever the two differ: ``[ a > b ]`` is a redirection for bash and a
    comparison for the parser, ``$"x"`` drops its ``$``, a word the parser ends early is one word for bash
    (:func:`~swebash_ai.safety.shell_words.join_touching`).  Kept apart from
    :mod:`swebash_ai.safety.commands` (which judges what was parsed) so each stays readable.

    Compound commands are walked, not refused, in the forms the policy proves: ``if``/``while``/``case`` as
    the statements they hold, ``for`` as a :class:`Binding` whose ``$NAME`` the policy substitutes per value,
    quoted here-documents and integer arithmetic (:mod:`~swebash_ai.safety.shell_literals`).

Pure: standard library, tree_sitter and tree_sitter_bash (imported on first use: the grammar costs time).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Any

from swebash_ai.safety.shell_literals import PLACEHOLDER, arith_problem, heredoc_problem, unescape_double_quoted
from swebash_ai.safety.shell_words import Word, join_touching

__all__ = ["CONTROL_RE", "Binding", "ParsedCommand", "SimpleCommand", "Word", "parse", "ref_text"]

_parser: Any = None


def _get_parser() -> Any:
    """The tree-sitter bash parser, created on first use (importing the grammar costs time)."""
    global _parser
    if _parser is None:
        import tree_sitter
        import tree_sitter_bash

        _parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
    return _parser


@dataclass(frozen=True)
class Binding:
    """The word list of ``for NAME in WORDS``: literal words or globs; ``integers``: only integer literals."""

    name: str
    words: tuple[Word, ...]
    integers: bool


def ref_text(index: int) -> str:
    """Where a ``for`` variable stands in a word's text (a NUL never reaches the parser: such commands deny)."""
    return f"\x00{index}\x00"


@dataclass
class SimpleCommand:
    """One simple command: its words (program first); ``nested``: found inside ``$(...)``, a subshell..."""

    words: list[Word]
    nested: bool = False
    in_loop: bool = False  # inside a for/while body: it may run many times, so `cd` there cannot be followed

    @property
    def argv(self) -> list[str]:
        return [w.text for w in self.words]


@dataclass
class ParsedCommand:
    """What the parser found: simple commands, pipelines (indexes), and features it cannot check."""

    commands: list[SimpleCommand] = field(default_factory=list)
    pipelines: list[list[int]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    file_targets: list[tuple[Word, str]] = field(default_factory=list)
    plain: bool = True
    bindings: list[Binding] = field(default_factory=list)


_LOOP_NAME = re.compile(r"[a-z_][a-z0-9_]*")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_INT_RANGE = re.compile(r"\{(-?[0-9]+)\.\.(-?[0-9]+)\}")
_MAX_RANGE = 1000
_SEQ = re.compile(r"\$\(\s*seq\s+(-?[0-9]+)(?:\s+(-?[0-9]+))?(?:\s+(-?[0-9]+))?\s*\)")
_VAR_REF = re.compile(r"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})")
CONTROL_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f]")  # everything but tab and newline
_SINKS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})  # harmless redirect targets
_SEPARATORS = frozenset({";", "&&", "||", "|", "|&", "\n"})
_SHELL_OPERATORS = frozenset({"&&", "||", "|", "|&", "&", ";", ";;", "&;"})  # end a command wherever they stand
_COMPOUND: dict[str, str] = {
    "subshell": "runs a subshell ( ... )",
    "compound_statement": "uses a command group { ...; }",
    "function_definition": "defines a shell function",
    "if_statement": "uses an if statement",
    "while_statement": "uses a loop",
    "for_statement": "uses a loop",
    "c_style_for_statement": "uses a loop",
    "case_statement": "uses a case statement",
    "declaration_command": "declares shell variables (declare/export/local/readonly)",
    "unset_command": "unsets shell variables",
    "variable_assignment": "assigns a shell variable",
}
_WORD_PROBLEMS: dict[str, str] = {
    "simple_expansion": "expands a variable ({t}): cannot check its value",
    "expansion": "expands a variable ({t}): cannot check its value",
    "process_substitution": "uses process substitution {t}: cannot check what it runs",
    "arithmetic_expansion": "uses arithmetic expansion $((...)): it can run commands",
    "ansi_c_string": "uses $'...' quoting ({t}): cannot check the decoded text",
    "translated_string": 'uses $"..." quoting: cannot check it',
    "brace_expression": "uses brace expansion ({t})",
}


class _Walker:
    def __init__(self, src: bytes) -> None:
        self.out = ParsedCommand()
        self.nested = 0
        self.src = src
        self.scopes: list[dict[str, int]] = []  # for variables in scope, innermost last: name -> binding index
        self.loop_depth = 0

    def problem(self, text: str) -> None:
        self.out.plain = False
        if text not in self.out.problems:
            self.out.problems.append(text)

    # statements -----------------------------------------------------------------------------------

    def stmt(self, node: Any, pipeline: list[int] | None) -> None:
        t = node.type
        if t in ("program", "list"):
            for c in node.children:
                if c.is_named:
                    self.stmt(c, None)
                elif c.type == "&":
                    self.problem("runs a command in the background (&): it keeps running unchecked")
                elif c.type not in _SEPARATORS:
                    self.problem(f"uses the shell operator {c.type!r}")
            if t == "list":
                self.out.plain = False
        elif t == "pipeline":
            self.out.plain = False
            own: list[int] = []
            for c in node.named_children:
                self.stmt(c, own)
            self.out.pipelines.append(own)
        elif t == "redirected_statement":
            for c in node.named_children:
                if c.type.endswith("redirect"):
                    self.redirect(c)
                else:
                    self.stmt(c, pipeline)
        elif t == "command":
            self.command(node, pipeline)
        elif t == "negated_command":
            self.out.plain = False
            for c in node.named_children:
                self.stmt(c, pipeline)
        elif t == "test_command":
            self.test_command(node)
        elif t == "comment":
            self.out.plain = False
        elif t in ("if_statement", "elif_clause", "else_clause", "while_statement", "do_group"):
            self.compound(node, loop=t == "while_statement")
        elif t == "for_statement":
            self.for_loop(node)
        elif t == "case_statement":
            self.case(node)
        else:
            text = node.text.decode(errors="replace")
            snippet = text[:40]
            what = _COMPOUND.get(t, f"uses shell syntax '{t}'")
            if t == "compound_statement" and text.startswith("((") and text.endswith("))"):
                why = arith_problem(text[2:-2], self.integer_var)
                self.out.plain = False
                if why is None:
                    return
                what = f"evaluates an arithmetic command (( ... )), which can run commands: {why}"
            self.problem(what + f" ({snippet}): cannot check it")
            self.inner(node)

    # compound statements whose parts are judged one by one ---------------------------------------

    def compound(self, node: Any, loop: bool = False) -> None:
        """``if``/``elif``/``else``/``while``/``until`` and loop bodies: every condition and body is a statement."""
        self.out.plain = False
        self.loop_depth += loop
        for c in node.named_children:
            self.stmt(c, None)
        self.loop_depth -= loop

    def integer_var(self, name: str) -> bool:
        """A ``for`` variable in scope whose every value is an integer literal (safe in arithmetic)."""
        for scope in reversed(self.scopes):
            if name in scope:
                return self.out.bindings[scope[name]].integers
        return False

    def bound(self, name: str) -> int | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def for_loop(self, node: Any) -> None:
        """``for NAME in WORDS; do BODY; done``: WORDS literal or globs; BODY judged once per value (by the policy).

        The name must be a plain lower-case name no enclosing loop binds: bash does not scope loop variables,
        so an inner loop would leave its last value in the outer one (``for i in 1; do for i in 'a[$(id)]';
        do :; done; echo $((i)); done``), and upper-case names reach the environment (``for PATH in ...``).
        """
        self.out.plain = False
        name_node = node.child_by_field_name("variable")
        name = name_node.text.decode(errors="replace") if name_node is not None else ""
        kinds = [c.type for c in node.children]
        body = [c for c in node.named_children if c.type == "do_group"]
        if kinds[0] != "for":  # the parser reads `select` (a menu answered on stdin) as a for loop
            self.problem(f"uses select ({name}): its variable is chosen by input, which cannot be checked")
        elif "in" not in kinds:
            self.problem(f"for {name} without `in WORDS` iterates over the script's arguments: cannot check them")
        elif not _LOOP_NAME.fullmatch(name) or name.endswith("_proxy") or self.bound(name) is not None:
            self.problem(f"for {name}: only a lower-case loop variable that no enclosing loop uses is checked")
        words: list[Word] = []
        for c in node.named_children:
            if c == name_node or c.type in ("do_group", "comment"):
                continue
            words += self.loop_words(c)
        integers = all(not w.glob and _INTEGER.fullmatch(w.text) for w in words)
        self.out.bindings.append(Binding(name, tuple(words), integers))
        self.scopes.append({name: len(self.out.bindings) - 1})
        self.loop_depth += 1
        for b in body:
            self.stmt(b, None)
        self.loop_depth -= 1
        self.scopes.pop()

    def loop_words(self, node: Any) -> list[Word]:
        """One word of a ``for`` list: a literal, a glob bash expands to file names, or ``{1..5}``."""
        raw = node.text.decode(errors="replace")
        m = _INT_RANGE.fullmatch(raw) if node.type == "brace_expression" else None
        if m is not None:
            a, b = int(m.group(1)), int(m.group(2))
            if abs(b - a) < _MAX_RANGE:
                step = 1 if b >= a else -1
                return [Word(str(n), str(n)) for n in range(a, b + step, step)]
        m = _SEQ.fullmatch(raw) if node.type == "command_substitution" else None
        if m is not None:  # $(seq LAST), $(seq FIRST LAST), $(seq FIRST STEP LAST): integers, one per line
            nums = [int(g) for g in m.groups() if g is not None]
            first, step, last = (1, 1, nums[0]) if len(nums) == 1 else (nums[0], 1, nums[1]) if len(nums) == 2 else nums
            if step != 0 and 0 <= (last - first) // step < _MAX_RANGE:
                return [Word(str(n), str(n)) for n in range(first, last + (1 if step > 0 else -1), step)]
        w = self.word(node)
        if w.refs or w.arith:
            self.problem(f"the for list expands a variable or arithmetic ({raw}): cannot check its values")
        elif w.tilde:
            self.problem(f"the for list expands a home directory ({raw}): cannot check its values")
        elif w.glob and ("[:" in w.text or "[=" in w.text or "[." in w.text):
            self.problem(f"the for list {raw} uses a character class ([[:alpha:]]...): cannot check its values")
        elif w.glob and any(p.startswith((".", "[")) and any(ch in p for ch in "*?[") for p in w.text.split("/")):
            self.problem(f"the for list {raw} may match dot entries (., .., hidden files): cannot check its values")
        return [w]

    def case(self, node: Any) -> None:
        """``case WORD in PATTERN) BODY;; esac``: WORD proven like a command word, patterns without expansions."""
        self.out.plain = False
        seen_in = False
        for c in node.children:
            if c.type == "in":
                seen_in = True
            elif c.type == "case_item":
                self.case_item(c)
            elif c.is_named and not seen_in:
                self.word(c)  # registers every expansion the subject holds (`case $(id) in` asks)
            elif c.is_named and c.type != "comment":
                self.stmt(c, None)

    def case_item(self, node: Any) -> None:
        patterns = True
        for c in node.children:
            if c.type == ")":
                patterns = False
            elif patterns and c.is_named:
                raw = c.text.decode(errors="replace")
                if "$" in raw or "`" in raw:
                    self.problem(f"the case pattern {raw!r} expands something: cannot check it")
                    self.inner(c)
            elif not patterns and c.is_named:
                self.stmt(c, None)

    def inner(self, node: Any) -> None:
        """Collect the commands hidden inside a construct we do not accept (for their dangers)."""
        self.nested += 1
        for c in node.named_children:
            if c.type in ("command", "pipeline", "list", "redirected_statement", "subshell"):
                self.stmt(c, None)
            else:
                self.inner(c)
        self.nested -= 1

    def command(self, node: Any, pipeline: list[int] | None) -> None:
        items: list[tuple[Any, Word]] = []
        for c in node.children:
            if not c.is_named:  # a bare "$" the shell prints literally: keep it, so argv stays exact
                items.append((c, self.word(c)))
            elif c.type == "variable_assignment":
                self.problem(f"sets a variable for the command ({c.text.decode(errors='replace')})")
                self.inner(c)
            elif c.type == "command_name":
                items += [(n, self.word(n)) for n in c.named_children]
            elif c.type.endswith("redirect"):
                self.redirect(c)
            else:
                items.append((c, self.word(c)))
        self._translated(items)
        words = join_touching(items)
        if not words:
            return
        self.out.commands.append(SimpleCommand(words, nested=self.nested > 0, in_loop=self.loop_depth > 0))
        if pipeline is not None:
            pipeline.append(len(self.out.commands) - 1)

    def test_command(self, node: Any) -> None:
        """``[ ... ]`` and ``[[ ... ]]`` as a command named ``[`` or ``[[`` whose words keep their operators."""
        name = "[[" if node.text.startswith(b"[[") else "["
        items: list[tuple[Any, Word]] = []

        def walk(n: Any) -> None:
            if name == "[" and n.type == "binary_expression":
                self._bracket_operator(n)
            for c in n.children:
                if c.type in ("unary_expression", "binary_expression", "parenthesized_expression"):
                    walk(c)
                elif not c.is_named or c.type == "test_operator":
                    text = c.text.decode(errors="replace")
                    if text not in ("[", "[[", "]", "]]"):
                        items.append((c, Word(text, text)))
                elif c.type == "regex":
                    text = c.text.decode(errors="replace")
                    if "$" in text or "`" in text:
                        self.problem(f"uses an expansion in the pattern {text!r}: cannot check it")
                    items.append((c, Word(text, text, literal="$" not in text and "`" not in text)))
                else:
                    items.append((c, self.word(c)))

        walk(node)
        self._translated(items)
        words = [Word(name, name), *join_touching(items), Word("]]" if name == "[[" else "]", "]")]
        self.out.commands.append(SimpleCommand(words, nested=self.nested > 0, in_loop=self.loop_depth > 0))
        self.out.plain = False

    def _translated(self, items: list[tuple[Any, Any]]) -> None:
        """``$"..."``: the parser gives a bare ``$`` then a string, bash a translated string without the ``$``.

        Kept as written, the word would be judged as ``$.env`` (refused only because paths never expand
        variables) while bash opens ``.env``; a word whose text differs from what bash runs cannot be judged.
        """
        for (node, _), (nxt, _) in itertools.pairwise(items):
            if node.type == "$" and nxt.type == "string" and nxt.start_byte == node.end_byte:
                self.problem(_WORD_PROBLEMS["translated_string"])

    def _bracket_operator(self, node: Any) -> None:
        """``[ a > b ]``: the parser reads a comparison, bash a redirection that creates ``b``.

        Likewise ``[ a | touch ]`` and ``[ a && touch x ]``: the parser reads operators of the test, bash a
        pipeline or a list that runs ``touch``.

        Only ``[[ ]]`` makes ``<`` and ``>`` string comparisons; in ``[`` (a plain command) they redirect, so
        ``>`` writes its right operand and ``<`` reads it (judged like ``< FILE``).
        """
        op = next((c.text.decode(errors="replace") for c in node.children if not c.is_named), "")
        if op in _SHELL_OPERATORS:
            self.problem(f"[ ... {op} ... ]: in [ ], an unquoted {op} is a shell operator: bash ends the test there "
                         "and runs what follows as a command")
            return
        if op.startswith("<<"):
            self.problem(f"[ ... {op} ... ]: in [ ], an unquoted {op} starts a here-document: cannot check it")
            return
        right = node.child_by_field_name("right")
        if right is None or not ("<" in op or ">" in op):
            return
        dest = self.word(right)
        if ">" in op:
            self.problem(f"[ ... {op} {dest.raw} ]: in [ ], an unquoted {op} is a redirection that writes {dest.raw}")
            self.out.file_targets.append((dest, "write"))
        else:
            self.out.file_targets.append((dest, "read"))

    def redirect(self, node: Any) -> None:
        self.out.plain = False
        text = node.text.decode(errors="replace")
        if node.type == "heredoc_redirect":
            self.heredoc(node)
            return
        if node.type == "herestring_redirect":
            for c in node.named_children:
                w = self.word(c)
                if w.refs or w.arith:
                    self.problem(f"uses a here-string with an expansion ({text}): cannot check it")
            return
        if node.type != "file_redirect":
            self.problem(f"uses the redirection {text[:40]!r}: cannot check it")
            self.inner(node)
            return
        op = next((c.type for c in node.children if not c.is_named), "")
        dests = [c for c in node.named_children if c.type != "file_descriptor"]
        joined = join_touching([(c, self.word(c)) for c in dests])
        dest = joined[-1] if joined else Word("", "")
        if op in (">&", "<&") and (dest.raw.isdigit() or dest.raw == "-"):
            return
        if op in (">", ">>", "&>", "&>>", ">|", ">&") and dest.literal and dest.text in _SINKS:
            return
        if op in ("<", "0<"):  # input from a file: a read, judged like a path the command reads
            if not dest.literal:
                self.problem(f"reads input from a file named by an expansion ({text}): cannot check it")
            self.out.file_targets.append((dest, "read"))
        elif op.startswith("<"):
            self.problem(f"opens a file for reading and writing ({text}): it can change it")
            self.out.file_targets.append((dest, "write"))
        else:
            self.problem(f"redirects output to a file ({text}): writes or overwrites it")
            self.out.file_targets.append((dest, "write"))

    def heredoc(self, node: Any) -> None:
        """``<<'EOF'`` (or ``<<EOF`` whose body holds no ``$`` nor backtick): literal text on standard input.

        The body is data, so what matters is that bash and the parser agree on where it ends: a line bash takes
        as the end but the parser does not would run the rest of the "body" as commands.  So the delimiter must
        be a plain name (quoted or not), the body must start on the line after the ``<<`` and no line of it may
        be the delimiter, and the end line must be exactly the delimiter (after the tabs ``<<-`` strips).  The
        rest of the ``<<`` line (``| grep x``, ``&& ls``) is judged as ordinary statements.
        """
        why, start, end, body = heredoc_problem(node, self.src)
        if why is not None:
            self.problem(f"uses a here-document ({node.text.decode(errors='replace').split(chr(10))[0][:30]}): {why}")
            self.inner(node)
            return
        for c in node.children:
            if c in (start, end, body) or c.type in ("<<", "<<-"):
                continue
            if c.type == "&":
                self.problem("runs a command in the background (&): it keeps running unchecked")
            elif c.type.endswith("redirect"):
                self.redirect(c)
            elif c.is_named:
                self.stmt(c, None)
            elif c.type not in _SEPARATORS:
                self.problem(f"uses the shell operator {c.type!r}")

    # words ----------------------------------------------------------------------------------------

    def word(self, node: Any) -> Word:
        t = node.type
        raw = node.text.decode(errors="replace")
        if t == "word":
            return self._unquoted(raw)
        if t == "number":
            return Word(raw, raw)
        if t == "raw_string":
            return Word(raw[1:-1], raw)
        if t == "string":
            parts: list[str] = []
            literal, arith = True, False
            refs: tuple[int, ...] = ()
            for c in node.children:
                if not c.is_named:
                    continue
                if c.type == "string_content":
                    parts.append(unescape_double_quoted(c.text.decode(errors="replace")))
                    continue
                sub = self.word(c)
                literal = sub.literal and literal
                if sub.refs or sub.arith:  # quoted: bash neither splits nor globs the value
                    parts.append(sub.text)
                    arith, refs = arith or sub.arith, refs + sub.refs
            return Word("".join(parts), raw, literal=literal, refs=refs, arith=arith)
        if t in ("simple_expansion", "expansion"):
            m = _VAR_REF.fullmatch(raw)
            index = self.bound(m.group(1) or m.group(2)) if m else None
            if index is not None:
                return Word(ref_text(index), raw, literal=False, refs=(index,), split=True)
        # After an expansion in a string the parser puts the blanks before `$((` into this node: keep them.
        lead = raw[: raw.find("$((")] if "$((" in raw else "x"
        if t == "arithmetic_expansion" and not lead.strip(" \t") and raw.endswith("))"):
            why = arith_problem(raw[len(lead) + 3 : -2], self.integer_var)
            if why is None:
                self.out.plain = False
                return Word(lead + PLACEHOLDER, raw, arith=True)
            self.problem(f"uses arithmetic expansion $((...)), which can run commands: {why}")
            self.inner(node)
            return Word(raw, raw, literal=False)
        if t == "$":
            return Word("$", "$")
        if t == "concatenation":
            subs = [self.word(c) for c in node.children]
            text = "".join(s.text for s in subs)
            w = Word(
                text,
                raw,
                literal=all(s.literal for s in subs),
                glob=any(s.glob for s in subs),
                tilde=bool(subs) and subs[0].tilde,
                escaped=any(s.escaped for s in subs),
                refs=tuple(r for s in subs for r in s.refs),
                split=any(s.split for s in subs),
                arith=any(s.arith for s in subs),
            )
            if raw != "{}" and any(s.raw.startswith("{") for s in subs) and ("," in raw or ".." in raw):
                self.problem(f"uses brace expansion ({raw})")
                return Word(text, raw, literal=False)
            return w
        if t == "command_substitution":
            kind = "backticks `...`" if raw.startswith("`") else "command substitution $(...)"
            self.problem(f"uses {kind}: cannot check what it runs")
            self.inner(node)
            return Word(raw, raw, literal=False)
        template = _WORD_PROBLEMS.get(t, "uses shell syntax '" + t + "' ({t}): cannot check it")
        msg = template.replace("{t}", raw[:40])
        if t == "expansion" and "@" in raw:
            msg += "; ${var@P} can even run commands"
        self.problem(msg)
        self.inner(node)
        return Word(raw, raw, literal=False)

    def _unquoted(self, raw: str) -> Word:
        out: list[str] = []
        glob = escaped = False
        i = 0
        while i < len(raw):
            c = raw[i]
            if c == "\\":
                escaped = True
                if i + 1 < len(raw) and raw[i + 1] != "\n":
                    out.append(raw[i + 1])
                i += 2
                continue
            if c in "*?[":
                glob = True
            elif c in "$`":
                self.problem(f"uses an expansion in {raw!r}: cannot check it")
                return Word(raw, raw, literal=False)
            out.append(c)
            i += 1
        text = "".join(out)
        tilde = raw.startswith("~")
        if tilde and not (raw == "~" or raw.startswith("~/")):
            self.problem(f"expands another user's home ({raw.split('/')[0]}): cannot check it")
            return Word(text, raw, literal=False)
        return Word(text, raw, glob=glob, tilde=tilde, escaped=escaped)


def parse(command: str) -> ParsedCommand | None:
    """Parse ``command`` as bash; ``None`` when it has a syntax error."""
    tree = _get_parser().parse(command.encode("utf-8", errors="surrogateescape"))
    root = tree.root_node
    if root.has_error:
        return None
    w = _Walker(root.text if root.text is not None else b"")
    w.stmt(root, None)
    if len(w.out.commands) != 1:
        w.out.plain = False
    return w.out
