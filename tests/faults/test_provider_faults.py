"""Provider faults, end to end: the one-shot front end against a misbehaving server on loopback.

Every case runs in every wire format and lane: OpenAI chat completions over the httpx lane and over litellm
(``hosted_vllm/``, the official openai client underneath), Anthropic Messages and Ollama's native chat over
litellm. A first turn is answered and saved; the fault happens in the second turn (``--resume``). Each case
checks the line on stderr, the exit code, stdout, and that the saved session keeps what was said.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.config.settings import load_settings
from swebash_ai.frontends.oneshot import ExitCode, OneShotOptions, run_oneshot
from swebash_ai.testing.fake_server import FakeLLMServer, Reply

FIRST = "The first answer."


@dataclass(frozen=True)
class Lane:
    id: str
    dialect: str
    model: str


LANES = [
    Lane("httpx-openai", "openai", "openai/fake-model"),
    Lane("litellm-openai", "openai", "hosted_vllm/fake-model"),
    Lane("litellm-anthropic", "anthropic", "anthropic/claude-sonnet-4-5"),
    Lane("litellm-ollama", "ollama", "ollama_chat/fake-model"),
]


@dataclass
class Outcome:
    code: int
    out: str
    err: str
    seconds: float
    saved: list[dict[str, Any]]
    """The saved session's messages, as written (the meta line left out)."""

    @property
    def lines(self) -> list[str]:
        return self.err.splitlines()


