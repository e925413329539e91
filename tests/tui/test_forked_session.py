"""The app resumed a session that another instance then saved: its turn is kept in a fork, and it says so."""

from __future__ import annotations

from tui_helpers import idle, type_and_send, wait_for

from swebash_ai.agent.conversation import Conversation
from swebash_ai.agent.session_files import list_sessions
from swebash_ai.config.settings import load_settings
from swebash_ai.frontends.tui.widgets.chat import NoticeMessage
from swebash_ai.testing.fake_server import Reply

SHARED = "20260101-000000-5e55ed"


async def test_a_save_that_forks_is_shown_as_a_notice(llm_env, make_app):
    folder = load_settings().locations.sessions_dir
    first = Conversation(id=SHARED)
    first.add_user("first question")
    first.add_assistant("First answer.")
    first.save(folder / f"{SHARED}.jsonl")

    llm_env.enqueue(Reply.text("Answer in the app."))
    app = make_app(resume=SHARED)
    async with app.run_test(size=(120, 40)) as pilot:
        await idle(pilot)
        other = Conversation.load(folder / f"{SHARED}.jsonl")  # another instance adds a turn meanwhile
        other.add_user("from elsewhere")
        other.add_assistant("Elsewhere.")
        assert other.save(folder / f"{SHARED}.jsonl") is None
        await type_and_send(pilot, "from the app")

        def forked() -> list[str]:
            return [str(n.render()) for n in app.query(NoticeMessage) if "another swebash-ai" in str(n.render())]

        await wait_for(pilot, lambda: bool(forked()), what="the fork notice")
        assert app.session is not None
        fork_id = app.session.conversation.id
        assert fork_id != SHARED and f"new session {fork_id}" in forked()[0]
    kept = Conversation.load(folder / f"{SHARED}.jsonl")
    assert [m["content"] for m in kept.messages][-2:] == ["from elsewhere", "Elsewhere."]
    fork = Conversation.load(folder / f"{fork_id}.jsonl")
    assert [m["content"] for m in fork.messages][-2:] == ["from the app", "Answer in the app."]
    assert len(list_sessions(folder)) == 2
