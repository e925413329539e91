"""When a streamed tool call counts as complete, so that it may be yielded (and run) before the stream ends.

Over real HTTP on every lane: ``test_conformance.py::test_the_first_call_arrives_while_the_rest_is_held_back``.
"""

from __future__ import annotations

from typing import Any

import pytest

from swebash_ai.providers.base import ToolCallAccumulator


def delta(index: int, *, id: str | None = None, name: str | None = None, args: str | None = None) -> dict[str, Any]:
    fn = {k: v for k, v in (("name", name), ("arguments", args)) if v is not None}
    out: dict[str, Any] = {"index": index, "function": fn}
    if id is not None:
        out["id"] = id
    return out


A = [delta(0, id="a", name="read_file"), delta(0, args='{"path": '), delta(0, args='"x"}')]
B = [delta(1, id="b", name="run_command"), delta(1, args='{"command": "ls"}')]


@pytest.mark.parametrize(
    ("chunks", "early"),
    [
        # The usual order: call 0 whole, then call 1 opens: call 0 is complete at that moment.
        pytest.param([[d] for d in A + B], {3: ["a"]}, id="next-call-completes-the-previous"),
        # Deltas of two calls alternate (some servers): call 0's arguments are not whole when call 1
        # opens, so only the delta after its last fragment shows it complete.
        pytest.param([[A[0]], [B[0]], [A[1]], [B[1]], [A[2]], [delta(1, args="")]], {5: ["a"]},
                     id="interleaved-waits-for-whole-arguments"),
        # Invalid arguments that begin with a valid object are not complete early (a fragment may follow).
        pytest.param([[A[0]], [delta(0, args='{"path": "x"}')], [delta(0, args="}")], [B[0]]], {},
                     id="object-then-garbage-is-never-early"),
        # Empty arguments so far: maybe the first fragment is still to come.
        pytest.param([[delta(0, id="a", name="read_file")], [B[0]], [B[1]]], {}, id="no-arguments-yet"),
        # Ollama through litellm: every call whole, several in one chunk.
        pytest.param([[delta(0, id="a", name="read_file", args="{}"), delta(1, id="b", name="x", args="{}")]],
                     {0: ["a"]}, id="calls-in-one-chunk"),
        # A call without a name is not a call yet, even with whole arguments.
        pytest.param([[delta(0, id="a", args="{}")], [B[0]], [delta(0, name="read_file")], [B[1]]], {3: ["a"]},
                     id="name-late"),
    ],
)
def test_when_a_call_counts_as_complete(chunks: list[list[dict[str, Any]]], early: dict[int, list[str]]) -> None:
    acc = ToolCallAccumulator()
    seen: dict[int, list[str]] = {}
    for n, chunk in enumerate(chunks):
        out = acc.add(chunk)
        if out:
            seen[n] = [c.id for c in out]
    assert seen == early
    rest = acc.complete()
    everything = [i for ids in seen.values() for i in ids] + [c.id for c in rest]
    assert sorted(everything) == sorted({d["id"] for c in chunks for d in c if "id" in d})  # each call once
    assert acc.complete() == []


def test_a_fragment_after_a_call_was_handed_out_is_ignored() -> None:
    acc = ToolCallAccumulator()
    acc.add(A)
    early = acc.add(B[:1])
    assert [c.arguments for c in early] == ['{"path": "x"}']
    acc.add([delta(0, args="junk")])
    assert [c.id for c in acc.complete()] == ["b"]

