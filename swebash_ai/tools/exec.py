"""The exec tool: ``run_command`` runs a bash command the command policy allowed (or the user approved).

Contract:
    The policy judges the command line and the working directory (``cwd`` is checked like a directory the
    tool lists); the call then runs through :func:`~swebash_ai.tools.process.run_process`, the one place
    that starts processes (its docstring says how: scrubbed environment, own session, whole-tree kill at
    the timeout, bounded and cleaned output). The result the model reads is the exit code, then stdout and
    stderr; it names the background processes stopped at the end, and any process that could not be
    stopped (pid and command line): it never claims more than was done. With ``background=true`` the same
    verdict and approval apply; the command is then handed to the session's background processes
    (``tools/background.py``) and the call returns at once with its id and first output.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from swebash_ai.errors import ToolError
from swebash_ai.safety.verdict import Verdict
from swebash_ai.tools.editor_terminal import EditorRun, editor_terminal, run_in_editor
from swebash_ai.tools.guard import path_policy_of
from swebash_ai.tools.process import ProcessResult, build_argv, child_environment, clean_output, run_process
from swebash_ai.tools.registry import Tool, ToolContext, ToolResult, tool
from swebash_ai.tools.snapshots import Limits

if TYPE_CHECKING:
    from swebash_ai.sandbox.policy import SandboxPolicy

__all__ = [
    "APPROVED_ENV",
    "MAX_COMMAND_CHARS",
    "TOOLS",
    "ProcessResult",
    "build_argv",
    "child_environment",
    "clean_output",
    "run_command",
    "run_process",
]

log = logging.getLogger(__name__)

MAX_COMMAND_CHARS = 10_000
APPROVED_ENV = ("SSH_AUTH_SOCK",)
"""Secret-looking variables a command gets only when the user approved it: the ssh agent's socket lets an
approved ``git push`` or ``ssh`` authenticate; a command allowed by a rule (a reader) never needs it."""


def _resolve_cwd(ctx: ToolContext, cwd: str | None) -> Path:
    """The directory a call runs in: ``ctx.cwd`` or ``cwd`` relative to it (symlinks resolved)."""
    if cwd is None:
        return Path(ctx.cwd)
    if ctx.path_policy is not None:
        return Path(ctx.path_policy.resolve(cwd, str(ctx.cwd)))
    return Path(os.path.realpath(os.path.join(ctx.cwd, os.path.expanduser(cwd))))


def _cwd_verdict(ctx: ToolContext, cwd: str | None) -> Verdict:
    if cwd is None:
        return Verdict.allow(rule="exec.cwd")
    if ctx.path_policy is None:
        return Verdict.ask(f"runs in {cwd} (no path policy to check it)", rule="exec.cwd_unchecked")
    return ctx.path_policy.check(cwd, "list", str(ctx.cwd))  # type: ignore[no-any-return]


def _policy(ctx: ToolContext, args: Any) -> Verdict:
    where = _cwd_verdict(ctx, args.cwd)
    if ctx.command_policy is None:
        return Verdict.ask("no command policy is configured", rule="exec.no_policy").combine(where)
    try:
        cwd = str(_resolve_cwd(ctx, args.cwd))
    except ValueError:  # refused path syntax: the path verdict already denies
        return where
    verdict: Verdict = ctx.command_policy.assess(args.command, cwd).combine(where)
    if getattr(args, "sandbox", True) is False and verdict.decision != "deny":
        # Outside the sandbox means with all of the user's rights: only a person's yes to this call does that.
        verdict = verdict.combine(Verdict("ask", [OUTSIDE_REASON], "exec.outside_sandbox", severe=True))
    return verdict


OUTSIDE_REASON = ("asks to run OUTSIDE the sandbox, with all of your rights (your files, your keys, the network): "
                  "only the answer 'outside' does that, a plain yes still runs it in the sandbox; answer 'outside' "
                  "only if the sandbox blocked something this task really needs")


def _describe(args: Any) -> str:
    text = " ".join(str(args.command).split())
    line = "$ " + (text if len(text) <= 120 else text[:119] + "…")
    line += f"  (in {args.cwd})" if args.cwd else ""
    line += "  (OUTSIDE the sandbox)" if getattr(args, "sandbox", True) is False else ""
    return line + ("  (background)" if getattr(args, "background", False) else "")


def _session_key(ctx: ToolContext, args: Any) -> str | None:
    key: str | None = None if ctx.command_policy is None else ctx.command_policy.session_key(args.command)
    return key


def sandbox_of(ctx: ToolContext) -> tuple[SandboxPolicy | None, str, str | None]:
    """The policy this call's command is confined by (``None``: not confined), the backend setting, and why a
    command sent to the sandbox runs unconfined (no sandbox works here, with ``exec_sandbox = "auto"``).

    Confined: every command with ``exec_sandbox = "all"``; with ``auto``, a call the loop sent there
    (``ctx.sandboxed``: not proven read-only, and no person approved this very call). Where no
    backend works, only ``auto`` with ``sandbox_backend = "auto"`` runs it unconfined (and says so)."""
    s = ctx.settings
    strict = s.exec_sandbox in ("all", "bwrap")
    wanted = strict or (s.exec_sandbox == "auto" and ctx.sandboxed and not ctx.unconfined)
    if not wanted:
        return None, "auto", None
    from swebash_ai.sandbox.confine import backend_setting, policy_for
    from swebash_ai.sandbox.detect import choose

    backend = backend_setting(s)
    if not strict and backend == "auto" and choose(backend).backend is None:  # a named backend is refused
        return None, backend, choose(backend).problem  # said in the result: never a silent unconfined run
    files = ctx.services.get("read_only_files")
    return policy_for(path_policy_of(ctx), s, files() if callable(files) else ()), backend, None


def _backend_used(setting: str) -> str:
    from swebash_ai.sandbox.detect import choose

    return choose(setting).backend or "none"


def _preview(ctx: ToolContext, args: Any) -> str:
    """The full command as the approver shows it (not the arguments as JSON)."""
    lines = [f"$ {args.command}"]
    if args.cwd:
        lines.append(f"(in {args.cwd})")
    if args.background:
        lines.append("(in the background: it keeps running until stopped or the session ends)")
    elif args.timeout:
        lines.append(f"(timeout {args.timeout} s)")
    return "\n".join(lines)


@tool("exec", policy=_policy, describe=_describe, session_key=_session_key, preview=_preview)
async def run_command(
    ctx: ToolContext,
    command: str,
    timeout: Annotated[int | None, Field(ge=1, le=300)] = None,  # noqa: ASYNC109 - a tool argument
    cwd: str | None = None,
    background: bool = False,
    sandbox: bool = True,
) -> ToolResult:
    """Run a bash command and return its exit code, stdout and stderr.

    It runs without a terminal or input (nothing can prompt; pagers and colours are off), so use
    non-interactive flags (`git --no-pager`, `apt-get -y`). Long output is cut in the middle. At the timeout
    the command and everything it started are killed, and what it leaves running (`cmd &`) is stopped when
    it ends. For a server or watcher that must keep running, pass background=true instead: the call returns
    at once with `process id: <ID>` and the first output; then use read_process and stop_process.

    Args:
        command: The bash command line, e.g. `ls -la src` or `python -m pytest -q tests/test_x.py`.
        timeout: Seconds before the command is killed (default from the settings, at most 300; not with
            background).
        cwd: Directory to run in, relative to the current directory (default: the current directory).
        background: Start it in the background (a dev server, a watcher) and return at once; it runs until
            stop_process or the end of the session.
        sandbox: Leave true. Commands run in an OS sandbox (the workspace writable; the system and toolchains
            read-only; the rest of home, other projects and sockets absent; /tmp private; no network but
            allowed hosts). Only when a result says the sandbox blocked something the task really needs,
            call again with false: the user is asked, shown why, and may allow it outside or refuse; without
            a user it is refused.
    """
    if not command.strip():
        return ToolResult.error("The command is empty.")
    if len(command) > MAX_COMMAND_CHARS:
        return ToolResult.error(
            f"The command is {len(command)} characters long; the limit is "
            f"{MAX_COMMAND_CHARS}. Write a script file and run it instead."
        )
    where = _cwd_verdict(ctx, cwd)
    if where.decision == "deny":
        return ToolResult.denied(f"cannot run in {cwd}: {'; '.join(where.reasons)}")
    try:
        workdir = _resolve_cwd(ctx, cwd)
    except ValueError as exc:
        return ToolResult.error(f"Bad working directory {cwd!r}: {exc}")
    settings, seconds = ctx.settings, timeout or ctx.settings.exec_timeout
    snapshot = await _snapshot_before(ctx, command, workdir)
    try:
        confinement, backend, unconfined_why = await asyncio.to_thread(sandbox_of, ctx)  # it looks for protected files
    except BaseException:
        if snapshot is not None:
            await asyncio.to_thread(_snapshot_after, ctx, snapshot, ctx.services.get("checkpoints"))
        raise
    if background:
        from swebash_ai.tools.background import start_background

        store = ctx.services.get("checkpoints")  # the store of this turn: the session's may change meanwhile
        bg_watch = None if confinement is None else await asyncio.to_thread(_watch_before, ctx, confinement)

        def on_end() -> list[str]:
            said = []
            if bg_watch is not None and confinement is not None:  # put back what it planted, said at its end
                said = [f"sandbox: {line}" for line in _watch_after(ctx, bg_watch, confinement)]
            if snapshot is not None:
                _snapshot_after(ctx, _with_new_repos(snapshot, bg_watch), store)
            return said

        result = await start_background(ctx, command, workdir, keep_env=APPROVED_ENV if ctx.approved else (),
                                        sandbox=confinement, backend=backend, on_end=on_end)
        if unconfined_why is not None and result.ok:
            result = dataclasses.replace(result, content=result.text + "\n(not sandboxed: no sandbox works here: "
                                         f"{unconfined_why}; see `swebash-ai sandbox --show`)")
        return _with_snapshot_note(result, snapshot)
    hosts = _asking_proxy(ctx, confinement)
    if hosts is not None and confinement is not None:
        confinement = dataclasses.replace(confinement, proxy=hosts.path)
    watch = None if confinement is None else await asyncio.to_thread(_watch_before, ctx, confinement)
    planted: list[str] = []
    # Unconfined with a person's yes: where the editor offers its terminal, it runs there, seen live.
    editor = editor_terminal(ctx) if confinement is None and ctx.approved else None
    try:
        if editor is not None:
            res: ProcessResult = await run_in_editor(editor, ctx, command, workdir, timeout=seconds,
                                                     keep_env=APPROVED_ENV)
        else:
            res = await run_process(
                command,
                cwd=workdir,
                timeout=seconds,
                max_output=settings.exec_max_output,
                on_output=ctx.on_output,
                sandbox=confinement,
                sandbox_backend=backend,
                keep_env=APPROVED_ENV if ctx.approved else (),
            )
    except ToolError as exc:
        return ToolResult.error(exc.message)
    finally:
        if hosts is not None:
            await asyncio.shield(asyncio.to_thread(hosts.stop))
        if watch is not None and confinement is not None:  # before the snapshot: it records the put-back state
            planted = await asyncio.shield(asyncio.to_thread(_watch_after, ctx, watch, confinement))
        if snapshot is not None:  # shielded: a Ctrl-C that killed the command must not lose its after-state
            await asyncio.shield(asyncio.to_thread(_snapshot_after, ctx, _with_new_repos(snapshot, watch),
                                                   ctx.services.get("checkpoints")))
    metadata: dict[str, Any] = {
        "cwd": str(workdir),
        "signal": res.signal,
        "timed_out": res.timed_out,
        "timeout": seconds,
        "stdout_bytes": res.stdout_bytes,
        "stderr_bytes": res.stderr_bytes,
        "stopped_background": res.stopped,
        "containment": res.containment.mechanism if res.containment is not None else None,
        "survivors": [{"pid": p.pid, "cmdline": p.cmdline} for p in res.survivors],
        "sandbox": "none" if confinement is None else _backend_used(backend),
    }
    if res.sandbox_note:
        from swebash_ai.sandbox.confine import refusals

        metadata["sandbox_blocked"] = res.sandbox_note
        metadata["sandbox_refused"] = [{"operation": r.operation, "path": r.path}
                                       for r in refusals(res.stderr + res.stdout[-2000:], str(workdir))]
    if isinstance(res, EditorRun):
        metadata["ran_in"] = "editor terminal"
    text = res.render()
    if confinement is not None and confinement.private_tmp and _TMP_WORD.search(command):
        text += "\n" + _private_tmp_note(command, workdir, confinement, metadata["sandbox"])
    if planted:
        metadata["sandbox_planted"] = planted
        text += "\n" + "\n".join(f"(sandbox: {line})" for line in planted)
    if unconfined_why is not None:
        text += f"\n(not sandboxed: no sandbox works here: {unconfined_why}; see `swebash-ai sandbox --show`)"
        metadata["sandbox"] = "unavailable"
    elif ctx.unconfined and confinement is None:
        metadata["sandbox"] = "outside (approved)"
    if snapshot is not None:
        metadata["snapshot"] = snapshot["before"] or f"skipped: {snapshot['skipped']}"
        if snapshot["before"] is None:
            text += f"\n(not snapshotted, so /undo cannot revert this command: {snapshot['skipped']})"
    # Nobody approved this run: a reader allowed by rule can still print a secret that was committed once
    # (git log -p) or that appeared after the command was judged. The loop's one secrets scan masks the values
    # for the model with the stricter rules of redact_output (scanning here too would read the output twice).
    return ToolResult(res.status == "ok", text, res.status, res.exit_code, truncated=res.truncated, metadata=metadata,
                      unasked_output=not ctx.approved)


def _private_tmp_note(command: str, workdir: Path, confinement: SandboxPolicy, backend: str) -> str:
    """What became of the command's writes to ``/tmp``: the sandbox's own (bubblewrap), gone with it."""
    if backend != "bwrap":
        return ("(sandbox: /tmp is not writable here; the command's own temporary folder is $TMPDIR, gone now: "
                "write to the workspace to keep a file)")
    from swebash_ai.sandbox.foresee import private_tmp_writes

    named = private_tmp_writes(command, str(workdir), confinement)
    what = f"what it wrote to {', '.join(named)}" if named else "what the command wrote there"
    return f"(sandbox: /tmp here is the sandbox's own: {what} is gone now; write to the workspace to keep it)"


_TMP_WORD = re.compile(r"(?:^|[\s=:'\"<>(])/tmp(?:/|\b)|\$TMPDIR|\bmktemp\b")


def _watch_before(ctx: ToolContext, confinement: SandboxPolicy) -> Any:
    from swebash_ai.sandbox import planted

    return planted.before(confinement, path_policy_of(ctx))


def _with_new_repos(entry: dict[str, Any], watch: Any) -> dict[str, Any]:
    """The snapshot record with the nested repositories the check after a run kept (undo removes them: the
    snapshots leave ``.git`` folders out)."""
    kept = getattr(watch, "kept", None)
    return {**entry, "new_repos": [str(p) for p in kept]} if kept else entry


def _watch_after(ctx: ToolContext, watch: Any, confinement: SandboxPolicy) -> list[str]:
    """What the confined command planted for git or swebash-ai, put back (``sandbox/planted.py``)."""
    from swebash_ai.sandbox import planted

    return planted.after(watch, confinement, path_policy_of(ctx))


def _asking_proxy(ctx: ToolContext, confinement: SandboxPolicy | None) -> Any:
    """A proxy of this command's own that puts a host ``sandbox_allow_hosts`` does not list to the person (the
    TUI's dialog, the terminal, the editor), or ``None``: not confined, the network open, nobody to ask."""
    if confinement is None or confinement.network != "none" or ctx.ask is None or not ctx.can_ask:
        return None
    from swebash_ai.sandbox.proxy import Proxy

    loop, ask = asyncio.get_running_loop(), ctx.ask

    def ask_host(host: str, port: int) -> bool:
        """In a proxy thread: the question goes to the turn's loop; only a person's yes lets it through."""
        why = (f"a command in the sandbox wants to connect to {host}:{port}, which sandbox_allow_hosts does not "
               "list (allow it for the session, or add it to the setting)")
        verdict = Verdict("ask", [why], "sandbox.host", severe=True)
        async def question() -> str | None:
            return await ask(verdict, f"let the sandboxed command connect to {host}:{port}",
                             f"connect to {host}:{port}", f"host:{host}:{port}")

        asked = asyncio.run_coroutine_threadsafe(question(), loop)
        proxy.pending.append(asked)
        try:
            return asked.result(timeout=600) is None
        except Exception:  # cancelled with the command, or no answer in time: refused
            return False

    proxy = Proxy(confinement.allow_hosts, ask=ask_host).start()
    return proxy


