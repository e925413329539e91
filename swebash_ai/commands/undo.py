"""``swebash-ai undo``: put back the files changed in a saved session's latest turn (docs/undo.md)."""

from __future__ import annotations

import sys

from swebash_ai.errors import ExitCode


def run_undo(session: str | None, *, force: bool) -> int:
    """``swebash-ai undo [--session ID] [--force]``: exit 0 when restored, 1 when refused or nothing to undo."""
    from swebash_ai.session import undo_saved_session
    from swebash_ai.storage.locations import locations
    from swebash_ai.tools.checkpoints import UndoRefused

    try:
        result = undo_saved_session(locations().sessions_dir, session, force=force)
    except UndoRefused as exc:
        print(f"swebash-ai: {exc}", file=sys.stderr)
        return ExitCode.ERROR
    from swebash_ai.safety.terminal_text import safe

    print(safe(result.summary(), visible=True))  # file names the model chose
    return ExitCode.ERROR if result.failed else ExitCode.OK
