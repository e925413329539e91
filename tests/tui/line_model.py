"""A reference line editor: what the prompt's text must be after a burst of keys and pastes.

Written from the keys' documented meaning (docs/tui.md), not from the widget's code: a character or a paste
goes in at the cursor; Backspace and Delete remove one character; Left, Right and End move; Home moves to
the first non-blank character, or from there (or from a blank before it) to the start of the line; Ctrl+U
removes up to the start of the line, Ctrl+K to its end; Ctrl+W removes the word before the cursor (the
spaces after it too, or one run of punctuation). One line of text: the strategies make no line breaks.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

CHARACTERS = "ab xyz.-/_日語🙂é"
"""Letters, spaces, punctuation (word boundaries), wide characters (two cells), an emoji, an accent."""
EDIT_KEYS = ("backspace", "delete", "left", "right", "home", "end", "ctrl+u", "ctrl+w", "ctrl+k")


@dataclass(frozen=True)
class Typed:
    """One printable character, typed."""

    char: str


@dataclass(frozen=True)
class Pasted:
    """A bracketed paste."""

    text: str


@dataclass(frozen=True)
class Pressed:
    """An editing key (one of :data:`EDIT_KEYS`)."""

    key: str


Step = Typed | Pasted | Pressed

steps = st.one_of(
    st.sampled_from(CHARACTERS).map(Typed),
    st.text(alphabet=CHARACTERS, min_size=1, max_size=3).map(Pasted),
    st.sampled_from(EDIT_KEYS).map(Pressed),
)
bursts = st.lists(steps, min_size=1, max_size=20)
"""At most 120 cells: one row of the test apps' prompts (a wrapped row would move Home and End)."""


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def edit(burst: list[Step]) -> tuple[str, int]:
    """The text and the cursor (a character offset) after ``burst``, starting from an empty line."""
    text, cur = "", 0
    for step in burst:
        if isinstance(step, (Typed, Pasted)):
            piece = step.char if isinstance(step, Typed) else step.text
            text, cur = text[:cur] + piece + text[cur:], cur + len(piece)
        elif step.key == "backspace" and cur > 0:
            text, cur = text[:cur - 1] + text[cur:], cur - 1
        elif step.key == "delete":
            text = text[:cur] + text[cur + 1:]
        elif step.key == "left":
            cur = max(0, cur - 1)
        elif step.key == "right":
            cur = min(len(text), cur + 1)
        elif step.key == "home":  # "smart": to the first non-blank character, from there to the start
            first = next((i for i, char in enumerate(text) if not char.isspace()), 0)
            cur = first if cur == 0 or cur > first else 0
        elif step.key == "end":
            cur = len(text)
        elif step.key == "ctrl+u":
            text, cur = text[cur:], 0
        elif step.key == "ctrl+k":
            text = text[:cur]
        elif step.key == "ctrl+w":
            start = _word_start(text[:cur])
            text, cur = text[:start] + text[cur:], start
    return text, cur


def _word_start(before: str) -> int:
    """Where Ctrl+W deletes back to: spaces at the end are skipped, then one run of word characters or of
    other characters (punctuation, with the spaces inside it)."""
    end = len(before.rstrip())
    if end == 0:
        return 0
    word = _is_word(before[end - 1])
    start = end
    while start > 0 and _is_word(before[start - 1]) == word:
        start -= 1
    return start
