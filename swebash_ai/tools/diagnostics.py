"""Language-server diagnostics for the tools: after an edit, and the ``diagnostics`` tool.

Contract:
    :func:`lsp_service` gives the session's :class:`~swebash_ai.lsp.service.LspService` (made at the first edit
    of a file a server checks, kept in ``ctx.services["lsp"]``, closed by the session's ``aclose``); ``None``
    when ``lsp_diagnostics = "off"``. :func:`after_edit` is what ``write_file`` / ``edit_file`` call once the
    file is written: the rendered diagnostics of the new version to append to their result, and the same as
    data for ``metadata["diagnostics"]``. The ``diagnostics`` tool reports one file (sent again, waited for)
    or every file the running servers have reported on.

Where a server runs (unasked never means unconfined): nobody approved starting it, and some servers run the
project's code (build scripts, plugins), so :func:`launcher` starts it like a command nobody approved: under
the per-run supervisor (its whole process tree stops with it), with the scrubbed environment of every command
(``command_env.child_environment``), and in the OS sandbox with the workspace read-only where one works
(``exec_sandbox = "auto"`` without a working sandbox runs it unconfined and ``/ps`` and ``doctor`` say so;
``exec_sandbox = "all"`` then starts none; ``"none"`` confines nothing, as for commands). Unconfined, a
program that lies in the project (its ``.venv/bin``, ``node_modules/.bin``, a path under the workspace) is not
started at all: a cloned repository's own binary would run with all of the user's rights at the first edit,
unasked; one installed on ``PATH`` is the user's.
"""

from __future__ import annotations

import dataclasses
import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swebash_ai.safety.verdict import Verdict
from swebash_ai.tools.guard import path_check, path_session_key
from swebash_ai.tools.registry import JSON, Tool, ToolContext, ToolResult, tool
from swebash_ai.words import count

if TYPE_CHECKING:
    from swebash_ai.lsp.client import Handle, Launch
    from swebash_ai.lsp.service import LspService

__all__ = ["TOOLS", "after_edit", "diagnostics", "launcher", "lsp_service", "turn_report"]

_PROJECT_FILES = 20  # files listed by diagnostics(path="") at most


def launcher(ctx: ToolContext, environ: dict[str, str] | None = None) -> tuple[Launch, str]:
    """How this session's language servers start, and a few words on where they run (see the module docstring)."""
    from swebash_ai.sandbox.confine import backend_setting, policy_for, wrap
    from swebash_ai.sandbox.detect import choose
    from swebash_ai.tools.command_env import child_environment
    from swebash_ai.tools.containment import MARKER_VAR
    from swebash_ai.tools.process import start_contained

    s = ctx.settings
    base = dict(os.environ if environ is None else environ)
    policy = None
    backend = backend_setting(s)
    refused = ""
    own_tmp = False
    if s.exec_sandbox == "none":
        where = "not sandboxed (exec_sandbox = none)"
    else:
        choice = choose(backend)
        if choice.backend is None:
            if s.exec_sandbox in ("all", "bwrap") or backend != "auto":
                refused = f"language servers run in the sandbox, and no sandbox works here: {choice.problem}"
                where = "not started: " + refused
            else:
                where = f"not sandboxed: no sandbox works here ({choice.problem})"
        else:
            files = ctx.services.get("read_only_files")
            full = policy_for(ctx.path_policy, s, files() if callable(files) else ())
            # The workspace read-only: a server reads the project, it has no business writing it.
            policy = dataclasses.replace(full, read_only=(*full.read_only, *full.writable))
            if choice.backend != "bwrap":  # landlock and seatbelt grant by path: no writable roots at all, and
                # the workspace shown read-only (its hidden files stay out of the grants), or nothing can read it
                from swebash_ai.sandbox.view import Shown

                ro = tuple(Shown(r, "ro", "the workspace, read-only for a language server") for r in full.writable)
                policy = dataclasses.replace(full, writable=(), view=None if full.view is None else (*full.view, *ro))
            own_tmp = choice.backend == "bwrap" and policy.private_tmp
            where = f"sandbox ({choice.backend}), workspace read-only"

    async def launch(argv: Sequence[str], root: Path) -> Handle:
        if refused:
            raise ConnectionError(refused)
        if policy is None and argv and _in_project(argv[0], root, ctx.cwd):
            raise ConnectionError(f"{argv[0]} is the project's own program, and it would run outside any sandbox "
                                  "here, unasked: install the server on PATH to use it (or make a sandbox work: "
                                  "swebash-ai doctor)")
        env = child_environment(base)
        env[MARKER_VAR] = uuid.uuid4().hex
        full_argv = list(argv)
        if policy is not None:
            if own_tmp:  # bubblewrap gives it a /tmp of its own; the home is read-only
                env["XDG_CACHE_HOME"] = "/tmp/lsp-cache"  # noqa: S108 - the sandbox's private /tmp
            full_argv = wrap(policy, argv, cwd=root, backend=backend)
        return await start_contained(full_argv, cwd=root, env=env, stdin=True)

    return launch, where


def _in_project(program: str, root: Path, workspace: Path) -> bool:
    """Whether ``program`` (as the server table found it, unresolved: ``.venv/bin/python`` links out) lies in
    the server's root or the workspace."""
    where = Path(os.path.abspath(os.path.join(root, program)))
    return any(where.is_relative_to(Path(os.path.abspath(top))) for top in (root, workspace))


