"""Background processes in the interactive app: started by the model through the real exec tool, listed by
``/ps``, stopped by hand with ``/ps stop ID``, and ended when the app quits (checked by PID)."""

from __future__ import annotations

import uuid

import psutil
import pytest
from tui_helpers import idle, type_and_send, wait_for

from swebash_ai.frontends.tui.widgets.chat import InfoMessage, NoticeMessage
from swebash_ai.testing.fake_server import Reply
from swebash_ai.tools.background import read_process, stop_process
from swebash_ai.tools.exec import run_command


@pytest.fixture(autouse=True)
def _unsandboxed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands here run unconfined (``--yes`` would send them to the sandbox):
    these tests are about the life of background processes, reached from the host's loopback.
    What the sandbox does to background processes is tests/sandbox's subject."""
    monkeypatch.setenv("SWEBASH_AI_EXEC_SANDBOX", "none")

pytestmark = pytest.mark.timeout(120)

TOOLS = [run_command, read_process, stop_process]


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def started(tag: str, n: int = 600) -> Reply:
    return Reply.tool_calls([("run_command", {"command": f"echo {tag}-pid=$$; exec sleep {n}", "background": True})])


def last(app, kind) -> str:  # type: ignore[no-untyped-def]
    found = app.query(kind)
    return str(found.last().render()) if found else ""


def pid_of(app, tag: str) -> int:  # type: ignore[no-untyped-def]
    text = "\n".join(str(m.get("content")) for m in app.session.conversation.messages if m.get("role") == "tool")
    return int(text.split(f"{tag}-pid=")[1].split()[0])


async def test_ps_lists_and_stops_background_processes_and_quitting_ends_the_rest(llm_env, make_app, monkeypatch):
    monkeypatch.setenv("SWEBASH_AI_TOOLS_CONFIRM", "false")  # the commands run without a modal to answer
    first, second = uuid.uuid4().hex[:8], uuid.uuid4().hex[:8]
    llm_env.enqueue(started(first, 601), started(second, 602), Reply.text("Both run."))
    app = make_app(tools=TOOLS)
    async with app.run_test(size=(140, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "/ps")
        await wait_for(pilot, lambda: "No background processes" in last(app, InfoMessage), what="empty /ps")
        await type_and_send(pilot, "start two servers")
        await wait_for(pilot, lambda: "Both run." in app.chat.last_reply_text(), what="answer", timeout=60)
        await idle(pilot)
        pids = [pid_of(app, first), pid_of(app, second)]
        assert all(alive(p) for p in pids)
        # the tool pane says the process goes on, not "done" (one-shot says "started in the background as p1")
        statuses = [entry.status_text() for entry in app.activity.entries.values()]
        assert [s.split(" · ")[0] for s in statuses] == [
            "✓ started p1 in the background",
            "✓ started p2 in the background"], statuses
        await type_and_send(pilot, "/ps")
        await wait_for(pilot, lambda: "2 running" in last(app, InfoMessage), what="/ps listing")
        listing = last(app, InfoMessage)
        assert "p1   running" in listing and f"$ echo {first}-pid=$$; exec sleep 601" in listing
        assert "p2   running" in listing and f"$ echo {second}-pid=$$; exec sleep 602" in listing
        await type_and_send(pilot, "/ps stop p1")
        await wait_for(pilot, lambda: "Stopped p1" in last(app, NoticeMessage), what="stopped by hand", timeout=30)
        assert "stopped by hand (/ps) (killed by SIGTERM)" in last(app, NoticeMessage)
        assert not alive(pids[0]) and alive(pids[1])
        await type_and_send(pilot, "/ps")
        await wait_for(pilot, lambda: "1 running" in last(app, InfoMessage), what="/ps after the stop")
        assert "p1   stopped by hand (/ps)" in last(app, InfoMessage)
        await type_and_send(pilot, "/ps stop p7")
        await wait_for(pilot, lambda: "No background process 'p7'" in last(app, NoticeMessage), what="unknown id")
    assert not alive(pids[1])  # the app quit: the process still running went with it


async def test_a_process_that_exits_by_itself_is_announced_and_listed_with_its_code(llm_env, make_app, monkeypatch):
    monkeypatch.setenv("SWEBASH_AI_TOOLS_CONFIRM", "false")
    command = "sleep 1.5; exit 2"
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": command, "background": True})]),
                    Reply.text("It runs."))
    app = make_app(tools=TOOLS)
    async with app.run_test(size=(140, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "start the server")
        await wait_for(pilot, lambda: "It runs." in app.chat.last_reply_text(), what="answer", timeout=60)
        notice = f"background process p1 `{command}` exited with code 2 after "
        await wait_for(pilot, lambda: notice in last(app, NoticeMessage), what="the exit's notice", timeout=30)
        widget = app.query(NoticeMessage).last()
        assert widget.has_class("-warning") and "/ps lists the processes" in str(widget.render())
        assert sum(notice in str(w.render()) for w in app.query(NoticeMessage)) == 1  # announced once
        await type_and_send(pilot, "/ps")
        await wait_for(pilot, lambda: "0 running" in last(app, InfoMessage), what="/ps listing")
        assert "p1   exited with code 2" in last(app, InfoMessage)


async def test_a_resumed_session_shows_the_exits_the_model_was_told(llm_env, make_app, monkeypatch):
    """The exit was news to the model on the next message (its app_notes); resuming shows it where it was said,
    before that message, as the warning it was, without pointing to a /ps that no longer lists it."""
    monkeypatch.setenv("SWEBASH_AI_TOOLS_CONFIRM", "false")
    command = "sleep 1; exit 3"
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": command, "background": True})]),
                    Reply.text("It runs."), Reply.text("It exited with code 3."))
    notice = f"background process p1 `{command}` exited with code 3 after "
    app = make_app(tools=TOOLS)
    async with app.run_test(size=(140, 40)) as pilot:
        await idle(pilot)
        await type_and_send(pilot, "start the server")
        await wait_for(pilot, lambda: "It runs." in app.chat.last_reply_text(), what="answer", timeout=60)
        await wait_for(pilot, lambda: notice in last(app, NoticeMessage), what="the exit's notice", timeout=30)
        await idle(pilot)  # the first turn has ended: the next message starts a turn of its own
        await type_and_send(pilot, "is it up?")
        await wait_for(pilot, lambda: "code 3." in app.chat.last_reply_text(), what="second answer", timeout=60)
        told = [m for m in app.session.conversation.messages if m.get("app_notes")]
        assert [m["content"] for m in told] == ["is it up?"]  # the note rode on the user's next message

    resumed = make_app(tools=TOOLS, resume_latest=True)
    async with resumed.run_test(size=(140, 40)) as pilot:
        await idle(pilot)
        await wait_for(pilot, lambda: any(notice in str(n.render()) for n in resumed.query(NoticeMessage)),
                       what="the exit's notice, resumed")
        (widget,) = [n for n in resumed.query(NoticeMessage) if notice in str(n.render())]
        assert widget.has_class("-warning")  # exit code 3: a failure, as live
        assert "/ps" not in str(widget.render())  # the process ended with the session that started it
        shown = list(resumed.chat.query("UserMessage, NoticeMessage"))
        asked = next(i for i, w in enumerate(shown) if "is it up?" in str(w.render()))
        assert shown.index(widget) == asked - 1  # where it happened: before the message the model got it with


