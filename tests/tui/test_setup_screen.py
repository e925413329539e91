"""The setup screen with Pilot: every provider kind against the scripted servers (the setup's addresses
pointed at them), a failing test request fixed in place, Esc leaving nothing behind, /login, and a question
asked before any provider exists being answered once one is saved."""

from __future__ import annotations

import stat
import tomllib
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Select
from tui_helpers import idle, type_and_send, wait_for

from swebash_ai.commands import setup_flow
from swebash_ai.frontends.tui.screens.setup import SetupScreen
from swebash_ai.frontends.tui.widgets.chat import NoticeMessage
from swebash_ai.testing.fake_server import FakeLLMServer, Reply

KEY = "sk-screen-0123456789abcdef"


def _config(home: Path) -> Path:
    return home / ".swebash-ai" / "config.toml"


def _status(screen: SetupScreen) -> str:
    return str(screen.query_one("#setup-status").render())


async def _open(pilot: Any) -> SetupScreen:
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, SetupScreen), what="setup screen")
    screen = pilot.app.screen
    assert isinstance(screen, SetupScreen)
    await wait_for(pilot, lambda: bool(screen.query("#setup-provider #label")), what="screen composed")
    await pilot.pause()
    return screen


async def _type(pilot: Any, text: str) -> None:
    await pilot.press(*text)


async def _save_with_key(pilot: Any, kind: str) -> None:
    """Choose ``kind``, type the key, take the listed model and press Save."""
    screen = await _open(pilot)
    screen.choose(kind)
    await pilot.pause()
    await _type(pilot, KEY)
    await pilot.press("enter")
    await wait_for(pilot, lambda: screen.query_one("#setup-model-list").display, what="model list")
    await pilot.click("#setup-go")


async def _address_typed(pilot: Any, typed: str) -> SetupScreen:
    """Choose an OpenAI-compatible server and type ``typed`` as its address."""
    screen = await _open(pilot)
    screen.choose("openai-compatible")
    await pilot.pause()
    await _type(pilot, typed)
    await pilot.press("enter")
    return screen


