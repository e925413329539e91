"""The TUI's side of approval modes and rules: Shift+Tab, ``/rules``, "always allow", the project trust prompt.

Nothing is decided here: the session's gate (``agent/decide.py``) decides; this module changes the mode,
saves or removes rules through the session, and shows what is in force.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from swebash_ai.errors import SwebashError

if TYPE_CHECKING:
    from swebash_ai.agent.events import ApprovalRequest
    from swebash_ai.session import Session


def save_always(app: Any, session: Session, request: ApprovalRequest) -> None:
    """The user chose "always allow this in this workspace": save the rule the dialog showed."""
    from swebash_ai.frontends.tui.screens.confirm import describe_always  # the dialog is loaded: it just answered

    if request.always is None:
        return
    try:
        where = session.save_rule(request.always)
    except SwebashError as exc:
        app.chat.add_error("Rule not saved", exc.message, exc.hint)
        return
    app.chat.add_notice(f"Saved: {describe_always(request.always)} ({where}). /rules lists and removes rules.")


def cycle_mode(app: Any) -> None:
    """Shift+Tab: the next approval mode, shown in the status bar at once."""
    from swebash_ai.agent.decide import MODES

    session = app.session
    if session is None:  # still starting: kept, and given to the session when it is ready
        current = app.status.mode if app.status.mode in MODES else "ask"
        mode = app.pending_mode = MODES[(MODES.index(current) + 1) % len(MODES)]
    else:
        mode = session.set_mode()
    app.status.set_mode(mode)
    hint = {"ask": "asks before what the policy flags",
            "accept-edits": "edits inside the workspace apply without asking",
            "auto": "commands run unasked inside the sandbox; edits apply; catastrophes still ask",
            "plan": "read-only: writes and commands not proven read-only are refused"}[mode]
    app.notify(f"{mode} mode: {hint}", timeout=3)


def apply_pending_mode(app: Any, session: Session) -> None:
    """A mode chosen with Shift+Tab while the session was starting."""
    pending = getattr(app, "pending_mode", None)
    if pending is not None:
        session.set_mode(pending)
        app.pending_mode = None


def cmd_rules(app: Any, session: Session, arg: str) -> None:
    """``/rules`` lists the rules with where each came from; ``/rules remove N`` removes one of yours."""
    from swebash_ai.commands.rules import remove, render_rules

    words = arg.split()
    if words[:1] == ["remove"]:
        if len(words) != 2 or not words[1].isdigit():
            app.chat.add_notice("Usage: /rules remove N (N as /rules lists it).", "warning")
            return
        try:
            done = remove(session.loaded, session.project, int(words[1]))
            session.reload_rules()
        except SwebashError as exc:
            app.chat.add_error("Rule not removed", exc.message, exc.hint)
            return
        app.chat.add_notice(done)
        return
    if words:
        app.chat.add_notice("Usage: /rules, or /rules remove N.", "warning")
        return
    text = render_rules(session.loaded, session.project)
    app.chat.add_info(f"Approval mode: {session.gate.mode} (Shift+Tab changes it)\n{text}", title="Rules")


async def offer_trust(app: Any, session: Session) -> None:
    """At start: a project file that would allow something or run hooks is listed, and trusted if the user says."""
    project = session.project
    if not project.needs_trust or project.path is None:
        return
    from swebash_ai.frontends.tui.screens.trust import TrustScreen

    trusted = await app.push_screen_wait(TrustScreen(str(project.path), project.summary(),
                                                           changed=project.stale))
    if not trusted:
        app.chat.add_notice(f"{project.path}: its ask and deny rules apply; its allow rules and hooks do not "
                            "(trust it with `swebash-ai trust` or on the next start).")
        return
    try:
        session.trust_project()
    except SwebashError as exc:
        app.chat.add_error("Not trusted", exc.message, exc.hint)
        return
    app.chat.add_notice(f"Trusted {project.path}; a change to it or to a file it covers asks again.")
