"""The headless agent: the tool-calling loop, its events, the conversation, approval and audit."""

from __future__ import annotations

from swebash_ai.agent.approval import AllowApprover, Approver, Decision, DenyApprover, SessionApprovals
from swebash_ai.agent.conversation import Conversation
from swebash_ai.agent.events import (
    AgentEvent,
    ApprovalRequest,
    ApprovalRequested,
    Notice,
    PlanUpdated,
    TextDelta,
    ToolCallFinished,
    ToolCallRunning,
    ToolCallStarted,
    ToolCallWaiting,
    ToolOutput,
    TurnFailed,
    TurnFinished,
    Usage,
)
from swebash_ai.agent.limits import LoopLimits
from swebash_ai.agent.loop import Agent

__all__ = [
    "Agent",
    "AgentEvent",
    "AllowApprover",
    "ApprovalRequest",
    "ApprovalRequested",
    "Approver",
    "Conversation",
    "Decision",
    "DenyApprover",
    "LoopLimits",
    "Notice",
    "PlanUpdated",
    "SessionApprovals",
    "TextDelta",
    "ToolCallFinished",
    "ToolCallRunning",
    "ToolCallStarted",
    "ToolCallWaiting",
    "ToolOutput",
    "TurnFailed",
    "TurnFinished",
    "Usage",
]
