"""Agents that delegate: the ``task`` tool, and the child loop it runs.

Contract:
    :func:`attach_task` gives an :class:`~swebash_ai.agent.loop.Agent` the ``task`` tool (``description``,
    ``prompt``, optionally ``agent``: one of :class:`~swebash_ai.agent.agent_files.Agents`). A call runs a
    child :class:`~swebash_ai.agent.loop.Agent` over a fresh :class:`Conversation`: the project instructions
    and the agent's own prompt, never the parent's history; its own tool list; its own model when the agent
    names one; its own turn and token budget. Its final answer returns as the call's result, cut to
    ``subagent_result_chars``, with one line of what it did (tools used, calls refused, files changed,
    tokens and cost), and ``metadata["usage"]`` (``prompt_tokens``, ``completion_tokens``, ``cost``): the
    turn's budget charges it. Each of the child's events reaches the parent's stream as a
    :class:`~swebash_ai.agent.events.SubagentEvent` under the call (``ToolContext.on_event``). Several
    ``task`` calls of one response run side by side like any calls (the loop's ``parallel`` bound); a child
    that fails returns an error result, and the others go on. Cancelling the parent's turn cancels each
    child's turn, which stops its calls (and their processes) as any cancelled turn does.

The parent is the ceiling:
    * tools: the child's are the parent's registry (the very same :class:`Tool` objects, so each one's own
      policy, the floor, applies) narrowed by the agent's allow and deny lists; never a tool the parent lacks.
      ``task`` itself only while the depth allows (``subagents_max_depth``, 1: a child starts no child),
      ``update_plan`` never (the plan is the parent's);
    * decisions: a :class:`_ChildGate` reads the parent's rules, hooks and hook runner at every call, and its
      mode is the stricter of the parent's (read at every call too) and the agent's (plan > ask >
      accept-edits > auto);
    * approvals: the parent's session approvals and ``confirm``, and the parent's approver behind
      :class:`_AgentAsks`, which names the agent in each question and keeps ``interactive`` as it is: where
      the parent's questions are refused (no terminal), so are the child's. Questions share the parent's
      approval lock: one on screen at a time (a child starts no call while its own response streams, so it
      never holds the lock for long);
    * context: a copy of the parent's :class:`ToolContext` (same workspace, path and command policies, sandbox
      settings, services) without background processes (a child never leaves one running) and with its own
      copy of the URLs the user gave: what the parent's model writes in a prompt is not the user's word;
    * results: the loop masks secrets in every child result as in the parent's; the child's answer reaches
      the parent through the same masking (it is a tool result).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import re
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from swebash_ai.agent.agent_files import Agents
from swebash_ai.agent.conversation import Conversation
from swebash_ai.agent.decide import MODES, WRITE_TOOLS, Gate, Mode
from swebash_ai.agent.events import (
    AgentEvent,
    ApprovalRequest,
    SubagentEvent,
    ToolCallFinished,
    ToolCallStarted,
    TurnFailed,
    TurnFinished,
    Usage,
)
from swebash_ai.agent.loop import Agent, LoopLimits
from swebash_ai.agent.prompt import build_system_prompt
from swebash_ai.errors import SwebashError
from swebash_ai.tools.registry import Tool, ToolContext, ToolRegistry, ToolResult, parse_docstring
from swebash_ai.tools.web_guard import Provenance

if TYPE_CHECKING:
    from pathlib import Path

    from swebash_ai.agent.approval import Approver, Decision
    from swebash_ai.agent.user_prompt import PreparedPrompt
    from swebash_ai.config.agents import AgentSpec
    from swebash_ai.config.settings import Settings
    from swebash_ai.providers.base import Provider, RetryCallback

__all__ = ["TASK", "Delegation", "attach_task", "narrower_mode"]

TASK = "task"
_NEVER_IN_A_CHILD = frozenset({"update_plan"})
_STRICTNESS: dict[str, int] = {"auto": 0, "accept-edits": 1, "ask": 2, "plan": 3}
_LOOP_COUNTS_TOKENS = "max_turn_tokens" in {f.name for f in dataclasses.fields(LoopLimits)}
"""The loop stops a turn at a token budget itself (and asks for a final answer); else the child is stopped here."""
Keep = Callable[[str, dict[str, Any]], None]
"""Keeps a finished child's transcript (the session saves it with the conversation), by the parent's call id."""


def narrower_mode(parent: Mode, wanted: str | None) -> Mode:
    """The stricter of the parent's mode and the one an agent asks for (plan > ask > accept-edits > auto)."""
    stricter = next((m for m in MODES if m == wanted), parent)
    return stricter if _STRICTNESS[stricter] > _STRICTNESS[parent] else parent


