"""``swebash-ai undo``: file changes made through the real loop (one-shot, scripted server) undone turn by turn."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from swebash_ai.testing.fake_server import FakeLLMServer, Reply


def _user_texts(server: FakeLLMServer, index: int) -> list[str]:
    return [m["content"] for m in server.requests[index]["body"]["messages"] if m["role"] == "user"]


def test_write_and_edit_undone_turn_by_turn_and_the_model_is_told(
    llm_env: FakeLLMServer, run_cli: Any, workspace: Path
) -> None:
    script = workspace / "run.sh"
    script.write_text("echo one\n")
    os.chmod(script, 0o755)
    # turn 1: edit run.sh and create new.txt (which did not exist)
    llm_env.enqueue(
        Reply.tool_calls([("edit_file", {"path": "run.sh", "old": "one", "new": "two"}, "c1"),
                          ("write_file", {"path": "new.txt", "content": "fresh\n"}, "c2")]),
        Reply.text("Done."),
    )
    res = run_cli("-c", "change things", "--yes")
    assert res.returncode == 0, res.stderr
    assert script.read_text() == "echo two\n" and (workspace / "new.txt").exists()
    # turn 2: overwrite run.sh; write_file keeps the mode
    llm_env.enqueue(Reply.tool_calls([("write_file", {"path": "run.sh", "content": "echo three\n"}, "c3")]),
                    Reply.text("Done again."))
    res = run_cli("--resume", "-c", "more", "--yes")
    assert res.returncode == 0, res.stderr
    os.chmod(script, 0o700)  # the mode changed meanwhile too: undo brings back the recorded one
    assert script.read_text() == "echo three\n"

    res = run_cli("undo")  # turn 2
    assert res.returncode == 0, res.stderr
    assert "turn 2" in res.stdout and "run.sh: restored" in res.stdout
    assert script.read_text() == "echo two\n"
    assert (script.stat().st_mode & 0o777) == 0o755

    res = run_cli("undo")  # then turn 1
    assert res.returncode == 0, res.stderr
    assert script.read_text() == "echo one\n"
    assert not (workspace / "new.txt").exists()
    assert "new.txt: removed" in res.stdout

    res = run_cli("undo")
    assert res.returncode == 1 and "Nothing to undo" in res.stderr

    llm_env.enqueue(Reply.text("Noted."))
    res = run_cli("--resume", "-c", "what now?")
    assert res.returncode == 0, res.stderr
    last = _user_texts(llm_env, len(llm_env.requests) - 1)[-1]
    assert "undid your changes" in last and "what now?" in last
    assert "run.sh" in last and "new.txt" in last


def test_a_file_changed_since_is_refused_unless_forced(
    llm_env: FakeLLMServer, run_cli: Any, workspace: Path
) -> None:
    notes = workspace / "notes.txt"
    notes.write_text("alpha\n")
    llm_env.enqueue(Reply.tool_calls([("edit_file", {"path": "notes.txt", "old": "alpha", "new": "beta"}, "c1")]),
                    Reply.text("Edited."))
    assert run_cli("-c", "edit", "--yes").returncode == 0
    notes.write_text("beta and my own work\n")  # someone else changed it after the tool
    res = run_cli("undo")
    assert res.returncode == 1
    assert "notes.txt" in res.stderr and "--force" in res.stderr
    assert notes.read_text() == "beta and my own work\n"  # nothing lost
    res = run_cli("undo", "--force")
    assert res.returncode == 0, res.stderr
    assert notes.read_text() == "alpha\n"


def test_undo_of_an_unknown_session_is_a_clear_error(run_cli: Any) -> None:
    res = run_cli("undo", "--session", "nope")
    assert res.returncode == 1  # docs/cli.md: nothing to undo exits 1
    assert res.stderr.startswith("swebash-ai: Nothing to undo: no saved session matches 'nope' in ")


def test_undo_without_any_session_is_nothing_to_undo(run_cli: Any) -> None:
    res = run_cli("undo")
    assert res.returncode == 1
    assert res.stderr.startswith("swebash-ai: Nothing to undo: there is no saved session in ")
