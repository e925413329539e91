"""A session end to end over real HTTP: settings -> openai client -> loopback server -> tools -> files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.agent import TextDelta, ToolCallFinished, TurnFailed, TurnFinished
from swebash_ai.agent.approval import AllowApprover
from swebash_ai.agent.conversation import Conversation
from swebash_ai.config.settings import load_settings
from swebash_ai.errors import ConfigError
from swebash_ai.session import Session
from swebash_ai.testing.fake_server import FakeLLMServer, Reply
from swebash_ai.tools.registry import ToolContext, ToolResult, tool


@tool("fs")
async def shout(ctx: ToolContext, word: str) -> ToolResult:
    """Upper-case a word.

    Args:
        word: The word.
    """
    return ToolResult.success(word.upper())


async def run(session: Session, text: str) -> list[Any]:
    return [e async for e in session.run(text)]


async def test_full_turn_with_a_tool_over_http(llm_env: FakeLLMServer, workspace: Path) -> None:
    llm_env.enqueue(
        Reply.tool_calls([("shout", {"word": "hello"})], split=3, usage=(20, 3)),
        Reply.text("It says HELLO.", chunk_size=4, usage=(30, 5)),
    )
    session = Session(load_settings(), tools=[shout], probe_ollama=False)
    events = await run(session, "shout hello")
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "It says HELLO."
    assert next(e for e in events if isinstance(e, ToolCallFinished)).result.content == "HELLO"
    final = events[-1]
    assert isinstance(final, TurnFinished) and final.usage is not None and final.usage.prompt_tokens == 50
    assert final.usage.completion_tokens == 8  # the turn's two requests added up
    second = llm_env.requests[1]["body"]["messages"]
    assert second[0]["role"] == "system" and "shout" in second[0]["content"]
    assert second[-1]["role"] == "tool" and second[-1]["content"] == "HELLO"
    assert llm_env.requests[0]["body"]["tools"][0]["function"]["name"] == "shout"
    saved = Conversation.load(session.session_file)
    assert saved.messages == session.conversation.messages and saved.is_valid()
    audit = [json.loads(x) for x in session.loaded.locations.audit_log.read_text().splitlines()]
    assert audit[0]["tool"] == "shout" and audit[0]["outcome"] == "ok"


async def test_provider_down_fails_the_turn_with_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    monkeypatch.setenv("SWEBASH_AI_MODEL", "openai/x")
    monkeypatch.setenv("SWEBASH_AI_API_BASE", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("SWEBASH_AI_PROVIDER_RETRIES", "0")
    session = Session(load_settings(), tools=[shout], probe_ollama=False)
    events = await run(session, "hi")
    assert isinstance(events[-1], TurnFailed) and "reach" in events[-1].error.message
    assert session.session_file.exists()  # the question is not lost


async def test_resume_continues_a_saved_session(llm_env: FakeLLMServer, workspace: Path) -> None:
    llm_env.enqueue(Reply.text("first"), Reply.text("second"))
    one = Session(load_settings(), tools=[shout], probe_ollama=False)
    await run(one, "q1")
    two = Session(load_settings(), tools=[shout], probe_ollama=False)
    two.resume(None)
    await run(two, "q2")
    sent = [m["content"] for m in llm_env.requests[1]["body"]["messages"] if m["role"] != "system"]
    assert sent == ["q1", "first", "q2"]


def test_no_provider_means_no_agent_and_a_how_to(workspace: Path) -> None:
    session = Session(load_settings(), tools=[shout], probe_ollama=False)
    assert not session.has_provider


async def test_running_without_provider_raises_config_error(workspace: Path) -> None:
    session = Session(load_settings(), tools=[shout], probe_ollama=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        await run(session, "hi")


def test_provider_key_in_environment_selects_a_default_model(monkeypatch: pytest.MonkeyPatch, workspace: Path) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-123")
    session = Session(load_settings(), tools=[shout], probe_ollama=False)
    assert session.model.startswith("anthropic/")
    assert session.choice is not None and session.choice.reason == "ANTHROPIC_API_KEY is set"


async def test_user_command_without_provider_is_audited(workspace: Path) -> None:
    @tool("exec")
    async def run_command(ctx: ToolContext, command: str) -> ToolResult:
        """Pretend to run a command.

        Args:
            command: The command.
        """
        return ToolResult.success(f"ran {command}", exit_code=0)

    session = Session(load_settings(), tools=[run_command], probe_ollama=False)
    assert not session.has_provider
    events = [e async for e in session.run_shell("echo hi")]
    assert isinstance(events[-1], TurnFinished) and events[-1].text == "ran echo hi"
    line = json.loads(session.loaded.locations.audit_log.read_text().splitlines()[-1])
    assert line["tool"] == "run_command" and line["arguments"] == {"command": "echo hi"}


async def test_a_commands_supervisor_starts_as_its_call_begins_and_never_for_an_answer(
    llm_env: FakeLLMServer, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 23: the next command's supervisor (a Python process) used to start with every turn that offered
    # run_command, 12% of a `-c hi`. Now it starts when the model's run_command call begins to stream, while
    # its arguments still arrive; an answer without a command starts none.
    from swebash_ai.tools import process as process_mod

    order: list[str] = []
    monkeypatch.setattr(process_mod, "prewarm", lambda: order.append("prewarm"))
    session = Session(load_settings(), probe_ollama=False, approver=AllowApprover())
    llm_env.enqueue(Reply.text("Just words.", chunk_size=3))
    assert [type(e).__name__ for e in await run(session, "hi")][-1] == "TurnFinished"
    assert order == []

    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "echo warm"})], split=6, delay=0.02),
                    Reply.text("Done."))
    async for event in session.run("echo something"):
        order.append(type(event).__name__)
    assert order.index("prewarm") < order.index("ToolCallStarted")
    assert order.count("prewarm") == 1  # the name arrived whole once; its argument pieces tell nothing
    ran = next(e for e in session.conversation.messages if e.get("role") == "tool")
    assert "warm" in ran["content"]
    await session.aclose()
