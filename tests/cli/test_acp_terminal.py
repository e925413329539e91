"""The editor's terminals over the real protocol: a command the person let out of the sandbox runs in a
terminal of the client (``terminal/create`` ... ``terminal/release``), shown in its tool call; its output comes
back bounded, cleaned and scanned; a timeout and a cancel kill it; a client that fails gets a clear error and
nothing hangs; what runs confined or unasked stays with swebash-ai."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, schema, spawn_agent_process, text_block

from swebash_ai.testing.fake_server import FakeLLMServer, Reply

from .test_acp import Editor

pytestmark = pytest.mark.timeout(120)
TOKEN = "ghp_0123456789abcdefghijABCDEFGHIJ012345"


def outside(options: list[schema.PermissionOption], call: Any) -> str:
    """The person's "outside the sandbox" (or, where no sandbox works, the plain yes that runs it unconfined)."""
    offered = {o.option_id for o in options}
    return "allow_outside" if "allow_outside" in offered else "allow_once"


class TerminalEditor(Editor):
    """A client that runs terminals itself (as an editor does, with the environment it started the agent with),
    and records every terminal request."""

    def __init__(self, env: dict[str, str], *, hang: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.env = env
        self.hang = hang
        self.calls: list[tuple[str, Any]] = []
        self.procs: dict[str, asyncio.subprocess.Process] = {}
        self.output: dict[str, bytearray] = {}
        self.started = asyncio.Event()
        self.hold: asyncio.Event | None = None
        """Set: the answer to ``terminal/create`` waits for it (the terminal runs meanwhile)."""
        self.pumps: list[asyncio.Task[None]] = []

    async def create_terminal(self, command: str, session_id: str, args: list[str] | None = None,
                              env: list[schema.EnvVariable] | None = None, cwd: str | None = None,
                              output_byte_limit: int | None = None, **_: Any) -> schema.CreateTerminalResponse:
        terminal = f"term-{len(self.procs) + 1}"
        self.calls.append(("create", {"command": command, "args": args, "env": {e.name: e.value for e in env or []},
                                      "cwd": cwd, "limit": output_byte_limit}))
        proc = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, env={**self.env, **{e.name: e.value for e in env or []}},
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        self.procs[terminal], self.output[terminal] = proc, bytearray()
        self.pumps.append(asyncio.ensure_future(self._pump(terminal, proc)))
        self.started.set()
        if self.hold is not None:
            await self.hold.wait()
        return schema.CreateTerminalResponse(terminal_id=terminal)

    async def _pump(self, terminal: str, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        while data := await proc.stdout.read(4096):
            self.output[terminal] += data

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str,
                                     **_: Any) -> schema.WaitForTerminalExitResponse:
        self.calls.append(("wait", terminal_id))
        if self.hang:  # a client that never says it exited
            await asyncio.Event().wait()
        code = await self.procs[terminal_id].wait()
        return schema.WaitForTerminalExitResponse(exit_code=code if code >= 0 else None,
                                                  signal=None if code >= 0 else "SIGKILL")

    async def terminal_output(self, session_id: str, terminal_id: str, **_: Any) -> schema.TerminalOutputResponse:
        self.calls.append(("output", terminal_id))
        await asyncio.sleep(0.1)  # the last bytes reach the pump
        return schema.TerminalOutputResponse(output=self.output[terminal_id].decode(), truncated=False)

    async def kill_terminal(self, session_id: str, terminal_id: str, **_: Any) -> schema.KillTerminalResponse:
        self.calls.append(("kill", terminal_id))
        proc = self.procs[terminal_id]
        if proc.returncode is None:
            proc.kill()
        return schema.KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **_: Any) -> schema.ReleaseTerminalResponse:
        self.calls.append(("release", terminal_id))
        proc = self.procs[terminal_id]
        if proc.returncode is None:
            proc.kill()
        return schema.ReleaseTerminalResponse()

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.calls]


