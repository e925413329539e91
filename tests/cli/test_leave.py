"""The quick exit (swebash_ai/frontends/leave.py): what Python's exit would have done that matters is done (exit
handlers, buffered output, the exit code), a thread still at work is waited for, and the real entry takes it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from swebash_ai.testing.fake_server import FakeLLMServer, Reply

from ._helpers import REPO


def _python(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          cwd=tmp_path, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}, timeout=60)


def test_exit_handlers_run_buffered_output_is_written_and_the_code_kept(tmp_path: Path) -> None:
    res = _python(f"""
        import atexit, sys
        from swebash_ai.frontends.leave import leave
        atexit.register(lambda: open({str(tmp_path / "handler-ran")!r}, "w").close())
        sys.stdout.write("x" * 300_000 + "end\\n")  # more than one buffer's worth, part of it still buffered
        sys.stderr.write("a note without a newline")
        leave(4)
        print("never printed")
        """, tmp_path)
    assert res.returncode == 4, res.stderr
    assert res.stdout == "x" * 300_000 + "end\n"
    assert res.stderr == "a note without a newline"
    assert (tmp_path / "handler-ran").exists()


def test_a_thread_still_at_work_is_waited_for(tmp_path: Path) -> None:
    res = _python(f"""
        import threading
        from swebash_ai.frontends.leave import leave
        started = threading.Event()
        def work():
            started.set()
            threading.Event().wait(0.5)
            open({str(tmp_path / "thread-done")!r}, "w").close()
        threading.Thread(target=work).start()
        started.wait()
        leave(0)
        """, tmp_path)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "thread-done").exists()  # a quick exit here would have cut the thread off


def test_a_reader_gone_before_the_last_flush_is_no_error(tmp_path: Path) -> None:
    res = _python("""
        import os, sys
        from swebash_ai.frontends.leave import leave
        read_end, write_end = os.pipe()
        os.dup2(write_end, 1)
        os.close(read_end)  # the reader left (`| head -1` done): the buffered line meets a closed pipe
        sys.stdout.write("still buffered\\n")
        leave(0)
        """, tmp_path)
    assert res.returncode == 0 and res.stderr == ""  # no "Exception ignored ... BrokenPipeError", no exit 120


def test_the_entry_still_writes_its_answer_and_the_session(llm_env: FakeLLMServer, run_cli: Any, workspace: Path,
                                                      isolated_env: Path) -> None:
    llm_env.enqueue(Reply.text("Saved and done."))
    res = run_cli("-c", "hi", "--json")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[-1].startswith('{"type": "final"')
    sessions = list((isolated_env / ".swebash-ai").rglob("*.jsonl"))
    assert sessions and any("Saved and done." in p.read_text() for p in sessions)
