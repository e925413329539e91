"""``swebash-ai undo`` of approved shell commands: shadow-git snapshots taken around each one, through the real
loop (one-shot, scripted server), reverted turn by turn; what was not snapshotted is said, never claimed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.testing.fake_server import FakeLLMServer, Reply

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed: no snapshots")


def _command_turn(llm_env: FakeLLMServer, run_cli: Any, command: str, *args: str,
                  env: dict[str, str | None] | None = None) -> str:
    """One turn in which the model runs ``command`` (approved by --yes); returns the tool result it got."""
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": command})]), Reply.text("Ran it."))
    res = run_cli(*args, "-c", "do it", "--yes", env=env)
    assert res.returncode == 0, res.stderr
    request = llm_env.requests[-1]["body"]["messages"]
    return str(next(m["content"] for m in reversed(request) if m["role"] == "tool"))


def test_a_command_s_deletes_creates_edits_and_chmods_are_undone(
    llm_env: FakeLLMServer, run_cli: Any, workspace: Path
) -> None:
    notes, script = workspace / "notes.txt", workspace / "run.sh"
    notes.write_text("keep me\n")
    notes.chmod(0o600)
    script.write_text("echo one\n")
    (workspace / ".gitignore").write_text("build/\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.o").write_text("object")
    result = _command_turn(llm_env, run_cli, "rm notes.txt && echo made > made.txt && chmod +x run.sh "
                           "&& echo two >> run.sh && rm build/out.o")
    assert "not snapshotted" not in result
    assert not notes.exists() and (workspace / "made.txt").exists() and os.access(script, os.X_OK)

    res = run_cli("undo")
    assert res.returncode == 0, res.stderr
    assert "command `rm notes.txt && echo made" in res.stdout and "3 paths it changed put back" in res.stdout
    assert notes.read_text() == "keep me\n" and (notes.stat().st_mode & 0o777) == 0o600
    assert not (workspace / "made.txt").exists()
    assert script.read_text() == "echo one\n" and not os.access(script, os.X_OK)
    assert not (workspace / "build" / "out.o").exists()  # ignored by .gitignore: not snapshotted, as documented
    assert not list(workspace.rglob(".*.undo-*"))  # no temporary files left behind
    assert not (workspace / ".git").exists()  # the snapshots live beside the session, never in the project


def test_turns_undo_in_order_across_writes_and_commands(llm_env: FakeLLMServer, run_cli: Any,
                                                        workspace: Path) -> None:
    llm_env.enqueue(Reply.tool_calls([("write_file", {"path": "notes.md", "content": "# Notes\n"})]),
                    Reply.text("Wrote it."))
    assert run_cli("-c", "write", "--yes").returncode == 0
    _command_turn(llm_env, run_cli, "rm -f notes.md", "--resume")
    assert not (workspace / "notes.md").exists()

    first = run_cli("undo")  # the command's turn: the file the write tool made comes back
    assert first.returncode == 0, first.stderr
    assert "turn 2" in first.stdout and (workspace / "notes.md").read_text() == "# Notes\n"
    second = run_cli("undo")  # then the write itself
    assert second.returncode == 0, second.stderr
    assert "turn 1" in second.stdout and not (workspace / "notes.md").exists()


def test_a_path_changed_after_the_command_is_refused_unless_forced(
    llm_env: FakeLLMServer, run_cli: Any, workspace: Path
) -> None:
    target = workspace / "f.txt"
    target.write_text("one\n")
    _command_turn(llm_env, run_cli, "echo two > f.txt")
    target.write_text("two, then my own edit\n")
    res = run_cli("undo")
    assert res.returncode == 1 and "f.txt" in res.stderr and "--force" in res.stderr
    assert target.read_text() == "two, then my own edit\n"
    res = run_cli("undo", "--force")
    assert res.returncode == 0, res.stderr
    assert target.read_text() == "one\n"


def test_a_workspace_over_the_limit_is_not_snapshotted_and_undo_says_so(
    llm_env: FakeLLMServer, run_cli: Any, workspace: Path
) -> None:
    for name in ("a.txt", "b.txt", "c.txt"):
        (workspace / name).write_text(name)
    result = _command_turn(llm_env, run_cli, "rm a.txt", env={"SWEBASH_AI_COMMAND_SNAPSHOT_MAX_FILES": "2"})
    assert "not snapshotted" in result and "over 2 files" in result  # the user sees it in the tool output
    res = run_cli("undo")
    assert res.returncode == 1
    assert "`rm a.txt`" in res.stderr and "cannot be undone" in res.stderr and "over 2 files" in res.stderr
    res = run_cli("undo", "--force")  # marks the turn undone, restores nothing, and says so
    assert res.returncode == 0, res.stderr
    assert "NOT undone" in res.stdout and not (workspace / "a.txt").exists()
    assert "Nothing to undo" in run_cli("undo").stderr


def test_snapshots_off_by_setting(llm_env: FakeLLMServer, run_cli: Any, workspace: Path) -> None:
    (workspace / "a.txt").write_text("a")
    result = _command_turn(llm_env, run_cli, "rm a.txt", env={"SWEBASH_AI_COMMAND_SNAPSHOTS": "false"})
    assert "not snapshotted" not in result
    assert "Nothing to undo" in run_cli("undo").stderr


def test_a_folder_replaced_by_a_file_comes_back(llm_env: FakeLLMServer, run_cli: Any, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    (workspace / "sub" / "a.txt").write_text("a")
    _command_turn(llm_env, run_cli, "rm -r sub && echo x > sub")
    res = run_cli("undo")
    assert res.returncode == 0, res.stderr
    assert (workspace / "sub" / "a.txt").read_text() == "a"


def test_snapshots_that_cannot_be_read_are_said_not_a_traceback(
    llm_env: FakeLLMServer, run_cli: Any, workspace: Path, cli_env: dict[str, str]
) -> None:
    import shutil

    (workspace / "a.txt").write_text("a")
    _command_turn(llm_env, run_cli, "rm a.txt")
    shared = next(Path(cli_env["SWEBASH_AI_HOME"]).rglob("snapshots.git"))
    shutil.rmtree(shared)  # the user deleted it to free space
    res = run_cli("undo")
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert "`rm a.txt`" in res.stderr and "cannot be read" in res.stderr
    res = run_cli("undo", "--force")
    assert res.returncode == 0 and "NOT undone" in res.stdout


def test_undo_never_writes_through_a_link_a_command_put_in_a_folder_s_place(
    llm_env: FakeLLMServer, run_cli: Any, workspace: Path, tmp_path: Path
) -> None:
    """The command ignored ``sub`` and made it a link to a folder outside: restoring ``sub/a.txt`` would
    write there. It is refused for that path, and said."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "sub").mkdir()
    (workspace / "sub" / "a.txt").write_text("a")
    _command_turn(llm_env, run_cli, f"rm -r sub && echo sub > .gitignore && ln -s {outside} sub")
    res = run_cli("undo")
    assert res.returncode == 0, res.stderr
    assert "sub/a.txt: NOT restored (a folder on its way now leads outside the workspace)" in res.stdout
    assert not (outside / "a.txt").exists() and not (workspace / ".gitignore").exists()
