"""Approval modes and rules in the app: Shift+Tab, the status bar, "always allow here", /rules, trust."""

from __future__ import annotations

import os
from pathlib import Path

from tui_helpers import idle, type_and_send, wait_for

from swebash_ai.config.settings import load_settings
from swebash_ai.frontends.tui.screens.confirm import ConfirmScreen
from swebash_ai.frontends.tui.screens.trust import TrustScreen
from swebash_ai.frontends.tui.widgets.activity import ToolEntry
from swebash_ai.sandbox import detect
from swebash_ai.testing.fake_server import Reply

#: Shift+Tab's order here: auto mode is offered only where a sandbox works.
CYCLE = ["accept-edits", *(["auto"] if detect.choose("auto").ok else []), "plan", "ask"]


def status(app: object) -> str:
    return str(app.status.render())  # type: ignore[attr-defined]


async def test_shift_tab_cycles_the_mode_and_the_status_bar_shows_it(llm_env, make_app):
    app = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await idle(pilot)
        assert "ask mode" in status(app)
        seen = []
        for _ in range(len(CYCLE)):
            await pilot.press("shift+tab")
            await pilot.pause()
            seen.append((app.session.gate.mode, status(app)))
        assert [m for m, _ in seen] == CYCLE
        assert all(f"{m} mode" in text for m, text in seen)
        assert "auto mode (commands unasked, in the sandbox)" in dict(seen)["auto"]


async def test_the_mode_from_the_settings_is_shown_from_the_start(llm_env, make_app, monkeypatch):
    monkeypatch.setenv("SWEBASH_AI_APPROVAL_MODE", "plan")
    app = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await idle(pilot)
        assert "plan mode" in status(app) and app.session.gate.mode == "plan"


async def test_always_allow_here_saves_the_rule_it_shows_and_the_next_call_runs_unasked(
    llm_env, make_app, workspace: Path
):
    call = [("run_command", {"command": "danger-touch made"})]
    llm_env.enqueue(Reply.tool_calls(call), Reply.text("ok"), Reply.tool_calls(call), Reply.text("again"))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "make it")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="confirmation modal")
        shown = str(app.screen.query_one("#confirm-always").render())
        assert f"allow `danger-touch made` (and what follows) in {workspace}" in shown
        await pilot.press("w")
        await wait_for(pilot, lambda: (workspace / "made").exists(), what="the command ran")
        await idle(pilot)
        (workspace / "made").unlink()
        await type_and_send(pilot, "again")
        await wait_for(pilot, lambda: (workspace / "made").exists(), what="the second run")
        await idle(pilot)
        assert not isinstance(app.screen, ConfirmScreen)
        rules = load_settings().rules.rules
        assert len(rules) == 1 and rules[0].prefix == ("danger-touch", "made")
        assert rules[0].workspaces == (str(workspace),)
        config = Path(os.environ["SWEBASH_AI_HOME"]) / "config.toml"
        assert oct(config.stat().st_mode & 0o777) == "0o600"
        await type_and_send(pilot, "/rules")
        await idle(pilot)
        await type_and_send(pilot, "/rules remove 1")
        await idle(pilot)
        assert load_settings().rules.rules == ()
        assert app.session.gate.rules.rules == ()


async def test_a_compound_command_offers_no_rule(llm_env, make_app):
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "danger-touch a && danger-touch b"})]),
                    Reply.text("ok"))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "two")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="confirmation modal")
        assert app.screen.request.always is None and not app.screen.query("#confirm-always")
        await pilot.press("w")  # nothing to save: the dialog stays
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        await idle(pilot)


async def test_plan_mode_refuses_in_the_app_and_the_tool_pane_says_why(llm_env, make_app, workspace: Path):
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "danger-touch made"})]), Reply.text("planned"))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await pilot.press(*["shift+tab"] * (CYCLE.index("plan") + 1))
        await type_and_send(pilot, "do it")
        await wait_for(pilot, lambda: bool(app.query(ToolEntry)), what="tool entry")
        await idle(pilot)
        assert not (workspace / "made").exists()
        tool_msgs = [m for m in llm_env.requests[-1]["body"]["messages"] if m.get("role") == "tool"]
        assert "plan mode" in tool_msgs[-1]["content"]


