"""``update_plan``: the model keeps a short checklist of its task that the user sees live.

Contract:
    ``update_plan(plan=[{step, status}], explanation=None)`` replaces the whole plan (Codex's shape) and
    answers with a short acknowledgment. At most one step is ``in_progress``; more is a tool error the
    model can fix. The result carries the plan as a :class:`Plan` in ``metadata["plan"]``: the loop turns
    it into a ``PlanUpdated`` event (shown by every front end) and keeps it in the conversation's metadata,
    so it is saved with the session and shown again on resume. The tool itself touches nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from swebash_ai.tools.registry import JSON, Tool, ToolContext, ToolResult, tool

__all__ = ["TOOLS", "Plan", "PlanItem", "update_plan"]

StepStatus = Literal["pending", "in_progress", "completed"]
MAX_STEPS = 50


@dataclass(frozen=True)
class PlanItem:
    step: str
    status: StepStatus


@dataclass(frozen=True)
class Plan:
    """The model's current plan; ``explanation`` is why it changed (may be empty)."""

    items: tuple[PlanItem, ...]
    explanation: str = ""

    @property
    def done(self) -> int:
        return sum(1 for i in self.items if i.status == "completed")

    def to_json(self) -> dict[str, Any]:
        return {"steps": [{"step": i.step, "status": i.status} for i in self.items], "explanation": self.explanation}

    @classmethod
    def from_json(cls, data: Any) -> Plan | None:
        """A plan read back from a saved session; ``None`` when the data is not one (a hand-edited file)."""
        if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
            return None
        items = []
        for s in data["steps"]:
            if not isinstance(s, dict) or s.get("status") not in ("pending", "in_progress", "completed"):
                return None
            items.append(PlanItem(str(s.get("step", "")), s["status"]))
        return cls(tuple(items), str(data.get("explanation") or ""))

    def lines(self) -> list[str]:
        """The plan as plain checklist lines (one-shot's stderr, notices)."""
        marks = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}
        return [f"{marks[i.status]} {i.step}" for i in self.items]


class Step(BaseModel):
    """One step of the plan."""

    # Built with update_plan's argument model, at its first call, not when the module is imported.
    model_config = ConfigDict(extra="forbid", defer_build=True)

    step: Annotated[str, Field(min_length=1, max_length=300, description="What to do, in a few words.")]
    status: Annotated[StepStatus, Field(description="pending, in_progress (at most one step) or completed.")]


def _describe(args: Any) -> str:
    busy = next((s.step for s in args.plan if s.status == "in_progress"), "")
    done = sum(1 for s in args.plan if s.status == "completed")
    return f"plan: {done}/{len(args.plan)} done" + (f", now: {busy}" if busy else "")


@tool("plan", describe=_describe)
async def update_plan(
    ctx: ToolContext,
    plan: Annotated[list[Step], Field(max_length=MAX_STEPS)],
    explanation: Annotated[str | None, Field(max_length=1000)] = None,
) -> ToolResult | JSON:
    """Set the plan of a multi-step task, shown to the user as a checklist; call again as steps progress.

    Send the whole plan each time: every step with its status. Keep exactly one step in_progress while
    working, mark steps completed as soon as they are done. Do not use it for a one-step request.

    Args:
        plan: The steps in order, each {"step": "...", "status": "pending", "in_progress" or "completed"}.
        explanation: Why the plan changed, in one sentence (optional).
    """
    busy = [s.step for s in plan if s.status == "in_progress"]
    if len(busy) > 1:
        shown = ", ".join(repr(b) for b in busy)
        return ToolResult.error(
            f"At most one step may be in_progress; {len(busy)} are ({shown}). Keep one in_progress, mark the "
            "others pending or completed, and call update_plan again with the whole plan."
        )
    current = Plan(tuple(PlanItem(s.step, s.status) for s in plan), (explanation or "").strip())
    if not plan:
        return ToolResult.success("Plan cleared.", metadata={"plan": current})
    text = f"Plan updated: {current.done} of {len(plan)} steps completed"
    text += f"; in progress: {busy[0]}." if busy else "."
    return ToolResult.success(text, metadata={"plan": current})


TOOLS: list[Tool] = [update_plan]
