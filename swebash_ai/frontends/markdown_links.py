"""Markdown links drawn so their label cannot lie about where they go (safety/link_text.py).

Rich draws ``[label](target)`` as the label alone, with the target as a terminal hyperlink (OSC 8) and, in
the app, a click that opens it. Before it draws, :func:`expose_link_targets` rewrites the parsed tokens:
a link whose label does not show its target's host gets ``(host)`` inside the link, after the label, so
what the hyperlink carries is what the screen shows; a target that is not a web or mail address
(``javascript:``, ``file:``, a relative path) is no link at all, its label followed by the target as text.
An image is drawn inline as ``🌆 alt``, a link to the picture under the same rule.

Rich is imported only by :class:`LinkSafeMarkdown`'s module users, which are front ends already drawing
Markdown.
"""

from __future__ import annotations

from typing import Any

from markdown_it.token import Token
from rich.markdown import Markdown

from swebash_ai.safety.link_text import link_note, linkable


def _label(children: list[Token]) -> str:
    return "".join(" " if c.type in ("softbreak", "hardbreak") else c.content
                   for c in children if c.type in ("text", "code_inline", "softbreak", "hardbreak"))


def _text(content: str) -> Token:
    token = Token("text", "", 0)
    token.content = content
    return token


def _note(text: str) -> Token:
    return _text(f" ({text})")


def _expose(children: list[Token]) -> list[Token]:
    out: list[Token] = []
    i = 0
    while i < len(children):
        token = children[i]
        if token.type == "image":  # drawn inline as a link to the picture: its alt text, then the note
            src = str(token.attrs.get("src", ""))
            alt = _label(token.children or []) or token.content
            note = link_note(alt, src)
            title = _text(f"🌆 {alt}")
            if note:
                title.content += f" ({note})"
            if linkable(src):
                opening = Token("link_open", "a", 1)
                opening.attrs = {"href": src}
                out += [opening, title, Token("link_close", "a", -1)]
            else:
                out.append(title)
            i += 1
            continue
        if token.type != "link_open":
            out.append(token)
            i += 1
            continue
        end = next((j for j in range(i + 1, len(children)) if children[j].type == "link_close"), len(children))
        inner = children[i + 1:end]
        href = str(token.attrs.get("href", ""))
        note = link_note(_label(inner), href)
        if linkable(href):
            out += [token, *inner, *([_note(note)] if note else []), *children[end:end + 1]]
        else:  # not a link at all: the label, then where it points as text
            out += [*inner, *([_note(note)] if note else [])]
        i = end + 1
    return out


def expose_link_targets(tokens: list[Token]) -> None:
    """Rewrite parsed Markdown ``tokens`` in place so every link shows where it goes (see the module)."""
    for token in tokens:
        if token.type == "inline" and token.children:
            token.children = _expose(token.children)


class LinkSafeMarkdown(Markdown):
    """Rich's Markdown, its links showing their targets' hosts where the label does not."""

    def __init__(self, markup: str, **kwargs: Any) -> None:
        super().__init__(markup, **kwargs)
        expose_link_targets(self.parsed)
