"""Checkpoints: the state of every file before a tool changed it, so a turn's changes can be undone.

Contract: before ``write_file`` or ``edit_file`` replaces a file, :meth:`Checkpoints.record` stores its previous
content and mode (or that it did not exist) and, after the write, the hash of what the tool wrote. Records go
to ``<session id>.checkpoints/index.jsonl`` beside the session file; contents go to ``blobs/<sha256>`` in the
same folder (content-addressed, so a file edited ten times stores each version once, and the JSONL stays small
whatever the file size; the tools already cap a file at ``fs_max_size``).

:func:`undo_last_turn` reverts the newest turn that has changes not yet undone: each file goes back to its
state before the turn's first change. A file whose content is no longer what the tool last wrote was changed
by someone else: undo refuses, naming it, unless ``force``. The undo itself is appended to the index, so the
next undo goes one turn further back. Why here, in tools: the write tools call it, and the session and
the command line read it, both of which sit above this layer.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Larger previous contents are not copied (the write tools cap what they write at ``fs_max_size`` anyway).
MAX_SAVED = 16 * 1024 * 1024


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _current(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


@dataclass
class Checkpoints:
    """The checkpoint store of one session. ``turn`` is set by the session at the start of each user turn."""

    folder: Path
    turn: int = 0

    @property
    def index(self) -> Path:
        return self.folder / "index.jsonl"

    def _blob(self, data: bytes) -> str:
        digest = _sha(data)
        target = self.folder / "blobs" / digest
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_suffix(".tmp")
            tmp.write_bytes(data)
            os.replace(tmp, target)
        return digest

    def _append(self, entry: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        with self.index.open("a+b") as fh:
            lead = b""
            if fh.tell():  # a line torn by a crash must not swallow this one
                fh.seek(-1, os.SEEK_END)
                lead = b"" if fh.read(1) == b"\n" else b"\n"
            fh.write(lead + json.dumps(entry).encode() + b"\n")

    def record(self, path: Path, new: bytes) -> None:
        """Remember what ``path`` holds now (content and mode, or that it does not exist) before a tool writes
        ``new`` to it. A file over :data:`MAX_SAVED` is recorded as not restorable rather than copied."""
        try:
            st = os.stat(path)
        except FileNotFoundError:
            st = None
        entry: dict[str, Any] = {"kind": "file", "turn": self.turn, "path": str(path), "time": time.time(),
                                 "old": None, "mode": None, "new": _sha(new)}
        if st is not None:
            entry["mode"] = st.st_mode & 0o7777
            if st.st_size > MAX_SAVED:
                entry["lost"] = f"it was {st.st_size} bytes, over the {MAX_SAVED}-byte checkpoint limit"
            else:
                entry["old"] = self._blob(path.read_bytes())
        self._append(entry)

    def entries(self) -> list[dict[str, Any]]:
        try:
            lines = self.index.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        out = []
        for line in lines:
            try:
                obj = json.loads(line)
            except ValueError:
                continue  # a torn last line after a crash: skip it, keep the rest
            if isinstance(obj, dict):
                out.append(obj)
        return out


class UndoRefused(Exception):
    """Undo cannot proceed without ``force`` (a file changed since the tool wrote it) or has nothing to do."""


@dataclass
class UndoResult:
    """What one undo did: the turn reverted and one line per file restored."""

    turn: int
    restored: list[str] = field(default_factory=list)

    def summary(self) -> str:
        lines = [f"Undid the file changes of turn {self.turn}:"] + [f"  {line}" for line in self.restored]
        return "\n".join(lines)

    def note_for_model(self) -> str:
        files = "; ".join(self.restored)
        return f"[Note: the user undid your file changes from an earlier turn ({files}). Those files are back " \
            "to their state before that turn; read them again before relying on their content.]"


def _pending(entries: list[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    undone = {int(e["turn"]) for e in entries if e.get("kind") == "undo"}
    turns: dict[int, list[dict[str, Any]]] = {}
    for e in entries:
        if e.get("kind") == "file" and int(e["turn"]) not in undone:
            turns.setdefault(int(e["turn"]), []).append(e)
    return turns


def undo_last_turn(store: Checkpoints, *, force: bool = False) -> UndoResult:
    """Revert the newest turn with file changes not yet undone. Raises :class:`UndoRefused` when it cannot."""
    turns = _pending(store.entries())
    if not turns:
        raise UndoRefused("Nothing to undo: no file changes recorded in this session (or all already undone).")
    turn = max(turns)
    first: dict[str, dict[str, Any]] = {}
    last: dict[str, dict[str, Any]] = {}
    for e in turns[turn]:
        first.setdefault(e["path"], e)
        last[e["path"]] = e
    if not force:
        changed = [p for p, e in last.items() if (cur := _current(Path(p))) is None or _sha(cur) != e["new"]]
        if changed:
            raise UndoRefused(
                "Not undoing: changed since the assistant wrote it: " + ", ".join(changed)
                + ". Use --force (/undo --force) to restore it anyway and lose those changes."
            )
    lost = [f"{p} ({e['lost']})" for p, e in first.items() if e.get("lost")]
    if lost and not force:
        raise UndoRefused("Cannot undo: the previous content was not saved for " + ", ".join(lost)
                          + ". Use --force to undo the other files of that turn.")
    result = UndoResult(turn)
    for path_s, e in first.items():
        path = Path(path_s)
        if e.get("lost"):
            result.restored.append(f"{path_s}: NOT restored ({e['lost']})")
            continue
        if e["old"] is None:
            try:
                path.unlink()
                result.restored.append(f"{path_s}: removed (it did not exist before)")
            except FileNotFoundError:
                result.restored.append(f"{path_s}: already gone")
            continue
        data = (store.folder / "blobs" / e["old"]).read_bytes()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.undo-{os.getpid()}")
        tmp.write_bytes(data)
        if e.get("mode") is not None:
            os.chmod(tmp, int(e["mode"]))
        os.replace(tmp, path)
        result.restored.append(f"{path_s}: restored ({len(data)} bytes)")
    store._append({"kind": "undo", "turn": turn, "time": time.time(), "force": force, "files": list(first)})
    return result


def checkpoints_for(sessions_dir: Path, session_id: str) -> Checkpoints:
    """The checkpoint store beside ``<sessions_dir>/<session_id>.jsonl``."""
    return Checkpoints(sessions_dir / f"{session_id}.checkpoints")