@dataclass
class _ChildGate(Gate):
    """A child's decision pipeline: the parent's rules, hooks and (narrowed) mode, read again at every call, so
    a rule saved or a mode changed while a child runs holds for it at once."""

    parent: Gate | None = None
    wanted: str | None = None

    def _follow(self) -> None:
        if self.parent is not None:
            p = self.parent
            self.rules, self.hooks, self.run_hook, self.workspace = p.rules, p.hooks, p.run_hook, p.workspace
            self.mode = narrower_mode(p.mode, self.wanted)

    def settle(self, *args: Any, **kwargs: Any) -> Any:
        self._follow()
        return super().settle(*args, **kwargs)

    def matching(self, event: str, tool: str = "", arguments: Any = None) -> Any:
        self._follow()
        if event == "turn_end":  # a child's run is not a turn of the user's: its calls' hooks run, this one not
            return []
        return super().matching(event, tool, arguments)


class _AgentAsks:
    """The parent's approver, naming the agent that asks. Same ``interactive``, same refusals. The call it asks
    about is named ``TASK_ID/CALL_ID`` (``under``: the parent's task call), as the front ends name a child's calls."""

    def __init__(self, inner: Approver, agent: str, under: str = "") -> None:
        self.inner = inner
        self.agent = agent
        self.under = under
        self.interactive = inner.interactive
        if hasattr(inner, "reason"):
            self.reason = inner.reason
        inner_ask = getattr(inner, "ask", None)
        if inner_ask is not None:
            async def ask(question: Any) -> Any:
                call_id = f"{under}/{question.call_id}" if under else question.call_id
                return await inner_ask(dataclasses.replace(question, call_id=call_id,
                                                           question=f"[{agent} agent] {question.question}"))

            self.ask = ask

    async def decide(self, request: ApprovalRequest) -> Decision:
        call_id = f"{self.under}/{request.call_id}" if self.under else request.call_id
        return await self.inner.decide(dataclasses.replace(request, call_id=call_id,
                                                           summary=f"[{self.agent} agent] {request.summary}"))


class _ChildProvenance(Provenance):
    """The user's URLs as the parent knows them, plus what the child's own fetches and searches vouch for; the
    task prompt, which the child's loop takes as its user message, is the parent model's text, not the user's."""

    def __init__(self, parent: Provenance, prompt: str) -> None:
        super().__init__()
        self.__dict__.update(copy.deepcopy(parent.__dict__))
        self._prompt: str | None = prompt

    def add_text(self, text: str) -> None:
        if self._prompt is not None and text == self._prompt:
            self._prompt = None
            return
        super().add_text(text)


