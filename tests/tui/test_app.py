"""App behaviour that needs no model: no-provider start, layout, themes, prompt, slash commands, sessions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tui_helpers import idle, type_and_send, wait_for

from swebash_ai.frontends.tui import commands
from swebash_ai.frontends.tui.screens.sessions import SessionsScreen
from swebash_ai.frontends.tui.screens.setup import SetupScreen
from swebash_ai.frontends.tui.widgets.activity import ToolEntry
from swebash_ai.frontends.tui.widgets.chat import InfoMessage, NoticeMessage, UserMessage
from swebash_ai.frontends.tui.widgets.reply import AssistantMessage
from swebash_ai.testing.fake_server import Reply


async def test_no_provider_opens_shows_help_and_bang_commands_work(make_app):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        assert app.session is not None and not app.session.has_provider
        notice = str(app.query_one(NoticeMessage).render())
        assert "No model provider is configured" in notice and "/login" in notice
        assert "no provider" in str(app.status.render())
        await type_and_send(pilot, "!echo still works")
        await wait_for(pilot, lambda: bool(app.query(ToolEntry)), what="entry")
        await idle(pilot)
        assert "still works" in app.query_one(ToolEntry).output_text
        await type_and_send(pilot, "a question")  # the one action: the setup screen, not the notice again
        await wait_for(pilot, lambda: isinstance(app.screen, SetupScreen), what="setup screen")
        await pilot.press("escape")
        await idle(pilot)
        assert len([n for n in app.query(NoticeMessage) if "No model provider" in str(n.render())]) == 1


async def test_a_local_ollama_is_offered_and_used_only_when_asked(make_app, fake_llm, monkeypatch):
    host = fake_llm.base_url.removesuffix("/v1")  # the fake server also answers Ollama's /api/tags
    monkeypatch.setenv("OLLAMA_HOST", host)
    fake_llm.enqueue(Reply.text("Hello from the local model."))
    app = make_app(probe_ollama=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        assert app.session is not None and not app.session.has_provider  # offered, not used
        offer = str(app.query(NoticeMessage).last().render())
        assert host in offer and "fake-model" in offer and "/ollama" in offer
        await type_and_send(pilot, "/ollama llama-nope")
        await wait_for(pilot, lambda: "Unknown Ollama model" in str(app.query("ErrorMessage").last().render())
                       if app.query("ErrorMessage") else False, what="unknown-model error")
        assert not app.session.has_provider
        await type_and_send(pilot, "/ollama")
        await wait_for(pilot, lambda: app.session is not None and app.session.has_provider, what="ollama session")
        assert app.session.model == "openai/fake-model" and "fake-model" in str(app.status.render())
        await type_and_send(pilot, "hi")
        await wait_for(pilot, lambda: "local model" in app.chat.last_reply_text(), what="answer")
    chats = [r for r in fake_llm.requests if r["path"].endswith("/chat/completions")]
    assert len(chats) == 1 and chats[0]["path"] == "/v1/chat/completions"


async def test_ollama_command_without_a_server_says_how_to_start_one(make_app):
    app = make_app(probe_ollama=True)  # OLLAMA_HOST points at a closed port in the tests
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        assert not [n for n in app.query(NoticeMessage) if "Ollama" in str(n.render())]  # nothing to offer
        await type_and_send(pilot, "/ollama")
        await wait_for(pilot, lambda: bool(app.query("ErrorMessage")), what="error")
        error = str(app.query("ErrorMessage").last().render())
        assert "No Ollama server" in error and "127.0.0.1:9" in error and "ollama serve" in error
        assert app.session is not None and not app.session.has_provider


@pytest.mark.parametrize(("width", "narrow"), [(140, False), (80, True)])
async def test_layout_stacks_the_panes_on_narrow_terminals(make_app, width, narrow):
    app = make_app()
    async with app.run_test(size=(width, 40)) as pilot:
        await idle(pilot)
        chat, activity = app.query_one("#chat").region, app.query_one("#activity").region
        assert app.query_one("#main").has_class("-narrow") is narrow
        if narrow:
            assert activity.y >= chat.bottom and activity.width == chat.width
        else:
            assert activity.x >= chat.right and activity.y == chat.y


async def test_resize_switches_layout(make_app):
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await idle(pilot)
        await pilot.resize_terminal(90, 40)
        await pilot.pause()
        assert app.query_one("#main").has_class("-narrow")


async def test_theme_switch_with_slash_theme(make_app):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        assert app.theme == "dark"
        await type_and_send(pilot, "/theme light")
        await pilot.pause()
        assert app.theme == "light"
        await type_and_send(pilot, "/theme high-contrast")
        await pilot.pause()
        assert app.theme == "high-contrast"
        await type_and_send(pilot, "/theme no-such-theme")
        await pilot.pause()
        assert app.theme == "high-contrast"
        assert "Unknown theme" in str(app.query(NoticeMessage).last().render())


async def test_theme_from_settings_and_bad_user_theme_is_reported(make_app, monkeypatch, isolated_env):
    themes_dir = isolated_env / ".swebash-ai" / "themes"
    themes_dir.mkdir(parents=True)
    (themes_dir / "broken.toml").write_text("name = 'broken'\nprimary = 'not-a-colour'\n")
    (themes_dir / "mine.toml").write_text("name = 'mine'\nprimary = '#ff8800'\ndark = false\n")
    monkeypatch.setenv("SWEBASH_AI_THEME", "mine")
    app = make_app()
    notes: list[str] = []
    real_notify = app.notify
    monkeypatch.setattr(app, "notify", lambda message, **kw: (notes.append(str(message)), real_notify(message, **kw)))
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        assert app.theme == "mine"
        assert any("broken.toml" in n and "not a colour" in n for n in notes)


async def test_unknown_theme_setting_falls_back_to_dark(make_app, monkeypatch):
    monkeypatch.setenv("SWEBASH_AI_THEME", "nope")
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        assert app.theme == "dark"


async def test_slash_completion_and_help(make_app):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        app.prompt.load_text("/th")
        await pilot.pause()
        assert app.query_one("#completions").display
        await pilot.press("tab")
        assert app.prompt.text == "/theme "
        app.prompt.load_text("/s")
        await pilot.press("tab")
        assert app.prompt.text == "/s"  # ambiguous: /save, /sessions
        assert "/sessions" in str(app.query_one("#completions").render())
        app.prompt.load_text("/help")
        await pilot.press("enter")
        await pilot.pause()
        assert "/sessions" in str(app.query(InfoMessage).last().render())
        await type_and_send(pilot, "/nope")
        await pilot.pause()
        assert "Unknown command /nope" in str(app.query(NoticeMessage).last().render())


async def test_page_keys_in_the_prompt_scroll_the_chat(make_app):
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await idle(pilot)
        for i in range(40):
            app.chat.add_notice(f"notice {i}")
        await pilot.pause()
        app.chat.scroll_end(animate=False)
        await pilot.pause()
        bottom = app.chat.scroll_y
        assert bottom > 0 and app.focused is app.prompt
        await pilot.press("pageup")
        await pilot.pause()
        assert app.chat.scroll_y < bottom and app.focused is app.prompt and app.prompt.text == ""
        await pilot.press("pagedown", "pagedown")
        await pilot.pause()
        assert app.chat.scroll_y == bottom


async def test_enter_sends_ctrl_j_adds_a_line(make_app):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await pilot.press("l", "1", "ctrl+j", "l", "2")
        assert app.prompt.text == "l1\nl2"
        await pilot.press("enter")
        await pilot.pause()
        assert app.prompt.text == ""
        assert "l1\nl2" in str(app.query(UserMessage).last().render())


async def test_history_is_persisted_and_browsed_with_up_down(make_app):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "/theme")
        await type_and_send(pilot, "first\nmultiline")
        await idle(pilot)
    history = app.loaded.locations.prompt_history
    assert [json.loads(line) for line in history.read_text().splitlines()] == ["/theme", "first\nmultiline"]
    app2 = make_app()
    async with app2.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        app2.prompt.load_text("draft")
        await pilot.press("up")
        assert app2.prompt.text == "first\nmultiline"
        app2.prompt.move_cursor((0, 0))
        await pilot.press("up")
        assert app2.prompt.text == "/theme"
        await pilot.press("down")
        await pilot.press("down")
        assert app2.prompt.text == "draft"


async def test_sessions_are_saved_and_resumed(llm_env, make_app):
    llm_env.enqueue(Reply.text("Remember 42."))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "remember a number")
        await wait_for(pilot, lambda: bool(app.query(AssistantMessage)), what="answer")
        await idle(pilot)
        assert app.session is not None
        first_id = app.session.conversation.id
        await type_and_send(pilot, "/new")
        await pilot.pause()
        assert app.session.conversation.id != first_id and not app.query(UserMessage)
        await type_and_send(pilot, "/sessions")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionsScreen), what="picker")
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(app.query(UserMessage)), what="resumed")
        assert app.session.conversation.id == first_id
        assert "Remember 42." in app.query_one(AssistantMessage).source

    resumed = make_app(resume_latest=True)
    async with resumed.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        assert resumed.session is not None and resumed.session.conversation.id == first_id
        assert "remember a number" in str(resumed.query_one(UserMessage).render())


async def test_resume_unknown_session_is_an_error_not_a_crash(make_app):
    app = make_app(resume="does-not-exist")
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        assert "None matches 'does-not-exist'" in str(app.query("ErrorMessage").last().render())


async def test_tools_model_profile_save_commands(llm_env, make_app):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "/tools")
        await pilot.pause()
        assert "run_command (exec)" in str(app.query(InfoMessage).last().render())
        await type_and_send(pilot, "/model")
        await pilot.pause()
        assert "openai/fake-model" in str(app.query(NoticeMessage).last().render())
        await type_and_send(pilot, "/model openai/other-model")
        await wait_for(pilot, lambda: app.session is not None and app.session.model == "openai/other-model",
                       what="model switch")
        assert "openai/other-model" in str(app.status.render())
        await type_and_send(pilot, "/profile work")
        await wait_for(pilot, lambda: bool(app.query("ErrorMessage")), what="profile error")
        assert "Unknown profile" in str(app.query("ErrorMessage").last().render())
        await type_and_send(pilot, "/save")
        await pilot.pause()
        assert "Nothing to save" in str(app.query(NoticeMessage).last().render())


async def test_ctrl_l_clears_the_screen(make_app):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "/help")
        await pilot.pause()
        assert app.query(InfoMessage)
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert not app.query("#chat > *")


def test_command_table_matches_the_issue():
    assert list(commands.SLASH_COMMANDS) == [  # the issue's commands, /ollama to accept the offer, /undo (issue 14)
        "/help", "/clear", "/new", "/model", "/ollama", "/login", "/profile", "/tools",
        "/agents",  # helper agents: docs/agents.md
        "/rules", "/mcp", "/ps",
        "/diagnostics",  # language servers: docs/tools.md "Diagnostics"
        "/theme", "/undo", "/save",  # /login: the setup screen (issue 25)
        "/sessions", "/context", "/stats", "/compact",  # memory: docs/memory.md; /stats: docs/observability.md
        "/exit",
    ]
    assert commands.parse("/theme  light ") == commands.SlashCommand("/theme", "light")
    assert commands.parse("not a command") is None
    assert commands.complete("/se") == ["/sessions"]
    assert commands.complete("/theme x") == []


def test_help_wraps_descriptions_in_their_column():
    narrow = commands.help_text(60).splitlines()
    assert max(len(line) for line in narrow) <= 60
    column = narrow[1].index("show the commands")  # where descriptions start
    for line in narrow:
        assert line in ("", "Commands", "Keys") or line.startswith("  "), line
        if line.startswith(" " * 3):  # a continuation: under the description, never under the names
            assert len(line) - len(line.lstrip()) == column, line
    joined = " ".join(part.strip() for part in narrow)
    assert "put back what the last turn changed: writes and approved commands (again: the one before)" in joined
    assert len(commands.help_text(200).splitlines()) < len(narrow)  # wide: one line per entry


async def test_help_is_laid_out_for_the_chat_width(make_app):
    from swebash_ai.frontends.tui.widgets.chat import HelpMessage

    app = make_app()
    async with app.run_test(size=(90, 50)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "/help")
        await wait_for(pilot, lambda: bool(app.query(HelpMessage)), what="help")
        help_message = app.query_one(HelpMessage)
        width = help_message.content_region.width
        lines = str(help_message.render()).splitlines()
        assert width < 90 and max(len(line) for line in lines) <= width
        assert "/sessions" in str(help_message.render())


def test_import_is_light():
    import subprocess
    import sys

    code = "import sys, swebash_ai.frontends.tui; print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_packaged_themes_match_the_repository_themes():
    repo = Path(__file__).resolve().parents[2] / "themes"
    packaged = Path(__file__).resolve().parents[2] / "swebash_ai" / "frontends" / "tui" / "themes"
    names = sorted(p.name for p in repo.glob("*.toml"))
    assert {"dark.toml", "light.toml", "high-contrast.toml"} <= set(names)
    assert names == sorted(p.name for p in packaged.glob("*.toml"))
    for name in names:
        assert (repo / name).read_bytes() == (packaged / name).read_bytes(), f"{name} differs; copy themes/ over"
