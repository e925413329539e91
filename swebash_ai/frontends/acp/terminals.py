"""The editor's terminals: :class:`~swebash_ai.tools.editor_terminal.EditorTerminals` over ``terminal/create``,
``terminal/wait_for_exit``, ``terminal/output``, ``terminal/kill`` and ``terminal/release``, for a client that
offers them (``clientCapabilities.terminal``).

Only a command a person approved to run unconfined comes here (``tools/editor_terminal.py`` says which); the
terminal is embedded in its tool call as soon as it exists, so the person watches it run. Every request but
the wait for the exit has a time limit of its own; an answer is data (an id that is no string, an exit code
that is no number: an error result, never a guess).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from acp import schema
from acp.exceptions import RequestError

if TYPE_CHECKING:
    from pathlib import Path

    from swebash_ai.tools.editor_terminal import ExitStatus

log = logging.getLogger(__name__)

ANSWER_WAIT = 10.0
"""Seconds the editor has to answer a terminal request (the wait for the exit has the command's timeout)."""
_FAILURES = (RequestError, ConnectionError, ValueError)
"""How a request to the client fails: an error answer, the client gone, an answer that does not parse."""


class ClientTerminals:
    """Terminals of one ACP session's client."""

    def __init__(self, conn: Any, session_id: str, show: Callable[[str, str], Awaitable[None]]) -> None:
        """
        Args:
            conn: The SDK's connection to the client.
            session_id: The ACP session.
            show: Awaited with (the provider's call id, terminal id): embeds the terminal in the call's content.
        """
        self.conn = conn
        self.session_id = session_id
        self.show = show
        self.usable = True

    async def _request(self, what: str, call: Awaitable[Any], wait: float | None = ANSWER_WAIT) -> Any:
        """The answer to one request; ``asyncio.timeout``, not ``wait_for``: a cancel must never be lost."""
        try:
            async with asyncio.timeout(wait):
                return await call
        except _FAILURES as exc:
            raise OSError(f"terminal/{what}: {_said(exc)}") from exc

    async def create(self, call_id: str, argv: list[str], env: dict[str, str], cwd: Path, output_limit: int) -> str:
        response = await self._request("create", self.conn.create_terminal(
            session_id=self.session_id, command=argv[0], args=argv[1:],
            env=[schema.EnvVariable(name=k, value=v) for k, v in env.items()], cwd=str(cwd),
            output_byte_limit=output_limit))
        terminal = getattr(response, "terminal_id", None)
        if not isinstance(terminal, str) or not terminal:
            raise OSError("terminal/create answered without a terminal id")
        try:
            await self.show(call_id, terminal)
        except (ConnectionError, OSError) as exc:
            log.info("swebash-ai acp: could not show the terminal (%s)", exc)
        return terminal

    async def wait(self, terminal_id: str) -> ExitStatus:
        response = await self._request("wait_for_exit", self.conn.wait_for_terminal_exit(
            session_id=self.session_id, terminal_id=terminal_id), wait=None)
        return _status(response)

    async def output(self, terminal_id: str) -> tuple[str, bool, ExitStatus | None]:
        response = await self._request("output", self.conn.terminal_output(session_id=self.session_id,
                                                                           terminal_id=terminal_id))
        text = getattr(response, "output", None)
        if not isinstance(text, str):
            raise OSError("terminal/output answered without output")
        final = getattr(response, "exit_status", None)
        return text, getattr(response, "truncated", False) is True, None if final is None else _status(final)

    async def kill(self, terminal_id: str) -> None:
        await self._request("kill", self.conn.kill_terminal(session_id=self.session_id, terminal_id=terminal_id))

    async def release(self, terminal_id: str) -> None:
        await self._request("release", self.conn.release_terminal(session_id=self.session_id,
                                                                  terminal_id=terminal_id))


def _status(answer: Any) -> ExitStatus:
    code, sig = getattr(answer, "exit_code", None), getattr(answer, "signal", None)
    return (code if isinstance(code, int) and not isinstance(code, bool) else None,
            sig if isinstance(sig, str) and sig else None)


def _said(exc: BaseException) -> str:
    data = getattr(exc, "data", None)
    details = data.get("details") if isinstance(data, dict) else None
    return str(details or exc or type(exc).__name__)
