"""Background processes with real processes: the first output, reads since the last read, the ring buffer's drop
note, exit states, whole-tree stops, the limit of running processes, and the end of the session (by PID)."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import psutil
import pytest

from swebash_ai.config.settings import load_settings
from swebash_ai.safety.paths import PathPolicy
from swebash_ai.tools.background import ProcessService, Ring, exits_told, read_process, stop_process
from swebash_ai.tools.exec import run_command
from swebash_ai.tools.registry import Tool, ToolContext, ToolResult

# Generous: a loaded 2-core machine can take seconds to start an interpreter.
SLOW = 30.0


def make_ctx(workspace: Path, **settings: Any) -> ToolContext:
    s = load_settings(settings).settings
    return ToolContext(settings=s, cwd=workspace, path_policy=PathPolicy(roots=[workspace]),
                       processes=ProcessService(s.background_max_running, s.background_buffer_bytes))


async def call(t: Tool, ctx: ToolContext, **args: Any) -> ToolResult:
    parsed = t.parse_arguments(args)
    if isinstance(parsed, ToolResult):
        return parsed
    return await t.invoke(ctx, parsed)


async def read_until(ctx: ToolContext, pid_id: str, needle: str, timeout: float = SLOW) -> str:
    """Read (waiting) until ``needle`` appears in what was read; everything read is returned."""
    seen = ""
    deadline = time.monotonic() + timeout
    while needle not in seen and time.monotonic() < deadline:
        res = await call(read_process, ctx, id=pid_id, wait_seconds=5)
        assert res.ok, res.text
        seen += res.text + "\n"
    assert needle in seen, seen
    return seen


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def pids_in(text: str, marker: str) -> list[int]:
    return [int(line.split("=")[1]) for line in text.splitlines() if line.startswith(f"{marker}-pid=")]


async def test_first_output_then_only_what_is_new_then_the_exit(workspace: Path) -> None:
    ctx = make_ctx(workspace)
    tag = uuid.uuid4().hex[:8]
    res = await call(run_command, ctx, command=f"echo first-{tag}; sleep 1.5; echo second-{tag}; exit 3",
                     background=True)
    assert res.ok and res.text.startswith("process id: p1\nstate: running"), res.text
    assert f"first-{tag}" in res.text and f"second-{tag}" not in res.text
    assert res.metadata["process_id"] == "p1" and res.metadata["background"] is True
    assert res.duration < SLOW  # returned while the command still runs
    later = await read_until(ctx, "p1", "exited with code 3")
    # only what came since the last read (the header line quotes the command, hence the newlines)
    assert f"\nsecond-{tag}" in later and f"\nfirst-{tag}" not in later
    again = await call(read_process, ctx, id="p1")
    assert "process p1: exited with code 3" in again.text and "(no new output)" in again.text


async def test_the_first_output_holds_the_first_lines_of_a_command_that_goes_on(workspace: Path) -> None:
    ctx = make_ctx(workspace)
    start = time.monotonic()
    res = await call(run_command, ctx, command="seq 1 20; sleep 100", background=True)
    assert res.ok and "\n1\n2\n3\n4\n5" in res.text and "state: running" in res.text, res.text
    assert time.monotonic() - start < SLOW  # it did not wait for the command (100 s)
    await ctx.processes.aclose()


async def test_a_flood_is_cut_to_the_buffer_and_the_read_says_how_much_was_dropped(workspace: Path) -> None:
    ctx = make_ctx(workspace, background_buffer_bytes=1024)
    tag = uuid.uuid4().hex[:8]
    # 200 lines of 50 bytes after the first read: ~10 kB, of which the ring keeps the last 1024 bytes.
    script = f"echo start-{tag}; sleep 1.2; for i in $(seq 1 200); do printf '%049d\\n' $i; done; echo end-{tag}"
    res = await call(run_command, ctx, command=script, background=True)
    assert f"start-{tag}" in res.text
    proc = ctx.processes.get("p1")
    await proc.wait_output(0, SLOW, lines=10**9)  # until it ends
    out = await call(read_process, ctx, id="p1")
    assert "exited with code 0" in out.text and f"end-{tag}" in out.text
    dropped = out.metadata["dropped_bytes"]
    assert dropped == 200 * 50 + len(f"end-{tag}\n") - 1024
    assert f"[… {dropped} bytes of output dropped: the buffer keeps the last 1024 bytes" in out.text
    assert "0000000001\n" not in out.text  # the oldest lines are gone, the newest kept
    assert "0000000200\n" in out.text


def test_the_ring_holds_back_a_character_cut_in_two_and_drops_a_cut_one() -> None:
    ring = Ring(8)
    ring.add("é".encode()[:1])
    assert ring.take(final=False) == ("", 0)  # half a character: held for the next read
    ring.add("é".encode()[1:] + b"ab")
    assert ring.take(final=False) == ("éab", 0)
    ring.add(("x" * 7 + "€").encode())  # 10 more bytes: the ring keeps the last 8, 2 unread ones are dropped
    text, dropped = ring.take(final=True)
    assert text == "xxxxx€" and dropped == 2
    ring.add("€€€".encode())  # the ring's start now falls inside the first euro sign: the whole of it is dropped
    text, dropped = ring.take(final=True)
    assert text == "€€" and dropped == 3


async def test_stop_ends_the_whole_tree_and_says_so(workspace: Path) -> None:
    ctx = make_ctx(workspace)
    tag = uuid.uuid4().hex[:8]
    cmd = (f"sleep 101 & echo {tag}-pid=$!; setsid sleep 102 & echo {tag}-pid=$!; "
           f"echo {tag}-pid=$$; echo ready-{tag}; wait")
    res = await call(run_command, ctx, command=cmd, background=True)
    seen = res.text if f"ready-{tag}" in res.text else res.text + await read_until(ctx, "p1", f"ready-{tag}")
    pids = pids_in(seen, tag)
    assert len(pids) == 3 and all(alive(p) for p in pids)
    stopped = await call(stop_process, ctx, id="p1")
    assert stopped.ok, stopped.text
    assert stopped.text.startswith("stopped process p1 ($ sleep 101"), stopped.text
    assert "stopped by stop_process (killed by SIGTERM)" in stopped.text
    assert "also stopped 2 processes it had started" in stopped.text
    assert not any(alive(p) for p in pids)
    assert stopped.metadata["survivors"] == []
    again = await call(stop_process, ctx, id="p1")
    assert again.ok and again.text.startswith("process p1 had already ended: stopped by stop_process")


async def test_the_limit_of_running_processes_is_a_clear_tool_error(workspace: Path) -> None:
    ctx = make_ctx(workspace, background_max_running=2)
    for _ in range(2):
        assert (await call(run_command, ctx, command="sleep 100", background=True)).ok
    third = await call(run_command, ctx, command="sleep 100", background=True)
    assert not third.ok
    assert "2 background processes are already running, the limit (setting background_max_running = 2)" \
        in third.text
    assert "p1: sleep 100; p2: sleep 100" in third.text and "stop_process" in third.text
    assert (await call(stop_process, ctx, id="p1")).ok
    fourth = await call(run_command, ctx, command="sleep 100", background=True)
    assert fourth.ok and fourth.text.startswith("process id: p3")
    await ctx.processes.aclose()


async def test_unknown_ids_and_waits_past_the_cap_are_errors_the_model_can_fix(workspace: Path) -> None:
    ctx = make_ctx(workspace)
    res = await call(read_process, ctx, id="p9")
    assert not res.ok and "No background process 'p9' in this session. Known: none." in res.text
    assert (await call(run_command, ctx, command="true", background=True)).ok
    res = await call(stop_process, ctx, id="p9")
    assert not res.ok and "Known: p1 (" in res.text
    capped = await call(read_process, ctx, id="p1", wait_seconds=600)
    assert not capped.ok and "wait_seconds" in capped.text and "60" in capped.text


async def test_without_a_session_service_a_background_command_is_refused(workspace: Path) -> None:
    ctx = make_ctx(workspace)
    ctx.processes = None
    res = await call(run_command, ctx, command="sleep 100", background=True)
    assert not res.ok and "not available here" in res.text


async def test_closing_the_service_stops_every_process_by_pid_and_refuses_new_ones(workspace: Path) -> None:
    ctx = make_ctx(workspace)
    tag = uuid.uuid4().hex[:8]
    pids = []
    for n in range(3):
        res = await call(run_command, ctx, command=f"echo {tag}-pid=$$; exec sleep 10{n}", background=True)
        found = pids_in(res.text, tag) or pids_in(await read_until(ctx, f"p{n + 1}", f"{tag}-pid="), tag)
        pids += found
    assert len(pids) == 3 and all(alive(p) for p in pids)
    stopped = await ctx.processes.aclose()
    assert [p.id for p in stopped] == ["p1", "p2", "p3"]
    assert {r.state for r in ctx.processes.rows()} == {"stopped by the end of the session (killed by SIGTERM)"}
    assert not any(alive(p) for p in pids)
    again = await call(run_command, ctx, command="sleep 100", background=True)
    assert not again.ok and "The session is ending" in again.text


@pytest.mark.parametrize("approved", [False, True])
async def test_secrets_in_background_output_are_masked_unless_approved(workspace: Path, approved: bool) -> None:
    ctx = make_ctx(workspace)
    ctx.approved = approved
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    password = uuid.uuid4().hex  # masked only by the stricter rules for output nobody approved
    res = await call(run_command, ctx, command=f"echo token={secret}", background=True)
    stopped = await call(stop_process, ctx, id="p1")
    # The tools keep the output; the loop's one scan masks the model's copy, with the stricter rules when unasked.
    assert all(r.unasked_output is not approved for r in (res, stopped)), (res, stopped)
    assert secret in res.text
    masked = res.with_secrets_masked().text
    assert secret not in masked and "token=[masked:github-token]" in masked
    if not approved:  # output that comes after the first answer, read by read_process
        assert "DB_PASSWORD" not in (await call(run_command, ctx, command=f"sleep 3; echo DB_PASSWORD={password}",
                                                background=True)).text
        again = await call(read_process, ctx, id="p2", wait_seconds=SLOW)
        assert again.unasked_output and password in again.text
        assert "DB_PASSWORD=[masked:secret-env]" in again.with_secrets_masked().text


async def test_an_exit_by_itself_is_announced_once_and_read_with_its_code_and_time(workspace: Path) -> None:
    ctx = make_ctx(workspace)
    heard: list[str] = []
    ctx.processes.on_exit = lambda proc: heard.append(proc.exit_notice())
    # p1 exits by itself after its call answered; p2 ends within its call (its result says so);
    # p3 is stopped by the model, p4 by the end of the session: only p1 is news.
    res = await call(run_command, ctx, command="sleep 1.5; exit 3", background=True)
    assert "state: running" in res.text, res.text
    assert "state: exited with code 4" in (await call(run_command, ctx, command="exit 4", background=True)).text
    for _ in range(2):
        assert (await call(run_command, ctx, command="sleep 100", background=True)).ok
    assert (await call(stop_process, ctx, id="p3")).ok
    read = await read_until(ctx, "p1", "exited with code 3")
    assert heard == [heard[0]] and heard[0].startswith("background process p1 `sleep 1.5; exit 3` exited with code 3 "
                                                       "after "), heard
    seconds = float(heard[0].rsplit("after ", 1)[1].removesuffix(" s"))
    assert 1.4 <= seconds < SLOW
    assert f"process p1: exited with code 3 after {seconds:.1f} s" in read  # what the model sees
    row = next(r for r in ctx.processes.rows() if r.id == "p1")
    assert row.state == "exited with code 3" and not row.running  # what /ps lists
    await ctx.processes.aclose()
    assert len(heard) == 1


async def test_a_failing_exit_listener_does_not_break_the_ending(workspace: Path) -> None:
    ctx = make_ctx(workspace)

    def broken(proc: Any) -> None:
        raise RuntimeError("listener bug")

    ctx.processes.on_exit = broken
    assert (await call(run_command, ctx, command="sleep 1.2; exit 5", background=True)).ok
    read = await read_until(ctx, "p1", "exited with code 5")
    assert "exited with code 5 after" in read


@pytest.mark.parametrize(("note", "told"), [
    # One exit that failed: the line shown live, a failure.
    ("[swebash-ai] Since your last request, by itself (read_process shows the last output):\n"
     "- background process p1 `make serve` exited with code 2 after 3 s",
     [("background process p1 `make serve` exited with code 2 after 3 s", True)]),
    # A clean exit and a kill, in one note: one line each, only the kill failed.
    ("[swebash-ai] Since your last request, by itself (read_process shows the last output):\n"
     "- background process p1 `true` exited with code 0 after 0.1 s\n"
     "- background process p2 `sleep 9` killed by SIGKILL after 12 s",
     [("background process p1 `true` exited with code 0 after 0.1 s", False),
      ("background process p2 `sleep 9` killed by SIGKILL after 12 s", True)]),
    # The command may say anything, a clean exit's words too: what follows it decides.
    ("[swebash-ai] Since your last request, by itself (read_process shows the last output):\n"
     "- background process p3 `echo '` exited with code 0 after '; exit 1` exited with code 1 after 1 s",
     [("background process p3 `echo '` exited with code 0 after '; exit 1` exited with code 1 after 1 s", True)]),
    # Another note (none exists yet): shown whole, as information.
    ("the plan changed", [("the plan changed", False)]),
])
def test_exits_told_reads_back_the_lines_of_a_note(note: str, told: list[tuple[str, bool]]) -> None:
    assert exits_told(note) == told
