"""Helpers for driving the app with Pilot."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from textual.app import App

from swebash_ai.frontends.tui.widgets.chat import ChatPane


class ChatHost(App[None]):
    """An app holding just a chat pane (``#chat``)."""

    def compose(self) -> Any:
        yield ChatPane(id="chat")


async def wait_for(pilot: Any, predicate: Callable[[], bool], timeout: float = 10.0, what: str = "") -> None:
    """Let the app run until ``predicate()`` holds (fails the test after ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or predicate}")
        await pilot.pause(0.02)


async def type_and_send(pilot: Any, text: str) -> None:
    """Put ``text`` in the prompt and press Enter."""
    prompt = pilot.app.prompt
    prompt.load_text(text)
    await pilot.press("enter")


async def idle(pilot: Any) -> None:
    await wait_for(pilot, lambda: pilot.app.session_ready.is_set() and not pilot.app.busy, what="idle app")

