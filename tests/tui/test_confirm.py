"""The confirmation modal's rendering of what is asked."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from swebash_ai.frontends.tui.screens.confirm import ConfirmScreen, looks_like_diff, render_detail
from swebash_ai.words import count

if TYPE_CHECKING:
    from swebash_ai.agent.events import ApprovalRequest

DIFF = "--- a/config.py\n+++ b/config.py\n@@ -1,2 +1,2 @@\n import os\n-DEBUG = True\n+DEBUG = False\n"


def test_a_command_is_shown_verbatim():
    text = "rm -rf build [not markup] $(whoami)"
    assert not looks_like_diff(text)
    assert render_detail(text).plain == text


def test_a_diff_is_coloured_by_theme_variables():
    assert looks_like_diff(DIFF)
    content = render_detail(DIFF)
    assert content.plain == DIFF.rstrip("\n")
    styles = {str(span.style) for span in content.spans}
    assert {"$text-success", "$text-error", "$text-accent"} <= styles


def test_argument_display_leaves_out_unset_optionals() -> None:
    from swebash_ai.frontends.tui.widgets.activity import format_arguments

    assert format_arguments({"command": "ls", "timeout": None, "cwd": None}) == '{\n  "command": "ls"\n}'
    assert format_arguments("{bad json") == "{bad json"


async def test_a_fetch_question_says_the_session_answer_covers_the_host() -> None:
    from textual.app import App
    from textual.widgets import Button

    from swebash_ai.agent.events import ApprovalRequest
    from swebash_ai.frontends.tui.screens.confirm import ConfirmScreen
    from swebash_ai.safety.verdict import Verdict

    def request(tool: str) -> ApprovalRequest:
        return ApprovalRequest(call_id="c1", tool=tool, summary="fetch https://x.example/a?d=1",
                               detail="https://x.example/a?d=1", cwd="/tmp", verdict=Verdict.ask("made up"))

    labels: dict[str, str] = {}
    app = App()
    async with app.run_test() as pilot:
        for tool in ("fetch_url", "run_command"):
            await app.push_screen(ConfirmScreen(request(tool)))
            await pilot.pause()
            labels[tool] = str(app.screen.query_one("#allow_session", Button).label)
            app.pop_screen()
            await pilot.pause()
    assert labels == {"fetch_url": "Allow this host for session (a)", "run_command": "Allow for session (a)"}


async def test_the_dialog_counts_each_control_sequence_and_invisible_character_once() -> None:
    from textual.app import App
    from textual.widgets import Static

    from swebash_ai.agent.events import ApprovalRequest
    from swebash_ai.frontends.tui.screens.confirm import ConfirmScreen
    from swebash_ai.safety.verdict import Verdict

    esc, rlo = "\x1b", "\u202e"
    command = f"echo ok{esc}[2K\rrm -rf ~/{esc}]0;PWNED\x07 #{rlo}txt"
    cases = [
        # the summary repeats the command: 3 sequences and 1 invisible character, not twice that
        (ApprovalRequest("c1", "run_command", f"$ {command}", command, "/ws", Verdict.ask("deletes files"),
                         {"command": command, "timeout": None}), (3, 1)),
        # a tool without a preview: its detail is JSON, where a control is the text \u001b; what runs holds one
        (ApprovalRequest("c2", "mcp_tool", "mcp_tool", '{"text": "a\\u001b[2Kb"}', "/ws", Verdict.ask("asks"),
                         {"text": f"a{esc}[2Kb"}), (1, 0)),
    ]
    app = App()
    async with app.run_test() as pilot:
        for request, (controls, invisible) in cases:
            await app.push_screen(ConfirmScreen(request))
            await pilot.pause()
            said = str(app.screen.query_one("#confirm-controls", Static).render())
            assert f"holds {controls} terminal control sequence(s)" in said
            marked = app.screen.query("#confirm-invisible")
            assert (str(marked.first(Static).render()) if marked else "") == (
                f"⚠ holds {invisible} invisible or direction-changing character, shown as <U+....>: it may not "
                "read as it runs" if invisible else "")
            app.pop_screen()
            await pilot.pause()
            assert request.hidden() == (controls, invisible)


async def test_every_answer_button_is_whole_in_a_narrow_terminal() -> None:
    """At 80 columns the buttons of one row did not fit: "Describe (d)" was cut to "Des", and with "Always
    here (w)" or the per-host label more went off the dialog's edge. Each button must be wholly visible."""
    from pathlib import Path

    from textual.app import App
    from textual.widgets import Button

    import swebash_ai.frontends.tui.app as tui_app
    from swebash_ai.agent.events import ApprovalRequest
    from swebash_ai.frontends.tui.screens.confirm import ConfirmScreen
    from swebash_ai.safety.verdict import Verdict

    class Styled(App[None]):
        CSS_PATH = str(Path(tui_app.__file__).with_name("app.tcss"))

    always = {"tool": "run_command", "prefix": ["make"], "decision": "allow", "workspaces": ["/tmp/p"]}
    cases = [("run_command", always), ("run_command", None), ("fetch_url", None)]
    for width, height in ((80, 24), (60, 30), (140, 40)):
        app = Styled()
        async with app.run_test(size=(width, height)) as pilot:
            for tool, rule in cases:
                request = ApprovalRequest(call_id="c1", tool=tool, summary="make all", detail="make all", cwd="/tmp/p",
                                          verdict=Verdict.ask("not on the read-only list: make"), always=rule)
                await app.push_screen(ConfirmScreen(request))
                await pilot.pause()
                dialog = app.screen.query_one("#confirm-dialog").content_region
                buttons = list(app.screen.query(Button))
                assert len(buttons) == (5 if rule else 4)
                for button in buttons:
                    region = button.region
                    assert region.width >= len(str(button.label)), (width, tool, str(button.label))
                    assert dialog.x <= region.x and region.right <= dialog.right, (width, tool, str(button.label))
                    assert dialog.y <= region.y and region.bottom <= dialog.bottom, (width, tool, str(button.label))
                if app.screen.query_one("#confirm-buttons").has_class("-two-columns"):  # even columns
                    for column in (buttons[0::2], buttons[1::2]):
                        assert len({(b.region.x, b.region.width) for b in column}) == 1, (width, tool)
                app.pop_screen()
                await pilot.pause()


