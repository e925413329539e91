"""Checkpoints: the state of every file before a tool changed it, so a turn's changes can be undone.

Approved shell commands are covered too: :meth:`Checkpoints.before_command` and
:meth:`Checkpoints.after_command` take shadow-git snapshots of the workspace around the command
(:mod:`swebash_ai.tools.snapshots`, stored in ``snapshots.git`` beside the sessions); undo reverts the paths that
differ between the two. A command that could not be snapshotted (too big a workspace, git missing...) is
recorded with the reason, and undo says plainly that its changes cannot be undone. Snapshots leave out what
the path policy protects (``.env``, keys...): a command that changed such a file cannot be undone for that
file, and undo names it ("not snapshotted: .env is protected").

Everything here is private to its owner (:mod:`swebash_ai.storage.private_files`).

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
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swebash_ai.errors import ToolError
from swebash_ai.storage import private_files
from swebash_ai.tools.atomic import write_atomically

if TYPE_CHECKING:
    from swebash_ai.safety.paths import PathPolicy
    from swebash_ai.tools import snapshots

#: Larger previous contents are not copied (the write tools cap what they write at ``fs_max_size`` anyway).
MAX_SAVED = 16 * 1024 * 1024


_DIGEST = re.compile(r"[0-9a-f]{64}")
_FOLDER = re.compile(r"[\w.-]+\.checkpoints")
_MAX_FORKS = 32  # how far holder_of follows a record from fork to fork

_MOVING = threading.Lock()
"""Held while :func:`move_unsaved` hands records to a fork and while a command's after-state finds its record:
a background command may end (in a worker thread) while its turn's save forks the session."""


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
    writer: str = ""
    """Marks the entries recorded since the session last saved (``by``): when that save forks the session,
    :func:`move_unsaved` hands exactly these to the fork. With ``turn``, it names one run's turn: two runs of
    one session number their turns alike until the second save forks (see :func:`undo_last_turn`)."""
    wrote: bool = False
    """Whether this store recorded a change (the session then claims ``writer`` when it saves, :meth:`claim`)."""

    @property
    def index(self) -> Path:
        return self.folder / "index.jsonl"

    def _blob(self, data: bytes) -> str:
        digest = _sha(data)
        target = self.folder / "blobs" / digest
        if not target.exists():
            private_files.write_file(target, data)
        return digest

    def claim(self, writer: str) -> None:
        """Say that the session file of this store saved the turns ``writer`` recorded: until then another run
        of the same session, which numbered its turn alike, may still take them to a fork of its own."""
        self._append({"kind": "saved", "by": writer, "time": time.time()})

    def _append(self, entry: dict[str, Any]) -> None:
        with private_files.open_append(self.index, readable=True) as fh:
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
        entry: dict[str, Any] = {"kind": "file", "id": uuid.uuid4().hex, "turn": self.turn, "by": self.writer,
                                 "path": str(path), "time": time.time(), "old": None, "mode": None, "new": _sha(new)}
        if st is not None:
            entry["mode"] = st.st_mode & 0o7777
            if st.st_size > MAX_SAVED:
                entry["lost"] = f"it was {st.st_size} bytes, over the {MAX_SAVED}-byte checkpoint limit"
            else:
                entry["old"] = self._blob(path.read_bytes())
        self._append(entry)
        self.wrote = True

    @property
    def shadow(self) -> Path:
        """The snapshot repository, shared by all sessions (see :mod:`swebash_ai.tools.snapshots`)."""
        return self.folder.parent / "snapshots.git"

    def before_command(self, command: str, cwd: Path, limits: snapshots.Limits | None = None,
                       policy: PathPolicy | None = None) -> dict[str, Any]:
        """Snapshot the workspace of ``cwd`` before an approved ``command`` runs; record it (or why it was not
        taken) and return the record for :meth:`after_command`. ``policy``: the tools' path policy, whose
        protected files are left out (``None``: the default policy)."""
        from swebash_ai.tools import snapshots  # the snapshot machinery loads at the first command, not at start

        root = snapshots.project_root(cwd)
        snap = snapshots.ShadowRepo(self.shadow, root, limits, policy).snapshot()
        entry: dict[str, Any] = {
            "kind": "command", "id": uuid.uuid4().hex, "turn": self.turn, "by": self.writer, "command": command,
            "root": str(root),
            "time": time.time(), "before": snap.commit, "skipped": snap.reason or None,
            "modes": self._blob(json.dumps(snap.modes).encode()) if snap.modes else None,
            "seconds": round(snap.seconds, 3), "protected": snap.protected or None,
        }
        self._append(entry)
        self.wrote = True
        return entry

    def after_command(self, entry: dict[str, Any], limits: snapshots.Limits | None = None,
                      policy: PathPolicy | None = None) -> None:
        """Snapshot the workspace again once the command has ended (however it ended)."""
        if entry.get("before") is None:
            return
        from swebash_ai.tools import snapshots

        snap = snapshots.ShadowRepo(self.shadow, Path(entry["root"]), limits, policy).snapshot()
        with _MOVING:  # not between a fork's copy of the record and its ``moved`` line (see move_unsaved)
            self.holder_of(entry["id"])._append({"kind": "command_after", "id": entry["id"], "after": snap.commit,
                                                 "skipped": snap.reason or None, "protected": snap.protected or None,
                                                 **({"new_repos": entry["new_repos"], "time": time.time()}
                                                    if entry.get("new_repos") else {})})

    def holder_of(self, entry_id: str) -> Checkpoints:
        """The store that holds record ``entry_id`` now: this one, or the fork its turn moved to (and on, when
        that fork forked in turn; see :func:`move_unsaved`). A background command ends whenever it ends: its
        after-state must go where its before-state is, which undo reads together."""
        store = self
        for _ in range(_MAX_FORKS):
            moved = next((e for e in store.entries() if e.get("kind") == "moved" and entry_id in (e.get("ids") or ())),
                         None)
            target = moved.get("to") if moved is not None else None
            if not isinstance(target, str) or not _FOLDER.fullmatch(target):  # a name beside it, never a path
                return store
            store = Checkpoints(store.folder.parent / target, store.turn, store.writer)
        return store

    def last_turn(self) -> int:
        """The highest turn number recorded (0 for none)."""
        return max((int(e["turn"]) for e in self.entries() if "turn" in e), default=0)

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
    """What one undo did: the turn reverted and one line per file restored (and per command reverted)."""

    turn: int
    restored: list[str] = field(default_factory=list)
    failed: int = 0
    """Paths that could not be put back (an error on disk): they are listed, and the rest is still done."""

    def summary(self) -> str:
        head = f"Undid the changes of turn {self.turn}" + (
            f" ({_count(self.failed, 'path')} could NOT be restored, see below):" if self.failed else ":")
        return "\n".join([head] + [f"  {line}" for line in self.restored])

    def note_for_model(self) -> str:
        shown = self.restored[:20]  # a command can change thousands of files; the model needs the gist
        more = len(self.restored) - len(shown)
        files = "; ".join(shown) + (f"; and {more} more" if more else "")
        return f"[Note: the user undid your changes from an earlier turn ({files}). Those files are back " \
            "to their state before that turn; read them again before relying on their content.]"


