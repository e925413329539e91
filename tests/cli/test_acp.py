"""``swebash-ai acp`` driven as a subprocess by the protocol SDK's own client side, against the loopback fake
model server: a streamed answer, tool calls with their kinds and diffs, a permission granted and one refused,
a question, cancel mid-tool, load, modes, the custom commands, and the end of the connection."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from acp import schema, spawn_agent_process, text_block

from swebash_ai.testing.fake_server import FakeLLMServer, Reply

pytestmark = pytest.mark.timeout(90)


class Editor:
    """The client side: records every update and answers permission requests with ``choose``."""

    def __init__(self, choose: Callable[[list[schema.PermissionOption], Any], str | None] | None = None) -> None:
        self.updates: list[tuple[str, Any]] = []
        self.asked: list[tuple[Any, list[schema.PermissionOption]]] = []
        self.choose = choose or (lambda options, call: None)
        self.asked_event = asyncio.Event()

    async def request_permission(self, session_id: str, tool_call: Any, options: list[schema.PermissionOption],
                                 **_: Any) -> schema.RequestPermissionResponse:
        self.asked.append((tool_call, options))
        self.asked_event.set()
        chosen = self.choose(options, tool_call)
        if chosen is None:
            return schema.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))
        return schema.RequestPermissionResponse(outcome=schema.AllowedOutcome(outcome="selected", option_id=chosen))

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append((session_id, update))

    def of(self, kind: str) -> list[Any]:
        return [u for _, u in self.updates if u.session_update == kind]

    def answer(self) -> str:
        return "".join(u.content.text for u in self.of("agent_message_chunk"))

    def on_connect(self, conn: Any) -> None:
        pass


Script = Callable[[Any, Any], Awaitable[Any]]
# When the script ends the SDK closes the agent's stdin and gives it 2 s to exit before SIGTERM; a loaded
# machine needs longer (it stops processes, saves and tears Python down): the exit code must be the agent's own.
SHUTDOWN = {"shutdown_timeout": 60.0}


def drive(env: dict[str, str], cwd: Path, editor: Editor, script: Script) -> Any:
    async def main() -> Any:
        async with spawn_agent_process(editor, sys.executable, "-m", "swebash_ai", "acp", env=env, cwd=str(cwd),
                                       transport_kwargs=SHUTDOWN) as (conn, process):
            init = await conn.initialize(protocol_version=1)
            result = await script(conn, init)
        return result, process.returncode

    return asyncio.run(main())


async def new(conn: Any, cwd: Path) -> str:
    session = await conn.new_session(cwd=str(cwd), mcp_servers=[])
    return str(session.session_id)


def test_initialize_advertises_what_is_supported(cli_env: dict[str, str], workspace: Path) -> None:
    async def script(conn: Any, init: Any) -> Any:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        return init, session

    (init, session), _ = drive(cli_env, workspace, Editor(), script)
    caps = init.agent_capabilities
    assert init.protocol_version == 1 and init.auth_methods == []
    assert caps.load_session and caps.prompt_capabilities.embedded_context and caps.prompt_capabilities.image
    assert init.agent_info.name == "swebash-ai"
    modes = session.modes
    assert modes.current_mode_id == "ask"
    from swebash_ai.agent.decide import MODES

    assert tuple(m.id for m in modes.available_modes) == MODES and {"ask", "accept-edits", "plan"} <= set(MODES)


def test_a_streamed_answer_ends_the_turn(llm_env: FakeLLMServer, cli_env: dict[str, str], workspace: Path) -> None:
    llm_env.enqueue(Reply.text("Hello from the model, in pieces.", chunk_size=5))
    editor = Editor()

    async def script(conn: Any, init: Any) -> Any:
        sid = await new(conn, workspace)
        return await conn.prompt(session_id=sid, prompt=[text_block("hi")])

    response, _ = drive(cli_env, workspace, editor, script)
    assert response.stop_reason == "end_turn"
    chunks = editor.of("agent_message_chunk")
    assert len(chunks) > 3 and editor.answer() == "Hello from the model, in pieces."


def test_a_read_is_a_tool_call_with_its_kind_location_and_result(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                                 workspace: Path) -> None:
    (workspace / "notes.txt").write_text("the secret of the notes\n")
    llm_env.enqueue(Reply.tool_calls([("read_file", {"path": "notes.txt"})]), Reply.text("Read it."))
    editor = Editor()

    async def script(conn: Any, init: Any) -> Any:
        return await conn.prompt(session_id=await new(conn, workspace), prompt=[text_block("read")])

    response, _ = drive(cli_env, workspace, editor, script)
    assert response.stop_reason == "end_turn" and editor.asked == []
    (start,) = editor.of("tool_call")
    assert start.kind == "read" and start.status == "pending" and "notes.txt" in start.title
    assert start.locations[0].path == str(workspace / "notes.txt")
    final = editor.of("tool_call_update")[-1]
    assert final.tool_call_id == start.tool_call_id and final.status == "completed"
    assert "the secret of the notes" in final.content[0].content.text


@pytest.mark.parametrize(("option", "made"), [("allow_once", True), (None, False), ("reject", False)])
def test_a_write_asks_with_its_diff_and_the_answer_decides(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                           workspace: Path, option: str | None, made: bool) -> None:
    llm_env.enqueue(Reply.tool_calls([("write_file", {"path": "out.txt", "content": "new text\n"})]),
                    Reply.text("Done."))
    editor = Editor(lambda options, call: option)

    async def script(conn: Any, init: Any) -> Any:
        return await conn.prompt(session_id=await new(conn, workspace), prompt=[text_block("write")])

    response, _ = drive(cli_env, workspace, editor, script)
    assert response.stop_reason == "end_turn"
    assert (workspace / "out.txt").exists() is made
    ((call, options),) = editor.asked
    assert [o.option_id for o in options][:2] == ["allow_once", "allow_session"] and options[-1].kind == "reject_once"
    diff = call.content[0]
    assert diff.type == "diff" and diff.path == str(workspace / "out.txt") and diff.new_text == "new text\n"
    assert "why:" in call.content[1].content.text and str(workspace) in call.content[1].content.text
    (start,) = editor.of("tool_call")
    assert start.kind == "edit" and start.content[0].type == "diff"
    assert editor.of("tool_call")[0].tool_call_id == call.tool_call_id  # announced before it was asked about
    statuses = [u.status for u in editor.of("tool_call_update")]
    assert statuses == (["in_progress", "completed"] if made else ["failed"])
    final = editor.of("tool_call_update")[-1]
    if made:  # the diff stays with the finished call, beside the result
        assert final.content[0].type == "diff" and "out.txt" in final.content[1].content.text
    else:
        assert "denied" in final.content[0].content.text.lower()


def test_always_allow_here_saves_a_rule(llm_env: FakeLLMServer, cli_env: dict[str, str], workspace: Path) -> None:
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "touch made.txt"})]), Reply.text("Done."))
    editor = Editor(lambda options, call: "allow_always" if any(o.option_id == "allow_always" for o in options)
                    else None)

    async def script(conn: Any, init: Any) -> Any:
        return await conn.prompt(session_id=await new(conn, workspace), prompt=[text_block("touch")])

    drive(cli_env, workspace, editor, script)
    assert (workspace / "made.txt").exists()
    config = (Path(cli_env["SWEBASH_AI_HOME"]) / "config.toml").read_text()
    assert "[[rules]]" in config and "touch" in config
    assert "Saved:" in editor.answer()


def test_a_client_that_cannot_answer_gets_the_non_interactive_refusal(
    llm_env: FakeLLMServer, cli_env: dict[str, str], workspace: Path
) -> None:
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "touch made.txt"})]), Reply.text("Done."))

    class Mute(Editor):
        async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
            from acp import RequestError

            raise RequestError.method_not_found("session/request_permission")

    editor = Mute()

    async def script(conn: Any, init: Any) -> Any:
        return await conn.prompt(session_id=await new(conn, workspace), prompt=[text_block("touch")])

    drive(cli_env, workspace, editor, script)
    assert not (workspace / "made.txt").exists()
    final = editor.of("tool_call_update")[-1]
    assert final.status == "failed" and "did not answer the permission request" in final.content[0].content.text


def test_ask_user_offers_its_choices(llm_env: FakeLLMServer, cli_env: dict[str, str], workspace: Path) -> None:
    llm_env.enqueue(Reply.tool_calls([("ask_user", {"question": "Which one?", "options": ["red", "blue"]})]),
                    Reply.text("Blue it is."))
    editor = Editor(lambda options, call: "2")

    async def script(conn: Any, init: Any) -> Any:
        return await conn.prompt(session_id=await new(conn, workspace), prompt=[text_block("choose")])

    drive(cli_env, workspace, editor, script)
    ((call, options),) = editor.asked
    assert [o.name for o in options] == ["red", "blue", "No answer"] and "Which one?" in call.title
    final = editor.of("tool_call_update")[-1]
    assert "The user chose option 2: blue" in final.content[0].content.text
    sent = llm_env.requests[-1]["body"]["messages"]
    assert any("option 2: blue" in str(m.get("content")) for m in sent)


def test_plan_updates_and_modes(llm_env: FakeLLMServer, cli_env: dict[str, str], workspace: Path) -> None:
    steps = [{"step": "Read", "status": "completed"}, {"step": "Fix", "status": "in_progress"}]
    llm_env.enqueue(Reply.tool_calls([("update_plan", {"plan": steps})]),
                    Reply.tool_calls([("write_file", {"path": "x.txt", "content": "x"})]), Reply.text("Planned."))
    editor = Editor(lambda options, call: "allow_once")

    async def script(conn: Any, init: Any) -> Any:
        sid = await new(conn, workspace)
        await conn.set_session_mode(session_id=sid, mode_id="plan")
        return await conn.prompt(session_id=sid, prompt=[text_block("plan it")])

    drive(cli_env, workspace, editor, script)
    (plan,) = editor.of("plan")
    assert [(e.content, e.status) for e in plan.entries] == [("Read", "completed"), ("Fix", "in_progress")]
    assert [u.current_mode_id for u in editor.of("current_mode_update")] == ["plan"]
    assert not (workspace / "x.txt").exists() and editor.asked == []  # plan mode refuses the write outright
    assert "plan mode" in editor.of("tool_call_update")[-1].content[0].content.text


def test_custom_commands_are_offered_and_expanded(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                  workspace: Path) -> None:
    commands = workspace / ".swebash-ai" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("---\ndescription: Review a file\n---\nReview $ARGUMENTS carefully.\n")
    llm_env.enqueue(Reply.text("Reviewed."))
    editor = Editor()

    async def script(conn: Any, init: Any) -> Any:
        sid = await new(conn, workspace)
        for _ in range(50):
            if editor.of("available_commands_update"):
                break
            await asyncio.sleep(0.05)
        return await conn.prompt(session_id=sid, prompt=[text_block("/review main.py")])

    drive(cli_env, workspace, editor, script)
    (offer,) = editor.of("available_commands_update")
    assert [(c.name, c.description) for c in offer.available_commands] == [("review", "Review a file")]
    sent = llm_env.requests[-1]["body"]["messages"]
    assert sent[-1]["content"].startswith("Review main.py carefully.")


def test_cancel_mid_tool_stops_the_command_and_closes_the_call(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                               workspace: Path) -> None:
    marker = workspace / "started"
    # the command would outlast the test's timeout: the answer comes back only if the cancel stops it
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": f"touch {marker} && sleep 3630.5 && touch late"})]),
                    Reply.text("never"))
    editor = Editor(lambda options, call: "allow_once")

    async def script(conn: Any, init: Any) -> Any:
        sid = await new(conn, workspace)
        turn = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("run")]))
        for _ in range(200):
            if marker.exists():
                break
            await asyncio.sleep(0.05)
        await conn.cancel(session_id=sid)
        return await turn

    response, _ = drive(cli_env, workspace, editor, script)
    assert marker.exists() and response.stop_reason == "cancelled"
    (start,) = editor.of("tool_call")
    final = [u for u in editor.of("tool_call_update") if u.tool_call_id == start.tool_call_id][-1]
    assert final.status == "failed"
    import psutil

    assert [p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == ["sleep", "3630.5"]] == []
    assert not (workspace / "late").exists()


def test_load_replays_a_saved_session(llm_env: FakeLLMServer, cli_env: dict[str, str], workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    llm_env.enqueue(Reply.tool_calls([("read_file", {"path": "a.txt"})]), Reply.text("It says alpha."),
                    Reply.text("Still alpha."))

    async def first(conn: Any, init: Any) -> Any:
        sid = await new(conn, workspace)
        await conn.prompt(session_id=sid, prompt=[text_block("what is in a.txt?")])
        return sid

    sid, code = drive(cli_env, workspace, Editor(), first)
    assert code is not None
    editor = Editor()

    async def second(conn: Any, init: Any) -> Any:
        await conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
        replayed = list(editor.updates)
        response = await conn.prompt(session_id=sid, prompt=[text_block("and now?")])
        return replayed, response

    (replayed, response), _ = drive(cli_env, workspace, editor, second)
    kinds = [u.session_update for _, u in replayed]
    assert kinds[:4] == ["user_message_chunk", "tool_call", "agent_message_chunk", "available_commands_update"] \
        or kinds[:3] == ["user_message_chunk", "tool_call", "agent_message_chunk"]
    assert replayed[0][1].content.text == "what is in a.txt?"
    call = replayed[1][1]
    assert call.kind == "read" and call.status == "completed" and "alpha" in call.content[0].content.text
    assert response.stop_reason == "end_turn"
    sent = llm_env.requests[-1]["body"]["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"][-2:] == ["what is in a.txt?", "and now?"]


def test_load_replays_results_the_session_set_aside(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                    workspace: Path) -> None:
    """A long session keeps its old tool results on disk (agent/result_store.py): the editor's replay and the
    next request still carry them whole."""
    (workspace / "a.txt").write_text("alpha beta gamma\n" * 60)
    llm_env.enqueue(Reply.tool_calls([("read_file", {"path": "a.txt"})]), Reply.text("It says alpha."),
                    Reply.text("Nothing else."), Reply.text("Still alpha."))

    async def first(conn: Any, init: Any) -> Any:
        sid = await new(conn, workspace)
        await conn.prompt(session_id=sid, prompt=[text_block("what is in a.txt?")])
        await conn.prompt(session_id=sid, prompt=[text_block("anything else?")])
        return sid

    sid, _ = drive(cli_env, workspace, Editor(), first)
    editor = Editor()

    async def second(conn: Any, init: Any) -> Any:
        await conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
        replayed = list(editor.updates)
        await conn.prompt(session_id=sid, prompt=[text_block("and now?")])
        return replayed

    replayed, _ = drive(cli_env, workspace, editor, second)
    (call,) = [u for _, u in replayed if u.session_update == "tool_call"]
    assert call.status == "completed" and call.content[0].content.text.count("alpha beta gamma") == 60
    sent = llm_env.requests[-1]["body"]["messages"]
    (result,) = [m["content"] for m in sent if m["role"] == "tool"]
    assert result.count("alpha beta gamma") == 60


def test_closing_stdin_stops_background_processes_and_saves(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                            workspace: Path) -> None:
    import psutil

    def sleepers() -> list[Any]:
        return [p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == ["sleep", "3661.25"]]

    # it would outlast the test's timeout: only a stop ends it
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "sleep 3661.25", "background": True})]),
                    Reply.text("Started."))
    editor = Editor(lambda options, call: "allow_once")

    async def script(conn: Any, init: Any) -> Any:
        sid = await new(conn, workspace)
        await conn.prompt(session_id=sid, prompt=[text_block("start it")])
        running = len(sleepers())
        return sid, running

    (sid, running), code = drive(cli_env, workspace, editor, script)
    assert code == 0
    assert running == 1 and sleepers() == []
    saved = Path(cli_env["SWEBASH_AI_HOME"]) / "sessions" / f"{sid}.jsonl"
    assert saved.exists() and "start it" in saved.read_text()
    final = editor.of("tool_call_update")[-1]
    assert final.status == "completed"


def test_requests_for_unknown_sessions_and_bad_modes_are_errors(cli_env: dict[str, str], workspace: Path) -> None:
    from acp import RequestError

    async def script(conn: Any, init: Any) -> Any:
        errors = []
        for call in (lambda: conn.prompt(session_id="nope", prompt=[text_block("x")]),
                     lambda: conn.set_session_mode(session_id="nope", mode_id="ask"),
                     lambda: conn.load_session(cwd=str(workspace), session_id="missing", mcp_servers=[])):
            try:
                await call()
            except RequestError as exc:
                errors.append(exc.code)
        sid = await new(conn, workspace)
        try:
            await conn.set_session_mode(session_id=sid, mode_id="yolo")
        except RequestError as exc:
            errors.append(exc.code)
        return errors

    errors, _ = drive(cli_env, workspace, Editor(), script)
    assert errors == [-32602, -32602, -32602, -32602]


def test_without_a_provider_it_asks_for_setup_then_authenticates(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                                  workspace: Path) -> None:
    from acp import RequestError

    env = {k: v for k, v in cli_env.items() if not k.startswith("SWEBASH_AI_") or k == "SWEBASH_AI_HOME"}
    config = Path(env["SWEBASH_AI_HOME"]) / "config.toml"

    async def script(conn: Any, init: Any) -> Any:
        errors = []
        for call in (lambda: conn.new_session(cwd=str(workspace), mcp_servers=[]),
                     lambda: conn.authenticate(method_id=init.auth_methods[0].id)):
            try:
                await call()
            except RequestError as exc:
                errors.append(exc)
        # what `swebash-ai setup` does meanwhile, in a terminal
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(f'model = "openai/fake-model"\napi_base = "{llm_env.base_url}"\napi_key = "sk-test-0"\n')
        await conn.authenticate(method_id=init.auth_methods[0].id)
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        return init, errors, session

    (init, errors, session), _ = drive(env, workspace, Editor(), script)
    (method,) = init.auth_methods
    assert "swebash-ai setup" in method.description
    assert [e.code for e in errors] == [-32000, -32000] and "swebash-ai setup" in str(errors[0].data)
    assert session.session_id


def test_stdout_carries_only_protocol_messages(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                               workspace: Path) -> None:
    import subprocess

    llm_env.enqueue(Reply.text("ok"))
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(workspace), "mcpServers": []}},
    ]
    proc = subprocess.run([sys.executable, "-m", "swebash_ai", "-v", "acp"],
                          input="".join(json.dumps(m) + "\n" for m in lines), capture_output=True, text=True,
                          env=cli_env, cwd=workspace, timeout=60)
    out = [json.loads(line) for line in proc.stdout.splitlines()]
    assert proc.returncode == 0 and {m.get("id") for m in out if "id" in m} == {1, 2}
    assert all(m["jsonrpc"] == "2.0" for m in out)


def test_the_editors_mcp_servers_join_and_their_tools_ask(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                           workspace: Path) -> None:
    demo = Path(__file__).resolve().parents[1] / "mcptools" / "demo_server.py"
    llm_env.enqueue(Reply.tool_calls([("mcp__editor__echo", {"text": "hi", "times": 2})]), Reply.text("It said."))
    editor = Editor(lambda options, call: "allow_once")

    async def script(conn: Any, init: Any) -> Any:
        server = schema.McpServerStdio(name="editor", command=sys.executable, args=[str(demo)], env=[])
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[server])
        for _ in range(600):  # started in the background: its tools join once it is ready, and it says so
            if "MCP: 1 server ready" in editor.answer():
                break
            await asyncio.sleep(0.1)
        return await conn.prompt(session_id=session.session_id, prompt=[text_block("echo")])

    response, _ = drive(cli_env, workspace, editor, script)
    assert response.stop_reason == "end_turn"
    assert len(editor.asked) == 1  # a tool of the editor's server asks, as a configured server's does
    final = editor.of("tool_call_update")[-1]
    assert final.status == "completed" and "hi hi" in final.content[0].content.text
    offered = [t["function"]["name"] for t in llm_env.requests[0]["body"]["tools"]]
    assert "mcp__editor__echo" in offered


def test_cancel_while_a_permission_request_waits(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                 workspace: Path) -> None:
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "touch made.txt"})]), Reply.text("never"))
    release = asyncio.Event()

    class Slow(Editor):
        async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
            self.asked_event.set()
            await release.wait()
            return schema.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))

    editor = Slow()

    async def script(conn: Any, init: Any) -> Any:
        sid = await new(conn, workspace)
        turn = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("touch")]))
        await asyncio.wait_for(editor.asked_event.wait(), 30)
        await conn.cancel(session_id=sid)
        response = await asyncio.wait_for(turn, 30)
        release.set()
        return response

    response, _ = drive(cli_env, workspace, editor, script)
    assert response.stop_reason == "cancelled" and not (workspace / "made.txt").exists()
    (start,) = editor.of("tool_call")
    assert [u.status for u in editor.of("tool_call_update") if u.tool_call_id == start.tool_call_id][-1] == "failed"


def test_a_provider_error_is_a_json_rpc_error_and_the_session_goes_on(
    llm_env: FakeLLMServer, cli_env: dict[str, str], workspace: Path
) -> None:
    from acp import RequestError

    llm_env.enqueue(Reply.error(400, "the model refuses this request"), Reply.text("fine now"))
    editor = Editor()

    async def script(conn: Any, init: Any) -> Any:
        sid = await new(conn, workspace)
        try:
            await conn.prompt(session_id=sid, prompt=[text_block("one")])
        except RequestError as exc:
            error = exc
        response = await conn.prompt(session_id=sid, prompt=[text_block("two")])
        return error, response

    (error, response), _ = drive(cli_env, workspace, editor, script)
    assert error.code == -32603 and "the model refuses this request" in str(error.data)
    assert response.stop_reason == "end_turn" and editor.answer().endswith("fine now")


def test_reasoning_is_a_thought_in_the_editor_and_not_on_stdout_of_c(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                                      workspace: Path, run_cli: Any) -> None:
    llm_env.enqueue(Reply.text("Four.", reasoning="two and two"), Reply.text("Four.", reasoning="two and two"))
    editor = Editor()

    async def script(conn: Any, init: Any) -> Any:
        return await conn.prompt(session_id=await new(conn, workspace), prompt=[text_block("2+2?")])

    drive(cli_env, workspace, editor, script)
    assert "".join(u.content.text for u in editor.of("agent_thought_chunk")) == "two and two"
    assert editor.answer() == "Four."
    res = run_cli("-c", "2+2?")
    assert res.returncode == 0 and res.stdout == "Four.\n"


def test_the_loops_limit_is_max_turn_requests(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                              workspace: Path) -> None:
    (workspace / "a.txt").write_text("a\n")
    llm_env.enqueue(Reply.tool_calls([("read_file", {"path": "a.txt"})]), Reply.text("Stopped at the limit."))

    async def script(conn: Any, init: Any) -> Any:
        return await conn.prompt(session_id=await new(conn, workspace), prompt=[text_block("go")])

    response, _ = drive({**cli_env, "SWEBASH_AI_TOOLS_MAX_ITER": "1"}, workspace, Editor(), script)
    assert response.stop_reason == "max_turn_requests"


def test_loading_an_open_session_again_keeps_its_id_on_disk(llm_env: FakeLLMServer, cli_env: dict[str, str],
                                                             workspace: Path) -> None:
    """session/load of a session open on this connection: the old copy was saved after the new one had read the
    file, so the new one's next save found the file moved on and forked to another id: the editor's id then
    named a session without the turns that followed."""
    llm_env.enqueue(Reply.text("first answer"), Reply.text("second answer"))

    async def script(conn: Any, init: Any) -> Any:
        sid = await new(conn, workspace)
        await conn.prompt(session_id=sid, prompt=[text_block("one")])
        await conn.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
        await conn.prompt(session_id=sid, prompt=[text_block("two")])
        return sid

    sid, _ = drive(cli_env, workspace, Editor(), script)
    saved = [p for p in Path(cli_env["SWEBASH_AI_HOME"]).rglob("*.jsonl") if "second answer" in p.read_text()]
    assert [p.stem for p in saved] == [sid]
