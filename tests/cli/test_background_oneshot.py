"""Background processes in one-shot (``-c``), as a subprocess over the real HTTP lane against the loopback fake
server: a real ``http.server`` started, read until it listens, stopped, its port free; a process still running
when the one-shot exits (or is interrupted) is gone afterwards, checked by PID; the activity on stderr."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import psutil
import pytest

from swebash_ai.testing.fake_server import FakeLLMServer, Reply

from ._helpers import command


@pytest.fixture(autouse=True)
def _unsandboxed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands here run unconfined (``--yes`` would send them to the sandbox):
    these tests are about the life of background processes, reached from the host's loopback.
    What the sandbox does to background processes is tests/sandbox's subject."""
    monkeypatch.setenv("SWEBASH_AI_EXEC_SANDBOX", "none")

SLOW = 30.0
MORE = {"SWEBASH_AI_TOOLS_MAX_ITER": "40", "SWEBASH_AI_MAX_TOOL_CALLS_PER_TURN": "40"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(2)
        return s.connect_ex(("127.0.0.1", port)) == 0


def tool_texts(body: Any) -> str:
    return "\n".join(str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "tool")


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_dev_server_is_started_read_until_it_listens_and_stopped(llm_env: FakeLLMServer, run_cli: Any) -> None:
    port = free_port()
    seen: dict[str, Any] = {}

    def responder(body: Any) -> Reply:
        texts = tool_texts(body)
        if "stopped process p1" in texts:
            seen["listening_after_stop"] = listening(port)
            return Reply.text("Stopped the server.")
        if "Serving HTTP on" in texts:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as page:
                seen["status"] = page.status
            return Reply.tool_calls([("stop_process", {"id": "p1"})])
        if "process id: p1" in texts:
            return Reply.tool_calls([("read_process", {"id": "p1", "wait_seconds": 5})])
        cmd = f"{sys.executable} -u -m http.server {port} --bind 127.0.0.1"
        return Reply.tool_calls([("run_command", {"command": cmd, "background": True})])

    llm_env.responder = responder
    res = run_cli("-c", "serve this folder and check it", "--yes", env=MORE, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "Stopped the server.\n"
    assert seen == {"status": 200, "listening_after_stop": False}
    assert "-m http.server" in res.stderr and "(background): started in the background as p1, running" in res.stderr
    assert "✓ stop process p1: p1, stopped" in res.stderr
    assert "at the end of the session" not in res.stderr  # nothing was left to stop
    with socket.socket() as s:  # no listener holds the port
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        s.listen()


def _started_pid(tag: str, text: str) -> int:
    return int(text.split(f"{tag}-pid=")[1].split()[0])


def test_a_process_still_running_when_the_one_shot_exits_is_gone_afterwards(
        llm_env: FakeLLMServer, run_cli: Any) -> None:
    tag = uuid.uuid4().hex[:8]
    llm_env.enqueue(
        Reply.tool_calls([("run_command", {"command": f"echo {tag}-pid=$$; exec sleep 600", "background": True})]),
        Reply.text("It runs."),
    )
    res = run_cli("-c", "start it", "--yes", "--json", timeout=120)
    assert res.returncode == 0, res.stderr
    events = [json.loads(line) for line in res.stdout.splitlines()]
    (result,) = [e for e in events if e["type"] == "tool_result"]
    assert result["content"].startswith("process id: p1\nstate: running")
    pid = _started_pid(tag, result["content"])
    assert not alive(pid)  # the one-shot has exited: its background process is gone
    notices = [e["text"] for e in events if e["type"] == "notice"]
    assert f"stopped background process p1 at the end of the session: $ echo {tag}-pid=$$; exec sleep 600" in notices


def test_ctrl_c_ends_the_background_processes_too(cli_env: dict[str, str], llm_env: FakeLLMServer,
                                                  workspace: Path) -> None:
    tag = uuid.uuid4().hex[:8]
    llm_env.enqueue(
        Reply.tool_calls([("run_command", {"command": f"echo {tag}-pid=$$; exec sleep 600", "background": True})]),
        Reply.tool_calls([("run_command", {"command": "sleep 120"})]),
        Reply.text("never"),
    )
    proc = subprocess.Popen(command("-c", "start it", "--yes", "--json"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=workspace, env=cli_env, start_new_session=True)
    assert proc.stdout is not None
    pid = None
    try:
        for line in proc.stdout:
            event = json.loads(line)
            if event["type"] == "tool_result":
                pid = _started_pid(tag, event["content"])
            if event["type"] == "tool_call" and event["arguments"].get("command") == "sleep 120":
                break
        assert pid is not None and alive(pid)
        time.sleep(0.5)  # the foreground sleep is under way
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=SLOW)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert not alive(pid)
    assert "stopped background process p1 at the end of the session" in out


def test_a_failed_turn_ends_the_background_processes_too(llm_env: FakeLLMServer, run_cli: Any) -> None:
    tag = uuid.uuid4().hex[:8]
    llm_env.enqueue(
        Reply.tool_calls([("run_command", {"command": f"echo {tag}-pid=$$; exec sleep 600", "background": True})]),
        Reply.error(500, "the server broke"),
    )
    res = run_cli("-c", "start it", "--yes", "--json", timeout=120)
    assert res.returncode not in (0, 130), res.stderr
    events = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    (result,) = [e for e in events if e["type"] == "tool_result"]
    assert not alive(_started_pid(tag, result["content"]))


def test_a_killed_one_shot_leaves_no_background_process(cli_env: dict[str, str], llm_env: FakeLLMServer,
                                                        workspace: Path) -> None:
    # A crash (SIGKILL: no finally runs) closes each supervisor's control pipe, which stops its command.
    tag = uuid.uuid4().hex[:8]
    llm_env.enqueue(
        Reply.tool_calls([("run_command", {"command": f"echo {tag}-pid=$$; exec sleep 600", "background": True})]),
        Reply.tool_calls([("run_command", {"command": "sleep 120"})]),
        Reply.text("never"),
    )
    proc = subprocess.Popen(command("-c", "start it", "--yes", "--json"), stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, cwd=workspace, env=cli_env, start_new_session=True)
    assert proc.stdout is not None
    pid = None
    try:
        for line in proc.stdout:
            event = json.loads(line)
            if event["type"] == "tool_result":
                pid = _started_pid(tag, event["content"])
            if event["type"] == "tool_call" and event["arguments"].get("command") == "sleep 120":
                break
        assert pid is not None and alive(pid)
        proc.kill()
        proc.wait(timeout=SLOW)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    deadline = time.monotonic() + SLOW
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(pid)