@dataclass
class _Step:
    """One recorded change to one path: how to put back the state before it, how to tell that the path is
    still as it left it."""

    path: str
    restore: Callable[[], str]
    unchanged: Callable[[], bool]
    lost: str | None = None


_Turn = tuple[int, str]
"""A turn in an index: its number in its session, and the run that recorded it (``by``)."""


def _pending(entries: list[dict[str, Any]]) -> dict[_Turn, list[dict[str, Any]]]:
    undos = [e for e in entries if e.get("kind") == "undo"]
    undone = {(int(e["turn"]), str(e["by"])) for e in undos if "by" in e}
    undone_all = {int(e["turn"]) for e in undos if "by" not in e}  # an undo of an older version: the number
    moved = {i for e in entries if e.get("kind") == "moved" for i in e.get("ids") or ()}
    entries = [e for e in entries if e.get("id") not in moved]
    afters = {e["id"]: e for e in entries if e.get("kind") == "command_after"}
    turns: dict[_Turn, list[dict[str, Any]]] = {}
    for e in entries:
        key = (int(e.get("turn", 0)), str(e.get("by", "")))
        if e.get("kind") in ("file", "command") and key not in undone and key[0] not in undone_all:
            if e["kind"] == "command":
                after = afters.get(e["id"], {})
                e = {**e, "after": after.get("after"), "after_skipped": after.get("skipped"),
                     "after_protected": after.get("protected"), "new_repos": after.get("new_repos") or [],
                     "after_time": after.get("time")}
            turns.setdefault(key, []).append(e)
    return turns


def _newest(turns: dict[_Turn, list[dict[str, Any]]], claimed: set[str]) -> _Turn:
    """The turn undo takes: the highest number; of two runs' turns of that number (two runs resumed the session
    and neither has forked yet), the one this session saved, then the later."""
    return max(turns, key=lambda k: (k[0], k[1] in claimed, max(float(e.get("time", 0)) for e in turns[k])))