@pytest.mark.parametrize("older", [False, True], ids=["saved-now", "saved-by-an-older-version"])
async def test_a_note_saved_as_a_message_of_its_own_resumes_as_the_notice_it_was(llm_env, make_app, older):
    """A conversation that ended with an answer: the exit note got a message of its own. Resumed, it is the
    notice it was live, never a message the user seems to have typed (nor one of an older version's files)."""
    from swebash_ai.agent.conversation import Conversation
    from swebash_ai.config.settings import load_settings
    from swebash_ai.frontends.tui.widgets.chat import UserMessage

    notice = "background process p1 `make serve` exited with code 3 after 2 s"
    conv = Conversation()
    conv.add_user("start the server", typed=True)
    conv.add_assistant("Started.")
    conv.add_note(f"[swebash-ai] Since your last request, by itself (read_process shows the last output):\n- {notice}")
    if older:  # the note as the message's content, as saved before it was kept apart
        conv.messages[-1] = {"role": "user", "content": conv.messages[-1]["app_notes"][0]}
    conv.save(load_settings().locations.sessions_dir / f"{conv.id}.jsonl")

    app = make_app(tools=TOOLS, resume_latest=True)
    async with app.run_test(size=(140, 40)) as pilot:
        await idle(pilot)
        await wait_for(pilot, lambda: any(notice in str(n.render()) for n in app.query(NoticeMessage)),
                       what="the exit's notice, resumed")
        said = [str(w.render()) for w in app.chat.query(UserMessage)]
        assert len(said) == 1 and "start the server" in said[0]  # the note is no message of the user's
        (widget,) = [n for n in app.query(NoticeMessage) if notice in str(n.render())]
        assert widget.has_class("-warning")
