"""``swebash-ai sandbox``: show the sandbox policy as it applies here, or run one command under it.

Contract:
    :func:`run_sandbox` with ``show``: prints the policy (writable, read-only, hidden, network) and the backend
    that enforces it here, or what is missing; exit 0, or 1 when no backend works. With a command: runs it in
    the workspace under the policy, the way the assistant's sandboxed commands run (scrubbed environment,
    same backend), with the terminal's input and output, and exits with its exit code (2 when no sandbox
    works here: it is not run).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from swebash_ai.errors import ExitCode, ToolError

if TYPE_CHECKING:
    from swebash_ai.config.settings import LoadedSettings
    from swebash_ai.sandbox.policy import SandboxPolicy

__all__ = ["run_sandbox"]


def _policy(loaded: LoadedSettings, cwd: Path) -> SandboxPolicy:
    from swebash_ai.sandbox.confine import policy_for
    from swebash_ai.session import session_path_policy

    return policy_for(session_path_policy(loaded, cwd), loaded.settings)


def _show(loaded: LoadedSettings, cwd: Path, out: TextIO) -> int:
    from swebash_ai.sandbox import detect
    from swebash_ai.sandbox.confine import backend_setting

    wanted = backend_setting(loaded.settings)
    choice = detect.choose(wanted)
    policy = _policy(loaded, cwd)
    applies = _applies(loaded.settings.exec_sandbox, wanted, choice.problem if choice.backend is None else None)
    print(f"sandbox policy for {cwd}", file=out)
    if choice.backend is not None:
        print(f"backend: {choice.backend} ({choice.binary})" + ("" if wanted == "auto" else " (sandbox_backend)"),
              file=out)
    else:
        print(f"backend: none works here ({wanted}): {choice.problem}", file=out)
    print(f"applies to: {applies}", file=out)
    for line in policy.describe():
        print(line, file=out)
    for limit in choice.limits:
        print(f"limit: {limit}", file=out)
    return ExitCode.OK if choice.backend is not None else ExitCode.ERROR


def _applies(mode: str, wanted: str, problem: str | None) -> str:
    """Who is confined, as it is here: by ``exec_sandbox``, and whether a backend works (``problem``: none does)."""
    if mode == "none":
        return "no command (exec_sandbox = none; auto mode is refused)"
    if problem is not None and (mode != "auto" or wanted != "auto"):
        return (f"no command is confined: every command not proven read-only is refused, since sandbox_backend = "
                f"{wanted} does not work here ({problem}); proven read-only commands run outside, with the "
                "environment scrubbed" if mode == "auto"
                else f"no command runs: exec_sandbox = {mode} and no sandbox works here ({problem})")
    if problem is not None:
        return ("nothing is confined: no sandbox works here, so a command you allow runs unconfined, with all of "
                "your rights (its result says so); commands are never run unasked (auto mode is refused)")
    if mode in ("all", "bwrap"):
        return f"every command (exec_sandbox = {mode}); no answer runs one outside"
    return ("every command not proven read-only, whoever allowed it (a rule, a hook, --yes, auto mode, a session "
            "approval, your plain yes); only your answer 'outside' to one command runs it unconfined. Proven "
            "read-only commands run outside, with the environment scrubbed")


def run_sandbox(loaded: LoadedSettings, cwd: Path, command: list[str], *, show: bool,
                out: TextIO = sys.stdout) -> int:
    """``swebash-ai sandbox`` (see the module docstring)."""
    if show:
        return _show(loaded, cwd, out)
    from swebash_ai.sandbox.confine import backend_setting
    from swebash_ai.tools.command_env import build_argv, child_environment

    line = command[0] if len(command) == 1 else shlex.join(command)
    policy = _policy(loaded, cwd)
    try:
        argv = build_argv(line, cwd=cwd, sandbox=policy, backend=backend_setting(loaded.settings))
    except ToolError as exc:
        print(f"swebash-ai sandbox: {exc.message}", file=sys.stderr)
        return ExitCode.USAGE
    try:
        proc = subprocess.run(argv, cwd=cwd, env=child_environment(os.environ, sandbox=policy), check=False)
    except KeyboardInterrupt:
        return 130
    return proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
