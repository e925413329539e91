"""The confirmation modal shown whenever a policy says "ask".

It shows the tool, the full command, path or diff, the working directory and the policy's reasons, and
offers Allow once (y), Allow for this session (a), Always allow here (w: only when the request carries a
rule, which is shown before it is saved), Deny (n; the default, also Esc) and Describe (d), which asks the
model to explain the call in a sentence and shows the answer here.

Everything in it came from the model (or a tool, a server, a file name): terminal control characters are
shown as escapes (``\\x1b[2J``), never sent to the terminal, and a line says they are there, since a
command that holds them is rarely what it looks like.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from textual import events, on, work
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from swebash_ai.agent.approval import Decision
from swebash_ai.agent.events import ApprovalRequest, where_words
from swebash_ai.frontends.tui.shown import shown, styled
from swebash_ai.safety.terminal_text import marked_note, safe
from swebash_ai.words import count

Explainer = Callable[[ApprovalRequest], Awaitable[str]]


def describe_always(rule: dict[str, Any]) -> str:
    """What "always allow" saves, as the dialog shows it before saving."""
    where = ", ".join(rule.get("workspaces", [])) or "everywhere"
    if "prefix" in rule:
        return f"allow `{' '.join(rule['prefix'])}` (and what follows) in {where}"
    return f"allow {rule.get('tool')} in {where}"


def looks_like_diff(text: str) -> bool:
    lines = text.splitlines()
    return any(line.startswith("@@") for line in lines) or (
        any(line.startswith("--- ") for line in lines) and any(line.startswith("+++ ") for line in lines)
    )


def render_detail(text: str) -> Content:
    """The command or path as plain text; a unified diff with added/removed lines coloured by the theme."""
    text = safe(text, visible=True)
    if not looks_like_diff(text):
        return styled(text)
    parts: list[Content] = []
    for line in text.splitlines():
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "$text-success"
        elif line.startswith("-"):
            style = "$text-error"
        elif line.startswith("@@"):
            style = "$text-accent"
        else:
            style = ""
        parts.append(styled(line, style))
    return Content("\n").join(parts)


class AnswerButtons(Horizontal):
    """The dialog's answer buttons: one row when they fit, else two columns, else one.

    Five buttons take 90 columns; in an 80-column terminal a row cut the last ones off the dialog's edge,
    and a choice one cannot see is one a person cannot trust they are making.
    """

    GAP = 2  # the buttons' right margin in a row, and the gutter between columns (app.tcss)
    MIN = 16  # a Button's min-width; a compact one is its label plus one column each side

    def _widths(self) -> list[int]:
        return [max(self.MIN, Content(str(b.label)).cell_length + 2) for b in self.query(Button)]

    def columns(self, width: int) -> int:
        """0 for one row, else how many columns of buttons fit in ``width`` cells."""
        widths = self._widths()
        if sum(widths) + self.GAP * (len(widths) - 1) <= width:
            return 0
        return 2 if max(widths[0::2]) + self.GAP + max(widths[1::2], default=0) <= width else 1

    def on_resize(self, event: events.Resize) -> None:
        columns = self.columns(event.size.width)
        self.set_class(columns == 2, "-two-columns")
        self.set_class(columns == 1, "-one-column")


class ConfirmScreen(ModalScreen[Decision]):
    """Asks the user about one tool call; dismisses with a :class:`Decision`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "decide('allow_once')", "Allow once"),
        Binding("a", "decide('allow_session')", "Allow for session"),
        Binding("o", "outside", "Allow once, outside the sandbox", show=False),
        Binding("w", "always", "Always allow here", show=False),
        Binding("n,escape", "decide('deny')", "Deny"),
        Binding("d", "describe", "Describe"),
        Binding("left", "app.focus_previous", show=False),
        Binding("right", "app.focus_next", show=False),
    ]

    def __init__(self, request: ApprovalRequest, explain: Explainer | None = None) -> None:
        super().__init__(classes="confirm")  # no id: the previous question may still be leaving the stack
        self.request = request
        self._explain = explain
        self.explanation = Static(id="explanation")

    def compose(self) -> Any:
        req = self.request
        reasons = [safe(r, visible=True) for r in req.verdict.reasons] or ["a safety rule asks for confirmation"]
        hidden, invisible = req.hidden()
        with Vertical(id="confirm-dialog"):
            yield Static(Content.assemble("Allow ", shown(req.tool, "bold"), "?"), id="confirm-title")
            if hidden:
                yield Static(Content.styled(
                    f"⚠ holds {count(hidden, 'terminal control sequence')}, shown as \\x.. escapes: it may not be "
                    "what it seems", "$text-error bold"), id="confirm-controls")
            if invisible:
                yield Static(Content.styled(f"⚠ {marked_note(invisible)}", "$text-error bold"),
                             id="confirm-invisible")
            if req.heading is not None:  # a command is its own summary: say it once
                yield Static(shown(req.heading), id="confirm-summary")
            with VerticalScroll(id="confirm-detail"):
                yield Static(render_detail(req.detail), id="confirm-detail-text")
            yield Static(Content.assemble(("in ", "dim"), shown(req.cwd)), id="confirm-cwd")
            yield Static(styled("\n".join(f"• {r}" for r in reasons)), id="confirm-reasons")
            if where := where_words(req):
                yield Static(Content.styled(safe(where, visible=True), "dim"), id="confirm-sandbox")
            if req.always is not None:
                yield Static(Content.assemble(("w saves a rule: ", "dim"), safe(describe_always(req.always),
                                                                                 visible=True)), id="confirm-always")
            yield self.explanation
            with AnswerButtons(id="confirm-buttons"):
                yield Button("Allow once (y)", id="allow_once", variant="warning", compact=True)
                # fetch_url's session approval covers the host, not the URL: the button says so
                per_host = req.tool == "fetch_url"
                yield Button("Allow this host for session (a)" if per_host else "Allow for session (a)",
                             id="allow_session", compact=True)
                if req.always is not None:
                    yield Button("Always here (w)", id="allow_always", compact=True)
                if req.sandboxed:
                    yield Button("Outside sandbox (o)", id="allow_outside", compact=True)
                yield Button("Deny (n)", id="deny", variant="primary", compact=True)
                yield Button("Describe (d)", id="describe", compact=True)

    def on_mount(self) -> None:
        self.explanation.display = False
        self.query_one("#deny", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "describe":
            self.action_describe()
        elif event.button.id:
            self.action_decide(event.button.id)

    def action_decide(self, choice: str) -> None:
        self.dismiss(Decision(choice))

    def action_outside(self) -> None:
        if self.request.sandboxed:  # only offered when a yes would keep the command in the sandbox
            self.dismiss(Decision.ALLOW_OUTSIDE)

    def action_always(self) -> None:
        if self.request.always is not None:  # only offered when the dialog shows the rule it saves
            self.dismiss(Decision.ALLOW_ALWAYS)

    def action_describe(self) -> None:
        self.explanation.display = True
        if self._explain is None:
            self.explanation.update("No model is configured to explain this call.")
            return
        self.explanation.update("Asking the model what this does…")
        self._describe()

    @work(exclusive=True, group="describe", exit_on_error=False)
    async def _describe(self) -> None:
        assert self._explain is not None
        try:
            text = await self._explain(self.request)
        except Exception as exc:  # the modal must stay usable whatever the model does
            text = f"(could not get an explanation: {exc})"
        self.explanation.update(Content(safe(text)))