def trust_shown(app: object) -> bool:
    """The trust question is on screen with its lines: a screen is current before its widgets are mounted (on a
    loaded machine, for a while)."""
    screen = app.screen  # type: ignore[attr-defined]
    return isinstance(screen, TrustScreen) and bool(screen.query("#trust-lines"))


async def test_a_project_that_would_allow_something_asks_to_be_trusted(llm_env, make_app, workspace: Path):
    rules = workspace / ".swebash-ai" / "rules.toml"
    rules.parent.mkdir()
    rules.write_text('[[rules]]\nprefix = ["danger-touch"]\ndecision = "allow"\n')
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: trust_shown(app), what="trust prompt")
        assert "danger-touch" in str(app.screen.query_one("#trust-lines").render())
        await pilot.press("t")
        await idle(pilot)
        assert app.session.project.trusted and not app.session.project.needs_trust
    assert load_settings().trusted_projects[0].path == str(rules)


async def test_a_project_that_changed_since_it_was_trusted_says_so_in_the_question(
    llm_env, make_app, workspace: Path
):
    # The start-up notice that says "changed since you trusted it" gives way to the question, which looked the
    # same as the first one: a changed file (a hook script, say) was trusted again at a glance, out of habit.
    rules = workspace / ".swebash-ai" / "rules.toml"
    rules.parent.mkdir()
    rules.write_text('[[rules]]\nprefix = ["danger-touch"]\ndecision = "allow"\n')

    def question(app: object) -> str:
        return " ".join(str(w.render()) for w in app.screen.query("Static"))  # type: ignore[attr-defined]

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: trust_shown(app), what="trust prompt")
        assert "changed since" not in question(app)
        await pilot.press("t")
        await idle(pilot)
    rules.write_text('[[rules]]\nprefix = ["danger-touch"]\ndecision = "allow"\n\n'
                     '[[rules]]\nprefix = ["rm"]\ndecision = "allow"\n')
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: trust_shown(app), what="trust prompt")
        assert "changed since you trusted" in question(app), question(app)
        await pilot.press("n")
        await idle(pilot)


async def test_not_trusting_a_project_says_what_follows_once(llm_env, make_app, workspace: Path):
    # The start-up notice ("its allow rules wait until you trust it") came on top of the question and of the
    # answer's own notice: the same news twice in the chat.
    from swebash_ai.frontends.tui.widgets.chat import NoticeMessage

    rules = workspace / ".swebash-ai" / "rules.toml"
    rules.parent.mkdir()
    rules.write_text('[[rules]]\nprefix = ["danger-touch"]\ndecision = "allow"\n')
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: trust_shown(app), what="trust prompt")
        await pilot.press("n")
        await idle(pilot)
        about = [str(n.render()) for n in app.query(NoticeMessage) if "rules.toml" in str(n.render())]
        assert len(about) == 1 and "its allow rules and hooks do not" in about[0], about


async def test_switching_the_model_keeps_the_mode_chosen_with_shift_tab(llm_env, make_app):
    # /model builds a new session from the settings, whose mode is "ask": the mode the user chose must survive
    # the switch, in the gate that decides and in the status bar that shows it.
    app = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await idle(pilot)
        await pilot.press(*["shift+tab"] * (CYCLE.index("plan") + 1))
        await pilot.pause()
        assert app.session.gate.mode == "plan"
        old = app.session
        await type_and_send(pilot, "/model openai/other-model")
        await wait_for(pilot, lambda: app.session is not old and app.session.model == "openai/other-model",
                       what="model switch")
        await idle(pilot)
        assert app.session.gate.mode == "plan"
        assert "plan mode" in status(app) and "openai/other-model" in status(app)
        await pilot.press("shift+tab")  # and cycling goes on from there
        await pilot.pause()
        assert app.session.gate.mode == "ask" and "ask mode" in status(app)
