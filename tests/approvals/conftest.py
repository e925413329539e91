"""Helpers for the approval-mode, rule and hook tests: a session on the scripted provider, real tools."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.agent.approval import AllowApprover, Decision
from swebash_ai.agent.events import ApprovalRequest, Notice, ToolCallFinished
from swebash_ai.config.settings import load_settings
from swebash_ai.providers import scripted
from swebash_ai.providers.scripted import ScriptedProvider
from swebash_ai.session import Session


class Recorder:
    """An interactive approver that answers from a list (default: deny) and records what it was asked."""

    interactive = True

    def __init__(self, *answers: Decision) -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.asked.append(request)
        return self.answers.pop(0) if self.answers else Decision.DENY


def config(text: str) -> Path:
    path = Path(os.environ["SWEBASH_AI_HOME"]) / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def call_once(name: str, args: dict[str, Any], cwd: Path, approver: Any = None,
              environ: dict[str, str] | None = None) -> tuple[ToolCallFinished, list[Any], Session]:
    """One model turn that makes one call; returns its ToolCallFinished, all events and the session."""
    provider = ScriptedProvider([scripted.calls((name, args)), scripted.text("done")])
    loaded = load_settings(environ=environ) if environ is not None else load_settings()
    session = Session(loaded, approver=approver or Recorder(), cwd=cwd, provider=provider, probe_ollama=False)

    async def go() -> list[Any]:
        return [e async for e in session.run("go")]

    events = asyncio.run(go())
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert len(finished) == 1, events
    return finished[0], events, session


def notices(events: list[Any]) -> list[str]:
    return [e.text for e in events if isinstance(e, Notice)]


def audit_lines(session: Session) -> list[dict[str, Any]]:
    path = session.loaded.locations.audit_log
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def yes() -> AllowApprover:
    return AllowApprover()
