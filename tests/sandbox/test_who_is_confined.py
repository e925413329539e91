"""Who runs in the sandbox: everything not proven read-only, unless a person allowed that very call outside it.

Through a real session (scripted provider, real tools, bubblewrap): a person's plain yes keeps the command in
the sandbox; the dialog's "outside the sandbox" answer, or a yes to a call that asked to leave, runs it with the
user's rights; ``--yes`` never does, and a call asking to leave is a question only a person answers.
Fixtures live under /var/tmp: the sandbox's private /tmp would hide a target there and prove nothing.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.agent.approval import AllowApprover, Decision
from swebash_ai.agent.events import ApprovalRequest, ToolCallFinished
from swebash_ai.config.settings import load_settings
from swebash_ai.providers import scripted
from swebash_ai.providers.scripted import ScriptedProvider
from swebash_ai.sandbox import detect
from swebash_ai.session import Session

pytestmark = pytest.mark.skipif(not detect.choose("auto").ok, reason="no sandbox works here")


class Person:
    """An interactive approver that gives one answer and keeps the requests it saw."""

    interactive = True

    def __init__(self, answer: Decision) -> None:
        self.answer = answer
        self.asked: list[ApprovalRequest] = []

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.asked.append(request)
        return self.answer


@pytest.fixture
def place(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path]]:
    base = "/var/tmp" if os.access("/var/tmp", os.W_OK) else None
    top = Path(tempfile.mkdtemp(prefix="who-", dir=base))
    ws, outside = top / "ws", top / "outside"
    ws.mkdir()
    outside.mkdir()
    monkeypatch.chdir(ws)
    try:
        yield ws, outside
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _run(ws: Path, approver: Any, args: dict[str, Any]) -> ToolCallFinished:
    provider = ScriptedProvider([scripted.calls(("run_command", args)), scripted.text("done")])
    session = Session(load_settings(), approver=approver, cwd=ws, provider=provider, probe_ollama=False)

    async def go() -> list[Any]:
        return [e async for e in session.run("go")]

    events = asyncio.run(go())
    (finished,) = [e for e in events if isinstance(e, ToolCallFinished)]
    return finished


def test_a_plain_yes_keeps_the_command_in_the_sandbox(place: tuple[Path, Path]) -> None:
    ws, outside = place
    person = Person(Decision.ALLOW_ONCE)
    done = _run(ws, person, {"command": f"touch made.txt {outside}/escaped.txt"})
    assert person.asked[0].sandboxed  # the question says a yes keeps it in the sandbox
    assert (ws / "made.txt").exists() and not (outside / "escaped.txt").exists()
    assert done.result.metadata["sandbox"] == detect.choose("auto").backend and done.decided_by == "user"


def test_outside_the_sandbox_is_the_persons_choice(place: tuple[Path, Path]) -> None:
    ws, outside = place
    done = _run(ws, Person(Decision.ALLOW_OUTSIDE), {"command": f"touch {outside}/by-choice.txt"})
    assert (outside / "by-choice.txt").exists()
    assert done.decided_by == "user-outside" and done.result.metadata["sandbox"] == "outside (approved)"


def test_yes_never_leaves_the_sandbox(place: tuple[Path, Path]) -> None:
    ws, outside = place
    done = _run(ws, AllowApprover(), {"command": f"touch {outside}/by-yes.txt"})
    assert not (outside / "by-yes.txt").exists() and done.decided_by == "--yes"
    asked_out = _run(ws, AllowApprover(), {"command": f"touch {outside}/asked.txt", "sandbox": False})
    assert asked_out.result.status == "denied" and not (outside / "asked.txt").exists()
    assert "--yes never covers that" in asked_out.result.text


def test_a_call_asking_to_leave_asks_and_only_the_outside_answer_lets_it(place: tuple[Path, Path]) -> None:
    """A plain yes (what an editor that approves by itself picks) keeps even such a call in the sandbox."""
    ws, outside = place
    person = Person(Decision.ALLOW_ONCE)
    done = _run(ws, person, {"command": f"touch {outside}/asked.txt", "sandbox": False})
    assert person.asked[0].sandboxed and "OUTSIDE the sandbox" in person.asked[0].verdict.reasons[-1]
    assert person.asked[0].verdict.severe and not (outside / "asked.txt").exists()
    assert done.result.metadata["sandbox"] == detect.choose("auto").backend
    done = _run(ws, Person(Decision.ALLOW_OUTSIDE), {"command": f"touch {outside}/asked.txt", "sandbox": False})
    assert (outside / "asked.txt").exists() and done.result.metadata["sandbox"] == "outside (approved)"


def test_a_command_proven_read_only_is_not_confined(place: tuple[Path, Path]) -> None:
    ws, _outside = place
    (ws / "a.txt").write_text("hello\n")
    done = _run(ws, Person(Decision.DENY), {"command": "cat a.txt"})
    assert done.result.ok and done.result.metadata["sandbox"] == "none" and "hello" in done.result.text


class Asker(Person):
    """A person who allows the command, answers ``answer`` about the host, and can be asked questions (so the
    session offers its asker to the tools)."""

    async def decide(self, request: ApprovalRequest) -> Decision:
        self.asked.append(request)
        return self.answer if request.verdict.rule == "sandbox.host" else Decision.ALLOW_ONCE

    async def ask(self, question: Any) -> Any:
        raise AssertionError("no ask_user question was expected")


@pytest.fixture
def web() -> Iterator[int]:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Hello(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"hello through the proxy")

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.skipif(shutil.which("curl") is None or not detect.choose("bwrap").ok, reason="needs curl and bwrap")
@pytest.mark.parametrize(("answer", "reached"), [(Decision.ALLOW_ONCE, True), (Decision.DENY, False)])
def test_a_host_nobody_listed_is_put_to_the_person(place: tuple[Path, Path], web: int, answer: Decision,
                                                  reached: bool) -> None:
    ws, _outside = place
    person = Asker(answer)
    command = f"curl -sS --noproxy '' -x \"$HTTP_PROXY\" http://127.0.0.1:{web}/"
    done = _run(ws, person, {"command": command})
    hosts = [r for r in person.asked if r.verdict.rule == "sandbox.host"]
    assert len(hosts) == 1 and f"127.0.0.1:{web}" in hosts[0].verdict.reasons[0] and hosts[0].verdict.severe
    assert not hosts[0].sandboxed  # a question about a host, not a command: no "outside" answer
    assert ("hello through the proxy" in done.result.text) is reached


def test_the_question_says_what_y_and_o_each_do_with_this_command(place: tuple[Path, Path]) -> None:
    """The one sentence on where a command runs, with what the sandbox will do to this one: read from its words."""
    from swebash_ai.agent.events import where_words

    ws, outside = place
    person = Person(Decision.DENY)
    _run(ws, person, {"command": f"echo x > {outside}/a.txt; curl -s https://example.com/x"})
    (asked,) = person.asked
    assert asked.runs == "sandbox" and asked.sandboxed
    assert where_words(asked) == (
        f"y runs it in the sandbox: its write to {outside}/a.txt will fail: outside the workspace the sandbox is "
        "read-only; its connection to example.com is put to you first (sandbox_allow_hosts does not list it); "
        "o runs it outside the sandbox, with all of your rights")
    person = Person(Decision.DENY)
    _run(ws, person, {"command": "touch made.txt"})  # nothing the sandbox stops: what it allows, in general
    assert where_words(person.asked[0]).startswith("y runs it in the sandbox: the workspace writable, your keys hidden")


def test_with_no_sandbox_the_question_never_promises_one(place: tuple[Path, Path],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from swebash_ai.agent.events import where_words

    ws, outside = place
    monkeypatch.setattr(detect, "choose", lambda wanted="auto": detect.Choice(None, "", "no bubblewrap here"))
    person = Person(Decision.ALLOW_ONCE)
    done = _run(ws, person, {"command": f"touch {outside}/unconfined.txt"})
    (asked,) = person.asked
    assert not asked.sandboxed and asked.runs == "unconfined"
    assert where_words(asked) == ("y runs it unconfined, with all of your rights: no sandbox works here (no "
                                  "bubblewrap here)")
    assert (outside / "unconfined.txt").exists() and done.result.metadata["sandbox"] == "unavailable"
