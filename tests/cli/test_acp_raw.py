"""``swebash-ai acp`` spoken to line by line, as a raw JSON-RPC client: bad input gets JSON-RPC errors and the
agent keeps serving; a whole turn looks as the specification says on the wire."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.testing.fake_server import FakeLLMServer, Reply

from ._helpers import REPO

pytestmark = pytest.mark.timeout(90)


class Wire:
    """The agent as a child process; ``send`` writes one line, ``next`` reads one message (or times out)."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "swebash_ai", "acp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cwd)
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def send(self, message: Any) -> None:
        raw = message if isinstance(message, bytes) else json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()

    def next(self, timeout: float = 30) -> dict[str, Any]:
        line = self.lines.get(timeout=timeout)
        assert line, "the agent closed stdout"
        message: dict[str, Any] = json.loads(line)
        return message

    def until(self, request_id: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The response to ``request_id`` and everything that came before it."""
        seen = []
        while True:
            message = self.next()
            if message.get("id") == request_id and "method" not in message:
                return message, seen
            seen.append(message)

    def close(self) -> tuple[int, str]:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=30)
        assert self.proc.stderr is not None
        return code, self.proc.stderr.read().decode()


@pytest.fixture
def wire(cli_env: dict[str, str], workspace: Path) -> Any:
    agent = Wire(cli_env, workspace)
    yield agent
    if agent.proc.poll() is None:
        agent.proc.kill()
        agent.proc.wait()


def request(request_id: int, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def test_bad_input_gets_errors_and_the_agent_keeps_serving(llm_env: FakeLLMServer, wire: Wire,
                                                           workspace: Path) -> None:
    wire.send(b"{this is not json")
    error = wire.next()
    assert error["id"] is None and error["error"]["code"] == -32700
    wire.send([1, 2, 3])
    assert wire.next()["error"]["code"] == -32600
    wire.send({"jsonrpc": "2.0", "id": 5})
    assert wire.next() == {"jsonrpc": "2.0", "id": 5, "error": {
        "code": -32600, "message": "Invalid request",
        "data": {"details": "neither a request, a notification nor a response"}}}
    wire.send(request(1, "initialize", {"protocolVersion": 1}))
    init, _ = wire.until(1)
    assert init["result"]["protocolVersion"] == 1
    wire.send(request(2, "no/such_method", {}))
    assert wire.until(2)[0]["error"]["code"] == -32601
    wire.send(request(3, "session/new", {"cwd": 42}))  # wrong params
    assert wire.until(3)[0]["error"]["code"] == -32602
    wire.send(request(4, "session/new", {"cwd": "relative/dir", "mcpServers": []}))
    assert wire.until(4)[0]["error"]["code"] == -32602
    wire.send(request(6, "session/prompt", {"sessionId": "nobody", "prompt": [{"type": "text", "text": "x"}]}))
    error = wire.until(6)[0]["error"]
    assert error["code"] == -32602 and "no session" in error["data"]["details"]
    wire.send({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "nobody"}})  # ignored
    wire.send({"jsonrpc": "2.0", "method": "no/such_notification", "params": {}})  # no answer to a notification
    # ...and it still serves a whole turn.
    llm_env.enqueue(Reply.text("still here"))
    wire.send(request(7, "session/new", {"cwd": str(workspace), "mcpServers": []}))
    session, _ = wire.until(7)
    sid = session["result"]["sessionId"]
    wire.send(request(8, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}))
    done, before = wire.until(8)
    assert done["result"] == {"stopReason": "end_turn"}
    chunks = [m["params"]["update"] for m in before if m.get("method") == "session/update"
              and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"]
    assert "".join(c["content"]["text"] for c in chunks) == "still here"
    code, stderr = wire.close()
    assert code == 0 and "answered a bad message" in stderr


def _png(width: int = 2, height: int = 1) -> bytes:
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\0" + b"\xff\x00\x00" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def test_image_blocks_are_attached_and_a_broken_one_is_said(llm_env: FakeLLMServer, wire: Wire,
                                                            workspace: Path) -> None:
    import base64

    llm_env.enqueue(Reply.text("a red pixel"))
    wire.send(request(1, "initialize", {"protocolVersion": 1}))
    assert wire.until(1)[0]["result"]["agentCapabilities"]["promptCapabilities"]["image"] is True
    wire.send(request(2, "session/new", {"cwd": str(workspace), "mcpServers": []}))
    sid = wire.until(2)[0]["result"]["sessionId"]
    good = {"type": "image", "data": base64.b64encode(_png()).decode(), "mimeType": "image/png"}
    broken = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}  # a PNG signature, no header
    prompt = [{"type": "text", "text": "what is this?"}, good, broken]
    wire.send(request(3, "session/prompt", {"sessionId": sid, "prompt": prompt}))
    done, before = wire.until(3)
    assert done["result"]["stopReason"] == "end_turn"
    content = llm_env.requests[-1]["body"]["messages"][-1]["content"]
    urls = [part["image_url"]["url"] for part in content if part.get("type") == "image_url"]
    assert urls == ["data:image/png;base64," + good["data"]]
    said = "".join(m["params"]["update"]["content"]["text"] for m in before if m.get("method") == "session/update"
                   and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
    assert "image 2 from the editor is not attached" in said
    wire.send(request(4, "session/prompt", {"sessionId": sid, "prompt": [{"type": "image", "data": "%%%",
                                                                           "mimeType": "image/png"}]}))
    assert wire.until(4)[0]["error"]["code"] == -32602
    wire.close()


def test_resource_links_attach_through_the_guard(
    llm_env: FakeLLMServer, wire: Wire, workspace: Path, cli_env: dict[str, str]
) -> None:
    (workspace / "spec.md").write_text("the spec says 42\n")
    secret = Path(cli_env["HOME"]) / ".ssh" / "id_rsa"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text("PRIVATE KEY")
    llm_env.enqueue(Reply.text("ok"))
    wire.send(request(1, "initialize", {"protocolVersion": 1}))
    wire.until(1)
    http = {"type": "http", "name": "remote", "url": "http://127.0.0.1:9/mcp", "headers": []}
    wire.send(request(2, "session/new", {"cwd": str(workspace), "mcpServers": [http]}))
    sid = wire.until(2)[0]["result"]["sessionId"]  # an HTTP server is left out, not a failed session
    audio = {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}
    wire.send(request(3, "session/prompt", {"sessionId": sid, "prompt": [audio]}))
    answer, greeting = wire.until(3)
    error = answer["error"]
    assert error["code"] == -32602 and "audio content is not supported" in error["data"]["details"]
    told = [m["params"]["update"] for m in greeting if m.get("method") == "session/update"]
    assert any("MCP server 'remote' is not used" in u.get("content", {}).get("text", "") for u in told)
    prompt = [{"type": "text", "text": "read these"},
              {"type": "resource_link", "uri": f"file://{workspace}/spec.md", "name": "spec.md"},
              {"type": "resource", "resource": {"uri": f"file://{secret}", "text": "PRIVATE KEY"}}]
    wire.send(request(4, "session/prompt", {"sessionId": sid, "prompt": prompt}))
    done, before = wire.until(4)
    assert done["result"]["stopReason"] == "end_turn"
    sent = llm_env.requests[-1]["body"]["messages"][-1]["content"]
    assert "the spec says 42" in sent and "PRIVATE KEY" not in sent
    notices = "".join(m["params"]["update"]["content"]["text"] for m in before if m.get("method") == "session/update"
                      and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
    assert "Not attached: file://" in notices and "spec.md" in notices
    wire.close()


def test_a_permission_request_on_the_wire(llm_env: FakeLLMServer, wire: Wire, workspace: Path) -> None:
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": "touch made.txt"})]), Reply.text("Done."))
    wire.send(request(1, "initialize", {"protocolVersion": 1}))
    wire.until(1)
    wire.send(request(2, "session/new", {"cwd": str(workspace), "mcpServers": []}))
    sid = wire.until(2)[0]["result"]["sessionId"]
    wire.send(request(3, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "touch"}]}))
    seen = []
    while True:
        message = wire.next()
        if message.get("method") == "session/request_permission":
            break
        seen.append(message)
    starts = [m["params"]["update"] for m in seen if m.get("method") == "session/update"
              and m["params"]["update"]["sessionUpdate"] == "tool_call"]
    params = message["params"]
    assert starts and starts[0]["toolCallId"] == params["toolCall"]["toolCallId"] and starts[0]["kind"] == "execute"
    assert "touch made.txt" in params["toolCall"]["content"][0]["content"]["text"]
    assert ("'Allow once' runs it in the sandbox: the workspace writable" in params["toolCall"]["content"][0]
            ["content"]["text"])  # the one sentence on where it runs, in the editor's words
    offered = [option["optionId"] for option in params["options"]]
    # a yes keeps the command in the sandbox; running it outside is an answer of its own
    assert offered[:2] == ["allow_once", "allow_session"] and offered[-2:] == ["allow_outside", "reject"]
    wire.send({"jsonrpc": "2.0", "id": message["id"],
               "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}})
    done, _ = wire.until(3)
    assert done["result"]["stopReason"] == "end_turn" and (workspace / "made.txt").exists()
    wire.close()


def test_stray_writes_to_stdout_go_to_stderr_and_children_read_nothing(tmp_path: Path) -> None:
    probe = (
        "import os, subprocess, sys\n"
        "from swebash_ai.frontends.acp.wire import take_stdio\n"
        "in_fd, out_fd = take_stdio()\n"
        "print('stray print'); sys.stdout.flush()\n"
        "os.write(1, b'stray fd write\\n')\n"
        "child = subprocess.run(['cat'], capture_output=False, timeout=10)\n"
        "os.write(out_fd, os.read(in_fd, 100))\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], input=b'{"jsonrpc": "2.0"}\n', capture_output=True,
                          timeout=30, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b'{"jsonrpc": "2.0"}\n'  # the protocol's bytes only; `cat` read /dev/null, not them
    assert b"stray print" in proc.stderr and b"stray fd write" in proc.stderr


def test_closing_stdin_mid_command_stops_it_and_saves_the_session(llm_env: FakeLLMServer, wire: Wire,
                                                                  workspace: Path, cli_env: dict[str, str]) -> None:
    import time

    import psutil

    marker = workspace / "started"
    # the command would outlast the test's timeout: only a stop ends it
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": f"touch {marker} && sleep 3637.5"})]),
                    Reply.text("never"))
    wire.send(request(1, "initialize", {"protocolVersion": 1}))
    wire.until(1)
    wire.send(request(2, "session/new", {"cwd": str(workspace), "mcpServers": []}))
    sid = wire.until(2)[0]["result"]["sessionId"]
    wire.send(request(3, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "run it"}]}))
    while (message := wire.next()).get("method") != "session/request_permission":
        pass
    wire.send({"jsonrpc": "2.0", "id": message["id"],
               "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}})
    deadline = time.monotonic() + 30
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists()
    code, stderr = wire.close()
    assert code == 0, stderr
    left = [p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == ["sleep", "3637.5"]]
    assert left == []
    saved = (Path(cli_env["SWEBASH_AI_HOME"]) / "sessions" / f"{sid}.jsonl").read_text()
    assert "run it" in saved and "sleep 3637.5" in saved
    assert "Cancelled" in saved, stderr  # the call has its result in the saved conversation
    assert "Traceback" not in stderr, stderr
