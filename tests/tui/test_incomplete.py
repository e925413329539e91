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


async def test_answer_the_user_stopped_says_so_on_resume_not_that_it_broke_off(llm_env, make_app):
    words = " ".join(f"word{i}" for i in range(400))
    llm_env.enqueue(Reply.text(words, chunk_size=8, delay=0.02))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "talk a lot")
        await wait_for(pilot, lambda: "word3" in app.chat.last_reply_text(), what="streaming")
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: any("Cancelled" in str(n.render()) for n in app.query(NoticeMessage)),
                       what="the cancel")

    resumed = make_app(resume_latest=True)
    async with resumed.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await wait_for(pilot, lambda: bool(resumed.query(AssistantMessage)), what="resumed answer")
        notices = [str(n.render()) for n in resumed.query(NoticeMessage)]
        assert any("You stopped this answer" in n for n in notices), notices
        assert not any("broke off" in n for n in notices), notices


async def test_cut_answer_on_resume_says_the_stream_broke_off(llm_env, make_app):
    llm_env.enqueue(Reply.truncated("The first half of the answer", chunk_size=6))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "tell me everything")
        await wait_for(pilot, lambda: bool(app.query("ErrorMessage")), what="the incomplete box")

    resumed = make_app(resume_latest=True)
    async with resumed.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        await wait_for(pilot, lambda: bool(resumed.query(AssistantMessage)), what="resumed answer")
        notices = [str(n.render()) for n in resumed.query(NoticeMessage)]
        assert any("stream broke off" in n for n in notices), notices
        assert not any("You stopped" in n for n in notices), notices
