"""``swebash-ai --shell -c`` and ``shell-init`` through the real entry point, against the loopback server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from swebash_ai.testing.fake_server import FakeLLMServer, Reply

from ._helpers import needs_exec


def test_prints_exactly_the_command(llm_env: FakeLLMServer, run_cli: Any) -> None:
    llm_env.enqueue(Reply.text("Sure:\n\n```bash\n$ find . -size +1M\n```\n\nThis finds them."))
    res = run_cli("--shell", "-c", "find files bigger than 1 MB")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "find . -size +1M\n"
    assert res.stderr == ""  # no verdict into a pipe
    (sent,) = [m["content"] for m in llm_env.requests[0]["body"]["messages"] if m["role"] == "user"]
    assert "find files bigger than 1 MB" in sent and "ONE command" in sent


def test_unfenced_answer_and_verdict_when_asked(llm_env: FakeLLMServer, run_cli: Any) -> None:
    llm_env.enqueue(Reply.text("rm -r build"))
    res = run_cli("-s", "-c", "clean the build dir", env={"SWEBASH_AI_SHELL_VERDICT": "1"})
    assert res.returncode == 0, res.stderr
    assert res.stdout == "rm -r build\n"
    assert res.stderr.startswith("swebash-ai: would ask")


def test_no_command_exits_1_with_empty_stdout(llm_env: FakeLLMServer, run_cli: Any) -> None:
    llm_env.enqueue(Reply.text("I cannot help with that."))
    res = run_cli("--shell", "-c", "do the impossible")
    assert res.returncode == 1
    assert res.stdout == ""
    assert "no command" in res.stderr


def test_provider_failure_exits_1(llm_env: FakeLLMServer, run_cli: Any) -> None:
    llm_env.enqueue(Reply.error(500, "boom"))
    res = run_cli("--shell", "-c", "list files")
    assert res.returncode == 1 and res.stdout == ""


@needs_exec
def test_only_read_only_tools_run(llm_env: FakeLLMServer, run_cli: Any, workspace: Path) -> None:
    llm_env.enqueue(
        Reply.tool_calls([("run_command", {"command": "ls"}, "c1"), ("run_command", {"command": "touch x"}, "c2")]),
        Reply.text("```sh\nls\n```"),
    )
    res = run_cli("--shell", "-c", "list files")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "ls\n"
    assert not (workspace / "x").exists()
    tools = {m["tool_call_id"]: m["content"] for m in llm_env.requests[1]["body"]["messages"] if m["role"] == "tool"}
    assert "read-only" in tools["c2"]
    assert "Not run" not in tools["c1"]
    assert not list(Path(os.environ["SWEBASH_AI_HOME"]).rglob("sessions/*.jsonl"))  # not kept as a session


def test_shell_init(run_cli: Any) -> None:
    res = run_cli("shell-init", "bash")
    assert res.returncode == 0 and "bind -x" in res.stdout
    res = run_cli("shell-init", env={"SHELL": "/usr/bin/fish"})
    assert res.returncode == 0 and "commandline -r" in res.stdout
    res = run_cli("shell-init", env={"SHELL": "/bin/tcsh"})
    assert res.returncode == 2 and "tcsh" in res.stderr
    res = run_cli("shell-init", "--help")
    assert 'eval "$(swebash-ai shell-init bash)"' in res.stdout and "shell-init fish | source" in res.stdout
    res = run_cli("--shell")
    assert res.returncode == 2 and "--shell -c WORDS" in res.stderr
    res = run_cli("--shell", "--yes", "-c", "clean up")
    assert res.returncode == 2 and "runs nothing" in res.stderr


def test_words_from_stdin(llm_env: FakeLLMServer, run_cli: Any) -> None:
    llm_env.enqueue(Reply.text("```sh\ndf -h\n```"))
    res = run_cli("-s", "-c", "-", input="how full are my disks\n")
    assert res.returncode == 0, res.stderr
    assert res.stdout == "df -h\n"
    assert "how full are my disks" in llm_env.requests[0]["body"]["messages"][-1]["content"]
    res = run_cli("-s", "-c", "-", input="  \n")
    assert res.returncode == 1 and "nothing to turn into a command" in res.stderr


def test_shell_mode_imports_nothing_heavy(llm_env: FakeLLMServer, cli_env: dict[str, str], workspace: Path) -> None:
    """The key binding waits on this start-up: it loads no more than ``-c`` does (no TUI, no Markdown, no prompt)."""
    from .test_import_hygiene import _PROBE, HEAVY

    llm_env.enqueue(Reply.text("```sh\nls\n```"))
    res = subprocess.run([sys.executable, "-c", _PROBE.format(heavy=HEAVY), "--shell", "-c", "list"],
                         capture_output=True, text=True, env=cli_env, cwd=workspace, stdin=subprocess.DEVNULL,
                         timeout=60, start_new_session=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "ls\n"
    assert res.stderr.strip().splitlines()[-1] == "HEAVY:"


def test_without_a_provider_the_error_is_the_one_line_every_front_end_prints(run_cli: Any) -> None:
    res = run_cli("--shell", "-c", "list files",
                  env={"SWEBASH_AI_MODEL": None, "SWEBASH_AI_API_BASE": None, "SWEBASH_AI_API_KEY": None})
    assert res.returncode == 2
    assert res.stderr.startswith("swebash-ai: No model provider configured: Run `swebash-ai setup`")
