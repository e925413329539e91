"""Containment through the real executor: whatever a command starts ends with it, and the result says so.

Each escape form runs in the three ways a run ends (the command exits, it times out, the call is cancelled).
Every sleeper records its own pid and sleeps a duration no other test or process on the machine uses, so
the checks look at these processes alone: by pid, and by command line for any the pid file missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from swebash_ai.tools import process as process_mod
from swebash_ai.tools.containment import MARKER_VAR, Containment, ProcessInfo, Tree, become_subreaper, parse_report
from swebash_ai.tools.exec import run_command
from swebash_ai.tools.process import CommandCancelled, ProcessResult, run_process, start_contained
from tests.tools.test_exec import call, make_ctx


@pytest.fixture(autouse=True)
def _unsandboxed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands here run unconfined (``--yes`` would send them to the sandbox):
    these tests are about containment: their commands leave pid files outside the workspace.
    What the sandbox does to background processes is tests/sandbox's subject."""
    monkeypatch.setenv("SWEBASH_AI_EXEC_SANDBOX", "none")

pytestmark = pytest.mark.skipif(not process_mod.supervised(), reason="the subreaper supervisor is Linux-only")

SH, SLEEP = shutil.which("sh") or "/bin/sh", shutil.which("sleep") or "/bin/sleep"
_ids = itertools.count()


def unique_duration() -> str:
    """A sleep duration (seconds, with a fraction) that only this test's processes use."""
    return f"{200 + next(_ids)}.{os.getpid()}{int(time.time() * 1000) % 100_000:05d}"


def sleeper(pids: Path, duration: str, trap_term: bool = False) -> str:
    """A shell that records its pid and becomes ``sleep DURATION`` (absolute paths: ``env -i`` clears PATH)."""
    trap = "trap '' TERM; " if trap_term else ""
    return f"{SH} -c '{trap}echo $$ >> {pids}; exec {SLEEP} {duration}'"


# name -> builds the command (pid file, unique duration); each line is one way out of a process group,
# a session, an environment marker or the parent-child tree.
ESCAPES: dict[str, Callable[[Path, str], str]] = {
    "setsid": lambda p, d: f"setsid {sleeper(p, d)} &",
    "setsid env -i": lambda p, d: f"setsid env -i {sleeper(p, d)} >/dev/null 2>&1 &",
    "double fork": lambda p, d: f"({sleeper(p, d)} &)",
    "nohup and disown": lambda p, d: f"nohup {sleeper(p, d)} >/dev/null 2>&1 & disown",
    "own process group": lambda p, d: (
        f"{sys.executable} -c 'import os; os.setpgid(0, 0); os.execv(\"{SH}\", [\"sh\", \"-c\", "
        f"\"echo $$ >> {p}; exec {SLEEP} {d}\"])' &"
    ),
    "ignores SIGTERM": lambda p, d: f"setsid env -i {sleeper(p, d, trap_term=True)} &",
    "forks while killed": lambda p, d: (
        f"{SH} -c 'echo $$ >> {p}; trap \"setsid {SLEEP} {d} & echo \\$! >> {p}\" TERM; "
        f"while :; do setsid {SLEEP} {d} & echo $! >> {p}; {SLEEP} 0.02; done' &"
    ),
}


def recorded(pids: Path) -> list[int]:
    return [int(x) for x in pids.read_text().split()] if pids.exists() else []


def by_duration(duration: str) -> list[psutil.Process]:
    """Running (not zombie) processes whose command line carries the duration."""
    found = []
    for p in psutil.process_iter(["cmdline", "status"]):
        if duration in (p.info["cmdline"] or []) and p.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(p)
    return found


def _running(pid: int) -> bool:
    try:  # a process may end between any two looks at it: gone is not running
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def assert_none_left(pids: Path, duration: str, grace: float = 5.0) -> None:
    """No process of the test left. A killed process takes a moment to go, longer on a loaded machine: it has
    ``grace`` seconds, far below the 200 s its sleep would last if nothing had killed it."""
    deadline = time.monotonic() + grace
    while True:
        alive = [p for p in recorded(pids) if _running(p)]
        strays = by_duration(duration)
        if not (alive or strays) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    for p in strays:  # never leave them behind for the next test, even when this one fails
        with contextlib.suppress(psutil.NoSuchProcess):
            p.kill()
    assert alive == [] and strays == [], (alive, [p.pid for p in strays])


