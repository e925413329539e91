"""The sandbox's words in the app: what it refused, in full under a command's status line (wrapped, never cut);
what y and o each do in the approval dialog; /help and the status bar on auto mode."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from textual.widgets import Static
from tui_helpers import idle, type_and_send, wait_for

from swebash_ai.frontends.tui.screens.confirm import ConfirmScreen
from swebash_ai.frontends.tui.widgets.chat import InfoMessage
from swebash_ai.sandbox import detect
from swebash_ai.testing.fake_server import Reply
from swebash_ai.tools.exec import run_command

pytestmark = [pytest.mark.timeout(120),
              pytest.mark.skipif(not detect.choose("auto").ok, reason="no sandbox works here")]

LONG = "/usr/" + "a-folder-with-a-long-name-" * 4 + "x.txt"  # longer than the pane is wide


async def test_what_the_sandbox_refused_is_named_in_full_under_the_status(llm_env, make_app, monkeypatch):
    monkeypatch.setenv("SWEBASH_AI_TOOLS_CONFIRM", "false")  # unasked: not proven read-only, so confined
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": f"touch {LONG}"})]), Reply.text("It failed."))
    app = make_app(tools=[run_command])
    async with app.run_test(size=(100, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "make the file")
        await wait_for(pilot, lambda: "It failed." in app.chat.last_reply_text(), what="answer", timeout=60)
        await idle(pilot)
        (entry,) = app.activity.entries.values()
        assert "sandbox refused something" in entry.status_text()
        line = entry.query_one(".tool-refused", Static)
        assert "".join(str(line.render()).split("\n")) == f"the sandbox refused: write {LONG}"
        assert line.size.height > 1 and line.size.width < len(LONG)  # wrapped in the pane, not cut


HOME_FATE = "will fail: the sandbox shows your home folder read-only (its toolchains alone)"


@pytest.mark.parametrize(("base", "command", "fate"), [
    ("/var/tmp", "echo hi > ~/notes.txt", HOME_FATE),
    ("/tmp", "echo hi > ~/notes.txt", HOME_FATE),  # a home under /tmp: read-only too, not the private /tmp
    ("/var/tmp", "echo hi > /etc/notes.txt", "will fail: outside the workspace the sandbox is read-only"),
    ("/var/tmp", "echo hi > /tmp/notes.txt", "lands in the sandbox's own /tmp and is gone when it ends"),
])
async def test_the_dialog_says_what_y_and_o_each_do(llm_env, make_app, monkeypatch, base, command, fate):
    if not os.access(base, os.W_OK):
        pytest.skip(f"{base} is not writable here")
    if "/tmp/" in command and detect.choose("auto").backend != "bwrap":
        pytest.skip("only bubblewrap gives a private /tmp")
    home = Path(tempfile.mkdtemp(prefix="home-", dir=base))
    monkeypatch.setenv("HOME", str(home))
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": command})]), Reply.text("Ok."))
    app = make_app(tools=[run_command])
    try:
        async with app.run_test(size=(120, 50)) as pilot:
            await idle(pilot)
            await type_and_send(pilot, "write a note")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question", timeout=60)
            text = " ".join(str(app.screen.query_one("#confirm-sandbox", Static).render()).split())
            word = command.split("> ")[1]
            assert f"y runs it in the sandbox: its write to {word} {fate}; o runs it outside the sandbox" in text
            await pilot.press("n")
            await wait_for(pilot, lambda: "Ok." in app.chat.last_reply_text(), what="answer", timeout=60)
    finally:
        shutil.rmtree(home, ignore_errors=True)


async def test_with_no_sandbox_the_dialog_says_a_yes_runs_it_unconfined(llm_env, make_app, monkeypatch):
    monkeypatch.setenv("SWEBASH_AI_EXEC_SANDBOX", "none")
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "touch made.txt"})]), Reply.text("Ok."))
    app = make_app(tools=[run_command])
    async with app.run_test(size=(120, 50)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "make it")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question", timeout=60)
        text = " ".join(str(app.screen.query_one("#confirm-sandbox", Static).render()).split())
        assert text == "y runs it unconfined, with all of your rights: exec_sandbox is none"
        assert not app.screen.query("#allow_outside")
        await pilot.press("n")
        await wait_for(pilot, lambda: "Ok." in app.chat.last_reply_text(), what="answer", timeout=60)


async def test_help_and_the_status_bar_explain_auto_mode(llm_env, make_app):
    app = make_app()
    async with app.run_test(size=(160, 60)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "/help")
        await wait_for(pilot, lambda: app.query(InfoMessage), what="/help")
        shown = " ".join(str(app.query(InfoMessage).last().render()).split())
        assert "auto (also every command the classifier cannot prove read-only, unasked, inside the sandbox" in shown
        while app.session.gate.mode != "auto":
            await pilot.press("shift+tab")
            await pilot.pause()
        assert "auto mode (commands unasked, in the sandbox)" in str(app.status.render())
