"""write_file and edit_file carry the language server's diagnostics of the new text (as text for the model and
as metadata for front ends), say when there are none to be had, and start the server in the sandbox with the
workspace read-only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsp_helpers import fake_table

from swebash_ai.config.settings import load_settings
from swebash_ai.safety.paths import PathPolicy
from swebash_ai.sandbox import detect
from swebash_ai.tools.diagnostics import diagnostics
from swebash_ai.tools.fs_write import edit_file, write_file
from swebash_ai.tools.registry import ToolContext, ToolResult


def _ctx(workspace: Path, home: Path, tables: dict[str, Any]) -> ToolContext:
    return ToolContext(settings=load_settings().settings, cwd=workspace,
                       path_policy=PathPolicy(roots=[workspace], home=home), services={"lsp_tables": tables})


async def _run(tool: Any, ctx: ToolContext, **args: Any) -> ToolResult:
    return await tool.invoke(ctx, tool.args_model(**args))


async def _close(ctx: ToolContext) -> None:
    if (svc := ctx.services.get("lsp")) is not None:
        await svc.aclose()


async def test_an_edit_returns_the_new_errors_and_the_fix_returns_none(
        workspace: Path, isolated_env: Path, lsp_on: None) -> None:
    ctx = _ctx(workspace, isolated_env, fake_table(workspace))
    try:
        wrote = await _run(write_file, ctx, path="m.fk", content="a\nb ERROR: undefined name 'b'\n")
        assert wrote.ok
        assert "Diagnostics (fake) for m.fk: 1 error, 0 warnings\n  m.fk:2:3: error[fake-error] (fake) undefined " \
               "name 'b'" in wrote.text
        meta = wrote.metadata["diagnostics"]
        assert meta["status"] == "ok" and meta["errors"] == 1 and meta["items"][0]["line"] == 2
        edited = await _run(edit_file, ctx, path="m.fk", old="b ERROR: undefined name 'b'", new="b = 1")
        assert edited.ok and "replaced 1 occurrence" in edited.text
        assert "no problems in m.fk" in edited.text and "undefined" not in edited.text
        assert edited.metadata["diagnostics"]["errors"] == 0
        checked = await _run(diagnostics, ctx, path="m.fk")
        assert checked.ok and "no problems in m.fk" in checked.text
    finally:
        await _close(ctx)


async def test_a_missing_server_says_so_and_other_files_say_nothing(
        workspace: Path, isolated_env: Path, lsp_on: None) -> None:
    tables = {"fake": {"command": ["no-such-language-server-xyz"], "extensions": [".fk"], "languages": ["fake"]}}
    ctx = _ctx(workspace, isolated_env, tables)
    wrote = await _run(write_file, ctx, path="m.fk", content="x\n")
    assert "no diagnostics for m.fk: no language server for .fk files was found" in wrote.text
    notes = await _run(write_file, ctx, path="notes.md", content="# hi\n")
    assert notes.text == "Wrote 'notes.md' (new file, 5 bytes written; +1 -0 lines)."
    assert "diagnostics" not in notes.metadata
    assert "lsp" in ctx.services  # made for the .fk file; nothing was started
    assert ctx.services["lsp"].rows() == []


async def test_off_means_no_server_and_no_words(workspace: Path, isolated_env: Path) -> None:
    ctx = _ctx(workspace, isolated_env, fake_table(workspace))  # the suite's default: off
    wrote = await _run(write_file, ctx, path="m.fk", content="ERROR: x\n")
    assert "Diagnostics" not in wrote.text and "lsp" not in ctx.services


async def test_turn_mode_sends_the_change_without_waiting(
        workspace: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWEBASH_AI_LSP_DIAGNOSTICS", "turn")
    ctx = _ctx(workspace, isolated_env, fake_table(workspace, never=True))
    try:
        wrote = await _run(write_file, ctx, path="m.fk", content="ERROR: later\n")
        assert "Diagnostics" not in wrote.text and wrote.metadata["diagnostics"]["status"] == "pending"
        assert wrote.duration < ctx.settings.lsp_wait  # a wait would have ended in a timeout
        assert [p.name for p in ctx.services["lsp"].take_pending()] == ["m.fk"]
    finally:
        await _close(ctx)


@pytest.mark.skipif(not detect.choose("auto").ok, reason="no sandbox works here")
async def test_the_server_runs_in_the_sandbox_with_the_workspace_read_only(
        workspace: Path, isolated_env: Path, lsp_on: None, monkeypatch: pytest.MonkeyPatch) -> None:
    probe = workspace / "written-by-server"
    ctx = _ctx(workspace, isolated_env, fake_table(workspace, probe_write=str(probe)))
    try:
        wrote = await _run(write_file, ctx, path="m.fk", content="x\n")
        assert "probe: refused" in wrote.text, wrote.text
        assert not probe.exists()
        assert "sandbox" in ctx.services["lsp"].where and "read-only" in ctx.services["lsp"].where
    finally:
        await _close(ctx)
    # The same server with exec_sandbox = "none" (the user turned the sandbox off) can write: the probe works.
    monkeypatch.setenv("SWEBASH_AI_EXEC_SANDBOX", "none")
    ctx = _ctx(workspace, isolated_env, fake_table(workspace, probe_write=str(probe)))
    try:
        wrote = await _run(write_file, ctx, path="n.fk", content="x\n")
        assert "probe: wrote" in wrote.text and probe.exists()
    finally:
        await _close(ctx)


async def test_the_scrubbed_environment_reaches_the_server(
        workspace: Path, isolated_env: Path, lsp_on: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_API_TOKEN", "sk-should-not-be-seen")
    monkeypatch.setenv("SWEBASH_AI_EXEC_SANDBOX", "none")
    from swebash_ai.tools.diagnostics import launcher

    ctx = _ctx(workspace, isolated_env, {})
    launch, where = launcher(ctx)
    assert where == "not sandboxed (exec_sandbox = none)"
    handle = await launch(["/usr/bin/env"], workspace)
    out = await handle.stdout.read()
    await handle.stop()
    handle.close()
    assert b"MY_API_TOKEN" not in out and b"TERM=dumb" in out


@pytest.mark.skipif(not detect.choose("landlock").ok, reason="Landlock does not work here")
async def test_under_landlock_the_server_reads_the_workspace_and_writes_nothing(
        workspace: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Landlock grants by path: the server's policy had no writable roots and nothing gave the workspace back
    for reading, so a server could not read the project it checks."""
    monkeypatch.setenv("SWEBASH_AI_SANDBOX_BACKEND", "landlock")
    from swebash_ai.tools.diagnostics import launcher

    (workspace / "a.txt").write_text("project text\n")
    (workspace / ".env").write_text("TOKEN=hidden-value\n")
    ctx = _ctx(workspace, isolated_env, {})
    launch, where = launcher(ctx)
    assert "landlock" in where
    handle = await launch(["/bin/sh", "-c", "cat a.txt; echo x > written; cat .env"], workspace)
    out = await handle.stdout.read()
    await handle.stop()
    handle.close()
    assert b"project text" in out
    assert not (workspace / "written").exists()
    assert b"hidden-value" not in out


