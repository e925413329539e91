"""A repository's own git config must not turn auto-allowed git reads into code execution."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from swebash_ai.safety.commands import CommandPolicy
from swebash_ai.safety.paths import PathPolicy


@pytest.fixture
def repo(tmp_path: Path, isolated_env: Path) -> Path:
    ws = tmp_path / "repo"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    return ws


def policy(ws: Path, home: Path) -> CommandPolicy:
    return CommandPolicy(PathPolicy(roots=[ws], home=home))


def add_config(ws: Path, text: str) -> None:
    with (ws / ".git" / "config").open("a") as fh:
        fh.write(text)


@pytest.mark.parametrize(
    ("config", "command", "expected"),
    [
        ("", "git diff", "allow"),  # a plain repository: reading is harmless
        ("", "git log -p", "allow"),  # same
        ("[diff]\n\texternal = /tmp/evil.sh\n", "git diff", "ask"),  # external diff runs a program on every diff
        ('[diff "pdf"]\n\ttextconv = sh -c evil\n', "git show HEAD", "ask"),  # textconv driver runs per file
        ('[diff "x"]\n\tcommand = evil\n', "git log -p", "ask"),  # a driver command is an external diff too
        ('[filter "lfs"]\n\tclean = evil %f\n', "git status", "ask"),  # clean filters run on git status/diff
        ("[gpg]\n\tprogram = /tmp/evil\n[log]\n\tshowSignature = true\n", "git log", "ask"),  # gpg.program
        ("[include]\n\tpath = ../../elsewhere\n", "git status", "ask"),  # included config is not followed
        ("[DIFF]\n\tExternal = evil\n", "git diff", "ask"),  # git config names are case-insensitive
        ("[core]\n\tpager = evil\n", "git log", "allow"),  # the exec environment forces core.pager=cat
        ("[diff]\n\texternal = evil\n", "git branch", "ask"),  # any git command in that repository asks
        ("[log]\n\tshowSignature = true\n", "git log", "ask"),  # runs gpg (not on the list) on every log
    ],
)
def test_repository_config_that_runs_programs_asks(
    repo: Path, isolated_env: Path, config: str, command: str, expected: str
) -> None:
    add_config(repo, config)
    verdict = policy(repo, isolated_env).assess(command, str(repo))
    assert verdict.decision == expected, verdict.reasons
    if expected == "ask":
        assert "can make git run programs" in verdict.reasons[0]


def test_subdirectory_and_worktree_find_the_config(repo: Path, isolated_env: Path) -> None:
    add_config(repo, "[diff]\n\texternal = evil\n")
    sub = repo / "src" / "deep"
    sub.mkdir(parents=True)
    assert policy(repo, isolated_env).assess("git diff", str(sub)).decision == "ask"
    (repo / "f").write_text("x")
    subprocess.run(["git", "-C", str(repo), "add", "f"], check=True)
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "x"], check=True
    )
    wt = repo.parent / "wt"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", str(wt)], check=True)
    worktree_policy = CommandPolicy(PathPolicy(roots=[wt], home=isolated_env))
    assert worktree_policy.assess("git diff", str(wt)).decision == "ask"


def test_a_submodule_config_counts_too(repo: Path, isolated_env: Path) -> None:
    # why: git status and git diff enter submodules, each a repository with its own config
    modules = repo / ".git" / "modules" / "lib"
    modules.mkdir(parents=True)
    (modules / "config").write_text('[filter "x"]\n\tclean = evil %f\n')
    verdict = policy(repo, isolated_env).assess("git status", str(repo))
    assert verdict.decision == "ask" and "modules/lib/config" in verdict.reasons[0]


def test_git_c_dir_judges_that_repository_config(repo: Path, isolated_env: Path) -> None:
    inner = repo / "vendor" / "dep"
    inner.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(inner)], check=True)
    with (inner / ".git" / "config").open("a") as fh:
        fh.write("[diff]\n\texternal = evil\n")
    p = policy(repo, isolated_env)
    assert p.assess("git -C vendor/dep diff", str(repo)).decision == "ask"
    assert p.assess("cd vendor/dep && git diff", str(repo)).decision == "ask"
    assert p.assess("git -C vendor diff", str(repo)).decision == "allow"