def _command_request(**arguments: object) -> ApprovalRequest:
    """The request the loop builds for run_command, from the tool's own summary and preview."""
    from types import SimpleNamespace

    from swebash_ai.agent.events import ApprovalRequest
    from swebash_ai.safety.verdict import Verdict
    from swebash_ai.tools.exec import _describe, _preview

    args = SimpleNamespace(**{"cwd": None, "background": False, "timeout": None, **arguments})
    return ApprovalRequest(call_id="c1", tool="run_command", summary=_describe(args), detail=_preview(None, args),
                           cwd="/tmp", verdict=Verdict.ask("made up"))


@pytest.mark.parametrize("arguments", [
    {"command": "npm run dev", "background": True},  # "(background)" on the summary, in words in the detail
    {"command": "make", "cwd": "sub"},  # "(in sub)" likewise
    {"command": "pytest", "timeout": 30},  # the detail adds the timeout
    {"command": "echo " + "x" * 200},  # a summary cut at 120 characters
])
def test_a_command_is_asked_about_once(arguments: dict[str, object]) -> None:
    from swebash_ai.frontends.prompt_approver import format_request

    request = _command_request(**arguments)
    assert request.heading is None
    command = str(arguments["command"])
    assert format_request(request).count(command[:60]) == 1


@pytest.mark.parametrize(("summary", "detail", "heading"), [
    ("$ ls", "$ ls", None),  # a plain command is its own summary
    ("fetch https://x.example/a", "https://x.example/a\n(host x.example)", "fetch https://x.example/a"),  # says more
    ("mcp__t__create(title=x)", '{"title": "x"}', "mcp__t__create(title=x)"),  # arguments as JSON: the name helps
])
def test_the_heading_is_the_summary_when_it_adds_to_the_detail(summary: str, detail: str,
                                                               heading: str | None) -> None:
    from swebash_ai.agent.events import ApprovalRequest
    from swebash_ai.safety.verdict import Verdict

    request = ApprovalRequest(call_id="c1", tool="t", summary=summary, detail=detail, cwd="/", verdict=Verdict.ask("x"))
    assert request.heading == heading


