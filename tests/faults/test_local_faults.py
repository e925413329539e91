"""Local faults: a damaged saved session, a full disk while saving, a kill in the middle of a write.

Each case checks that what was already saved survives, and what the user is told.
"""

from __future__ import annotations

import errno
import io
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from swebash_ai.agent.conversation import SAVE_LOCK, Conversation
from swebash_ai.agent.session_files import list_sessions
from swebash_ai.config.settings import load_settings
from swebash_ai.frontends.oneshot import ExitCode, OneShotOptions, run_oneshot
from swebash_ai.testing.fake_server import FakeLLMServer, Reply

REPO = Path(__file__).resolve().parents[2]


def ask(question: str, workspace: Path, resume: str | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_oneshot(load_settings({}), OneShotOptions(question, yes=True, resume=resume, cwd=workspace),
                       stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def sessions_dir() -> Path:
    return load_settings({}).locations.sessions_dir


def saved(conv_id: str, question: str, answer: str, updated_offset: float = 0) -> Path:
    conv = Conversation(id=conv_id)
    conv.add_user(question)
    conv.add_assistant(answer)
    path = sessions_dir() / f"{conv_id}.jsonl"
    conv.save(path)
    if updated_offset:
        os.utime(path, (time.time() + updated_offset,) * 2)
    return path


def test_a_damaged_session_is_named_and_the_others_still_list_and_resume(
    llm_env: FakeLLMServer, workspace: Path
) -> None:
    saved("20260101-000000-aaaaaa", "the good one", "Still here.")
    bad = sessions_dir() / "20260102-000000-bbbbbb.jsonl"
    bad.write_bytes(b"\x00\xff\xfe garbage from a disk error \x89PNG\r\n")
    assert [s.id for s in list_sessions(sessions_dir())] == ["20260101-000000-aaaaaa"]

    code, out, err = ask("go on", workspace, resume="20260102")
    assert code == ExitCode.USAGE and out == ""
    first = err.splitlines()[0]
    assert first == f"swebash-ai: Damaged session: {bad} has no session header, so session '20260102' cannot be read."
    assert str(bad) in first and "Traceback" not in err

    llm_env.enqueue(Reply.text("Resumed."))
    code, out, err = ask("go on", workspace, resume="")  # the latest readable one
    assert code == ExitCode.OK, err
    assert out == "Resumed.\n"
    sent = [m["content"] for m in llm_env.requests[-1]["body"]["messages"] if m["role"] != "system"]
    assert sent == ["the good one", "Still here.", "go on"]
    assert bad.read_bytes().startswith(b"\x00\xff\xfe")  # left as it was, for whoever wants to look


def test_a_damaged_line_inside_a_session_is_skipped_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    conv = Conversation(id="s")
    conv.add_user("one")
    conv.add_assistant("two")
    conv.save(path)
    with path.open("ab") as fh:
        fh.write(b'{"role": "user", "content": "thr\xff\xfe\n{"role": "assistant", "content": "torn')
    loaded = Conversation.load(path)
    assert [m["content"] for m in loaded.messages] == ["one", "two"]


def test_disk_full_while_saving_keeps_the_previous_save(
    llm_env: FakeLLMServer, workspace: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    llm_env.enqueue(Reply.text("First."), Reply.text("Second."))
    code, _, err = ask("first", workspace)
    assert code == ExitCode.OK, err
    (path,) = sessions_dir().glob("*.jsonl")
    before = path.read_bytes()

    real_fsync = os.fsync

    def full(fd: int) -> None:  # the data was written into the page cache; the disk has no room for it
        if os.readlink(f"/proc/self/fd/{fd}").startswith(str(sessions_dir())):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", full)
    code, out, err = ask("second", workspace, resume="")
    assert code == ExitCode.OK and out == "Second.\n"  # the answer itself was given
    assert path.read_bytes() == before
    left = [p.name for p in sessions_dir().iterdir() if p.name != SAVE_LOCK]  # the lock file stays, empty
    assert left == [path.name]  # no temporary file left behind
    logged = caplog.text  # a warning: on stderr in a real run (no logging set up: Python's last resort)
    assert "cannot save the session" in logged and "No space left on device" in logged
    assert "previous save is intact" in logged


WRITER = textwrap.dedent("""
    import asyncio, os, sys, time
    from pathlib import Path
    from swebash_ai.config.settings import load_settings
    from swebash_ai.safety.paths import PathPolicy
    from swebash_ai.tools import fs_write
    from swebash_ai.tools.registry import ToolContext

    workspace, stop_at = Path(sys.argv[1]), sys.argv[2]
    ctx = ToolContext(settings=load_settings().settings, cwd=workspace,
                      path_policy=PathPolicy(roots=[workspace], home=workspace), command_policy=None)

    def pause(name, real):
        # Say where the write is, then wait there for the kill.
        def step(*args):
            if name == "replace":
                real(*args)
            if name == stop_at:
                print(name, flush=True)
                time.sleep(30)
            if name != "replace":
                real(*args)
        return step

    os.fsync = pause("fsync", os.fsync)  # the new content is in the temporary file, not yet in place
    os.replace = pause("replace", os.replace)  # the new content is in place
    args = fs_write.write_file.parse_arguments({"path": "big.txt", "content": "B" * 900_000})
    asyncio.run(fs_write.write_file.invoke(ctx, args))
""")


@pytest.mark.parametrize(("stop_at", "expected"), [("fsync", b"A"), ("replace", b"B")])
def test_kill_9_during_write_file_leaves_old_or_new_never_half(workspace: Path, stop_at: str, expected: bytes) -> None:
    target = workspace / "big.txt"
    target.write_bytes(b"A" * 900_000)
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(workspace), stop_at], stdout=subprocess.PIPE, env=env)
    assert child.stdout is not None
    assert child.stdout.readline().decode().strip() == stop_at  # the child is inside the write
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    assert target.read_bytes() == expected * 900_000  # the old content or the new, whole
    leftovers = [p.name for p in workspace.iterdir() if p != target]
    # A kill leaves the hidden temporary file (nothing can remove it); it is never mistaken for the file.
    assert all(name.startswith(".big.txt.") and name.endswith(".swebash-tmp") for name in leftovers), leftovers
