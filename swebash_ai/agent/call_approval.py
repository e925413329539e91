"""The approval of one tool call and its audit line: how the loop settles an ``ask`` and records the outcome.

Contract:
    :func:`settle_ask` turns an ``ask`` verdict into ``(None, who)`` when the call may run, or ``(result, who)``
    where ``result`` is what the model reads instead (a denial, or an error when what was shown changed while
    the person decided). It never raises for a refusal: a refusal is a value (docs/architecture.md).
    :func:`audit_call` writes the one audit line of a finished call, saying which rule or answer allowed it.

Why a module of its own: the question is the one place where the loop waits for a person, and its rules (a
session approval covers it, ``confirm`` off still asks about a catastrophe, one question at a time and in call
order, a stale approval runs nothing) are read and changed apart from the streaming and batching of the loop itself.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from swebash_ai.agent.approval import Approver, Decision, SessionApprovals
from swebash_ai.agent.audit import AuditLog
from swebash_ai.agent.decide import Gate
from swebash_ai.agent.events import AgentEvent, ApprovalRequest, ApprovalRequested
from swebash_ai.providers.base import ToolCall
from swebash_ai.safety.verdict import Verdict
from swebash_ai.tools.registry import ToolContext, ToolResult

__all__ = ["Approving", "audit_call", "settle_ask"]


class Approving(Protocol):
    """What settling a question and writing its audit line read of the agent (:class:`~swebash_ai.agent.loop.Agent`
    is one): this module sits below the loop, which calls it."""

    @property
    def approver(self) -> Approver: ...
    @property
    def session_approvals(self) -> SessionApprovals: ...
    @property
    def confirm(self) -> bool: ...
    @property
    def context(self) -> ToolContext: ...
    @property
    def gate(self) -> Gate: ...
    @property
    def approval_lock(self) -> asyncio.Lock: ...
    @property
    def audit(self) -> AuditLog | None: ...


async def settle_ask(
    agent: Approving,
    emit: Callable[[AgentEvent], None],
    call: ToolCall,
    tool: str,
    verdict: Verdict,
    summary: str,
    detail: str,
    key: str | None,
    arguments: dict[str, Any],
    unchanged: Callable[[], bool] | None = None,
    *,
    asking: Callable[[], AbstractAsyncContextManager[None]] | None = None,
) -> tuple[ToolResult | None, str]:
    """Settle an ``ask``: (``None`` when allowed, else the result the model reads; who decided).

    A denial is the only ``denied`` result, so the caller can count what the person refused.

    Args:
        agent: Whose approver, session approvals, rules and approval lock answer.
        emit: Where the :class:`ApprovalRequested` event goes (the turn's event stream).
        unchanged: Whether what was shown is still what would happen, once the person answered.
        asking: Holds the question in the call's turn (:meth:`~swebash_ai.agent.question_order.Place.asking`);
            without it, the question only waits for the agent's approval lock.
    """
    if agent.session_approvals.covers(tool, key):
        return None, "session"
    if not agent.confirm and not verdict.severe:  # a catastrophe still needs a person
        return None, "no-confirm"
    request = ApprovalRequest(
        call_id=call.id,
        tool=tool,
        summary=summary,
        detail=detail,
        cwd=str(agent.context.cwd),
        verdict=verdict,
        arguments=arguments,
        always=agent.gate.propose(tool, arguments, verdict),
        **_where(agent, tool, arguments, verdict),
    )
    async with asking() if asking is not None else agent.approval_lock:  # one question at a time, in call order
        emit(ApprovalRequested(request))
        answer = await agent.approver.decide(request)
    if answer is Decision.DENY:
        reasons = "; ".join(verdict.reasons)
        if agent.approver.interactive:
            msg, by = f"The user denied {summary}. Do not retry it; ask the user what to do instead.", "user"
        elif verdict.severe:
            msg = (
                f"Not run: {summary} could be catastrophic ({reasons}); --yes never covers that. "
                "The user must approve it at a terminal or run it themselves."
            )
            by = "non-interactive"
        else:
            why = getattr(agent.approver, "reason", "no one could approve it")
            msg, by = f"Not run: {summary} needs the user's approval ({reasons}), and {why}.", "non-interactive"
        return ToolResult.denied(msg), by
    if unchanged is not None and not unchanged():
        # What was shown (a diff, a command) is no longer what would run: the file changed while the user
        # was deciding. Approval covers what was seen, so nothing runs, and nothing is remembered.
        return ToolResult.error(
            f"Not run: {summary} changed while the user was deciding (the target was modified "
            "meanwhile), so what was approved is no longer what would happen. Nothing was done; "
            "read the target again and call the tool again if it is still needed."
        ), "stale-approval"
    if answer is Decision.ALLOW_OUTSIDE:
        return None, OUTSIDE if request.sandboxed and agent.approver.interactive else "user"  # else: nothing to leave
    if answer is Decision.ALLOW_SESSION:
        agent.session_approvals.remember(tool, key)
    if not agent.approver.interactive:
        return None, getattr(agent.approver, "reason", "approver")
    # "user-session": allowed for the rest of the session (later calls say "session")
    return None, "user-session" if answer is Decision.ALLOW_SESSION else "user"


OUTSIDE = "user-outside"
"""Who decided, when a person allowed a command once outside the sandbox."""


def _where(agent: Approving, tool: str, arguments: dict[str, Any], verdict: Verdict) -> dict[str, Any]:
    """Where a yes runs this call, for the question (:func:`~swebash_ai.agent.events.where_words`): the request's
    ``sandboxed``, ``runs``, ``effects`` and ``unconfined_why``. A plain yes keeps a command in the sandbox;
    leaving it is the answer :attr:`~swebash_ai.agent.approval.Decision.ALLOW_OUTSIDE`, even for a call that
    asked to leave. With no working backend a yes runs it unconfined (and its result says so): the question must
    not promise a sandbox."""
    settings = agent.context.settings
    if tool != "run_command" or verdict.rule == "sandbox.host":
        return {}
    if settings.exec_sandbox == "none":
        return {"runs": "unconfined", "unconfined_why": "exec_sandbox is none"}
    from swebash_ai.sandbox.confine import backend_setting, policy_for
    from swebash_ai.sandbox.detect import choose

    choice = choose(backend_setting(settings))
    strict = settings.exec_sandbox in ("all", "bwrap")
    if not choice.ok:
        if strict or backend_setting(settings) != "auto":  # refused, not run unconfined: the result says so
            return {}
        return {"runs": "unconfined", "unconfined_why": f"no sandbox works here ({choice.problem})"}
    effects: tuple[str, ...] = ()
    try:
        from swebash_ai.sandbox.foresee import foresee
        from swebash_ai.tools.guard import path_policy_of

        files = agent.context.services.get("read_only_files")
        policy = policy_for(path_policy_of(agent.context), settings, files() if callable(files) else ())
        cwd = str(agent.context.cwd)
        if isinstance(arguments.get("cwd"), str):
            cwd = os.path.normpath(os.path.join(cwd, os.path.expanduser(arguments["cwd"])))
        effects = tuple(foresee(str(arguments.get("command", "")), cwd, policy, backend=choice.backend or "",
                                asks_hosts=agent.approver.interactive))
    except (OSError, ValueError):  # a word the guard cannot resolve: the question stays, without the forecast
        effects = ()
    return {"sandboxed": not strict, "runs": "sandbox", "effects": effects}


def audit_call(agent: Approving, call: ToolCall, arguments: Any, decision: str, decided_by: str,
               result: ToolResult) -> None:
    """The audit line of a finished call (nothing without an audit log)."""
    if agent.audit is None:
        return
    agent.audit.record(
        tool=call.name,
        call_id=call.id,
        arguments=arguments,
        decision=decision,
        decided_by=decided_by,
        outcome=result.status,
        exit_code=result.exit_code,
        **({"sandbox": result.metadata["sandbox"]} if "sandbox" in result.metadata else {}),
        **({"sandbox_blocked": result.metadata["sandbox_blocked"]} if "sandbox_blocked" in result.metadata else {}),
        duration=round(result.duration, 3),
    )
