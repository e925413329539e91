"""What a turn may spend, what it spent, and the loop detector.

Contract:

- :class:`LoopLimits` are the turn's bounds, built from the settings by the session (keyword arguments:
  fields are only ever added). ``max_iterations`` is a generous ceiling on model requests; ``max_tool_calls``
  is 0 (no count) unless a user sets one; ``max_turn_tokens`` and ``max_turn_cost`` are budgets that are off
  (``None``) by default; ``loop_repeats`` is the detector's window (0: off).
- :class:`Budget` is what one turn spent: model requests, tool calls, tokens and cost. The loop charges each
  request's usage as it arrives, each call it runs, and what a call reports having spent itself in
  ``result.metadata["usage"]`` (``{"prompt_tokens": int, "completion_tokens": int, "cost": float | None}``:
  a child agent's tokens count against the turn that started it). :meth:`Budget.stop_reason` says, between
  two requests, whether the turn must stop and why, in a sentence naming the setting that raises the bound.
- The loop detector (:class:`Repeats` and the pure functions under it) watches the turn's calls in call order
  with a digest of each result, and the model's texts. It stops a turn when the same call with the same
  arguments came back with the same result ``loop_repeats`` times in a row, when the same call failed
  :data:`FAILED_REPEATS` times in a row without a change (the error text may differ: a timestamp), when the
  model's texts repeat in a cycle across responses (twice the window: texts alone are weaker evidence), or
  when one response's text runs into a phrase repeated over and over. A file read again after it changed has
  another result, so honest re-reads never count; every tool is treated alike (a child's ``task`` call too).

Why budgets and a detector rather than a small count of calls: real tasks take dozens or hundreds of steps,
and a count stops them as surely as it stops a model stuck in a loop. The detector stops the loop within its
window and leaves honest work alone; the budgets bound what a turn may cost.
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from swebash_ai.agent.events import BudgetUsed, StopReason

if TYPE_CHECKING:
    from swebash_ai.config.settings import Settings
    from swebash_ai.providers.base import ToolCall
    from swebash_ai.tools.registry import ToolResult

LIMIT_SETTINGS: dict[str, str] = {
    "max_tool_calls": "max_tool_calls_per_turn",
    "max_iterations": "tools_max_iter",
    "max_turn_tokens": "max_turn_tokens",
    "max_turn_cost": "max_turn_cost",
    "loop": "loop_repeats",
}
"""The setting that raises (or, for ``loop``, widens) each bound a turn can stop at (its variable:
``SWEBASH_AI_`` + the name, upper case)."""

FAILED_REPEATS = 3
"""The same call failing this many times in a row, without a change, is a loop (at most ``loop_repeats``)."""

TEXT_TAIL_MIN = 1200
"""A response whose last characters are one phrase (up to :data:`TEXT_UNIT_MAX` characters) repeated, over at
least this many characters and :data:`TEXT_TAIL_TIMES` times, has run away (checked as it streams)."""

TEXT_TAIL_TIMES = 16

TEXT_UNIT_MAX = 200

TEXT_MIN = 20
"""Texts shorter than this never make a cycle across responses alone ("Done.", "Next file.")."""


@dataclass(frozen=True)
class LoopLimits:
    """The bounds of one turn (see the module docstring)."""

    max_iterations: int = 300
    """Model requests with tool calls in one turn; at the ceiling the model is asked for a last answer."""
    max_tool_calls: int = 0
    """Tool calls in one turn; 0: no count (the detector and the budgets bound the turn)."""
    parallel: int = 4
    context_tokens: int = 100_000
    early_tools: bool = True
    """Start a call the policy allows as soon as it is complete in the stream, not when the response ends."""
    max_turn_tokens: int | None = None
    """Tokens (prompt + completion, every request of the turn) after which the turn stops; ``None``: no budget."""
    max_turn_cost: float | None = None
    """USD after which the turn stops, where the provider or litellm knows the price; ``None``: no budget."""
    loop_repeats: int = 5
    """The loop detector's window: the same call with the same result this many times in a row; 0: off."""

    @classmethod
    def from_settings(cls, s: Settings) -> LoopLimits:
        return cls(max_iterations=s.tools_max_iter, max_tool_calls=s.max_tool_calls_per_turn,
                   parallel=s.tools_parallel, context_tokens=s.context_tokens, early_tools=s.tools_early,
                   max_turn_tokens=s.max_turn_tokens, max_turn_cost=s.max_turn_cost, loop_repeats=s.loop_repeats)


def _setting(reason: str) -> str:
    name = LIMIT_SETTINGS[reason]
    return f"{name}, SWEBASH_AI_{name.upper()}"


def format_count(count: int) -> str:
    """12, 12.3k, 1.23M: token counts for a sentence."""
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.2f}M"


