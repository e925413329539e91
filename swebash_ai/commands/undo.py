"""``swebash-ai undo``: put back the files changed in a saved session's latest turn (docs/undo.md)."""

from __future__ import annotations

import sys
from pathlib import Path

from swebash_ai.agent.conversation import Conversation
from swebash_ai.agent.session_files import find_session
from swebash_ai.errors import ExitCode
from swebash_ai.safety.terminal_text import safe
from swebash_ai.storage.locations import locations
from swebash_ai.tools.checkpoints import UndoRefused, UndoResult, checkpoints_for, undo_last_turn


def run_undo(session: str | None, *, force: bool) -> int:
    """``swebash-ai undo [--session ID] [--force]``: exit 0 when restored, 1 when refused or nothing to undo."""
    try:
        result = undo_saved_session(locations().sessions_dir, session, force=force)
    except UndoRefused as exc:
        print(f"swebash-ai: {exc}", file=sys.stderr)
        return ExitCode.ERROR
    print(safe(result.summary(), visible=True))  # file names the model chose
    return ExitCode.ERROR if result.failed else ExitCode.OK


def undo_saved_session(sessions_dir: Path, session_id: str | None, *, force: bool = False) -> UndoResult:
    """``swebash-ai undo``: undo the newest turn of a saved session (the latest when ``session_id`` is None).

    Raises:
        UndoRefused: no such session (nothing to undo, like a session without changes, exit 1), or see
            :meth:`swebash_ai.session.Session.undo`.
    """
    path = find_session(sessions_dir, session_id)
    if path is None:
        what = f"no saved session matches '{session_id}'" if session_id else "there is no saved session"
        raise UndoRefused(f"Nothing to undo: {what} in {sessions_dir}.")
    conversation = Conversation.load(path)
    result = undo_last_turn(checkpoints_for(sessions_dir, conversation.id), force=force)
    conversation.note_for_next_turn(result.note_for_model())
    conversation.save(path)
    return result
