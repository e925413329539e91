"""An answer that broke off: kept as it arrived, said to be incomplete live and again when resumed."""

from __future__ import annotations

from tui_helpers import idle, type_and_send, wait_for

from swebash_ai.frontends.tui.widgets.chat import NoticeMessage
from swebash_ai.frontends.tui.widgets.reply import AssistantMessage
from swebash_ai.testing.fake_server import Reply


async def test_cut_answer_is_kept_and_shown_incomplete_then_again_on_resume(llm_env, make_app):
    llm_env.enqueue(Reply.truncated("The first half of the answer", chunk_size=6))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "tell me everything")
        await wait_for(pilot, lambda: bool(app.query("ErrorMessage")), what="the incomplete box")
        assert "Incomplete answer" in str(app.query("ErrorMessage").last().render())
        assert "The first half of the answer" in app.query_one(AssistantMessage).source
        assert len(llm_env.requests) == 1  # part of it was shown: not asked again

    resumed = make_app(resume_latest=True)
    async with resumed.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await wait_for(pilot, lambda: bool(resumed.query(AssistantMessage)), what="resumed answer")
        assert "The first half of the answer" in resumed.query_one(AssistantMessage).source
        notices = [str(n.render()) for n in resumed.query(NoticeMessage)]
        assert any("incomplete" in n for n in notices), notices
