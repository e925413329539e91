"""The interactive front end (Textual). ``import swebash_ai.frontends.tui`` stays light: textual loads in run_tui."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from swebash_ai.config.file import StartInfo
    from swebash_ai.config.settings import LoadedSettings

__all__ = ["run_tui"]


def run_tui(
    loaded: LoadedSettings | Callable[[], LoadedSettings],
    *,
    cwd: Path,
    resume: str | None = None,
    resume_latest: bool = False,
    start: StartInfo | None = None,
) -> int:
    """Open the interactive app and run it until the user quits; returns the process exit code.

    Args:
        loaded: The settings (``swebash_ai.config.settings.load_settings``), or a function that loads them: it then
            runs after the first frame, which ``start`` (required then) describes.
        start: Theme, model, profile and locations for the first frame (``StartInfo.peek``).
        cwd: Working directory for the tools.
        resume: Resume this saved session id (a unique prefix is enough).
        resume_latest: Resume the newest saved session.
    """
    from swebash_ai.frontends.tui.early_frame import EarlyFrame, driver_class

    # Before Textual loads (~0.3 s): the outline of the screen, so the terminal answers at once.
    early: EarlyFrame | None = None
    if start is not None:
        try:
            early = EarlyFrame.draw(start, cwd)
        except Exception as exc:  # a nicety: never a reason not to start
            logging.getLogger(__name__).debug("no early frame: %s", exc)
    try:
        import asyncio

        from swebash_ai.frontends.tui.app import SwebashApp
        from swebash_ai.frontends.tui.engine import watched_loop

        app = SwebashApp(loaded, cwd=cwd, resume=resume, resume_latest=resume_latest, start=start,
                         driver_class=driver_class(early) if early is not None else None)
        # What ``app.run()`` does, on a loop the engine thread can watch (it gives way while the UI works).
        with asyncio.Runner(loop_factory=watched_loop) as runner:
            result = runner.run(app.run_async())
    finally:
        if early is not None:
            early.close()  # puts the terminal back if Textual never took it over
    if app.return_code not in (None, 0):
        return app.return_code
    return result if isinstance(result, int) else 0
