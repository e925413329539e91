"""Observers of turns: local statistics and (opt-in) OpenTelemetry export.

They subscribe to the events a session yields and to what is already stored (the audit log, saved
sessions); the loop and the tools never import them. Nothing here imports OpenTelemetry unless telemetry
is switched on (:mod:`swebash_ai.observe.otel` is imported only then).
"""

from __future__ import annotations

from typing import Protocol

from swebash_ai.agent.events import AgentEvent


class Observer(Protocol):
    """Sees every event of every turn, in order. Must never raise into the session (the session guards it)."""

    def on_event(self, event: AgentEvent) -> None: ...

    def on_retry(self) -> None: ...

    def end_turn(self) -> None:
        """The turn's generator closed (after its last event, or cut short by Ctrl-C)."""

    def close(self) -> None:
        """The session ends: flush what is buffered, within a short time."""
