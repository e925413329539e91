"""The first frame is drawn before the settings are validated; a bad setting still ends the app with 2."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from conftest import TEST_TOOLS

from swebash_ai.config.file import StartInfo
from swebash_ai.config.settings import LoadedSettings, load_settings
from swebash_ai.errors import ConfigError
from swebash_ai.frontends.tui.app import SwebashApp
from swebash_ai.storage.locations import locations


def write_config(text: str) -> None:
    path = locations().config_file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_peek_follows_the_same_precedence_as_the_full_load(monkeypatch: pytest.MonkeyPatch) -> None:
    write_config('theme = "light"\nmodel = "openai/a"\nprofile = "p"\n[profiles.p]\nmodel = "openai/b"\n')
    assert StartInfo.peek() == load_settings().start_info  # profile beats file
    monkeypatch.setenv("SWEBASH_AI_THEME", "high-contrast")
    assert StartInfo.peek().theme == "high-contrast" == load_settings().settings.theme  # env beats file
    flags = {"model": "openai/c"}
    assert StartInfo.peek(flags).model == "openai/c" == load_settings(flags).settings.model  # flag beats all


def test_peek_reports_a_broken_file_or_unknown_profile_at_once() -> None:
    write_config("theme = [\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        StartInfo.peek()
    write_config("[profiles.a]\n")
    with pytest.raises(ConfigError, match="Unknown profile 'b'"):
        StartInfo.peek(profile="b")


async def test_a_bad_setting_found_after_the_first_frame_exits_with_2(
    monkeypatch: pytest.MonkeyPatch, workspace: Path
) -> None:
    monkeypatch.setenv("SWEBASH_AI_EXEC_TIMEOUT", "900")

    def load() -> LoadedSettings:
        return load_settings()

    app = SwebashApp(load, cwd=workspace, tools=TEST_TOOLS, probe_ollama=False, start=StartInfo.peek())
    async with app.run_test():
        for _ in range(400):  # the app exits by itself; a pause now would wait for a screen that stopped
            if app.return_code is not None:
                break
            await asyncio.sleep(0.05)
    assert app.return_code == 2
    assert app.loaded is None and app.session is None


async def test_a_loader_builds_the_session_after_the_first_frame(workspace: Path) -> None:
    calls: list[str] = []

    def load() -> LoadedSettings:
        calls.append("loaded")
        return load_settings()

    app = SwebashApp(load, cwd=workspace, tools=TEST_TOOLS, probe_ollama=False, start=StartInfo.peek())
    async with app.run_test() as pilot:
        await asyncio.wait_for(app.session_ready.wait(), 10)
        await pilot.pause()
        assert calls == ["loaded"] and app.loaded is not None and app.session is not None
