"""Conversation invariants: trimming by whole turns, repair, JSONL save/load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swebash_ai.agent.conversation import (
    BROKE_OFF,
    STOPPED,
    UNSAID,
    Conversation,
    title_of,
    why_incomplete,
)
from swebash_ai.agent.session_files import find_session, list_sessions
from swebash_ai.frontends.oneshot import with_piped_context
from swebash_ai.providers.base import ToolCall


def with_tool_turns(n: int, size: int = 400) -> Conversation:
    conv = Conversation()
    for i in range(n):
        conv.add_user(f"question {i}")
        conv.add_assistant("", [ToolCall(f"c{i}", "read_file", json.dumps({"path": f"f{i}"}))])
        conv.add_tool_result(f"c{i}", "read_file", "x" * size)
        conv.add_assistant(f"answer {i}")
    return conv


def test_trim_drops_whole_old_turns_and_never_splits_a_call_from_its_result() -> None:
    conv = with_tool_turns(20)
    sent = conv.for_request("SYSTEM", budget_tokens=600)
    assert sent[0] == {"role": "system", "content": "SYSTEM"}
    assert sent[1]["role"] == "user"  # starts at a turn boundary
    assert sent[-1] == {"role": "assistant", "content": "answer 19"}
    assert len(sent) < 1 + 4 * 20
    trimmed = Conversation(messages=sent[1:])
    assert trimmed.is_valid()
    assert len(conv.messages) == 80  # the history itself is untouched


def test_last_turn_is_always_sent_even_over_budget() -> None:
    conv = with_tool_turns(1, size=10_000)
    assert len(conv.for_request(None, budget_tokens=10)) == 4


def test_repair_answers_unanswered_calls() -> None:
    conv = Conversation()
    conv.add_user("go")
    conv.add_assistant("", [ToolCall("a", "x", "{}"), ToolCall("b", "y", "{}")])
    conv.add_tool_result("a", "x", "done")
    assert not conv.is_valid() and conv.unanswered_calls() == [("b", "y")]
    assert conv.repair() == 1
    assert conv.is_valid() and conv.messages[-1]["content"].startswith("Cancelled")


def test_invalid_argument_json_is_not_stored_raw() -> None:
    conv = Conversation()
    conv.add_assistant("", [ToolCall("a", "x", '{"path": "a')])
    stored = conv.messages[0]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(stored) == {"_invalid_arguments": '{"path": "a'}


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    conv = with_tool_turns(2)
    conv.meta["model"] = "openai/x"
    path = tmp_path / "s" / f"{conv.id}.jsonl"
    conv.save(path)
    loaded = Conversation.load(path)
    assert loaded.messages == conv.messages and loaded.id == conv.id and loaded.meta["model"] == "openai/x"
    assert not list(path.parent.glob("*.tmp"))


def test_load_skips_a_torn_last_line_and_repairs(tmp_path: Path) -> None:
    conv = Conversation()
    conv.add_user("go")
    conv.add_assistant("", [ToolCall("a", "x", "{}")])
    path = tmp_path / "s.jsonl"
    conv.save(path)
    with path.open("a") as fh:
        fh.write('{"role": "tool", "tool_call_id": "a", "con')  # crash mid-write
    loaded = Conversation.load(path)
    assert loaded.is_valid() and loaded.messages[-1]["tool_call_id"] == "a"


def test_list_and_find_sessions(tmp_path: Path) -> None:
    a, b = Conversation(id="20260101-000000-aaaaaa"), Conversation(id="20260102-000000-bbbbbb")
    a.add_user("first question")
    b.add_user("second question")
    a.save(tmp_path / f"{a.id}.jsonl")
    b.save(tmp_path / f"{b.id}.jsonl")
    sessions = list_sessions(tmp_path)
    assert [s.title for s in sessions] == ["second question", "first question"]
    assert find_session(tmp_path, None) == tmp_path / f"{b.id}.jsonl"
    assert find_session(tmp_path, "20260101") == tmp_path / f"{a.id}.jsonl"
    assert find_session(tmp_path, "2026") is None  # ambiguous prefix


def test_an_incomplete_answer_is_saved_as_such_and_never_sent_with_the_mark(tmp_path: Path) -> None:
    conv = Conversation()
    conv.add_user("tell me")
    conv.add_assistant("half of it", incomplete=BROKE_OFF)
    conv.add_user("go on")
    path = tmp_path / "s.jsonl"
    conv.save(path)
    loaded = Conversation.load(path)
    assert loaded.messages[1] == {"role": "assistant", "content": "half of it", "incomplete": "broke_off"}
    sent = loaded.for_request("system", 10_000)
    assert {"role": "assistant", "content": "half of it"} in sent
    assert not any("incomplete" in m for m in sent)
    assert loaded.messages[1]["incomplete"] == BROKE_OFF  # the request's copy, not the history, lost the mark


@pytest.mark.parametrize(("saved", "why"), [
    ({"role": "assistant", "content": "all of it"}, None),  # a whole answer
    ({"role": "assistant", "content": "half", "incomplete": "stopped"}, STOPPED),  # the user stopped it
    ({"role": "assistant", "content": "half", "incomplete": "broke_off"}, BROKE_OFF),  # the stream broke off
    ({"role": "assistant", "content": "half", "incomplete": True}, UNSAID),  # saved before the reason was kept
    ({"role": "assistant", "content": "half", "incomplete": "later"}, UNSAID),  # a reason a newer version knows
    ({"role": "assistant", "content": "half", "incomplete": False}, None),  # marked whole
])
def test_why_an_answer_is_incomplete_is_read_from_the_saved_message(saved: dict[str, object], why: str | None) -> None:
    assert why_incomplete(saved) == why


def test_a_stopped_answer_and_a_broken_one_are_saved_apart(tmp_path: Path) -> None:
    conv = Conversation()
    conv.add_user("tell me")
    conv.add_assistant("half", incomplete=STOPPED)
    conv.add_user("again")
    conv.add_assistant("half again", incomplete=BROKE_OFF)
    path = tmp_path / "s.jsonl"
    conv.save(path)
    loaded = Conversation.load(path)
    assert [why_incomplete(m) for m in loaded.messages] == [None, STOPPED, None, BROKE_OFF]
    assert not any("incomplete" in m for m in loaded.for_request("system", 10_000))  # the wire is as before


@pytest.mark.parametrize(("content", "title"), [
    ("why is the build red?", "why is the build red?"),
    # piped input follows the question past a blank line: the note and the data are the app's, not the title
    (with_piped_context("why?", b"line one\nline two\n", 18), "why?"),
    # @file attachments follow the typed text the same way
    ("explain @notes.txt\n\n[Attached by the user: notes.txt (text, 2 lines)]\n```\n1  a\n```", "explain @notes.txt"),
    # an undo note goes in front of the next question
    ("[Note: the user undid your changes from an earlier turn (a.txt). Those files are back to their state "
     "before that turn; read them again before relying on their content.]\n\ncarry on", "carry on"),
    # a question of several lines: its first line
    ("summarize this:\n\nsome pasted text", "summarize this:"),
    ("  " + "x" * 70, "x" * 60 + "…"),
])
def test_a_title_is_the_first_line_the_user_typed(content: str, title: str) -> None:
    assert title_of(content) == title


def test_listed_and_loaded_titles_leave_out_app_context(tmp_path: Path) -> None:
    conv = Conversation()
    conv.add_user("[I ran read_file {} myself; result follows]\nabc")  # a !tool note, not typed
    conv.add_user(with_piped_context("what failed?", b"error: x\n" * 40, 360), typed=True)
    conv.save(tmp_path / f"{conv.id}.jsonl")
    assert [s.title for s in list_sessions(tmp_path)] == ["what failed?"]
    assert Conversation.load(tmp_path / f"{conv.id}.jsonl").title == "what failed?"


def test_a_session_begun_with_a_command_the_user_ran_is_titled_by_that_command(tmp_path: Path) -> None:
    conv = Conversation()
    call = ToolCall("c1", "run_command", json.dumps({"command": "git status"}))
    conv.add_user_run(call, "On branch main\n", typed="git status")
    conv.save(tmp_path / f"{conv.id}.jsonl")
    assert [s.title for s in list_sessions(tmp_path)] == ["!git status"]  # not "[I ran run_command ..."
    conv.add_user("why is it dirty?", typed=True)
    assert conv.title == "!git status"  # what came first


def test_a_compacted_session_keeps_its_title(tmp_path: Path) -> None:
    from swebash_ai.agent.compaction import apply_summary

    conv = Conversation()
    conv.add_user("first question", typed=True)
    conv.add_assistant("first answer")
    conv.add_user("second question", typed=True)
    apply_summary(conv, 2, "they asked a first question")
    assert conv.title == "first question"
    path = tmp_path / f"{conv.id}.jsonl"
    conv.save(path)
    assert Conversation.load(path).title == "first question"


def _old_version_file(path: Path, meta: dict[str, object], messages: list[dict[str, object]]) -> bytes:
    """A session file as a version before the title rule wrote it: its title is the whole first user message."""
    lines = [json.dumps({"meta": meta})] + [json.dumps(m) for m in messages]
    path.write_text("\n".join(lines) + "\n")
    return path.read_bytes()


def test_a_session_titled_by_an_older_version_is_listed_with_todays_title_and_left_as_it_is(tmp_path: Path) -> None:
    piped = with_piped_context("what failed?", b"error: x\n" * 40, 360)
    old_title = " ".join(piped.split())[:60] + "…"  # how the older version titled it
    shell_note = "[I ran read_file {} myself; result follows]\nabc"
    cases = {
        # the typed message holds piped input: its first line only
        "20260101-000000-aaaaaa": ([{"role": "user", "content": piped, "typed": True}], "what failed?"),
        # a !tool note came first: the first typed message, not the note
        "20260102-000000-bbbbbb": ([{"role": "user", "content": shell_note}, {"role": "assistant", "content": "ok"},
                                    {"role": "user", "content": "and now?", "typed": True}], "and now?"),
        # saved before the typed mark: the first user message, as a loaded conversation titles it
        "20260103-000000-cccccc": ([{"role": "user", "content": "summarize this:\n\nsome pasted text"}],
                                   "summarize this:"),
    }
    before = {}
    for n, (sid, (messages, _)) in enumerate(cases.items()):
        before[sid] = _old_version_file(tmp_path / f"{sid}.jsonl",
                                        {"id": sid, "created": 1, "updated": 10 + n, "title": old_title}, messages)
    listed = {s.id: s.title for s in list_sessions(tmp_path)}
    assert listed == {sid: title for sid, (_, title) in cases.items()}
    assert listed == {sid: Conversation.load(tmp_path / f"{sid}.jsonl").title for sid in cases}
    assert {sid: (tmp_path / f"{sid}.jsonl").read_bytes() for sid in cases} == before  # nothing rewritten


def test_an_older_title_is_kept_when_the_first_messages_do_not_settle_it(tmp_path: Path) -> None:
    # compacted: the question the session began with is gone, so the saved title is all there is
    _old_version_file(tmp_path / "20260101-000000-aaaaaa.jsonl",
                      {"id": "20260101-000000-aaaaaa", "updated": 2, "title": "old title", "compactions": 1},
                      [{"role": "user", "content": "[Summary of the earlier conversation]\n..."}])
    # no typed message among the first ones read, and more follow: reading on would cost the whole file
    many = [{"role": "user", "content": f"[I ran read_file {{}} myself; result follows]\n{i}"} for i in range(40)]
    _old_version_file(tmp_path / "20260102-000000-bbbbbb.jsonl",
                      {"id": "20260102-000000-bbbbbb", "updated": 1, "title": "old title too"},
                      [*many, {"role": "user", "content": "late", "typed": True}])
    assert [s.title for s in list_sessions(tmp_path)] == ["old title", "old title too"]


def test_a_session_saved_now_is_listed_from_its_header_alone(tmp_path: Path) -> None:
    conv = Conversation(id="20260101-000000-aaaaaa")
    conv.add_user("the question", typed=True)
    path = tmp_path / f"{conv.id}.jsonl"
    conv.save(path)
    header = json.loads(path.read_text().splitlines()[0])["meta"]
    assert header["title"] == "the question" and header["title_rule"] == "typed"
    path.write_text(path.read_text().replace('"content": "the question"', '"content": "edited"'))
    assert [s.title for s in list_sessions(tmp_path)] == ["the question"]  # the header is trusted, not re-read
    assert "title_rule" not in Conversation.load(path).meta  # the header's own key, like "title"


def test_a_command_the_user_ran_is_recorded_apart_and_sent_as_before(tmp_path: Path) -> None:
    from swebash_ai.agent.conversation import user_run

    conv = Conversation()
    conv.add_user("hello", typed=True)
    conv.add_user_run(ToolCall("user_1", "run_command", '{"command": "echo hi"}'), "hi\n", typed="echo hi")
    wire = conv.for_request(None, 10_000)[-1]  # what the model read before the record was kept
    note = '[I ran run_command {"command": "echo hi"} myself; result follows]\nhi\n'
    assert wire == {"role": "user", "content": note}
    path = tmp_path / f"{conv.id}.jsonl"
    conv.save(path)
    ran = user_run(Conversation.load(path).messages[-1])
    assert ran is not None
    assert (ran.call_id, ran.name, ran.typed, ran.output) == ("user_1", "run_command", "echo hi", "hi\n")
    assert ran.shown == "!echo hi"
    assert user_run(Conversation.load(path).messages[0]) is None  # what the user typed is no command


def test_a_command_saved_by_an_older_version_resumes_as_a_command_without_a_typed_line(tmp_path: Path) -> None:
    from swebash_ai.agent.conversation import user_run

    note = '[I ran run_command {"command": "ls https://x.example"} myself; result follows]\nhttps://y.example\n'
    messages = [
        {"role": "user", "content": "look", "typed": True},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": note},  # what the app wrote: a command, with no record of what was typed
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": note, "typed": True},  # the user's own words, however they read
    ]
    _old_version_file(tmp_path / "a.jsonl", {"id": "a"}, messages)
    runs = [user_run(m) for m in Conversation.load(tmp_path / "a.jsonl").messages]
    assert [r is not None for r in runs] == [False, False, True, False, False]
    ran = runs[2]
    assert ran is not None and ran.typed is None and ran.shown == "!ls https://x.example"
    assert ran.output == "https://y.example\n"
    # before the typed mark, nothing tells the app's words from the user's: left as they are
    _old_version_file(tmp_path / "b.jsonl", {"id": "b"}, [{"role": "user", "content": note}])
    assert user_run(Conversation.load(tmp_path / "b.jsonl").messages[0]) is None
