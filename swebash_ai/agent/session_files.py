"""The saved sessions of a folder: listing them (newest first, with their titles), and finding one by id.

A session is one JSONL file (``<id>.jsonl``) whose first line is its header (``{"meta": ...}``) and whose
other lines are its messages (:meth:`~swebash_ai.agent.conversation.Conversation.save` writes it).
"""

from __future__ import annotations

import dataclasses
import glob
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swebash_ai.agent.conversation import TITLE_RULE, TYPED, is_note_only, is_session_id, title_of
from swebash_ai.errors import ConfigError
from swebash_ai.providers.base import Message


@dataclass(frozen=True)
class SessionInfo:
    id: str
    path: Path
    title: str
    updated: float


def list_sessions(folder: Path, limit: int = 50, *, titles: bool = True) -> list[SessionInfo]:
    """Saved sessions, newest first (reads each file's first line; ``titles``: and, for a session saved by an
    older version, its first messages, see :func:`_listed_title`)."""
    if not folder.is_dir():
        return []
    found: list[tuple[SessionInfo, dict[str, Any]]] = []
    for path in folder.glob("*.jsonl"):
        try:
            with path.open(encoding="utf-8", errors="replace") as fh:  # a damaged line is skipped, not fatal
                meta = json.loads(fh.readline()).get("meta", {})
            info = SessionInfo(str(meta.get("id", path.stem)), path, str(meta.get("title", "")),
                               float(meta.get("updated", path.stat().st_mtime)))
        except (OSError, ValueError, AttributeError):
            continue
        found.append((info, meta))
    found.sort(key=lambda s: s[0].updated, reverse=True)
    shown = found[:limit]
    if titles:  # only the sessions listed are read further
        return [dataclasses.replace(info, title=_listed_title(info, meta)) for info, meta in shown]
    return [info for info, _ in shown]


_TITLE_LINES = 16
"""How many messages of an older session :func:`_listed_title` reads at most, looking for the first typed one."""


def _listed_title(info: SessionInfo, meta: dict[str, Any]) -> str:
    """The title to list for a session: the saved one, unless an older version made it (no :data:`TITLE_RULE`),
    in which case the title of today's rule (:attr:`Conversation.title`) from the first messages, without
    rewriting the file.

    Bounded: at most :data:`_TITLE_LINES` messages are read. When they do not settle it (no typed message among
    them, while later ones could hold one), and for a compacted session (its first messages are gone, and
    with them the question it began with), the saved title is kept.
    """
    if meta.get(TITLE_RULE) or meta.get("compactions"):
        return info.title
    users: list[Message] = []
    try:
        with info.path.open(encoding="utf-8", errors="replace") as fh:
            fh.readline()  # the header
            for _ in range(_TITLE_LINES):
                line = fh.readline()
                if not line:
                    break
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if (not isinstance(msg, dict) or msg.get("role") != "user" or not isinstance(msg.get("content"), str)
                        or is_note_only(msg)):
                    continue
                if msg.get(TYPED):
                    return title_of(msg["content"])
                users.append(msg)
            else:
                return info.title  # more messages than read: a typed one may follow
    except OSError:
        return info.title
    return title_of(users[0]["content"]) if users else info.title  # before the typed mark: any user message


def find_session(folder: Path, session_id: str | None) -> Path | None:
    """The file of ``session_id`` (a unique prefix is enough), or the newest session when ``None``."""
    if session_id is not None and not is_session_id(session_id):
        return None
    sessions = list_sessions(folder, limit=10_000, titles=False)
    if session_id is None:
        return sessions[0].path if sessions else None
    matches = [s for s in sessions if s.id == session_id] or [s for s in sessions if s.id.startswith(session_id)]
    return matches[0].path if len(matches) == 1 else None


def damaged_session(folder: Path, session_id: str) -> Path | None:
    """A file of ``session_id`` (or a prefix) that :func:`list_sessions` cannot read: its first line is not a
    session header (a torn write by an older version, another program, a disk error)."""
    if not is_session_id(session_id):
        return None
    readable = {s.path for s in list_sessions(folder, limit=10_000, titles=False)}
    damaged = sorted(p for p in folder.glob(f"{glob.escape(session_id)}*.jsonl") if p not in readable)
    return damaged[0] if len(damaged) == 1 else None


def locate_session(folder: Path, session_id: str | None) -> Path:
    """The file of ``session_id`` (a unique prefix is enough; the newest session when ``None``); raises
    :class:`ConfigError` saying why there is none (no match, none yet, or a file without a session header)."""
    path = find_session(folder, session_id)
    if path is not None:
        return path
    damaged = damaged_session(folder, session_id) if session_id else None
    if damaged is not None:
        raise ConfigError(
            f"{damaged} has no session header, so session '{session_id}' cannot be read.",
            title="Damaged session",
            hint="Other sessions are unaffected; move this file away to stop seeing it.",
        )
    what = f"None matches '{session_id}'" if session_id else "There is none yet"
    raise ConfigError(f"{what} in {folder}.", title="No saved session")
