"""The model's plan (``update_plan``) as a compact checklist between the panes and the prompt.

Hidden until the model makes a plan; a plan with no steps hides it again. Colours come from the theme.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.content import Content
from textual.widgets import Static

if TYPE_CHECKING:
    from swebash_ai.tools.plan import Plan

_MARKS = {"completed": ("✓ ", "$text-success"), "in_progress": ("▸ ", "bold $text-accent"), "pending": ("○ ", "")}


def render_plan(plan: Plan) -> Content:
    lines = []
    for item in plan.items:
        mark, style = _MARKS[item.status]
        text = Content(" ".join(item.step.split()))
        if item.status == "pending":
            lines.append(Content.assemble((mark, "$text-muted"), text))
        elif item.status == "completed":
            lines.append(Content.assemble((mark, style), text.stylize("$text-muted")))
        else:
            lines.append(Content.assemble((mark, style), text.stylize(style)))
    if plan.explanation:
        lines.append(Content.styled(" ".join(plan.explanation.split()), "italic $text-muted"))
    return Content("\n").join(lines)


class PlanPanel(Static):
    """The current plan; ``plan`` is what it shows (``None``: hidden)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.plan: Plan | None = None
        self.display = False

    def show(self, plan: Plan | None) -> None:
        self.plan = plan if plan is not None and plan.items else None
        self.display = self.plan is not None
        if self.plan is not None:
            self.border_title = f"Plan {self.plan.done}/{len(self.plan.items)}"
            self.update(render_plan(self.plan))