def _with_snapshot_note(result: ToolResult, snapshot: dict[str, Any] | None) -> ToolResult:
    if snapshot is None or not result.ok:
        return result
    metadata = {**result.metadata, "snapshot": snapshot["before"] or f"skipped: {snapshot['skipped']}"}
    text = result.text
    if snapshot["before"] is None:
        text += f"\n(not snapshotted, so /undo cannot revert this command: {snapshot['skipped']})"
    return dataclasses.replace(result, content=text, metadata=metadata)


def _limits(ctx: ToolContext) -> Limits:
    return Limits(ctx.settings.command_snapshot_max_files, ctx.settings.command_snapshot_max_mb * 2**20)


async def _snapshot_before(ctx: ToolContext, command: str, workdir: Path) -> dict[str, Any] | None:
    """An approved command changes things: let the session's checkpoints snapshot the workspace first, so undo
    can revert it (docs/undo.md). Commands allowed by rule only read, and get none."""
    store = ctx.services.get("checkpoints")
    if not (ctx.approved or ctx.unasked_change) or store is None or not ctx.settings.command_snapshots:
        return None
    entry: dict[str, Any] = await asyncio.to_thread(store.before_command, command, workdir, _limits(ctx),
                                                    path_policy_of(ctx))
    return entry


def _snapshot_after(ctx: ToolContext, entry: dict[str, Any], store: Any) -> None:
    """The command has run: record its after-state in ``store``, the checkpoints its before-state went to (a
    background command may end after the session moved on: another turn, a fork, ``/new``; the store follows
    its record into a fork itself). A failure to record it (a full disk) must not turn its result into an
    error; undo will say that the state after it was not recorded."""
    try:
        store.after_command(entry, _limits(ctx), path_policy_of(ctx))
    except OSError as exc:
        log.warning("could not record the state after %r: %s", entry.get("command"), exc)


TOOLS: list[Tool] = [run_command]