def _file_step(store: Checkpoints, e: dict[str, Any]) -> _Step:
    path = Path(e["path"])

    def restore() -> str:
        if os.path.realpath(path.parent) != str(path.parent):  # recorded resolved: a link was put in its way
            return "NOT restored (a folder on its way is a link elsewhere now)"
        if e["old"] is None:
            try:
                path.unlink()
            except FileNotFoundError:
                return "already gone"
            return "removed (it did not exist before)"
        data = (store.folder / "blobs" / e["old"]).read_bytes()
        write_atomically(path, data, mode=None if e.get("mode") is None else int(e["mode"]))
        return f"restored ({len(data)} bytes)"

    def unchanged() -> bool:
        cur = _current(path)
        return cur is not None and _sha(cur) == e["new"]

    return _Step(e["path"], restore, unchanged, e.get("lost"))


def _command_steps(store: Checkpoints, e: dict[str, Any]) -> list[_Step]:
    from swebash_ai.tools import snapshots

    root = Path(e["root"])
    repo = snapshots.ShadowRepo(store.shadow, root)
    modes: dict[str, int] = json.loads((store.folder / "blobs" / e["modes"]).read_bytes()) if e.get("modes") else {}

    def step(change: snapshots.Change) -> _Step:
        path = root / change.path
        return _Step(str(path), lambda: snapshots.restore(repo, path, change.before, modes.get(change.path)),
                     lambda: snapshots.matches(path, change.after))

    found = [step(change) for change in repo.changes(e["before"], e["after"])]
    found += [_repo_step(root, Path(p), float(e.get("time", 0)), float(e.get("after_time") or 0))
              for p in e.get("new_repos") or () if isinstance(p, str)]
    before, after = e.get("protected") or {}, e.get("after_protected") or {}
    for rel in sorted(set(before) | set(after)):
        if before.get(rel) != after.get(rel):  # its stat data moved: the command may have changed it
            found.append(_Step(str(root / rel), lambda: "NOT restored", lambda: True,
                               f"not snapshotted: {rel} is protected"))
    return found


def _repo_step(root: Path, repo: Path, started: float, ended: float) -> _Step:
    """Undoing a nested repository a sandboxed command created and the check after the run kept (its config runs
    nothing): the snapshots leave ``.git`` folders out, so it is removed here: its ``.git``, and the folder too
    when everything in it is the command's (nothing older than its start)."""
    from swebash_ai.tools import repo_undo

    return _Step(str(repo / ".git"), lambda: repo_undo.remove(root, repo, started),
                 lambda: repo_undo.unchanged_since(repo, ended))


