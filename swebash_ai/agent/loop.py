"""The tool-calling loop: one async generator of typed events per user turn.

``Agent.run_turn(conversation, text)`` streams the model, runs the complete tool calls of each response
(concurrently, bounded by ``parallel``; results go back in call order), feeds every result back and repeats
until the model answers without tools or a limit is hit. At a limit the model is told and asked for a final
answer without tools; the user sees a :class:`Notice` saying why.

Every call goes: validate arguments -> tool policy (allow / ask / deny; its deny is the floor) -> rules, the
approval mode and hooks (:mod:`swebash_ai.agent.decide`) -> approval when asked -> run -> after_tool hooks ->
audit. Nothing a tool or the model does raises out of the loop: bad arguments, unknown tools, denials and
tool failures are results the model reads; provider errors end the turn with :class:`TurnFailed`.

Early execution (``LoopLimits.early_tools``): the provider yields each call as soon as its arguments are
complete, and a call already known to be allowed without a question (its policy allows it and nothing else
speaks about it, or rules and the mode settle it as allowed with no hook to ask and no earlier call held back)
starts at once, while the rest of the response streams (:class:`~swebash_ai.agent.batch.CallBatch`,
``_Turn._early``). That check only holds calls back: every call, early or
not, then goes through the same path above. Anything on it that must ask a person (an approval, a rule that
asks, a tool asking for more, ``ask_user``) waits for the end of the response, because the stream holds the
approval lock; calls that need approval start when the response has ended. Questions come in call order:
whatever a call asks waits until every earlier call of the response has had its approval settled
(:mod:`~swebash_ai.agent.question_order`), so a call that started early, or an earlier call slow to reach its
question (a before_tool hook), cannot put a later question first.

Cancellation (``Agent.cancel()``, or cancelling the task consuming the generator) at any point — mid-stream,
mid-tool, waiting for approval — leaves the conversation valid: streamed text is kept, and every tool call
of the last response has a result (``Cancelled: ...`` where it did not finish). A stream that is cancelled or
fails after a call started early stops the started calls and keeps the calls received so far, each with
its result or a result saying it was stopped (or never run).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import time
import uuid
from collections.abc import AsyncGenerator, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from swebash_ai.agent.approval import Approver, DenyApprover, SessionApprovals
from swebash_ai.agent.audit import AuditLog
from swebash_ai.agent.batch import CallBatch, EarlyStart, allowed_outright
from swebash_ai.agent.call_approval import OUTSIDE, audit_call, settle_ask
from swebash_ai.agent.conversation import BROKE_OFF, CANCELLED_RESULT, STOPPED, Conversation, Incomplete
from swebash_ai.agent.decide import Gate
from swebash_ai.agent.events import (
    AgentEvent,
    ModelNote,
    ModelRequest,
    Notice,
    PlanUpdated,
    ReasoningDelta,
    StopReason,
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
from swebash_ai.agent.limits import LIMIT_SETTINGS, Budget, LoopLimits
from swebash_ai.agent.question_order import Place
from swebash_ai.errors import ProviderError, SwebashError
from swebash_ai.providers.base import (
    FinishChunk,
    Provider,
    ProviderToolChunk,
    ReasoningChunk,
    TextChunk,
    ToolCall,
    UsageChunk,
)
from swebash_ai.safety.verdict import Verdict
from swebash_ai.tools.background import background_exits
from swebash_ai.tools.registry import ToolContext, ToolRegistry, ToolResult

if TYPE_CHECKING:
    from swebash_ai.tools.plan import Plan

log = logging.getLogger(__name__)

_DONE = object()
_NO_COUNT = 1 << 62  # the batch's cap on calls when no count is set

__all__ = ["LIMIT_SETTINGS", "Agent", "LoopLimits"]  # the bounds live in agent/limits.py; old imports still work

class Agent:
    """Runs turns. Stateless between turns except the "allow for this session" memory."""

    def __init__(
        self,
        provider: Provider,
        registry: ToolRegistry,
        context: ToolContext,
        approver: Approver | None = None,
        *,
        limits: LoopLimits | None = None,
        confirm: bool = True,
        system_prompt: str | None = None,
        audit: AuditLog | None = None,
        session_approvals: SessionApprovals | None = None,
        gate: Gate | None = None,
    ) -> None:
        self.provider = provider
        self.registry = registry
        self.context = context
        self.approver: Approver = approver or DenyApprover()
        self.limits = limits or LoopLimits()
        self.confirm = confirm
        self.system_prompt = system_prompt
        self.audit = audit
        self.session_approvals = session_approvals or SessionApprovals()
        self.gate = gate or Gate(workspace=context.cwd)
        """Rules, mode and hooks: the decision pipeline after a tool's own verdict (see agent/decide.py)."""
        self._driver: asyncio.Task[None] | None = None
        self.approval_lock = asyncio.Lock()
        """Held while a person is asked: one question at a time, across concurrent calls."""

    def cancel(self) -> None:
        """Stop the running turn; the generator then ends with ``TurnFinished(reason="cancelled")``."""
        if self._driver is not None and not self._driver.done():
            self._driver.cancel()

    @property
    def running(self) -> bool:
        return self._driver is not None and not self._driver.done()

    async def run_turn(self, conversation: Conversation, user_message: str) -> AsyncGenerator[AgentEvent, None]:
        """Run one user turn (see the module docstring)."""
        turn = _Turn(self, conversation)
        async for event in self._pump(turn, turn.drive(user_message)):
            yield event

    async def run_tool(
        self, conversation: Conversation, name: str, arguments: dict[str, Any], *, typed: str | None = None
    ) -> AsyncGenerator[AgentEvent, None]:
        """Run one tool call the *user* asked for (``!command``), through the same policy and approval.

        The call and its result are added to the conversation as a user message that records the call
        (:meth:`Conversation.add_user_run`), so the model can refer to them in the next turn. ``typed``: the
        command line the user typed, whose URLs count as the user's (its output's never do). Ends with
        ``TurnFinished`` (the result text) like a turn.
        """
        turn = _Turn(self, conversation)
        call = ToolCall(f"user_{uuid.uuid4().hex[:12]}", name, json.dumps(arguments))
        async for event in self._pump(turn, turn.drive_tool(call, typed)):
            yield event

    async def _pump(self, turn: _Turn, work: Coroutine[Any, Any, None]) -> AsyncGenerator[AgentEvent, None]:
        queue = turn.queue
        # This turn's own task: cleanup must never touch a later turn's driver (a generator closed late,
        # after the consumer already started the next turn, would otherwise cancel that turn).
        driver = self._driver = asyncio.create_task(work)
        driver.add_done_callback(lambda _t: queue.put_nowait(_DONE))
        try:
            while True:
                item = await queue.get()
                if item is _DONE:
                    break
                yield item
        finally:
            if not driver.done():
                driver.cancel()
                # Let the driver put the conversation in order before the consumer goes on.
                await asyncio.gather(driver, return_exceptions=True)
            turn.finalize()


