"""Leaving the process: once the answer is out and everything is written, exit without Python's teardown.

After ``main`` returns, a normal interpreter exit runs the ``atexit`` handlers, flushes stdout and stderr, and
then tears down every module and object one by one: 0.1-0.4 s of CPU for a one-shot answer (more on a loaded
machine), which a script calling ``swebash-ai -c`` in a loop, an editor waiting for ``acp`` to end and the
suite's thousand CLI runs all wait for. Nothing of swebash-ai's needs that teardown: sessions, audit lines and
undo snapshots are written before ``main`` returns (appends are unbuffered, saves atomic), telemetry is flushed
by its observer's ``close`` or its provider's ``atexit`` handler, the spare command supervisor and the shared
network proxy are stopped by theirs.

So :func:`leave` does what the interpreter's exit does that matters, in its order, and then ``os._exit``:
wait for the threads (it only takes the quick way when none but daemons is left: a live worker thread means
Python's own exit, which waits for it), run the ``atexit`` handlers, flush the standard streams. The
interactive app (Textual loaded) keeps Python's exit: it ends once per session, and its terminal handling is
its own.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
from typing import NoReturn


def run() -> NoReturn:
    """The ``swebash-ai`` script and ``python -m swebash_ai``: :func:`~swebash_ai.frontends.cli.main`, then
    :func:`leave` (Python's own exit after the interactive app: see the module docstring)."""
    from swebash_ai.frontends.cli import main

    code = main()
    leave(code, quick="textual.app" not in sys.modules)


def only_daemons_left() -> bool:
    """True when no thread but the main one and daemon threads is alive (Python's exit would wait for none)."""
    main = threading.main_thread()
    return all(t is main or t.daemon or not t.is_alive() for t in threading.enumerate())


def leave(code: int, *, quick: bool = True) -> NoReturn:
    """Exit with ``code``: quickly (see the module docstring) when ``quick`` and nothing is left to wait for,
    else through Python's normal exit."""
    if not quick or not only_daemons_left():
        raise SystemExit(code)
    atexit._run_exitfuncs()  # each handler's exception is printed, as at a normal exit, and the rest still run
    for stream in (sys.stdout, sys.stderr):
        # A reader that left (`swebash-ai -c ... | head -1`) is no error at the end: main stops quietly on a
        # broken pipe, and so does this (Python's exit would print "Exception ignored" and exit 120).
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    os._exit(code)