async def wait_for_pids(pids: Path, n: int = 1, limit: float = 10.0) -> None:
    deadline = time.monotonic() + limit
    while len(recorded(pids)) < n and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)  # let the last one exec
    assert len(recorded(pids)) >= n


@pytest.mark.parametrize("escape", list(ESCAPES))
async def test_normal_exit_stops_what_the_command_left(escape: str, workspace: Path, tmp_path: Path) -> None:
    pids, d = tmp_path / "pids", unique_duration()
    # the command waits until its escapee is running, then exits by itself
    command = f"{ESCAPES[escape](pids, d)}\nfor i in $(seq 200); do [ -s {pids} ] && break; {SLEEP} 0.01; done; echo ok"
    res = await call(run_command, make_ctx(workspace), command=command, timeout=30)
    assert res.ok and "ok" in res.text, res.text
    assert recorded(pids), "the escapee never started"
    assert_none_left(pids, d)
    stopped = res.metadata["stopped_background"]
    words = "1 background process still running at the end was" if stopped == 1 else \
        f"{stopped} background processes still running at the end were"
    assert stopped >= 1 and f"note: {words} stopped" in res.text
    assert f"pid {recorded(pids)[0]} (" in res.text  # named, by the pid the escapee wrote itself
    assert "could not be stopped" not in res.text


@pytest.mark.parametrize("escape", list(ESCAPES))
async def test_timeout_stops_everything(escape: str, workspace: Path, tmp_path: Path) -> None:
    pids, d = tmp_path / "pids", unique_duration()
    start = time.monotonic()
    res = await call(run_command, make_ctx(workspace), command=f"{ESCAPES[escape](pids, d)}\n{SLEEP} 100", timeout=1)
    assert res.status == "timeout" and "timed out after 1 s; the command and all it started were killed" in res.text
    assert time.monotonic() - start < 5.0
    assert recorded(pids), "the escapee never started"
    assert_none_left(pids, d)


@pytest.mark.parametrize("escape", list(ESCAPES))
async def test_cancel_stops_everything(escape: str, workspace: Path, tmp_path: Path) -> None:
    pids, d = tmp_path / "pids", unique_duration()
    command = f"{ESCAPES[escape](pids, d)}\n{SLEEP} 100"
    task = asyncio.create_task(call(run_command, make_ctx(workspace), command=command, timeout=60))
    await wait_for_pids(pids)
    task.cancel()
    with pytest.raises(CommandCancelled) as caught:
        await task
    assert caught.value.containment.complete
    assert caught.value.result_message.endswith("the command and all it started were stopped.")
    assert_none_left(pids, d)


async def test_daemon_handed_to_a_service_manager_is_not_a_child(workspace: Path) -> None:
    # What the command asks another process (a service manager, here a stand-in started outside the run)
    # to start is not the command's: only descendants are stopped.
    d = unique_duration()
    outside = await asyncio.create_subprocess_exec(SLEEP, d)
    try:
        res = await call(run_command, make_ctx(workspace), command=f"kill -0 {outside.pid} && echo seen")
        assert res.ok and "seen" in res.text and "stopped" not in res.text
        assert outside.returncode is None and psutil.pid_exists(outside.pid)
    finally:
        outside.kill()
        await outside.wait()


async def test_a_command_that_kills_its_supervisor_is_still_stopped_and_the_result_says_what_is_unknown(
    workspace: Path, tmp_path: Path
) -> None:
    pids, d = tmp_path / "pids", unique_duration()
    # $PPID is the supervisor: the command takes it down, then leaves a sleeper in the process group
    res = await call(run_command, make_ctx(workspace),
                     command=f"kill -9 $PPID; {SLEEP} 0.1; {sleeper(pids, d)} & {SLEEP} 0.2; echo ok")
    assert "note: the command killed its supervisor" in res.text, res.text
    assert_none_left(pids, d)  # found all the same: it kept the marker, and orphans re-parent to us