@pytest.fixture
def bases(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The setup's provider addresses, to be pointed at the scripted servers."""
    table = dict(setup_flow.BASES)
    monkeypatch.setattr(setup_flow, "BASES", table)
    return table


@pytest.mark.parametrize("kind", ["openai", "gemini", "openrouter", "openai-compatible", "ollama"])
async def test_each_openai_compatible_kind_is_tested_then_saved_and_used(
        kind: str, make_app: Any, fake_llm: FakeLLMServer, bases: dict[str, str], isolated_env: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    bases[kind] = fake_llm.base_url
    monkeypatch.setenv("OLLAMA_HOST", fake_llm.base_url.removesuffix("/v1"))  # serves /api/tags too
    fake_llm.models = ["fake-model", "gpt-4.1-mini"]
    fake_llm.enqueue(Reply.text("ok"), Reply.text("Answer through the new provider."))
    app = make_app(setup_on_start=True, probe_ollama=kind == "ollama")
    async with app.run_test(size=(120, 45)) as pilot:
        screen = await _open(pilot)
        screen.choose(kind)
        await pilot.pause()
        if kind == "openai-compatible":
            assert screen.query_one("#setup-base", Input).has_focus
            await _type(pilot, fake_llm.base_url)
            await pilot.press("enter")
        if kind != "ollama":
            key = screen.query_one("#setup-key", Input)
            assert key.has_focus and key.password  # masked
            await _type(pilot, KEY)
            assert KEY not in str(key.render())  # never drawn
            await pilot.press("enter")
        listed = screen.query_one("#setup-model-list", Select)
        await wait_for(pilot, lambda: listed.display, what="model list")
        want = "gpt-4.1-mini" if kind == "openai" else "fake-model"  # the kind's usual model when listed
        assert listed.value == want
        await pilot.click("#setup-go")
        await wait_for(pilot, lambda: not isinstance(app.screen, SetupScreen), what="saved")
        await wait_for(pilot, lambda: app.session is not None and app.session.has_provider, what="new session")
        await idle(pilot)
        assert "Saved profile" in str(app.query(NoticeMessage).first().render())
        await type_and_send(pilot, "hi")
        await wait_for(pilot, lambda: "new provider" in app.chat.last_reply_text(), what="answer")
    test_call, _question = [r for r in fake_llm.requests if r["path"].endswith("/chat/completions")]
    assert test_call["body"]["model"] == want
    if kind != "ollama":
        assert test_call["headers"]["authorization"] == f"Bearer {KEY}"
    data = tomllib.loads(_config(isolated_env).read_text())
    assert data["profile"] == kind
    assert data["profiles"][kind]["model"] == f"openai/{want}"
    assert (data["profiles"][kind].get("api_key") == KEY) is (kind != "ollama")
    assert stat.S_IMODE(_config(isolated_env).stat().st_mode) == 0o600


async def test_anthropic_goes_through_litellm(make_app: Any, fake_anthropic: FakeLLMServer, bases: dict[str, str],
                                              isolated_env: Path) -> None:
    bases["anthropic"] = fake_anthropic.base_url
    fake_anthropic.models = ["claude-sonnet-4-5"]
    fake_anthropic.enqueue(Reply.text("ok"))
    app = make_app(setup_on_start=True)
    async with app.run_test(size=(120, 45)) as pilot:
        await _save_with_key(pilot, "anthropic")
        await wait_for(pilot, lambda: not isinstance(app.screen, SetupScreen), timeout=30, what="saved")
    listing, test_call = fake_anthropic.requests
    assert listing["headers"]["x-api-key"] == KEY and test_call["headers"]["x-api-key"] == KEY
    profile = tomllib.loads(_config(isolated_env).read_text())["profiles"]["anthropic"]
    assert profile["model"] == "anthropic/claude-sonnet-4-5"


async def test_a_refused_key_is_said_and_fixed_in_place(make_app: Any, fake_llm: FakeLLMServer,
                                                        bases: dict[str, str], isolated_env: Path) -> None:
    bases["openai"] = fake_llm.base_url
    fake_llm.models = None  # no model list: a text field, with the usual model filled in
    fake_llm.enqueue(Reply.error(401, "invalid api key"), Reply.error(404, "no such model"), Reply.text("ok"))
    app = make_app(setup_on_start=True)
    async with app.run_test(size=(120, 45)) as pilot:
        screen = await _open(pilot)
        screen.choose("openai")
        await pilot.pause()
        await _type(pilot, "sk-wrong-000000000")
        await pilot.press("enter")
        typed = screen.query_one("#setup-model", Input)
        await wait_for(pilot, lambda: typed.display and typed.has_focus, what="model field")
        assert typed.value == "gpt-4.1-mini"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "The key was refused (401)" in _status(screen), what="401")
        assert "Nothing was saved" in _status(screen) and not _config(isolated_env).exists()
        key = screen.query_one("#setup-key", Input)
        assert key.has_focus  # where the fix goes
        key.value = KEY
        await pilot.click("#setup-go")
        await wait_for(pilot, lambda: "No model 'gpt-4.1-mini'" in _status(screen), what="404")
        assert typed.has_focus
        typed.value = "fake-model"
        await pilot.press("enter")
        await wait_for(pilot, lambda: not isinstance(app.screen, SetupScreen), what="saved")
        assert "sk-wrong" not in _config(isolated_env).read_text()


async def test_an_unreachable_server_is_named(make_app: Any, isolated_env: Path) -> None:
    app = make_app(setup_on_start=True)
    async with app.run_test(size=(120, 45)) as pilot:
        screen = await _open(pilot)
        screen.choose("openai-compatible")
        await pilot.pause()
        await _type(pilot, "http://127.0.0.1:9/v1")
        await pilot.press("enter", "enter")  # no key: a local server may need none
        await wait_for(pilot, lambda: "Cannot reach http://127.0.0.1:9/v1" in _status(screen), what="unreachable")
        assert screen.query_one("#setup-base", Input).has_focus
    assert not _config(isolated_env).exists()


async def test_esc_leaves_nothing_and_the_notice_is_said_once(make_app: Any, fake_llm: FakeLLMServer,
                                                             isolated_env: Path) -> None:
    fake_llm.enqueue(Reply.text("ok"))
    app = make_app(setup_on_start=True)
    async with app.run_test(size=(120, 45)) as pilot:
        screen = await _open(pilot)
        screen.choose("openai-compatible")
        await pilot.pause()
        await _type(pilot, fake_llm.base_url)
        await pilot.press("enter")
        await _type(pilot, KEY)
        await pilot.press("escape")
        await idle(pilot)
        assert not isinstance(app.screen, SetupScreen)
        await type_and_send(pilot, "a question")  # no provider: setup again, not the notice again
        await _open(pilot)
        await pilot.press("escape")
        await idle(pilot)
        notices = [str(n.render()) for n in app.query(NoticeMessage)]
        assert len([n for n in notices if "No model provider" in n]) == 1 and "/login" in notices[0]
    assert not _config(isolated_env).exists()
    assert fake_llm.requests == []  # nothing was even sent


async def test_a_question_asked_first_is_answered_after_setup(make_app: Any, fake_llm: FakeLLMServer,
                                                             bases: dict[str, str]) -> None:
    bases["openai"] = fake_llm.base_url
    fake_llm.enqueue(Reply.text("ok"), Reply.text("The answer you waited for."))
    app = make_app()  # setup not opened at start: the question opens it
    async with app.run_test(size=(120, 45)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "what is 2+2?")
        await _save_with_key(pilot, "openai")
        await wait_for(pilot, lambda: "you waited for" in app.chat.last_reply_text(), what="answer")
    assert fake_llm.requests[-1]["body"]["messages"][-1]["content"] == "what is 2+2?"


async def test_login_opens_the_screen_with_a_provider_too(make_app: Any, llm_env: FakeLLMServer) -> None:
    app = make_app(setup_on_start=True)  # a provider is configured: nothing opens by itself
    async with app.run_test(size=(120, 45)) as pilot:
        await idle(pilot)
        assert not isinstance(app.screen, SetupScreen)
        await type_and_send(pilot, "/login")
        screen = await _open(pilot)
        options = [str(o[0]) for o in screen.query_one("#setup-provider", Select)._options if str(o[0])]
        assert options[:4] == ["OpenAI", "Anthropic", "Google Gemini", "OpenRouter"]
        assert "Ollama on this machine (http://127.0.0.1:9)" in options  # none answers here: listed all the same


async def test_ollama_is_listed_with_its_address_and_its_models_when_it_did_not_answer_at_start(
        make_app: Any, fake_llm: FakeLLMServer, isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ollama started after the app: its entry names its address; choosing it asks its /api/tags."""
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")  # nothing there (the port of discard)
    app = make_app(setup_on_start=True)  # probe_ollama=False: no offer at start
    async with app.run_test(size=(120, 45)) as pilot:
        screen = await _open(pilot)
        options = [str(o[0]) for o in screen.query_one("#setup-provider", Select)._options if str(o[0])]
        assert "Ollama on this machine (http://127.0.0.1:9)" in options
        screen.choose("ollama")
        await wait_for(pilot, lambda: "No Ollama server" in _status(screen), what="nothing answers")
        await pilot.pause()
        base = screen.query_one("#setup-base", Input)
        assert base.has_focus and base.value == "http://127.0.0.1:9"
        base.value = fake_llm.base_url.removesuffix("/v1")  # where it really is (it serves /api/tags)
        await pilot.press("enter")
        listed = screen.query_one("#setup-model-list", Select)
        await wait_for(pilot, lambda: listed.display, what="model list")
        assert listed.value == "fake-model"  # what the loopback server's /api/tags names
        assert "1 model listed" in _status(screen)


async def test_an_address_without_a_scheme_is_completed_and_said(make_app: Any, fake_llm: FakeLLMServer,
                                                                 isolated_env: Path) -> None:
    # What `swebash-ai setup` accepts at its prompt, by the same rule: a loopback host gets http://, said.
    fake_llm.models = ["fake-model"]
    fake_llm.enqueue(Reply.text("ok"))
    typed = fake_llm.base_url.removeprefix("http://")  # 127.0.0.1:PORT/v1
    app = make_app(setup_on_start=True)
    async with app.run_test(size=(120, 45)) as pilot:
        screen = await _address_typed(pilot, typed)
        note = screen.query_one("#setup-base-note")
        assert note.display
        assert str(note.render()) == f"Using {fake_llm.base_url}: http:// added (a local address)."
        assert screen.query_one("#setup-key", Input).has_focus
        await pilot.press("enter")  # no key: a local server may need none
        await wait_for(pilot, lambda: screen.query_one("#setup-model-list").display, what="model list")
        await pilot.click("#setup-go")
        await wait_for(pilot, lambda: not isinstance(app.screen, SetupScreen), what="saved")
    assert [r["path"] for r in fake_llm.requests] == ["/v1/models", "/v1/chat/completions"]
    profile = tomllib.loads(_config(isolated_env).read_text())["profiles"]["openai-compatible"]
    assert profile["api_base"] == fake_llm.base_url


@pytest.mark.parametrize(("typed", "said"), [
    # another machine: https://, so that the key pasted next never goes out in clear text
    ("gpu-box.invalid:8000/v1",
     "Using https://gpu-box.invalid:8000/v1: https:// added (another machine: use http:// explicitly for a "
     "server without TLS)."),
    # what the user writes is kept: no note
    ("http://gpu-box.invalid:8000/v1", ""),
])
async def test_the_note_says_which_scheme_was_added(make_app: Any, isolated_env: Path, typed: str,
                                                    said: str) -> None:
    app = make_app(setup_on_start=True)
    async with app.run_test(size=(120, 45)) as pilot:
        screen = await _address_typed(pilot, typed)
        note = screen.query_one("#setup-base-note")
        assert note.display is bool(said)
        assert str(note.render()) == said
        assert screen.query_one("#setup-key", Input).has_focus
        assert _status(screen) == ""


async def test_what_is_not_an_address_is_refused_at_enter(make_app: Any, isolated_env: Path) -> None:
    app = make_app(setup_on_start=True)
    async with app.run_test(size=(120, 45)) as pilot:
        screen = await _open(pilot)
        screen.choose("openai-compatible")
        await pilot.pause()
        await _type(pilot, "localhost:8000/v1")
        await pilot.press("enter")
        assert screen.query_one("#setup-base-note").display
        base = screen.query_one("#setup-base", Input)
        base.value = "not an address"
        screen.query_one("#setup-base", Input).focus()
        await pilot.press("enter")
        assert "'not an address' is not an http:// or https:// URL" in _status(screen)
        assert screen.query_one("#setup-status").has_class("-error")
        assert base.has_focus  # stays, to be fixed
        assert not screen.query_one("#setup-base-note").display  # the old note is not left under a bad address
    assert not _config(isolated_env).exists()


async def test_quitting_while_the_saved_provider_loads_leaves_quietly(
        make_app: Any, fake_llm: FakeLLMServer, bases: dict[str, str], isolated_env: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # After a save the new session is built in a thread (litellm's import takes seconds for Anthropic): a user
    # who quits meanwhile gets a clean exit, not an error from a status bar that is already gone.
    import asyncio
    import threading
    import time

    from swebash_ai.frontends.tui import session_switch

    building = threading.Event()

    def slow_preload(session: Any) -> None:
        building.set()
        time.sleep(0.5)

    monkeypatch.setattr(session_switch, "preload_provider", slow_preload)
    bases["openai"] = fake_llm.base_url
    fake_llm.models = ["gpt-4.1-mini"]
    fake_llm.enqueue(Reply.text("ok"))
    app = make_app(setup_on_start=True)
    async with app.run_test(size=(120, 45)) as pilot:
        await _save_with_key(pilot, "openai")
        await wait_for(pilot, building.is_set, what="the new session building")
        old = app.session
    await asyncio.sleep(0.7)  # the build ends after the app did
    assert app.session is old and app.return_code in (0, None)
    assert tomllib.loads(_config(isolated_env).read_text())["profiles"]["openai"]["model"] == "openai/gpt-4.1-mini"


async def test_enter_on_a_chosen_model_tests_and_saves_it_as_the_keys_line_says(
        make_app: Any, fake_llm: FakeLLMServer, bases: dict[str, str], isolated_env: Path) -> None:
    """Keyboard only: Space opens the model list, Enter there picks a model and comes back to the list, and
    Enter then goes on (the key line says "Enter: next"), instead of opening the list again."""
    bases["openai"] = fake_llm.base_url
    fake_llm.models = ["fake-model", "gpt-4.1-mini", "other-model"]
    fake_llm.enqueue(Reply.text("ok"))
    app = make_app(setup_on_start=True)
    async with app.run_test(size=(120, 45)) as pilot:
        screen = await _open(pilot)
        assert "Enter: next" in str(screen.query_one("#setup-keys").render())
        screen.choose("openai")
        await pilot.pause()
        await _type(pilot, KEY)
        await pilot.press("enter")
        listed = screen.query_one("#setup-model-list", Select)
        await wait_for(pilot, lambda: listed.display and listed.has_focus, what="model list")
        assert listed.value == "gpt-4.1-mini"
        await pilot.press("space")
        await wait_for(pilot, lambda: listed.expanded, what="the list open")
        await pilot.press("down", "enter")  # the model below the chosen one
        await wait_for(pilot, lambda: not listed.expanded and listed.has_focus, what="back on the list")
        assert listed.value == "other-model"
        await pilot.press("enter")
        await wait_for(pilot, lambda: not isinstance(app.screen, SetupScreen), what="tested and saved")
    test_call = next(r for r in fake_llm.requests if r["path"].endswith("/chat/completions"))
    assert test_call["body"]["model"] == "other-model"
    assert tomllib.loads(_config(isolated_env).read_text())["profiles"]["openai"]["model"] == "openai/other-model"


async def test_the_open_provider_list_stays_inside_the_dialog(make_app: Any, isolated_env: Path) -> None:
    from textual.widgets._select import SelectOverlay

    app = make_app(setup_on_start=True)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await _open(pilot)
        await pilot.press("enter")  # opens the list
        overlay = screen.query_one("#setup-provider").query_one(SelectOverlay)
        await wait_for(pilot, lambda: overlay.display and overlay.region.height > 0, what="the open list")
        await pilot.pause()
        dialog = screen.query_one("#setup-dialog").region
        assert overlay.region.height >= len(SetupScreen(Path("x")).kinds)  # every choice shown
        assert dialog.contains_region(overlay.region), (overlay.region, dialog)