class Delegation:
    """The ``task`` tool of one agent, and how it starts children (see the module docstring)."""

    def __init__(self, parent: Agent, agents: Agents, settings: Settings, *, instructions: str = "",
                 keep: Keep | None = None, provider_for: Callable[[str], Provider] | None = None,
                 depth: int = 0) -> None:
        self.parent = parent
        self.agents = agents
        self.settings = settings
        self.instructions = instructions
        self.keep = keep
        self.provider_for = provider_for
        self.depth = depth
        self.tool = self._make_tool()

    def _make_tool(self) -> Tool:
        delegation = self

        async def task(ctx: ToolContext, description: str, prompt: str, agent: str = "") -> ToolResult:
            """Hand a self-contained side task to a helper agent with a fresh context; its final answer comes back.

            Use it for work whose details this conversation does not need: a search through a large code base,
            a review, a test run, independent parts of a change. The helper does not see this conversation: the
            prompt must say everything it needs and what to answer with. Several task calls in one response run
            side by side. The helper has at most your tools and permissions, and asks the user as you would.

            Args:
                description: A short label for the task (3-6 words), shown to the user.
                prompt: The whole task for the helper: what to do, where, and what to report back.
                agent: The agent to run it (see the list below); empty: general.
            """
            return await delegation.run(ctx, description, prompt, agent)

        made = _TaskTool(task)
        listed = "\n".join(f"- {a.name}: {a.description}" for a in self.agents.usable())
        made.description += f"\n\nAgents:\n{listed}"
        return made

    # --- one child --------------------------------------------------------------------------------------
    def child_tools(self, spec: AgentSpec) -> tuple[list[Tool], bool]:
        """The parent's tools the agent may have (see "The parent is the ceiling"), and whether it may start
        children of its own (a ``task`` tool)."""
        parent = self.parent.registry
        allowed = None if spec.tools is None else set(spec.tools)
        tools = [t for name in parent.names() if (t := parent.get(name)) is not None
                 and name not in (TASK, *_NEVER_IN_A_CHILD) and name not in spec.disallowed
                 and (allowed is None or name in allowed)]
        nested = (TASK in parent and self.depth + 1 < self.settings.subagents_max_depth
                  and (allowed is None or TASK in allowed) and TASK not in spec.disallowed)
        return tools, nested

    def child(self, spec: AgentSpec, prompt: str, under: str = "") -> Agent:
        """A child agent for ``spec`` (raises :class:`SwebashError` when its model cannot be used)."""
        parent = self.parent
        provider = parent.provider
        if spec.model and spec.model != provider.model:
            if self.provider_for is None:
                raise SwebashError(f"the agent names the model {spec.model}, and no other model can be started here")
            provider = self.provider_for(spec.model)
        tools, nested = self.child_tools(spec)
        context = dataclasses.replace(parent.context, processes=None,
                                      provenance=_ChildProvenance(parent.context.provenance, prompt))
        gate = _ChildGate(parent=parent.gate, wanted=spec.mode)
        gate._follow()
        s = self.settings
        limits: dict[str, Any] = {
            "max_iterations": spec.max_turns or s.subagent_max_iterations, "early_tools": False,
            "max_tool_calls": parent.limits.max_tool_calls, "parallel": parent.limits.parallel,
            "context_tokens": parent.limits.context_tokens}
        if _LOOP_COUNTS_TOKENS:
            limits["max_turn_tokens"] = s.subagent_max_tokens
        names = [t.name for t in tools] + ([TASK] if nested else [])
        system = (build_system_prompt(parent.context.cwd, names, None, self.instructions)
                  + f"\n\nYou are the {spec.name} agent, started by the main assistant for one task. You do not see "
                  "its conversation and nobody else reads your messages: when you are done, answer with a concise "
                  "report of what you found or did. It is all the main assistant gets back."
                  + (f"\n\n{spec.prompt}" if spec.prompt else ""))
        child = Agent(provider, ToolRegistry(tools), context, _AgentAsks(parent.approver, spec.name, under),
                      limits=LoopLimits(**limits), confirm=parent.confirm, system_prompt=system,
                      audit=parent.audit.for_child(spec.name, under) if parent.audit is not None else None,
                      session_approvals=parent.session_approvals, gate=gate)
        child.approval_lock = parent.approval_lock  # one question on screen at a time, parent and children
        if nested:
            grandchildren = Delegation(child, self.agents, s, instructions=self.instructions, keep=self.keep,
                                       provider_for=self.provider_for, depth=self.depth + 1)
            child.registry.add(grandchildren.tool)
        return child

    async def run(self, ctx: ToolContext, description: str, prompt: str, name: str) -> ToolResult:
        """Run one ``task`` call (see the module docstring)."""
        wanted = name.strip().lstrip("@") or "general"
        spec = self.agents.get(wanted)
        if spec is None:
            known = ", ".join(a.name for a in self.agents.usable())
            return ToolResult.error(f"There is no agent named {wanted!r}. Agents: {known}.")
        if not spec.in_force:
            return ToolResult.error(
                f"The {spec.name} agent comes from {spec.path}, a project file, and waits until the user trusts the "
                "project (`swebash-ai trust`). Use another agent, or ask the user.")
        if not prompt.strip():
            return ToolResult.error("The prompt is empty: say what the helper should do and report back.")
        try:
            child = self.child(spec, prompt, ctx.call_id)
        except SwebashError as exc:
            return ToolResult.error(f"The {spec.name} agent cannot start: {exc.message}")
        seen = _Seen()
        over = False
        conversation = Conversation()
        emit = ctx.on_event
        started = time.monotonic()
        try:
            async with contextlib.aclosing(child.run_turn(conversation, prompt)) as events:
                async for event in events:
                    if emit is not None:
                        emit(SubagentEvent(ctx.call_id, spec.name, event))
                    seen.see(event)
                    if not over and not _LOOP_COUNTS_TOKENS and seen.tokens > self.settings.subagent_max_tokens:
                        over = True  # this loop has no token limit of its own: stop the child here
                        child.cancel()
        finally:
            if self.keep is not None and conversation.messages:
                self.keep(ctx.call_id, {"agent": spec.name, "description": description, "model": child.provider.model,
                                        "system": child.system_prompt, "tools": child.registry.definitions(),
                                        "messages": list(conversation.messages)})
        return seen.result(spec.name, self.settings.subagent_result_chars, over, self.settings.subagent_max_tokens,
                           time.monotonic() - started)


