"""The headless front end: ``swebash-ai -c QUESTION``. stdout is the answer, stderr is everything else.

It runs the same :class:`~swebash_ai.session.Session` (same loop, tools and policies) as the TUI and differs
only in how it renders events and how it asks:

* **Rendering.** A pipe (or ``NO_COLOR``, or ``TERM=dumb``) gets the answer as plain text streamed as it
  arrives; a terminal gets it rendered as Markdown (rich, imported only then). ``--json`` prints one JSON
  object per event instead (see docs/cli.md). Tool activity is one line per call on stderr.
* **Terminal hygiene.** The answer goes out without terminal escape sequences and control characters,
  to a terminal and to a pipe alike (a file cat later reaches a terminal too), with a note on stderr
  when some were removed; ``--raw`` keeps the exact text. The stderr lines show such characters as
  escapes (``\\x1b``), always; ``--json`` escapes them as JSON does (C1 controls included).
* **Asking.** ``--yes`` allows what needs approval (what the policy always denies still never runs, and a
  severe call still needs a person: :class:`~swebash_ai.agent.approval.AllowApprover`); else a terminal
  gets a prompt-toolkit question (:mod:`swebash_ai.frontends.prompt_approver`, reading ``/dev/tty`` when stdin is a
  pipe); else nobody can answer, and anything that needs approval is denied.
* **Exit codes** are an API (:class:`ExitCode`). Ctrl-C cancels the turn, which leaves the conversation
  valid; the session is saved and the exit code is 130.

This module imports only the standard library at module level: ``cli`` needs :class:`ExitCode` before it
knows whether a model will be called at all.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from swebash_ai.errors import ExitCode, UsageError
from swebash_ai.frontends.oneshot_render import Renderer, finished_code, make_renderer

if TYPE_CHECKING:
    import asyncio

    from swebash_ai.agent.approval import Approver
    from swebash_ai.agent.images import ImageAttachment
    from swebash_ai.agent.user_prompt import PreparedPrompt
    from swebash_ai.config.settings import LoadedSettings
    from swebash_ai.session import Session
    from swebash_ai.tools.registry import Tool


STDIN_CAP = 100_000
"""Bytes of piped stdin included as context; the middle of a longer input is cut (head and tail kept)."""

_HEAD = STDIN_CAP // 4


@dataclass
class OneShotOptions:
    """What the command line asked for (``cli`` builds it)."""

    question: str
    """The question; ``-`` reads it from stdin."""
    json_events: bool = False
    yes: bool = False
    resume: str | None = None
    """``None``: a new session; ``""``: the latest saved session; else a session id (or unique prefix)."""
    cwd: Path | None = None
    raw: bool = False
    """Print the answer's text exactly as the model wrote it, escape sequences included."""


def exit_code_for(error: BaseException) -> ExitCode:
    """The exit code an error maps to (``ConfigError`` is a usage problem, the rest are runtime errors)."""
    from swebash_ai.errors import ConfigError, StreamInterruptedError

    if isinstance(error, StreamInterruptedError):
        return ExitCode.INCOMPLETE
    return ExitCode.USAGE if isinstance(error, ConfigError) else ExitCode.ERROR


# --- stdin -------------------------------------------------------------------------------------------
def stdin_is_data() -> bool:
    """True when stdin is a pipe or a file (data to read), not a terminal, ``/dev/null`` or a socket.

    Sockets are left alone: harnesses and remote shells hand them over open with nothing to send, and reading
    would wait forever.
    """
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def read_capped(stream: Any, cap: int = STDIN_CAP) -> tuple[bytes, int]:
    """Read a whole binary stream keeping at most ``cap`` bytes (head and tail); returns (kept, total size)."""
    head = bytearray()
    tail = bytearray()
    total = 0
    while True:
        block = stream.read(65536)
        if not block:
            break
        total += len(block)
        room = _HEAD - len(head)
        if room > 0:
            head += block[:room]
            block = block[room:]
        tail += block
        if len(tail) > cap - _HEAD:
            del tail[: len(tail) - (cap - _HEAD)]
    if total <= cap:
        return bytes(head + tail), total
    return bytes(head) + b"\n[...]\n" + bytes(tail), total


