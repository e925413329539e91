"""Fixtures for the command-line tests: run the real entry point as a subprocess against the fake server."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from swebash_ai.testing.fake_server import FakeLLMServer

from ._helpers import REPO, command

Runner = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def cli_env(llm_env: FakeLLMServer, workspace: Path) -> dict[str, str]:
    """The environment of the child: the conftest's isolated HOME, pointed at the fake server."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("NO_COLOR", None)
    env["SWEBASH_AI_PROVIDER_RETRIES"] = "0"
    return env


@pytest.fixture
def run_cli(cli_env: dict[str, str], workspace: Path) -> Runner:
    """Run ``python -m swebash_ai ARGS`` in the workspace, without a terminal (new session, no tty).

    ``input`` is piped to stdin (otherwise stdin is /dev/null); ``env`` entries override (None removes).
    """

    def run(*args: str, input: str | None = None, env: dict[str, str | None] | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
        child_env = dict(cli_env)
        for key, value in (env or {}).items():
            if value is None:
                child_env.pop(key, None)
            else:
                child_env[key] = value
        return subprocess.run(
            command(*args), input=input, stdin=None if input is not None else subprocess.DEVNULL,
            capture_output=True, text=True, cwd=workspace, env=child_env, timeout=timeout,
            start_new_session=True,  # no controlling terminal: /dev/tty cannot be opened, nobody can answer
        )

    return run
