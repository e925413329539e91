"""One line per turn in ``turns.jsonl`` (the state folder): what the audit log cannot say about a turn.

The audit log already has one line per tool call (tool, decision, who decided, outcome, duration). A turn
adds the model side: each request's latency, retries, tokens and cost, the number of tool rounds and how
the turn ended. ``swebash-ai stats`` reads both. A turn's line is written when the session says the turn is
over (:meth:`TurnRecorder.end_turn`, after it saved the turn), not at its last event: a save that forks the
session gives the turn a new session id, set on :attr:`TurnRecorder.session_id` before the line is written.
Appends are one ``write`` of a whole line, like the audit log, so two sessions never interleave; a failure to
write is logged and never breaks a turn.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from swebash_ai.agent import events as ev
from swebash_ai.storage import private_files

log = logging.getLogger(__name__)


class TurnRecorder:
    """Collects a turn's figures from its events and appends them when the turn ends."""

    def __init__(self, path: Path, session_id: str = "", model: str = "") -> None:
        self.path = path
        self.session_id = session_id
        self.model = model
        self._reset()

    def _reset(self) -> None:
        self._requests: list[list[Any]] = []
        self._retries = 0
        self._tool_calls = 0
        self._prompt = 0
        self._completion = 0
        self._cached = 0
        self._cost: float | None = None
        self._lsp = [0, 0.0, 0]  # checks after edits, seconds waited for language servers, timeouts
        self._active = False
        self._ended: str | None = None  # how the turn ended, once its last event came
        self._agents: dict[str, dict[str, Any]] = {}  # helper agents (task calls): their own figures, by name

    def on_retry(self) -> None:
        self._retries += 1

    def on_event(self, event: ev.AgentEvent) -> None:
        self._active = True
        if type(event) is ev.TextDelta:  # nearly every event of a turn, and nothing it counts
            return
        if isinstance(event, ev.SubagentEvent):
            self._nested(event)
        elif isinstance(event, ev.ModelRequest):
            self.model = event.model or self.model
            first = None if event.first_token_seconds is None else round(event.first_token_seconds, 4)
            self._requests.append([round(event.seconds, 4), event.tool_calls, event.ok, first])
        elif isinstance(event, ev.ToolCallStarted):
            self._tool_calls += 1
        elif isinstance(event, ev.ToolCallFinished) and isinstance(diag := event.result.metadata.get("diagnostics"),
                                                                   dict) and diag.get("status") not in ("none", None):
            self._lsp[0] += 1
            self._lsp[1] += float(diag.get("seconds") or 0.0)
            self._lsp[2] += diag.get("status") == "timeout"
        elif isinstance(event, ev.Usage):
            self._prompt += event.prompt_tokens
            self._completion += event.completion_tokens
            self._cached += event.cached_tokens
            if event.cost is not None:
                self._cost = (self._cost or 0.0) + event.cost
        elif isinstance(event, ev.TurnFinished):
            self._ended = event.reason
        elif isinstance(event, ev.TurnFailed):
            self._ended = "failed"

    def _nested(self, event: ev.SubagentEvent) -> None:
        """A helper's figures go to its agent's entry; its tokens and cost are the turn's too (it spent them)."""
        name = event.agent
        inner = event.event
        while isinstance(inner, ev.SubagentEvent):
            name, inner = inner.agent, inner.event
        mine = self._agents.setdefault(name, {"runs": 0, "requests": 0, "tool_calls": 0, "prompt_tokens": 0,
                                              "completion_tokens": 0, "cost": None})
        if isinstance(inner, ev.ModelRequest):
            mine["requests"] += 1
        elif isinstance(inner, ev.ToolCallStarted):
            mine["tool_calls"] += 1
        elif isinstance(inner, ev.TurnFinished | ev.TurnFailed):
            mine["runs"] += 1
        elif isinstance(inner, ev.Usage):
            mine["prompt_tokens"] += inner.prompt_tokens
            mine["completion_tokens"] += inner.completion_tokens
            self._prompt += inner.prompt_tokens
            self._completion += inner.completion_tokens
            self._cached += inner.cached_tokens
            if inner.cost is not None:
                mine["cost"] = (mine["cost"] or 0.0) + inner.cost
                self._cost = (self._cost or 0.0) + inner.cost

    def end_turn(self) -> None:
        """Write the turn's line (``cancelled`` for a turn that never got to its end: Ctrl-C between events)."""
        if self._ended is not None:
            self._write(self._ended)
        elif self._active:
            self._write("cancelled")

    def close(self) -> None:
        self.end_turn()

    def _write(self, reason: str) -> None:
        entry = {
            "time": round(time.time(), 3),
            "session": self.session_id,
            "model": self.model,
            "reason": reason,
            "rounds": sum(1 for r in self._requests if r[1] > 0),
            "requests": self._requests,
            "retries": self._retries,
            "tool_calls": self._tool_calls,
            "prompt_tokens": self._prompt,
            "completion_tokens": self._completion,
            "cached_tokens": self._cached,
            "cost": self._cost,
            **({"agents": self._agents} if self._agents else {}),
            **({"lsp": [self._lsp[0], round(self._lsp[1], 3), self._lsp[2]]} if self._lsp[0] else {}),
        }
        self._reset()
        line = json.dumps(entry, separators=(",", ":")) + "\n"
        try:
            with private_files.open_append(self.path) as fh:
                fh.write(line.encode("utf-8"))
        except OSError as exc:
            log.warning("cannot write the turn statistics %s: %s", self.path, exc)
