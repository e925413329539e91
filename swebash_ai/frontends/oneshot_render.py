"""How a one-shot answer looks: plain text streamed on stdout (a pipe, ``NO_COLOR``, ``TERM=dumb``, ``--raw``),
Markdown on a colour terminal (rich, imported only then), or one JSON object per event (``--json``, see
docs/cli.md). Tool activity is one line per call on stderr. Every way out passes the terminal-text sanitiser
(:mod:`swebash_ai.safety.terminal_text`) unless ``--raw`` asks for the exact bytes.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, TextIO

from swebash_ai.errors import ExitCode
from swebash_ai.words import count

if TYPE_CHECKING:
    from swebash_ai.agent.events import AgentEvent
    from swebash_ai.errors import SwebashError
    from swebash_ai.session import Session


def format_error(error: SwebashError) -> str:
    """One readable block for stderr: ``swebash-ai: Title: message`` plus the hint, if any.

    A usage error's message already names the slip, so ``Usage error:`` in front would only repeat it.
    """
    from swebash_ai.errors import UsageError

    title = "" if isinstance(error, UsageError) else f"{error.title}: "
    text = f"swebash-ai: {title}{error.message}"
    return text + (f"\n{error.hint}" if error.hint else "")


def _outcome(event: Any) -> str:
    result = event.result
    process = result.metadata.get("process_id") if result.status == "ok" else None
    if process:  # background processes: which one, and is it still running
        started = "started in the background as " if result.metadata.get("background") else ""
        return f"{started}{process}, {result.metadata.get('state')} ({result.duration:.1f}s)"
    if why := result.metadata.get("unavailable"):  # ask_user: the text is written for the model, not the user
        return f"no one to answer ({why}); the model was told to go on"
    if result.status == "ok":
        code = f"exit {result.exit_code}, " if result.exit_code not in (None, 0) else ""
        return f"ok ({code}{result.duration:.1f}s)"
    first = result.text.strip().splitlines()[0] if result.text.strip() else ""
    first = first if len(first) <= 160 else first[:159] + "…"
    label = {"timeout": "timed out"}.get(result.status, result.status)
    return f"{label}: {first}" if first else label


class PlainRenderer:
    """Text as it arrives on stdout; one line per tool call, notices and errors on stderr."""

    def __init__(self, out: TextIO, err: TextIO, *, raw: bool = False) -> None:
        from swebash_ai.safety.terminal_text import StreamSanitizer

        self.out = out
        self.err = err
        self._summaries: dict[str, str] = {}
        self._text_tail = ""
        self._wrote_text = False
        self._after_tools = False
        # Calls denied because no terminal could ask: the closing lines say how to allow them (each call's own
        # line is cut to one screen line, and that advice with it). Severe ones --yes never allows.
        self._unasked = 0
        self._severe: set[str] = set()
        self._need_a_person = 0
        self._clean = None if raw else StreamSanitizer()  # a sequence may be cut between two deltas

    def _safe(self, piece: str) -> str:
        return piece if self._clean is None else self._clean.feed(piece)

    def _held(self) -> str:
        """What the sanitiser held back (an unfinished sequence ends with the piece of answer)."""
        return "" if self._clean is None else self._clean.finish()

    def text(self, piece: str) -> None:
        if piece := self._safe(piece):
            self._write(piece)

    def _write(self, piece: str) -> None:
        if self._after_tools and self._wrote_text and not self._text_tail.endswith("\n"):
            self.out.write("\n")
        self._after_tools = False
        self.out.write(piece)
        self.out.flush()
        self._wrote_text = self._wrote_text or bool(piece)
        self._text_tail = (self._text_tail + piece)[-2:]

    def end_text(self) -> None:
        """The current piece of answer ended (a tool call or the end of the turn follows)."""
        if held := self._held():
            self._write(held)

    def status(self, line: str) -> None:
        from swebash_ai.safety.terminal_text import safe

        self.end_text()
        if self._wrote_text and not self._text_tail.endswith("\n") and self.out.isatty():
            self.out.write("\n")  # keep the terminal readable when stdout and stderr share it
            self.out.flush()
            self._text_tail = "\n"
        self.err.write(safe(line, visible=True) + "\n")  # tool summaries, server errors: shown, not obeyed
        self.err.flush()

    def handle(self, event: AgentEvent, session: Session) -> None:
        from swebash_ai.agent import events as ev

        if isinstance(event, ev.SubagentEvent):
            self._child(event)
        elif isinstance(event, ev.TextDelta):
            self.text(event.text)
        elif isinstance(event, ev.ToolCallStarted):
            self._summaries[event.call_id] = event.summary
            self._after_tools = True
            self.end_text()
        elif isinstance(event, ev.ApprovalRequested):
            if event.request.verdict.severe:
                self._severe.add(event.request.call_id)
            self.end_text()
            if self._wrote_text and not self._text_tail.endswith("\n") and self.out.isatty():
                self.out.write("\n")
                self._text_tail = "\n"
            self.out.flush()
        elif isinstance(event, ev.ToolCallFinished):
            summary = self._summaries.get(event.call_id, event.name)
            by = f" [{event.decided_by}]" if event.decided_by in ("--yes", "no-confirm", "session") else ""
            mark = "✓" if event.result.ok else "✗"
            self.status(f"{mark} {summary}: {_outcome(event)}{by}")
            if event.result.metadata.get("sandbox_blocked"):  # in full, on a line of its own: never cut
                from swebash_ai.sandbox.confine import refused_line

                self.status(f"  {refused_line(event.result.metadata)}")
            if event.decided_by == "non-interactive":
                if event.call_id in self._severe:
                    self._need_a_person += 1
                else:
                    self._unasked += 1
        elif isinstance(event, ev.PlanUpdated):
            plan = event.plan
            head = f"plan ({plan.done}/{len(plan.items)} done)" + (f": {plan.explanation}" if plan.explanation else "")
            self.status("\n".join([head, *("  " + line for line in plan.lines())]))
        elif isinstance(event, ev.Notice):
            self.status(f"swebash-ai: {event.text}")
        elif isinstance(event, ev.BudgetUsed) and event.requests % BUDGET_EVERY == 0:
            from swebash_ai.agent.limits import spent_line

            self.status(f"swebash-ai: {spent_line(event)}")
        elif isinstance(event, ev.ModelNote):  # no one else said it: one-shot shows no exit as it happens
            self.status(f"swebash-ai: told the model: {event.text}")
        elif isinstance(event, ev.TurnFinished):
            self.finish(event)
            if self._unasked:
                self.status(f"swebash-ai: {count(self._unasked, 'call')} needed approval and there was no terminal "
                            "to ask on; run again with --yes to allow them (what the policy denies still never runs).")
            if self._need_a_person:
                self.status(f"swebash-ai: {count(self._need_a_person, 'call')} could be catastrophic and --yes "
                            "never allows that; run swebash-ai in a terminal to be asked, or do it yourself.")

    def _child(self, nested: Any) -> None:
        """A helper agent's progress, on stderr like the parent's calls: each finished call, under its agent."""
        from swebash_ai.agent import events as ev

        agents = []
        event = nested
        while isinstance(event, ev.SubagentEvent):
            agents.append(event.agent)
            event = event.event
        who = " > ".join(agents)
        if isinstance(event, ev.ToolCallStarted):
            self._summaries[event.call_id] = event.summary
        elif isinstance(event, ev.ToolCallFinished):
            mark = "✓" if event.result.ok else "✗"
            self.status(f"  [{who}] {mark} {self._summaries.get(event.call_id, event.name)}: {_outcome(event)}")
            if event.decided_by == "non-interactive":
                self._unasked += 1
        elif isinstance(event, ev.ApprovalRequested):
            self.end_text()
            self.out.flush()
        elif isinstance(event, ev.Notice):
            self.status(f"swebash-ai: [{who}] {event.text}")
        elif isinstance(event, ev.TurnFailed):
            self.status(f"  [{who}] failed: {event.error.message}")

    def finish(self, event: Any) -> None:
        self.end_text()
        if self._wrote_text and not self._text_tail.endswith("\n"):
            self.out.write("\n")
            self._text_tail = "\n"
        self.out.flush()
        if self._clean is not None and (removed := self._clean.removed):
            from swebash_ai.safety.terminal_text import removed_note

            self.err.write(f"swebash-ai: {removed_note(removed, 'the answer')} (--raw keeps them).\n")
            self.err.flush()
            self._clean.removed = 0

    def error(self, error: SwebashError, code: ExitCode) -> None:
        self.finish(None)  # what arrived of the answer ends its line on stdout; the error goes to stderr
        self.status(format_error(error))

    def interrupted(self) -> None:
        self.finish(None)
        self.err.write("swebash-ai: interrupted; the session is saved (continue it with --resume).\n")
        self.err.flush()


class MarkdownRenderer(PlainRenderer):
    """For a terminal: the answer re-rendered as Markdown while it streams, printed in full when it ends."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        super().__init__(out, err)  # never raw: --raw prints the exact text, so it is never rendered
        from rich.console import Console

        self._console = Console(file=out)
        self._buffer: list[str] = []
        self._live: Any = None

    def text(self, piece: str) -> None:
        from rich.live import Live

        from swebash_ai.frontends.markdown_links import LinkSafeMarkdown as Markdown

        if not (piece := self._safe(piece)):
            return
        self._buffer.append(piece)
        markdown = Markdown("".join(self._buffer))
        if self._live is None:
            self._live = Live(
                markdown, console=self._console, transient=True, refresh_per_second=8, vertical_overflow="ellipsis"
            )
            self._live.start()
        else:
            self._live.update(markdown)

    def end_text(self) -> None:
        from swebash_ai.frontends.markdown_links import LinkSafeMarkdown as Markdown

        if self._live is not None:
            self._live.stop()
            self._live = None
        if held := self._held():
            self._buffer.append(held)
        text = "".join(self._buffer)
        self._buffer.clear()
        if text.strip():
            self._console.print(Markdown(text))
        self.out.flush()