class _Seen:
    """What a child did, from its events: for the one line the parent reads after the answer."""

    def __init__(self) -> None:
        self.used: Counter[str] = Counter()
        self.refused: list[str] = []
        self.paths: dict[str, str] = {}
        self.changed: list[str] = []
        self.prompt_tokens = self.completion_tokens = 0
        self.cost: float | None = None
        self.finished: TurnFinished | None = None
        self.failed: TurnFailed | None = None

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def see(self, event: AgentEvent) -> None:
        if isinstance(event, ToolCallStarted) and event.name in WRITE_TOOLS and isinstance(event.arguments, dict):
            self.paths[event.call_id] = str(event.arguments.get("path", ""))
        elif isinstance(event, ToolCallFinished):
            self.used[event.name] += 1
            spent = event.result.metadata.get("usage") if event.name == TASK else None
            if isinstance(spent, dict):  # a grandchild's tokens are its parent's to report
                self._charge(int(spent.get("prompt_tokens") or 0), int(spent.get("completion_tokens") or 0),
                             spent.get("cost"))
            if event.result.status == "denied" or event.decided_by == "unknown_tool":
                self.refused.append(f"{event.name} ({event.decided_by or event.result.status})")
            elif event.result.ok and event.call_id in self.paths:
                self.changed.append(self.paths[event.call_id])
        elif isinstance(event, Usage):
            self._charge(event.prompt_tokens, event.completion_tokens, event.cost)
        elif isinstance(event, TurnFinished):
            self.finished = event
        elif isinstance(event, TurnFailed):
            self.failed = event

    def _charge(self, prompt: int, completion: int, cost: Any) -> None:
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        if isinstance(cost, int | float):
            self.cost = (self.cost or 0.0) + cost

    def note(self, agent: str, seconds: float) -> str:
        used = ", ".join(f"{n} x{c}" if c > 1 else n for n, c in self.used.most_common()) or "none"
        parts = [f"[{agent} agent: {seconds:.1f}s; tools used: {used}"]
        if self.refused:
            parts.append(f"refused: {', '.join(dict.fromkeys(self.refused))}")
        parts.append(f"files changed: {', '.join(dict.fromkeys(self.changed)) or 'none'}")
        cost = f", ${self.cost:.4f}" if self.cost is not None else ""
        parts.append(f"{self.prompt_tokens} + {self.completion_tokens} tokens{cost}]")
        return "; ".join(parts)

    def result(self, agent: str, limit: int, over: bool, budget: int, seconds: float) -> ToolResult:
        meta: dict[str, Any] = {
            "usage": {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                      "cost": self.cost},
            "agent": agent, "tools": dict(self.used), "files_changed": list(dict.fromkeys(self.changed)),
        }
        note = self.note(agent, seconds)
        if self.failed is not None:
            return ToolResult.error(f"The {agent} agent failed: {self.failed.error.message}\n{note}", metadata=meta)
        text = self.finished.text if self.finished is not None else ""
        reason = self.finished.reason if self.finished is not None else "cancelled"
        if over or str(reason) == "max_turn_tokens":  # stopped here, or by the loop's own token limit
            text = (f"{text}\n\n" if text.strip() else "") + (
                f"(The {agent} agent was stopped at its budget of {budget} tokens before it finished.)")
        elif reason == "cancelled":
            return ToolResult.cancelled(f"The {agent} agent was stopped before it finished.\n{note}", metadata=meta)
        elif reason != "answered":
            text += f"\n\n(The {agent} agent stopped at a limit: {reason}.)"
        truncated = len(text) > limit
        if truncated:
            half = max(1, limit // 2)
            text = f"{text[:half]}\n[... {len(text) - 2 * half} characters of the answer left out ...]\n{text[-half:]}"
        return ToolResult.success(f"{text.strip() or '(no answer)'}\n\n{note}", truncated=truncated, metadata=meta)


TASK_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "description": {"type": "string", "description": "A short label for the task (3-6 words), shown to the user."},
        "prompt": {"type": "string",
                   "description": "The whole task for the helper: what to do, where, and what to report back."},
        "agent": {"type": "string", "default": "",
                  "description": "The agent to run it (see the list below); empty: general."},
    },
    "required": ["description", "prompt"],
    "additionalProperties": False,
}
"""The ``task`` tool's schema as its signature makes it (a test compares them): a session that offers the tool
builds no pydantic model for it until the model calls it."""