def spent_line(event: BudgetUsed) -> str:
    """``step 20 of 300 · 31 tool calls · 512.3k of 2.00M tokens · $0.1200``: what a running turn spent, as
    every front end shows it."""
    tokens = format_count(event.tokens) + (f" of {format_count(event.max_tokens)}" if event.max_tokens else "")
    cost = "" if event.cost is None else f" · ${event.cost:.4f}"
    if cost and event.max_cost:
        cost += f" of ${event.max_cost:g}"
    return f"step {event.requests} of {event.max_requests} · {event.tool_calls} tool calls · {tokens} tokens{cost}"


@dataclass
class Budget:
    """What one turn spent (see the module docstring); ``stopped`` is set by the detector."""

    limits: LoopLimits
    requests: int = 0
    tool_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost: float | None = None
    stopped: tuple[StopReason, str] | None = None
    """Why the turn must stop though no budget ran out (a loop), with the sentence to show."""
    repeats: Repeats = field(init=False, repr=False)
    _answer: list[str] | None = field(default=None, init=False, repr=False)
    """The streaming answer :meth:`runaway` watches (the list the loop appends to; a new list, a new answer)."""
    _size: int = field(default=0, init=False, repr=False)
    """Characters in ``_answer``: kept as it grows, not summed per piece (that made each piece cost the answer)."""
    _checked_at: int = field(default=0, init=False, repr=False)
    """How much of the streaming answer :meth:`runaway` has looked at."""

    def __post_init__(self) -> None:
        self.repeats = Repeats(self.limits.loop_repeats)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def charge(self, *, requests: int = 0, tool_calls: int = 0, prompt_tokens: int = 0, completion_tokens: int = 0,
               cached_tokens: int = 0, cost: float | None = None) -> None:
        self.requests += requests
        self.tool_calls += tool_calls
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.cached_tokens += cached_tokens
        if cost is not None:
            self.cost = (self.cost or 0.0) + cost

    def charge_usage(self, usage: Any) -> None:
        """What a tool call spent itself (``result.metadata["usage"]``); anything malformed is ignored."""
        if not isinstance(usage, dict):
            return
        prompt, completion, cost = (usage.get(k) for k in ("prompt_tokens", "completion_tokens", "cost"))
        self.charge(prompt_tokens=prompt if isinstance(prompt, int) else 0,
                    completion_tokens=completion if isinstance(completion, int) else 0,
                    cost=float(cost) if isinstance(cost, int | float) else None)

    def calls_left(self) -> int | None:
        """Tool calls the turn may still start; ``None``: no count."""
        if self.limits.max_tool_calls <= 0:
            return None
        return max(0, self.limits.max_tool_calls - self.tool_calls)

    def stop_reason(self) -> tuple[StopReason, str] | None:
        """Whether the turn must stop before its next request, and the sentence saying why (see module)."""
        limits = self.limits
        if self.stopped is not None:
            return self.stopped
        if limits.max_tool_calls > 0 and self.tool_calls >= limits.max_tool_calls:
            return "max_tool_calls", (f"the turn ran {self.tool_calls} tool calls, its limit "
                                      f"({_setting('max_tool_calls')} = {limits.max_tool_calls})")
        if limits.max_turn_tokens is not None and self.tokens >= limits.max_turn_tokens:
            return "max_turn_tokens", (f"the turn used {format_count(self.tokens)} tokens, its budget "
                                       f"({_setting('max_turn_tokens')} = {limits.max_turn_tokens})")
        if limits.max_turn_cost is not None and self.cost is not None and self.cost >= limits.max_turn_cost:
            return "max_turn_cost", (f"the turn cost ${self.cost:.4f}, its budget "
                                     f"({_setting('max_turn_cost')} = {limits.max_turn_cost})")
        if self.requests >= limits.max_iterations:
            return "max_iterations", (f"the turn made {self.requests} model requests, its limit "
                                      f"({_setting('max_iterations')} = {limits.max_iterations})")
        return None

    def watch_round(self, text: str, calls: list[ToolCall], results: list[ToolResult]) -> None:
        """A round ended: charge its calls and what they spent themselves (``result.metadata["usage"]``), and
        show them (in call order) and the response's text to the loop detector."""
        self.charge(tool_calls=len(results))
        for call, result in zip(calls, results, strict=False):
            if "usage" in result.metadata:
                self.charge_usage(result.metadata["usage"])
            self._loop(self.repeats.call(call.name, call.arguments, result.for_model(), result.ok))
        self._loop(self.repeats.text(text))

    def runaway(self, pieces: list[str]) -> bool:
        """Has the streaming answer (``pieces``, joined in place as it is checked) run into one phrase repeated
        over and over (:func:`repeating_tail`)? Called after each piece is added; looked at every 500 characters
        of each answer (another list is another answer); the loop then drops the stream and the turn stops
        (``loop``)."""
        if self.limits.loop_repeats <= 0:
            return False
        if pieces is self._answer:
            self._size += len(pieces[-1])
        else:  # the first piece of an answer
            self._answer, self._size, self._checked_at = pieces, sum(map(len, pieces)), 0
        size = self._size
        if size - self._checked_at < 500:
            return False
        self._checked_at = size
        pieces[:] = ["".join(pieces)]
        unit = repeating_tail(pieces[0])
        if unit is not None:
            self._loop(f"the model's answer kept repeating “{' '.join(unit.split())[:80]}”, so it was cut off")
        return unit is not None

    def _loop(self, repeated: str | None) -> None:
        if repeated is not None and self.stopped is None:
            self.stopped = ("loop", f"{repeated} ({_setting('loop')} = {self.limits.loop_repeats}; 0 turns the "
                                    "detector off)")

    def progress(self) -> BudgetUsed:
        limits = self.limits
        return BudgetUsed(self.requests, self.tool_calls, self.tokens, self.cost, limits.max_iterations,
                          limits.max_turn_tokens, limits.max_turn_cost)