_JSON_C1 = {code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)}


class JsonRenderer:
    """``--json``: one JSON object per line on stdout for every event; nothing else on stdout."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out = out
        self.err = err

    def emit(self, obj: dict[str, Any]) -> None:
        # JSON escapes C0 controls but leaves DEL and C1 (8-bit CSI, OSC) as they are: escape those too.
        line = json.dumps(obj, ensure_ascii=False, default=str).translate(_JSON_C1)
        self.out.write(line + "\n")
        self.out.flush()

    def handle(self, event: AgentEvent, session: Session) -> None:
        obj = event_to_json(event)
        if obj is None:
            return
        if obj["type"] == "final":
            obj["session_id"] = session.conversation.id
            obj["exit_code"] = int(finished_code(event))
        self.emit(obj)

    def error(self, error: SwebashError, code: ExitCode) -> None:
        self.emit(
            {
                "type": "error",
                "title": error.title,
                "message": error.message,
                "hint": error.hint,
                "exit_code": int(code),
            }
        )

    def interrupted(self) -> None:
        """The ``final`` event (reason ``cancelled``) already said it."""


Renderer = PlainRenderer | JsonRenderer


def event_to_json(event: AgentEvent) -> dict[str, Any] | None:
    """The ``--json`` form of an event (docs/cli.md); ``None`` for events with no JSON form."""
    from swebash_ai.agent import events as ev

    def usage(u: Any) -> dict[str, Any] | None:
        if u is None:
            return None
        return {"prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens,
                "cached_tokens": u.cached_tokens, "cost": u.cost}

    if isinstance(event, ev.SubagentEvent):  # a helper agent's event, nested under the task call that runs it
        inner = event_to_json(event.event)
        if inner is None and isinstance(event.event, ev.TurnFailed):
            inner = {"type": "error", "title": event.event.error.title, "message": event.event.error.message}
        return None if inner is None else {"type": "subagent", "id": event.call_id, "agent": event.agent,
                                           "event": inner}
    if isinstance(event, ev.TextDelta):
        return {"type": "text", "text": event.text}
    if isinstance(event, ev.ToolCallStarted):
        return {
            "type": "tool_call",
            "id": event.call_id,
            "name": event.name,
            "arguments": event.arguments,
            "summary": event.summary,
        }
    if isinstance(event, ev.ToolCallWaiting):
        return {"type": "tool_waiting", "id": event.call_id, "waiting_for": event.waiting_for}
    if isinstance(event, ev.ToolCallRunning):
        return {"type": "tool_running", "id": event.call_id}
    if isinstance(event, ev.ApprovalRequested):
        r = event.request
        return {
            "type": "approval",
            "id": r.call_id,
            "tool": r.tool,
            "summary": r.summary,
            "detail": r.detail,
            "cwd": r.cwd,
            "reasons": list(r.verdict.reasons),
            "rule": r.verdict.rule,
        }
    if isinstance(event, ev.ToolOutput):
        return {"type": "tool_output", "id": event.call_id, "text": event.text}
    if isinstance(event, ev.ToolCallFinished):
        res = event.result
        return {
            "type": "tool_result",
            "id": event.call_id,
            "name": event.name,
            "ok": res.ok,
            "status": res.status,
            "exit_code": res.exit_code,
            "duration": round(res.duration, 3),
            "truncated": res.truncated,
            "decided_by": event.decided_by,
            **({"sandbox": res.metadata["sandbox"]} if "sandbox" in res.metadata else {}),
            **({"sandbox_blocked": res.metadata["sandbox_blocked"]} if "sandbox_blocked" in res.metadata else {}),
            **({"sandbox_refused": res.metadata["sandbox_refused"]} if "sandbox_refused" in res.metadata else {}),
            **({"diagnostics": res.metadata["diagnostics"]} if "diagnostics" in res.metadata else {}),
            "content": res.text,
        }
    if isinstance(event, ev.PlanUpdated):
        return {"type": "plan", **event.plan.to_json()}
    if isinstance(event, ev.Usage):
        return {"type": "usage", **(usage(event) or {})}
    if isinstance(event, ev.Notice):
        return {"type": "notice", "level": event.level, "text": event.text}
    if isinstance(event, ev.BudgetUsed):
        return {"type": "budget", "requests": event.requests, "tool_calls": event.tool_calls, "tokens": event.tokens,
                "cost": event.cost, "max_requests": event.max_requests, "max_tokens": event.max_tokens,
                "max_cost": event.max_cost}
    if isinstance(event, ev.ModelNote):
        return {"type": "model_note", "text": event.text}
    if isinstance(event, ev.TurnFinished):
        return {
            "type": "final",
            "text": event.text,
            "reason": event.reason,
            **({"detail": event.detail} if event.detail else {}),
            "denied": event.denied,
            "usage": usage(event.usage),
        }
    return None


BUDGET_EVERY = 10
"""The plain renderer says what a turn has spent every this many model requests (``--json``: every one)."""


def finished_code(event: Any) -> ExitCode:
    if event.reason == "cancelled":
        return ExitCode.INTERRUPTED
    if event.denied > 0:
        return ExitCode.DENIED
    return ExitCode.OK


def make_renderer(
    json_events: bool, out: TextIO, err: TextIO, environ: dict[str, str] | None = None, *, raw: bool = False
) -> Renderer:
    """JSON, Markdown (a colour terminal) or plain text (a pipe, ``NO_COLOR``, ``TERM=dumb``, ``--raw``)."""
    env = os.environ if environ is None else environ
    if json_events:
        return JsonRenderer(out, err)
    plain = raw or (not out.isatty()) or bool(env.get("NO_COLOR")) or env.get("TERM") == "dumb"
    return PlainRenderer(out, err, raw=raw) if plain else MarkdownRenderer(out, err)