def read_piped(stream: Any) -> tuple[bytes, int]:
    """Piped stdin: an image (by its magic numbers) whole, up to the image limit (one byte more tells it is
    over); anything else as :func:`read_capped` keeps it."""
    first = stream.read(64)
    if not first:
        return b"", 0
    from swebash_ai.agent.images import MAX_IMAGE_FILE, sniff  # only for piped input, never for a bare `-c`

    if sniff(first) is not None:
        data = first + (stream.read(MAX_IMAGE_FILE + 1 - len(first)) or b"")
        total = len(data)
        while block := stream.read(65536):  # the rest is counted, not kept (the writer must not get EPIPE)
            total += len(block)
        return data, total
    return read_capped(_Prefixed(first, stream))


class _Prefixed:
    """A stream whose first bytes were already read."""

    def __init__(self, first: bytes, stream: Any) -> None:
        self.first, self.stream = first, stream

    def read(self, size: int) -> bytes:
        if self.first:
            block, self.first = self.first, b""
            return block
        data: bytes = self.stream.read(size)
        return data


def with_piped_context(question: str, data: bytes, total: int) -> str:
    """The question followed by the piped input as a fenced block, with a note on its size and any cut."""
    if b"\x00" in data[:8192]:
        return f"{question}\n\n(The user also piped {total} bytes of binary data to the command; not shown.)"
    text = data.decode("utf-8", errors="replace")
    fence = "```"
    while fence in text:
        fence += "`"
    cut = f", of which the middle {total - len(data)} bytes were cut" if total > len(data) else ""
    note = f"The user piped this input to the command (stdin, {total} bytes{cut}):"
    return f"{question}\n\n{note}\n{fence}text\n{text.rstrip()}\n{fence}"


# --- approval ----------------------------------------------------------------------------------------
def make_approver(
    yes: bool,
    explain: Callable[[Any], Any] | None = None,
    before_ask: Callable[[Any], Awaitable[None]] | None = None,
) -> Approver:
    """``--yes`` allows (short of catastrophes); a terminal asks (prompt-toolkit); nobody to ask denies."""
    from swebash_ai.agent.approval import AllowApprover, DenyApprover

    if yes:
        return AllowApprover()
    from swebash_ai.frontends.prompt_approver import PromptApprover, open_terminal

    terminal = open_terminal()
    if terminal is None:
        return DenyApprover()
    return PromptApprover(terminal, explain=explain, before_ask=before_ask)


class _Shown:
    """Lets the terminal question wait until the renderer has printed everything before it.

    The loop asks from its own task, so without this the question could appear before the text and the tool
    line that lead to it.
    """

    def __init__(self) -> None:
        self._events: dict[str, asyncio.Event] = {}

    def _event(self, call_id: str) -> asyncio.Event:
        import asyncio

        if call_id not in self._events:
            self._events[call_id] = asyncio.Event()
        return self._events[call_id]

    def mark(self, call_id: str) -> None:
        self._event(call_id).set()

    async def wait(self, request: Any) -> None:
        await self._event(request.call_id).wait()


