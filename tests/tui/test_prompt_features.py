"""The prompt's @path completion and attachments, custom slash commands and the "go on" action, through the
app against the loopback fake server (which shows what reached the provider)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_helpers import idle, type_and_send, wait_for

from swebash_ai.agent.custom_commands import BUILTIN_COMMANDS
from swebash_ai.agent.user_prompt import GO_ON
from swebash_ai.frontends.tui import commands
from swebash_ai.frontends.tui.widgets.chat import HelpMessage, NoticeMessage, UserMessage
from swebash_ai.testing.fake_server import FakeLLMServer, Reply

SECRET = "CANARY-TUI-MENTION-77f"


@pytest.fixture
def tree(workspace: Path, isolated_env: Path) -> Path:
    (workspace / ".git").mkdir()
    (workspace / "src" / "api").mkdir(parents=True)
    (workspace / "src" / "app.py").write_text("def main():\n    return 42\n")
    (workspace / "src" / "api" / "handler.py").write_text("pass\n")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "my notes.md").write_text("# notes\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "app.py").write_text("generated\n")
    (workspace / ".gitignore").write_text("build/\n")
    (workspace / ".env").write_text(f"TOKEN={SECRET}\n")
    (isolated_env / ".ssh").mkdir()
    (isolated_env / ".ssh" / "id_rsa").write_text(f"KEY {SECRET}\n")
    (workspace / "apple-link.txt").symlink_to(isolated_env / ".ssh" / "id_rsa")
    return workspace


def notices(app: object) -> list[str]:
    return [str(w.render()) for w in app.chat.messages() if isinstance(w, NoticeMessage)]  # type: ignore[attr-defined]


def test_the_core_knows_the_builtin_names() -> None:
    assert {name[1:] for name in commands.SLASH_COMMANDS} == BUILTIN_COMMANDS


async def test_at_completes_paths_fuzzily_and_never_offers_protected_ones(llm_env, make_app, tree: Path):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        prompt = app.prompt
        await wait_for(pilot, lambda: prompt.paths is not None, what="path index")
        prompt.insert("look at @")
        await pilot.pause()
        offered = [c.path for c in prompt.mention_candidates(20)]
        assert offered[:2] == ["docs/", "src/"]  # folders first
        assert offered[-1] == "build/"  # gitignored last
        assert ".env" not in offered and "apple-link.txt" not in offered  # protected: never offered
        assert app.query_one("#completions").display
        prompt.insert("sr/app")
        await pilot.pause()
        assert "› src/app.py" in str(app.query_one("#completions").render())
        await pilot.press("tab")
        assert prompt.text == "look at @src/app.py "
        assert prompt.has_focus
        prompt.clear()
        prompt.insert("read @notes")
        await pilot.press("tab")
        assert prompt.text == 'read @"docs/my notes.md" '  # a path with a space is quoted
        prompt.clear()
        prompt.insert("mail me@src")  # an e-mail address is no mention
        await pilot.pause()
        assert prompt.mention_candidates() == []
        assert not app.query_one("#completions").display


async def test_files_a_turn_makes_are_offered_at_the_next_at(llm_env: FakeLLMServer, make_app, tree: Path):
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "touch fresh.txt"})]), Reply.text("Made it."))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await wait_for(pilot, lambda: app.prompt.paths is not None, what="path index")
        await type_and_send(pilot, "make a file")
        await wait_for(pilot, lambda: (tree / "fresh.txt").exists(), what="the file")
        await idle(pilot)
        app.prompt.insert("@fres")
        await wait_for(pilot, lambda: [c.path for c in app.prompt.mention_candidates()] == ["fresh.txt"],
                       what="the new file offered")


async def test_attachments_reach_the_provider_and_show_as_one_line(llm_env: FakeLLMServer, make_app, tree: Path):
    llm_env.enqueue(Reply.text("It returns 42."))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "explain @src/app.py and @src/api, not @.env nor @apple-link.txt or @gone.py")
        await wait_for(pilot, lambda: bool(llm_env.requests), what="request")
        await idle(pilot)
        shown = notices(app)
        assert any(line.startswith("📎 src/app.py (2 lines") for line in shown)
        assert any(line.startswith("📎 src/api (folder, 1 entry)") for line in shown)
        assert any("@.env is not attached" in line and "credentials" in line for line in shown)
        assert any("@apple-link.txt is not attached" in line for line in shown)
        assert any("@gone.py is not attached: it does not exist" in line for line in shown)
        users = [str(w.render()) for w in app.chat.messages() if isinstance(w, UserMessage)]
        assert all("return 42" not in u for u in users)  # the chat shows the line, not the file
    sent = [m["content"] for m in llm_env.requests[-1]["body"]["messages"] if m["role"] == "user"][-1]
    assert "[Attached by the user: src/app.py (2 lines" in sent and "   2|     return 42" in sent
    assert "handler.py" in sent
    assert SECRET not in sent


async def test_custom_commands_in_help_and_sent_expanded(llm_env: FakeLLMServer, make_app, tree: Path,
                                                         isolated_env: Path):
    user = isolated_env / ".swebash-ai" / "commands"
    user.mkdir(parents=True)
    (user / "review.md").write_text("Mine: $ARGUMENTS\n")
    (user / "eli5.md").write_text("---\ndescription: Explain simply\n---\nExplain $ARGUMENTS to a child.\n")
    (user / "clear.md").write_text("never\n")
    project = tree / ".swebash-ai" / "commands"
    project.mkdir(parents=True)
    (project / "review.md").write_text("---\ndescription: Review by our rules\n---\nReview $ARGUMENTS.\n")
    llm_env.enqueue(Reply.text("Reviewed."), Reply.text("Simple."))
    app = make_app()
    async with app.run_test(size=(140, 60)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "/help")
        await wait_for(pilot, lambda: bool(app.query(HelpMessage)), what="help")
        text = " ".join(str(app.query_one(HelpMessage).render()).split())  # as read, wherever lines wrap
        assert "/eli5 [ARGS]" in text and "Explain simply" in text
        assert "Review by our rules (project: .swebash-ai/commands/review.md; shadows" in text
        assert "~/.swebash-ai/commands/review.md" in text
        assert "/clear is a built-in command" in text
        assert "/review" in app.prompt.custom
        palette = {c.title: c.help for c in app.get_system_commands(app.screen)}
        assert palette["/eli5"] == "Explain simply"
        app.prompt.insert("/rev")
        await pilot.pause()
        assert "/review [ARGS]" in str(app.query_one("#completions").render())
        app.prompt.clear()
        await type_and_send(pilot, "/review the parser")
        await wait_for(pilot, lambda: len(llm_env.requests) == 1, what="request")
        await idle(pilot)
        await type_and_send(pilot, "/eli5 monads")
        await wait_for(pilot, lambda: len(llm_env.requests) == 2, what="second request")
        await idle(pilot)
        assert any(line.startswith("↳ /review from") for line in notices(app))
    firsts = [[m["content"] for m in r["body"]["messages"] if m["role"] == "user"][-1] for r in llm_env.requests]
    assert firsts == ["Review the parser.", "Explain monads to a child."]


async def test_go_on_after_the_tool_limit(llm_env: FakeLLMServer, make_app, tree: Path,
                                          monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("SWEBASH_AI_MAX_TOOL_CALLS_PER_TURN", "1")
    calls = [("run_command", {"command": "echo one"}), ("run_command", {"command": "echo two"})]
    llm_env.enqueue(Reply.tool_calls(calls), Reply.text("Did one."), Reply.text("Did the other."))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await pilot.press("ctrl+g")  # nothing to go on with yet
        assert not app.busy and not llm_env.requests
        await type_and_send(pilot, "echo both")
        await wait_for(pilot, lambda: app.controller.can_go_on, what="limit stop")
        await idle(pilot)
        assert any("Ctrl+G" in line for line in notices(app))
        assert "go_on" in {b.binding.action for b in app.screen.active_bindings.values() if b.enabled}
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: len(llm_env.requests) == 3, what="the go-on request")
        await idle(pilot)
        assert not app.controller.can_go_on
    last_user = [m["content"] for m in llm_env.requests[-1]["body"]["messages"] if m["role"] == "user"][-1]
    assert last_user == GO_ON
