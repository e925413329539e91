"""``@path`` mentions: files and folders the user names in a prompt, attached to the message sent.

Contract:
    :func:`find_mentions` finds ``@path`` and ``@"path with spaces"`` where the ``@`` starts a word (so
    ``user@example.com`` is no mention), outside inline code and fenced blocks. :func:`expand_mentions`
    attaches each one that names a readable file (its text, line-numbered like ``read_file``, with the
    path) or a folder (its listing, as ``list_dir`` gives it); a mention the guard refuses or that names
    nothing stays as typed, and a notice says why. The typed text is sent unchanged, followed by the
    attachments; :func:`split_attachments` takes a saved message apart again for a compact display.
    A mention of an image (``.png``, ``.jpg``, ``.gif``, ``.webp``) is read as bytes through the same guard
    and becomes an :class:`~swebash_ai.agent.images.ImageAttachment` (an image content part, see
    :mod:`swebash_ai.agent.images`); the text then carries one line naming it.

Why:
    A mention is a file the app reads by itself: the read goes through
    :func:`~swebash_ai.safety.unasked.read_unasked` with the session's path policy, so a protected file (or
    a link or hard link to one, a FIFO, a file over ``fs_max_size``) is never attached, whatever the
    mention says. Text a repository wrote (a project command) may only mention files inside it
    (``within``). Refusals are told to the user, not to the model: the mention stays in the text, and the
    model's own tools answer for that path as they always do.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from swebash_ai.safety.paths import PathPolicy
from swebash_ai.safety.unasked import UnaskedRefusal, read_unasked
from swebash_ai.storage.sizes import human_size
from swebash_ai.tools.registry import ToolContext

if TYPE_CHECKING:
    from swebash_ai.agent.images import ImageAttachment

__all__ = ["ATTACHED", "Attachment", "Expansion", "Mention", "attach_image", "expand_mentions", "find_mentions",
           "split_attachments"]

MAX_ATTACHMENTS = 20
"""Mentions attached from one prompt; more are left as text with a notice."""
ATTACHED = "[Attached by the user: "
"""How each attachment starts in the message the model receives (and in the saved session)."""

# ``@`` at the start of the text or after a space or an opening bracket; a quoted path or a run of non-spaces.
_MENTION = re.compile(r"""(?:^|(?<=[\s(\[{]))@(?:"([^"\n]+)"|'([^'\n]+)'|([^\s"'`]+))""")
_CODE = re.compile(r"^ {0,3}(```|~~~).*?(^ {0,3}\1|\Z)|`[^`\n]*`", re.MULTILINE | re.DOTALL)
_TRAILING = ".,;:!?)]}"


@dataclass(frozen=True)
class Mention:
    """One ``@path`` in the text: where it is and the path it names (quotes removed)."""

    start: int
    end: int
    path: str


@dataclass(frozen=True)
class Attachment:
    """A file or folder attached: the path as typed, what it was, one summary line, the text sent."""

    path: str
    kind: str
    summary: str
    body: str

    @property
    def line(self) -> str:
        """The compact line a front end shows instead of the content."""
        return f"📎 {self.path} ({self.summary})"


@dataclass(frozen=True)
class Expansion:
    text: str
    """What the model receives: the typed text, then each attachment."""
    attachments: tuple[Attachment, ...] = ()
    notices: tuple[str, ...] = ()
    """One line per mention left as text, saying why."""
    images: tuple[ImageAttachment, ...] = ()
    """Images mentioned, sent as image parts after the text (which names each)."""


def find_mentions(text: str, cwd: Path | None = None) -> list[Mention]:
    """Every mention in ``text`` outside code; an unquoted path loses trailing punctuation (``@a.py.``)
    unless a file of that exact name exists under ``cwd``."""
    code = [m.span() for m in _CODE.finditer(text)]
    found: list[Mention] = []
    for m in _MENTION.finditer(text):
        if any(a <= m.start() < b for a, b in code):
            continue
        quoted = m.group(1) or m.group(2)
        if quoted:
            found.append(Mention(m.start(), m.end(), quoted))
            continue
        path, end = m.group(3), m.end()
        while path and path[-1] in _TRAILING and not (cwd is not None and os.path.lexists(cwd / path)):
            path, end = path[:-1], end - 1
        if path:
            found.append(Mention(m.start(), end, path))
    return found


def expand_mentions(
    text: str, ctx: ToolContext, *, within: Sequence[Path] = (), max_bytes: int | None = None,
    model: str = "",
) -> Expansion:
    """Attach what the mentions in ``text`` name (see the module docstring).

    Args:
        text: The prompt as the user typed it (or as a command file expanded it).
        ctx: The session's tool context: its working directory, path policy and settings.
        within: Folders every mention must lead into (text a repository wrote); empty: anywhere the policy
            does not deny.
        max_bytes: Largest file attached whole (default: ``fs_max_size``); a larger one is refused.
        model: The session's model, whose provider's limits an image is downscaled to.
    """
    policy: PathPolicy = ctx.path_policy
    limit = max_bytes if max_bytes is not None else ctx.settings.fs_max_size
    attachments: list[Attachment] = []
    notices: list[str] = []
    images: list[ImageAttachment] = []
    seen: set[Path] = set()
    for mention in find_mentions(text, ctx.cwd):
        absolute = _absolute(mention.path, ctx.cwd, policy)
        if absolute in seen:
            continue
        seen.add(absolute)
        if len(attachments) + len(images) >= MAX_ATTACHMENTS:
            notices.append(f"@{mention.path} is not attached: at most {MAX_ATTACHMENTS} attachments per message.")
            continue
        if _is_image(mention.path):
            image = attach_image(mention.path, ctx, within=within, model=model)
            if isinstance(image, str):
                notices.append(image)
            else:
                images.append(image)
            continue
        got = read_unasked(absolute, policy, within=within, max_bytes=limit)
        if not isinstance(got, UnaskedRefusal):
            attachments.append(_file(mention.path, got.text))
        elif not got.guarded and os.path.isdir(absolute):
            from swebash_ai.tools.fs import directory_listing  # the fs tools load at first use

            listed = directory_listing(ctx, mention.path)
            if listed.ok:
                attachments.append(_folder(mention.path, listed.text, listed.metadata.get("entries", 0)))
            else:
                notices.append(f"@{mention.path} is not attached: {listed.text}")
        else:
            notices.append(f"@{mention.path} is not attached: {got.reason}.")
    if not attachments and not images:
        return Expansion(text, (), tuple(notices))
    body = "\n\n".join([text.rstrip(), *(a.body for a in attachments), *(i.header for i in images)])
    return Expansion(body, tuple(attachments), tuple(notices), tuple(images))


def _is_image(path: str) -> bool:
    from swebash_ai.agent.images import is_image_name  # loaded with the first mention

    return is_image_name(path)


def attach_image(
    typed: str, ctx: ToolContext, *, within: Sequence[Path] = (), model: str = ""
) -> ImageAttachment | str:
    """An image file (``typed`` as the user wrote it: relative to the session's folder, ``~/``, absolute) read
    through the guard of every mention, whole, and made ready to send for ``model``; else the notice saying why
    not. Mentions use it, and so does the TUI for a path pasted or dropped on the prompt."""
    from swebash_ai.agent.images import MAX_IMAGE_FILE, ImageRefusal, image_attachment, limits_for
    from swebash_ai.safety.unasked import read_unasked_bytes

    absolute = _absolute(typed, ctx.cwd, ctx.path_policy)
    got = read_unasked_bytes(absolute, ctx.path_policy, within=within, max_bytes=MAX_IMAGE_FILE)
    if isinstance(got, UnaskedRefusal):
        return f"@{typed} is not attached: {got.reason}."
    image = image_attachment(got.data, name=typed, limits=limits_for(model))
    return f"@{image.notice}" if isinstance(image, ImageRefusal) else image


def split_attachments(content: str) -> tuple[str, list[str]]:
    """A saved user message taken apart: the typed text, and one compact line per attachment."""
    cut = content.find("\n\n" + ATTACHED)
    if cut < 0:
        return content, []
    heads = re.findall(r"^\[Attached by the user: (.+?) \((.+)\)\]$", content[cut:], re.MULTILINE)
    return content[:cut], [f"{'🖼' if summary.startswith('image, ') else '📎'} {path} ({summary})"
                           for path, summary in heads]


def _absolute(path: str, cwd: Path, policy: PathPolicy) -> Path:
    if path == "~" or path.startswith("~/"):
        return Path(str(policy.home) + path[1:])
    return Path(path) if os.path.isabs(path) else cwd / path


def _fence(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return fence


def _file(path: str, text: str) -> Attachment:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    size = len(text.encode("utf-8"))
    summary = f"{len(lines)} line{'s' if len(lines) != 1 else ''}, {human_size(size)}"
    width = max(4, len(str(len(lines))))
    numbered = "\n".join(f"{n:>{width}}| {line.removesuffix(chr(13))}" for n, line in enumerate(lines, 1))
    fence = _fence(numbered)
    content = f"{fence}\n{numbered}\n{fence}" if lines else "(empty file)"
    return Attachment(path, "file", summary, f"{ATTACHED}{path} ({summary})]\n{content}")


def _folder(path: str, listing: str, entries: int) -> Attachment:
    summary = f"folder, {entries} entr{'y' if entries == 1 else 'ies'}"
    fence = _fence(listing)
    return Attachment(path, "folder", summary, f"{ATTACHED}{path} ({summary})]\n{fence}\n{listing}\n{fence}")


