"""A provider that plays back a script, for loop tests and demos (no HTTP at all).

Each call to :meth:`ScriptedProvider.stream` pops the next scripted response: a list of chunks, an
exception to raise, or a callable that builds the chunks from the request. Requests are recorded.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from swebash_ai.providers.base import Chunk, FinishChunk, Message, TextChunk, ToolCall

Step = list[Chunk] | BaseException | Callable[[list[Message]], list[Chunk]]


def text(content: str, *, pieces: int = 1) -> list[Chunk]:
    """A text answer, split into ``pieces`` deltas."""
    size = max(1, -(-len(content) // pieces))
    chunks: list[Chunk] = [TextChunk(content[i : i + size]) for i in range(0, len(content), size)]
    return [*chunks, FinishChunk("stop")]


def calls(*items: tuple[str, Any] | tuple[str, Any, str], preface: str = "") -> list[Chunk]:
    """Tool calls: ``(name, arguments)`` or ``(name, arguments, id)``; dict arguments are JSON-encoded."""
    out: list[Chunk] = [TextChunk(preface)] if preface else []
    for n, item in enumerate(items):
        args = item[1] if isinstance(item[1], str) else json.dumps(item[1])
        call_id = item[2] if len(item) > 2 else f"call_{n}"
        out.append(ToolCall(str(call_id), item[0], args))
    return [*out, FinishChunk("tool_calls")]


@dataclass
class ScriptedProvider:
    """Plays back ``steps``; ``delay`` seconds between chunks makes cancellation tests possible."""

    steps: list[Step] = field(default_factory=list)
    model: str = "scripted/test"
    delay: float = 0.0
    requests: list[dict[str, Any]] = field(default_factory=list)

    def enqueue(self, *steps: Step) -> None:
        self.steps.extend(steps)

    async def stream(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, tool_choice: str = "auto"
    ) -> AsyncIterator[Chunk]:
        snapshot = json.loads(json.dumps(list(messages)))
        self.requests.append({"messages": snapshot, "tools": list(tools or []), "tool_choice": tool_choice})
        if not self.steps:
            raise AssertionError("scripted provider: script exhausted")
        step = self.steps.pop(0)
        if isinstance(step, BaseException):
            raise step
        chunks = step(snapshot) if callable(step) else step
        for chunk in chunks:
            if self.delay:
                await asyncio.sleep(self.delay)
            yield chunk