async def test_unconfined_a_program_the_project_ships_is_never_started(
        workspace: Path, isolated_env: Path, lsp_on: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a sandbox, a cloned repository's own `.venv/bin` or `node_modules/.bin` server would run with all of
    the user's rights at the first edit, unasked: it is refused, saying why; one on PATH still starts."""
    monkeypatch.setenv("SWEBASH_AI_EXEC_SANDBOX", "none")
    from swebash_ai.tools.diagnostics import launcher

    shipped = workspace / "node_modules" / ".bin" / "typescript-language-server"
    shipped.parent.mkdir(parents=True)
    marker = workspace.parent / "ran-unconfined"
    shipped.write_text(f"#!/bin/sh\ntouch {marker}\n")
    shipped.chmod(0o755)
    ctx = _ctx(workspace, isolated_env, {})
    launch, _where = launcher(ctx)
    with pytest.raises(ConnectionError, match="the project's own program"):
        await launch([str(shipped), "--stdio"], workspace)
    with pytest.raises(ConnectionError, match="the project's own program"):
        await launch([str(workspace / ".venv" / "bin" / "python"), "-m", "pylsp"], workspace)
    assert not marker.exists()
    handle = await launch(["/usr/bin/env"], workspace)  # a program installed outside the project starts
    out = await handle.stdout.read()
    await handle.stop()
    handle.close()
    assert b"PATH=" in out
    await _close(ctx)