# --- the loop detector -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Seen:
    """One call as the detector remembers it: what was asked, a digest of what came back, whether it failed."""

    name: str
    arguments: str
    """The arguments as canonical JSON (sorted keys), or the raw text when they were not JSON."""
    result: str
    ok: bool


def call_key(arguments: str) -> str:
    """Canonical arguments: the same call spelled with other spacing or key order is the same call."""
    try:
        return json.dumps(json.loads(arguments), sort_keys=True, ensure_ascii=False)
    except (ValueError, TypeError):
        return arguments


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _shown(seen: Seen) -> str:
    args = seen.arguments if len(seen.arguments) <= 120 else seen.arguments[:117] + "..."
    return f"{seen.name} {args}"


def repeated_call(calls: list[Seen], repeats: int) -> str | None:
    """What repeated, when the last calls are the same call: ``repeats`` times with the same result, or
    :data:`FAILED_REPEATS` failures (the error text may differ); else ``None``."""
    if repeats <= 0 or not calls:
        return None
    last = calls[-1]
    same = 0
    same_result = 0
    for seen in reversed(calls):
        if (seen.name, seen.arguments) != (last.name, last.arguments):
            break
        same += 1
        if same_result == same - 1 and seen.result == last.result:
            same_result += 1
    if same_result >= repeats:
        return f"{_shown(last)} was called {same_result} times in a row with the same result each time"
    failed = min(FAILED_REPEATS, repeats)
    if not last.ok and same >= failed and all(not s.ok for s in calls[-failed:]):
        return f"{_shown(last)} failed {failed} times in a row, retried without a change"
    return None


def text_cycle(texts: list[str], repeats: int) -> str | None:
    """What repeated, when the model's last texts (one per response, empty ones left out) go round a cycle of
    one to three texts ``repeats`` times; else ``None``. The loop passes twice its window: a model may say
    the same short thing while it polls a process, so the texts alone need more evidence than calls."""
    if repeats <= 0:
        return None
    for period in (1, 2, 3):
        span = period * repeats
        if len(texts) < span:
            return None
        tail = texts[-span:]
        if (all(tail[i] == tail[i % period] for i in range(span)) and len(set(tail[:period])) == period
                and sum(map(len, tail[:period])) >= TEXT_MIN):
            first = " ".join(tail[0].split())
            shown = first if len(first) <= 100 else first[:97] + "..."
            cycle = "the same text" if period == 1 else f"a cycle of {period} texts"
            return f"the model wrote {cycle} {repeats} times in a row (“{shown}”)"
    return None


def repeating_tail(text: str) -> str | None:
    """The phrase a runaway response repeats at its end (see :data:`TEXT_TAIL_MIN`), else ``None``."""
    if len(text) < TEXT_TAIL_MIN:
        return None
    tail = text[-TEXT_TAIL_TIMES * TEXT_UNIT_MAX:]
    for size in range(1, TEXT_UNIT_MAX + 1):
        unit = tail[-size:]
        if tail[-2 * size:-size] != unit:
            continue
        times = max(TEXT_TAIL_TIMES, -(-TEXT_TAIL_MIN // size))
        if len(tail) >= times * size and tail[-times * size:] == unit * times and unit.strip():
            at = next((i for i in range(1, size) if unit[i - 1].isspace() and not unit[i].isspace()), 0)
            return unit[at:] + unit[:at]  # as a person reads it: from the start of a word
    return None


class Repeats:
    """The detector's memory for one turn: the last calls in call order and the texts of the responses."""

    def __init__(self, repeats: int) -> None:
        self.repeats = repeats
        keep = max(repeats, FAILED_REPEATS) + 1
        self.calls: deque[Seen] = deque(maxlen=keep)
        self.texts: deque[str] = deque(maxlen=6 * repeats + 1)

    def call(self, name: str, arguments: str, result_text: str, ok: bool) -> str | None:
        """Remember a call (in call order); what repeated when this one closes a loop."""
        if self.repeats <= 0:
            return None
        self.calls.append(Seen(name, call_key(arguments), digest(result_text), ok))
        return repeated_call(list(self.calls), self.repeats)

    def text(self, text: str) -> str | None:
        """Remember a response's text; what repeated when it closes a cycle."""
        if self.repeats <= 0 or not text.strip():
            return None
        self.texts.append(text.strip())
        return text_cycle(list(self.texts), 2 * self.repeats)