class _Turn:
    """State of one running turn (kept out of :class:`Agent` so turns cannot leak into each other)."""

    def __init__(self, agent: Agent, conversation: Conversation) -> None:
        self.agent = agent
        self.conv = conversation
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.partial_text: list[str] = []
        self.in_stream = False
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cached_tokens = 0
        self.cost: float | None = None
        self.denied = 0
        self.finished_text = ""
        self._finalized = False
        self.budget = Budget(agent.limits)

    def emit(self, event: AgentEvent) -> None:
        self.queue.put_nowait(event)

    def finalize(self, why: Incomplete = STOPPED) -> None:
        """Make the conversation valid whatever happened (idempotent); ``why``: why a streaming answer ends here
        (the turn was cancelled, or it failed)."""
        if self._finalized:
            return
        self._finalized = True
        if self.in_stream and self.partial_text:  # the stream broke off or was cancelled mid-answer
            self.conv.add_assistant("".join(self.partial_text), incomplete=why)
        self.in_stream = False
        self.conv.repair(CANCELLED_RESULT)

    def _usage(self) -> Usage | None:
        if not (self.prompt_tokens or self.completion_tokens):
            return None
        return Usage(self.prompt_tokens, self.completion_tokens, self.cost, self.cached_tokens)

    async def drive(self, user_message: str) -> None:
        try:
            await self._drive(user_message)
        except asyncio.CancelledError:
            self.finalize()
            self.emit(TurnFinished("".join(self.partial_text), "cancelled", self._usage(), self.denied))
        except ProviderError as exc:
            self.finalize(BROKE_OFF)
            self.emit(TurnFailed(exc))
        except Exception as exc:
            log.exception("internal error in the tool loop")
            self.finalize(BROKE_OFF)
            self.emit(TurnFailed(SwebashError(f"{type(exc).__name__}: {exc}", title="Internal error")))

    async def drive_tool(self, call: ToolCall, typed: str | None = None) -> None:
        if typed is not None:
            self.agent.context.provenance.add_text(typed)  # as for a typed message; resuming does the same
        try:
            result = await self._run_call(call)
        except asyncio.CancelledError as exc:
            result = _cancelled_result(exc)
        note = result.for_model()
        if len(note) > 4000:
            note = note[:2000] + "\n[…]\n" + note[-2000:]
        self.conv.add_user_run(call, note, typed=typed)
        self._tell_kept_note()
        self.emit(TurnFinished(result.text, "answered" if result.status != "cancelled" else "cancelled"))

    async def _stream(
        self,
        tools: list[dict[str, Any]] | None,
        tool_choice: str = "auto",
        extra: list[dict[str, Any]] | None = None,
        batch: CallBatch | None = None,
    ) -> tuple[str, list[ToolCall]]:
        agent = self.agent
        self._tell_exits()
        messages = self.conv.for_request(agent.system_prompt, agent.limits.context_tokens,
                                         stored=getattr(agent.provider, "reads_stored_results", False)) + (extra or [])
        self.partial_text = []
        calls: list[ToolCall] = []
        self.in_stream = True
        async with contextlib.AsyncExitStack() as held:
            if batch is not None and batch.early:
                # Calls started early must not ask anyone while the answer still streams: their questions
                # (and ask_user's) queue on this lock and come after the response, in order.
                await held.enter_async_context(agent.approval_lock)
            try:
                await self._receive(messages, tools, tool_choice, calls, batch)
            except BaseException as exc:
                if batch is not None and batch.started:  # keep the started calls, each with a result
                    self.in_stream = False
                    await batch.abandon(calls, "".join(self.partial_text),
                                        cut=not isinstance(exc, asyncio.CancelledError))
                raise
        text = "".join(self.partial_text)
        self.in_stream = False
        self.conv.add_assistant(text, calls)
        return text, calls

    def _tell_kept_note(self) -> None:
        """What the app kept for the model since the last turn (:meth:`Conversation.note_for_next_turn`: an undo),
        as a note on the message just added: apart from what the user typed, which stays as typed."""
        note = self.conv.take_note()
        if note:
            self.conv.add_note(note)

    def _tell_exits(self) -> None:
        """Background processes that exited by themselves since the last request: one note, on the last message
        (:meth:`Conversation.add_note` says why there), before this request is built."""
        exits = background_exits(self.agent.context.processes)
        if exits:
            self.conv.add_note(exits)
            self.emit(ModelNote(exits))

    async def _receive(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        tool_choice: str,
        calls: list[ToolCall],
        batch: CallBatch | None,
    ) -> None:
        agent = self.agent
        started = time.monotonic()
        first: float | None = None
        ok = False
        stream = agent.provider.stream(messages, tools, tool_choice)
        try:
            async for chunk in stream:
                if first is None and isinstance(chunk, TextChunk | ToolCall):
                    first = time.monotonic() - started
                if isinstance(chunk, TextChunk):
                    self.partial_text.append(chunk.text)
                    self.emit(TextDelta(chunk.text))
                    if self.budget.runaway(self.partial_text):
                        break
                elif isinstance(chunk, ReasoningChunk):
                    self.emit(ReasoningDelta(chunk.text))
                elif isinstance(chunk, ToolCall):
                    calls.append(chunk)
                    if batch is not None:
                        batch.offer(chunk)
                elif isinstance(chunk, UsageChunk):
                    self.prompt_tokens += chunk.prompt_tokens
                    self.completion_tokens += chunk.completion_tokens
                    self.cached_tokens += chunk.cached_tokens
                    if chunk.cost is not None:
                        self.cost = (self.cost or 0.0) + chunk.cost
                    self.budget.charge(prompt_tokens=chunk.prompt_tokens, completion_tokens=chunk.completion_tokens,
                                       cached_tokens=chunk.cached_tokens, cost=chunk.cost)
                    self.emit(Usage(chunk.prompt_tokens, chunk.completion_tokens, chunk.cost, chunk.cached_tokens))
                elif isinstance(chunk, ProviderToolChunk):
                    # Run by the provider, its result already in the answer: shown, never run here.
                    self.emit(Notice(chunk.describe()))
                elif isinstance(chunk, FinishChunk):
                    pass
            ok = True
        finally:
            if (close := getattr(stream, "aclose", None)) is not None:
                await close()  # a stream left early (a runaway answer) gives its connection back now
            self.emit(ModelRequest(agent.provider.model, time.monotonic() - started, len(calls), ok, first))

    async def _drive(self, user_message: str) -> None:
        agent = self.agent
        budget = self.budget
        self.conv.repair()  # a previous crash must not poison this turn
        self.conv.add_user(user_message, typed=True)
        self._tell_kept_note()
        agent.context.provenance.add_text(user_message)  # URLs the user wrote may be fetched unasked
        tools = agent.registry.definitions() or None
        while True:
            left = budget.calls_left()
            cap = _NO_COUNT if left is None else left
            batch = CallBatch(self._run_call,
                              lambda call: allowed_outright(agent.registry, agent.context, call, self._early),
                              self.conv, agent.limits.parallel, cap, early=agent.limits.early_tools,
                              cancelled=_cancelled_result, approval_lock=agent.approval_lock)
            budget.charge(requests=1)
            text, calls = await self._stream(tools, batch=batch)
            if not calls and budget.stopped is None:
                await self._finished(text, "answered")
                return
            results = await batch.run(calls[:cap])
            for call in calls[cap:]:
                result = ToolResult.error(f"Not run: the limit of {agent.limits.max_tool_calls} tool calls per "
                                          "turn is reached.")
                self.emit(ToolCallStarted(call.id, call.name, _loads(call.arguments), call.name))
                self.emit(ToolCallFinished(call.id, call.name, result, "limit"))
                self.conv.add_tool_result(call.id, call.name, result.for_model())
            budget.watch_round(text, calls, results)
            self.emit(budget.progress())
            if budget.requests == 1 and agent.limits.max_turn_cost is not None and budget.cost is None:
                self.emit(Notice(f"max_turn_cost is set, but the price of {agent.provider.model} is not known: "
                                 "the turn is bounded by its tokens, requests and the loop detector.", "warning"))
            stop = budget.stop_reason()
            if stop is not None:
                reason, detail = stop
                if reason in ("max_tool_calls", "max_iterations"):
                    await self._final_answer(reason, detail, tools)
                else:  # a spent budget pays for no more requests; a loop is not asked to go round once more
                    self.emit(Notice(f"Stopped: {detail}.", "warning"))
                    await self._finished(text, reason, detail)
                return

    async def _final_answer(self, reason: StopReason, detail: str, tools: list[dict[str, Any]] | None) -> None:
        self.emit(Notice(f"Stopped calling tools: {detail}.", "warning"))
        note = {
            "role": "user",
            "content": f"[swebash-ai] Tool use stopped: {detail}. Do not call tools. Answer now with "
            "what you have, and say what is left undone.",
        }
        text, calls = await self._stream(tools, "none", extra=[note])
        for call in calls:  # a model that ignores tool_choice="none" still gets every call answered
            self.conv.add_tool_result(call.id, call.name, f"Not run: {detail}.")
        await self._finished(text, reason, detail)

    async def _run_call(self, call: ToolCall, place: Place | None = None) -> ToolResult:
        agent = self.agent
        tool = agent.registry.get(call.name)
        parsed = _loads(call.arguments)
        decided_by = ""
        decision = "allow"
        line = place or Place.alone(agent.approval_lock)
        line.tell = lambda why: self.emit(ToolCallRunning(call.id) if why is None else ToolCallWaiting(call.id, why))

        def started(arguments: dict[str, Any] | str, summary: str) -> None:
            self.emit(ToolCallStarted(call.id, call.name, arguments, summary, line.response_id, line.position))

        if tool is None:
            started(parsed, call.name)
            result = agent.registry.unknown_tool(call.name)
            decided_by = "unknown_tool"
        else:
            args = tool.parse_arguments(call.arguments)
            if isinstance(args, ToolResult):
                started(parsed, call.name)
                result, decided_by = args, "invalid_arguments"
            else:
                summary = tool.describe(args)
                started(args.model_dump(), summary)
                try:
                    result, decision, decided_by = await self._guarded_run(call, tool, args, summary, line)
                except asyncio.CancelledError as exc:
                    cancelled = _cancelled_result(exc)
                    audit_call(self.agent, call, parsed, decision, decided_by or "cancelled", cancelled)
                    self.emit(ToolCallFinished(call.id, call.name, cancelled, "cancelled"))
                    raise
        audit_call(self.agent, call, parsed, decision, decided_by, result)
        self.emit(ToolCallFinished(call.id, call.name, result, decided_by))
        plan = result.metadata.get("plan") if result.ok else None
        if plan is not None:
            from swebash_ai.tools.plan import Plan  # loaded already: only its tool puts a plan there

            if isinstance(plan, Plan):
                self._plan_changed(plan)
        return result

    def _plan_changed(self, plan: Plan) -> None:
        """Keep the plan with the conversation (saved with the session) and tell the front end if it changed."""
        data = plan.to_json()
        if self.conv.meta.get("plan") == data:
            return
        self.conv.meta["plan"] = data
        self.emit(PlanUpdated(plan))

    def _asker(self, place: Place) -> Any:
        """The approver's question channel for ``ask_user``, one question (or approval) on screen at a time,
        after the approvals of the earlier calls."""
        ask = getattr(self.agent.approver, "ask", None)
        if ask is None:
            return None

        async def serialized(question: Any) -> Any:
            async with place.asking():
                return await ask(question)

        return serialized

    async def _guarded_run(self, call: ToolCall, tool: Any, args: Any, summary: str,
                           place: Place) -> tuple[ToolResult, str, str]:
        agent = self.agent
        ctx = agent.context
        own = tool.check(ctx, args)
        if own.decision == "deny":  # the floor: no rule, mode, hook or person crosses it
            reasons = "; ".join(own.reasons)
            return (
                ToolResult.denied(
                    f"{summary} is not allowed: {reasons or 'blocked by policy'}. "
                    "Do not retry it; find another way or ask the user."
                ),
                "deny",
                own.rule or "policy",
            )
        step = await agent.gate.before(
            tool.name, tool.category, args.model_dump(), own, self._proven,
            on_problem=lambda text: self.emit(Notice(text, "warning")),
        )
        verdict, decided_by = step.verdict, step.decided_by
        if verdict.decision == "deny":
            return ToolResult.denied(step.message), "deny", decided_by
        if verdict.decision == "ask":
            key = tool.session_key(ctx, args)
            detail = _detail(tool, ctx, args)
            refused, decided_by = await self._approve(
                call, tool.name, verdict, summary, detail, key, args.model_dump(), place,
                unchanged=lambda: _detail(tool, ctx, args) == detail,
            )
            if refused is not None:
                return refused, "ask", decided_by

        async def ask_more(more: Verdict, what: str, more_detail: str, more_key: str | None) -> str | None:
            refused, _by = await self._approve(call, tool.name, more, what, more_detail, more_key, args.model_dump(),
                                               place)
            return None if refused is None else refused.text

        # Unasked never means unconfined: only a person's answer "outside the sandbox" to this very call runs a
        # command with all of the user's rights; the runner confines everything else, a plain yes included (an
        # editor that picks the first "allow" by itself never takes a command out).
        unconfined = verdict.decision == "ask" and agent.approver.interactive and decided_by == OUTSIDE
        call_ctx = dataclasses.replace(ctx, on_output=lambda text: self.emit(ToolOutput(call.id, text)),
                                       approved=verdict.decision == "ask", ask=ask_more,
                                       unasked_change=own.decision == "ask" and verdict.decision == "allow",
                                       unconfined=unconfined, sandboxed=own.decision != "allow" and not unconfined,
                                       call_id=call.id, ask_user=self._asker(place),
                                       can_ask=agent.approver.interactive,
                                       on_event=self.emit)
        place.settled()  # it runs now: later calls may ask
        result = await _without_secrets(await tool.invoke(call_ctx, args))
        await self._after_tool(tool.name, args.model_dump(), result)
        return result, "ask" if "ask" in (own.decision, verdict.decision) else "allow", decided_by

    def _early(self, tool: str, category: str, arguments: dict[str, Any], own: Verdict) -> EarlyStart | None:
        """May this call start while the response streams (see ``agent/batch.py``)? Only when its decision is
        already known to be ``allow`` without a question: no before_tool hook matches (a hook's answer is known
        only by running it), and either no rule covers a call its policy allows, or rules and the mode settle
        it as ``allow`` (:meth:`Gate.settle`, the same code the call then runs through)."""
        gate = self.agent.gate
        if gate.matching("before_tool", tool, arguments):
            return None
        if (own.decision == "allow" and gate.rule_for(tool, arguments, self._proven) is None
                and gate.unproven(tool, arguments) is None):
            return "policy"
        step, _pinned = gate.settle(tool, category, arguments, own, self._proven)
        return "decided" if step.verdict.decision == "allow" else None

    def _proven(self, command: str) -> bool:
        """One simple command of a compound, judged alone by the command classifier."""
        policy = self.agent.context.command_policy
        if policy is None:
            return False
        return bool(policy.assess(command, str(self.agent.context.cwd)).decision == "allow")

    async def _after_tool(self, tool: str, arguments: dict[str, Any], result: ToolResult) -> None:
        gate = self.agent.gate
        for hook in gate.matching("after_tool", tool, arguments):
            payload = {"event": "after_tool", "tool": tool, "arguments": arguments,
                       "result": {"ok": result.ok, "status": result.status, "text": result.text[:20_000],
                                  "exit_code": result.exit_code}}
            await self._hook_notice(hook, payload)

    async def _hook_notice(self, hook: Any, payload: dict[str, Any]) -> None:
        """Run an after_tool or turn_end hook: its output is shown, a failure reported."""
        if self.agent.gate.run_hook is None:
            return
        opinion = await self.agent.gate.run_hook(hook, {**payload, "cwd": str(self.agent.gate.workspace),
                                                        "mode": self.agent.gate.mode})
        if opinion.problem:
            self.emit(Notice(f"{hook.describe()}: {opinion.problem}", "warning"))
        elif opinion.output:
            self.emit(Notice(f"{hook.describe()}: {opinion.output[:2000]}", "info"))

    async def _finished(self, text: str, reason: StopReason, detail: str = "") -> None:
        for hook in self.agent.gate.matching("turn_end"):
            await self._hook_notice(hook, {"event": "turn_end", "text": text, "reason": reason})
        self.emit(TurnFinished(text, reason, self._usage(), self.denied, detail))

    async def _approve(
        self,
        call: ToolCall,
        tool: str,
        verdict: Verdict,
        summary: str,
        detail: str,
        key: str | None,
        arguments: dict[str, Any],
        place: Place,
        unchanged: Callable[[], bool] | None = None,
    ) -> tuple[ToolResult | None, str]:
        """Settle an ``ask`` (:func:`~swebash_ai.agent.call_approval.settle_ask`) in the call's turn, counting the
        denials."""
        refused, by = await settle_ask(self.agent, self.emit, call, tool, verdict, summary, detail, key, arguments,
                                       unchanged, asking=place.asking)
        if refused is not None and refused.status == "denied":
            self.denied += 1
        return refused, by


