"""The prompt in a real terminal: pastes and bursts of keys written to a pty as one write, the prompt's text
read back exactly (see ``real_terminal.py``). One app serves every case, each sent with Enter."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from swebash_ai.testing.server_process import fake_server_process
from tests.tui.real_terminal import KEYS, RealTerminal, app_env, paste

pytestmark = [
    pytest.mark.terminal,
    pytest.mark.skipif(os.name != "posix", reason="needs a pty"),
    pytest.mark.timeout(90),
]


@pytest.fixture(scope="module")
def terminal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealTerminal]:
    home = tmp_path_factory.mktemp("home")
    workspace = tmp_path_factory.mktemp("workspace")
    with fake_server_process([], echo=True) as url, RealTerminal(app_env(home, url), workspace) as term:
        term.wait_ready()
        yield term


def keys(*names: str) -> str:
    return "".join(KEYS[name] for name in names)


def test_a_one_line_paste_arrives_once(terminal: RealTerminal) -> None:
    terminal.write(paste("single-line-paste"))
    assert terminal.sent() == "single-line-paste"


def test_a_two_line_paste_arrives_once(terminal: RealTerminal) -> None:
    terminal.write(paste("alpha\nbeta"))
    assert terminal.sent() == "alpha\nbeta"


def test_a_200_line_paste_arrives_once_in_order(terminal: RealTerminal) -> None:
    text = "\n".join(f"line {n:03d}: {'x' * (n % 50)}" for n in range(200))
    terminal.write(paste(text))
    assert terminal.sent() == text


def test_a_paste_between_typed_keys_lands_where_it_was_pasted(terminal: RealTerminal) -> None:
    terminal.write("before " + paste("middle") + " after" + keys("home") + "> ")
    assert terminal.sent() == "> before middle after"


def test_a_plain_paste_is_typed_text(terminal: RealTerminal) -> None:
    """A terminal without bracketed paste sends the text as keys (its line breaks would be Enter)."""
    terminal.write("echo 'plain paste' | wc -c")
    assert terminal.sent() == "echo 'plain paste' | wc -c"


def test_backspace_in_a_burst_is_applied_in_order(terminal: RealTerminal) -> None:
    terminal.write("abc" + keys("backspace") + "def")
    assert terminal.sent() == "abdef"


def test_editing_keys_in_one_burst(terminal: RealTerminal) -> None:
    burst = ("hello world" + keys("ctrl+w") + "there" + keys("home") + "say " + keys("end") + "!"
             + keys("left", "left") + keys("backspace") + "E" + keys("right", "right") + "?")
    # Step by step: "hello there", "say " at the start, "!" at the end, the "r" two to its left made "E", "?".
    terminal.write(burst)
    assert terminal.sent() == "say hello theEe!?"


def test_ctrl_u_in_a_burst_drops_what_was_typed_before(terminal: RealTerminal) -> None:
    terminal.write("rm -rf nothing" + keys("ctrl+u") + "ls")
    assert terminal.sent() == "ls"


def test_wide_characters_and_backspace_in_one_burst(terminal: RealTerminal) -> None:
    terminal.write("日本語x" + keys("backspace", "left") + "の" + keys("end") + " 🙂")
    assert terminal.sent() == "日本の語 🙂"


def test_keys_typed_while_the_tool_pane_has_the_focus_go_to_the_prompt(terminal: RealTerminal) -> None:
    prompt_colour = terminal.border_colour("Tools")
    terminal.write(keys("f2"))
    focused_colour = terminal.wait_for_border("Tools", lambda colour: colour != prompt_colour)
    terminal.write("typed in the pane")
    terminal.wait_for_border("Tools", lambda colour: colour != focused_colour)  # the prompt has it back
    assert terminal.sent() == "typed in the pane"


def test_escape_from_the_tool_pane_returns_to_the_prompt(terminal: RealTerminal) -> None:
    unfocused = terminal.border_colour("Tools")
    terminal.write(keys("f2"))
    terminal.wait_for_border("Tools", lambda colour: colour != unfocused)
    terminal.write(keys("escape"))
    terminal.wait_for_border("Tools", lambda colour: colour == unfocused)
    terminal.write(keys("backspace") + "after escape")  # Backspace too reaches the prompt now
    assert terminal.sent() == "after escape"


def test_keys_typed_before_the_app_has_the_terminal_are_kept_in_order(tmp_path: Path) -> None:
    """Typed while the early frame shows (Textual still loading): kept in the terminal, then applied in
    order, editing keys and a paste included."""
    with fake_server_process([], echo=True) as url, \
            RealTerminal(app_env(tmp_path / "home", url), tmp_path) as term:
        term.wait_for("Ask anything")
        term.write("abc" + keys("backspace") + "def" + paste(" pasted") + keys("home") + "> ")
        term.wait_ready()
        assert term.sent() == "> abdef pasted"