def drive_terminal(env: dict[str, str], cwd: Path, editor: Editor, script: Any, *, terminal: bool = True) -> Any:
    async def main() -> Any:
        async with spawn_agent_process(editor, sys.executable, "-m", "swebash_ai", "acp", env=env,
                                       cwd=str(cwd)) as (conn, _process):
            await conn.initialize(protocol_version=1, client_capabilities=schema.ClientCapabilities(terminal=terminal))
            return await script(conn)

    return asyncio.run(main())


async def one_turn(conn: Any, cwd: Path) -> Any:
    session = await conn.new_session(cwd=str(cwd), mcp_servers=[])
    return await conn.prompt(session_id=session.session_id, prompt=[text_block("run it")])


def tool_results(llm: FakeLLMServer) -> list[str]:
    return [m["content"] for m in llm.requests[-1]["body"]["messages"] if m["role"] == "tool"]


def test_a_command_let_out_of_the_sandbox_runs_in_the_editors_terminal(
        llm_env: FakeLLMServer, cli_env: dict[str, str], workspace: Path) -> None:
    command = (f"echo out; echo err >&2; echo token {TOKEN}; printf '\\033[31mred\\033[0m\\n'; "
               "echo key=${SWEBASH_AI_API_KEY:-unset} pager=$PAGER; exit 3")
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": command, "sandbox": False})]), Reply.text("Ran."))
    editor = TerminalEditor(cli_env, choose=outside)

    response = drive_terminal(cli_env, workspace, editor, lambda conn: one_turn(conn, workspace))
    assert response.stop_reason == "end_turn"
    assert editor.kinds() == ["create", "wait", "output", "release"]
    created = editor.calls[0][1]
    # the same bash line as the runner's, in the workspace, without the variables the runner drops
    assert created["args"][-4:] == ["--noprofile", "--norc", "-c", command] and created["cwd"] == str(workspace)
    assert created["command"] == "env" and "SWEBASH_AI_API_KEY" in created["args"]
    assert created["env"]["PAGER"] == "cat" and created["limit"] > 0
    # the terminal is shown in the call while it runs, and stays in its final content
    (start,) = editor.of("tool_call")
    updates = [u for u in editor.of("tool_call_update") if u.tool_call_id == start.tool_call_id]
    live = [u for u in updates if u.content and any(c.type == "terminal" for c in u.content)]
    assert live[0].status == "in_progress" and live[0].content[-1].terminal_id == "term-1"
    final = updates[-1]
    assert final.status == "failed" and final.content[0].type == "terminal"
    assert final.raw_output["exit_code"] == 3
    # the model reads the output as the runner gives it: cleaned, the secret masked, the scrubbed variable gone
    (result,) = tool_results(llm_env)
    assert "exit code 3" in result and "editor's terminal" in result
    assert "out" in result and "err" in result and "key=unset pager=cat" in result
    assert TOKEN not in result and "[masked:" in result
    assert "\x1b" not in result and "red" in result


def test_what_runs_unasked_stays_with_swebash_ai(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                 workspace: Path) -> None:
    (workspace / "a.txt").write_text("x\n")
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "ls"})]), Reply.text("Listed."))
    editor = TerminalEditor(cli_env, choose=outside)

    drive_terminal(cli_env, workspace, editor, lambda conn: one_turn(conn, workspace))
    assert editor.asked == [] and editor.calls == []
    assert "a.txt" in tool_results(llm_env)[0]


def test_without_the_capability_the_command_runs_in_swebash_ai(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                               workspace: Path) -> None:
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "echo here", "sandbox": False})]),
                    Reply.text("Ran."))
    editor = TerminalEditor(cli_env, choose=outside)

    drive_terminal(cli_env, workspace, editor, lambda conn: one_turn(conn, workspace), terminal=False)
    assert editor.calls == [] and "exit code 0" in tool_results(llm_env)[0]


