"""Recorded provider streams (``recordings/``, sources in its README) replayed byte-exact by the fake server, and
read through the real entry point (``-c`` and ``--json``) in every lane that speaks their wire format.

Each recording is checked for what a person sees: the text (and nothing of the reasoning in it), the tool calls
run, the usage, and for a broken stream the error's words and the exit code. Two are written a byte at a
time, so that an ``é`` and an emoji straddle writes. The provider-level test checks what the front ends do not
show (reasoning, the order of chunks) in each lane.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.frontends.cli import main
from swebash_ai.providers.base import ProviderToolChunk, ReasoningChunk, TextChunk, ToolCall, UsageChunk
from swebash_ai.providers.http_provider import HttpProvider
from swebash_ai.providers.litellm_provider import LiteLLMProvider
from swebash_ai.testing.fake_server import FakeLLMServer, Reply

RECORDINGS = Path(__file__).parent / "recordings"


@dataclass(frozen=True)
class Case:
    file: str
    dialect: str
    models: tuple[str, ...]
    """Each model is a lane: ``openai/...`` the httpx lane, any other prefix litellm's."""
    text: str = ""
    reasoning: str = ""
    calls: tuple[str, ...] = ()
    usage: tuple[int, int] | None = None
    error: str = ""
    exit_code: int = 0
    write_size: int = 0
    provider_tools: tuple[str, ...] = ()

    @property
    def content_type(self) -> str:
        return "application/x-ndjson" if self.file.endswith(".ndjson") else "text/event-stream; charset=utf-8"


# Calls to read_file answer a.txt and b.txt from the workspace; the answer after them is scripted.
AFTER_CALLS = "Both files read."

CASES = [
    Case("openai_chat_text.sse", "openai", ("openai/gpt-4o", "azure/gpt-4o"), text="Café ready ☕🚀 done.",
         usage=(19, 10), write_size=1),
    Case("openai_parallel_tools.sse", "openai", ("openai/gpt-4o", "azure/gpt-4o"), calls=("read_file", "read_file"),
         usage=(82, 46)),
    Case("azure_filter_usage.sse", "openai", ("openai/gpt-4o", "azure/gpt-4o"), text="Filtered but fine.",
         usage=(11, 4)),
    Case("openrouter_reasoning.sse", "openai", ("openai/anthropic/claude-3.7-sonnet:thinking",
                                                "openrouter/anthropic/claude-3.7-sonnet:thinking"),
         text="Hello from OpenRouter.", reasoning="The user greets me. A short reply will do.", usage=(37, 25)),
    Case("deepseek_reasoner.sse", "openai", ("openai/deepseek-reasoner", "deepseek/deepseek-reasoner"),
         text="你好！ Hello.", reasoning="好的，the user says hello.", usage=(13, 21)),
    Case("mistral_magistral.sse", "openai", ("openai/magistral-medium-2507", "mistral/magistral-medium-2507"),
         text="2 + 2 = 4.", reasoning="Okay, the user wants two plus two.", usage=(18, 27)),
    # A model name litellm has no Hugging Face tokenizer for: on an error litellm counts tokens, and for Llama
    # names it fetches a tokenizer from the internet.
    Case("groq_stream_error.sse", "openai", ("openai/qwen/qwen3-32b", "groq/qwen/qwen3-32b"),
         error="Failed to call a function", exit_code=1),
    Case("anthropic_thinking.sse", "anthropic", ("anthropic/claude-sonnet-4-5",),
         text="27 * 453 = 12,231 — voilà ✅", reasoning="Let me solve this step by step:\n\n1. First break down "
         "27 * 453\n2. 453 = 400 + 50 + 3", usage=(85, 93), write_size=1),
    Case("anthropic_parallel_tools.sse", "anthropic", ("anthropic/claude-sonnet-4-5",), text="Reading both files.",
         calls=("read_file", "read_file"), usage=(472, 89)),
    Case("anthropic_server_tools.sse", "anthropic", ("anthropic/claude-sonnet-4-5",),
         text="I'll check the weather.It is sunny in New York today.", usage=(10682, 510),
         provider_tools=("web_search", "tool_search_tool_regex")),
    Case("anthropic_overloaded.sse", "anthropic", ("anthropic/claude-sonnet-4-5",), text="Partial an",
         error="Overloaded", exit_code=4),
    Case("gemini_thoughts.sse", "gemini", ("gemini/gemini-2.5-flash",), text="Two plus two is four.",
         reasoning="**Adding small numbers**\n\nTwo plus two is a simple sum.", usage=(9, 54)),
    Case("gemini_function_call.sse", "gemini", ("gemini/gemini-2.5-flash",), calls=("read_file",), usage=(70, 60)),
    Case("ollama_no_message.ndjson", "ollama", ("ollama_chat/llama3.2",), text="The sky is blue. 🌤",
         usage=(26, 282)),
    Case("ollama_thinking.ndjson", "ollama", ("ollama_chat/qwen3",), text="Hi there, café time.",
         reasoning="The user says hi.", usage=(12, 7), write_size=1),
    Case("ollama_tool_call.ndjson", "ollama", ("ollama_chat/llama3.2",), calls=("read_file",), usage=(122, 33)),
]

