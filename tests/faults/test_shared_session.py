"""Two instances of the app on one saved session: each adds a turn; neither turn is lost.

The second to save finds that the file moved on since it read it, saves its conversation as a new session
forked from the first, and says so in one line. Run with two real one-shot processes held mid-turn by the
scripted server, and with two sessions in one process.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.agent.approval import AllowApprover
from swebash_ai.agent.conversation import SAVE_LOCK, Conversation
from swebash_ai.agent.events import Notice
from swebash_ai.agent.session_files import list_sessions
from swebash_ai.commands.undo import undo_saved_session
from swebash_ai.config.settings import load_settings
from swebash_ai.frontends.oneshot import ExitCode
from swebash_ai.session import Session
from swebash_ai.testing.fake_server import FakeLLMServer, Reply
from swebash_ai.tools import builtin_tools
from swebash_ai.tools.checkpoints import UndoRefused

REPO = Path(__file__).resolve().parents[2]
SHARED = "20260101-000000-5e55ed"

pytestmark = pytest.mark.timeout(120)


def sessions_dir() -> Path:
    return load_settings({}).locations.sessions_dir


def shared_session() -> Path:
    conv = Conversation(id=SHARED)
    conv.add_user("first question")
    conv.add_assistant("First answer.")
    path = sessions_dir() / f"{SHARED}.jsonl"
    conv.save(path)
    return path


def read(path: Path) -> tuple[dict[str, Any], list[str]]:
    """A session file's header and the text of its messages."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return lines[0]["meta"], [m["content"] for m in lines[1:]]


class Gate:
    """A responder that holds each request until the test releases it, keyed by the last user message."""

    def __init__(self) -> None:
        self.arrived = {who: threading.Event() for who in ("A", "B")}
        self.release = {who: threading.Event() for who in ("A", "B")}

    def __call__(self, body: dict[str, Any]) -> Reply:
        who = [m for m in body["messages"] if m["role"] == "user"][-1]["content"][-1]
        self.arrived[who].set()
        assert self.release[who].wait(60), f"{who} was never released"
        return Reply.text(f"Answer to {who}.")


def one_shot(question: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "SWEBASH_AI_PROVIDER_RETRIES": "0"}
    return subprocess.Popen([sys.executable, "-m", "swebash_ai", "--resume", SHARED, "-c", question],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, start_new_session=True)


def test_two_one_shot_processes_resuming_one_session_both_keep_their_turn(
    llm_env: FakeLLMServer, workspace: Path
) -> None:
    path = shared_session()
    gate = Gate()
    llm_env.responder = gate
    a = one_shot("from A")
    try:
        assert gate.arrived["A"].wait(60)  # A has read the session and waits for its answer
        b = one_shot("from B")
        try:
            assert gate.arrived["B"].wait(60)  # so has B
            gate.release["B"].set()
            b_out, b_err = b.communicate(timeout=60)
        finally:
            b.kill()
        gate.release["A"].set()  # A saves last, over a file that moved on since it read it
        a_out, a_err = a.communicate(timeout=60)
    finally:
        a.kill()
        gate.release["A"].set()

    assert (b.returncode, b_out, b_err) == (ExitCode.OK, "Answer to B.\n", "")
    assert a.returncode == ExitCode.OK and a_out == "Answer to A.\n"
    (line,) = a_err.splitlines()
    forks = [s for s in list_sessions(sessions_dir()) if s.id != SHARED]
    assert len(forks) == 1
    fork = forks[0]
    assert line == (f"swebash-ai: Session {SHARED} was saved by another swebash-ai meanwhile; this conversation is "
                    f"saved as a new session {fork.id}, forked from it, so neither loses a turn.")
    meta, said = read(path)
    assert said == ["first question", "First answer.", "from B", "Answer to B."]  # B's save, untouched
    meta, said = read(fork.path)
    assert said == ["first question", "First answer.", "from A", "Answer to A."]
    assert meta["forked_from"] == SHARED and meta["generation"] == 1
    assert stat.S_IMODE(fork.path.stat().st_mode) == 0o600
    assert stat.S_IMODE((sessions_dir() / SAVE_LOCK).stat().st_mode) == 0o600