# --- running -----------------------------------------------------------------------------------------
def run_oneshot(
    loaded: LoadedSettings,
    options: OneShotOptions,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    tools: list[Tool] | None = None,
    services: dict[str, Any] | None = None,
) -> int:
    """Answer one question and return the exit code (see :class:`ExitCode`).

    Args:
        loaded: The settings, built by the composition root.
        options: The command line's choices.
        stdout: Where the answer goes (``sys.stdout``).
        stderr: Where everything else goes (``sys.stderr``).
        tools: Tools to offer instead of the built-in ones (tests).
        services: Backends for the tools instead of the real ones (tests: web search, HTTP transport).
    """
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    question = options.question
    piped: tuple[bytes, int] | None = None
    if question == "-":
        question = sys.stdin.read() if sys.stdin is not None else ""
        if not question.strip():
            err.write("swebash-ai: -c - reads the question from stdin, and stdin was empty.\n")
            return ExitCode.USAGE
    elif stdin_is_data():
        data, total = read_piped(sys.stdin.buffer)
        piped = (data, total) if total else None
    if not question.strip():
        err.write("swebash-ai: the question is empty.\n")
        return ExitCode.USAGE
    renderer = make_renderer(options.json_events, out, err, raw=options.raw)
    import asyncio

    try:
        return asyncio.run(_answer(loaded, options, question, renderer, tools, services, piped))
    except KeyboardInterrupt:  # before the signal handler was installed
        renderer.interrupted()
        return ExitCode.INTERRUPTED
    except BrokenPipeError:  # the reader went away (`| head -1`): stop quietly, like other Unix tools
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, out.fileno())  # so the interpreter's final flush does not complain
        except (OSError, ValueError):
            pass
        return ExitCode.ERROR


async def _answer(
    loaded: LoadedSettings,
    options: OneShotOptions,
    question: str,
    renderer: Renderer,
    tools: list[Tool] | None,
    services: dict[str, Any] | None = None,
    piped: tuple[bytes, int] | None = None,
) -> int:
    import asyncio

    from swebash_ai.errors import SwebashError
    from swebash_ai.providers import no_provider_error
    from swebash_ai.session import Session

    explain_target: list[Session] = []
    shown = _Shown()

    async def explain(request: Any) -> str:
        return await explain_target[0].explain(request)

    try:
        approver = make_approver(options.yes, explain, shown.wait)
        session = Session(loaded, approver=approver, cwd=options.cwd, tools=tools, services=services)
        explain_target.append(session)
        if not session.has_provider:
            raise no_provider_error()
        if options.resume is not None:
            session.resume(options.resume or None)
    except SwebashError as exc:
        code = exit_code_for(exc)
        renderer.error(exc, code)
        return code
    assert session.provider is not None and session.agent is not None

    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    interrupts = 0

    def on_sigint() -> None:
        nonlocal interrupts
        interrupts += 1
        agent = session.agent
        if (interrupts > 1 or agent is None or not agent.running) and task is not None:
            task.cancel()  # nothing to cancel gracefully (yet), or the user insists
        session.cancel()

    try:
        loop.add_signal_handler(signal.SIGINT, on_sigint)
        installed = True
    except (NotImplementedError, RuntimeError):  # not the main thread, or no signals here
        installed = False
    try:
        if loaded.mcp_servers:
            from swebash_ai.agent.events import Notice

            for message in await session.start_mcp():  # a server that did not start is a warning, not fatal
                renderer.handle(Notice(message, "warning"), session)
        prepared = _prepared(session, question, renderer)
        question, images = prepared.text, list(prepared.images)
        if piped is not None and (image := _piped_image(session, *piped)) is not None:
            if isinstance(image, str):
                renderer.error(UsageError(image), ExitCode.USAGE)
                return ExitCode.USAGE
            renderer.handle(_notice(image.line, "info"), session)
            question, images = f"{question}\n\n{image.header}", [*images, image]
        elif piped is not None:  # after the expansion: a mention inside piped input attaches nothing
            question = with_piped_context(question, *piped)
        return await _run_turn(session, question, renderer, shown, images)
    except asyncio.CancelledError:
        session.save()
        _show_notices(session, renderer)
        renderer.interrupted()
        return ExitCode.INTERRUPTED
    finally:
        # every background process and MCP server ends with the run, Ctrl-C and a failed turn included
        with contextlib.suppress(asyncio.CancelledError):
            for line in await asyncio.shield(session.aclose()):
                renderer.handle(_notice(line), session)
        if installed:
            loop.remove_signal_handler(signal.SIGINT)


def _show_notices(session: Session, renderer: Renderer) -> None:
    """What the session queued and the turn did not show: a save that forked the session, say."""
    while session.notices:
        renderer.handle(_notice(session.notices.pop(0)), session)