LANES = [pytest.param(case, model, id=f"{case.file}-{model.split('/')[0]}") for case in CASES for model in case.models]


def _replay(case: Case) -> Reply:
    return Reply.replay((RECORDINGS / case.file).read_bytes(), content_type=case.content_type,
                        write_size=case.write_size)


def _after(case: Case) -> Reply:
    """What the server answers once the calls ran (Gemini's dialect serves recordings only)."""
    if case.dialect == "gemini":
        return Reply.replay((RECORDINGS / "gemini_thoughts.sse").read_bytes())
    return Reply.text(AFTER_CALLS)


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str


def _run(server: FakeLLMServer, model: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
         *args: str) -> Run:
    """The command line's ``main`` in this process (litellm is imported once per worker, not once per run: the
    subprocess form of the same runs is tests/cli's)."""
    base = server.base_url.removesuffix("/v1") if model.startswith("azure/") else server.base_url
    for name, value in (("SWEBASH_AI_MODEL", model), ("SWEBASH_AI_API_BASE", base),
                        ("SWEBASH_AI_API_KEY", "sk-test-0000000000000000"), ("SWEBASH_AI_PROVIDER_RETRIES", "0"),
                        ("SWEBASH_AI_RETRY_BASE_DELAY", "0"), ("AZURE_API_VERSION", "2024-10-21")):
        monkeypatch.setenv(name, value)
    capsys.readouterr()
    code = main(["-c", "read a.txt and b.txt", *args])
    out = capsys.readouterr()
    return Run(code, out.out, out.err)


@pytest.fixture
def files(workspace: Path) -> Path:
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "b.txt").write_text("beta\n")
    return workspace


def _serve(case: Case) -> FakeLLMServer:
    server = FakeLLMServer(case.dialect)  # type: ignore[arg-type]
    server.enqueue(_replay(case))
    if case.calls:
        server.enqueue(_after(case))
    return server.start()