async def test_two_sessions_in_one_process_fork_once_then_each_goes_on(llm_env: FakeLLMServer, workspace: Path) -> None:
    path = shared_session()
    one, two = (Session(load_settings(), tools=[], probe_ollama=False) for _ in range(2))
    one.resume(SHARED)
    two.resume(SHARED)

    async def turn(session: Session, text: str) -> list[Any]:
        llm_env.enqueue(Reply.text(f"Answer to {text}."))
        return [e async for e in session.run(text)]

    await turn(one, "one")
    assert one.notices == [] and one.conversation.id == SHARED
    events = await turn(two, "two")
    (notice,) = two.notices  # queued for the front end, which shows it when the turn is over
    assert notice.startswith(f"Session {SHARED} was saved by another swebash-ai meanwhile")
    assert not any(isinstance(e, Notice) and "another swebash-ai" in e.text for e in events)
    fork_id = two.conversation.id
    assert fork_id != SHARED and two.session_file.name == f"{fork_id}.jsonl" and fork_id in notice
    two.notices.clear()

    await turn(one, "one again")  # each goes on in its own file, without another fork
    await turn(two, "two again")
    assert one.notices == [] and two.notices == []
    assert read(path)[1] == ["first question", "First answer.", "one", "Answer to one.", "one again",
                             "Answer to one again."]
    meta, said = read(two.session_file)
    assert said == ["first question", "First answer.", "two", "Answer to two.", "two again", "Answer to two again."]
    assert meta["forked_from"] == SHARED
    sent = [m["content"] for m in llm_env.requests[-1]["body"]["messages"] if m["role"] == "user"]
    assert sent == ["first question", "two", "two again"]  # the fork's history, not the other's
    assert sorted(s.id for s in list_sessions(sessions_dir())) == sorted([SHARED, fork_id])


def test_a_file_of_an_older_version_is_saved_over_and_a_damaged_one_is_not(tmp_path: Path) -> None:
    old = tmp_path / "old.jsonl"  # no generation counter: written before it existed
    old.write_text('{"meta": {"id": "old", "created": 1}}\n{"role": "user", "content": "hi"}\n')
    conv = Conversation.load(old)
    conv.add_assistant("Hello.")
    assert conv.save(old) is None
    assert read(old) == ({**read(old)[0], "generation": 1}, ["hi", "Hello."])

    conv = Conversation(id="torn")
    conv.add_user("mine")
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(b"\x00\x00 not a header\n")  # something else wrote here: never overwritten
    notice = conv.save(torn)
    assert notice is not None and conv.id != "torn"
    assert torn.read_bytes() == b"\x00\x00 not a header\n"
    assert read(tmp_path / f"{conv.id}.jsonl")[1] == ["mine"]


async def test_the_fork_takes_the_checkpoints_of_its_turn_so_each_session_undoes_its_own(
    llm_env: FakeLLMServer, workspace: Path
) -> None:
    """Both instances record their turn's changes in the shared session's checkpoints; the one that forks
    hands its own to the fork, so `swebash-ai undo` on either session reverts that session's turn alone."""
    shared_session()
    tools = [t for t in builtin_tools() if t.name == "write_file"]
    one, two = (Session(load_settings(), tools=tools, approver=AllowApprover(), probe_ollama=False)
                for _ in range(2))
    one.resume(SHARED)
    two.resume(SHARED)

    async def write(session: Session, name: str) -> None:
        llm_env.enqueue(Reply.tool_calls([("write_file", {"path": name, "content": f"{name}\n"}, "c1")]),
                        Reply.text("Written."))
        [e async for e in session.run(f"write {name}")]

    (workspace / "two.txt").write_text("before\n")  # its previous content is a blob the fork needs
    await write(one, "one.txt")
    await write(two, "two.txt")
    fork_id = two.conversation.id
    assert fork_id != SHARED and (workspace / "one.txt").exists() and (workspace / "two.txt").read_text() == "two.txt\n"

    result = undo_saved_session(sessions_dir(), fork_id)
    assert [line.split(":")[0] for line in result.restored] == [str(workspace / "two.txt")]
    assert (workspace / "two.txt").read_text() == "before\n" and (workspace / "one.txt").exists()
    result = undo_saved_session(sessions_dir(), SHARED)
    assert [line.split(":")[0] for line in result.restored] == [str(workspace / "one.txt")]
    assert not (workspace / "one.txt").exists()
    with pytest.raises(UndoRefused):  # each turn was undone once, in its own session
        undo_saved_session(sessions_dir(), fork_id)
    fork_blobs = sessions_dir() / f"{fork_id}.checkpoints" / "blobs"
    assert [stat.S_IMODE(p.stat().st_mode) for p in fork_blobs.iterdir()] == [0o600]


