"""The prompt: multi-line input (Enter sends, Ctrl+J or Shift+Enter adds a line), history, completion of
slash commands (built-in and custom) and of ``@path`` (see :mod:`swebash_ai.frontends.tui.path_index`), and
images to send with the message (Ctrl+V, a pasted path: :mod:`swebash_ai.frontends.tui.widgets.attachments`).

History is kept in ``Locations.prompt_history``, one JSON string per line (so multi-line prompts survive),
newest last, capped at :data:`HISTORY_LIMIT` entries, readable by its owner alone. A history file that cannot
be read or written is ignored: losing history must never stop the app.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Static, TextArea

from swebash_ai.frontends.tui import commands
from swebash_ai.frontends.tui.early_frame import PROMPT_PLACEHOLDER
from swebash_ai.frontends.tui.widgets.attachments import AttachmentBar
from swebash_ai.safety.terminal_text import safe
from swebash_ai.storage import private_files

if TYPE_CHECKING:
    from swebash_ai.frontends.tui.path_index import Candidate, PathIndex

log = logging.getLogger(__name__)

HISTORY_LIMIT = 1000
NEWLINE_KEYS = frozenset({"ctrl+j", "shift+enter", "alt+enter", "ctrl+enter"})


class PromptHistory:
    """Prompts sent before, oldest first, persisted to ``path`` (``None``: memory only)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.entries: list[str] = []
        if path is not None:
            self._load(path)

    def _load(self, path: Path) -> None:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError:
            return
        for line in lines[-HISTORY_LIMIT:]:
            try:
                value = json.loads(line)
            except ValueError:
                value = line
            if isinstance(value, str) and value:
                self.entries.append(value)

    def add(self, text: str) -> None:
        if not text.strip() or (self.entries and self.entries[-1] == text):
            return
        self.entries.append(text)
        if self.path is None:
            return
        try:
            if len(self.entries) > HISTORY_LIMIT * 2:
                self.entries = self.entries[-HISTORY_LIMIT:]
                data = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in self.entries)
                private_files.write_file(self.path, data.encode("utf-8"))
            else:
                with private_files.open_append(self.path) as fh:
                    fh.write((json.dumps(text, ensure_ascii=False) + "\n").encode("utf-8"))
        except OSError as exc:
            log.warning("cannot write the prompt history %s: %s", self.path, exc)


