"""``swebash-ai -c``: through the real entry point, as a subprocess, against the loopback fake server."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

from swebash_ai.agent.conversation import Conversation
from swebash_ai.testing.fake_server import FakeLLMServer, Reply

from ._helpers import command, needs_exec


def _user_messages(server: FakeLLMServer, index: int = 0) -> list[str]:
    body = server.requests[index]["body"]
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


def _tool_messages(server: FakeLLMServer, index: int) -> list[str]:
    return [m["content"] for m in server.requests[index]["body"]["messages"] if m["role"] == "tool"]


def test_answer_on_stdout_and_nothing_else_then_resume(llm_env: FakeLLMServer, run_cli: Any) -> None:
    llm_env.enqueue(Reply.text("The answer is **42**.\nSecond line."), Reply.text("Because."))
    res = run_cli("-c", "what is the answer?")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "The answer is **42**.\nSecond line.\n"  # a pipe gets the raw text, unrendered
    assert res.stderr == ""
    assert _user_messages(llm_env) == ["what is the answer?"]
    # --resume without an id continues the latest saved session
    res = run_cli("--resume", "-c", "why?")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "Because.\n"
    assert _user_messages(llm_env, 1) == ["what is the answer?", "why?"]


def test_piped_stdin_is_sent_as_context(llm_env: FakeLLMServer, run_cli: Any) -> None:
    llm_env.enqueue(Reply.text("The disk is full."))
    res = run_cli("-c", "why does this fail?", input="ERROR: write failed: No space left on device\n")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "The disk is full.\n"
    (sent,) = _user_messages(llm_env)
    assert sent.startswith("why does this fail?\n")
    assert "```text\nERROR: write failed: No space left on device\n```" in sent
    assert "piped" in sent


def test_question_from_stdin_with_dash(llm_env: FakeLLMServer, run_cli: Any) -> None:
    llm_env.enqueue(Reply.text("4"))
    res = run_cli("-c", "-", input="what is 2+2?\n")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "4\n"
    assert _user_messages(llm_env) == ["what is 2+2?\n"]


@needs_exec
def test_json_events_parse_and_pair_up(llm_env: FakeLLMServer, run_cli: Any) -> None:
    llm_env.enqueue(
        Reply.tool_calls(
            [("run_command", {"command": "echo paired"}, "call_a"), ("no_such_tool", {}, "call_b")], text="Let me look."
        ),
        Reply.text("Done: paired.", usage=(10, 3)),
    )
    res = run_cli("-c", "echo something", "--json")
    assert res.returncode == 0, res.stderr
    events = [json.loads(line) for line in res.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert set(types) <= {"text", "tool_call", "approval", "tool_output", "tool_result", "usage", "notice", "budget",
                          "final"}
    calls = {e["id"]: e for e in events if e["type"] == "tool_call"}
    results = {e["id"]: e for e in events if e["type"] == "tool_result"}
    assert set(calls) == set(results) == {"call_a", "call_b"}
    assert results["call_a"]["ok"] and "paired" in results["call_a"]["content"]
    assert not results["call_b"]["ok"] and "Unknown tool" in results["call_b"]["content"]
    assert types.count("final") == 1 and types[-1] == "final"
    final = events[-1]
    assert final["text"] == "Done: paired." and final["reason"] == "answered" and final["exit_code"] == 0
    assert "".join(e["text"] for e in events if e["type"] == "text") == "Let me look.Done: paired."
    assert final["session_id"]


@needs_exec
def test_dangerous_command_without_terminal_is_denied(llm_env: FakeLLMServer, run_cli: Any, workspace: Path) -> None:
    canary = workspace / "canary.txt"
    canary.write_text("still here\n")
    llm_env.enqueue(
        Reply.tool_calls([("run_command", {"command": "rm canary.txt"})]),
        Reply.text("I could not delete it: it needs your approval."),
    )
    res = run_cli("-c", "delete canary.txt")
    assert res.returncode == 3, res.stderr
    assert canary.read_text() == "still here\n"  # it did not run
    assert res.stdout == "I could not delete it: it needs your approval.\n"
    assert "rm canary.txt" in res.stderr and "denied" in res.stderr
    # the call's line is cut to one line; the last line still tells the person how to allow it
    assert res.stderr.splitlines()[-1].startswith("swebash-ai: 1 call needed approval and there was no terminal")
    assert "run again with --yes" in res.stderr.splitlines()[-1]
    (told,) = _tool_messages(llm_env, 1)
    assert "--yes" in told  # the model is told why


@needs_exec
def test_yes_runs_what_needs_approval_but_not_a_catastrophe(
    llm_env: FakeLLMServer, run_cli: Any, workspace: Path
) -> None:
    canary = workspace / "canary.txt"
    canary.write_text("doomed\n")
    keep = workspace / "keep.txt"
    keep.write_text("keep\n")
    llm_env.enqueue(
        Reply.tool_calls(
            [
                ("run_command", {"command": "rm canary.txt"}, "c1"),
                ("run_command", {"command": f"rm -rf {workspace}"}, "c2"),
            ]
        ),
        Reply.text("Deleted."),
    )
    res = run_cli("-c", "delete canary.txt", "--yes")
    assert not canary.exists()  # --yes ran what needed approval
    assert keep.read_text() == "keep\n"  # but not "DANGER: rm deletes the whole workspace"
    assert res.stdout == "Deleted.\n"
    assert res.returncode == 3, res.stderr  # a call was denied
    assert "[--yes]" in res.stderr
    assert "run again with --yes" not in res.stderr  # --yes was given: it would not help
    assert res.stderr.splitlines()[-1] == ("swebash-ai: 1 call could be catastrophic and --yes never allows that; "
                                           "run swebash-ai in a terminal to be asked, or do it yourself.")
    told = _tool_messages(llm_env, 1)
    assert "--yes never covers that" in told[1]
    assert "DANGER: rm deletes the whole workspace" in told[1]


def test_bad_setting_exits_2_naming_the_variable(run_cli: Any) -> None:
    res = run_cli("-c", "hi", env={"SWEBASH_AI_EXEC_TIMEOUT": "900"})
    assert res.returncode == 2
    assert "SWEBASH_AI_EXEC_TIMEOUT" in res.stderr and "Traceback" not in res.stderr
    assert res.stdout == ""


def test_unknown_profile_exits_2(run_cli: Any) -> None:
    res = run_cli("--profile", "nope", "-c", "hi")
    assert res.returncode == 2
    assert "Unknown profile 'nope'" in res.stderr and "Traceback" not in res.stderr


def test_no_provider_exits_2_with_help(run_cli: Any) -> None:
    res = run_cli("-c", "hi", env={"SWEBASH_AI_MODEL": None, "SWEBASH_AI_API_BASE": None, "SWEBASH_AI_API_KEY": None})
    assert res.returncode == 2
    # the title says what is wrong and the message what to do, without saying it twice
    assert res.stderr.startswith("swebash-ai: No model provider configured: Run `swebash-ai setup`")
    assert "OPENAI_API_KEY" in res.stderr and res.stderr.lower().count("provider configured") == 1


def test_provider_down_exits_1_quickly(run_cli: Any) -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    started = time.monotonic()
    res = run_cli("-c", "hi", env={"SWEBASH_AI_API_BASE": f"http://127.0.0.1:{port}/v1"})
    assert res.returncode == 1, res.stderr
    assert "Provider unavailable" in res.stderr and "Traceback" not in res.stderr
    assert res.stdout == ""
    assert time.monotonic() - started < 20  # no retries, no long timeouts (the interpreter start dominates)


def test_ctrl_c_mid_answer_exits_130_and_saves_the_session(
    llm_env: FakeLLMServer, cli_env: dict[str, str], workspace: Path
) -> None:
    llm_env.enqueue(Reply.text("one two three four five six seven eight nine ten", chunk_size=4, delay=0.2))
    proc = subprocess.Popen(
        command("-c", "count slowly"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=workspace,
        env=cli_env,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not llm_env.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # a few deltas in
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert out.startswith("one")  # what arrived was shown
    sessions = list((Path(cli_env["SWEBASH_AI_HOME"]) / "sessions").glob("*.jsonl"))
    assert len(sessions) == 1
    conv = Conversation.load(sessions[0])
    assert conv.is_valid()
    assert conv.messages[0] == {"role": "user", "content": "count slowly", "typed": True}
    assert conv.messages[-1]["role"] == "assistant" and conv.messages[-1]["content"].startswith("one")


def test_tools_refused_falls_back_to_text_tool_calls(llm_env: FakeLLMServer, run_cli: Any) -> None:
    llm_env.enqueue(
        Reply.error(400, "registry.ollama.ai/library/fake-model does not support tools"), Reply.text("Plain answer.")
    )
    res = run_cli("-c", "hi")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "Plain answer.\n"
    assert "refused native tool calls" in res.stderr
    first, second = (r["body"] for r in llm_env.requests)
    assert first.get("tools") and not second.get("tools")
    assert '{"tool": "TOOL_NAME"' in second["messages"][0]["content"]
    assert [m["content"] for m in second["messages"] if m["role"] == "user"] == ["hi"]  # not sent twice


@needs_exec
def test_a_call_printed_as_json_goes_through_the_same_approval(
    llm_env: FakeLLMServer, run_cli: Any, workspace: Path
) -> None:
    canary = workspace / "canary.txt"
    canary.write_text("still here\n")
    printed = '```json\n{"name": "run_command", "arguments": {"command": "rm canary.txt"}}\n```'
    llm_env.enqueue(Reply.text(printed), Reply.text("It needs your approval."))
    res = run_cli("-c", "delete canary.txt")
    assert res.returncode == 3, res.stderr
    assert canary.exists()
    assert res.stdout == "It needs your approval.\n"  # the printed JSON is not shown as the answer
    assert "rm canary.txt" in res.stderr and "denied" in res.stderr
    assistant = next(m for m in llm_env.requests[1]["body"]["messages"] if m["role"] == "assistant")
    assert assistant["tool_calls"][0]["function"]["name"] == "run_command"  # a real call in the history


def test_ollama_native_chat_through_litellm_runs_a_tool_and_answers(
    llm_env: FakeLLMServer, run_cli: Any, workspace: Path
) -> None:
    """An ``ollama_chat/`` model speaks Ollama's own /api/chat (NDJSON, calls without ids): litellm
    translates, and the loop pairs the call with its result all the same."""
    (workspace / "notes.txt").write_text("the build needs python 3.11\n")
    with FakeLLMServer("ollama") as ollama:
        ollama.enqueue(Reply.tool_calls([("read_file", {"path": "notes.txt"})]),
                       Reply.text("It needs Python 3.11.", chunk_size=3))
        proc = run_cli("-c", "which python?", env={
            "SWEBASH_AI_MODEL": "ollama_chat/fake-model", "SWEBASH_AI_API_BASE": ollama.base_url,
            "SWEBASH_AI_API_KEY": None})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "It needs Python 3.11."
    chats = [r for r in ollama.requests if r["path"] == "/api/chat"]
    assert len(chats) == 2 and not llm_env.requests  # the other lane was never asked
    second = chats[1]["body"]["messages"]
    assert second[-1]["role"] == "tool" and "python 3.11" in second[-1]["content"]
    assert second[-2]["role"] == "assistant" and second[-2]["tool_calls"][0]["function"]["name"] == "read_file"
    assert not ollama.violations, ollama.violations