class _TaskTool(Tool):
    """The ``task`` tool of one :class:`Delegation` (a tool object per agent: each starts its own children)."""

    def __init__(self, fn: Callable[..., Any]) -> None:  # no super().__init__: that builds the argument model now
        self.fn = fn
        self.name = TASK
        self.category = "agent"
        self._policy = self._preview = None
        self._describe = lambda a: f"{a.agent or 'general'} agent: {a.description}"
        self._session_key = lambda _ctx, _a: None
        self.description, self._param_docs = parse_docstring(fn.__doc__)
        self._args_model = None
        self.parameters = copy.deepcopy(TASK_PARAMETERS)


def attach_task(agent: Agent, agents: Agents, settings: Settings, *, instructions: str = "",
                keep: Keep | None = None, provider_for: Callable[[str], Provider] | None = None) -> Delegation:
    """Give ``agent`` the ``task`` tool (its registry gains it; nothing else changes)."""
    delegation = Delegation(agent, agents, settings, instructions=instructions, keep=keep, provider_for=provider_for)
    tools = [t for n in agent.registry.names() if n != TASK and (t := agent.registry.get(n)) is not None]
    agent.registry = ToolRegistry([*tools, delegation.tool])
    return delegation


def transcript_messages(record: dict[str, Any]) -> list[dict[str, Any]]:
    """A kept child transcript's messages (for export and resume), or none when the record is damaged."""
    messages = record.get("messages")
    return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []


def provider_for(settings: Settings, environ: Mapping[str, str] | None,
                 on_retry: RetryCallback | None = None) -> Callable[[str], Provider]:
    """Makes the provider of an agent that names its own model: the session's settings (endpoint, key, retries,
    tool-calling mode) with that model. Raises :class:`SwebashError` when nothing can serve it."""

    def make(model: str) -> Provider:
        from swebash_ai.providers import choose_provider, make_provider
        from swebash_ai.providers.text_tools import TextToolCallProvider

        changed = settings.model_copy(update={"model": model})
        choice = choose_provider(changed, environ, probe_ollama=False)
        if choice is None:
            raise SwebashError(f"no provider is configured for the model {model}")
        mode = settings.tool_calling
        return TextToolCallProvider(make_provider(choice, changed, on_retry=on_retry), text_mode=mode == "text",
                                    recover=mode != "native")

    return make


