"""The editor door against a careless client, over the real protocol (the SDK's client and raw JSON-RPC): tool
call ids unique in a session, only offered choices count, the permission text keeps its lines, session ids are
ids, the message size limit holds while reading, no workspace at `/` or home, and a request nobody answers ends."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from acp import schema, text_block

from swebash_ai.testing.fake_server import FakeLLMServer, Reply

from .test_acp import Editor, drive, new
from .test_acp_raw import Wire, request

pytestmark = pytest.mark.timeout(120)


def test_tool_call_ids_are_unique_in_a_session_whatever_the_provider_numbers(
    llm_env: FakeLLMServer, cli_env: dict[str, str], workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "b.txt").write_text("beta\n")
    # a local server numbering calls call_0 in every response: twice in turn 1, once in turn 2
    llm_env.enqueue(Reply.tool_calls([("read_file", {"path": "a.txt"}, "call_0")]),
                    Reply.tool_calls([("read_file", {"path": "b.txt"}, "call_0")]), Reply.text("Both read."),
                    Reply.tool_calls([("run_command", {"command": "touch t2.txt"}, "call_0")]), Reply.text("Done."))
    editor = Editor(lambda options, call: "allow_once")

    async def script(conn: Any, init: Any) -> Any:
        sid = await new(conn, workspace)
        await conn.prompt(session_id=sid, prompt=[text_block("read both")])
        await conn.prompt(session_id=sid, prompt=[text_block("touch")])
        return sid

    sid, _ = drive(cli_env, workspace, editor, script)
    ids = [u.tool_call_id for u in editor.of("tool_call")]
    assert len(ids) == 3 and len(set(ids)) == 3 and ids[0] == "call_0"
    ((asked, _),) = editor.asked
    assert asked.tool_call_id == ids[2]  # the request names the call of turn 2, not turn 1's
    for update in editor.of("tool_call_update"):
        assert update.tool_call_id in ids
    finals = {u.tool_call_id: u for u in editor.of("tool_call_update")}
    assert "alpha" in finals[ids[0]].content[0].content.text and "beta" in finals[ids[1]].content[0].content.text
    assert finals[ids[2]].status == "completed" and (workspace / "t2.txt").exists()
    # the provider keeps its own ids
    sent = llm_env.requests[-1]["body"]["messages"]
    assert {m["tool_call_id"] for m in sent if m["role"] == "tool"} == {"call_0"}
    # ...and a loaded session's replay draws each call as its own too
    replayed = Editor()

    async def load(conn: Any, init: Any) -> Any:
        await conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])

    drive(cli_env, workspace, replayed, load)
    calls = replayed.of("tool_call")
    assert len(calls) == 3 and len({c.tool_call_id for c in calls}) == 3
    assert "alpha" in calls[0].content[0].content.text and "beta" in calls[1].content[0].content.text


def test_a_choice_never_offered_is_a_refusal(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                             workspace: Path) -> None:
    # a compound command: no rule can be offered, so "always allow here" is not among the choices
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "touch a.txt && touch b.txt"})]),
                    Reply.text("Done."))
    editor = Editor(lambda options, call: "allow_always")

    async def script(conn: Any, init: Any) -> Any:
        return await conn.prompt(session_id=await new(conn, workspace), prompt=[text_block("touch")])

    response, _ = drive(cli_env, workspace, editor, script)
    assert response.stop_reason == "end_turn"
    ((_call, options),) = editor.asked
    assert "allow_always" not in [o.option_id for o in options]
    assert not (workspace / "a.txt").exists() and not (workspace / "b.txt").exists()
    assert "choice that was not offered ('allow_always')" in editor.answer()
    final = editor.of("tool_call_update")[-1]
    assert final.status == "failed" and "denied" in final.content[0].content.text.lower()


def test_an_answer_off_the_list_on_the_wire_is_a_refusal(llm_env: FakeLLMServer, wire: Wire,
                                                          workspace: Path) -> None:
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "touch made.txt"})]), Reply.text("Done."))
    wire.send(request(1, "initialize", {"protocolVersion": 1}))
    wire.until(1)
    wire.send(request(2, "session/new", {"cwd": str(workspace), "mcpServers": []}))
    sid = wire.until(2)[0]["result"]["sessionId"]
    wire.send(request(3, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "touch"}]}))
    while (message := wire.next()).get("method") != "session/request_permission":
        pass
    text = message["params"]["toolCall"]["content"][-1]["content"]["text"]
    # Markdown that keeps its lines: the command fenced, then one list item per fact
    assert "```\n$ touch made.txt" in text or "```\ntouch made.txt" in text
    items = [line for line in text.splitlines() if line.startswith("- ")]
    assert items[0] == f"- in {workspace}" and any(line.startswith("- why: ") for line in items)
    wire.send({"jsonrpc": "2.0", "id": message["id"],
               "result": {"outcome": {"outcome": "selected", "optionId": "yes_please"}}})
    done, _ = wire.until(3)
    assert done["result"]["stopReason"] == "end_turn" and not (workspace / "made.txt").exists()
    wire.close()


@pytest.fixture
def wire(cli_env: dict[str, str], workspace: Path) -> Any:
    agent = Wire(cli_env, workspace)
    yield agent
    if agent.proc.poll() is None:
        agent.proc.kill()
        agent.proc.wait()


def test_session_ids_are_ids_never_paths(llm_env: FakeLLMServer, wire: Wire, workspace: Path,
                                         cli_env: dict[str, str], tmp_path: Path) -> None:
    outside = tmp_path / "x.jsonl"  # a session file outside the sessions folder, reachable by a path
    outside.write_text("not a session\n")
    sessions = Path(cli_env["SWEBASH_AI_HOME"]) / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    climb = "../" * len(sessions.parts) + str(tmp_path / "x").lstrip("/")
    wire.send(request(1, "initialize", {"protocolVersion": 1}))
    wire.until(1)
    for n, bad in enumerate([climb, str(tmp_path / "x"), "", "2026*", "a/b", ".hidden"], 2):
        wire.send(request(n, "session/load", {"cwd": str(workspace), "sessionId": bad, "mcpServers": []}))
        error = wire.until(n)[0]["error"]
        assert error["code"] == -32602 and "is not a session id" in error["data"]["details"], (bad, error)
        assert str(tmp_path) not in error["data"]["details"].replace(repr(bad), "")
    # a real session, named by a prefix only: an editor names a whole id
    llm_env.enqueue(Reply.text("hello"))
    wire.send(request(20, "session/new", {"cwd": str(workspace), "mcpServers": []}))
    sid = wire.until(20)[0]["result"]["sessionId"]
    wire.send(request(21, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}))
    wire.until(21)
    wire.send(request(22, "session/load", {"cwd": str(workspace), "sessionId": sid[:10], "mcpServers": []}))
    error = wire.until(22)[0]["error"]
    assert error["code"] == -32602 and "whole id" in error["data"]["details"]
    wire.send(request(23, "session/load", {"cwd": str(workspace), "sessionId": sid, "mcpServers": []}))
    assert "result" in wire.until(23)[0]
    wire.close()


def test_an_over_long_message_is_refused_and_the_stream_stays_in_step(
    llm_env: FakeLLMServer, cli_env: dict[str, str], workspace: Path
) -> None:
    import psutil

    wire = Wire({**cli_env, "SWEBASH_AI_ACP_MESSAGE_LIMIT_MB": "1"}, workspace)
    try:
        wire.send(request(1, "initialize", {"protocolVersion": 1}))
        wire.until(1)
        before = psutil.Process(wire.proc.pid).memory_info().rss
        big = "x" * (3 * 1024 * 1024)
        wire.send(b'{"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "' + big.encode()
                  + b'", "mcpServers": []}}')
        error = wire.until(2)[0]["error"]
        assert error["code"] == -32600 and "longer than the limit of 1048576 bytes" in error["data"]["details"]
        # 200 MiB in one line, no id: refused with id null, never held whole
        assert wire.proc.stdin is not None
        chunk = b"y" * (1024 * 1024)
        for _ in range(200):
            wire.proc.stdin.write(chunk)
        wire.proc.stdin.write(b"\n")
        wire.proc.stdin.flush()
        error = wire.next()
        assert error["id"] is None and error["error"]["code"] == -32600
        grown = psutil.Process(wire.proc.pid).memory_info().rss - before
        assert grown < 40 * 1024 * 1024, grown
        # ...and the next message is read as its own
        wire.send(request(3, "session/new", {"cwd": str(workspace), "mcpServers": []}))
        assert wire.until(3)[0]["result"]["sessionId"]
        code, stderr = wire.close()
        assert code == 0 and "longer than the limit" in stderr
    finally:
        if wire.proc.poll() is None:
            wire.proc.kill()
            wire.proc.wait()


def test_root_home_and_system_folders_are_no_workspace(llm_env: FakeLLMServer, wire: Wire, workspace: Path,
                                                        cli_env: dict[str, str]) -> None:
    wire.send(request(1, "initialize", {"protocolVersion": 1}))
    wire.until(1)
    home = cli_env["HOME"]
    refused = {"/": "root folder", home: "home folder", str(Path(home).parent): "home folder",
               "/usr": "operating system", "/etc": "operating system"}
    for n, (cwd, why) in enumerate(refused.items(), 2):
        wire.send(request(n, "session/new", {"cwd": cwd, "mcpServers": []}))
        error = wire.until(n)[0]["error"]
        assert error["code"] == -32602 and why in error["data"]["details"], (cwd, error)
        assert "does not take" in error["data"]["details"]
    project = Path(home) / "project"
    project.mkdir()
    for n, cwd in enumerate([project, workspace], 20):
        wire.send(request(n, "session/new", {"cwd": str(cwd), "mcpServers": []}))
        assert "sessionId" in wire.until(n)[0]["result"]
    wire.close()


def test_a_permission_request_nobody_answers_ends_as_a_refusal(
    llm_env: FakeLLMServer, cli_env: dict[str, str], workspace: Path
) -> None:
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "touch made.txt"})]), Reply.text("Not run."))
    release = asyncio.Event()

    class Away(Editor):
        async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
            self.asked_event.set()
            await release.wait()  # the person has gone for coffee
            return schema.RequestPermissionResponse(outcome=schema.AllowedOutcome(outcome="selected",
                                                                                 option_id="allow_once"))

    editor = Away()

    async def script(conn: Any, init: Any) -> Any:
        started = time.monotonic()
        response = await conn.prompt(session_id=await new(conn, workspace), prompt=[text_block("touch")])
        took = time.monotonic() - started
        release.set()  # a late answer changes nothing
        await asyncio.sleep(0.3)
        return response, took

    (response, took), _ = drive({**cli_env, "SWEBASH_AI_ACP_PERMISSION_TIMEOUT": "2"}, workspace, editor, script)
    assert response.stop_reason == "end_turn" and took >= 2  # no answer ever comes: only the timeout ends it
    assert not (workspace / "made.txt").exists()
    assert "No answer to the request about" in editor.answer() and "within 2 seconds" in editor.answer()
    final = editor.of("tool_call_update")[-1]
    assert final.status == "failed" and "denied" in final.content[0].content.text.lower()


def test_stdin_from_dev_null_is_an_end_not_a_hang(cli_env: dict[str, str], workspace: Path) -> None:
    """asyncio takes /dev/null as a pipe and then cannot watch it: the end of the input was never seen."""
    import subprocess

    res = subprocess.run([sys.executable, "-m", "swebash_ai", "acp"], stdin=subprocess.DEVNULL,
                         capture_output=True, env=cli_env, cwd=workspace, timeout=60)
    assert res.returncode == 0 and res.stdout == b"", res.stderr


def test_stdin_from_a_regular_file_is_read_with_back_pressure(cli_env: dict[str, str], workspace: Path,
                                                              tmp_path: Path) -> None:
    """A regular file cannot be watched by asyncio and is read in a thread: the thread waits while the reader
    holds more than two chunks, as a pipe would, so a large file is never read ahead into memory. stdout is a
    regular file too (it was refused: asyncio's pipe transport takes pipes, sockets and terminals only)."""
    import subprocess

    def peak_rss_kb(messages: Path) -> tuple[int, bytes]:
        out = tmp_path / f"{messages.name}.out"
        with messages.open("rb") as stdin, out.open("wb") as stdout:
            proc = subprocess.Popen([sys.executable, "-m", "swebash_ai", "acp"], stdin=stdin, stdout=stdout,
                                    stderr=subprocess.DEVNULL, env=cli_env, cwd=workspace)
            _pid, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
        assert proc.returncode == 0
        return usage.ru_maxrss, out.read_bytes()

    init = json.dumps(request(1, "initialize", {"protocolVersion": 1})).encode() + b"\n"
    small, large = tmp_path / "small", tmp_path / "large"
    small.write_bytes(init)
    bad = b"{" + b"z" * 1022 + b"\n"  # not JSON: each is parsed and answered, slower than the file is read
    with large.open("wb") as f:
        f.write(init)
        for _ in range(64):
            f.write(bad * 1024)
    base, _ = peak_rss_kb(small)
    peak, out = peak_rss_kb(large)
    assert out.count(b'"code":-32700') == 64 * 1024  # every line was read and answered
    assert (peak - base) * 1024 < 24 * 1024 * 1024, (base, peak)
