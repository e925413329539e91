"""What a command is run with: its argv (bash, optionally in the sandbox) and its scrubbed environment.

Contract:
    :func:`build_argv` gives ``bash --noprofile --norc -c COMMAND``, in the sandbox when asked (never a
    silent fallback: no working backend is an error); :func:`child_environment` drops secret-looking
    variables and shell start-up hooks, and turns pagers, colours and prompts off. Pure: nothing is started
    here (``tools/process.py`` starts it).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from swebash_ai.errors import ToolError
from swebash_ai.safety.redact import looks_secret_env

if TYPE_CHECKING:
    from swebash_ai.sandbox.policy import SandboxPolicy

__all__ = ["GIT_HARDENING", "build_argv", "child_environment"]

# git settings that make reading commands safe in a hostile repository. Deliberately absent:
# ``diff.external=`` (an empty value makes git try to run "" and every ``git diff`` fails) and
# ``core.sshCommand`` (an empty value breaks ssh remotes, ``false`` breaks every approved push/fetch).
GIT_HARDENING: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("core.hooksPath", "/dev/null"),
    # git diff refreshes stale stat data in .git/index even with GIT_OPTIONAL_LOCKS=0 (found by the sandbox
    # harness, git 2.39): a reader must not write.
    ("diff.autoRefreshIndex", "false"),
    ("protocol.ext.allow", "never"),
    # A bare repository inside the workspace (vendor/lib.git of a cloned project) brings its own config, which
    # git would read on `cd vendor/lib.git && git log`; only an explicit --git-dir may use one.
    ("safe.bareRepository", "explicit"),
)
# Variables that change what a command the policy judged will do: shell start-up hooks and options, git's
# external programs, a ripgrep config file (it can add --pre), CDPATH (``cd src`` could leave the workspace),
# GLOBIGNORE and IFS (they change how words and globs split), TAR_OPTIONS (options `tar -t` would take unseen,
# --to-command among them).
_ENV_DROP = {
    "BASH_ENV", "ENV", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "GIT_CONFIG_PARAMETERS", "GIT_EXTERNAL_DIFF",
    "RIPGREP_CONFIG_PATH", "CDPATH", "GLOBIGNORE", "IFS", "AWKPATH", "LESSOPEN", "LESSCLOSE", "TAR_OPTIONS",
}  # fmt: skip
# GIT_EDITOR=true: `git commit` without -m fails at once instead of waiting for an editor that cannot start.
# GIT_OPTIONAL_LOCKS=0: `git status` (a reader that runs unasked) would otherwise refresh and rewrite the
# index; found by the sandbox harness (tests/safety/test_sandbox_harness.py).
_ENV_SET: dict[str, str] = {
    "GIT_OPTIONAL_LOCKS": "0",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "MANPAGER": "cat",
    "SYSTEMD_PAGER": "",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": "true",
    "SSH_ASKPASS_REQUIRE": "never",
    "TERM": "dumb",
    "NO_COLOR": "1",
    "PYTHONUNBUFFERED": "1",
}

def child_environment(base: Mapping[str, str], keep: Iterable[str] = (),
                      sandbox: SandboxPolicy | None = None) -> dict[str, str]:
    """The environment a command gets: ``base`` minus secrets and shell start-up hooks, plus safe defaults.
    ``keep`` names secret-looking variables to pass on all the same (see ``APPROVED_ENV`` in the exec tool).

    Confined by ``sandbox`` (with its view), the environment is an allowlist: only the variables of
    ``sandbox/view.py``'s table, ``keep`` and ``[sandbox] env_pass``, and of those only the values the content
    scan finds nothing in (``DATABASE_URL=postgres://u:password@db`` is dropped whatever its name)."""
    dropped = ("BASH_FUNC_", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_", "GIT_CONFIG_COUNT")
    kept = frozenset(keep)
    env = {
        k: v
        for k, v in base.items()
        if k not in _ENV_DROP and not k.startswith(dropped) and (k in kept or not looks_secret_env(k))
    }
    if sandbox is not None and sandbox.view is not None:
        from swebash_ai.sandbox.view import env_allowed

        allowed = (*sandbox.env_pass, *kept)
        env = {k: v for k, v in env.items() if env_allowed(k, allowed) and (k in kept or not _holds_secret(k, v))}
        home = sandbox.home
        if not any(v.path in (home / ".gitconfig", home / ".config/git") for v in sandbox.view):
            env["GIT_CONFIG_GLOBAL"] = "/dev/null"  # not shown (it can hold tokens): git need not look for it
    env.update(_ENV_SET)
    env["GIT_CONFIG_COUNT"] = str(len(GIT_HARDENING))
    for n, (key, value) in enumerate(GIT_HARDENING):
        env[f"GIT_CONFIG_KEY_{n}"] = key
        env[f"GIT_CONFIG_VALUE_{n}"] = value
    return env


def _holds_secret(name: str, value: str) -> bool:
    """Whether the content scan (the one tool output gets) finds a credential in ``NAME=value``."""
    from swebash_ai.safety.redact import redact_output

    return redact_output(f"{name}={value}").masked > 0


def build_argv(command: str, *, cwd: Path, sandbox: SandboxPolicy | None = None, backend: str = "auto") -> list[str]:
    """The argv that runs ``command``: bash, confined by ``sandbox`` when one is given (``sandbox/confine.py``
    renders it with ``backend``, or refuses: never a silent unconfined run).

    Raises:
        ToolError: ``cwd`` is not a directory; bash is not on PATH; a sandbox was asked and none works here.
    """
    if not os.path.isdir(cwd):
        raise ToolError(f"The working directory does not exist or is not a directory: {cwd}")
    bash = shutil.which("bash")
    if bash is None:
        raise ToolError("Cannot run commands: `bash` is not on PATH.")
    shell = [bash, "--noprofile", "--norc", "-c", command]
    if sandbox is None:
        return shell
    from swebash_ai.sandbox.confine import wrap

    return wrap(sandbox, shell, cwd=cwd, backend=backend)