async def _ended(session: Session) -> None:
    import asyncio
    import time

    deadline = time.monotonic() + 30
    while any(r.running for r in session.processes.rows()):
        assert time.monotonic() < deadline, "the background process did not exit"
        await asyncio.sleep(0.1)
    await asyncio.sleep(0.5)  # its after-snapshot runs in a thread once it ended


def _background_sessions() -> tuple[Session, Session]:
    tools = [t for t in builtin_tools() if t.name == "run_command"]
    return (Session(load_settings(), tools=tools, approver=AllowApprover(), probe_ollama=False),
            Session(load_settings(), tools=tools, approver=AllowApprover(), probe_ollama=False))


async def test_a_background_command_ending_after_the_fork_records_its_state_in_the_fork(
    llm_env: FakeLLMServer, workspace: Path
) -> None:
    """The turn that started it was handed to the fork by its save; the command ends later, and the state after
    it goes with its record, so the fork's undo reverts it (and the first session's has nothing of it)."""
    shared_session()
    one, two = _background_sessions()
    one.resume(SHARED)
    two.resume(SHARED)
    try:
        llm_env.enqueue(Reply.text("Fine."))
        [e async for e in one.run("one")]  # the other instance saves first
        llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "sleep 1.5; echo x > late.txt",
                                                           "background": True}, "c1")]), Reply.text("Started."))
        [e async for e in two.run("start it")]
        fork_id = two.conversation.id
        assert fork_id != SHARED and not (workspace / "late.txt").exists()
        await _ended(two)
        assert (workspace / "late.txt").exists()
        kinds = [e["kind"] for e in two.checkpoints.entries()]
        assert kinds == ["command", "saved", "command_after"]  # moved to the fork, claimed by its save
        result = undo_saved_session(sessions_dir(), fork_id)
        assert not (workspace / "late.txt").exists()
        assert "1 path it changed put back" in result.restored[0]
        with pytest.raises(UndoRefused, match="Nothing to undo"):
            undo_saved_session(sessions_dir(), SHARED)
    finally:
        await one.aclose()
        await two.aclose()


async def test_a_background_command_ending_after_new_records_its_state_in_its_own_session(
    llm_env: FakeLLMServer, workspace: Path
) -> None:
    """``/new`` (or a resume) moved the app on, and a turn there pointed the tools at the new session's
    checkpoints: the command's after-state still goes to the session that started it."""
    first, _ = _background_sessions()
    try:
        llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "sleep 2; echo x > late.txt",
                                                           "background": True}, "c1")]), Reply.text("Started."))
        [e async for e in first.run("start it")]
        started_in = first.conversation.id
        first.new_conversation()
        llm_env.enqueue(Reply.text("Hello."))
        [e async for e in first.run("something else")]
        await _ended(first)
        assert [e["kind"] for e in first.checkpoints.entries()] == []
        undo_saved_session(sessions_dir(), started_in)
        assert not (workspace / "late.txt").exists()
    finally:
        await first.aclose()


async def test_two_runs_number_a_turn_by_their_own_file_and_each_undo_takes_back_its_own(
    llm_env: FakeLLMServer, workspace: Path
) -> None:
    """Both runs resumed a one-turn session: each one's next turn is turn 2 of the file that keeps it. While the
    second has not saved (and so not forked), both turns 2 sit in one index: undo of the first session takes
    back its own turn 2, never the other's; the fork's undo takes back the other's, as turn 2 too."""
    shared_session()
    tools = [t for t in builtin_tools() if t.name == "write_file"]
    one, two = (Session(load_settings(), tools=tools, approver=AllowApprover(), probe_ollama=False)
                for _ in range(2))
    one.resume(SHARED)
    two.resume(SHARED)

    def writes(name: str) -> None:
        llm_env.enqueue(Reply.tool_calls([("write_file", {"path": name, "content": f"{name}\n"}, "c1")]),
                        Reply.text("Written."))

    writes("one.txt")
    [e async for e in one.run("write one")]
    writes("two.txt")
    turn = two.run("write two")
    async for event in turn:  # two's file is written; its turn is not over, so not saved yet
        if type(event).__name__ == "ToolCallFinished":
            break
    assert (workspace / "two.txt").exists()
    result = undo_saved_session(sessions_dir(), SHARED)
    assert (result.turn, [line.split(":")[0] for line in result.restored]) == (2, [str(workspace / "one.txt")])
    assert not (workspace / "one.txt").exists() and (workspace / "two.txt").exists()
    [e async for e in turn]  # now two's save forks
    fork_id = two.conversation.id
    assert fork_id != SHARED
    assert (one.conversation.meta["turns"], two.conversation.meta["turns"]) == (2, 2)
    result = two.undo()  # in the app that forked (a `swebash-ai undo` would save the file under it: a fork more)
    assert (result.turn, [line.split(":")[0] for line in result.restored]) == (2, [str(workspace / "two.txt")])
    assert not (workspace / "two.txt").exists()
    with pytest.raises(UndoRefused, match="Nothing to undo"):
        undo_saved_session(sessions_dir(), SHARED)

    writes("three.txt")
    [e async for e in two.run("write three")]  # the fork goes on from its own count
    assert two.conversation.id == fork_id
    assert [e["turn"] for e in two.checkpoints.entries() if e.get("kind") == "file"] == [2, 3]


