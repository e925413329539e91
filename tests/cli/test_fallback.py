"""Text tool calls: the parser (a table) and the provider wrapper on the scripted provider (no HTTP)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from swebash_ai.errors import BadRequestError, ProviderUnavailableError
from swebash_ai.providers.base import Chunk, FinishChunk, TextChunk, ToolCall
from swebash_ai.providers.scripted import ScriptedProvider, calls, text
from swebash_ai.providers.text_tools import TextToolCallProvider, is_tools_unsupported, parse_tool_calls

KNOWN = {"read_file", "run_command"}
TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {"name": n, "description": f"The {n} tool.",
                                      "parameters": {"type": "object", "properties": {}}}}
    for n in sorted(KNOWN)
]

# (text, whole, expected calls [(name, arguments dict)], expected prose)
PARSE_CASES = [
    # the documented shape, fenced
    ('```json\n{"tool": "read_file", "arguments": {"path": "a.txt"}}\n```', True,
     [("read_file", {"path": "a.txt"})], ""),
    # OpenAI-ish name/arguments, bare
    ('{"name": "run_command", "arguments": {"command": "ls"}}', True, [("run_command", {"command": "ls"})], ""),
    # arguments given as a JSON string (as native calls carry them)
    ('{"name": "run_command", "arguments": "{\\"command\\": \\"ls\\"}"}', True,
     [("run_command", {"command": "ls"})], ""),
    # llama-style "parameters"
    ('{"name": "read_file", "parameters": {"path": "x"}}', True, [("read_file", {"path": "x"})], ""),
    # OpenAI's {"type": "function", "function": {...}} wrapper
    ('{"type": "function", "function": {"name": "read_file", "arguments": {"path": "y"}}}', True,
     [("read_file", {"path": "y"})], ""),
    # an unknown tool is not a call: ordinary JSON must stay text
    ('{"name": "delete_everything", "arguments": {}}', True, [], None),
    # JSON that is data, not a call
    ('{"name": "Ada", "age": 36}', True, [], None),
    # whole=True: prose around the call means it is an answer, not a printed call
    ('Here is how: {"name": "run_command", "arguments": {"command": "ls"}}', True, [], None),
    # whole=False (text mode): prose first, then a fenced call
    ('I will list it.\n```json\n{"tool": "run_command", "arguments": {"command": "ls"}}\n```', False,
     [("run_command", {"command": "ls"})], "I will list it."),
    # whole=False: a bare object starting a line
    ('Checking.\n{"tool": "read_file", "arguments": {"path": "b"}}', False, [("read_file", {"path": "b"})],
     "Checking."),
    # a python block is never a call
    ("```python\nprint({'tool': 1})\n```", False, [], None),
    # plain prose
    ("Just an answer.", False, [], None),
]


@pytest.mark.parametrize(("reply", "whole", "expected", "prose"), PARSE_CASES)
def test_parse_tool_calls(reply: str, whole: bool, expected: list[tuple[str, dict[str, Any]]],
                          prose: str | None) -> None:
    found_prose, found = parse_tool_calls(reply, KNOWN, whole=whole)
    assert [(c.name, json.loads(c.arguments)) for c in found] == expected
    assert found_prose == (reply if prose is None else prose)
    assert all(c.id for c in found)


@pytest.mark.parametrize(("error", "expected"), [
    (BadRequestError("registry.ollama.ai/library/gemma:2b does not support tools"), True),  # Ollama
    (BadRequestError('"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser'), True),  # vLLM
    (BadRequestError("tools param requires --jinja flag"), True),  # llama.cpp
    (BadRequestError("Unrecognized request argument supplied: functions"), True),
    (BadRequestError("The conversation is too long"), False),  # another refusal
    (ProviderUnavailableError("tools server does not support this"), False),  # not a 400
])
def test_is_tools_unsupported(error: Exception, expected: bool) -> None:
    assert is_tools_unsupported(error) is expected


async def _collect(provider: Any, *args: Any) -> list[Chunk]:
    return [chunk async for chunk in provider.stream(*args)]


async def test_recovers_a_call_printed_as_json() -> None:
    printed = '```json\n{"name": "read_file", "arguments": {"path": "notes.txt"}}\n```'
    inner = ScriptedProvider([text(printed, pieces=5)])
    wrapper = TextToolCallProvider(inner)
    chunks = await _collect(wrapper, [{"role": "user", "content": "read notes"}], TOOLS)
    assert not [c for c in chunks if isinstance(c, TextChunk)]  # the JSON is not shown as the answer
    (call,) = [c for c in chunks if isinstance(c, ToolCall)]
    assert call.name == "read_file" and json.loads(call.arguments) == {"path": "notes.txt"}
    assert chunks[-1] == FinishChunk("tool_calls")
    assert inner.requests[0]["tools"] == TOOLS  # native tools still offered
    assert wrapper.recovered == 1


async def test_ordinary_text_streams_through_unchanged() -> None:
    answer = "The file has 3 lines.\n```python\nprint('hi')\n```\n"
    inner = ScriptedProvider([text(answer, pieces=6)])
    chunks = await _collect(TextToolCallProvider(inner), [{"role": "user", "content": "q"}], TOOLS)
    texts = [c.text for c in chunks if isinstance(c, TextChunk)]
    assert "".join(texts) == answer
    assert len(texts) == 6  # released piece by piece, not held to the end
    assert chunks[-1] == FinishChunk("stop")


async def test_json_answer_for_unknown_tool_is_released_as_text() -> None:
    answer = '{"name": "Ada", "arguments": {"x": 1}}'
    chunks = await _collect(TextToolCallProvider(ScriptedProvider([text(answer, pieces=3)])),
                            [{"role": "user", "content": "q"}], TOOLS)
    assert "".join(c.text for c in chunks if isinstance(c, TextChunk)) == answer
    assert not [c for c in chunks if isinstance(c, ToolCall)]


async def test_native_calls_pass_through() -> None:
    inner = ScriptedProvider([calls(("run_command", {"command": "ls"}))])
    chunks = await _collect(TextToolCallProvider(inner), [{"role": "user", "content": "q"}], TOOLS)
    assert [c.name for c in chunks if isinstance(c, ToolCall)] == ["run_command"]


async def test_text_mode_describes_tools_and_parses_the_reply() -> None:
    reply = 'Let me look.\n```json\n{"tool": "run_command", "arguments": {"command": "ls -la"}}\n```'
    inner = ScriptedProvider([text(reply, pieces=7)])
    history = [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "what is here?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": "hello"},
    ]
    chunks = await _collect(TextToolCallProvider(inner, text_mode=True), history, TOOLS)
    sent = inner.requests[0]
    assert sent["tools"] == []  # no native tools sent
    system = sent["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("You are helpful.")
    assert "- run_command: The run_command tool." in system["content"]
    roles = [m["role"] for m in sent["messages"]]
    assert roles == ["system", "user", "assistant", "user"]  # tool traffic rewritten as text
    assert '"tool": "read_file"' in sent["messages"][2]["content"]
    assert sent["messages"][3]["content"].endswith("hello")
    assert "".join(c.text for c in chunks if isinstance(c, TextChunk)).strip() == "Let me look."
    (call,) = [c for c in chunks if isinstance(c, ToolCall)]
    assert call.name == "run_command" and json.loads(call.arguments) == {"command": "ls -la"}


async def test_text_mode_plain_answer_is_text() -> None:
    answer = "It is a directory with two files.\nNothing else."
    chunks = await _collect(TextToolCallProvider(ScriptedProvider([text(answer, pieces=4)]), text_mode=True),
                            [{"role": "user", "content": "q"}], TOOLS)
    assert "".join(c.text for c in chunks if isinstance(c, TextChunk)) == answer
    assert not [c for c in chunks if isinstance(c, ToolCall)]


async def test_without_tools_the_wrapper_is_transparent() -> None:
    inner = ScriptedProvider([text('{"name": "read_file", "arguments": {}}')])
    chunks = await _collect(TextToolCallProvider(inner, text_mode=True), [{"role": "user", "content": "q"}], None)
    assert chunks == [TextChunk('{"name": "read_file", "arguments": {}}'), FinishChunk("stop")]
    assert inner.requests[0]["messages"] == [{"role": "user", "content": "q"}]


class _Counting:
    """An inner provider that counts the chunks it has handed out."""

    model = "counting/test"

    def __init__(self, chunks: list[Chunk]) -> None:
        self.chunks = chunks
        self.handed = 0

    async def stream(self, *args: Any) -> Any:
        for chunk in self.chunks:
            self.handed += 1
            yield chunk


@pytest.mark.parametrize("fenced", [True, False])
async def test_text_mode_yields_the_call_as_soon_as_it_is_complete(fenced: bool) -> None:
    block = '{"tool": "run_command", "arguments": {"command": "ls"}}'
    body = f"```json\n{block}\n```" if fenced else block
    pieces = ["Let me look.\n", *[body[i : i + 9] for i in range(0, len(body), 9)], "\nThen I will",
              " read the output.", " More words."]
    inner = _Counting([TextChunk(p) for p in pieces] + [FinishChunk("stop")])
    wrapper = TextToolCallProvider(inner, text_mode=True)  # type: ignore[arg-type]
    seen: list[tuple[Chunk, int]] = []
    async for chunk in wrapper.stream([{"role": "user", "content": "q"}], TOOLS):
        seen.append((chunk, inner.handed))
    (call, handed), = [(c, n) for c, n in seen if isinstance(c, ToolCall)]
    assert json.loads(call.arguments) == {"command": "ls"}
    assert handed < len(pieces) - 2  # yielded while the model was still writing
    texts = [c.text for c, _ in seen if isinstance(c, TextChunk)]
    assert "".join(texts).strip() == "Let me look."  # the prose before; what follows the call is dropped
    assert seen[-1][0] == FinishChunk("tool_calls")
    assert wrapper.recovered == 1


async def test_text_mode_waits_for_a_fence_to_close() -> None:
    # A whole object inside a fence that is still open is complete JSON, but the prose check must see the
    # fence closed first, or the opening fence would be shown as text.
    body = '```json\n{"tool": "run_command", "arguments": {"command": "ls"}}'
    inner = _Counting([TextChunk("Sure.\n"), TextChunk(body), TextChunk("\n```"), FinishChunk("stop")])
    seen: list[tuple[Chunk, int]] = []
    async for chunk in TextToolCallProvider(inner, text_mode=True).stream(  # type: ignore[arg-type]
        [{"role": "user", "content": "q"}], TOOLS
    ):
        seen.append((chunk, inner.handed))
    (handed,) = [n for c, n in seen if isinstance(c, ToolCall)]
    assert handed == 3
    assert "".join(c.text for c, _ in seen if isinstance(c, TextChunk)).strip() == "Sure."