def lsp_service(ctx: ToolContext) -> LspService | None:
    """The session's language servers, made at first use; ``None`` when turned off."""
    if ctx.settings.lsp_diagnostics == "off":
        return None
    from swebash_ai.lsp.servers import merge_servers

    svc: LspService | None = ctx.services.get("lsp")
    tables = ctx.services.get("lsp_tables") or {}
    if svc is None:
        from swebash_ai.lsp.service import LspService

        launch, where = launcher(ctx)
        s = ctx.settings
        svc = LspService(merge_servers(tables), ctx.cwd, launch, wait=s.lsp_wait, settle=s.lsp_settle,
                         idle=s.lsp_idle_stop, where=where, tables=tables)
        ctx.services["lsp"] = svc
    elif svc.tables != tables:  # the project's tables came into force (trusted) or left: for servers started now on
        svc.servers, svc.tables = merge_servers(tables), tables
    return svc


async def after_edit(ctx: ToolContext, path: Path, text: str) -> tuple[str, dict[str, Any] | None]:
    """The diagnostics of ``path``'s new ``text``: ``(text to append, data)``; ``("", None)`` when no server
    checks such files or the feature is off. With ``lsp_diagnostics = "turn"`` the text is only sent."""
    from swebash_ai.lsp.servers import language_of, merge_servers

    if ctx.settings.lsp_diagnostics == "off":
        return "", None
    svc = ctx.services.get("lsp")
    if svc is None and language_of(path, merge_servers(ctx.services.get("lsp_tables") or {})) is None:
        return "", None  # a README edit starts nothing
    svc = lsp_service(ctx)
    if svc is None:
        return "", None
    from swebash_ai.lsp.report import render

    check = await svc.check(path, text, wait=ctx.settings.lsp_diagnostics == "edit")
    shown, data = render(check, ctx.cwd)
    return shown, (data if check.status != "none" else None)


async def turn_report(services: dict[str, Any], cwd: Path) -> str:
    """With ``lsp_diagnostics = "turn"``: the diagnostics of the files the turn changed, checked now as the turn
    left them ("" when no file was changed or none has a problem or a failed check to report)."""
    svc: LspService | None = services.get("lsp")
    if svc is None or not svc.pending:
        return ""
    from swebash_ai.lsp.report import render

    parts = []
    for path in svc.take_pending():
        check = await svc.check(path)
        text, _ = render(check, cwd)
        if text and (check.status != "ok" or check.diags or check.new_elsewhere):
            parts.append(text.strip())
    return "Diagnostics of the files changed in this turn:\n" + "\n".join(parts) if parts else ""


def _describe(args: Any) -> str:
    return f"diagnostics of {args.path or 'the project'}"


def _policy(ctx: ToolContext, args: Any) -> Verdict:
    """Reading a file's diagnostics is reading the file: the path policy's verdict; the project's: allowed."""
    if not args.path:
        return Verdict.allow(rule="diagnostics.project")
    return path_check("read")(ctx, args)


@tool("fs", policy=_policy, describe=_describe, session_key=path_session_key("read"))
async def diagnostics(ctx: ToolContext, path: str = "") -> ToolResult | JSON:
    """Language-server diagnostics (errors and warnings) of a file, or of every file checked so far.

    Edits already report their file's diagnostics; call this to check a file you did not edit, or to see
    all problems found in the project so far. It changes nothing (the file's language server starts if it
    is not running, in the sandbox).

    Args:
        path: A file to check now (relative to the working directory); empty: every file the running
            language servers have reported on.
    """
    from swebash_ai.lsp.report import diag_line, render

    svc = lsp_service(ctx)
    if svc is None:
        return ToolResult.error("Diagnostics are turned off (lsp_diagnostics = \"off\").")
    if path:
        from swebash_ai.tools.fs import _guard

        resolved = _guard(ctx, path, "read")
        if isinstance(resolved, ToolResult):
            return resolved
        if not resolved.is_file():
            return ToolResult.error(f"'{path}' is not a file.")
        check = await svc.check(resolved)
        shown, data = render(check, ctx.cwd)
        if check.status == "none":
            return ToolResult.success(f"No language server checks {resolved.suffix or 'such'} files.",
                                      metadata={"diagnostics": data})
        return ToolResult.success(shown.strip(), metadata={"diagnostics": data})
    known = {p: d for p, d in svc.known().items() if d}
    if not svc.rows():
        return ToolResult.success("No language server is running yet: one starts when a file of its language is "
                                  "edited or checked (diagnostics(path=...)).")
    lines: list[str] = []
    for file in sorted(known, key=lambda p: (-sum(1 for d in known[p] if d.severity == 1), p))[:_PROJECT_FILES]:
        lines += [diag_line(d, ctx.cwd) for d in sorted(known[file], key=lambda d: (d.severity, d.line))[:10]]
    if not lines:
        return ToolResult.success(f"No problems reported in the {count(len(svc.known()), 'file')} checked so far.")
    more = len(known) - _PROJECT_FILES
    tail = f"\n... and {count(more, 'more file')} with problems" if more > 0 else ""
    return ToolResult.success("\n".join(lines) + tail, metadata={"files": len(known)})


TOOLS: list[Tool] = [diagnostics]
