"""SVG snapshots of the main screen per theme, the confirmation modal and the tool pane's states (the
narrow layout and diff colouring are checked by Pilot and unit tests). Deterministic: fixed size and
working directory, a scripted provider (no network), events fed straight to the renderer, a frozen clock
for elapsed times, no cursor blink.

Update the baselines with ``pytest tests/tui/test_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import TEST_TOOLS

from swebash_ai.agent import events as ev
from swebash_ai.agent.events import ApprovalRequest
from swebash_ai.config.settings import load_settings
from swebash_ai.frontends.tui.app import SwebashApp
from swebash_ai.frontends.tui.screens.confirm import ConfirmScreen
from swebash_ai.frontends.tui.widgets import activity
from swebash_ai.providers.scripted import ScriptedProvider
from swebash_ai.safety.verdict import Verdict
from swebash_ai.session import Session
from swebash_ai.tools.registry import ToolResult

PROJECT = Path("/home/user/project")
SIZE = (120, 36)

ANSWER = """The largest files here are:

| File | Size |
| --- | --- |
| `data/big.csv` | 12 MB |
| `logs/app.log` | 3 MB |

To remove the log safely:

```bash
rm logs/app.log
```
"""


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(activity, "clock", lambda: 1000.0)


def build_app(monkeypatch: pytest.MonkeyPatch, theme: str = "dark") -> SwebashApp:
    monkeypatch.setenv("SWEBASH_AI_THEME", theme)
    loaded = load_settings()
    session = Session(loaded, provider=ScriptedProvider(model="openai/gpt-4.1-mini"), tools=TEST_TOOLS,
                      cwd=PROJECT, probe_ollama=False)
    return SwebashApp(loaded, cwd=PROJECT, session=session, tools=TEST_TOOLS)


def finished(call_id: str, name: str, status: str, text: str, exit_code: int | None, seconds: float) -> Any:
    ok = status == "ok"
    return ev.ToolCallFinished(call_id, name, ToolResult(ok, text, status, exit_code, seconds))  # type: ignore[arg-type]


CONVERSATION: list[Any] = [
    ev.ToolCallStarted("c1", "run_command", {"command": "du -ah . | sort -rh | head -3"},
                       "$ du -ah . | sort -rh | head -3"),
    ev.ToolOutput("c1", "12M\t./data/big.csv\n3.0M\t./logs/app.log\n"),
    finished("c1", "run_command", "ok", "", 0, 0.42),
    *[ev.TextDelta(ANSWER[i:i + 16]) for i in range(0, len(ANSWER), 16)],
    ev.Usage(1234, 210, 0.0021),
    ev.TurnFinished(ANSWER),
]

STATES: list[Any] = [
    ev.ToolCallStarted("s1", "read_file", {"path": "README.md"}, "read README.md"),
    finished("s1", "read_file", "ok", "# Project\n", None, 0.01),
    ev.ToolCallStarted("s2", "run_command", {"command": "make test"}, "$ make test"),
    finished("s2", "run_command", "error", "2 tests failed", 2, 3.5),
    ev.ToolCallStarted("s3", "run_command", {"command": "sleep 999"}, "$ sleep 999"),
    finished("s3", "run_command", "timeout", "killed after 30 s", None, 30.0),
    ev.ToolCallStarted("s4", "run_command", {"command": "rm -rf build"}, "$ rm -rf build"),
    finished("s4", "run_command", "denied", "The user denied $ rm -rf build.", None, 0.0),
    ev.ToolCallStarted("s5", "run_command", {"command": "pytest -x"}, "$ pytest -x"),
    finished("s5", "run_command", "cancelled", "Cancelled by the user before it finished.", None, 1.2),
    ev.ToolCallStarted("s6", "run_command", {"command": "rm -rf dist"}, "$ rm -rf dist"),
    ev.ApprovalRequested(ApprovalRequest("s6", "run_command", "$ rm -rf dist", "rm -rf dist", str(PROJECT),
                                         Verdict.ask("deletes files"))),
    ev.ToolCallStarted("s7", "run_command", {"command": "npm install"}, "$ npm install"),
    ev.ToolOutput("s7", "added 12 packages\n"),
]


async def feed(app: SwebashApp, events: list[Any], prompt: str = "") -> None:
    await app.session_ready.wait()
    app.prompt.cursor_blink = False
    if prompt:
        app.chat.add_user(prompt)
    for event in events:
        await app.controller.handle(event)
    await app.chat.end_reply()
    app.prompt.focus()


@pytest.mark.parametrize("theme", ["dark", "light", "high-contrast"])
def test_main_screen(snap_compare: Any, monkeypatch: pytest.MonkeyPatch, theme: str) -> None:
    app = build_app(monkeypatch, theme)

    async def run_before(pilot: Any) -> None:
        await feed(app, CONVERSATION, "Which files are the biggest here, and can I delete the log?")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_tool_pane_states(snap_compare: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    app = build_app(monkeypatch)

    async def run_before(pilot: Any) -> None:
        await feed(app, STATES, "Build and test the project.")
        app.activity.entries["s2"].action_toggle_expand()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 50), run_before=run_before)


def test_confirmation_modal(snap_compare: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    app = build_app(monkeypatch)
    request = ApprovalRequest(
        "m1", "run_command", "$ rm -rf build dist", "rm -rf build dist", str(PROJECT),
        Verdict.ask("deletes files recursively (rm -r)", "forced removal ignores write protection (-f)"),
    )

    async def run_before(pilot: Any) -> None:
        await feed(app, [ev.ToolCallStarted("m1", "run_command", {"command": "rm -rf build dist"},
                                            "$ rm -rf build dist")], "Clean the build output.")
        app.push_screen(ConfirmScreen(request))
        await pilot.pause()
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