def _cleared(store: Checkpoints, e: dict[str, Any]) -> bool:
    """Whether the snapshots of command record ``e`` were removed with a store that predates protected-file
    exclusion (:func:`swebash_ai.storage.private_files.tighten_once`)."""
    try:
        when = float((store.folder.parent / private_files.SNAPSHOTS_CLEARED).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return False
    return float(e.get("time", 0)) < when


def _not_snapshotted(e: dict[str, Any]) -> str | None:
    """Why the changes of command record ``e`` cannot be undone (``None``: they can)."""
    if e.get("before") is None:
        return e.get("skipped") or "no snapshot was taken"
    if e.get("after") is None:
        return e.get("after_skipped") or "the state after it was not recorded (was it interrupted?)"
    return None


def undo_last_turn(store: Checkpoints, *, force: bool = False, known: int | None = None) -> UndoResult:
    """Revert the newest turn with changes not yet undone. Raises :class:`UndoRefused` when it cannot.

    ``known``: the turns the conversation of the run asking holds (an app's live session). A turn numbered
    above it was made by another run of the same session after this one loaded it: that run's conversation
    holds it and that run's model must hear of its undo, so it is left alone here."""
    entries = store.entries()
    turns = _pending(entries)
    later = sorted({number for number, _ in turns if known is not None and number > known})
    turns = {key: found for key, found in turns.items() if key[0] not in later}
    if not turns and later:
        session = store.folder.name.removesuffix(".checkpoints")
        raise UndoRefused(
            f"Nothing to undo in this conversation: turn {later[-1]} of session {session} was made by another "
            "swebash-ai on the same session after this one loaded it. Undo it there, or with "
            f"`swebash-ai undo --session {session}`.")
    if not turns:
        raise UndoRefused("Nothing to undo: no changes recorded in this session (or all already undone).")
    turn, by = _newest(turns, {str(e.get("by")) for e in entries if e.get("kind") == "saved"})
    result = UndoResult(turn)
    steps: list[_Step] = []
    blocked: list[str] = []
    for e in turns[turn, by]:
        if e["kind"] == "file":
            steps.append(_file_step(store, e))
            continue
        shown = e["command"] if len(e["command"]) <= 60 else e["command"][:57] + "..."
        why = _not_snapshotted(e)
        if why is not None:
            blocked.append(f"`{shown}` (not snapshotted: {why})")
            result.restored.append(f"command `{shown}`: NOT undone, it was not snapshotted ({why})")
            continue
        try:
            found = _command_steps(store, e)
        except (ToolError, OSError, ValueError) as exc:  # git gone, the snapshot repository deleted...
            why = ("its snapshots were removed when undo stopped storing protected files" if _cleared(store, e)
                   else f"its snapshots cannot be read: {exc}")
            blocked.append(f"`{shown}` ({why})")
            result.restored.append(f"command `{shown}`: NOT undone ({why})")
            continue
        steps += found
        result.restored.append(f"command `{shown}`: " + (f"{_count(len(found), 'path')} it changed put back" if found
                                                         else "it changed no files"))
    first: dict[str, _Step] = {}
    last: dict[str, _Step] = {}
    for step in steps:
        first.setdefault(step.path, step)
        last[step.path] = step
    if not force:
        changed = [p for p, step in last.items() if not step.unchanged()]
        if changed:
            raise UndoRefused(
                "Not undoing: changed since the assistant's turn: " + ", ".join(changed)
                + ". Use --force (/undo --force) to restore it anyway and lose those changes."
            )
        lost = [f"{p} ({step.lost})" for p, step in first.items() if step.lost]
        if lost:
            raise UndoRefused("Cannot undo: the previous content was not saved for " + ", ".join(lost)
                              + ". Use --force to undo the other files of that turn.")
        if blocked:
            raise UndoRefused(f"Cannot undo turn {turn} fully: the changes of the command " + ", ".join(blocked)
                              + " cannot be undone. Use --force to undo the rest of that turn; that command's "
                              "changes stay.")
    for path_s, step in first.items():
        if step.lost:
            result.restored.append(f"{path_s}: NOT restored ({step.lost})")
            continue
        try:
            result.restored.append(f"{path_s}: {step.restore()}")
        except (OSError, ToolError) as exc:  # one path that fails must not leave the others half done
            result.failed += 1
            result.restored.append(f"{path_s}: NOT restored ({exc})")
    store._append({"kind": "undo", "turn": turn, "by": by, "time": time.time(), "force": force, "files": list(first)})
    return result


def move_unsaved(source: Checkpoints, target: Checkpoints) -> int:
    """Hand the entries ``source.writer`` recorded to ``target``: a save forked the session, so the turns not
    saved under the old id (the forking turn, and any whose save failed) belong to the fork alone.

    Another instance may be appending to ``source`` at the same time, so nothing there is rewritten: the
    entries (and the blobs they name) are copied to ``target``, then one ``moved`` line in ``source`` says
    which ids left, and its undo skips them. Copying first means a crash between the two leaves the changes
    undoable in both, never in neither (the second undo then finds the files changed and refuses).
    Returns how many changes moved.
    """
    with _MOVING:
        return _move_unsaved(source, target)


def _move_unsaved(source: Checkpoints, target: Checkpoints) -> int:
    entries = source.entries()
    mine = [e for e in entries if source.writer and e.get("by") == source.writer and e.get("id")]
    ids = {e["id"] for e in mine}
    if not ids:
        return 0
    afters = [e for e in entries if e.get("kind") == "command_after" and e.get("id") in ids]
    for e in mine:
        for blob in (e.get("old"), e.get("modes")):
            if isinstance(blob, str) and _DIGEST.fullmatch(blob):  # a name, never a path out of the folder
                target._blob((source.folder / "blobs" / blob).read_bytes())
    for e in [*mine, *afters]:
        target._append(e)
    source._append({"kind": "moved", "to": target.folder.name, "ids": sorted(ids), "time": time.time()})
    return len(mine)


def checkpoints_for(sessions_dir: Path, session_id: str) -> Checkpoints:
    """The checkpoint store beside ``<sessions_dir>/<session_id>.jsonl``."""
    return Checkpoints(sessions_dir / f"{session_id}.checkpoints")


def _count(n: int, noun: str) -> str:
    """``1 path``, ``3 paths``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
