"""``swebash-ai acp``: swebash-ai as an Agent Client Protocol agent (JSON-RPC 2.0 on stdin and stdout).

Any ACP editor (Zed, JetBrains IDEs, Neovim with CodeCompanion, Emacs with agent-shell) starts it and drives
sessions of the same loop, tools and policies as the app; see docs/editors.md. A thin front end, like
``mcp serve``: :mod:`.server` maps requests to session calls, :mod:`.updates` turns the loop's events into
``session/update`` notifications, :mod:`.asking` asks the person through ``session/request_permission`` and
:mod:`.wire` owns the byte stream (stdout carries protocol messages only; logs go to stderr).

The protocol's SDK (``agent-client-protocol``, ``import acp``) is imported here only: no other command loads it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from swebash_ai.config.settings import LoadedSettings


async def serve(load: Callable[[], LoadedSettings], in_fd: int, out_fd: int,
                loaded: LoadedSettings | None = None) -> None:
    """Serve one client until it closes its end; then stop every turn and process and save every session."""
    import asyncio
    import logging
    import signal

    from acp.agent.connection import AgentSideConnection

    from swebash_ai.frontends.acp.server import SwebashAgent
    from swebash_ai.frontends.acp.wire import LineTransport, open_streams

    agent = SwebashAgent(load, loaded)
    agent.warm()
    reader, writer = await open_streams(in_fd, out_fd)
    transport = LineTransport(reader, writer, limit=agent.loaded.settings.acp_message_limit_mb * 1024 * 1024)
    # Typed as the SDK's full Agent protocol; a method not defined here answers "method not found".
    conn = AgentSideConnection(cast(Any, agent), transport, listening=False)
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    if task is not None:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, task.cancel)
    try:
        await conn.listen()
    finally:
        try:
            await asyncio.shield(agent.aclose())
        finally:
            try:
                await conn.close()  # what still runs is cancelled; its answers have nobody to go to
            except Exception as exc:
                logging.getLogger(__name__).info("swebash-ai acp: %s while closing", exc)


def import_sdk() -> None:
    """Import the protocol's SDK without the field docstrings of its models.

    ``acp.schema`` defines some 280 pydantic models with ``use_attribute_docstrings``: for each, pydantic finds
    the class's source and parses it again to copy every field's docstring into its description, which only a
    JSON schema shows. That is a quarter of the SDK's import (0.2 s of CPU, more on a busy machine) in the
    start an editor waits for before its first answer, for words nothing here reads; so the extraction is off
    while the SDK loads (when pydantic keeps it where pydantic 2 does; otherwise the SDK loads as before), and on
    again for every other model.
    """
    import sys

    if "acp.schema" in sys.modules:
        return
    _fields: Any = None
    with contextlib.suppress(ImportError):  # another pydantic layout: loaded as before
        from pydantic._internal import _fields
    name = "extract_docstrings_from_cls"
    original = getattr(_fields, name, None)
    if original is not None:
        setattr(_fields, name, lambda cls, use_inspect=False: {})
    try:
        import acp.schema  # noqa: F401
    finally:
        if original is not None:
            setattr(_fields, name, original)


def run_acp(load: Callable[[], LoadedSettings], loaded: LoadedSettings | None = None) -> int:
    """The ``acp`` command. ``load`` reads the settings (again after ``authenticate``); ``loaded``: read already
    (a broken config file stops before the protocol starts, on stderr, exit code 2)."""
    import asyncio
    import contextlib

    from swebash_ai.frontends.acp.wire import take_stdio

    loaded = loaded or load()
    import_sdk()
    in_fd, out_fd = take_stdio()
    with contextlib.suppress(KeyboardInterrupt, asyncio.CancelledError):
        asyncio.run(serve(load, in_fd, out_fd, loaded))
    return 0
