"""The events a turn produces. Frozen values; front ends only consume them, never reach into the loop."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from swebash_ai.errors import SwebashError
from swebash_ai.safety.terminal_text import hidden_in
from swebash_ai.safety.verdict import Verdict

if TYPE_CHECKING:  # field types only: importing events must not import the tools
    from swebash_ai.tools.plan import Plan
    from swebash_ai.tools.registry import ToolResult


SANDBOX_NOTE = "runs in the sandbox: the workspace writable, your keys hidden, no network but allowed hosts"
"""What a question about a command a yes would confine says, in every front end (each adds its key for
"outside the sandbox")."""


def where_words(request: ApprovalRequest, yes: str = "y", outside: str = "o") -> str:
    """The one sentence on where a command runs, for every front end (``yes`` and ``outside``: how it names its
    two answers), true in every case: a yes keeps it in the sandbox (and what the sandbox will do to it), the
    answer ``outside`` leaves it; or a yes runs it unconfined, and why; "" for a call that is not a command."""
    if request.runs == "unconfined":
        return f"{yes} runs it unconfined, with all of your rights: {request.unconfined_why}"
    if request.runs != "sandbox":
        return ""
    what = "; ".join(request.effects) if request.effects else SANDBOX_NOTE.removeprefix("runs in the sandbox: ")
    then = (f"{outside} runs it outside the sandbox, with all of your rights" if request.sandboxed else
            "no answer runs it outside (exec_sandbox = all)")
    return f"{yes} runs it in the sandbox: {what}; {then}"


@dataclass(frozen=True)
class TextDelta:
    """A piece of the assistant's answer."""

    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    """A piece of the reasoning the model shows (not the answer; not kept in the conversation)."""

    text: str


@dataclass(frozen=True)
class ToolCallStarted:
    """The model asked for a tool call; it is about to be checked (and maybe approved) and run."""

    call_id: str
    name: str
    arguments: dict[str, Any] | str
    """Parsed arguments, or the raw string when they were not valid JSON."""
    summary: str
    """One line for a person: what the call does."""
    response_id: str = ""
    """Which model response the call belongs to (empty for a call the user ran)."""
    position: int = 0
    """Its place among that response's calls, from 0: the model's order, which calls may start in another
    (one its policy allows outright starts while the response still streams)."""


WaitingFor = Literal["earlier_calls", "response", "question"]
"""Why a call waits in the question line (:mod:`swebash_ai.agent.question_order`): an earlier call of its
response has not had its approval settled, the response is still streaming, or another question is on screen."""


@dataclass(frozen=True)
class ToolCallWaiting:
    """A started call waits for its turn to ask a person (its approval, ``ask_user``'s question, a further
    step): it is not running. Said again when what it waits for changes; :class:`ToolCallRunning` follows
    once its turn has come (or :class:`ToolCallFinished`, when it is cancelled while it waits)."""

    call_id: str
    waiting_for: WaitingFor


@dataclass(frozen=True)
class ToolCallRunning:
    """A call that waited (:class:`ToolCallWaiting`) has its turn: it asks now, or goes on running."""

    call_id: str


@dataclass(frozen=True)
class ApprovalRequest:
    """What an approver is asked to decide. ``detail`` is the full command, path or diff."""

    call_id: str
    tool: str
    summary: str
    detail: str
    cwd: str
    verdict: Verdict
    arguments: dict[str, Any] = field(default_factory=dict)
    always: dict[str, Any] | None = None
    """The rule "always allow this in this workspace" would save (a ``[[rules]]`` table), shown before it is
    saved; ``None`` when no rule can be offered (a compound command, a write, a catastrophe...)."""
    sandboxed: bool = False
    """A yes runs this command in the sandbox (:func:`where_words` says so in every front end);
    :attr:`~swebash_ai.agent.approval.Decision.ALLOW_OUTSIDE` (offered only then) runs it outside, with all
    of the user's rights."""
    runs: Literal["", "sandbox", "unconfined"] = ""
    """Where a yes runs this command: in the sandbox, or unconfined (no sandbox works here, or
    ``exec_sandbox = "none"``; :attr:`unconfined_why` says which); "" for a call that is not a command."""
    effects: tuple[str, ...] = ()
    """What the sandbox will do to the command, read from its words (``sandbox/foresee.py``): "its write to ~/x
    will fail", "its connection to example.com will fail (...)"."""
    unconfined_why: str = ""

    @property
    def heading(self) -> str | None:
        """The summary, when it says something the detail does not; else ``None`` (show the detail alone).

        A command's summary is its one line (cut at 120 characters, marked ``(in DIR)``, ``(background)``) and
        its detail the full command with those same facts in words: both would show the command twice.
        """
        head = self.summary.split("  (", 1)[0].removesuffix("…").strip()
        return None if head and self.detail.lstrip().startswith(head) else self.summary

    def hidden(self) -> tuple[int, int]:
        """(terminal control sequences, invisible characters) in what runs: the arguments the tool gets, else
        the detail. Never the summary as well: it repeats the detail (``$ command``), and a sum counted each
        sequence twice. A diff's lines that show the file as it is (unchanged context lines, removed lines)
        are drawn too, with their escapes: those not taken from the arguments are counted as well, so the
        warning covers all the dialog shows (an edit of one line beside a line that wipes the screen)."""
        if not self.arguments:
            return hidden_in(self.detail)
        controls, invisible = hidden_in(self.arguments)
        c, i = _from_the_file(self.detail, self.arguments)
        return controls + c, invisible + i


