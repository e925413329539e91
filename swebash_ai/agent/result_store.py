"""Where a long session's old tool results live: once in a private file with no name, not in memory.

Contract:
    At the end of each turn the session sets aside the large tool results of the turns before it
    (:meth:`~swebash_ai.agent.conversation.Conversation.set_aside_results`): each result's text is written once to
    the conversation's :class:`ResultStore`, and its message keeps, under :data:`ASIDE`, an :class:`Aside`
    (where the text is, how long it is, its token estimate) instead of its ``content``. Whatever needs the text
    again reads it back through the conversation: a request (each one reads the results it sends), the session
    file (written whole at every save, one message at a time), a compaction, an export, an editor's replay, the
    tool pane's earlier calls. An :class:`Aside` is not JSON: a message set aside that reached a provider or a
    file without being read back would fail loudly rather than send or save a stub.

    The helpers' transcripts (``meta["subagents"]``) go the same way, each a JSON object read back whole
    (:meth:`~swebash_ai.agent.conversation.Conversation.subagents`).

    Each text is kept as its JSON string (quotes and escapes included): a request to an OpenAI-compatible
    endpoint copies those bytes into its body as they are (:class:`~swebash_ai.providers.wire.StoredResult`),
    with no string made for the text, its escaped copy or its message.

    The store is an unnamed file (``O_TMPFILE``: unlinked from the start, 0600) in the folder of the session
    files, which are on the disk the user chose for them, not in ``/tmp`` (often memory itself). It goes
    away when the conversation does, and a crash or a kill leaves nothing behind: the session file already
    holds every result. A store that cannot be written (a full disk) keeps the results in memory, as before.

Why:
    A session of hundreds of turns holds megabytes of file contents and command output that the model read
    once; the process held each of them for as long as it ran (issue 51: memory bounded by what the
    conversation holds, "old large results are stored once on disk and referenced").
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from swebash_ai.storage import private_files

__all__ = ["ASIDE", "ASIDE_CHARS", "Aside", "ResultStore", "as_json"]

log = logging.getLogger(__name__)

ASIDE = "set_aside"
"""Key of a tool message whose text is in the conversation's :class:`ResultStore` (its ``content`` is not)."""

ASIDE_CHARS = 512
"""Results shorter than this stay in memory: their message costs more than the text it would save."""


@dataclass(frozen=True, slots=True)
class Aside:
    """Where a result set aside is: its JSON string, ``size`` bytes at ``offset``; ``tokens``: its message's
    estimate."""

    offset: int
    size: int
    tokens: int


def as_json(value: object) -> bytes:
    """``value`` (a result's text: the JSON string a request carries) as UTF-8 JSON, as httpx encodes a body; a
    text that is no valid Unicode (a lone surrogate) is escaped instead, which any JSON reader takes and gives
    back the same."""
    try:
        return json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value).encode("ascii")


class ResultStore:
    """The tool results a conversation set aside, as JSON strings: appended once (under a lock), read back by
    position (``pread``), so a read never depends on a file position another thread moved."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        """Where the unnamed file is made (the session files' folder); the system's temporary folder if unset."""
        self._file: IO[bytes] | None = None
        self._end = 0
        self._lock = threading.Lock()

    def put(self, value: object) -> tuple[int, int] | None:
        """Write ``value`` (a result's text, or any JSON value: a helper's transcript) as JSON; returns (offset,
        size), or ``None`` when it cannot be written (it then stays in memory: a full disk must not lose a
        result)."""
        data = as_json(value)
        with self._lock:
            try:
                if self._file is None:
                    self._file = self._open()
                written = 0
                while written < len(data):
                    written += os.pwrite(self._file.fileno(), data[written:], self._end + written)
            except OSError as exc:
                log.warning("swebash-ai: cannot set old tool results aside (%s); they stay in memory.", exc)
                return None
            offset, self._end = self._end, self._end + len(data)
        return offset, len(data)

    def get(self, aside: Aside) -> str:
        """The text set aside at ``aside``."""
        text = self.load(aside)
        if not isinstance(text, str):
            raise OSError(f"the store of old tool results holds no text at {aside.offset:,}")
        return text

    def load(self, aside: Aside) -> Any:
        """The JSON value set aside at ``aside``."""
        into = bytearray(aside.size)
        self.read_into(aside, memoryview(into))
        return json.loads(into)

    def read_into(self, aside: Aside, into: memoryview) -> None:
        """Copy the JSON string set aside at ``aside`` into ``into`` (``aside.size`` bytes), making no object for it."""
        if self._file is None:
            raise RuntimeError("this conversation has set no result aside")
        got = 0
        while got < aside.size:
            read = os.preadv(self._file.fileno(), [into[got:aside.size]], aside.offset + got)
            if not read:
                raise OSError(f"the store of old tool results ended early (at {aside.offset + got:,} bytes)")
            got += read

    @property
    def size(self) -> int:
        """Bytes written so far."""
        return self._end

    def _open(self) -> IO[bytes]:
        folder = self.folder
        if folder is not None:
            try:
                private_files.make_dirs(folder)
                return tempfile.TemporaryFile(dir=folder, prefix=".results-")
            except OSError:
                pass  # a folder that cannot be written: the system's temporary folder still keeps them
        return tempfile.TemporaryFile(prefix="swebash-ai-results-")