def _notice(text: str, level: Literal["info", "warning"] = "warning") -> Any:
    from swebash_ai.agent.events import Notice

    return Notice(text, level)


def _piped_image(session: Session, data: bytes, total: int) -> ImageAttachment | str | None:
    """Piped input that is an image, made ready to send (or why not, for the user); ``None``: not an image."""
    from swebash_ai.agent.images import ImageRefusal, image_attachment, limits_for, sniff

    if sniff(data) is None:
        return None
    if total > len(data):
        data = data + b"\0"  # over the limit: image_attachment says so
    got = image_attachment(data, name="stdin", limits=limits_for(session.model))
    return f"the image piped to stdin is not attached: {got.reason}" if isinstance(got, ImageRefusal) else got


def _prepared(session: Session, question: str, renderer: Renderer) -> PreparedPrompt:
    """``/NAME args`` expanded and ``@path`` attached (Session.prepare); what was used and refused on stderr."""
    from swebash_ai.agent.events import Notice

    prepared = session.prepare(question)
    for line in prepared.lines:
        renderer.handle(Notice(line), session)
    for notice in prepared.notices:
        renderer.handle(Notice(notice, "warning"), session)
    return prepared


async def _run_turn(session: Session, question: str, renderer: Renderer, shown: _Shown,
                    images: Sequence[ImageAttachment] = ()) -> int:
    """Run the turn, render its events, and turn its outcome into an exit code."""
    events = session.run(question, images)
    try:
        return await _render_turn(session, events, renderer, shown)
    finally:
        # Closed now, not whenever it is collected: the turn's save, and what it has to say (a fork), come
        # before the exit.
        await events.aclose()
        _show_notices(session, renderer)


def go_on_hint(session: Session, reason: str) -> str:
    """How to go on after a turn stopped at a bound or a loop (the turn's notice said what stopped it)."""
    from swebash_ai.agent.limits import LIMIT_SETTINGS

    name = LIMIT_SETTINGS[reason]
    now = getattr(session.settings, name)
    if reason == "loop":
        return ("to go on, tell the model what to do differently: swebash-ai --resume -c '...'; to widen the "
                f"detector, set SWEBASH_AI_{name.upper()} (now {now}; 0 turns it off) or {name} in the config file")
    return (f"to go on with a fresh budget: swebash-ai --resume -c 'go on'; to allow more, set "
            f"SWEBASH_AI_{name.upper()} (now {now}) or {name} in the config file")


async def _render_turn(session: Session, events: Any, renderer: Renderer, shown: _Shown) -> int:
    from swebash_ai.agent import events as ev
    from swebash_ai.agent.limits import LIMIT_SETTINGS

    code: int = ExitCode.ERROR
    async for event in events:
        if isinstance(event, ev.TurnFailed):
            code = exit_code_for(event.error)
            renderer.error(event.error, ExitCode(code))
            return code
        renderer.handle(event, session)
        if isinstance(event, ev.SubagentEvent):  # a helper's question is named PATH/CALL_ID (agent/subagents.py)
            from swebash_ai.agent.subagents import unnest

            path, inner = unnest(event)
            if isinstance(inner, ev.ApprovalRequested):
                shown.mark(f"{path}/{inner.request.call_id}")
            elif isinstance(inner, ev.ToolCallStarted) and inner.name == "ask_user":
                shown.mark(f"{path}/{inner.call_id}")
        elif isinstance(event, ev.ApprovalRequested):
            shown.mark(event.request.call_id)
        elif isinstance(event, ev.ToolCallStarted) and event.name == "ask_user":
            shown.mark(event.call_id)  # its question waits until what came before is printed
        elif isinstance(event, ev.TurnFinished):
            code = finished_code(event)
            if code is ExitCode.INTERRUPTED:
                renderer.interrupted()
            elif event.reason in LIMIT_SETTINGS:
                renderer.handle(ev.Notice(go_on_hint(session, event.reason)), session)
    return code
