"""Text from the model, a tool or a file name never drives the terminal the app runs in.

What a prompt injection can make a model write: window titles (OSC 0/2), a clipboard write (OSC 52), a link
whose label lies (OSC 8), a screen wipe and cursor moves (CSI), a carriage return that draws one command
over another, an 8-bit CSI, an OSC left open. Each test checks what the app would send to the terminal: the
screen's composed lines (their characters hold no control character) and the escape codes of a full
update (no OSC, no 8-bit control: only the app's own styling).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tui_helpers import idle, type_and_send, wait_for

from swebash_ai.frontends.tui.screens.confirm import ConfirmScreen
from swebash_ai.frontends.tui.widgets.activity import ToolEntry
from swebash_ai.frontends.tui.widgets.chat import NoticeMessage
from swebash_ai.frontends.tui.widgets.reply import AssistantMessage
from swebash_ai.testing.fake_server import FakeLLMServer, Reply
from swebash_ai.testing.server_process import fake_server_process
from swebash_ai.tools.fs import list_dir
from swebash_ai.tools.search import search

ESC, BEL, ST = "\x1b", "\x07", "\x1b\\"
HOSTILE = (
    "Here is the summary.\n\n"
    f"{ESC}]0;PWNED-TITLE{BEL}{ESC}]2;PWNED-TITLE-2{ST}{ESC}]52;c;Q0xJUEJPQVJE{BEL}"
    f"Read {ESC}]8;;https://evil.example/{ST}https://docs.python.org{ESC}]8;;{ST} for more.\n\n"
    f"{ESC}[2J{ESC}[H{ESC}[10;5H{ESC}[3Aafter the wipe\n\n"
    "ls -l\rrm -rf ~\n\n"
    "\x9b2Jeight-bit\n\n"
    f"```sh\necho {ESC}[31mred{ESC}[0m\n```\n\n"
    f"The end{ESC}]0;UNTERMINATED"
)
ROOT = Path(__file__).resolve().parents[2]
PAYLOADS = ("PWNED", "Q0xJUEJPQVJE", "evil.example", "UNTERMINATED")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def screen_text(app: object) -> str:
    """The characters of every line the screen would draw."""
    strips = app.screen._compositor.render_strips()  # type: ignore[attr-defined]
    return "\n".join(strip.text for strip in strips)


def assert_terminal_safe(app: object) -> str:
    text = screen_text(app)
    assert not _CONTROL.search(text), repr(_CONTROL.search(text))
    update = app.screen._compositor.render_full_update().render_segments(app.console)  # type: ignore[attr-defined]
    assert "\x1b]" not in update and not re.search(r"[\x80-\x9f\x07]", update)  # no OSC, no 8-bit control, no BEL
    for payload in PAYLOADS:
        assert payload not in text and payload not in update
    return text


async def test_a_hostile_answer_streams_without_driving_the_terminal(llm_env: FakeLLMServer, make_app) -> None:
    llm_env.enqueue(Reply.text(HOSTILE, chunk_size=3))  # three characters a delta: sequences are cut
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "summarise the page")
        await wait_for(pilot, lambda: bool(app.query(AssistantMessage)), what="answer")
        await idle(pilot)
        await wait_for(pilot, lambda: "The end" in screen_text(app), what="the whole answer on screen")
        text = assert_terminal_safe(app)
        for shown in ("Here is the summary", "https://docs.python.org", "after the wipe", "ls -lrm -rf ~",
                      "eight-bit", "echo red", "The end"):
            assert shown in text, shown
        source = "".join(m.source for m in app.query(AssistantMessage))
        assert not _CONTROL.search(source)
        notice = str(app.query(NoticeMessage).last().render())
        assert "14 terminal control sequences were removed" in notice
    # The conversation keeps what the model wrote: only the screen is protected.
    assert app.session is not None and HOSTILE in app.session.conversation.messages[-1]["content"]


async def test_a_resumed_hostile_answer_is_shown_safely(llm_env: FakeLLMServer, make_app) -> None:
    llm_env.enqueue(Reply.text(HOSTILE, chunk_size=0))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "summarise the page")
        await wait_for(pilot, lambda: bool(app.query(AssistantMessage)), what="answer")
        await idle(pilot)
        session_id = app.session.conversation.id
    again = make_app(resume=session_id)
    async with again.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await wait_for(pilot, lambda: "after the wipe" in screen_text(again), what="resumed answer on screen")
        assert_terminal_safe(again)


async def test_the_approval_dialog_shows_control_characters_as_escapes(llm_env: FakeLLMServer, make_app) -> None:
    command = f"echo fine {ESC}]0;PWNED{BEL}{ESC}[2K\rdanger-touch canary"
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": command})]), Reply.text("ok"))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "do it")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="confirmation modal")
        await wait_for(pilot, lambda: "danger-touch" in screen_text(app), what="the dialog drawn")
        screen_lines = screen_text(app)
        assert not _CONTROL.search(screen_lines)
        assert "\\x1b]0;PWNED\\x07\\x1b[2K\\rdanger-touch canary" in screen_lines  # every character visible
        assert "holds 3 terminal control sequences," in screen_lines
        entry = app.query_one(ToolEntry)
        assert "\\x1b" in entry.summary and not _CONTROL.search(entry.summary)
        await pilot.press("n")
        await idle(pilot)


@pytest.mark.parametrize("tool_call", [
    ("list_dir", {"path": "."}),
    ("search", {"pattern": "needle"}),
])
async def test_a_file_name_with_escapes_is_shown_safely(
    tool_call: tuple[str, dict[str, str]], llm_env: FakeLLMServer, make_app, workspace: Path
) -> None:
    (workspace / f"report{ESC}]0;PWNED{BEL}{ESC}[2J.txt").write_text("the needle\n")
    llm_env.enqueue(Reply.tool_calls([tool_call]), Reply.text("Listed."))
    app = make_app(tools=[list_dir, search])
    async with app.run_test(size=(140, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "what is here?")
        await wait_for(pilot, lambda: bool(app.query(ToolEntry)) and app.query_one(ToolEntry).state == "done",
                       what="tool call")
        await idle(pilot)
        entry = app.query_one(ToolEntry)
        assert "report\\x1b]0;PWNED\\x07\\x1b[2J.txt" in entry.output_text  # the name, every character visible
        entry.focus()
        if not entry.expanded:
            await pilot.press("enter")
        await wait_for(pilot, lambda: "report\\x1b]0;" in screen_text(app), what="the output drawn")
        text = screen_text(app)
        assert not _CONTROL.search(text)
        assert "report\\x1b]0;" in text
    # The model gets the real name, to be able to use it.
    assert f"report{ESC}]0;PWNED{BEL}{ESC}[2J.txt" in llm_env.requests[-1]["body"]["messages"][-1]["content"]


# --- a real terminal ------------------------------------------------------------------------------------------
def _tmux(socket: str, *args: str) -> str:
    return subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, check=False).stdout


def _wait_for_screen(socket: str, text: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = _tmux(socket, "capture-pane", "-p", "-t", "app")
        if text in screen:
            return screen
        time.sleep(0.1)
    raise AssertionError(f"{text!r} did not appear; the screen was:\n{screen}")


@pytest.mark.tmux
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_in_tmux_the_title_clipboard_and_screen_are_untouched(tmp_path: Path, workspace: Path) -> None:
    """tmux obeys OSC 0/2 (the pane title) and, with set-clipboard on, OSC 52 (a paste buffer)."""
    with fake_server_process([{"text": HOSTILE, "chunk_size": 3}]) as url:
        socket = f"swebash-hygiene-{os.getpid()}"
        env = {
            "HOME": str(tmp_path), "SWEBASH_AI_HOME": str(tmp_path / "swh"), "TERM": "xterm-256color",
            "SWEBASH_AI_MODEL": "openai/fake-model", "SWEBASH_AI_API_BASE": url, "SWEBASH_AI_API_KEY": "sk-test",
            "OLLAMA_HOST": "http://127.0.0.1:9", "PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT),
            "LANG": "C.UTF-8",
        }
        app = ["env", "-i", *[f"{k}={v}" for k, v in env.items()], sys.executable, "-m", "swebash_ai"]
        subprocess.run(["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "app", "-x", "120",
                        "-y", "36", "-c", str(workspace), *app], check=True)
        try:
            _tmux(socket, "set-option", "-g", "set-clipboard", "on")
            _tmux(socket, "set-option", "-g", "allow-rename", "on")
            _wait_for_screen(socket, "Ask anything")
            title = _tmux(socket, "display-message", "-p", "-t", "app", "#{pane_title}")
            _tmux(socket, "send-keys", "-t", "app", "-l", "summarise the page")
            _tmux(socket, "send-keys", "-t", "app", "Enter")
            screen = _wait_for_screen(socket, "were removed from this answer")
            assert "after the wipe" in screen and "eight-bit" in screen
            assert "summarise the page" in screen  # the screen before the answer is still there
            assert _tmux(socket, "display-message", "-p", "-t", "app", "#{pane_title}") == title
            assert "PWNED" not in _tmux(socket, "display-message", "-p", "-t", "app", "#{window_name}")
            assert _tmux(socket, "list-buffers") == ""  # no clipboard write reached tmux
        finally:
            _tmux(socket, "kill-server")