class PromptInput(TextArea):
    """Multi-line input. Enter posts :class:`PromptInput.Submitted`; Up/Down walk the history; PageUp and
    PageDown post :class:`PromptInput.Page` (they scroll the chat: the prompt is a few lines at most)."""

    class Submitted(Message):
        """The user pressed Enter."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class PathsStale(Message):
        """An ``@`` is being typed and files may have changed since the path index was built."""

    class Page(Message):
        """The user pressed PageUp (``up``) or PageDown."""

        def __init__(self, up: bool) -> None:
            super().__init__()
            self.up = up

    class ImagePathPasted(Message):
        """The paste was one path to an image file (a file dropped on the terminal): attach it, not its name."""

        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path

    class PasteRequested(Message):
        """Ctrl+V: an image on the clipboard is attached; else the text is pasted (:meth:`paste_text`)."""

    def __init__(self, history: PromptHistory, *, id: str | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus",
                         compact=True, highlight_cursor_line=False,
                         placeholder=PROMPT_PLACEHOLDER)
        self.prompt_history = history
        self._index: int | None = None  # position in history while browsing
        self._draft = ""
        self.paths: PathIndex | None = None
        """The workspace's paths for ``@`` completion (the app builds it once the session is ready)."""
        self.paths_stale = False
        """A turn ran since the index was built (its tools may have made files): rebuilt at the next ``@``."""
        self.custom: dict[str, tuple[str, str]] = {}
        """The command files in force: ``/name`` -> (argument hint, description), for completion."""

    @property
    def attachments(self) -> AttachmentBar | None:
        """The images waiting to go with the next message (the bar above the prompt)."""
        return self.parent.attachments if isinstance(self.parent, PromptBar) else None

    # --- keys -----------------------------------------------------------------------------------------
    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        if key == "backspace" and not self.text and self.attachments is not None and self.attachments.remove_last():
            event.stop()
            event.prevent_default()
            return
        if key == "enter":
            event.stop()
            event.prevent_default()
            self.submit()
            return
        if key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        if key in ("pageup", "pagedown"):
            event.stop()
            event.prevent_default()
            self.post_message(self.Page(key == "pageup"))
            return
        if key == "tab" and self.complete():
            event.stop()
            event.prevent_default()
            return
        if key == "up" and self.cursor_location[0] == 0 and self.prompt_history.entries:
            event.stop()
            event.prevent_default()
            self.history_previous()
            return
        if key == "down" and self._index is not None and self.cursor_location[0] == self.document.line_count - 1:
            event.stop()
            event.prevent_default()
            self.history_next()
            return
        if await self._run_own_binding(key):
            event.stop()
            event.prevent_default()
            return
        # Printable keys: the text area's own handler inserts them (Textual calls it next, once).

    async def _run_own_binding(self, key: str) -> bool:
        """Run the text area's own binding for ``key`` here, in the prompt's queue: left to Textual, a bound
        key (Backspace, Ctrl+W, the arrows...) bubbles up to the app before its binding runs, and the
        letters typed after it, already in this queue, would be inserted first (``abc`` Backspace ``def``
        in one burst gave ``abcde``). The app's bindings never shadowed these: the focused widget's come first."""
        for binding in self._bindings.key_to_bindings.get(key, ()):
            if not binding.priority and await self.app.run_action(binding.action, self):
                return True
        return False

    async def _on_paste(self, event: events.Paste) -> None:
        """Insert the paste once (image paths become chips). Textual would call the text area's handler
        after this one too: the default is prevented so that it does not insert it a second time."""
        from swebash_ai.frontends.tui.widgets.attachments import pasted_image_path

        event.stop()
        event.prevent_default()
        path = pasted_image_path(event.text, getattr(self.app, "cwd", "."))
        if path is not None:
            self.post_message(self.ImagePathPasted(path))
            return
        if self.read_only:
            return
        if result := self._replace_via_keyboard(event.text, *self.selection):
            self.move_cursor(result.end_location)

    def action_paste(self) -> None:
        self.post_message(self.PasteRequested())

    def paste_text(self) -> None:
        """What Ctrl+V does in a text area: the app's clipboard pasted at the cursor."""
        super().action_paste()

    def submit(self) -> None:
        text = self.text
        if not text.strip() and not (self.attachments is not None and self.attachments.images):
            return
        self.prompt_history.add(text)
        self._index = None
        self._draft = ""
        self.clear()
        self.post_message(self.Submitted(text))

    def set_paths(self, index: PathIndex) -> None:
        """A new path index (built in a thread); the choices shown follow it at once."""
        self.paths = index
        if isinstance(self.parent, PromptBar):
            self.parent.show_hint()

    def mention(self) -> tuple[int, str] | None:
        """The ``@query`` ending at the cursor: (offset of its ``@``, the query)."""
        if "@" not in self.text:
            return None
        from swebash_ai.frontends.tui.path_index import mention_at  # the first frame does not wait for the path policy

        row, col = self.cursor_location
        offset = sum(len(self.document.get_line(i)) + 1 for i in range(row)) + col
        return mention_at(self.text, offset)

    def mention_candidates(self, limit: int = 8) -> list[Candidate]:
        mention = self.mention()
        if mention is None or self.paths is None:
            return []
        if self.paths_stale:
            self.paths_stale = False
            self.post_message(self.PathsStale())
        return self.paths.candidates(mention[1], limit)

    def complete(self) -> bool:
        """Complete an ``@path`` or a slash command being typed; False when there is nothing to complete."""
        mention = self.mention()
        if mention is not None and self.paths is not None:
            found = self.paths.candidates(mention[1], 1)
            if found:
                before = self.text[:mention[0]]
                start = (before.count("\n"), len(before.rsplit("\n", 1)[-1]))
                self.replace(found[0].insertion, start, self.cursor_location)
            return True  # Tab on an @word never leaves the prompt
        matches = commands.complete(self.text, self.custom)
        if not matches:
            return False
        target = matches[0] + " " if len(matches) == 1 else commands.common_prefix(matches)
        if target == self.text:
            return len(matches) > 1  # ambiguous: stay, the hint line shows the choices
        self._replace_all(target)
        return True

    def _replace_all(self, text: str) -> None:
        self.load_text(text)
        last = self.document.line_count - 1
        self.move_cursor((last, len(self.document.get_line(last))))

    def history_previous(self) -> None:
        entries = self.prompt_history.entries
        if self._index is None:
            self._draft = self.text
            self._index = len(entries)
        if self._index > 0:
            self._index -= 1
            self._replace_all(entries[self._index])

    def history_next(self) -> None:
        if self._index is None:
            return
        self._index += 1
        if self._index >= len(self.prompt_history.entries):
            self._index = None
            self._replace_all(self._draft)
        else:
            self._replace_all(self.prompt_history.entries[self._index])


class PromptBar(Vertical):
    """The prompt with a completion hint line and the images to send (chips) above it."""

    def __init__(self, history: PromptHistory, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.hint = Static(id="completions")
        self.attachments = AttachmentBar(id="attachments")
        self.input = PromptInput(history, id="prompt")

    def compose(self) -> Any:
        yield self.hint
        yield self.attachments
        yield self.input

    def on_mount(self) -> None:
        self.hint.display = False

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self.show_hint()

    def on_text_area_selection_changed(self, event: TextArea.SelectionChanged) -> None:
        if self.hint.display or "@" in self.input.text:
            self.show_hint()

    def show_hint(self) -> None:
        """The choices for what is being typed: paths for ``@``, else slash commands (Tab takes the first)."""
        prompt = self.input
        paths = prompt.mention_candidates()
        if paths:
            lines = [("› " if i == 0 else "  ") + safe(c.path, visible=True) + ("  (gitignored)" if c.ignored else "")
                     for i, c in enumerate(paths)]  # a file name may hold escape sequences: shown, not obeyed
            self.hint.update(Content("\n".join(lines)))
            self.hint.display = True
            return
        matches = commands.complete(prompt.text, prompt.custom)
        if matches:
            known = {**commands.SLASH_COMMANDS, **prompt.custom}
            lines = [f"{name} {arg}".rstrip() + f"  — {desc}" for name in matches for arg, desc in [known[name]]]
            self.hint.update(Content("\n".join(lines)))
            self.hint.display = True
        else:
            self.hint.display = False