_MASK_IN_THREAD = 128 * 1024


async def _without_secrets(result: ToolResult) -> ToolResult:
    """Whatever a tool returned (a file, a command's output, a page, an MCP server's answer), private keys and
    tokens in it stop here: the model, the transcript, the audit and the front ends get the masked result.
    A large result is scanned in a thread (about 0.2 s a MiB) so the event loop keeps drawing the screen."""
    if not isinstance(result.content, str) or len(result.content) < _MASK_IN_THREAD:
        return result.with_secrets_masked()
    return await asyncio.to_thread(result.with_secrets_masked)


def _loads(raw: str) -> dict[str, Any] | str:
    try:
        value = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        return raw
    return value if isinstance(value, dict) else raw


def _detail(tool: Any, ctx: ToolContext, args: Any) -> str:
    try:
        text = tool.preview(ctx, args)
        if text:
            return str(text)
    except Exception as exc:  # a preview that fails must not block the question
        log.debug("preview of %s failed: %s", tool.name, exc)
    return json.dumps(args.model_dump(), indent=2, ensure_ascii=False)


def _cancelled_result(exc: BaseException) -> ToolResult:
    """A cancelled call's result; a tool that stopped something on the way out says what (``result_message``:
    the exec tool names the processes it could not stop)."""
    message = getattr(exc, "result_message", None)
    return ToolResult.cancelled(message) if isinstance(message, str) else ToolResult.cancelled()
