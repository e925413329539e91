"""Old tool results set aside (agent/result_store.py): out of memory, back whole wherever their text is read."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.agent import TurnFinished
from swebash_ai.agent.compaction import request_tokens
from swebash_ai.agent.conversation import NOTES, Conversation, estimate_tokens
from swebash_ai.agent.result_store import ASIDE, ASIDE_CHARS, ResultStore
from swebash_ai.config.settings import load_settings
from swebash_ai.providers.base import ToolCall
from swebash_ai.session import Session
from swebash_ai.testing.fake_server import FakeLLMServer, Reply

BIG = "line of a file, é and 🙂 included\n" * 40  # over ASIDE_CHARS, and not ASCII
SMALL = "ok"


def three_turns() -> Conversation:
    conv = Conversation()
    for t in range(3):
        conv.add_user(f"question {t}", typed=True)
        conv.add_assistant("", [ToolCall(f"big{t}", "read_file", '{"path": "a"}'),
                                ToolCall(f"small{t}", "exists", '{"path": "a"}')])
        conv.add_tool_result(f"big{t}", "read_file", f"{t}: {BIG}")
        conv.add_tool_result(f"small{t}", "exists", SMALL)
        conv.add_assistant(f"answer {t}")
    return conv


def test_the_large_results_of_earlier_turns_leave_memory_and_come_back_whole(tmp_path: Path) -> None:
    conv = three_turns()
    conv.results.folder = tmp_path
    before = [dict(m) for m in conv.messages]
    request = conv.for_request("system", 1_000_000)
    costs = list(conv._token_costs())

    moved = conv.set_aside_results()

    assert moved == ["big0", "big1"]  # the last turn's result stays, as do the small ones
    held = {m.get("tool_call_id"): m for m in conv.messages if m["role"] == "tool"}
    for call in ("big0", "big1"):
        assert "content" not in held[call] and ASIDE in held[call]
    assert held["big2"]["content"] == f"2: {BIG}" and held["small0"]["content"] == SMALL
    assert list(conv.full_messages()) == before
    assert conv.tool_result("big0") == f"0: {BIG}"
    assert conv.for_request("system", 1_000_000) == request  # the provider reads what it read before
    assert [estimate_tokens(m) for m in conv.messages] == costs
    conv._costs.clear()  # recomputed (a compaction, a cut): from the estimates kept with the references
    assert conv._token_costs() == costs
    assert conv.set_aside_results() == []  # each result once


def test_a_message_set_aside_is_never_sent_or_saved_as_a_stub(tmp_path: Path) -> None:
    conv = three_turns()
    conv.results.folder = tmp_path
    conv.set_aside_results()
    aside = next(m for m in conv.messages if ASIDE in m)
    with pytest.raises(TypeError, match="not JSON serializable"):
        json.dumps(aside)  # a path that forgot to read it back fails loudly
    path = tmp_path / "s.jsonl"
    conv.save(path)
    loaded = Conversation.load(path)
    assert [m.get("content") for m in loaded.messages] == [m.get("content") for m in conv.full_messages()]
    assert ASIDE not in path.read_text()


def test_the_store_is_an_unnamed_private_file_beside_the_sessions(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "sessions")
    first, second = store.put(BIG), store.put("x" * 600)
    assert first is not None and second is not None
    assert list((tmp_path / "sessions").iterdir()) == []  # nothing a crash could leave behind
    fd_target = os.readlink(f"/proc/self/fd/{store._file.fileno()}")  # type: ignore[union-attr]
    assert fd_target.startswith(str(tmp_path / "sessions")) and fd_target.endswith("(deleted)")
    assert os.stat(store._file.fileno()).st_mode & 0o777 == 0o600  # type: ignore[union-attr]
    from swebash_ai.agent.result_store import Aside

    assert store.get(Aside(*second, tokens=0)) == "x" * 600 and store.get(Aside(*first, tokens=0)) == BIG


def test_a_full_disk_keeps_the_results_in_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    conv = three_turns()
    conv.results.folder = tmp_path

    def full(*args: Any) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "pwrite", full)
    assert conv.set_aside_results() == []
    assert all(ASIDE not in m for m in conv.messages) and conv.tool_result("big0") == f"0: {BIG}"
    assert "No space left on device" in caplog.text and "stay in memory" in caplog.text
    monkeypatch.undo()
    assert conv.set_aside_results() == ["big0", "big1"]  # tried again at the next turn's end


def test_a_compaction_reads_the_results_set_aside_and_the_cut_keeps_them(tmp_path: Path) -> None:
    conv = three_turns()
    conv.results.folder = tmp_path
    tokens = request_tokens(conv, None, None)
    conv.set_aside_results()
    assert request_tokens(conv, None, None) == tokens  # compaction's size check sees the results set aside
    conv.truncate(len(conv.messages) - 1)
    conv.replace_head(6, [{"role": "user", "content": "summary"}])
    conv.add_assistant("answer 2")
    assert conv.tool_result("big1") == f"1: {BIG}"
    assert [m.get("content") for m in conv.full_messages()][1:4] == [None, f"1: {BIG}", SMALL]


async def test_a_session_sets_aside_after_each_turn_and_requests_still_carry_every_result(
    llm_env: FakeLLMServer, workspace: Path
) -> None:
    (workspace / "a.txt").write_text(BIG)
    llm_env.enqueue(Reply.tool_calls([("read_file", {"path": "a.txt"})]), Reply.text("Read it."),
                    Reply.text("Still here."))
    session = Session(load_settings(), probe_ollama=False)
    told: list[list[str]] = []
    session.on_set_aside = told.append
    assert isinstance([e async for e in session.run("read a.txt")][-1], TurnFinished)
    assert told == [] and all(ASIDE not in m for m in session.conversation.messages)  # the last turn stays
    assert isinstance([e async for e in session.run("and now?")][-1], TurnFinished)
    (call_id,) = told[0]
    assert ASIDE in next(m for m in session.conversation.messages if m.get("tool_call_id") == call_id)
    assert session.conversation.results.folder == session.loaded.locations.sessions_dir
    sent = llm_env.requests[-1]["body"]["messages"]
    assert [m["content"] for m in sent if m["role"] == "tool"] == [next(
        m["content"] for m in llm_env.requests[1]["body"]["messages"] if m["role"] == "tool")]
    assert "40| line of a file, é and 🙂 included" in sent[3]["content"]  # read again with the second question
    saved = Conversation.load(session.session_file)
    assert saved.messages == list(session.conversation.full_messages())

    resumed = Session(load_settings(), probe_ollama=False)
    resumed.resume(session.conversation.id)  # a long session read back: its old results go aside at once
    assert ASIDE in next(m for m in resumed.conversation.messages if m.get("tool_call_id") == call_id)
    assert resumed.conversation.tool_result(call_id) == session.conversation.tool_result(call_id)


def test_results_shorter_than_the_threshold_stay() -> None:
    conv = Conversation()
    for t in range(2):
        conv.add_user(f"q{t}")
        conv.add_assistant("", [ToolCall(f"c{t}", "x", "{}")])
        conv.add_tool_result(f"c{t}", "x", "y" * (ASIDE_CHARS - 1) if t == 0 else "z")
        conv.add_assistant("a")
    assert conv.set_aside_results() == [] and conv.results.size == 0


def test_a_request_body_copies_the_results_set_aside_from_the_store(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from swebash_ai.providers.wire import StoredResult, request_body

    conv = three_turns()
    conv.results.folder = tmp_path
    big1 = next(m for m in conv.messages if m.get("tool_call_id") == "big1")
    big1[NOTES] = ["a process exited"]  # a result with the app's note: read back, the note appended on the wire
    read_back = conv.for_request("system", 1_000_000)
    conv.set_aside_results()
    sent = conv.for_request("system", 1_000_000, stored=True)
    stored = [m for m in sent if isinstance(m, StoredResult)]
    assert [m["tool_call_id"] for m in stored] == ["big0"]
    with pytest.raises(TypeError, match="not JSON serializable"):
        json.dumps(stored[0])  # never sent as anything but its bytes

    def no_text(*args: Any) -> str:
        raise AssertionError("a result read back as text for the request")

    monkeypatch.setattr(conv.results, "get", no_text)
    body = {"model": "m", "messages": sent, "stream": True, "tools": [{"type": "function"}]}
    data = request_body(body)
    monkeypatch.undo()
    assert json.loads(data) == {**body, "messages": read_back}  # what the model reads: every result whole
    assert next(m["content"] for m in json.loads(data)["messages"]
                if m.get("tool_call_id") == "big1").endswith("a process exited")
    assert [dict(m) for m in stored] == [m for m in read_back if m.get("tool_call_id") == "big0"]


def test_a_text_that_is_not_valid_unicode_is_stored_as_escaped_json(tmp_path: Path) -> None:
    from swebash_ai.agent.result_store import Aside, as_json

    odd = "bytes a tool could not decode: \udcff\udcfe, then é\n" * 20
    assert as_json(odd).isascii() and json.loads(as_json(odd)) == odd
    assert as_json("é \"quoted\"\n") == '"é \\"quoted\\"\\n"'.encode()  # UTF-8, as httpx encodes a body
    store = ResultStore(tmp_path)
    where = store.put(odd)
    assert where is not None and store.get(Aside(*where, tokens=0)) == odd


@pytest.mark.parametrize("tool_calling", ["auto", "text"])
async def test_over_http_the_results_set_aside_go_from_the_store_into_the_request(
    llm_env: FakeLLMServer, workspace: Path, monkeypatch: pytest.MonkeyPatch, tool_calling: str
) -> None:
    monkeypatch.setenv("SWEBASH_AI_TOOL_CALLING", tool_calling)
    (workspace / "a.txt").write_text(BIG)
    first = (Reply.tool_calls([("read_file", {"path": "a.txt"})]) if tool_calling == "auto"
             else Reply.text('```json\n{"tool": "read_file", "arguments": {"path": "a.txt"}}\n```'))
    llm_env.enqueue(first, Reply.text("Read it."), Reply.text("Still here."))
    session = Session(load_settings(), probe_ollama=False)
    assert isinstance([e async for e in session.run("read a.txt")][-1], TurnFinished)
    assert isinstance([e async for e in session.run("and now?")][-1], TurnFinished)
    assert any(ASIDE in m for m in session.conversation.messages)
    reads: list[int] = []
    real_get = session.conversation.results.get
    monkeypatch.setattr(session.conversation.results, "get", lambda aside: reads.append(1) or real_get(aside))
    llm_env.enqueue(Reply.text("Yes."))
    assert isinstance([e async for e in session.run("once more")][-1], TurnFinished)
    carried = json.dumps(llm_env.requests[-1]["body"]["messages"], ensure_ascii=False)
    assert carried.count("40| line of a file, é and 🙂 included") == 1  # the result, whole, once
    # Read once by the save (the session file holds every result whole); the native lane's request copies the
    # bytes kept, while text mode rewrites the result into a user message, reading it a second time.
    assert len(reads) == (1 if tool_calling == "auto" else 2)
