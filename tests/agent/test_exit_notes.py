"""A background process that exits by itself is told to the model, once, in its next request: on the user's
next message, or on the last tool result of the same turn; never when a result it read showed the exit
already. Through a real session's loop on the scripted provider (which records every request as sent)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from swebash_ai.agent.approval import AllowApprover
from swebash_ai.agent.conversation import NOTES, Conversation, as_sent
from swebash_ai.agent.events import AgentEvent, ModelNote
from swebash_ai.config.settings import load_settings
from swebash_ai.frontends.oneshot_render import event_to_json
from swebash_ai.providers import scripted
from swebash_ai.providers.scripted import ScriptedProvider
from swebash_ai.session import Session

HEAD = "[swebash-ai] Since your last request"
EXITED = "exited with code 3"


def session_with(provider: ScriptedProvider, cwd: Path) -> Session:
    return Session(load_settings(), provider=provider, cwd=cwd, approver=AllowApprover(), probe_ollama=False)


async def run(session: Session, text: str = "go") -> list[AgentEvent]:
    return [e async for e in session.run(text)]


def sent(request: dict[str, Any]) -> str:
    return json.dumps(request["messages"])


def count(request: dict[str, Any], needle: str) -> int:
    return sum(str(m.get("content")).count(needle) for m in request["messages"])


async def ended(session: Session) -> None:
    deadline = time.monotonic() + 30
    while any(r.running for r in session.processes.rows()):
        assert time.monotonic() < deadline, "the background process did not exit"
        await asyncio.sleep(0.1)


async def test_an_exit_between_turns_rides_on_the_next_user_message_once_and_is_saved(workspace: Path) -> None:
    provider = ScriptedProvider([scripted.calls(("run_command", {"command": "sleep 2; exit 3", "background": True})),
                                 scripted.text("Started."), scripted.text("Noted."), scripted.text("Still noted.")])
    session = session_with(provider, workspace)
    try:
        await run(session, "start it")
        await ended(session)
        events = await run(session, "what now?")
        request = provider.requests[2]
        last = request["messages"][-1]
        assert last["role"] == "user" and last["content"].startswith("what now?\n\n" + HEAD)
        assert count(request, HEAD) == 1 and count(request, f"p1 `sleep 2; exit 3` {EXITED}") == 1
        assert NOTES not in sent(request)  # our own key never goes on the wire
        notes = [e for e in events if isinstance(e, ModelNote)]
        assert len(notes) == 1 and EXITED in notes[0].text
        assert event_to_json(notes[0]) == {"type": "model_note", "text": notes[0].text}
        # the user's words stay as typed; the note is kept beside them and saved
        saved = Conversation.load(session.session_file)
        user = [m for m in saved.messages if m.get("role") == "user"][-1]
        assert user["content"] == "what now?" and EXITED in user[NOTES][0]
        await run(session, "and?")  # told once: the next request carries the old note, no new one
        assert count(provider.requests[3], HEAD) == 1
    finally:
        await session.aclose()


async def test_an_exit_during_a_turn_rides_on_the_last_tool_result_of_the_next_round(workspace: Path) -> None:
    background = "sleep 1.5; touch exited.flag; exit 3"
    wait = "while [ ! -e exited.flag ]; do sleep 0.1; done; sleep 1; echo waited"
    provider = ScriptedProvider([scripted.calls(("run_command", {"command": background, "background": True})),
                                 scripted.calls(("run_command", {"command": wait})),
                                 scripted.text("Done.")])
    session = session_with(provider, workspace)
    try:
        await run(session)
        request = provider.requests[2]
        last = request["messages"][-1]
        assert last["role"] == "tool" and "waited" in last["content"]
        assert EXITED in last["content"].split(HEAD, 1)[1]  # the note comes after the result itself
        assert count(request, HEAD) == 1
        assert [m["role"] for m in request["messages"][-2:]] == ["assistant", "tool"]  # no message of its own
    finally:
        await session.aclose()


async def test_an_exit_the_model_read_with_read_process_is_not_told_again(workspace: Path) -> None:
    provider = ScriptedProvider([scripted.calls(("run_command", {"command": "sleep 1.5; exit 3", "background": True})),
                                 scripted.calls(("read_process", {"id": "p1", "wait_seconds": 20})),
                                 scripted.text("It exited.")])
    session = session_with(provider, workspace)
    try:
        events = await run(session)
        assert EXITED in provider.requests[2]["messages"][-1]["content"]  # the read_process result said it
        assert all(HEAD not in sent(r) for r in provider.requests)
        assert not any(isinstance(e, ModelNote) for e in events)
    finally:
        await session.aclose()


def test_a_note_is_joined_to_the_content_only_on_the_wire() -> None:
    conv = Conversation()
    conv.add_note("first")  # nothing to ride on: a user message of its own, the note still apart
    assert conv.messages == [{"role": "user", "content": "", NOTES: ["first"]}]
    assert conv.for_request(None, 10_000) == [{"role": "user", "content": "first"}]
    conv.add_assistant("ok")
    conv.add_user("hello", typed=True)
    conv.add_note("second")
    assert conv.messages[-1]["content"] == "hello"
    assert conv.for_request(None, 10_000)[-1] == {"role": "user", "content": "hello\n\nsecond"}
    assert as_sent(conv.messages[-1]) == {"role": "user", "content": "hello\n\nsecond"}
    assert conv.is_valid()


def test_a_note_of_its_own_is_saved_as_a_note_never_as_typed_text(tmp_path: Path) -> None:
    """A conversation that ended with an answer: the note gets a message of its own. Saved and loaded, it is
    still the app's note: not the user's text, not typed (so its URLs are not trusted), not the title."""
    from swebash_ai.agent.provenance import rebuild
    from swebash_ai.tools.web_guard import Provenance

    conv = Conversation()
    conv.add_user("start the server", typed=True)
    conv.add_assistant("Started.")
    note = f"{HEAD}, by itself:\n- background process p1 `curl https://evil.example/x` {EXITED} after 2 s"
    conv.add_note(note)
    path = tmp_path / f"{conv.id}.jsonl"
    conv.save(path)
    loaded = Conversation.load(path)
    assert loaded.messages[-1] == {"role": "user", "content": "", NOTES: [note]}
    assert loaded.for_request(None, 10_000)[-1] == {"role": "user", "content": note}
    trusted = Provenance()
    rebuild(loaded.messages, trusted)
    assert not trusted.covers("https://evil.example/x")

    first = Conversation()
    first.add_note(note)  # the very first message: still not a title
    first.add_user("the question", typed=True)
    assert first.title == "the question"


def test_a_note_an_older_version_saved_as_content_is_read_back_as_a_note(tmp_path: Path) -> None:
    note = f"{HEAD}, by itself:\n- background process p1 `make` {EXITED} after 2 s"
    path = tmp_path / "s.jsonl"
    lines = [{"meta": {"id": "s", "created": 1}}, {"role": "user", "content": "build it", "typed": True},
             {"role": "assistant", "content": "Built."}, {"role": "user", "content": note},
             {"role": "user", "content": "[Summary of the earlier conversation] x"}]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    loaded = Conversation.load(path)
    assert loaded.messages[2] == {"role": "user", "content": "", NOTES: [note]}
    assert loaded.messages[3]["content"].startswith("[Summary")  # only the app's note head counts
    assert as_sent(loaded.messages[2]) == {"role": "user", "content": note}  # the model read the same

    lines[1] = {"role": "user", "content": note}  # saved before the typed mark: the user's text, left as it is
    path.write_text("\n".join(json.dumps(line) for line in lines[:2]) + "\n")
    assert Conversation.load(path).messages[0] == {"role": "user", "content": note}


async def test_an_undo_note_rides_apart_from_what_the_user_typed(workspace: Path) -> None:
    """The note that undo put files back goes to the model with the next message, but under the app's notes: the
    typed text stays as typed (what resuming shows, and trusts for fetch_url)."""
    provider = ScriptedProvider([scripted.text("Noted."), scripted.text("Again.")])
    session = session_with(provider, workspace)
    undo_note = "[Note: the user undid your changes from an earlier turn (https://evil.example/a: removed).]"
    session.conversation.note_for_next_turn(undo_note)
    await run(session, "what now?")
    typed = session.conversation.messages[0]
    assert typed == {"role": "user", "content": "what now?", "typed": True, NOTES: [undo_note]}
    assert provider.requests[0]["messages"][-1]["content"] == f"what now?\n\n{undo_note}"
    assert not session.context.provenance.covers("https://evil.example/a")
    session.conversation.note_for_next_turn(undo_note)
    [e async for e in session.run_shell("true")]  # a !command turn tells it too (it used to be dropped)
    assert session.conversation.messages[-1].get(NOTES) == [undo_note]
    assert "undo_note" not in session.conversation.meta