def test_a_timeout_kills_the_terminal_of_a_client_that_never_says_it_exited(
        llm_env: FakeLLMServer, cli_env: dict[str, str], workspace: Path) -> None:
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "echo begun; sleep 60", "sandbox": False,
                                                        "timeout": 1})]), Reply.text("Timed out."))
    editor = TerminalEditor(cli_env, hang=True, choose=outside)

    response = drive_terminal(cli_env, workspace, editor, lambda conn: one_turn(conn, workspace))
    assert response.stop_reason == "end_turn"
    assert editor.kinds() == ["create", "wait", "kill", "output", "release"]
    (result,) = tool_results(llm_env)
    assert "timed out after 1 s" in result and "begun" in result
    assert all(p.returncode is not None for p in editor.procs.values())


def test_cancel_kills_and_releases_the_terminal(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                workspace: Path) -> None:
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "sleep 60", "sandbox": False})]),
                    Reply.text("never"))
    editor = TerminalEditor(cli_env, choose=outside)

    async def script(conn: Any) -> Any:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text_block("run")]))
        await asyncio.wait_for(editor.started.wait(), 30)
        await conn.cancel(session_id=session.session_id)
        return await asyncio.wait_for(turn, 30)

    response = drive_terminal(cli_env, workspace, editor, script)
    assert response.stop_reason == "cancelled"
    assert editor.kinds()[0] == "create" and editor.kinds()[-2:] == ["kill", "release"]
    assert all(p.returncode is not None for p in editor.procs.values())
    (start,) = editor.of("tool_call")
    final = [u for u in editor.of("tool_call_update") if u.tool_call_id == start.tool_call_id][-1]
    assert final.status == "failed" and final.content[0].type == "terminal"


def test_a_cancel_while_the_terminal_is_being_created_still_kills_it(
        llm_env: FakeLLMServer, cli_env: dict[str, str], workspace: Path) -> None:
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "sleep 60", "sandbox": False})]),
                    Reply.text("never"))
    editor = TerminalEditor(cli_env, choose=outside)

    async def script(conn: Any) -> Any:
        editor.hold = asyncio.Event()
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        turn = asyncio.ensure_future(conn.prompt(session_id=session.session_id, prompt=[text_block("run")]))
        await asyncio.wait_for(editor.started.wait(), 30)
        await conn.cancel(session_id=session.session_id)
        response = await asyncio.wait_for(turn, 30)
        editor.hold.set()  # the terminal exists only now: the agent must still stop it
        for _ in range(300):
            if editor.kinds()[-1:] == ["release"]:
                break
            await asyncio.sleep(0.05)
        return response

    response = drive_terminal(cli_env, workspace, editor, script)
    assert response.stop_reason == "cancelled"
    assert editor.kinds() == ["create", "kill", "release"]
    assert all(p.returncode is not None for p in editor.procs.values())


def test_a_client_that_cannot_create_a_terminal_gets_a_clear_error(
        llm_env: FakeLLMServer, cli_env: dict[str, str], workspace: Path) -> None:
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "echo first", "sandbox": False})]),
                    Reply.tool_calls([("run_command", {"command": "echo second", "sandbox": False})]),
                    Reply.text("Done."))

    class Broken(TerminalEditor):
        async def create_terminal(self, *args: Any, **kwargs: Any) -> Any:
            self.calls.append(("create", None))
            raise RequestError.internal_error({"details": "terminals are off"})

    editor = Broken(cli_env, choose=outside)
    started = time.monotonic()
    response = drive_terminal(cli_env, workspace, editor, lambda conn: one_turn(conn, workspace))
    assert response.stop_reason == "end_turn" and time.monotonic() - started < 60
    first, second = tool_results(llm_env)
    assert "could not run the command in its terminal" in first and "terminals are off" in first
    assert editor.kinds() == ["create"] and "second" in second and "exit code 0" in second


