"""The temporary files of atomic writes: gone on every path out (an error, Ctrl-C, a kill: the next start), and
never taken for the user's files by search, find, snapshots or @path completion."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from swebash_ai.config.settings import load_settings
from swebash_ai.frontends.tui.path_index import PathIndex
from swebash_ai.providers import scripted
from swebash_ai.providers.scripted import ScriptedProvider
from swebash_ai.safety.paths import PathPolicy
from swebash_ai.session import Session
from swebash_ai.storage import pending_writes
from swebash_ai.storage.private_files import replace_atomically
from swebash_ai.tools.atomic import write_atomically
from swebash_ai.tools.snapshots import ShadowRepo

REPO = Path(__file__).resolve().parents[2]


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if pending_writes.is_temporary(p.name))


@pytest.mark.parametrize("stop", [OSError("disk full"), KeyboardInterrupt()])
def test_an_error_or_ctrl_c_mid_write_leaves_nothing(workspace: Path, monkeypatch: pytest.MonkeyPatch,
                                                     stop: BaseException) -> None:
    target = workspace / "big.txt"
    target.write_text("old")

    def fail(fd: int) -> None:
        assert _leftovers(workspace) and os.listdir(pending_writes.journal())  # written and journaled
        raise stop

    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(type(stop)):
        write_atomically(target, b"new" * 1000)
    assert target.read_text() == "old" and _leftovers(workspace) == []
    assert os.listdir(pending_writes.journal()) == []


def test_a_write_that_ends_leaves_no_journal_entry(workspace: Path) -> None:
    replace_atomically(workspace / "f.txt", b"x", 0o600)
    assert (workspace / "f.txt").read_bytes() == b"x" and _leftovers(workspace) == []
    assert os.listdir(pending_writes.journal()) == []


_WRITER = """
import os, sys, time
from pathlib import Path
real_fsync = os.fsync
def stall(fd):
    real_fsync(fd)
    print("written", flush=True)
    time.sleep(60)
os.fsync = stall
from swebash_ai.tools.atomic import write_atomically
write_atomically(Path(sys.argv[1]), b"n" * 12_000_000)
"""


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["SWEBASH_AI_HOME"] = str(home / ".swebash-ai")
    return env


def test_a_kill_mid_write_leaves_nothing_after_the_next_start(workspace: Path, isolated_env: Path) -> None:
    """A real process killed (SIGKILL) while it writes 12 MB: the file keeps its old content, the temporary
    file stays until the next start, which removes it and says so."""
    target = workspace / "big.txt"
    target.write_text("old")
    env = _env(isolated_env)
    child = subprocess.Popen([sys.executable, "-c", _WRITER, str(target)], env=env, stdout=subprocess.PIPE,
                             text=True, cwd=workspace)
    try:
        assert child.stdout is not None and child.stdout.readline() == "written\n"
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        child.kill()
    left = _leftovers(workspace)
    assert len(left) == 1 and (workspace / left[0]).stat().st_size == 12_000_000
    assert target.read_text() == "old"
    nxt = subprocess.run([sys.executable, "-m", "swebash_ai", "config"], env=env, cwd=workspace,
                         capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert nxt.returncode == 0, nxt.stderr
    assert _leftovers(workspace) == []
    assert "removed 1 temporary file left by a write that was interrupted" in nxt.stderr
    assert left[0] in nxt.stderr
    assert os.listdir(pending_writes.journal()) == []


def test_the_sweep_leaves_a_live_writer_and_what_is_not_ours(workspace: Path, isolated_env: Path) -> None:
    journal = pending_writes.journal()
    journal.mkdir(parents=True)
    mine = workspace / ".a.txt.0123abcd.swebash-tmp"
    mine.write_text("in progress")
    (journal / f"{os.getpid()}-aaaa").write_bytes(os.fsencode(mine))  # this process: alive
    users = workspace / "notes.txt"
    users.write_text("the user's")
    gone = subprocess.Popen(["true"])
    gone.wait()
    dead = gone.pid  # a process that has ended
    (journal / f"{dead}-bbbb").write_bytes(os.fsencode(users))  # a name without our suffix: never removed
    assert pending_writes.sweep() == []
    assert mine.exists() and users.exists()
    assert os.listdir(journal) == [f"{os.getpid()}-aaaa"]


async def _call(workspace: Path, name: str, args: dict[str, object]) -> str:
    provider = ScriptedProvider([scripted.calls((name, args)), scripted.text("done")])
    session = Session(load_settings(), provider=provider, cwd=workspace, probe_ollama=False)
    async for _ in session.run("look"):
        pass
    return str([m for m in provider.requests[1]["messages"] if m["role"] == "tool"][-1]["content"])


async def test_search_and_find_never_list_a_temporary_file(workspace: Path) -> None:
    (workspace / "notes.txt").write_text("needle here\n")
    (workspace / ".notes.txt.0123abcd.swebash-tmp").write_text("needle here\n")
    (workspace / "sub").mkdir()
    (workspace / "sub" / ".x.py.89abcdef.swebash-tmp").write_text("needle\n")
    found = await _call(workspace, "search", {"pattern": "needle"})
    assert "notes.txt" in found and "swebash-tmp" not in found
    listed = await _call(workspace, "find_files", {"pattern": "**/*"})
    assert "notes.txt" in listed and "swebash-tmp" not in listed


def test_snapshots_and_completion_never_take_a_temporary_file(tmp_path: Path, isolated_env: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a")
    (ws / ".a.txt.0123abcd.swebash-tmp").write_text("half a write")
    repo = ShadowRepo(tmp_path / "shadow.git", ws)
    snap = repo.snapshot()
    assert snap.commit and snap.files == 1
    index = PathIndex(ws, PathPolicy(roots=[ws], home=isolated_env)).build()
    assert [c.path for c in index.entries] == ["a.txt"]