@pytest.mark.parametrize(("case", "model"), LANES)
def test_json_events_of_a_recording(case: Case, model: str, files: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    with _serve(case) as server:
        res = _run(server, model, monkeypatch, capsys, "--json")
    assert not server.violations, server.violations
    assert res.returncode == case.exit_code, res.stdout + res.stderr
    events = [json.loads(line) for line in res.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    text = "".join(e["text"] for e in events if e["type"] == "text")
    calls = [e for e in events if e["type"] == "tool_call"]
    results = {e["id"]: e for e in events if e["type"] == "tool_result"}
    assert [c["name"] for c in calls] == list(case.calls)
    for call in calls:  # every call ran here, and read what it was asked for
        assert results[call["id"]]["ok"], results[call["id"]]
        assert results[call["id"]]["content"].strip().endswith(("alpha", "beta"))
    expected = case.text + (AFTER_CALLS if case.calls and case.dialect != "gemini" else "")
    expected += "Two plus two is four." if case.calls and case.dialect == "gemini" else ""
    assert text == expected
    if case.reasoning:
        assert case.reasoning.split()[0] not in text  # the reasoning is never the answer
    usage = [e for e in events if e["type"] == "usage"]
    if case.usage is not None:
        assert (usage[0]["prompt_tokens"], usage[0]["completion_tokens"]) == case.usage
    notices = [e["text"] for e in events if e["type"] == "notice"]
    for name in case.provider_tools:
        assert any(f"The provider ran its own tool {name}" in n for n in notices), notices
    if case.provider_tools:
        assert len(server.requests) == 1  # nothing ran here, so nothing went back
    if case.error:
        error = events[-1]
        assert error["type"] == "error" and case.error in error["message"], error
        assert error["exit_code"] == case.exit_code
        assert "answered 400" not in error["message"] and "ValueError" not in error["message"]
    else:
        assert kinds[-1] == "final" and events[-1]["exit_code"] == 0


@pytest.mark.parametrize("case", [pytest.param(c, id=c.file) for c in CASES])
def test_plain_answer_of_a_recording(case: Case, files: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """``-c`` in the recording's own provider's lane (the last model: litellm's, where it has one)."""
    with _serve(case) as server:
        res = _run(server, case.models[-1], monkeypatch, capsys)
    assert not server.violations, server.violations
    assert res.returncode == case.exit_code, res.stdout + res.stderr
    assert "Traceback" not in res.stderr
    if case.text:
        assert case.text.splitlines()[0] in res.stdout
    if case.reasoning:
        assert case.reasoning.split()[0] not in res.stdout
    if case.calls:
        assert (AFTER_CALLS if case.dialect != "gemini" else "Two plus two is four.") in res.stdout
    if case.error:
        assert case.error in res.stderr
    for name in case.provider_tools:
        assert f"The provider ran its own tool {name}" in res.stderr


@pytest.mark.parametrize(("case", "model"), LANES)
async def test_chunks_of_a_recording(case: Case, model: str) -> None:
    """What the front ends do not show: reasoning comes as reasoning, provider-run tools as such, in order."""
    tools = [{"type": "function", "function": {"name": "read_file", "description": "Read a file.", "parameters": {
        "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}]
    with _serve(case) as server:
        lane = HttpProvider if model.startswith("openai/") else LiteLLMProvider
        provider = lane(model, api_base=server.base_url, api_key="sk-test", retries=0, timeout=20)
        chunks: list[Any] = []
        try:
            async for chunk in provider.stream([{"role": "user", "content": "hi"}], tools):
                chunks.append(chunk)
        except Exception as exc:
            assert case.error and case.error in str(exc), exc
        else:
            assert not case.error
    assert "".join(c.text for c in chunks if isinstance(c, ReasoningChunk)) == case.reasoning
    assert "".join(c.text for c in chunks if isinstance(c, TextChunk)) == case.text
    assert [c.name for c in chunks if isinstance(c, ToolCall)] == list(case.calls)
    assert tuple(c.name for c in chunks if isinstance(c, ProviderToolChunk)) == case.provider_tools
    used = [c for c in chunks if isinstance(c, UsageChunk)]
    if case.usage is not None and not case.error:
        assert len(used) == 1 and (used[0].prompt_tokens, used[0].completion_tokens) == case.usage


async def test_an_ollama_line_litellm_cannot_read_says_so() -> None:
    """A line without ``message`` that is not the last (``done`` false): an error in words that say what came,
    never "the provider answered 400" (nothing answered 400)."""
    from swebash_ai import errors

    body = (b'{"model":"llama3.2","created_at":"2023-08-04T08:52:19Z","message":{"role":"assistant","content":"Hi"},'
            b'"done":false}\n{"model":"llama3.2","created_at":"2023-08-04T08:52:20Z","done":false}\n')
    with FakeLLMServer("ollama") as server:
        server.enqueue(Reply.replay(body, content_type="application/x-ndjson"))
        provider = LiteLLMProvider("ollama_chat/llama3.2", api_base=server.base_url, retries=0, timeout=20)
        with pytest.raises(errors.ProviderError) as caught:
            async for _ in provider.stream([{"role": "user", "content": "hi"}]):
                pass
    message = caught.value.message
    assert "Ollama sent a line that could not be read (KeyError: 'message')" in message, message
    assert "400" not in message
