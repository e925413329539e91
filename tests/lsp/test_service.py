"""The language-server service over the in-repo fake server: the diagnostics of the version sent and never an
earlier one's, the timeout and crash sentences, one server per root shared by concurrent callers, no restart
loop, and no process left behind (checked by pid) after the session's end, a cancelled check, a crash and an
idle time."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from lsp_helpers import alive, fake_spec, gone_within, pids_of, service

from swebash_ai.lsp.report import render
from swebash_ai.lsp.service import MAX_FAILURES


async def test_errors_of_the_version_sent_then_none_after_the_fix(workspace: Path) -> None:
    svc = service(workspace, fake_spec(workspace))
    f = workspace / "a.fk"
    try:
        first = await svc.check(f, "ok\nbad ERROR: name 'y' is not defined\nWARN: unused\n")
        assert first.status == "ok"
        assert [(d.line, d.col, d.severity, d.message) for d in first.diags] == [
            (2, 5, 1, "name 'y' is not defined"), (3, 1, 2, "unused")]
        fixed = await svc.check(f, "ok\n")
        assert fixed.status == "ok" and fixed.diags == ()
        assert "no problems in a.fk" in render(fixed, workspace)[0]
    finally:
        await svc.aclose()


async def test_a_stale_publication_of_the_previous_version_is_never_taken(workspace: Path) -> None:
    # The server publishes the previous version's diagnostics (with its version) before the new one's.
    svc = service(workspace, fake_spec(workspace, stale_first=True, delay=0.05))
    f = workspace / "a.fk"
    try:
        await svc.check(f, "x ERROR: old problem\n")
        fixed = await svc.check(f, "fixed\n")
        assert fixed.status == "ok"
        assert fixed.diags == ()  # the old error, published again for version 1, was not taken for version 2
    finally:
        await svc.aclose()


async def test_a_second_pass_within_the_settle_time_replaces_the_first(workspace: Path) -> None:
    svc = service(workspace, fake_spec(workspace, publish_twice=True), settle=0.3)
    try:
        check = await svc.check(workspace / "a.fk", "ERROR: e\nWARN: w\n")
        assert sorted(d.severity for d in check.diags) == [1, 2]  # the full list, not the errors-only first pass
    finally:
        await svc.aclose()


async def test_a_server_without_versions_is_read_after_the_change_and_the_settle_time(workspace: Path) -> None:
    svc = service(workspace, fake_spec(workspace, omit_version=True), settle=0.2)
    f = workspace / "a.fk"
    try:
        assert len((await svc.check(f, "ERROR: one\n")).diags) == 1
        again = await svc.check(f, "clean\n")
        assert again.status == "ok" and again.diags == ()
    finally:
        await svc.aclose()


@pytest.mark.parametrize("script", [{"never": True}, {"delay": 3.0}], ids=["never-answers", "answers-late"])
async def test_no_answer_in_time_says_timed_out_never_clean(workspace: Path, script: dict[str, object]) -> None:
    svc = service(workspace, fake_spec(workspace, **script), wait=1.0)
    try:
        started = time.monotonic()
        check = await svc.check(workspace / "a.fk", "ERROR: hidden\n")
        assert time.monotonic() - started < 2.5
        assert check.status == "timeout" and check.diags == ()
        text, data = render(check, workspace)
        assert "no diagnostics for a.fk: the server (fake) timed out after 1 s" in text
        assert "not a clean result" in text and data["status"] == "timeout"
    finally:
        await svc.aclose()


async def test_a_crash_says_so_leaves_no_process_and_is_not_restarted_in_a_loop(workspace: Path) -> None:
    pid_file = workspace / "pids"
    log = workspace / "log"
    svc = service(workspace, fake_spec(workspace, crash_on_change=1, child=True, pid_file=str(pid_file),
                                       log=str(log)))
    f = workspace / "a.fk"
    try:
        await svc.check(f, "one\n")
        pids = pids_of(pid_file)
        crashed = await svc.check(f, "two\n")
        assert crashed.status == "crashed"
        assert "the server (fake) crashed: the server exited" in render(crashed, workspace)[0]
        assert gone_within(pids), "the server or its child survived the crash"
        for _ in range(MAX_FAILURES + 2):  # each restart crashes again at its first change
            last = await svc.check(f, "again\n")
            await svc.check(f, "and again\n")
        assert last.status == "failed" and "not started again" in last.detail
        assert log.read_text().count("initialize\n") == MAX_FAILURES
    finally:
        await svc.aclose()


async def test_a_server_that_dies_at_start_is_tried_three_times_only(workspace: Path) -> None:
    log = workspace / "log"
    svc = service(workspace, fake_spec(workspace, crash_on_start=True, log=str(log)))
    try:
        checks = [await svc.check(workspace / "a.fk", "x\n") for _ in range(6)]
        assert all(c.status == "failed" for c in checks)
        assert "could not start" in checks[0].detail
        assert "not started again" in checks[-1].detail
        assert log.read_text().count("initialize\n") == MAX_FAILURES
    finally:
        await svc.aclose()


async def test_concurrent_first_edits_share_one_server(workspace: Path) -> None:
    log = workspace / "log"
    svc = service(workspace, fake_spec(workspace, log=str(log)))
    try:
        checks = await asyncio.gather(*(svc.check(workspace / f"f{i}.fk", f"ERROR: {i}\n") for i in range(5)))
        assert [c.status for c in checks] == ["ok"] * 5
        assert log.read_text().count("initialize\n") == 1
        assert len(svc.rows()) == 1 and svc.started_count == 1
    finally:
        await svc.aclose()


async def test_one_server_per_root(workspace: Path) -> None:
    for sub in ("one", "two"):
        (workspace / sub).mkdir()
        (workspace / sub / ".git").mkdir()
    svc = service(workspace, fake_spec(workspace))
    try:
        await svc.check(workspace / "one" / "a.fk", "x\n")
        await svc.check(workspace / "two" / "b.fk", "x\n")
        await svc.check(workspace / "one" / "c.fk", "x\n")
        assert sorted(Path(r.root).name for r in svc.rows()) == ["one", "two"]
    finally:
        await svc.aclose()


async def test_new_errors_in_other_files_are_reported_old_ones_not(workspace: Path) -> None:
    svc = service(workspace, fake_spec(workspace, delay=0.02), settle=0.3)
    try:
        cold = await svc.check(workspace / "a.fk", "BREAKS: c.fk\n")
        assert cold.new_elsewhere == ()  # the server's first look: c.fk's error may have been there before
        check = await svc.check(workspace / "a.fk", "BREAKS: b.fk\n")
        assert [(Path(d.path).name, d.message) for d in check.new_elsewhere] == [("b.fk", "broken by a change in a.fk")]
        assert "New errors in other files after this change: 1" in render(check, workspace)[0]
        again = await svc.check(workspace / "a.fk", "BREAKS: b.fk\nWARN: w\n")
        assert again.new_elsewhere == ()  # b.fk's error was there before this change
    finally:
        await svc.aclose()


async def test_the_end_of_the_session_stops_every_server_and_its_children(workspace: Path) -> None:
    pid_file = workspace / "pids"
    svc = service(workspace, fake_spec(workspace, child=True, pid_file=str(pid_file), ignore_shutdown=True))
    await svc.check(workspace / "a.fk", "x\n")
    pids = pids_of(pid_file)
    assert len(pids) == 2 and all(alive(p) for p in pids)
    await svc.aclose()
    assert gone_within(pids), "a server that ignores shutdown, or its child, survived the session's end"
    assert svc.rows() == []
    again = await svc.check(workspace / "a.fk", "x\n")  # a check after the end starts nothing
    assert again.status == "failed"


async def test_a_cancelled_check_then_the_end_leave_nothing(workspace: Path) -> None:
    pid_file = workspace / "pids"
    svc = service(workspace, fake_spec(workspace, never=True, child=True, pid_file=str(pid_file)))
    task = asyncio.create_task(svc.check(workspace / "a.fk", "x\n"))
    pids = await asyncio.to_thread(pids_of, pid_file)
    await asyncio.sleep(0.2)
    task.cancel()  # Ctrl-C cancels the tool call's task
    with pytest.raises(asyncio.CancelledError):
        await task
    await svc.aclose()
    assert gone_within(pids)


async def test_an_idle_server_is_stopped_and_started_again_when_needed(workspace: Path) -> None:
    pid_file = workspace / "pids"
    svc = service(workspace, fake_spec(workspace, child=True, pid_file=str(pid_file)), idle=0.3)
    try:
        await svc.check(workspace / "a.fk", "x\n")
        pids = pids_of(pid_file)
        assert await asyncio.to_thread(gone_within, pids, 5.0)
        assert svc.rows() == []
        pid_file.unlink()
        assert (await svc.check(workspace / "a.fk", "ERROR: back\n")).status == "ok"
        assert svc.started_count == 2
    finally:
        await svc.aclose()


async def test_missing_and_unchecked_files_say_which(workspace: Path) -> None:
    spec = fake_spec(workspace)
    import dataclasses

    missing = dataclasses.replace(spec, command=("no-such-language-server-xyz",))
    svc = service(workspace, missing)
    check = await svc.check(workspace / "a.fk", "x\n")
    assert check.status == "missing"
    assert "no language server for .fk files was found (looked for no-such-language-server-xyz)" in \
        render(check, workspace)[0]
    assert (await svc.check(workspace / "README.md", "x\n")).status == "none"
    assert render(await svc.check(workspace / "README.md", "x\n"), workspace)[0] == ""


async def test_a_check_waiting_when_the_session_ends_says_the_server_was_stopped(workspace: Path) -> None:
    svc = service(workspace, fake_spec(workspace, never=True), wait=30.0)
    task = asyncio.create_task(svc.check(workspace / "a.fk", "x\n"))
    while not svc.rows():
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.2)
    started = time.monotonic()
    await svc.aclose()
    check = await asyncio.wait_for(task, 10)
    assert time.monotonic() - started < 10
    assert check.status == "crashed" and "stopped (the session is ending)" in check.detail


async def test_a_server_that_finishes_starting_after_the_end_is_stopped(workspace: Path) -> None:
    """The end waits ``start_timeout`` for a start under way; a start that took longer (a slow launch) used to
    register its server after the end had stopped the others, and nothing stopped it."""
    from lsp_helpers import launch

    from swebash_ai.lsp.service import LspService

    pid_file = workspace / "pids"
    begun = asyncio.Event()

    async def slow_launch(argv: list[str], root: Path) -> object:
        begun.set()
        await asyncio.sleep(1.5)  # longer than the end waits for it
        return await launch(argv, root)

    svc = LspService([fake_spec(workspace, pid_file=str(pid_file))], workspace, slow_launch, wait=5.0,
                     start_timeout=1.0)
    task = asyncio.create_task(svc.check(workspace / "a.fk", "x\n"))
    await begun.wait()
    await svc.aclose()
    result = await task
    assert result.status == "failed", result
    assert svc.rows() == []
    if pid_file.exists():
        assert gone_within(await asyncio.to_thread(pids_of, pid_file)), "a server started after the end survived"
