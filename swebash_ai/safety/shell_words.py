"""A shell word as bash reads it: the :class:`Word` the parser makes, and words the parser split that bash joins.

Contract:
    :class:`Word` is one shell word after quote removal, with what the policy must know of its expansions.
    :func:`join_touching` makes one word of the nodes that touch (no blank between them), as bash does.

Why a module of its own: the parser (:mod:`swebash_ai.safety.shell_parse`), the proofs of plain literals
(:mod:`swebash_ai.safety.shell_literals`) and the policy all speak of words; this is the floor they share, so
none of them imports another to name one.

Pure: standard library only.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

__all__ = ["Word", "join_touching"]


@dataclass(frozen=True)
class Word:
    """One shell word after quote removal.

    ``literal``: no expansion of any kind; ``glob``: unquoted ``*?[``; ``tilde``: an unquoted leading
    ``~`` the shell will expand; ``escaped``: written with a backslash.  ``refs``: the ``for`` variables it
    expands (:class:`~swebash_ai.safety.shell_parse.Binding` indexes; ``text`` holds
    :func:`~swebash_ai.safety.shell_parse.ref_text` where each stands, and the word is not
    ``literal`` until the policy substitutes each value); ``split``: one of them is unquoted (bash splits and
    globs its value); ``arith``: it holds a proven ``$((...))``, whose integer ``text`` shows as
    :data:`~swebash_ai.safety.shell_literals.PLACEHOLDER`.
    """

    text: str
    raw: str
    literal: bool = True
    glob: bool = False
    tilde: bool = False
    escaped: bool = False
    refs: tuple[int, ...] = ()
    split: bool = False
    arith: bool = False


def join_touching(items: list[tuple[Any, Word]]) -> list[Word]:
    """Nodes with no blank between them are one shell word, whatever the parser made of them.

    tree-sitter-bash sometimes ends a word early and starts a sibling at the very next byte (``.[^\\a]\\n\\v``
    comes out as ``.[^\\a]`` and ``\\n\\v``); bash reads one word, ``.[^a]nv``, which globs to ``.env``.
    """
    words: list[Word] = []
    end = -1
    for node, w in items:
        if words and node.start_byte == end:
            prev = words[-1]
            words[-1] = dataclasses.replace(
                prev, text=prev.text + w.text, raw=prev.raw + w.raw, literal=prev.literal and w.literal,
                glob=prev.glob or w.glob, escaped=prev.escaped or w.escaped,
                refs=prev.refs + w.refs, split=prev.split or w.split, arith=prev.arith or w.arith,
            )
        else:
            words.append(w)
        end = node.end_byte
    return words