async def test_contained_api_for_a_long_running_command(workspace: Path, tmp_path: Path) -> None:
    pids, d = tmp_path / "pids", unique_duration()
    argv = ["/bin/sh", "-c", f"setsid env -i {sleeper(pids, d)} & echo started; exec {SLEEP} {d}"]
    job = await start_contained(argv, cwd=workspace, env={"PATH": os.environ["PATH"]})
    assert await job.stdout.readline() == b"started\n"
    await wait_for_pids(pids)
    assert job.running and job.result is None
    first = await job.stop()
    again = await job.stop()  # idempotent: the same report
    assert first is again and first.complete and first.mechanism == "subreaper"
    assert [p.pid for p in first.stopped] == recorded(pids)
    assert job.returncode == -15 and not job.running
    job.close()
    assert_none_left(pids, d)


async def test_a_clean_command_reports_nothing_stopped(workspace: Path) -> None:
    res = await run_process("echo hi", cwd=workspace, timeout=5)
    assert res.containment is not None and res.containment.mechanism == "subreaper"
    assert res.stopped == 0 and res.containment.complete and res.render() == "exit code 0\nstdout:\nhi"


# --- the words of a result, when something could not be stopped (a process in uninterruptible sleep, a
# fork race lost after 2 s of SIGKILL sweeps): built from the supervisor's report format -----------------

REPORT = b"P 10\nX 15\nS 11 sleep 58\nN 1\nL 12 sleep 62\nL 13 python3 -c spin\nD\n"


def test_report_parsing() -> None:
    c, done = parse_report(REPORT, main_pid=10)
    assert done and c.mechanism == "subreaper" and c.exit_status == 15
    assert c.stopped == (ProcessInfo(11, "sleep 58"),) and c.stopped_count == 1
    assert c.survivors == (ProcessInfo(12, "sleep 62"), ProcessInfo(13, "python3 -c spin"))
    unfinished, done = parse_report(b"F\nP 10\n")
    assert not done and unfinished.mechanism == "fallback"


def _result(c: Containment, timed_out: bool) -> ProcessResult:
    return ProcessResult(None if timed_out else 0, None, "", "", timed_out, 2, False, 0, 0, 2.0,
                         c.stopped_count, c)


def test_survivors_are_named_never_all_killed() -> None:
    c, _ = parse_report(REPORT)
    timed = _result(c, timed_out=True).render()
    assert "all it started were killed" not in timed
    assert timed.startswith("timed out after 2 s; 2 processes could not be stopped: "
                            "pid 12 (sleep 62), pid 13 (python3 -c spin); the rest were killed. Output:")
    ended = _result(c, timed_out=False).render()
    assert "note: 1 background process still running at the end was stopped: pid 11 (sleep 58)" in ended
    assert "warning: 2 processes could not be stopped: pid 12 (sleep 62), pid 13 (python3 -c spin)" in ended
    cancelled = CommandCancelled(c).result_message
    assert "all it started" not in cancelled and "2 processes could not be stopped: pid 12" in cancelled


