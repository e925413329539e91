"""The terminal question for one-shot mode: a prompt-toolkit prompt with the TUI modal's choices.

``y`` allow once, ``a`` allow for this session, ``n`` deny (the default: Enter denies), ``d`` describe (the model
explains the call in a sentence or two, then the question comes back). The tool, the full command or diff, the
working directory and the policy's reasons are shown first. When stdin is a pipe (``cat log | swebash-ai -c``)
the answer is read from ``/dev/tty``; the question is written to stderr (or ``/dev/tty``), never to stdout,
which carries only the answer. Ctrl-C or Ctrl-D at the question denies. What the model wrote (the command,
the explanation) is shown with terminal control characters as escapes (``\\x1b``), never sent as they are.

The model's questions (``ask_user``) are asked the same way: the numbered options, then a number or (when
allowed) a typed answer; Enter alone, Ctrl-C or Ctrl-D answers nothing.

prompt-toolkit is imported only when a question is actually asked.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO, cast

from swebash_ai.agent.approval import Decision
from swebash_ai.agent.events import where_words
from swebash_ai.words import count

if TYPE_CHECKING:
    from swebash_ai.agent.events import ApprovalRequest
    from swebash_ai.tools.ask import Answer, Question

Explain = Callable[["ApprovalRequest"], Awaitable[str]]
BeforeAsk = Callable[[Any], Awaitable[None]]
"""Awaited with the request (or question) before it is shown; both carry the ``call_id``."""

CHOICES = "[y] allow once  [a] allow for this session  [n] deny (default)  [d] describe"
OUTSIDE_CHOICES = ("[y] allow once, in the sandbox  [o] once, outside it, with your rights  [a] allow for this "
                   "session  [n] deny (default)  [d] describe")
OUTSIDE_HINT = "; answer o only if it needs more"

_ANSWERS = {
    "y": Decision.ALLOW_ONCE, "yes": Decision.ALLOW_ONCE,
    "a": Decision.ALLOW_SESSION, "always": Decision.ALLOW_SESSION,
    "n": Decision.DENY, "no": Decision.DENY, "": Decision.DENY,
}


@dataclass
class Terminal:
    """Where the question is written and the answer read (the user's terminal, never stdout)."""

    input: TextIO
    output: TextIO


def open_terminal() -> Terminal | None:
    """The user's terminal, or ``None`` when there is nobody to ask (no TTY: CI, cron, a detached process).

    stdin is used when it is a terminal; otherwise ``/dev/tty`` (stdin is a pipe), but only when stderr is a
    terminal too, so a script that redirects everything is never stopped by a question.
    """
    out: TextIO | None = sys.stderr if _isatty(sys.stderr) else None
    if _isatty(sys.stdin):
        return Terminal(sys.stdin, out or _open_tty("w") or sys.stderr)
    if out is None:
        return None
    tty_in = _open_tty("r")
    return Terminal(tty_in, out) if tty_in is not None else None


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream is not None and stream.isatty())
    except (ValueError, OSError):
        return False


def _open_tty(mode: str) -> TextIO | None:
    try:
        # Left open: it lives as long as the process.
        return cast(TextIO, open("/dev/tty", mode, encoding="utf-8"))
    except OSError:
        return None


def format_request(request: ApprovalRequest) -> str:
    """The text shown before the question: tool, full command/diff, working directory, reasons."""
    from swebash_ai.safety.terminal_text import marked_note, safe

    verdict = request.verdict
    heading = request.heading
    detail = _readable(request.detail.rstrip())
    if heading is None and "\n" not in detail:  # a one-line command: the header says it all
        heading, detail = detail, ""
    lines = [f"⚠  {request.tool} needs your approval" + (f": {heading}" if heading else ":")]
    if detail and detail != heading:
        lines.extend("   │ " + line for line in detail.split("\n"))
    hidden, invisible = request.hidden()
    if hidden:
        lines.append(f"   ⚠ holds {count(hidden, 'terminal control sequence')}, shown as \\x.. escapes: it may not be "
                     "what it seems")
    if invisible:
        lines.append(f"   ⚠ {marked_note(invisible)}")
    lines.append(f"   in {request.cwd}")
    for reason in verdict.reasons:
        lines.append(f"   why: {reason}")
    return safe("\n".join(lines), visible=True)


def _reverse_markers(text: str) -> str:
    """Sanitised ``text`` with its ``<U+202E>`` markers in reverse video (written after sanitising: the only
    escape codes that reach the terminal are these)."""
    from swebash_ai.safety.terminal_text import MARKER

    return MARKER.sub(lambda m: f"\x1b[7m{m.group()}\x1b[27m", text)


