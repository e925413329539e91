"""``/ps``: the session's background processes (and language servers) in the chat, stopping one by hand, and a
notice when one exits by itself; ``/diagnostics``.

The processes live on the engine loop (``tools/background.py``); the listing reads plain rows (safe from the
UI thread), a stop runs on the engine loop, like a turn, and an exit's notice is handed to the UI loop.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from swebash_ai.words import count

if TYPE_CHECKING:
    from swebash_ai.session import Session
    from swebash_ai.tools.background import BackgroundProcess, ProcessRow

USAGE = "/ps lists the background processes; /ps stop ID stops one (and everything it started)."


def _age(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


def listing(rows: list[ProcessRow]) -> str:
    """One line per process: id, state, how long it ran, the command."""
    if not rows:
        return "No background processes in this session (the model starts them with run_command background=true)."
    width = max(len(r.state) for r in rows)
    lines = [f"{r.id:<4} {r.state:<{width}}  {_age(r.seconds):>7}  $ {' '.join(r.command.split())}" for r in rows]
    running = sum(1 for r in rows if r.running)
    return "\n".join([*lines, "", f"{running} running. /ps stop ID stops one."])


def watch_exits(app: Any, session: Session) -> None:
    """Show a notice when a background process of ``session`` exits by itself (a crashed dev server should
    not wait for someone to type ``/ps``). Call on the UI loop; the listener runs on the engine loop and
    only schedules the notice. A model or profile switch moves the service, and this listener with it."""
    ui = asyncio.get_running_loop()

    def exited(proc: BackgroundProcess) -> None:
        failed = proc.signal is not None or proc.exit_code != 0
        text = proc.exit_notice() + ". /ps lists the processes."
        with contextlib.suppress(RuntimeError):  # the app has closed its loop: nobody to tell
            ui.call_soon_threadsafe(app.chat.add_notice, text, "warning" if failed else "info")

    session.processes.on_exit = exited


def server_listing(session: Session) -> str:
    """The language servers running for ``session`` (tools/diagnostics.py), one line each; "" when none."""
    svc = session.context.services.get("lsp")
    if svc is None or not (rows := svc.rows()):
        return ""
    lines = [f"{r.name}  {_age(r.seconds):>7} up, {r.busy:.1f}s waited, {count(r.documents, 'file')}  {r.root}"
             for r in rows]
    return "\n".join(["Language servers (" + svc.where + "; stopped with the session or when idle):", *lines])


async def ps_command(app: Any, session: Session, arg: str) -> None:
    """``/ps`` and ``/ps stop ID``."""
    words = arg.split()
    if not words:
        servers = server_listing(session)
        app.chat.add_info(listing(session.processes.rows()) + (f"\n\n{servers}" if servers else ""),
                          title="Background processes")
        return
    if words[0] != "stop" or len(words) != 2:
        app.chat.add_notice(USAGE, "warning")
        return
    svc = session.processes
    proc = svc.get(words[1])
    if proc is None:
        app.chat.add_notice(f"No background process {words[1]!r}. {USAGE}", "warning")
        return
    if not proc.running:
        app.chat.add_notice(f"{proc.id} has already ended: {proc.describe_state()}.")
        return
    await app.engine.call(svc.stop(proc.id, "hand (/ps)"))
    c = proc.containment
    text = f"Stopped {proc.id} ($ {proc.command}): {proc.describe_state()}."
    if c is not None and c.stopped_count:
        text += f" Also stopped: {c.stopped_names()}."
    if c is not None and not c.complete:
        app.chat.add_notice(f"{text} {c.survivors_text()}", "warning")
    else:
        app.chat.add_notice(text)


async def diagnostics_command(app: Any, session: Session, arg: str) -> None:
    """``/diagnostics [PATH]``: the language servers' diagnostics of a file, or of every file checked so far
    (the ``diagnostics`` tool, run for the person; the path guard applies as for the model)."""
    from swebash_ai.tools.diagnostics import diagnostics

    call = diagnostics.invoke(session.context, diagnostics.args_model(path=arg.strip()))
    result = (await app.engine.call(call)).with_secrets_masked()
    if result.ok:
        app.chat.add_info(result.text, title="Diagnostics")
    else:
        app.chat.add_notice(result.text, "warning")
