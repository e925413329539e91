"""The plan panel and the question modal, through full turns against the loopback fake LLM server."""

from __future__ import annotations

from conftest import TEST_TOOLS
from tui_helpers import idle, type_and_send, wait_for

from swebash_ai.frontends.tui.screens.ask import AskScreen
from swebash_ai.frontends.tui.widgets.plan import PlanPanel
from swebash_ai.testing.fake_server import FakeLLMServer, Reply
from swebash_ai.tools.ask import ask_user
from swebash_ai.tools.plan import update_plan

TOOLS = [*TEST_TOOLS, update_plan, ask_user]
STEPS = [{"step": "Read the failing test", "status": "completed"},
         {"step": "Fix the parser", "status": "in_progress"},
         {"step": "Run the tests", "status": "pending"}]


def last_tool_result(server: FakeLLMServer) -> str:
    return str([m for m in server.requests[-1]["body"]["messages"] if m.get("role") == "tool"][-1]["content"])


async def test_the_plan_shows_live_and_comes_back_on_resume(llm_env, make_app):
    llm_env.enqueue(Reply.tool_calls([("update_plan", {"plan": STEPS})]), Reply.text("Working on it."))
    app = make_app(tools=TOOLS)
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        panel = app.query_one("#plan", PlanPanel)
        assert not panel.display  # no plan yet: no panel
        await type_and_send(pilot, "fix the parser")
        await wait_for(pilot, lambda: panel.display, what="plan panel")
        await idle(pilot)
        shown = str(panel.render())
        assert "✓ Read the failing test" in shown and "▸ Fix the parser" in shown and "○ Run the tests" in shown
        assert panel.border_title == "Plan 1/3"
        session_id = app.session.conversation.id
        await type_and_send(pilot, "/new")
        await wait_for(pilot, lambda: not panel.display, what="plan hidden by /new")
    resumed = make_app(tools=TOOLS, resume=session_id)
    async with resumed.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await wait_for(pilot, lambda: resumed.query_one("#plan", PlanPanel).display, what="plan after resume")
        assert "▸ Fix the parser" in str(resumed.query_one("#plan", PlanPanel).render())


async def test_a_question_is_answered_with_a_number_key(llm_env, make_app):
    question = {"question": "Which database?", "options": ["sqlite", "postgres"]}
    llm_env.enqueue(Reply.tool_calls([("ask_user", question)]), Reply.text("Postgres it is."))
    app = make_app(tools=TOOLS)
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "set up a database")
        await wait_for(pilot, lambda: isinstance(app.screen, AskScreen), what="question modal")
        assert app.screen.question.options == ("sqlite", "postgres")
        await pilot.press("2")
        await idle(pilot)
        assert not isinstance(app.screen, AskScreen)
    assert last_tool_result(llm_env) == "The user chose option 2: postgres"


async def test_free_text_and_escape(llm_env, make_app):
    llm_env.enqueue(Reply.tool_calls([("ask_user", {"question": "Name the branch?"})]), Reply.text("ok"),
                    Reply.tool_calls([("ask_user", {"question": "Anything else?", "options": ["no"]})]),
                    Reply.text("ok"))
    app = make_app(tools=TOOLS)
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "make a branch")
        await wait_for(pilot, lambda: isinstance(app.screen, AskScreen), what="question modal")
        await pilot.press(*"fix-42", "enter")
        await idle(pilot)
        assert last_tool_result(llm_env) == "The user answered: fix-42"
        await type_and_send(pilot, "more")
        await wait_for(pilot, lambda: isinstance(app.screen, AskScreen), what="second question")
        await pilot.press("escape")
        await idle(pilot)
        assert app.session is not None and app.session.conversation.is_valid()
    assert last_tool_result(llm_env).startswith("The user dismissed the question without answering.")
