"""AGENTS.md files the repository decides: through the real one-shot, nothing protected reaches the provider.

Each case builds a hostile ``AGENTS.md`` in a repository inside the test's HOME (whose ``~/.ssh/id_rsa`` and
``~/.aws/credentials`` hold a canary), runs ``python -m swebash_ai -c`` against the scripted server, and checks
the system text the server received, the one-line notice on stderr, and ``swebash-ai config``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from swebash_ai.testing.fake_server import FakeLLMServer, Reply

from ._helpers import command

SECRET = "CANARY-6b2e-PRIVATE"


@pytest.fixture
def secrets(isolated_env: Path) -> Path:
    home = isolated_env
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text(f"[default]\naws_secret_access_key = {SECRET}\n")
    return home


def _run(cli_env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command(*args), stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd=cwd,
                          env=cli_env, timeout=60, start_new_session=True)


def _system(server: FakeLLMServer) -> str:
    (system,) = [m["content"] for m in server.requests[-1]["body"]["messages"] if m["role"] == "system"]
    return str(system)


def _fifo(home: Path, repo: Path) -> Path:
    os.mkfifo(repo / "AGENTS.md")
    return repo


def _big(home: Path, repo: Path) -> Path:
    with open(repo / "AGENTS.md", "wb") as fh:  # sparse: 50 MB on paper, instant to make
        fh.write(f"{SECRET}\n".encode())
        fh.truncate(50 * 1024 * 1024)
    return repo


def _nested(home: Path, repo: Path) -> Path:
    (repo / "sub").mkdir()
    (repo / "sub" / "AGENTS.md").symlink_to(home / ".aws" / "credentials")
    return repo / "sub"


# (how the repository is made hostile; returns the directory the one-shot runs in, a word of the notice)
CASES: list[tuple[str, Callable[[Path, Path], Path], str]] = [
    ("absolute symlink", lambda h, r: (r / "AGENTS.md").symlink_to(h / ".ssh" / "id_rsa") or r, "credentials"),
    ("relative symlink", lambda h, r: (r / "AGENTS.md").symlink_to(os.path.relpath(h / ".ssh" / "id_rsa", r)) or r,
     "credentials"),
    ("hard link", lambda h, r: os.link(h / ".ssh" / "id_rsa", r / "AGENTS.md") or r, "credentials"),
    ("nested link to ~/.aws/credentials", _nested, "credentials"),
    ("FIFO", _fifo, "FIFO"),
    ("50 MB file", _big, "larger than"),
    ("symlink loop", lambda h, r: (r / "AGENTS.md").symlink_to("AGENTS.md") or r, "ELOOP"),
]


@pytest.mark.parametrize(("make", "word"), [(m, w) for _, m, w in CASES], ids=[n for n, _, _ in CASES])
def test_hostile_agents_md_never_reaches_the_provider(
    llm_env: FakeLLMServer, cli_env: dict[str, str], secrets: Path, workspace: Path,
    make: Callable[[Path, Path], Path], word: str,
) -> None:
    repo = workspace
    (repo / ".git").mkdir()
    cwd = make(secrets, repo)
    agents = cwd / "AGENTS.md"
    llm_env.enqueue(Reply.text("answered"))
    res = _run(cli_env, cwd, "-c", "hi")  # a FIFO that blocked would hit the timeout here
    assert res.returncode == 0, res.stderr
    assert res.stdout == "answered\n"
    system = _system(llm_env)
    assert SECRET not in system and "Project instructions" not in system and "Directory instructions" not in system
    (notice,) = [line for line in res.stderr.splitlines() if "Refused instructions" in line]
    assert str(agents) in notice and word in notice and "left out" in notice
    assert SECRET not in res.stderr

    listed = _run(cli_env, cwd, "config")
    assert listed.returncode == 0, listed.stderr
    assert f"! Refused instructions {agents}" in listed.stdout and SECRET not in listed.stdout


def test_in_workspace_symlink_to_an_ordinary_file_still_works(
    llm_env: FakeLLMServer, cli_env: dict[str, str], secrets: Path, workspace: Path
) -> None:
    (workspace / ".git").mkdir()
    (workspace / "docs").mkdir()
    (workspace / "docs" / "agents.md").write_text("Run the tests with `make check`.\n")
    (workspace / "AGENTS.md").symlink_to("docs/agents.md")
    llm_env.enqueue(Reply.text("ok"))
    res = _run(cli_env, workspace, "-c", "how do I test?")
    assert res.returncode == 0, res.stderr
    assert "make check" in _system(llm_env)
    assert "Refused" not in res.stderr


def test_personal_file_linked_to_the_config_file_is_refused(
    llm_env: FakeLLMServer, cli_env: dict[str, str], secrets: Path, workspace: Path
) -> None:
    """The personal AGENTS.md may lead anywhere the policy allows, but never to the file holding the API keys."""
    config_dir = Path(os.environ["SWEBASH_AI_HOME"])
    config_dir.mkdir(parents=True, exist_ok=True)
    listed = _run(cli_env, workspace, "config", "--path")
    config_file = Path(listed.stdout.strip())
    config_file.parent.mkdir(parents=True, exist_ok=True)
    config_file.write_text(f'# {SECRET}\n')
    (config_dir / "AGENTS.md").symlink_to(config_file)
    llm_env.enqueue(Reply.text("ok"))
    res = _run(cli_env, workspace, "-c", "hi")
    assert res.returncode == 0, res.stderr
    assert SECRET not in _system(llm_env)
    assert "Refused instructions" in res.stderr and "own configuration" in res.stderr