async def test_the_turn_whose_save_forks_is_counted_under_the_fork(llm_env: FakeLLMServer, workspace: Path) -> None:
    """The turn statistics (turns.jsonl, read by ``swebash-ai stats``) name the session that holds each turn: the
    turn whose save forked the session is in the fork's file, so its line carries the fork's id."""
    shared_session()
    one, two = (Session(load_settings(), tools=[], probe_ollama=False) for _ in range(2))
    one.resume(SHARED)
    two.resume(SHARED)
    for session, text in ((one, "one"), (two, "two"), (two, "two again")):
        llm_env.enqueue(Reply.text(f"Answer to {text}."))
        [e async for e in session.run(text)]
    fork_id = two.conversation.id
    assert fork_id != SHARED
    turns_log = load_settings().locations.turns_log
    lines = [json.loads(line) for line in turns_log.read_text().splitlines()]
    assert [(line["session"], line["reason"]) for line in lines] == [
        (SHARED, "answered"), (fork_id, "answered"), (fork_id, "answered")]


async def test_after_a_fork_the_audit_names_the_fork(llm_env: FakeLLMServer, workspace: Path) -> None:
    """The audit log (one line per tool call) names the session each call belongs to: once a save forked the
    session, the calls of the turns that follow are the fork's."""
    shared_session()
    (workspace / "a.txt").write_text("a\n")
    tools = [t for t in builtin_tools() if t.name == "read_file"]
    one, two = (Session(load_settings(), tools=tools, probe_ollama=False) for _ in range(2))
    one.resume(SHARED)
    two.resume(SHARED)
    for session, text in ((one, "one"), (two, "two"), (two, "two again")):
        llm_env.enqueue(Reply.tool_calls([("read_file", {"path": "a.txt"})]), Reply.text(f"Answer to {text}."))
        [e async for e in session.run(text)]
    fork_id = two.conversation.id
    assert fork_id != SHARED
    audit = [json.loads(line) for line in load_settings().locations.audit_log.read_text().splitlines()]
    # the turn whose save forked logged its call before anyone knew; the turn after it is the fork's
    assert [line["session"] for line in audit if line["tool"] == "read_file"] == [SHARED, SHARED, fork_id]


async def test_undo_in_a_run_leaves_a_turn_another_run_made_after_it_loaded_the_session(
    llm_env: FakeLLMServer, workspace: Path
) -> None:
    """Two apps resumed one session; the first writes a file in its turn 2 and saves. ``/undo`` in the second,
    which never saw that turn, must not revert it behind the first one's back (the first's model would not be
    told, and its own ``/undo`` would then find nothing): it says whose turn that is and where to undo it."""
    shared_session()
    tools = [t for t in builtin_tools() if t.name == "write_file"]
    one, two = (Session(load_settings(), tools=tools, approver=AllowApprover(), probe_ollama=False)
                for _ in range(2))
    one.resume(SHARED)
    two.resume(SHARED)
    llm_env.enqueue(Reply.tool_calls([("write_file", {"path": "one.txt", "content": "one\n"}, "c1")]),
                    Reply.text("Written."))
    [e async for e in one.run("write one")]
    assert one.conversation.id == SHARED and (workspace / "one.txt").exists()

    with pytest.raises(UndoRefused, match="another swebash-ai") as refused:
        two.undo()
    assert SHARED in str(refused.value)
    assert (workspace / "one.txt").exists()
    result = one.undo()  # the run that made the turn takes it back
    assert (result.turn, not (workspace / "one.txt").exists()) == (2, True)