class Faults:
    """One lane: its server, and a one-shot run that resumes the first turn's session."""

    def __init__(self, lane: Lane, server: FakeLLMServer, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.lane = lane
        self.server = server
        self.workspace = workspace
        self.monkeypatch = monkeypatch
        monkeypatch.setenv("SWEBASH_AI_MODEL", lane.model)
        monkeypatch.setenv("SWEBASH_AI_API_BASE", server.base_url)
        monkeypatch.setenv("SWEBASH_AI_API_KEY", "sk-test-0000000000000000")
        monkeypatch.setenv("SWEBASH_AI_RETRY_BASE_DELAY", "0")
        monkeypatch.setenv("SWEBASH_AI_PROVIDER_RETRIES", "1")
        monkeypatch.setenv("SWEBASH_AI_REQUEST_TIMEOUT", "5")

    def run(self, question: str, *, resume: bool = True) -> Outcome:
        loaded = load_settings({})
        out, err = io.StringIO(), io.StringIO()
        options = OneShotOptions(question, yes=True, resume="" if resume else None, cwd=self.workspace)
        start = time.monotonic()
        code = run_oneshot(loaded, options, stdout=out, stderr=err)
        seconds = time.monotonic() - start
        files = sorted(loaded.locations.sessions_dir.glob("*.jsonl"))
        assert len(files) == 1, files  # one session, resumed: nothing written beside it
        rows = [json.loads(line) for line in files[0].read_text(encoding="utf-8").splitlines() if line.strip()]
        return Outcome(code, out.getvalue(), err.getvalue(), seconds, [r for r in rows if "role" in r])

    def fault(self, *replies: Reply, question: str = "second question") -> Outcome:
        """A first turn that goes well, then ``question`` answered by ``replies``."""
        self.server.enqueue(Reply.text(FIRST))
        first = self.run("first question", resume=False)
        assert first.code == ExitCode.OK and first.out == FIRST + "\n", first.err
        self.server.enqueue(*replies)
        outcome = self.run(question)
        # Nothing already said is lost, whatever the fault.
        said = [(m["role"], m.get("content")) for m in outcome.saved[:3]]
        assert said == [("user", "first question"), ("assistant", FIRST), ("user", question)]
        return outcome

    @property
    def answered_requests(self) -> int:
        """Requests of the second turn (the first turn made one)."""
        chat = ("/chat/completions", "/messages", "/api/chat")  # not Ollama's /api/show
        return len([r for r in self.server.requests if r["path"].split("?")[0].endswith(chat)]) - 1


@pytest.fixture(params=LANES, ids=[lane.id for lane in LANES])
def lane(request: pytest.FixtureRequest, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Faults]:
    spec: Lane = request.param
    with FakeLLMServer(spec.dialect) as server:  # type: ignore[arg-type]
        yield Faults(spec, server, workspace, monkeypatch)
    assert not server.violations, server.violations


def error_line(outcome: Outcome) -> str:
    """The one error line (the hint, if any, follows it)."""
    found = [line for line in outcome.lines if line.startswith("swebash-ai: ") and ":" in line[12:]]
    assert found, outcome.err
    assert "Traceback" not in outcome.err
    return found[-1]


# --- statuses ----------------------------------------------------------------------------------------
def test_server_error_is_retried_then_one_line_and_exit_1(lane: Faults) -> None:
    outcome = lane.fault(Reply.error(500, "boom"), Reply.error(500, "boom"))
    assert outcome.code == ExitCode.ERROR
    line = error_line(outcome)
    assert "Provider unavailable" in line and "gave up after 2 attempts" in line
    assert lane.answered_requests == 2
    assert outcome.out == ""


def test_rate_limit_waits_for_retry_after_then_answers(lane: Faults) -> None:
    outcome = lane.fault(Reply.error(429, "slow down", retry_after=0.3), Reply.text("Now it works."))
    assert outcome.code == ExitCode.OK, outcome.err
    assert outcome.out == "Now it works.\n"
    assert "swebash-ai: Rate limited: retrying in 0.3s (attempt 2)" in outcome.lines
    assert outcome.seconds >= 0.3  # the server's Retry-After, not the zero base delay
    assert outcome.saved[-1] == {"role": "assistant", "content": "Now it works."}


def test_rejected_key_is_not_retried(lane: Faults) -> None:
    outcome = lane.fault(Reply.error(401, "invalid api key"))
    assert outcome.code == ExitCode.ERROR
    line = error_line(outcome)
    assert line.startswith("swebash-ai: Authentication failed:") and "invalid api key" in line
    assert "SWEBASH_AI_API_KEY" in outcome.err
    assert lane.answered_requests == 1


# --- streams that end too early ----------------------------------------------------------------------
def test_stream_cut_after_text_is_kept_marked_incomplete_and_exits_4(lane: Faults) -> None:
    outcome = lane.fault(Reply.truncated("The answer is forty", chunk_size=5))
    assert outcome.code == ExitCode.INCOMPLETE
    assert outcome.out == "The answer is forty\n"  # what arrived, and no more
    line = error_line(outcome)
    assert line.startswith("swebash-ai: Incomplete answer:") and "without its end marker" in line
    assert lane.answered_requests == 1  # text was shown: asking again would repeat it
    assert outcome.saved[-1] == {"role": "assistant", "content": "The answer is forty", "incomplete": "broke_off"}


def test_stream_cut_before_anything_was_shown_is_retried(lane: Faults) -> None:
    outcome = lane.fault(Reply.truncated(""), Reply.text("The whole answer."))
    assert outcome.code == ExitCode.OK, outcome.err
    assert outcome.out == "The whole answer.\n"
    assert "swebash-ai: Incomplete answer: retrying in 0.0s (attempt 2)" in outcome.lines
    assert outcome.saved[-1] == {"role": "assistant", "content": "The whole answer."}


def test_tool_call_with_cut_arguments_never_runs(lane: Faults) -> None:
    call = ("write_file", {"path": "out.txt", "content": "written by a cut call"}, "call_cut")
    # Cut inside the arguments; Ollama sends a call whole, so there only its "done" line is missing.
    drop = 0 if lane.lane.dialect == "ollama" else 2
    outcome = lane.fault(Reply.truncated("Writing it.", [call], split=4, drop=drop))
    assert outcome.code == ExitCode.INCOMPLETE
    assert outcome.out == "Writing it.\n"
    assert "1 tool call with cut arguments was not run" in error_line(outcome)
    assert not (lane.workspace / "out.txt").exists()
    assert not any("write_file" in line for line in outcome.lines if line[:1] in "✓✗")
    assert outcome.saved[-1] == {"role": "assistant", "content": "Writing it.", "incomplete": "broke_off"}


def test_cut_tool_call_alone_is_asked_again(lane: Faults) -> None:
    call = ("write_file", {"path": "out.txt", "content": "written by a cut call"}, "call_cut")
    drop = 0 if lane.lane.dialect == "ollama" else 2
    outcome = lane.fault(Reply.truncated("", [call], split=4, drop=drop), Reply.text("I did not write it."))
    assert outcome.code == ExitCode.OK, outcome.err
    assert not (lane.workspace / "out.txt").exists()
    assert outcome.out == "I did not write it.\n"
    assert not any(m.get("tool_calls") for m in outcome.saved)


def test_event_that_is_not_json(lane: Faults) -> None:
    outcome = lane.fault(Reply.bad_event("Hello there, friend", "<html>oops</html>", after_chunks=2))
    if lane.lane.id in ("httpx-openai", "litellm-anthropic"):
        # The stream went bad (litellm stops reading Anthropic's there): the answer is incomplete.
        assert outcome.code == ExitCode.INCOMPLETE
        assert outcome.out == "Hello th\n"
        assert error_line(outcome).startswith("swebash-ai: Incomplete answer:")
        if lane.lane.id == "httpx-openai":
            assert "not JSON: 'oops'" in error_line(outcome)  # named, its tags not echoed
        assert outcome.saved[-1] == {"role": "assistant", "content": "Hello th", "incomplete": "broke_off"}
    else:
        # The openai client and litellm's Ollama reader skip a line they cannot parse; the end marker arrives.
        assert outcome.code == ExitCode.OK, outcome.err
        assert outcome.out == "Hello there, friend\n"
        assert outcome.saved[-1]["content"] == "Hello there, friend"


# --- time --------------------------------------------------------------------------------------------
def test_hang_times_out_quickly_and_says_so(lane: Faults) -> None:
    lane.monkeypatch.setenv("SWEBASH_AI_REQUEST_TIMEOUT", "0.4")
    outcome = lane.fault(Reply.hang(10), Reply.hang(10))
    assert outcome.code == ExitCode.ERROR
    line = error_line(outcome)
    assert "Provider unavailable" in line and "in time" in line
    assert 0.8 <= outcome.seconds < 5  # two attempts of 0.4 s, not the server's 10 s
    assert lane.answered_requests == 2


def test_slow_but_live_stream_does_not_time_out(lane: Faults) -> None:
    lane.monkeypatch.setenv("SWEBASH_AI_REQUEST_TIMEOUT", "0.4")
    text = "Slow, but every piece arrives in time."
    outcome = lane.fault(Reply.text(text, chunk_size=8, delay=0.1))
    assert outcome.code == ExitCode.OK, outcome.err
    assert outcome.out == text + "\n"
    assert outcome.seconds > 0.4  # longer than the timeout as a whole: the timeout is between bytes
    assert lane.answered_requests == 1


# --- not the API -------------------------------------------------------------------------------------
PROXY_PAGE = """<!DOCTYPE html><html><head><title>Sign in to Example Proxy</title>
<style>body { color: red }</style><script>alert("x")</script></head>
<body><h1>Sign in</h1><p>Your session expired. \x1b[31mPlease log in.</p></body></html>"""


@pytest.mark.parametrize("status", [200, 502])
def test_html_page_is_named_and_not_retried(lane: Faults, status: int) -> None:
    outcome = lane.fault(Reply.raw(PROXY_PAGE, status=status))
    assert outcome.code == ExitCode.ERROR
    line = error_line(outcome)
    assert line.startswith("swebash-ai: Not the API:") and "text/html" in line
    assert "SWEBASH_AI_API_BASE" in outcome.err and "proxy variables" in outcome.err
    assert "<" not in line and "\x1b" not in outcome.err and "alert" not in line
    assert lane.answered_requests == 1
    if lane.lane.id == "httpx-openai" or status != 200:  # litellm does not keep a 200 body it read past
        assert "Sign in to Example Proxy" in line


def test_plain_text_and_odd_json_on_the_fast_lane(lane: Faults) -> None:
    if lane.lane.id != "httpx-openai":
        pytest.skip("the body of a 200 answer litellm read past is not kept")
    outcome = lane.fault(Reply.raw('{"status": "ok", "service": "health"}', content_type="application/json"))
    assert outcome.code == ExitCode.ERROR
    assert "answered 200 with application/json, not the model's API" in error_line(outcome)
    lane.server.enqueue(Reply.raw("Welcome to nginx!", content_type="text/plain"))
    outcome = lane.run("third question")
    assert "with text/plain, not the model's API: 'Welcome to nginx!'" in error_line(outcome)
    assert lane.answered_requests == 2


# --- what the model asked for ------------------------------------------------------------------------
def test_tool_arguments_that_are_not_json_are_refused_to_the_model(lane: Faults) -> None:
    outcome = lane.fault(
        Reply.tool_calls([("write_file", '{"path": "out.txt", "content": ', "call_bad")]),
        Reply.text("Sorry, my call was malformed."),
    )
    assert outcome.code == ExitCode.OK, outcome.err
    assert outcome.out == "Sorry, my call was malformed.\n"
    assert not (lane.workspace / "out.txt").exists()
    assert any(line.startswith("✗ write_file") for line in outcome.lines), outcome.err
    results = [m for m in outcome.saved if m["role"] == "tool"]
    assert len(results) == 1 and "Error" in results[0]["content"]
    sent = json.dumps(lane.server.requests[-1]["body"]["messages"])
    assert "Error" in sent  # the model was told


def test_unknown_tool_is_refused_to_the_model(lane: Faults) -> None:
    outcome = lane.fault(
        Reply.tool_calls([("launch_rockets", {"count": 3}, "call_x")]), Reply.text("That tool does not exist.")
    )
    assert outcome.code == ExitCode.OK, outcome.err
    assert any(line.startswith("✗ launch_rockets") and "Unknown tool" in line for line in outcome.lines), outcome.err
    results = [m for m in outcome.saved if m["role"] == "tool"]
    assert len(results) == 1 and "Unknown tool" in results[0]["content"]
    assert outcome.saved[-1]["content"] == "That tool does not exist."


def test_json_events_end_with_an_error_of_exit_code_4_when_the_answer_broke_off(
    fake_llm: FakeLLMServer, llm_env: FakeLLMServer, workspace: Path
) -> None:
    llm_env.enqueue(Reply.truncated("Half of", chunk_size=4))
    out, err = io.StringIO(), io.StringIO()
    options = OneShotOptions("q", json_events=True, cwd=workspace)
    code = run_oneshot(load_settings({}), options, stdout=out, stderr=err)
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert code == ExitCode.INCOMPLETE
    assert "".join(e["text"] for e in events if e["type"] == "text") == "Half of"
    assert events[-1]["type"] == "error" and events[-1]["exit_code"] == 4
    assert events[-1]["title"] == "Incomplete answer" and err.getvalue() == ""
