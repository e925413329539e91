"""What the editor brings, over the real protocol: its buffers (``fs/read_text_file``, ``fs/write_text_file``)
read and written under the same guard, scan and undo as the disk, and its MCP servers, confined and started
in the background."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from acp import schema, spawn_agent_process, text_block

from swebash_ai.testing.fake_server import FakeLLMServer, Reply

from .test_acp import SHUTDOWN, Editor

pytestmark = pytest.mark.timeout(120)
DEMO = Path(__file__).resolve().parents[1] / "mcptools" / "demo_server.py"
PROBE = Path(__file__).resolve().parents[1] / "mcptools" / "probe_server.py"


class BufferEditor(Editor):
    """An editor with open buffers that differ from the disk; it records what it was asked."""

    def __init__(self, buffers: dict[str, str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.buffers = buffers
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []

    async def read_text_file(self, path: str, session_id: str, **_: Any) -> schema.ReadTextFileResponse:
        self.reads.append(path)
        if path in self.buffers:
            return schema.ReadTextFileResponse(content=self.buffers[path])
        return schema.ReadTextFileResponse(content=Path(path).read_text())

    async def write_text_file(self, content: str, path: str, session_id: str,
                              **_: Any) -> schema.WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers[path] = content
        return schema.WriteTextFileResponse()


def drive_with(env: dict[str, str], cwd: Path, editor: Editor, script: Any, *, fs: bool = True) -> Any:
    async def main() -> Any:
        async with spawn_agent_process(editor, sys.executable, "-m", "swebash_ai", "acp", env=env, cwd=str(cwd),
                                       transport_kwargs=SHUTDOWN) as (conn, _process):
            capabilities = schema.ClientCapabilities(
                fs=schema.FileSystemCapabilities(read_text_file=fs, write_text_file=fs))
            await conn.initialize(protocol_version=1, client_capabilities=capabilities)
            return await script(conn)

    return asyncio.run(main())


def test_the_model_reads_and_edits_the_editors_buffer(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                      workspace: Path) -> None:
    notes = workspace / "notes.txt"
    notes.write_text("saved on disk\nsecond line\n")
    buffer = "typed but unsaved\nsecond line\nGITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345\n"
    secret = Path(cli_env["HOME"]) / ".ssh" / "id_ed25519"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text("PRIVATE KEY\n")
    llm_env.enqueue(
        Reply.tool_calls([("read_file", {"path": "notes.txt"}), ("read_file", {"path": str(secret)})]),
        Reply.tool_calls([("edit_file", {"path": "notes.txt", "old": "second line", "new": "2nd line"})]),
        Reply.text("Edited."))
    editor = BufferEditor({str(notes): buffer}, choose=lambda options, call: "allow_once")

    async def script(conn: Any) -> Any:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        return await conn.prompt(session_id=session.session_id, prompt=[text_block("read and fix")])

    response = drive_with(cli_env, workspace, editor, script)
    assert response.stop_reason == "end_turn"
    # the read is the buffer's, scanned as a file's; the guard's refusal never reached the editor
    sent = llm_env.requests[1]["body"]["messages"]
    results = [m["content"] for m in sent if m["role"] == "tool"]
    assert "typed but unsaved" in results[0] and "saved on disk" not in results[0]
    assert "ghp_0123456789" not in results[0] and "[masked:" in results[0]
    assert str(secret) not in editor.reads and "PRIVATE KEY" not in results[1]
    # the permission request shows the whole buffer's diff; the change lands in the editor, not on disk
    ((call, _options),) = editor.asked
    diff = call.content[0]
    assert diff.type == "diff" and diff.old_text == buffer and diff.new_text == buffer.replace("second", "2nd")
    assert editor.writes == [(str(notes), buffer.replace("second line", "2nd line"))]
    assert notes.read_text() == "saved on disk\nsecond line\n"
    final = editor.of("tool_call_update")[-1]
    assert final.status == "completed" and "in the editor" in final.content[-1].content.text
    # ...and recorded for undo first, as a write to disk is
    import json

    (index,) = (Path(cli_env["SWEBASH_AI_HOME"]) / "sessions").glob("*.checkpoints/index.jsonl")
    entries = [json.loads(line) for line in index.read_text().splitlines()]
    assert [e["path"] for e in entries if e.get("kind") == "file"] == [str(notes)]


def test_without_the_capability_the_disk_serves(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                workspace: Path) -> None:
    notes = workspace / "notes.txt"
    notes.write_text("saved on disk\n")
    llm_env.enqueue(Reply.tool_calls([("read_file", {"path": "notes.txt"})]), Reply.text("Read."))
    editor = BufferEditor({str(notes): "unsaved buffer\n"})

    async def script(conn: Any) -> Any:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        return await conn.prompt(session_id=session.session_id, prompt=[text_block("read")])

    drive_with(cli_env, workspace, editor, script, fs=False)
    assert editor.reads == []
    sent = llm_env.requests[-1]["body"]["messages"]
    assert "saved on disk" in next(m["content"] for m in sent if m["role"] == "tool")


def test_an_editor_that_fails_a_read_leaves_it_to_the_disk(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                            workspace: Path) -> None:
    notes = workspace / "notes.txt"
    notes.write_text("saved on disk\n")
    llm_env.enqueue(Reply.tool_calls([("read_file", {"path": "notes.txt"})]), Reply.text("Read."))

    class Broken(BufferEditor):
        async def read_text_file(self, path: str, session_id: str, **_: Any) -> Any:
            from acp import RequestError

            self.reads.append(path)
            raise RequestError.internal_error({"details": "no such buffer"})

    editor = Broken({})

    async def script(conn: Any) -> Any:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        return await conn.prompt(session_id=session.session_id, prompt=[text_block("read")])

    drive_with(cli_env, workspace, editor, script)
    assert editor.reads == [str(notes)]
    sent = llm_env.requests[-1]["body"]["messages"]
    assert "saved on disk" in next(m["content"] for m in sent if m["role"] == "tool")


def test_the_editors_mcp_server_runs_in_the_sandbox(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                    workspace: Path) -> None:
    from swebash_ai.sandbox import detect

    if detect.choose("auto").backend is None:
        pytest.skip("no sandbox works here")
    outside = Path(cli_env["SWEBASH_AI_HOME"]) / "planted.txt"  # outside the workspace: never written
    inside = workspace / "made.txt"
    llm_env.enqueue(Reply.tool_calls([("mcp__probe__touch", {"path": str(outside)}),
                                      ("mcp__probe__touch", {"path": str(inside)})]), Reply.text("Tried."))
    editor = Editor(lambda options, call: "allow_once")

    async def script(conn: Any) -> Any:
        server = schema.McpServerStdio(name="probe", command=sys.executable, args=[str(PROBE)], env=[])
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[server])
        for _ in range(600):
            if "MCP: 1 server ready" in editor.answer():
                break
            await asyncio.sleep(0.1)
        return await conn.prompt(session_id=session.session_id, prompt=[text_block("touch both")])

    drive_with(cli_env, workspace, editor, script, fs=False)
    finals = [u for u in editor.of("tool_call_update") if u.status == "completed"]
    assert len(finals) == 2 and finals[1].content[-1].content.text == "made"
    assert not outside.exists() and inside.exists()


def test_a_slow_or_broken_editor_server_never_holds_session_new(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                                 workspace: Path) -> None:
    llm_env.enqueue(Reply.text("answered without them"))
    editor = Editor()

    async def script(conn: Any) -> Any:
        slow = schema.McpServerStdio(name="slow", command=sys.executable, args=[str(DEMO), "--hang-at-start"],
                                     env=[])
        broken = schema.McpServerStdio(name="broken", command="/no/such/server", args=[], env=[])
        started = time.monotonic()
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[slow, broken])
        opened = time.monotonic() - started
        response = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        for _ in range(600):  # said once every server has settled (the slow one's startup_timeout)
            if "broken" in editor.answer():
                break
            await asyncio.sleep(0.1)
        return opened, response

    # The slow server is given up on after acp_mcp_startup_timeout (20 s unless set; here longer than the
    # 5 s a prompt waits for servers, so the turn says it is still starting).
    env = {**cli_env, "SWEBASH_AI_ACP_MCP_STARTUP_TIMEOUT": "8"}
    started = time.monotonic()
    opened, response = drive_with(env, workspace, editor, script, fs=False)
    assert opened < 10 and response.stop_reason == "end_turn"
    said = editor.answer()
    assert "answered without them" in said and "still starting" in said
    assert "MCP server broken" in said and "cannot run the command" in said
    assert "did not start within 8s (acp_mcp_startup_timeout)" in said and time.monotonic() - started < 18


@pytest.mark.parametrize("answer", ["allow_once", "reject", None])
def test_where_no_sandbox_works_the_editors_server_is_put_to_the_person(
        answer: str | None, llm_env: FakeLLMServer, cli_env: dict[str, str], workspace: Path) -> None:
    env = {**cli_env, "SWEBASH_AI_SANDBOX_BACKEND": "seatbelt" if sys.platform != "darwin" else "bwrap"}
    editor = Editor(lambda options, call: answer)

    async def script(conn: Any) -> Any:
        server = schema.McpServerStdio(name="demo", command=sys.executable, args=[str(DEMO)], env=[])
        started = time.monotonic()
        await conn.new_session(cwd=str(workspace), mcp_servers=[server])
        opened = time.monotonic() - started
        for _ in range(600):
            if "MCP: 1 server ready" in editor.answer() or "was not started" in editor.answer():
                break
            await asyncio.sleep(0.1)
        return opened

    opened = drive_with(env, workspace, editor, script, fs=False)
    assert opened < 10  # the question never holds session/new (the slow server's start-up wait is 20 s)
    ((call, options),) = editor.asked
    assert [o.option_id for o in options] == ["allow_once", "reject"]
    assert "demo" in call.title and str(DEMO) in call.content[0].content.text
    assert "all of your rights" in call.content[0].content.text
    (start,) = editor.of("tool_call")
    assert start.tool_call_id == call.tool_call_id
    final = editor.of("tool_call_update")[-1]
    if answer == "allow_once":
        assert "MCP: 1 server ready" in editor.answer() and final.status == "completed"
    else:
        assert "MCP server 'demo' was not started" in editor.answer() and final.status == "failed"
        assert "ready" not in editor.answer()


def test_a_server_question_nobody_answers_leaves_it_unstarted(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                              workspace: Path) -> None:
    env = {**cli_env, "SWEBASH_AI_SANDBOX_BACKEND": "seatbelt" if sys.platform != "darwin" else "bwrap",
           "SWEBASH_AI_ACP_PERMISSION_TIMEOUT": "1"}

    class Silent(Editor):
        async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
            self.asked.append((kwargs.get("tool_call"), kwargs.get("options")))
            await asyncio.Event().wait()

    editor = Silent()

    async def script(conn: Any) -> Any:
        server = schema.McpServerStdio(name="demo", command=sys.executable, args=[str(DEMO)], env=[])
        await conn.new_session(cwd=str(workspace), mcp_servers=[server])
        for _ in range(600):
            if "was not started" in editor.answer():
                break
            await asyncio.sleep(0.1)

    drive_with(env, workspace, editor, script, fs=False)
    said = editor.answer()
    assert len(editor.asked) == 1 and "No answer to the request" in said
    assert "MCP server 'demo' was not started" in said and "ready" not in said
