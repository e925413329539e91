"""MCP server faults: a server that dies in the middle of a call, and one that answers with 50 MB.

A first turn is answered and saved; the fault happens in the second (``--resume``). Each case checks the
line on stderr, the exit code, what the model was sent, and that the saved session keeps what was said.
The servers are tests/mcptools/demo_server.py, a real server written with the SDK, over stdio.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.agent.conversation import Conversation
from swebash_ai.config.settings import load_settings
from swebash_ai.frontends.oneshot import ExitCode, OneShotOptions, run_oneshot
from swebash_ai.testing.fake_server import FakeLLMServer, Reply
from swebash_ai.tools.mcp_stdio import MAX_MESSAGE_BYTES, LineReader, text_prefix
from tests.mcptools._support import server_table

pytestmark = pytest.mark.timeout(120)
REPO = Path(__file__).resolve().parents[2]


def configure(text: str) -> None:
    path = Path(os.environ["SWEBASH_AI_HOME"]) / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def ask(question: str, workspace: Path, resume: str | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_oneshot(load_settings({}), OneShotOptions(question, yes=True, resume=resume, cwd=workspace),
                       stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def saved_session() -> tuple[Path, list[dict[str, Any]]]:
    (path,) = load_settings({}).locations.sessions_dir.glob("*.jsonl")
    return path, [json.loads(line) for line in path.read_text().splitlines()[1:]]


@pytest.mark.parametrize("tool", ["crash", "torn"])  # exits on the call; exits halfway through writing the answer
def test_a_server_that_dies_mid_call_is_a_one_line_tool_error_and_the_turn_goes_on(
    llm_env: FakeLLMServer, workspace: Path, tool: str
) -> None:
    llm_env.enqueue(Reply.text("First."))
    assert ask("first", workspace)[0] == ExitCode.OK
    configure(server_table("demo", auto_approve=[tool, "echo"]))
    llm_env.enqueue(
        Reply.tool_calls([(f"mcp__demo__{tool}", {})]),
        Reply.tool_calls([("mcp__demo__echo", {"text": "again?"})]),  # the model tries the server once more
        Reply.text("The server is gone; carrying on without it."),
    )
    code, out, err = ask("use the server", workspace, resume="")

    assert code == ExitCode.OK and out == "The server is gone; carrying on without it.\n"
    assert err.splitlines() == [
        f"✗ demo: {tool}(): error: MCP server demo stopped during the call to {tool}; its tools are unavailable "
        "for the rest of this session.",
        "✗ demo: echo(text='again?'): error: MCP server demo is not running (crashed: the server stopped during "
        "a call).",
    ]
    sent = [m["content"] for m in llm_env.requests[-1]["body"]["messages"] if m["role"] == "tool"]
    assert sent == [f"Error: MCP server demo stopped during the call to {tool}; its tools are unavailable for the "
                    "rest of this session.",
                    "Error: MCP server demo is not running (crashed: the server stopped during a call)."]
    path, messages = saved_session()
    assert [m["content"] for m in messages[:2]] == ["first", "First."]  # what was saved before is kept
    assert [m["role"] for m in messages[2:]] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert Conversation.load(path).is_valid()


MEASURE = """
import resource, sys
from swebash_ai.frontends.cli import main
code = main(sys.argv[1:])
sys.stderr.write(f"maxrss_kb={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}\\n")
sys.exit(code)
"""


def one_shot_measured(*args: str) -> tuple[int, str, str, int]:
    """A real one-shot run; its own peak memory (its servers' not counted), in KiB."""
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "SWEBASH_AI_PROVIDER_RETRIES": "0"}
    res = subprocess.run([sys.executable, "-c", MEASURE, *args], capture_output=True, text=True, env=env,
                         stdin=subprocess.DEVNULL, timeout=100, start_new_session=True)
    err, _, rss = res.stderr.rpartition("maxrss_kb=")
    return res.returncode, res.stdout, err, int(rss)


def test_a_50_mb_answer_is_cut_with_a_note_and_never_held_whole(llm_env: FakeLLMServer, workspace: Path) -> None:
    llm_env.enqueue(Reply.text("First."))
    code, out, err, first_rss = one_shot_measured("--yes", "-c", "first")  # no server: what a run costs
    assert (code, out) == (ExitCode.OK, "First.\n"), err
    _, before = saved_session()

    configure(server_table("demo", auto_approve=["big"]))
    llm_env.enqueue(Reply.tool_calls([("mcp__demo__big", {"n": 50_000_000})]), Reply.text("That was a lot."))
    code, out, err, big_rss = one_shot_measured("--yes", "--resume", "-c", "a big answer")
    assert (code, out) == (ExitCode.OK, "That was a lot.\n"), err
    assert re.fullmatch(r"✓ demo: big\(n=50000000\): ok \([\d.]+s\)\n", err), err
    # The answer is ~100 MB on the pipe (the text, and the same again as structured content): the client reads
    # it through holding at most 16 MiB, so the run's peak (the SDK's import included) stays below one copy.
    assert big_rss - first_rss < 80 * 1024, (first_rss, big_rss)

    path, messages = saved_session()
    assert messages[: len(before)] == before  # the earlier turn is kept as it was
    result = messages[-2]
    assert result["role"] == "tool" and result["content"].startswith("x" * 1000)
    cap = load_settings({}).settings.exec_max_output
    note = (f"[... cut: MCP server demo answered big with {{}} bytes, more than the {MAX_MESSAGE_BYTES} bytes "
            "read of one answer; this is the start of its text; ask for less]")
    body, _, said = result["content"].rpartition("\n")
    assert body == "x" * cap
    size = int(re.search(r"with (\d+) bytes", said).group(1))  # type: ignore[union-attr]
    assert size > 100_000_000 and said == note.format(size)
    assert Conversation.load(path).is_valid()


def _messages(reader: LineReader, data: bytes, step: int) -> list[Any]:
    got: list[Any] = []
    for i in range(0, len(data), step):
        got += reader.feed(data[i : i + step])
    return got


@pytest.mark.parametrize("step", [1, 7, 4096, 10**9])  # however the pipe splits the bytes
def test_the_line_reader_splits_messages_and_answers_an_oversize_one_by_its_id(step: int) -> None:
    small = b'{"jsonrpc": "2.0", "id": 1, "result": {}}\n'
    oversize = (b'{"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "' + b"y" * 5000
                + b'"}]}}\n')
    id_last = b'{"result": {"content": []}, "' + b"z" * 5000 + b'": 1, "id": "s-3", "jsonrpc": "2.0"}\n'
    no_id = b'{"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "' + b"n" * 5000 + b'"}}\n'
    got = _messages(LineReader(limit=1000, head=100), small + oversize + id_last + no_id + small, step)
    assert [m.message.id for m in got] == [1, 2, "s-3", 1]  # the notification without an id is dropped
    held = "y" * (100 - oversize.index(b"yyy"))  # what fits in the head
    assert got[1].message.error.data == {"bytes": len(oversize) - 1, "text": held}
    assert got[2].message.error.data["text"] == ""


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        ('{"text": "abc', "abc"),  # cut inside the string
        ('{"text": "a\\"b", "x": 1}', 'a"b'),  # a whole string, with an escape
        ('{"text": "caf\\u00', "caf"),  # cut inside a \\u escape
        ('{"text": "ab\\', "ab"),  # cut after a backslash
        ('{"data": 1}', ""),  # no text at all
    ],
)
def test_the_start_of_a_cut_text_is_decoded(head: str, expected: str) -> None:
    assert text_prefix(head) == expected
