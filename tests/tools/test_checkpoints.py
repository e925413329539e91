"""The checkpoint store alone: previous contents too large to keep, and a torn index line after a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from swebash_ai.tools import checkpoints as cp


def test_a_previous_content_over_the_limit_is_named_not_silently_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cp, "MAX_SAVED", 8)
    store = cp.Checkpoints(tmp_path / "s.checkpoints", turn=1)
    big, small = tmp_path / "big.txt", tmp_path / "small.txt"
    big.write_bytes(b"0123456789abcdef")
    small.write_bytes(b"tiny")
    for path, new in ((big, b"B"), (small, b"S")):
        store.record(path, new)
        path.write_bytes(new)
    with pytest.raises(cp.UndoRefused, match=r"big\.txt"):
        cp.undo_last_turn(store)
    assert small.read_bytes() == b"S"  # a refusal changes nothing
    result = cp.undo_last_turn(store, force=True)
    assert small.read_bytes() == b"tiny" and big.read_bytes() == b"B"
    assert any("big.txt: NOT restored" in line for line in result.restored)


def test_a_torn_last_line_is_skipped(tmp_path: Path) -> None:
    store = cp.Checkpoints(tmp_path / "s.checkpoints", turn=3)
    target = tmp_path / "f.txt"
    target.write_text("before")
    store.record(target, b"after")
    target.write_text("after")
    with store.index.open("a") as fh:
        fh.write('{"kind": "file", "tu')  # the process died mid-write
    assert cp.undo_last_turn(store).turn == 3
    assert target.read_text() == "before"
    with pytest.raises(cp.UndoRefused, match="Nothing to undo"):
        cp.undo_last_turn(store)