async def test_the_fallback_claims_only_what_it_found(workspace: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # Without a subreaper (macOS), a process that leaves the group and clears its environment is not found:
    # the result must not say "all it started were killed".
    monkeypatch.setattr(process_mod, "supervised", lambda: False)
    pids, d = tmp_path / "pids", unique_duration()
    try:
        res = await run_process(f"{ESCAPES['setsid'](pids, d)}\n{SLEEP} 100", cwd=workspace, timeout=1)
        assert res.containment is not None and res.containment.mechanism == "fallback"
        text = res.render()
        assert "all it started" not in text
        assert text.startswith("timed out after 1 s; the command and every process found were killed. Output:")
        assert "note: processes were looked for by process group and marker variable only" in text
    finally:
        for p in by_duration(d):
            p.kill()


def test_the_loop_gives_a_cancelled_call_the_words_of_its_stop() -> None:
    from swebash_ai.agent.loop import _cancelled_result

    c, _ = parse_report(REPORT)
    assert _cancelled_result(CommandCancelled(c)).content == CommandCancelled(c).result_message
    assert _cancelled_result(asyncio.CancelledError()).content == "Cancelled by the user before it finished."


async def test_when_swebash_ai_dies_its_commands_are_stopped(workspace: Path, tmp_path: Path) -> None:
    # The session ends by a crash (SIGKILL: no clean-up runs): the supervisor sees its control pipe close.
    pids, d = tmp_path / "pids", unique_duration()
    script = (
        "import asyncio, os\n"
        "from swebash_ai.tools.process import start_contained\n"
        "async def main():\n"
        f"    await start_contained(['{SH}', '-c', {f'setsid env -i {sleeper(pids, d)} & exec {SLEEP} {d}'!r}],\n"
        f"                          cwd={str(workspace)!r}, env={{'PATH': os.environ['PATH']}})\n"
        "    await asyncio.sleep(60)\n"
        "asyncio.run(main())\n"
    )
    host = await asyncio.create_subprocess_exec(sys.executable, "-c", script, env={**os.environ})
    try:
        await wait_for_pids(pids)
        assert all(psutil.pid_exists(p) for p in recorded(pids))
    finally:
        host.kill()
        await host.wait()
    deadline = time.monotonic() + 5
    while by_duration(d) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert_none_left(pids, d)


def _bwrap_works() -> bool:
    from tests.tools.test_exec import _bwrap_works as works

    return works()


@pytest.mark.parametrize("ending", ["exit", "timeout"])
async def test_under_bubblewrap_too(ending: str, workspace: Path, tmp_path: Path) -> None:
    if not _bwrap_works():
        pytest.skip("bubblewrap is missing or cannot run here")
    # pids inside the sandbox are namespaced: the escapee is looked for on the host by its unique duration
    pids, d = workspace / "pids", unique_duration()
    tail = f"for i in $(seq 200); do [ -s {pids} ] && break; {SLEEP} 0.01; done; echo ok" if ending == "exit" \
        else f"{SLEEP} 100"
    res = await call(run_command, make_ctx(workspace, exec_sandbox="bwrap"),
                     command=f"{ESCAPES['setsid env -i'](pids, d)}\n{tail}", timeout=1 if ending == "timeout" else 30)
    assert recorded(pids), res.text
    assert ("timed out after 1 s; the command and all it started were killed" in res.text) == (ending == "timeout")
    assert "could not be stopped" not in res.text
    assert by_duration(d) == []


async def test_a_warm_supervisor_runs_the_next_command_and_a_dead_one_is_replaced(workspace: Path) -> None:
    process_mod._discard_spare()
    process_mod.prewarm()
    deadline = time.monotonic() + 10
    while not process_mod._spare and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    spare = process_mod._spare[0]
    job = await start_contained(["/bin/sh", "-c", "echo $PPID; pwd"], cwd=workspace, env={"PATH": "/bin"})
    assert job.pid == spare.popen.pid  # the warm one ran it, in the command's directory
    assert await job.stdout.read() == f"{spare.popen.pid}\n{workspace}\n".encode()
    assert (await job.wait()).complete and job.returncode == 0
    job.close()
    # a spare that died meanwhile is not used: the command still runs (cold)
    deadline = time.monotonic() + 10
    while not process_mod._spare and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    process_mod._spare[0].popen.kill()
    process_mod._spare[0].popen.wait()
    res = await run_process("echo fine", cwd=workspace, timeout=10)
    assert res.exit_code == 0 and res.stdout == "fine\n"


async def test_a_turn_cancelled_mid_command_tells_the_model_what_the_stop_did(workspace: Path, tmp_path: Path) -> None:
    # Through the agent loop (scripted model, the real run_command): the conversation and the event carry the
    # stop's words, not only "cancelled".
    from swebash_ai.agent.approval import AllowApprover
    from swebash_ai.agent.conversation import Conversation
    from swebash_ai.agent.events import ToolCallFinished
    from swebash_ai.agent.loop import Agent
    from swebash_ai.providers import scripted
    from swebash_ai.providers.scripted import ScriptedProvider
    from swebash_ai.tools.registry import ToolRegistry

    pids, d = tmp_path / "pids", unique_duration()
    command = f"{ESCAPES['setsid env -i'](pids, d)}\n{SLEEP} 100"
    provider = ScriptedProvider([scripted.calls(("run_command", {"command": command, "timeout": 60}))])
    agent = Agent(provider, ToolRegistry([run_command]), make_ctx(workspace), AllowApprover())
    conv, events = Conversation(), []

    async def consume() -> None:
        async for e in agent.run_turn(conv, "go"):
            events.append(e)

    turn = asyncio.create_task(consume())
    await wait_for_pids(pids)
    agent.cancel()
    await asyncio.wait_for(turn, 10)
    said = "Interrupted by the user before it finished; the command and all it started were stopped."
    assert [e.result.content for e in events if isinstance(e, ToolCallFinished)] == [said]
    assert [m["content"] for m in conv.messages if m["role"] == "tool"] == [f"Cancelled: {said}"]
    assert_none_left(pids, d)


# --- the fallback's sweep, when the machine is slow: a scan is a snapshot, and a process can end between it
# and the look at its status (a supervisor killed by its command leaves only this sweep) -----------------


def _scan_then(monkeypatch: pytest.MonkeyPatch, between: Callable[[], None]) -> list[int]:
    """Make the next process scan run ``between`` once its snapshot is read (before its status looks): what a
    loaded machine does when it stops the scanning thread there. Returns a list that counts the scans."""
    real, scans = psutil.process_iter, []

    def staged(*args: object, **kwargs: object) -> object:
        yield from real(*args, **kwargs)
        scans.append(1)
        if len(scans) == 1:
            between()

    monkeypatch.setattr(psutil, "process_iter", staged)
    return scans


def _gone_pid() -> int:
    """The pid of a process that ran and was reaped: a supervisor the command killed (the sweep's root)."""
    done = psutil.Popen(["/bin/true"])
    done.wait()
    return done.pid


def _until(check: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 10
    while not check():
        assert time.monotonic() < deadline, "the staged process never got there"
        time.sleep(0.005)


def _zombie(p: psutil.Popen) -> Callable[[], bool]:
    return lambda: p.status() == psutil.STATUS_ZOMBIE


def test_a_parent_that_ends_after_the_snapshot_still_leads_to_its_children(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The command (marker, our child) has a child; the command ends after the scan's snapshot: the snapshot
    # shows the child under the command, not under us, and the command is no longer running when looked at.
    assert become_subreaper()  # orphans come to us, as they do to swebash-ai
    pids, d, marker = tmp_path / "pids", unique_duration(), f"m{os.getpid()}"
    command = psutil.Popen([SH, "-c", f"{SLEEP} {d} & echo $! >> {pids}; exec {SLEEP} {d}"],
                           env={**os.environ, MARKER_VAR: marker})
    try:
        _until(lambda: bool(recorded(pids)))
        _scan_then(monkeypatch, lambda: (command.kill(), _until(_zombie(command))))
        found = Tree(_gone_pid(), marker).collect()
        assert recorded(pids)[0] in found
    finally:
        command.kill()
        command.wait()
        for pid in recorded(pids):  # collect() only looks; the orphan is ours to stop and reap
            with contextlib.suppress(OSError):
                os.kill(pid, 9)
                os.waitpid(pid, 0)
        assert_none_left(pids, d)


def test_an_orphan_forked_after_the_snapshot_is_found_by_the_next_scan(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The command starts a sleeper and exits between the snapshot and the status look: that scan sees
    # nothing alive; the sweep must not believe it before a scan taken after.
    assert become_subreaper()  # orphans come to us, as they do to swebash-ai
    pids, d, marker = tmp_path / "pids", unique_duration(), f"m{os.getpid()}"
    command = psutil.Popen([SH, "-c", f"read go; {sleeper(pids, d)} & echo started"],
                           stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, env={**os.environ, MARKER_VAR: marker})

    def go() -> None:
        assert command.stdin is not None
        command.stdin.write(b"go\n")
        command.stdin.flush()
        _until(lambda: bool(recorded(pids)))
        _until(_zombie(command))

    scans = _scan_then(monkeypatch, go)
    try:
        result = Tree(_gone_pid(), marker).kill(grace=0.5)
        assert len(scans) >= 2
        assert [p.pid for p in result.stopped] == recorded(pids) and result.complete
    finally:
        with contextlib.suppress(psutil.NoSuchProcess):  # the sweep reaped it: it was a child of ours
            command.kill()
        command.wait()
        assert_none_left(pids, d)
