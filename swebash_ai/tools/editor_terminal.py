"""The editor's terminals: ``ctx.services["editor_terminal"]``, set by a front end that runs inside an editor
(``swebash-ai acp`` when the client offers ``terminal``).

Contract:
    ``run_command`` hands a command to the editor's terminal only when it runs unconfined because a person
    approved it (the answer "outside the sandbox", or a yes where no sandbox applies), in the foreground:
    the person sees it run, live, in the tool call. Everything confined or unasked runs in swebash-ai's own
    runner (``tools/process.py``). The same bash line runs (``bash --noprofile --norc -c``), in the same
    folder, with the variables the runner drops removed (``env -u NAME``: names only, never values) and the
    ones it sets (pagers, colours, prompts off) set. What comes back is bounded (``exec_max_output``, head and
    tail), cleaned of control sequences and left to the loop's one secrets scan, as the runner's output is.
    The editor's answers are data: no answer within the exec timeout is a timeout, and the terminal is
    killed; a cancel (Ctrl-C, ``session/cancel``) kills it too; the terminal is released in every case. A
    client that cannot create a terminal gets a clear error result and is not asked again this session.
    The core stays headless: the service is a protocol here, built by the front end.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from swebash_ai.errors import ToolError
from swebash_ai.tools.command_env import child_environment
from swebash_ai.tools.output import Capture
from swebash_ai.tools.process import ProcessResult

if TYPE_CHECKING:
    from collections.abc import Awaitable, Mapping

    from swebash_ai.tools.registry import ToolContext

log = logging.getLogger(__name__)

SERVICE = "editor_terminal"
ExitStatus = tuple[int | None, str | None]
"""A terminal's exit: (exit code, name of the signal that ended it)."""


class EditorTerminals(Protocol):
    """What ``run_command`` asks of an editor. Every method but :meth:`wait` answers within a bound of its own
    (raising :class:`TimeoutError`); a failure of the client raises :class:`OSError`."""

    usable: bool

    async def create(self, call_id: str, argv: list[str], env: dict[str, str], cwd: Path, output_limit: int) -> str:
        """Start ``argv`` in a terminal of the editor, shown in the call ``call_id``; returns its id."""

    async def wait(self, terminal_id: str) -> ExitStatus:
        """Until it exits (unbounded: the caller's timeout bounds it)."""

    async def output(self, terminal_id: str) -> tuple[str, bool, ExitStatus | None]:
        """Its output so far, whether the editor cut its beginning off, its exit when it has exited."""

    async def kill(self, terminal_id: str) -> None:
        """Kill its command (the terminal stays, with its output)."""

    async def release(self, terminal_id: str) -> None:
        """Kill it if it runs and let the editor free it."""


def editor_terminal(ctx: ToolContext) -> EditorTerminals | None:
    """The session's editor terminals, when there are usable ones."""
    terminals = ctx.services.get(SERVICE)
    return terminals if terminals is not None and terminals.usable else None


def editor_argv(command: str, environ: Mapping[str, str] | None = None,
                keep: tuple[str, ...] = ()) -> tuple[list[str], dict[str, str]]:
    """The argv and the variables to set that run ``command`` in an editor's terminal as the runner would: the
    variables of ``environ`` (this process's: the editor started it) the runner drops are removed by name."""
    environ = os.environ if environ is None else environ
    wanted = child_environment(environ, keep)
    dropped = sorted(name for name in environ if name not in wanted)
    unset = [arg for name in dropped for arg in ("-u", name)]
    changed = {k: v for k, v in wanted.items() if environ.get(k) != v and k != "TERM"}  # the editor's terminal
    return ["env", *unset, "bash", "--noprofile", "--norc", "-c", command], changed


@dataclasses.dataclass(frozen=True)
class EditorRun(ProcessResult):
    """A command run in the editor's terminal: one stream (stdout and stderr together), and no claim about its
    process tree (the editor owns it)."""

    kept_by_editor: bool = True
    """False when the editor cut the beginning of the output off (its own limit)."""
    problem: str | None = None
    """How the editor failed while it ran (then the exit code is unknown)."""

    def render(self) -> str:
        head = f"exit code {self.exit_code}" + (f" (killed by {self.signal})" if self.signal else "")
        if self.timed_out:
            head = f"timed out after {self.timeout:g} s; the editor was told to kill it. Output:"
        lines = [head, "note: it ran in the editor's terminal (stdout and stderr together)"]
        if self.problem is not None:
            lines.append(f"error: the editor's terminal failed: {self.problem}")
        if not self.kept_by_editor:
            lines.append("note: the editor kept only the end of the output")
        if self.stdout:
            lines += ["output:", self.stdout[:-1] if self.stdout.endswith("\n") else self.stdout]
        else:
            lines.append("(no output)")
        return "\n".join(lines)


