"""Approval: the policy decides *whether* to ask, an injected :class:`Approver` decides *how*.

A refusal is a value (:attr:`Decision.DENY`), never an exception: the loop turns it into a tool result the
model reads. Front ends provide approvers (a TUI modal, a terminal prompt); this module has the ones that
need no person: deny everything (no terminal) and allow everything (``--yes``).

The same object carries the model's questions to the user (``ask_user``): an approver that can reach a
person has ``async ask(question: Question) -> Answer``; the ones here answer at once that nobody can.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from swebash_ai.agent.events import ApprovalRequest
from swebash_ai.errors import SwebashError
from swebash_ai.providers.base import Provider, TextChunk

if TYPE_CHECKING:  # the ask_user tool loads when the model first calls it
    from swebash_ai.tools.ask import Answer, Question


class Decision(enum.Enum):
    ALLOW_ONCE = "allow_once"
    ALLOW_SESSION = "allow_session"
    ALLOW_ALWAYS = "allow_always"
    """Allow, and save the request's ``always`` rule (the front end saves it, then answers ALLOW_ONCE)."""
    ALLOW_OUTSIDE = "allow_outside"
    """Allow once, outside the sandbox, with all of the user's rights (offered when ``request.sandboxed``)."""
    DENY = "deny"


@runtime_checkable
class Approver(Protocol):
    """Decides about one call that a policy flagged. ``interactive`` is false when nobody can answer."""

    interactive: bool

    async def decide(self, request: ApprovalRequest) -> Decision: ...


class DenyApprover:
    """No one to ask (pipes, CI): everything that needs approval is denied."""

    interactive = False
    reason = "no terminal to ask for approval; pass --yes to allow it"

    async def decide(self, request: ApprovalRequest) -> Decision:
        return Decision.DENY

    async def ask(self, question: Question) -> Answer:
        from swebash_ai.tools.ask import nobody_can_answer

        return nobody_can_answer("no terminal to ask on")


class AllowApprover:
    """``--yes``: allow what needs approval, except a *severe* call (``rm -rf ~``...), which needs a person.

    A flag typed for "clean the build directory" must not cover a model's ``rm -rf ~``. What the policy
    always denies never reaches an approver at all.
    """

    interactive = False
    reason = "--yes"

    async def decide(self, request: ApprovalRequest) -> Decision:
        return Decision.DENY if request.verdict.severe else Decision.ALLOW_ONCE

    async def ask(self, question: Question) -> Answer:
        from swebash_ai.tools.ask import nobody_can_answer

        return nobody_can_answer("--yes runs without questions")


class SessionApprovals:
    """ "Allow for this session" memory: exact keys given by each tool (see ``Tool.session_key``)."""

    def __init__(self) -> None:
        self._keys: set[tuple[str, str]] = set()

    def remember(self, tool: str, key: str | None) -> None:
        if key is not None:
            self._keys.add((tool, key))

    def covers(self, tool: str, key: str | None) -> bool:
        return key is not None and (tool, key) in self._keys

    def clear(self) -> None:
        self._keys.clear()

    def __len__(self) -> int:
        return len(self._keys)


async def explain_call(provider: Provider | None, request: ApprovalRequest) -> str:
    """Ask the model to explain in one sentence what a call will do (the "Describe" choice)."""
    if provider is None:
        return "No model is configured to explain this call."
    prompt = [
        {"role": "system", "content": "You explain shell commands and file operations to a cautious user."},
        {
            "role": "user",
            "content": f"In one or two plain sentences, what will this {request.tool} call do, and what could "
            f"go wrong? Working directory: {request.cwd}\n\n{request.detail}",
        },
    ]
    parts: list[str] = []
    try:
        async for chunk in provider.stream(prompt, None):
            if isinstance(chunk, TextChunk):
                parts.append(chunk.text)
    except SwebashError as exc:
        return f"(could not get an explanation: {exc.message})"
    return "".join(parts).strip() or "(the model gave no explanation)"
