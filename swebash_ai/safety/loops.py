"""The commands a ``for`` loop body runs: one concrete simple command per value of its variables.

Contract:
    :func:`instances` takes a simple command whose words expand ``for`` variables (:attr:`Word.refs`), the
    parse's :class:`~swebash_ai.safety.shell_parse.Binding` list and a glob expander, and returns either the
    concrete commands bash will run (each word with every value substituted, and the indexes of the words
    that hold a file name a glob produced) or the reason the loop cannot be judged that way.

Why:
    A loop over literal words runs the body once per word: judging the body once per word is exact.  A loop
    over a glob runs it once per file name, and a file name is data someone else chose (a clone can ship a
    file named ``-o``, ``a b`` or ``x[$(id)]``), so the policy checks such values apart (where they land, and
    that no hostile name could make the command evaluate it).  An unquoted ``$f`` is split at blanks and
    globbed again by bash, so a value holding a blank or a glob character asks: the words bash would make of it
    are not the word judged.  The program name never comes from a loop variable.

Pure: standard library only; the caller's expander reads the directory.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from dataclasses import dataclass

from swebash_ai.safety.programs import ProgramCheck, check_allowed
from swebash_ai.safety.shell_literals import PLACEHOLDER
from swebash_ai.safety.shell_parse import Binding, SimpleCommand, Word, ref_text

__all__ = ["MAX_INSTANCES", "MAX_VALUES", "Instance", "instances", "misplaced"]

MAX_VALUES = 200  # values of one loop variable (file names a glob gives, literal words)
MAX_INSTANCES = 400  # concrete commands judged for one simple command (nested loops multiply)
_SPLIT_CHARS = frozenset(" \t\n*?[")
_HOSTILE_NAME = "x[$(id)]"  # a file name bash would run if it evaluated the word as a name or arithmetic


@dataclass(frozen=True)
class Instance:
    """One concrete command a loop body runs; ``produced``: indexes of words holding a glob's file name."""

    command: SimpleCommand
    produced: frozenset[int]


def _values(binding: Binding, expand: Callable[[str], list[str]]) -> list[tuple[str, bool]]:
    """The values bash gives the variable: each literal word, each file a glob matches (or the glob as written)."""
    out: list[tuple[str, bool]] = []
    for w in binding.words:
        matches = sorted(expand(w.text)) if w.glob else []
        out += [(m, True) for m in matches] if matches else [(w.text, False)]
    return out


def instances(
    cmd: SimpleCommand, bindings: list[Binding], expand: Callable[[str], list[str]]
) -> tuple[list[Instance], str | None]:
    """The concrete commands ``cmd`` stands for, or ``([], reason)`` when they cannot be judged one by one."""
    ids = list(dict.fromkeys(r for w in cmd.words for r in w.refs))
    if not ids:
        return [Instance(cmd, frozenset())], None
    if cmd.words[0].refs:
        return [], f"the program name comes from a loop variable ({cmd.words[0].raw}): cannot check what runs"
    values = {i: _values(bindings[i], expand) for i in ids}
    for i, vals in values.items():
        if len(vals) > MAX_VALUES:
            return [], f"the loop variable {bindings[i].name} takes {len(vals)} values, too many to check"
    total = 1
    for vals in values.values():
        total *= max(1, len(vals))
    if total > MAX_INSTANCES:
        return [], f"the loop body runs {total} different commands, too many to check"
    out: list[Instance] = []
    for combo in itertools.product(*(values[i] for i in ids)):
        chosen = dict(zip(ids, combo, strict=True))
        words: list[Word] = []
        produced: set[int] = set()
        for k, w in enumerate(cmd.words):
            if not w.refs:
                words.append(w)
                continue
            text = w.text
            for i in w.refs:
                value, from_glob = chosen[i]
                if w.split and _SPLIT_CHARS & set(value):
                    return [], (
                        f"{w.raw} is unquoted and the loop variable {bindings[i].name} takes the value {value!r}: "
                        f'bash splits it at blanks and expands glob characters in it (quote it: "{w.raw}")'
                    )
                text = text.replace(ref_text(i), value)
                if from_glob:
                    produced.add(k)
            words.append(Word(text, w.raw, arith=w.arith))
        out.append(Instance(SimpleCommand(words, nested=cmd.nested, in_loop=cmd.in_loop), frozenset(produced)))
    return out, None


def misplaced(
    base: str, args: list[Word], arg_texts: list[str], rule: ProgramCheck, produced: frozenset[int]
) -> str | None:
    """Why a loop's file name or an arithmetic result sits where it is not plain data, or ``None``.

    ``produced`` holds indexes into the command's words (the program is 0).  A file name from a glob may only
    be a path the program reads (checked as one) or text it prints; never an option, a pattern, code, the
    command a wrapper runs or the directory git works in; and the program's rule must accept a hostile name
    in its place (``[[ $f -eq 1 ]]`` evaluates the name as arithmetic, ``test -v "$f"`` as a variable name).
    An arithmetic result is an integer: printed or used as a count, never a path, a pattern or code.
    """
    spots = [p for p, _ in rule.paths] + rule.maybe_paths + rule.patterns + rule.trees + rule.scripts
    spots += rule.followed + ([rule.workdir] if rule.workdir else [])
    for w in args:
        if w.arith and any(PLACEHOLDER in s for s in spots):
            return f"{base} {w.raw}: an arithmetic result lands where {base} reads a file, a pattern or code"
    if not produced:
        return None
    if rule.inner_at is not None or rule.scripts or rule.workdir is not None:
        return f"{base}: a file name from the loop would become part of the command {base} runs"
    safe = {p for p, _ in rule.paths} | set(rule.maybe_paths) | set(rule.text)
    for k in sorted(produced):
        text, raw = arg_texts[k - 1], args[k - 1].raw
        if text.startswith("-") or os.path.basename(text).startswith("-"):
            return f"{base} {raw}: the loop gives the file name {text!r}, which {base} would read as an option"
        if text not in safe:
            return (f"{base} {raw}: the loop gives the file name {text!r}, and {base} reads it as code, a pattern "
                    "or an option value, not as a file")
    hostile = [_HOSTILE_NAME if k + 1 in produced else t for k, t in enumerate(arg_texts)]
    again = check_allowed(base, hostile)
    if again is None or again.problems:
        why = again.problems[0] if again and again.problems else "not on the read-only list"
        return f"{base}: a file name from the loop could be evaluated there, not read as data ({why})"
    return None