class EditorCancelled(asyncio.CancelledError):
    """The run was cancelled; ``result_message`` says what was done (the loop makes it the call's result)."""

    def __init__(self) -> None:
        self.result_message = ("Interrupted by the user before it finished; the editor was told to kill it (in its "
                               "terminal).")
        super().__init__(self.result_message)


_ENDING: set[asyncio.Future[object]] = set()
"""Kills and releases still under way after a cancel (held here: the loop keeps only weak references)."""


def _keep(future: asyncio.Future[object]) -> asyncio.Future[object]:
    _ENDING.add(future)
    future.add_done_callback(_ENDING.discard)
    return future


async def run_in_editor(editor: EditorTerminals, ctx: ToolContext, command: str, cwd: Path, *,
                        timeout: float, keep_env: tuple[str, ...] = ()) -> EditorRun:  # noqa: ASYNC109
    """Run ``command`` in the editor's terminal (see the module docstring).

    A cancel at any point (even while the editor is creating the terminal) ends with the terminal killed and
    released; no ``asyncio.wait_for`` here or in the requests: it can lose a cancel that lands as an answer does.

    Raises:
        ToolError: the editor could not start it (and is not asked again in this session).
        EditorCancelled: (an ``asyncio.CancelledError``) once the terminal was told to stop.
    """
    limit = ctx.settings.exec_max_output
    argv, env = editor_argv(command, keep=keep_env)
    start = time.monotonic()
    creating = _keep(asyncio.ensure_future(editor.create(ctx.call_id, argv, env, cwd, limit)))
    try:
        terminal = str(await asyncio.shield(creating))
    except asyncio.CancelledError:
        creating.add_done_callback(lambda done: _end_when_created(editor, done))
        raise EditorCancelled() from None
    except TimeoutError as exc:
        editor.usable = False
        raise ToolError("The editor did not answer when asked to run the command in its terminal, so whether it "
                        "started is unknown; commands run in swebash-ai from now on in this session.") from exc
    except OSError as exc:
        editor.usable = False
        raise ToolError(f"The editor could not run the command in its terminal ({exc}); it did not start. "
                        "Commands run in swebash-ai from now on in this session.") from exc
    try:
        status, timed_out, failed = await _wait(editor, terminal, timeout)
        text, kept, final = await _output(editor, terminal)
    except asyncio.CancelledError:
        ending = _keep(asyncio.ensure_future(_end(editor, terminal, kill=True)))
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(ending)
        raise EditorCancelled() from None
    ending = _keep(asyncio.ensure_future(_end(editor, terminal, kill=False)))
    await asyncio.shield(ending)
    capture = Capture(limit)
    capture.add(text.encode("utf-8", "surrogateescape"))
    shown, cut = capture.text(limit)
    code, sig = status or final or (None, None)
    if code is None and sig is not None:
        number = getattr(signal.Signals, sig, None)
        code = 128 + number.value if isinstance(number, signal.Signals) else None
    if code is None and not timed_out and failed is None:
        failed = "it gave no exit status"
    return EditorRun(exit_code=code, signal=sig, stdout=shown, stderr="", timed_out=timed_out, timeout=timeout,
                     truncated=bool(cut) or not kept, stdout_bytes=capture.seen, stderr_bytes=0,
                     duration=time.monotonic() - start, kept_by_editor=kept, problem=failed)


def _end_when_created(editor: EditorTerminals, creating: asyncio.Future[object]) -> None:
    """A terminal created after its call was cancelled: killed and released at once."""
    if creating.cancelled() or creating.exception() is not None:
        return
    _keep(asyncio.ensure_future(_end(editor, str(creating.result()), kill=True)))


async def _wait(editor: EditorTerminals, terminal: str,
                timeout: float) -> tuple[ExitStatus | None, bool, str | None]:  # noqa: ASYNC109
    """(its exit, whether it timed out, how the editor failed); a timeout or a failure kills it."""
    try:
        async with asyncio.timeout(timeout):
            return await editor.wait(terminal), False, None
    except TimeoutError:
        await _quietly(editor.kill(terminal), "kill")
        return None, True, None
    except OSError as exc:
        await _quietly(editor.kill(terminal), "kill")
        return None, False, str(exc)


async def _output(editor: EditorTerminals, terminal: str) -> tuple[str, bool, ExitStatus | None]:
    try:
        text, truncated, final = await editor.output(terminal)
    except (OSError, TimeoutError) as exc:
        log.info("the editor did not give the terminal's output (%s)", exc)
        return f"(the editor did not give the output: {exc or 'no answer'})", True, None
    return text, not truncated, final


async def _end(editor: EditorTerminals, terminal: str, *, kill: bool) -> None:
    if kill:
        await _quietly(editor.kill(terminal), "kill")
    await _quietly(editor.release(terminal), "release")


async def _quietly(step: Awaitable[object], what: str) -> bool:
    """Await ``step`` (a bounded request to the editor); whether it succeeded."""
    try:
        await step
    except (OSError, TimeoutError) as exc:
        log.info("the editor's terminal %s failed (%s)", what, exc)
        return False
    return True
