"""``swebash-ai -c`` with @path mentions, custom slash commands and a turn stopped at its limit: through the
real entry point, against the scripted server, which shows exactly what reached the provider."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from swebash_ai.testing.fake_server import FakeLLMServer, Reply

SECRET = "CANARY-ONESHOT-MENTION-5c1"


def _last_user(server: FakeLLMServer) -> str:
    return [m["content"] for m in server.requests[-1]["body"]["messages"] if m["role"] == "user"][-1]


@pytest.fixture
def project(workspace: Path, isolated_env: Path) -> Path:
    (workspace / ".git").mkdir()
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("def main():\n    return 42\n")
    (isolated_env / ".ssh").mkdir()
    (isolated_env / ".ssh" / "id_rsa").write_text(f"KEY {SECRET}\n")
    (workspace / "key.txt").symlink_to(isolated_env / ".ssh" / "id_rsa")
    return workspace


def test_a_mentioned_file_reaches_the_provider(llm_env: FakeLLMServer, run_cli: Any, project: Path) -> None:
    llm_env.enqueue(Reply.text("It returns 42."))
    res = run_cli("-c", "explain @src/app.py, not @missing.py nor @key.txt; mail me at me@example.com")
    assert res.returncode == 0, res.stderr
    sent = _last_user(llm_env)
    assert sent.startswith("explain @src/app.py, not @missing.py nor @key.txt; mail me at me@example.com\n\n")
    assert "[Attached by the user: src/app.py (2 lines" in sent and "   2|     return 42" in sent
    assert SECRET not in sent
    assert "📎 src/app.py (2 lines" in res.stderr
    assert "@missing.py is not attached: it does not exist" in res.stderr
    assert "@key.txt is not attached" in res.stderr and "credentials" in res.stderr
    assert "example.com" not in res.stderr  # an e-mail address is no mention
    assert res.stdout == "It returns 42.\n"


def test_a_mention_in_piped_input_attaches_nothing(llm_env: FakeLLMServer, run_cli: Any, project: Path) -> None:
    llm_env.enqueue(Reply.text("ok"))
    res = run_cli("-c", "summarize", input="see @src/app.py\n")
    assert res.returncode == 0, res.stderr
    sent = _last_user(llm_env)
    assert "see @src/app.py" in sent and "Attached by the user" not in sent


def test_custom_commands_from_both_places(llm_env: FakeLLMServer, run_cli: Any, project: Path,
                                          isolated_env: Path) -> None:
    user = isolated_env / ".swebash-ai" / "commands"  # the config directory (SWEBASH_AI_HOME) in the tests
    user.mkdir(parents=True)
    (user / "eli5.md").write_text("---\ndescription: Explain simply\n---\nExplain $ARGUMENTS to a child.\n")
    (user / "review.md").write_text("User review: $ARGUMENTS\n")
    (project / ".swebash-ai" / "commands").mkdir(parents=True)
    (project / ".swebash-ai" / "commands" / "review.md").write_text("Review @src/app.py for $ARGUMENTS.\n")
    llm_env.enqueue(Reply.text("a"), Reply.text("b"))
    res = run_cli("-c", "/eli5 recursion")
    assert res.returncode == 0, res.stderr
    assert _last_user(llm_env) == "Explain recursion to a child."
    assert "↳ /eli5 from" in res.stderr
    res = run_cli("-c", "/review bugs")
    assert res.returncode == 0, res.stderr
    sent = _last_user(llm_env)  # the project's file shadows the user's, and its mention is attached
    assert sent.startswith("Review @src/app.py for bugs.\n\n[Attached by the user: src/app.py")


def test_a_builtin_name_is_never_taken_from_a_file(llm_env: FakeLLMServer, run_cli: Any, project: Path,
                                                   isolated_env: Path) -> None:
    user = isolated_env / ".swebash-ai" / "commands"
    user.mkdir(parents=True)
    (user / "help.md").write_text("never used\n")
    llm_env.enqueue(Reply.text("a"))
    res = run_cli("-c", "/help")
    assert res.returncode == 0, res.stderr
    assert _last_user(llm_env) == "/help" and "/help is a built-in command" in res.stderr


def test_the_limit_message_names_the_setting(llm_env: FakeLLMServer, run_cli: Any, project: Path) -> None:
    calls = [("exists", {"path": "src"}), ("exists", {"path": "src/app.py"})]
    llm_env.enqueue(Reply.tool_calls(calls), Reply.text("I checked one of two."))
    res = run_cli("-c", "check both", env={"SWEBASH_AI_MAX_TOOL_CALLS_PER_TURN": "1"})
    assert res.returncode == 0, res.stderr
    assert "SWEBASH_AI_MAX_TOOL_CALLS_PER_TURN (now 1)" in res.stderr
    assert "max_tool_calls_per_turn in the config file" in res.stderr
    assert "swebash-ai --resume -c 'go on'" in res.stderr