def test_the_client_output_is_bounded(llm_env: FakeLLMServer, cli_env: dict[str, str], workspace: Path) -> None:
    env = {**cli_env, "SWEBASH_AI_EXEC_MAX_OUTPUT": "2000"}
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "true", "sandbox": False})]), Reply.text("ok"))

    class Flood(TerminalEditor):
        async def terminal_output(self, session_id: str, terminal_id: str, **_: Any) -> Any:
            return schema.TerminalOutputResponse(output="head " + "x" * 500_000 + " tail", truncated=False)

    editor = Flood(env, choose=outside)
    drive_terminal(env, workspace, editor, lambda conn: one_turn(conn, workspace))
    (result,) = tool_results(llm_env)
    assert len(result) < 4000 and "head" in result and "tail" in result and "bytes cut" in result
    assert os.environ.get("SWEBASH_AI_EXEC_MAX_OUTPUT") is None


def test_the_terminal_methods_on_the_wire(llm_env: FakeLLMServer, cli_env: dict[str, str], workspace: Path) -> None:
    """A raw JSON-RPC client: the requests as the specification spells them; an answer that does not parse (a
    terminal id that is a number) is an error result, and nothing hangs."""
    from .test_acp_raw import Wire, request

    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "echo wired", "sandbox": False})]),
                    Reply.text("Ran."),
                    Reply.tool_calls([("run_command", {"command": "echo local", "sandbox": False})]),
                    Reply.text("Ran again."))
    wire = Wire(cli_env, workspace)
    try:
        wire.send(request(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {"terminal": True}}))
        wire.until(1)
        wire.send(request(2, "session/new", {"cwd": str(workspace), "mcpServers": []}))
        sid = wire.until(2)[0]["result"]["sessionId"]

        def answer(message: dict[str, Any], result: Any) -> None:
            wire.send({"jsonrpc": "2.0", "id": message["id"], "result": result})

        def next_request() -> dict[str, Any]:
            while "id" not in (message := wire.next()) or "method" not in message:
                pass
            return message

        wire.send(request(3, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "run"}]}))
        asked = next_request()
        assert asked["method"] == "session/request_permission"
        chosen = outside([schema.PermissionOption.model_validate(o) for o in asked["params"]["options"]], None)
        answer(asked, {"outcome": {"outcome": "selected", "optionId": chosen}})
        create = next_request()
        assert create["method"] == "terminal/create" and create["params"]["sessionId"] == sid
        params = create["params"]
        assert params["cwd"] == str(workspace) and params["args"][-1] == "echo wired"
        assert params["outputByteLimit"] > 0 and {"name": "NO_COLOR", "value": "1"} in params["env"]
        answer(create, {"terminalId": "t-7"})
        seen: list[dict[str, Any]] = []
        while (wait := wire.next()).get("method") != "terminal/wait_for_exit":
            seen.append(wait)
        shown = [m["params"]["update"] for m in seen if m.get("method") == "session/update"]
        assert {"type": "terminal", "terminalId": "t-7"} in shown[-1]["content"]
        answer(wait, {"exitCode": 0})
        output = next_request()
        assert output["method"] == "terminal/output" and output["params"]["terminalId"] == "t-7"
        answer(output, {"output": "wired\n", "truncated": False, "exitStatus": {"exitCode": 0}})
        release = next_request()
        assert release["method"] == "terminal/release"
        answer(release, {})
        done, _ = wire.until(3)
        assert done["result"]["stopReason"] == "end_turn"
        assert "wired" in tool_results(llm_env)[0] and "exit code 0" in tool_results(llm_env)[0]

        wire.send(request(4, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "again"}]}))
        asked = next_request()
        answer(asked, {"outcome": {"outcome": "selected", "optionId": chosen}})
        create = next_request()
        answer(create, {"terminalId": 7})
        done, before = wire.until(4)
        assert done["result"]["stopReason"] == "end_turn"
        assert not [m for m in before if m.get("method", "").startswith("terminal/")]
        assert "could not run the command in its terminal" in tool_results(llm_env)[-1]
    finally:
        code, stderr = wire.close()
    assert code == 0 and "Traceback" not in stderr, stderr
