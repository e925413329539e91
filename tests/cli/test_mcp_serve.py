"""``swebash-ai mcp serve`` driven by the MCP SDK's own client over stdio: the same guard, classifier and audit
log; approval through elicitation when the client offers it, denial with the reason when it does not."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

pytestmark = pytest.mark.timeout(90)


async def drive(env: dict[str, str], cwd: Path, calls: list[tuple[str, dict[str, Any]]],
                answer: str | None) -> tuple[list[str], list[types.CallToolResult], list[str]]:
    asked: list[str] = []

    async def elicit(ctx: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"allow": answer == "yes"})

    params = StdioServerParameters(command=sys.executable, args=["-m", "swebash_ai", "mcp", "serve"], env=env,
                                   cwd=str(cwd))
    async with stdio_client(params) as (read, write), ClientSession(
        read, write, elicitation_callback=elicit if answer is not None else None
    ) as client:
        await client.initialize()
        names = [t.name for t in (await client.list_tools()).tools]
        results = [await client.call_tool(name, args) for name, args in calls]
    return names, results, asked


def text(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


def run(env: dict[str, str], cwd: Path, calls: list[tuple[str, dict[str, Any]]], answer: str | None) -> Any:
    return anyio.run(drive, env, cwd, calls, answer)


def test_tools_are_listed_and_a_safe_read_runs(cli_env: dict[str, str], workspace: Path) -> None:
    (workspace / "notes.txt").write_text("hello\n")
    names, results, asked = run(cli_env, workspace, [("read_file", {"path": "notes.txt"})], None)
    assert {"read_file", "run_command", "write_file"} <= set(names)
    assert not results[0].is_error and "hello" in text(results[0]) and asked == []


def test_without_elicitation_what_asks_is_denied_with_the_reason(cli_env: dict[str, str], workspace: Path) -> None:
    _, results, _ = run(cli_env, workspace, [("run_command", {"command": "touch made.txt"})], None)
    assert results[0].is_error and "does not support elicitation" in text(results[0])
    assert not (workspace / "made.txt").exists()
    audit = Path(cli_env["SWEBASH_AI_HOME"]) / "audit.jsonl"
    record = json.loads(audit.read_text().splitlines()[-1])
    assert record["tool"] == "run_command" and record["outcome"] == "denied"


@pytest.mark.parametrize(("answer", "made"), [("yes", True), ("no", False)])
def test_elicitation_asks_and_the_answer_decides(cli_env: dict[str, str], workspace: Path, answer: str,
                                                 made: bool) -> None:
    _, results, asked = run(cli_env, workspace, [("run_command", {"command": "touch made.txt"})], answer)
    assert len(asked) == 1 and "touch made.txt" in asked[0] and "Why it asks" in asked[0]
    assert (workspace / "made.txt").exists() is made
    assert results[0].is_error is not made


def test_what_policy_always_denies_stays_denied(cli_env: dict[str, str], workspace: Path) -> None:
    secret = Path(cli_env["HOME"]) / ".ssh" / "id_rsa"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text("PRIVATE KEY")
    _, results, asked = run(cli_env, workspace, [("read_file", {"path": str(secret)})], "yes")
    assert results[0].is_error and "PRIVATE KEY" not in text(results[0]) and asked == []


async def ask_over_mcp(env: dict[str, str], cwd: Path, args: dict[str, Any],
                       reply: types.ElicitResult | None) -> tuple[list[Any], types.CallToolResult]:
    asked: list[Any] = []

    async def elicit(ctx: Any, params: Any) -> types.ElicitResult:
        asked.append(params)
        assert reply is not None
        return reply

    params = StdioServerParameters(command=sys.executable, args=["-m", "swebash_ai", "mcp", "serve"], env=env,
                                   cwd=str(cwd))
    async with stdio_client(params) as (read, write), ClientSession(
        read, write, elicitation_callback=elicit if reply is not None else None
    ) as client:
        await client.initialize()
        result = await client.call_tool("ask_user", args)
    return asked, result


QUESTION = {"question": "Which database?", "options": ["sqlite", "postgres"], "allow_free_text": False}


def test_ask_user_is_elicited_and_the_answer_returned(cli_env: dict[str, str], workspace: Path) -> None:
    reply = types.ElicitResult(action="accept", content={"answer": "postgres"})
    asked, result = anyio.run(ask_over_mcp, cli_env, workspace, QUESTION, reply)
    assert len(asked) == 1 and "Which database?" in asked[0].message
    assert asked[0].requested_schema["properties"]["answer"]["enum"] == ["sqlite", "postgres"]
    assert not result.is_error and text(result) == "The user chose option 2: postgres"


def test_ask_user_declined_or_not_elicitable(cli_env: dict[str, str], workspace: Path) -> None:
    _, declined = anyio.run(ask_over_mcp, cli_env, workspace, QUESTION, types.ElicitResult(action="decline"))
    assert text(declined).startswith("The user dismissed the question")
    _asked, nobody = anyio.run(ask_over_mcp, cli_env, workspace, QUESTION, None)
    assert nobody.is_error and "Nobody can answer" in text(nobody) and "elicitation" in text(nobody)


def test_a_background_process_lives_across_calls_and_ends_with_the_server(cli_env: dict[str, str],
                                                                          workspace: Path) -> None:
    import time
    import uuid

    import psutil

    tag = uuid.uuid4().hex[:8]
    start = ("run_command", {"command": f"echo {tag}-pid=$$; exec sleep 600", "background": True})
    # Unconfined: in the sandbox $$ is the pid inside its own namespace, not one this test can look up.
    env = {**cli_env, "SWEBASH_AI_EXEC_SANDBOX": "none"}
    _, results, asked = run(env, workspace, [start, ("read_process", {"id": "p1", "wait_seconds": 1})], "yes")
    assert len(asked) == 1 and "(background)" in asked[0]  # asked like a foreground command, and said so
    started, read = (text(r) for r in results)
    assert started.startswith("process id: p1") and "process p1: running" in read  # the second call found it
    pid = int((started + read).split(f"{tag}-pid=")[1].split()[0])

    def alive() -> bool:
        try:
            return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    deadline = time.monotonic() + 30
    while alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive()  # the client closed the server: its background process went with it