async def test_the_dialog_shows_a_background_command_once() -> None:
    from textual.app import App

    from swebash_ai.frontends.tui.screens.confirm import ConfirmScreen

    app = App()
    async with app.run_test() as pilot:
        await app.push_screen(ConfirmScreen(_command_request(command="npm run dev", background=True)))
        await pilot.pause()
        assert not app.screen.query("#confirm-summary")
        text = "\n".join(str(w.render()) for w in app.screen.query("Static"))
        assert text.count("npm run dev") == 1 and "in the background" in text


async def test_controls_in_the_lines_around_an_edit_are_counted_in_the_warning(workspace: Path) -> None:
    """An edit of one line beside a line of the file that wipes the screen: the diff draws that context line
    with its escape, and the warning counts it, in the dialog and in the terminal prompt alike; a write whose
    content holds the same line counts it once."""
    from textual.app import App
    from textual.widgets import Static

    from swebash_ai.agent.events import ApprovalRequest
    from swebash_ai.config.settings import load_settings
    from swebash_ai.frontends.prompt_approver import format_request
    from swebash_ai.safety.paths import PathPolicy
    from swebash_ai.safety.verdict import Verdict
    from swebash_ai.tools.fs_write import edit_file, write_file
    from swebash_ai.tools.registry import ToolContext

    text = "import os\nprint('\x1b[2J\x1b]0;pwned\x07')  # \u202e\nDEBUG = True\n"
    (workspace / "config.py").write_text(text)
    ctx = ToolContext(settings=load_settings().settings, cwd=workspace, path_policy=PathPolicy(roots=[workspace]))
    calls = [
        (edit_file, {"path": "config.py", "old": "DEBUG = True", "new": "DEBUG = False"}, (2, 1)),  # the context
        (write_file, {"path": "config.py", "content": text.replace("True", "False")}, (2, 1)),  # in the content
        (edit_file, {"path": "config.py", "old": "import os", "new": "import sys"}, (2, 1)),  # context below
    ]
    app = App()
    async with app.run_test() as pilot:
        for tool, arguments, (controls, invisible) in calls:
            args = tool.parse_arguments(arguments)
            detail = tool.preview(ctx, args)
            assert detail is not None
            request = ApprovalRequest("c", tool.name, tool.name, detail, str(workspace), Verdict.ask("writes"),
                                      arguments)
            assert request.hidden() == (controls, invisible), (tool.name, arguments)
            prompt = format_request(request)
            assert "\\x1b[2J" in prompt and f"holds {count(controls, 'terminal control sequence')}" in prompt
            await app.push_screen(ConfirmScreen(request))
            await pilot.pause()
            said = str(app.screen.query_one("#confirm-controls", Static).render())
            assert f"holds {controls} terminal control sequence(s)" in said
            app.pop_screen()
            await pilot.pause()


async def test_a_sandboxed_command_offers_outside_as_its_own_answer() -> None:
    """A yes keeps the command in the sandbox; "o" (or its button) runs it outside; a request that would not
    be confined offers no such answer, and "o" does nothing there."""
    from textual.app import App
    from textual.widgets import Button

    from swebash_ai.agent.approval import Decision
    from swebash_ai.agent.events import ApprovalRequest
    from swebash_ai.safety.verdict import Verdict

    def request(sandboxed: bool) -> ApprovalRequest:
        return ApprovalRequest(call_id="c1", tool="run_command", summary="$ npm install", detail="npm install",
                               cwd="/ws", verdict=Verdict.ask("installs"), sandboxed=sandboxed)

    answers: list[Decision | None] = []
    app = App()
    async with app.run_test(size=(80, 30)) as pilot:
        await app.push_screen(ConfirmScreen(request(True)), answers.append)
        await pilot.pause()
        assert app.screen.query("#allow_outside") and "runs in the sandbox" in str(
            app.screen.query_one("#confirm-sandbox").render())
        await pilot.press("o")
        await pilot.pause()
        await app.push_screen(ConfirmScreen(request(False)), answers.append)
        await pilot.pause()
        assert not app.screen.query("#allow_outside") and app.screen.query_one("#deny", Button)
        await pilot.press("o")  # not offered: nothing happens
        await pilot.press("n")
        await pilot.pause()
    assert answers == [Decision.ALLOW_OUTSIDE, Decision.DENY]
