"""Pure pieces of the command line, in process: flags to settings, piped input, the JSON event form."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from swebash_ai.agent import events as ev
from swebash_ai.errors import ConfigError, ProviderUnavailableError, SwebashError
from swebash_ai.frontends.cli import UsageError, build_parser, settings_flags
from swebash_ai.frontends.oneshot import STDIN_CAP, ExitCode, read_capped, with_piped_context
from swebash_ai.frontends.oneshot_render import event_to_json, format_error
from swebash_ai.safety.verdict import Verdict
from swebash_ai.tools.registry import ToolResult


@pytest.mark.parametrize(("argv", "expected"), [
    (["-c", "q"], {}),
    (["--model", "openai/x", "-c", "q"], {"model": "openai/x"}),
    # no tools at all: the plan and the questions too
    (["--no-tools", "-c", "q"], {"tools_fs": False, "tools_exec": False, "tools_web": False, "tools_plan": False,
                                 "tools_ask": False}),
    # only the named categories are offered
    (["--tools", "fs,exec", "-c", "q"], {"tools_fs": True, "tools_exec": True, "tools_web": False,
                                         "tools_plan": False, "tools_ask": False}),
    (["--tools", " web,plan ", "-c", "q"], {"tools_fs": False, "tools_exec": False, "tools_web": True,
                                            "tools_plan": True, "tools_ask": False}),
    # the subcommands take --model too
    (["config", "--model", "openai/y"], {"model": "openai/y"}),
])
def test_flags_become_settings(argv: list[str], expected: dict[str, object]) -> None:
    assert settings_flags(build_parser().parse_args(argv)) == expected


def test_unknown_tool_category_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown category shell"):
        settings_flags(build_parser().parse_args(["--tools", "fs,shell", "-c", "q"]))


@pytest.mark.parametrize(("argv", "resume"), [
    (["-c", "q"], None),  # a new session
    (["--resume", "-c", "q"], ""),  # the latest
    (["--resume", "2026", "-c", "q"], "2026"),  # that one
])
def test_resume_forms(argv: list[str], resume: str | None) -> None:
    assert build_parser().parse_args(argv).resume == resume


def test_exit_codes_are_stable() -> None:
    assert [int(c) for c in ExitCode] == [0, 1, 2, 3, 4, 130]


def test_piped_input_is_capped_head_and_tail() -> None:
    data = b"HEAD" + b"x" * (3 * STDIN_CAP) + b"TAIL"
    kept, total = read_capped(io.BytesIO(data))
    assert total == len(data)
    assert kept.startswith(b"HEAD") and kept.endswith(b"TAIL") and b"[...]" in kept
    assert len(kept) < STDIN_CAP + 20
    question = with_piped_context("why?", kept, total)
    assert f"{total} bytes, of which the middle" in question


def test_piped_input_fence_cannot_be_closed_by_the_input() -> None:
    text = "before\n```\nnot the end\n"
    question = with_piped_context("q", text.encode(), len(text))
    assert "````text\n" in question and question.endswith("\n````")


def test_binary_input_is_not_sent() -> None:
    question = with_piped_context("q", b"\x7fELF\x00\x01", 6)
    assert "binary" in question and "ELF" not in question


def test_every_event_has_a_json_form() -> None:
    request = ev.ApprovalRequest("c1", "run_command", "$ rm x", "rm x", "/w", Verdict.ask("rm deletes files"))
    samples = [
        ev.TextDelta("hi"), ev.ToolCallStarted("c1", "run_command", {"command": "rm x"}, "$ rm x"),
        ev.ToolCallWaiting("c1", "earlier_calls"), ev.ToolCallRunning("c1"),
        ev.ApprovalRequested(request), ev.ToolOutput("c1", "out"),
        ev.ToolCallFinished("c1", "run_command", ToolResult.denied("no"), "non-interactive"),
        ev.Usage(3, 4, 0.01), ev.Notice("retrying", "warning"),
        ev.TurnFinished("hi", "answered", ev.Usage(3, 4), denied=1),
    ]
    types = []
    for event in samples:
        obj = event_to_json(event)
        assert obj is not None
        json.dumps(obj)
        types.append(obj["type"])
    assert types == ["text", "tool_call", "tool_waiting", "tool_running", "approval", "tool_output", "tool_result",
                     "usage", "notice", "final"]
    # The tool_call form is unchanged: the call's place in its response is not part of it.
    assert event_to_json(samples[1]) == {"type": "tool_call", "id": "c1", "name": "run_command",
                                         "arguments": {"command": "rm x"}, "summary": "$ rm x"}
    assert event_to_json(samples[2]) == {"type": "tool_waiting", "id": "c1", "waiting_for": "earlier_calls"}
    assert event_to_json(samples[3]) == {"type": "tool_running", "id": "c1"}
    assert event_to_json(samples[4]) == {"type": "approval", "id": "c1", "tool": "run_command", "summary": "$ rm x",
                                         "detail": "rm x", "cwd": "/w", "reasons": ["rm deletes files"],
                                         "rule": "ask"}


def test_cwd_must_be_a_directory(tmp_path: Path) -> None:
    from swebash_ai.frontends.cli import _checked_cwd

    assert _checked_cwd(str(tmp_path)) == tmp_path.resolve()
    with pytest.raises(UsageError, match="not a directory"):
        _checked_cwd(str(tmp_path / "missing"))


@pytest.mark.parametrize(("model", "api_base", "key", "status"), [
    ("openai/gpt-4.1", None, "sk-abcdefghijkl", "ok"),  # a key is present
    ("openai/gpt-4.1", None, None, "fail"),  # OpenAI needs one: say which variable
    ("openai/llama3.1", "http://127.0.0.1:11434/v1", None, "ok"),  # a local server needs none
    ("ollama_chat/llama3.1", None, None, "ok"),  # Ollama through litellm needs none
    ("anthropic/claude-sonnet-4-5", None, None, "fail"),
    ("somecloud/model-x", None, None, "warn"),  # unknown provider: maybe it needs one
])
def test_doctor_key_check(model: str, api_base: str | None, key: str | None, status: str) -> None:
    from swebash_ai.commands.doctor import _key_check
    from swebash_ai.providers import ProviderChoice

    check = _key_check(ProviderChoice(model, api_base, key, "test"))
    assert check.status == status
    if status == "fail":
        assert "SWEBASH_AI_API_KEY" in check.fix


def test_warnings_print_one_line_without_a_traceback() -> None:
    """An internal error logged with its traceback reaches the user as its one line (the traceback needs -vv)."""
    import subprocess
    import sys

    code = (
        "import logging\n"
        "from swebash_ai.frontends.cli import _setup_logging\n"
        "_setup_logging(0)\n"
        "try:\n"
        "    raise RuntimeError('boom')\n"
        "except RuntimeError:\n"
        "    logging.getLogger('swebash_ai.agent.loop').exception('internal error in the tool loop')\n"
        "logging.getLogger('x').info('not shown')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr == "internal error in the tool loop\n"


@pytest.mark.parametrize(("error", "line"), [
    # a usage slip names itself: a title in front would only repeat it
    (UsageError("rules remove needs the number of a rule."), "swebash-ai: rules remove needs the number of a rule."),
    # other errors keep the title that says what kind of failure this is
    (ProviderUnavailableError("Cannot connect to http://localhost:1"),
     "swebash-ai: Provider unavailable: Cannot connect to http://localhost:1"),
    # the hint goes on its own line
    (ConfigError("Unknown profile 'x'.", hint="Profiles: a, b."),
     "swebash-ai: Configuration error: Unknown profile 'x'.\nProfiles: a, b."),
])
def test_error_lines_read_once(error: SwebashError, line: str) -> None:
    assert format_error(error) == line


def test_a_usage_error_exits_2_wherever_it_is_rendered() -> None:
    from swebash_ai.frontends.oneshot import exit_code_for

    assert exit_code_for(UsageError("x")) == ExitCode.USAGE
