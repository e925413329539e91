"""The sandbox's words through the real command line (``-c``, ``--json``), as a subprocess against the loopback
fake server, the command run unasked by ``--yes`` (so confined): what the sandbox refused is named in full, an
operation and a path, in the model's result, in ``--json`` and on ``-c``'s activity line; a write that landed in
the sandbox's own ``/tmp`` is said to be gone; a home under ``/tmp`` (as the tests' own is) is read-only in
there, and a write to it fails loudly instead of vanishing."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.sandbox import detect
from swebash_ai.testing.fake_server import FakeLLMServer, Reply

pytestmark = [pytest.mark.timeout(180),
              pytest.mark.skipif(not detect.choose("auto").ok, reason="no sandbox works here")]

LONG = "/usr/" + "a-folder-with-a-long-name-" * 6 + "x.txt"  # longer than one line of a terminal


def _result(stdout: str) -> dict[str, Any]:
    events = [json.loads(line) for line in stdout.splitlines()]
    (result,) = [e for e in events if e["type"] == "tool_result"]
    return result


def test_json_and_the_result_name_the_refused_operation_and_path_in_full(llm_env: FakeLLMServer,
                                                                          run_cli: Any) -> None:
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": f"touch {LONG}"})]), Reply.text("It failed."))
    res = run_cli("-c", "make it", "--yes", "--json")
    assert res.returncode == 0, res.stderr
    result = _result(res.stdout)
    assert result["sandbox"] == detect.choose("auto").backend and result["exit_code"] != 0
    assert result["sandbox_refused"] == [{"operation": "write", "path": LONG}]
    assert f"refused: write {LONG};" in result["content"]  # what the model reads
    assert not Path(LONG).exists()


def test_one_shot_names_the_refused_path_on_a_line_of_its_own(llm_env: FakeLLMServer, run_cli: Any) -> None:
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": f"touch {LONG}"})]), Reply.text("It failed."))
    res = run_cli("-c", "make it", "--yes")
    assert res.returncode == 0, res.stderr
    assert f"  the sandbox refused: write {LONG}\n" in res.stderr  # whole: the call's own line is cut at 160


def test_a_write_to_home_under_tmp_fails_loudly_and_is_named(llm_env: FakeLLMServer, run_cli: Any,
                                                           isolated_env: Path) -> None:
    if not str(isolated_env).startswith("/tmp/"):
        pytest.skip("the tests' home is not under /tmp here")
    name = f"note-{uuid.uuid4().hex[:8]}.txt"
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": f"echo hi > ~/{name}"})]), Reply.text("Done."))
    res = run_cli("-c", "write a note", "--yes", "--json")
    assert res.returncode == 0, res.stderr
    result = _result(res.stdout)
    assert result["exit_code"] != 0  # not exit 0 and gone with the sandbox's /tmp
    assert {"operation": "write", "path": str(isolated_env / name)} in result["sandbox_refused"]
    assert not (isolated_env / name).exists()


def test_a_write_to_tmp_is_said_to_be_gone(llm_env: FakeLLMServer, run_cli: Any) -> None:
    if detect.choose("auto").backend != "bwrap":
        pytest.skip("only bubblewrap gives a private /tmp")
    name = f"/tmp/kept-{uuid.uuid4().hex[:8]}.txt"
    llm_env.enqueue(Reply.tool_calls([("run_command", {"command": f"echo hi > {name}"})]), Reply.text("Done."))
    res = run_cli("-c", "write it", "--yes", "--json")
    assert res.returncode == 0, res.stderr
    result = _result(res.stdout)
    assert result["exit_code"] == 0 and not os.path.exists(name)
    assert f"(sandbox: /tmp here is the sandbox's own: what it wrote to {name} is gone now" in result["content"]


def test_a_background_command_gets_the_check_after_a_run_and_says_what_it_did(
        llm_env: FakeLLMServer, run_cli: Any, workspace: Path) -> None:
    """A confined background command that makes a nested repository whose config runs a program at the user's
    next `git status`: when it ends, the check after a run removes that .git, and its end says so."""
    import shutil
    import subprocess

    if shutil.which("git") is None:
        pytest.skip("needs git")
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    command = "sleep 0.5; git init -q sub && git -C sub config core.fsmonitor 'touch ran-on-the-host'"
    llm_env.enqueue(
        Reply.tool_calls([("run_command", {"command": command, "background": True})]),
        Reply.tool_calls([("read_process", {"id": "p1", "wait_seconds": 60})]),
        Reply.text("Done."),
    )
    res = run_cli("-c", "set it up", "--yes", "--json", timeout=150)
    assert res.returncode == 0, res.stderr
    events = [json.loads(line) for line in res.stdout.splitlines()]
    read = next(e for e in events if e["type"] == "tool_result" and e["name"] == "read_process")
    assert "exited with code 0" in read["content"]
    assert (f"note: sandbox: a new repository at {(workspace / 'sub').resolve()} was refused, its .git removed"
            in read["content"]), read["content"]
    assert not (workspace / "sub" / ".git").exists()
    subprocess.run(["git", "-C", str(workspace), "status", "--short"], check=True, capture_output=True)
    assert not (workspace / "ran-on-the-host").exists()