def _from_the_file(detail: str, arguments: dict[str, Any]) -> tuple[int, int]:
    """(controls, invisible characters) in the context and removed lines of a unified diff in ``detail``
    (after its ``+++`` header) whose text is in no string argument: what the file holds, not the call."""
    at = 0 if detail.startswith("+++ ") else detail.find("\n+++ ") + 1
    if not at and not detail.startswith("+++ "):
        return 0, 0
    strings = [v for v in arguments.values() if isinstance(v, str)]
    controls = invisible = 0
    for line in detail[at:].split("\n")[1:]:
        if line[:1] not in (" ", "-"):
            continue
        c, i = hidden_in(line[1:])
        if (c or i) and not any(line[1:] in s for s in strings):
            controls, invisible = controls + c, invisible + i
    return controls, invisible


@dataclass(frozen=True)
class ApprovalRequested:
    """A call waits for the user's decision."""

    request: ApprovalRequest


@dataclass(frozen=True)
class ToolOutput:
    """Live output of a running call (a command's stdout/stderr as it arrives)."""

    call_id: str
    text: str


@dataclass(frozen=True)
class ToolCallFinished:
    call_id: str
    name: str
    result: ToolResult
    decided_by: str = ""
    """What let it run or stopped it: a policy rule id, ``user``, ``session``, ``no-confirm``..."""


@dataclass(frozen=True)
class PlanUpdated:
    """The model's plan changed (``update_plan``); front ends show it as a checklist."""

    plan: Plan


@dataclass(frozen=True)
class Usage:
    """Tokens of one model request; ``cost`` in USD when the price is known."""

    prompt_tokens: int
    completion_tokens: int
    cost: float | None = None
    cached_tokens: int = 0
    """The part of ``prompt_tokens`` the provider read from its prompt cache (billed at its cached price)."""


@dataclass(frozen=True)
class BudgetUsed:
    """What the running turn has spent so far, against its bounds (after each round of tool calls): for the
    front ends to show as the turn runs (:class:`~swebash_ai.agent.limits.Budget`)."""

    requests: int
    """Model requests made so far."""
    tool_calls: int
    tokens: int
    """Prompt + completion tokens of every request so far, and of any child agent its calls ran."""
    cost: float | None
    """USD, when the price is known."""
    max_requests: int
    max_tokens: int | None = None
    max_cost: float | None = None


@dataclass(frozen=True)
class ModelRequest:
    """One model request ended (its stream finished, failed or was cancelled): for statistics and telemetry."""

    model: str
    seconds: float
    """From sending the request to the end of its stream (retries included)."""
    tool_calls: int = 0
    """How many tool calls the response asked for (a response with any is one tool round)."""
    ok: bool = True
    first_token_seconds: float | None = None
    """Until the first text or tool call arrived, when one did."""


@dataclass(frozen=True)
class Notice:
    """Something the user should know that is not part of the answer (a retry, a limit)."""

    text: str
    level: Literal["info", "warning"] = "info"


@dataclass(frozen=True)
class ModelNote:
    """The app told the model something it did not ask for (a background process exited by itself), in the
    request about to be sent; the same words are saved with the conversation."""

    text: str


StopReason = Literal["answered", "max_iterations", "max_tool_calls", "max_turn_tokens", "max_turn_cost", "loop",
                     "cancelled"]
"""Why a turn ended: it was answered, a bound was reached (:mod:`swebash_ai.agent.limits`), the loop detector
stopped it (``loop``), or it was cancelled."""


@dataclass(frozen=True)
class TurnFinished:
    text: str
    reason: StopReason = "answered"
    usage: Usage | None = None
    """Totals for the whole turn."""
    denied: int = 0
    """Calls that needed approval and did not get it."""
    detail: str = ""
    """For a turn that stopped at a bound or a loop: a sentence saying what stopped it and the setting that
    moves the bound; front ends add how to go on (their key, ``--resume``)."""


@dataclass(frozen=True)
class TurnFailed:
    error: SwebashError


@dataclass(frozen=True)
class SubagentEvent:
    """An event of a child agent (a ``task`` call), nested under the parent's call that started it. A front end
    shows the child's calls under ``call_id``; the child's own :class:`TurnFinished` ends its group (the call's
    :class:`ToolCallFinished` follows, with what the parent reads)."""

    call_id: str
    agent: str
    event: AgentEvent


AgentEvent = (
    TextDelta
    | ReasoningDelta
    | ToolCallStarted
    | ToolCallWaiting
    | ToolCallRunning
    | ApprovalRequested
    | ToolOutput
    | ToolCallFinished
    | PlanUpdated
    | Usage
    | BudgetUsed
    | ModelRequest
    | Notice
    | ModelNote
    | TurnFinished
    | TurnFailed
    | SubagentEvent
)

