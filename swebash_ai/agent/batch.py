"""The tool calls of one model response, run concurrently: early ones while it streams, the rest after.

:class:`CallBatch` is the loop's helper (:mod:`swebash_ai.agent.loop`). It sees each call as the provider
yields it (:meth:`CallBatch.offer`) and starts those the loop says may start early; when the response has
ended, :meth:`CallBatch.run` starts the others in call order, waits for all and adds every result to the
conversation in call order, whatever order they finished in. At most ``parallel`` run at a time, early or
not, and calls past the turn's count (``max_tool_calls``, when one is set) are never started here.

Why results wait for the end: the conversation needs the assistant message (with all its calls) before any
result, and the model reads results in the order it made the calls.

Questions come in call order too: each call gets its place in the response's
:class:`~swebash_ai.agent.question_order.QuestionLine`, so a call that started early (its tool's policy allows
it alone) may run before an earlier call held back for approval, but cannot ask anything before it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from swebash_ai.agent.conversation import BROKE_OFF, STOPPED, Conversation
from swebash_ai.agent.question_order import Place, QuestionLine, Slot
from swebash_ai.providers.base import ToolCall
from swebash_ai.safety.verdict import Verdict
from swebash_ai.tools.registry import ToolContext, ToolRegistry, ToolResult

log = logging.getLogger(__name__)


EarlyStart = Literal["policy", "decided"]
"""Why a call may start while the response streams: its tool's own policy allows it and nothing later in the
pipeline speaks about it (``policy``), or rules and the mode settle it as ``allow`` with no hook to ask
(``decided``)."""

Judge = Callable[[str, str, dict[str, Any], Verdict], "EarlyStart | None"]


def _policy_only(_tool: str, _category: str, _arguments: dict[str, Any], own: Verdict) -> EarlyStart | None:
    return "policy" if own.decision == "allow" else None


def allowed_outright(registry: ToolRegistry, context: ToolContext, call: ToolCall,
                     judge: Judge = _policy_only) -> EarlyStart | None:
    """May ``call`` start while the response still streams, and why (``None``: it waits for the end)?

    The tool's own policy is asked first (its ``deny`` is the floor: such a call waits); ``judge`` (the loop's)
    then says whether the rest of the pipeline ends in ``allow`` without a question. This can only hold a call
    back, never let one through: the call then runs through the loop's one path like any other (validation,
    policy, rules, mode, hooks, approval, audit)."""
    tool = registry.get(call.name)
    if tool is None:
        return None
    args = tool.parse_arguments(call.arguments)
    if isinstance(args, ToolResult):
        return None
    try:
        own = tool.check(context, args)
        return None if own.decision == "deny" else judge(tool.name, tool.category, args.model_dump(), own)
    except Exception:  # the real run reports it; here it only means "not early"
        log.debug("policy of %s failed while streaming", call.name, exc_info=True)
        return None


class CallBatch:
    """Runs one response's calls; ``run_call`` is the loop's whole path for one call (policy to audit)."""

    def __init__(
        self,
        run_call: Callable[[ToolCall, Place], Awaitable[ToolResult]],
        starts_early: Callable[[ToolCall], EarlyStart | None],
        conversation: Conversation,
        parallel: int,
        budget: int,
        *,
        early: bool,
        cancelled: Callable[[BaseException], ToolResult],
        approval_lock: asyncio.Lock,
    ) -> None:
        self._run_call = run_call
        self._starts_early = starts_early
        self._conv = conversation
        self._semaphore = asyncio.Semaphore(parallel)
        self._budget = budget
        self._cancelled = cancelled
        self.early = early
        self.tasks: list[asyncio.Task[ToolResult] | None] = []  # by position in the response
        self._line = QuestionLine(approval_lock, streaming=early)  # by position too: who may ask next
        self._stopped: dict[int, ToolResult] = {}  # cancelled calls that said what their stop did
        self._held = False  # a call of this response waits for its end (it may ask)

    @property
    def started(self) -> bool:
        """Has any call started (so a stream that ends badly must stop it and keep its result)?"""
        return any(task is not None for task in self.tasks)

    def offer(self, call: ToolCall) -> None:
        """A complete call arrived while the response streams: start it now when it may start early."""
        position = len(self.tasks)
        self.tasks.append(None)
        self._line.add()
        why = self._starts_early(call) if self.early and position < self._budget else None
        # A call that rules or the mode allow starts early only while no call before it waits for the end:
        # were its decision to change before it runs (a mode switched meanwhile), its question still could
        # not come before the question of an earlier call. A call only its own policy speaks about is not held
        # so: no mode turns its allow into a question (accept-edits only lifts, plan only refuses).
        if why == "policy" or (why == "decided" and not self._held):
            self._start(position, call)
        else:
            self._held = True

    def _start(self, position: int, call: ToolCall) -> None:
        self.tasks[position] = asyncio.create_task(self._one(position, call))

    async def _one(self, position: int, call: ToolCall) -> ToolResult:
        slot = Slot(self._semaphore)  # given back while the call waits to ask (see agent/question_order.py)
        place = self._line.place(position, slot)
        try:
            await slot.take()
            return await self._run_call(call, place)
        except asyncio.CancelledError as exc:
            if hasattr(exc, "result_message"):  # gather only hands back a bare CancelledError
                self._stopped[position] = self._cancelled(exc)
            raise
        finally:
            place.settled()  # refused, failed, cancelled or done: nothing later waits for it any more
            slot.give_back()

    async def run(self, calls: list[ToolCall]) -> list[ToolResult]:
        """The response ended: start the calls not started yet (in order), wait for all, and add the results to
        the conversation in call order (and return them so). Cancelled: stops them all and keeps what finished."""
        self._line.streaming = False
        for _ in range(len(calls) - len(self.tasks)):
            self.tasks.append(None)
            self._line.add()
        for position, call in enumerate(calls):
            if self.tasks[position] is None:
                self._start(position, call)
        try:
            results = await asyncio.gather(*(t for t in self.tasks[: len(calls)] if t is not None))
        except BaseException:
            await self.stop()
            self.record(calls)  # what finished before the cancel; Conversation.repair answers the rest
            raise
        for call, result in zip(calls, results, strict=True):
            self._conv.add_tool_result(call.id, call.name, result.for_model())
        return results

    async def abandon(self, calls: list[ToolCall], text: str, *, cut: bool) -> None:
        """The stream ended early (``cut`` by an error, or cancelled) after calls started: stop them, and keep
        the text and every call received so far, each with its result, so the conversation stays valid and
        says what happened. Cancelled: calls without a result are left to ``Conversation.repair``."""
        self._line.streaming = False
        await self.stop()
        self._conv.add_assistant(text, calls, incomplete=BROKE_OFF if cut else STOPPED)
        if not cut:
            self.record(calls)
            return
        self.record(
            calls,
            stopped="Cancelled: the response broke off while this call ran, so it was stopped; it may have "
            "partly run.",
            unstarted="Not run: the response broke off before it ended.",
        )

    async def stop(self) -> None:
        """Cancel the calls still running and wait until they have stopped."""
        tasks = [t for t in self.tasks if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def record(self, calls: list[ToolCall], *, stopped: str | None = None, unstarted: str | None = None) -> None:
        """Add the result of each call that has one (it finished, or said what its stop did). ``stopped``
        answers the other started calls and ``unstarted`` the calls never started, when given; otherwise
        ``Conversation.repair`` answers them later."""
        for position, call in enumerate(calls):
            task = self.tasks[position] if position < len(self.tasks) else None
            text = unstarted
            if task is not None:
                text = stopped
                if task.done() and not task.cancelled() and task.exception() is None:
                    text = task.result().for_model()
                elif position in self._stopped:
                    text = self._stopped[position].for_model()
            if text is not None:
                self._conv.add_tool_result(call.id, call.name, text)