def _readable(detail: str) -> str:
    """Arguments shown as JSON (tools without a preview) become ``name: value`` lines, empty ones left out."""
    try:
        args = json.loads(detail)
    except ValueError:
        return detail
    if not isinstance(args, dict):
        return detail
    lines = []
    for name, value in args.items():
        if value is None or value == "" or value == [] or value == {}:
            continue
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        lines.append(f"{name}: {shown}")
    return "\n".join(lines)


class PromptApprover:
    """Asks on the terminal. ``interactive`` is true: a denial is the user's ("The user denied ...")."""

    interactive = True

    def __init__(
        self, terminal: Terminal, *, explain: Explain | None = None, before_ask: BeforeAsk | None = None
    ) -> None:
        """Ask on ``terminal``.

        Args:
            terminal: Where to write the question and read the answer.
            explain: The "describe" choice (``Session.explain``).
            before_ask: Awaited before the question is shown, so the front end can finish printing what
                came before (the loop asks from its own task, ahead of the renderer).
        """
        self.terminal = terminal
        self.explain = explain
        self.before_ask = before_ask
        self._session: Any = None

    def _prompt_session(self) -> Any:
        if self._session is None:
            from prompt_toolkit import PromptSession
            from prompt_toolkit.input import create_input
            from prompt_toolkit.output import create_output

            self._session = PromptSession(
                input=create_input(self.terminal.input), output=create_output(self.terminal.output)
            )
        return self._session

    def _say(self, text: str) -> None:
        self.terminal.output.write(text + "\n")
        self.terminal.output.flush()

    async def decide(self, request: ApprovalRequest) -> Decision:
        """Show the request and ask until a valid answer comes (Enter, Ctrl-C and Ctrl-D deny)."""
        if self.before_ask is not None:
            await self.before_ask(request)
        self._say(_reverse_markers(format_request(request)))
        choices = OUTSIDE_CHOICES if request.sandboxed else CHOICES
        if where := where_words(request):
            self._say(f"   {where}" + (OUTSIDE_HINT if request.sandboxed else ""))
        self._say("   " + choices)
        session = self._prompt_session()
        while True:
            try:
                # handle_sigint=False: prompt-toolkit would otherwise remove the front end's SIGINT handler
                # when it finishes. In raw mode Ctrl-C is a key anyway (KeyboardInterrupt below).
                keys = "[y/o/a/N/d]" if request.sandboxed else "[y/a/N/d]"
                answer = str(await session.prompt_async(f"Allow? {keys} ", handle_sigint=False)).strip().lower()
            except (KeyboardInterrupt, EOFError):
                answer = "n"
            if answer in ("d", "describe"):
                if self.explain is None:
                    self._say("   (no model to describe it)")
                    continue
                self._say("   … asking the model")
                from swebash_ai.safety.terminal_text import safe

                self._say("   " + safe(await self.explain(request)).replace("\n", "\n   "))
                continue
            decision = _ANSWERS.get(answer)
            if request.sandboxed and answer in ("o", "outside"):
                decision = Decision.ALLOW_OUTSIDE
            if decision is not None:
                self._say("   → " + {"allow_once": "allowed once" + (", in the sandbox" if request.sandboxed else ""),
                                      "allow_session": "allowed for this session",
                                      "allow_outside": "allowed once, outside the sandbox", "deny": "denied"}[
                                          decision.value])
                return decision
            self._say(f"   Please answer {'y, o, a' if request.sandboxed else 'y, a'}, n or d. {choices}")


    async def ask(self, question: Question) -> Answer:
        """Show the model's question and its numbered options; read a number or a typed answer."""
        from swebash_ai.tools.ask import Answer  # loaded by the call that asks

        if self.before_ask is not None:
            await self.before_ask(question)
        options = question.options
        from swebash_ai.safety.terminal_text import safe

        self._say("?  The assistant asks: " + safe(question.question).replace("\n", "\n   "))
        for n, option in enumerate(options, 1):
            self._say(f"   {n}. {safe(option)}")
        if options and question.allow_free_text:
            hint = f"[1-{len(options)} or type an answer; Enter: no answer] "
        elif options:
            hint = f"[1-{len(options)}; Enter: no answer] "
        else:
            hint = "[type an answer; Enter: no answer] "
        session = self._prompt_session()
        while True:
            try:
                raw = str(await session.prompt_async("Answer " + hint, handle_sigint=False)).strip()
            except (KeyboardInterrupt, EOFError):
                raw = ""
            if not raw:
                self._say("   → no answer")
                return Answer(None)
            if raw.isdigit() and 1 <= int(raw) <= len(options):
                return Answer(options[int(raw) - 1], option=int(raw))
            if question.allow_free_text:
                return Answer(raw)
            self._say(f"   Please type a number from 1 to {len(options)}, or Enter for no answer.")
