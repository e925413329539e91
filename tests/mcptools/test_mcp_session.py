"""MCP servers through the real loop: a real SDK server (tests/mcptools/demo_server.py) over stdio, the session,
the loopback LLM server; approval, results, failures, timeouts, cancellation, and no process left behind."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.agent import ToolCallFinished
from swebash_ai.agent.approval import AllowApprover, Decision, DenyApprover
from swebash_ai.agent.events import ApprovalRequest
from swebash_ai.config.settings import load_settings
from swebash_ai.session import Session
from swebash_ai.testing.fake_server import FakeLLMServer, Reply
from tests.mcptools._support import alive, server_table

pytestmark = pytest.mark.timeout(60)


class Asking:
    interactive = True

    def __init__(self, answer: Decision) -> None:
        self.answer = answer
        self.asked: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.asked.append(request)
        return self.answer


async def session_with(config: Path, text: str, approver: Any = None) -> tuple[Session, list[str]]:
    config.write_text(text)
    session = Session(load_settings(), approver=approver, tools=[], probe_ollama=False)
    return session, await session.start_mcp()


async def one_call(session: Session, llm: FakeLLMServer, name: str, args: dict[str, Any]) -> ToolCallFinished:
    llm.enqueue(Reply.tool_calls([(name, args)]), Reply.text("done"))
    events = [e async for e in session.run("go")]
    return next(e for e in events if isinstance(e, ToolCallFinished))


def audit(session: Session) -> list[dict[str, Any]]:
    return [json.loads(x) for x in session.loaded.locations.audit_log.read_text().splitlines()]


async def test_discovery_auto_approved_call_and_audit(llm_env: FakeLLMServer, config_toml: Path) -> None:
    session, problems = await session_with(config_toml, server_table("demo", auto_approve=["echo"]))
    try:
        assert problems == []
        assert "mcp__demo__echo" in session.registry and "mcp__demo__crash" in session.registry
        done = await one_call(session, llm_env, "mcp__demo__echo", {"text": "hi", "times": 2})
        assert done.result.ok and done.result.content == "hi hi"
        assert done.result.metadata["mcp_server"] == "demo"
        offered = {t["function"]["name"]: t["function"] for t in llm_env.requests[0]["body"]["tools"]}
        assert offered["mcp__demo__echo"]["parameters"]["required"] == ["text"]
        assert "Repeat a text" in offered["mcp__demo__echo"]["description"]
        assert llm_env.requests[1]["body"]["messages"][-1]["content"] == "hi hi"
        record = audit(session)[-1]
        assert record["tool"] == "mcp__demo__echo" and record["decided_by"] == "mcp.auto_approve"
    finally:
        await session.aclose()


async def test_a_call_asks_and_shows_server_and_hints(llm_env: FakeLLMServer, config_toml: Path) -> None:
    approver = Asking(Decision.ALLOW_ONCE)
    session, _ = await session_with(config_toml, server_table("demo"), approver)
    try:
        done = await one_call(session, llm_env, "mcp__demo__echo", {"text": "x"})
        assert done.result.content == "x"
        request = approver.asked[0]
        assert "MCP server: demo" in request.detail and "read-only" in request.detail
        assert "not verified" in " ".join(request.verdict.reasons)  # a hint is shown, never trusted
        assert audit(session)[-1]["decided_by"] == "user"
    finally:
        await session.aclose()


async def test_the_user_denies(llm_env: FakeLLMServer, config_toml: Path) -> None:
    session, _ = await session_with(config_toml, server_table("demo"), Asking(Decision.DENY))
    try:
        done = await one_call(session, llm_env, "mcp__demo__pid", {})
        assert done.result.status == "denied" and audit(session)[-1]["decided_by"] == "user"
    finally:
        await session.aclose()


async def test_without_a_terminal_denied_unless_yes(llm_env: FakeLLMServer, config_toml: Path) -> None:
    session, _ = await session_with(config_toml, server_table("demo"), DenyApprover())
    try:
        done = await one_call(session, llm_env, "mcp__demo__echo", {"text": "x"})
        assert done.result.status == "denied" and "--yes" in str(done.result.content)
    finally:
        await session.aclose()
    session, _ = await session_with(config_toml, server_table("demo"), AllowApprover())
    try:
        done = await one_call(session, llm_env, "mcp__demo__echo", {"text": "x"})
        assert done.result.ok and audit(session)[-1]["decided_by"] == "--yes"
    finally:
        await session.aclose()


async def test_bad_arguments_are_a_tool_error_checked_against_the_schema(
    llm_env: FakeLLMServer, config_toml: Path
) -> None:
    session, _ = await session_with(config_toml, server_table("demo", auto_approve=["echo"]))
    try:
        done = await one_call(session, llm_env, "mcp__demo__echo", {"times": "two"})
        assert done.result.status == "error" and done.decided_by == "invalid_arguments"
        said = str(done.result.content)
        assert "'text' is a required property" in said and "'two' is not of type 'integer'" in said
    finally:
        await session.aclose()


async def test_results_errors_images_and_caps(llm_env: FakeLLMServer, config_toml: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("SWEBASH_AI_EXEC_MAX_OUTPUT", "5000")
    session, _ = await session_with(config_toml, server_table("demo", auto_approve=["big", "picture", "fail"]))
    try:
        big = await one_call(session, llm_env, "mcp__demo__big", {"n": 1_000_000})
        assert big.result.truncated and len(str(big.result.content)) < 5200
        pic = await one_call(session, llm_env, "mcp__demo__picture", {})
        assert "here is a dot" in str(pic.result.content) and "[image: image/png" in str(pic.result.content)
        assert "iVBOR" not in str(pic.result.content)
        fail = await one_call(session, llm_env, "mcp__demo__fail", {})
        assert fail.result.status == "error" and "reported an error" in str(fail.result.content)
    finally:
        await session.aclose()


async def test_a_hanging_call_times_out_and_the_server_keeps_working(
    llm_env: FakeLLMServer, config_toml: Path
) -> None:
    session, _ = await session_with(config_toml, server_table("demo", auto_approve=["hang", "echo"], timeout=1))
    try:
        done = await one_call(session, llm_env, "mcp__demo__hang", {"seconds": 30})
        assert done.result.status == "timeout" and done.result.duration < 5
        again = await one_call(session, llm_env, "mcp__demo__echo", {"text": "still here"})
        assert again.result.content == "still here"
    finally:
        await session.aclose()


async def test_a_server_that_exits_mid_call(llm_env: FakeLLMServer, config_toml: Path) -> None:
    text = server_table("demo", auto_approve=["crash", "echo"]) + server_table("other", auto_approve=["echo"])
    session, _ = await session_with(config_toml, text)
    try:
        done = await one_call(session, llm_env, "mcp__demo__crash", {})
        assert done.result.status == "error" and "demo" in str(done.result.content)
        later = await one_call(session, llm_env, "mcp__demo__echo", {"text": "x"})
        assert later.result.status == "error" and "not running" in str(later.result.content)
        other = await one_call(session, llm_env, "mcp__other__echo", {"text": "fine"})
        assert other.result.content == "fine"  # the other server keeps working
    finally:
        await session.aclose()


async def test_start_failures_are_reported_and_the_others_start(llm_env: FakeLLMServer, config_toml: Path) -> None:
    text = (
        server_table("dies", "--die-at-start")
        + server_table("hangs", "--hang-at-start", startup_timeout=2)
        + '[mcp_servers.missing]\ncommand = "/nonexistent/mcp-server"\n'
        + server_table("good")
    )
    session, problems = await session_with(config_toml, text)
    try:
        said = "\n".join(problems)
        assert "dies: failed" in said and "missing: failed" in said
        assert "hangs: failed: did not start within 2s" in said
        assert "mcp__good__echo" in session.registry and not any("mcp__hangs" in n for n in session.registry.names())
        pids = [s._task for s in session.mcp.servers]
        assert all(t is not None for t in pids)
    finally:
        await session.aclose()


async def test_no_process_is_left_after_close_or_cancellation(llm_env: FakeLLMServer, config_toml: Path) -> None:
    session, _ = await session_with(config_toml, server_table("demo", auto_approve=["pid", "hang"]))
    done = await one_call(session, llm_env, "mcp__demo__pid", {})
    pid = int(str(done.result.content))
    assert alive(pid)
    # Ctrl-C during a call: the turn is cancelled while the server is busy.
    llm_env.enqueue(Reply.tool_calls([("mcp__demo__hang", {"seconds": 30})]), Reply.text("done"))
    events: list[Any] = []

    async def turn() -> None:
        async for e in session.run("go"):
            events.append(e)

    task = asyncio.create_task(turn())
    for _ in range(100):
        if any(type(e).__name__ == "ToolCallStarted" for e in events):
            break
        await asyncio.sleep(0.05)
    session.cancel()
    await asyncio.wait_for(task, 10)
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished and finished[0].result.status == "cancelled"
    await session.aclose()
    for _ in range(50):
        if not alive(pid):
            break
        await asyncio.sleep(0.1)
    assert not alive(pid)


def test_mcp_list_and_doctor_report_each_server(config_toml: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from swebash_ai.commands.doctor import checks
    from swebash_ai.frontends.cli import main

    config_toml.write_text(server_table("demo", auto_approve=["echo"]) + server_table("dies", "--die-at-start"))
    assert main(["mcp", "list"]) == 1
    out = capsys.readouterr().out
    assert "ok    demo: ready, 9 tools" in out and "FAIL  dies: failed" in out
    assert "mcp__demo__echo  (runs without asking; the server says: read-only (not verified))" in out
    assert "mcp__demo__pid  (asks)" in out
    found = {c.detail.split(":")[0]: c.status for c in checks() if c.name == "MCP server"}
    assert found == {"demo": "ok", "dies": "fail"}


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.timeout(120)  # the module's 60 s, and the server's start-up on a busy machine
async def test_streamable_http_server_with_headers_and_bearer_token(
    llm_env: FakeLLMServer, config_toml: Path, monkeypatch: Any
) -> None:
    import socket
    import subprocess
    import sys
    import time

    from tests.mcptools._support import DEMO

    port = _free_port()
    proc = subprocess.Popen([sys.executable, str(DEMO), "--http", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        # Until it listens: its start-up (mcp, uvicorn) takes many seconds on a busy machine. The bound is for a
        # server that never listens, not a measure.
        deadline = time.monotonic() + 60
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert proc.poll() is None, "the demo server exited before it listened"
            assert time.monotonic() < deadline, "the demo server never listened"
            await asyncio.sleep(0.05)
        monkeypatch.setenv("DEMO_TOKEN", "s3cret")
        table = (f'[mcp_servers.web]\nurl = "http://127.0.0.1:{port}/mcp"\nbearer_token_env = "DEMO_TOKEN"\n'
                 'headers = { "X-Test" = "yes" }\nauto_approve = ["headers", "echo"]\n'
                 '[mcp_servers.notoken]\nurl = "http://127.0.0.1:9/mcp"\nbearer_token_env = "UNSET_TOKEN_VAR"\n')
        session, problems = await session_with(config_toml, table)
        try:
            assert len(problems) == 1 and "UNSET_TOKEN_VAR" in problems[0]
            done = await one_call(session, llm_env, "mcp__web__headers", {})
            assert done.result.content == "Bearer s3cret|yes"
            echo = await one_call(session, llm_env, "mcp__web__echo", {"text": "over http"})
            assert echo.result.content == "over http"
        finally:
            await session.aclose()
    finally:
        proc.terminate()
        proc.wait(10)


async def test_a_tool_with_an_invalid_schema_is_not_offered(llm_env: FakeLLMServer, config_toml: Path) -> None:
    session, problems = await session_with(config_toml, server_table("demo", "--bad-schema"))
    try:
        assert problems == []
        assert "mcp__demo__big" not in session.registry and "mcp__demo__echo" in session.registry
        assert session.mcp is not None
        assert "skipped big (invalid input schema" in session.mcp.servers[0].message
        assert "skipped big" in session.mcp.servers[0].summary()
    finally:
        await session.aclose()


async def test_tools_deny_takes_mcp_tool_names(llm_env: FakeLLMServer, config_toml: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("SWEBASH_AI_TOOLS_DENY", "mcp__demo__crash")
    session, _ = await session_with(config_toml, server_table("demo", auto_approve=["crash"]))
    try:
        assert "mcp__demo__echo" in session.registry and "mcp__demo__crash" not in session.registry
        done = await one_call(session, llm_env, "mcp__demo__crash", {})
        assert done.result.status == "error" and "Unknown tool" in str(done.result.content)
    finally:
        await session.aclose()