_MARKS = {"ok": "✓", "denied": "⊘", "cancelled": "■", "timeout": "⏱"}


def unnest(nested: SubagentEvent) -> tuple[str, AgentEvent]:
    """(the path of ``task`` call ids down to the child that emitted it, ``TASK_ID[/TASK_ID...]``; the child's own
    event): a child's call ``C`` is ``PATH/C`` to its approver (:class:`_AgentAsks`) and in the front ends."""
    ids: list[str] = []
    event: AgentEvent = nested
    while isinstance(event, SubagentEvent):
        ids.append(event.call_id)
        event = event.event
    return "/".join(ids), event


def progress_line(nested: SubagentEvent) -> tuple[str, str, AgentEvent]:
    """(the top ``task`` call's id, one line of progress or ``""``, the innermost event) of a nested event: what
    a front end shows of a helper's work in the task call's entry (``[explore] ✓ read_file  src/x.py``)."""
    agents: list[str] = []
    event: AgentEvent = nested
    while isinstance(event, SubagentEvent):
        agents.append(event.agent)
        event = event.event
    who = f"[{' > '.join(agents)}]"
    line = ""
    if isinstance(event, ToolCallStarted):
        line = f"{who} ▸ {event.summary or event.name}\n"
    elif isinstance(event, ToolCallFinished):
        line = f"{who} {_MARKS.get(event.result.status, '✗')} {event.name}: {event.result.status}\n"
    elif isinstance(event, TurnFailed):
        line = f"{who} failed: {event.error.message}\n"
    elif isinstance(event, TurnFinished):
        line = f"{who} done ({event.reason})\n"
    return nested.call_id, line, event


def transcript_lines(record: dict[str, Any], summary: Callable[[str, str], str],
                     status_of: Callable[[str], str]) -> str:
    """The progress lines :func:`progress_line` showed live for a kept child transcript (a resumed session):
    ``summary(name, arguments)`` is the ``▸`` line of a call, ``status_of(text)`` a result's status."""
    who = f"[{record.get('agent', '?')}]"
    names: dict[str, str] = {}
    lines: list[str] = []
    for msg in transcript_messages(record):
        if msg.get("role") == "assistant":
            for call in msg.get("tool_calls") or ():
                fn = call.get("function") or {}
                name = str(fn.get("name", "?"))
                names[str(call.get("id", ""))] = name
                lines.append(f"{who} ▸ {summary(name, str(fn.get('arguments', '')))}\n")
        elif msg.get("role") == "tool":
            content = msg.get("content")
            status = status_of(content if isinstance(content, str) else str(content))
            name = names.get(str(msg.get("tool_call_id", "")), str(msg.get("name", "?")))
            lines.append(f"{who} {_MARKS.get(status, '✗')} {name}: {status}\n")
    return "".join(lines)


_AGENT_MENTION = re.compile(r"(?:^|(?<=[\s(\[{]))@([a-z0-9][a-z0-9_-]{0,63})(?![\w./-])")


def ask_for_agents(prepared: PreparedPrompt, agents: Agents, cwd: Path) -> PreparedPrompt:
    """``@NAME`` in a prompt, where NAME is an agent that can be started and no file or folder is so named: the
    user asks for that agent by name, so the model is told to hand the work to it (the mention stays in the
    text, and its "not attached" notice goes)."""
    named = [m for m in dict.fromkeys(_AGENT_MENTION.findall(prepared.text))
             if (spec := agents.get(m)) is not None and spec.in_force and not (cwd / m).exists()]
    if not named:
        return prepared
    asks = ", ".join(f'"{n}"' for n in named)
    them = "them" if len(named) > 1 else "it"
    note = (f"\n\n[swebash-ai] The user asks for the agent{'s' if len(named) > 1 else ''} {asks} by name: hand the "
            f"work to {them} with the task tool (its agent argument), then answer from what {them} report"
            f"{'' if len(named) > 1 else 's'}.")
    notices = tuple(n for n in prepared.notices if not any(n.startswith(f"@{m} ") for m in named))
    return dataclasses.replace(prepared, text=prepared.text + note, notices=notices)
