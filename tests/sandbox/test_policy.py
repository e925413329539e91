"""The sandbox policy as data: built from the path guard's tables and a workspace (a fake home, no real one)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from swebash_ai.safety.paths import PathPolicy
from swebash_ai.safety.protected_names import HOME_CREDENTIALS
from swebash_ai.sandbox.policy import Hidden, SandboxPolicy, build_policy, git_dirs


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("key\n")
    (home / ".aws").mkdir()
    (home / ".bash_history").write_text("ls\n")
    (home / ".config" / "gh").mkdir(parents=True)
    (home / ".config" / "gh" / "hosts.yml").write_text("token\n")
    (home / "notes.txt").write_text("fine\n")
    (home / "id_work").write_text("a custom-named key\n")
    return home, ws


def _hidden(policy: SandboxPolicy) -> dict[Path, str]:
    return {h.path: h.kind for h in policy.hidden}


@pytest.mark.parametrize(("rel", "kind"), [
    (".ssh", "dir"),                      # the home table: a folder, hidden whole
    (".aws", "dir"),
    (".config/gh/hosts.yml", "file"),     # the home table: one file
    (".bash_history", "file"),            # history names
    ("id_work", "file"),                  # a protected name straight in the home folder
])
def test_protected_paths_of_the_home_that_exist_are_hidden(tree: tuple[Path, Path], rel: str, kind: str) -> None:
    home, ws = tree
    policy = build_policy(PathPolicy(roots=[ws], home=home), whole_disk=True)  # the table, as a whole disk uses it
    assert _hidden(policy)[(home / rel).resolve()] == kind
    assert (home / rel).resolve() not in _hidden(build_policy(PathPolicy(roots=[ws], home=home)))  # not shown at all


def test_what_does_not_exist_or_is_not_protected_is_not_listed(tree: tuple[Path, Path]) -> None:
    home, ws = tree
    hidden = _hidden(build_policy(PathPolicy(roots=[ws], home=home)))
    assert (home / "notes.txt").resolve() not in hidden
    assert (home / ".gnupg").resolve() not in hidden  # in the table, absent here
    assert (home / ".ssh" / "id_rsa").resolve() not in hidden  # inside a hidden folder already
    assert all(p.exists() for p in hidden)


def test_the_same_table_as_the_path_guard(tree: tuple[Path, Path]) -> None:
    home, ws = tree
    for rel, _whose in HOME_CREDENTIALS:  # every entry of the guard's table, created: every one is hidden
        target = home / rel
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("x")
    paths = PathPolicy(roots=[ws], home=home)
    hidden = _hidden(build_policy(paths, whole_disk=True))
    for rel, _whose in HOME_CREDENTIALS:
        p = (home / rel).resolve()
        assert p in hidden or any(p.is_relative_to(h) for h in hidden), rel
        assert paths.check(str(p), "read").decision == "deny"


@pytest.mark.parametrize(("name", "hidden"), [
    (".env", True), (".env.production", True), ("id_rsa", True), ("server.pem", True), ("terraform.tfstate", True),
    (".env.example", False), ("main.py", False), ("id_rsa.pub", False),
])
def test_workspace_files_the_guard_denies_by_name_are_hidden(tree: tuple[Path, Path], name: str, hidden: bool) -> None:
    home, ws = tree
    (ws / "sub").mkdir()
    (ws / "sub" / name).write_text("x")
    assert ((ws / "sub" / name).resolve() in _hidden(build_policy(PathPolicy(roots=[ws], home=home)))) == hidden


def test_path_deny_globs_and_paths_and_own_folders_are_hidden(tree: tuple[Path, Path], tmp_path: Path) -> None:
    home, ws = tree
    (ws / "data.sqlite").write_text("x")
    private = tmp_path / "private"
    private.mkdir()
    own = tmp_path / "swebash-state"
    own.mkdir()
    policy = build_policy(PathPolicy(roots=[ws], home=home, extra_deny=["*.sqlite", str(private)]), own_dirs=[own],
                          whole_disk=True)
    hidden = _hidden(policy)
    assert hidden[(ws / "data.sqlite").resolve()] == "file"
    assert hidden[private.resolve()] == "dir" and hidden[own.resolve()] == "dir"


def test_a_protected_folder_that_holds_the_workspace_is_not_hidden_and_says_so(tree: tuple[Path, Path]) -> None:
    home, _ = tree
    ws = home / ".ssh" / "project"  # absurd but possible: the workspace must stay usable
    ws.mkdir()
    policy = build_policy(PathPolicy(roots=[ws], home=home))
    assert (home / ".ssh").resolve() not in _hidden(policy)
    assert any("holds the workspace" in n for n in policy.notes)


def test_git_config_hooks_and_project_folder_are_read_only(tree: tuple[Path, Path]) -> None:
    home, ws = tree
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / ".swebash-ai").mkdir()
    hook_file = ws / "scripts" / "check.sh"
    hook_file.parent.mkdir()
    hook_file.write_text("true\n")
    policy = build_policy(PathPolicy(roots=[ws], home=home), read_only_files=[hook_file])
    real = ws.resolve()
    assert set(policy.read_only) == {real / ".git/config", real / ".git/hooks", real / ".git/info",
                                     real / ".swebash-ai", hook_file.resolve()}
    assert set(policy.sealed) == {real / ".git/modules", real / ".git/worktrees"}  # absent: empty, read-only
    assert policy.pinned == (real / ".git",)
    assert policy.writable == (real,)


def test_a_worktree_names_its_git_folder_and_the_common_one(tmp_path: Path) -> None:
    main, wt = tmp_path / "main", tmp_path / "wt"
    subprocess.run(["git", "init", "-q", str(main)], check=True)
    subprocess.run(["git", "-C", str(main), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                    "--allow-empty", "-m", "x"], check=True)
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(wt)], check=True)
    read_only, pinned, folders = git_dirs(wt)
    common = (main / ".git").resolve()
    assert wt / ".git" in read_only and pinned == []
    assert common / "config" in read_only and common / "hooks" in read_only
    assert common in folders and any(f.is_relative_to(common / "worktrees") for f in folders)
    # Both repositories in one workspace: the worktree's pointer file and the common config stay read-only
    policy = build_policy(PathPolicy(roots=[tmp_path], home=tmp_path / "nohome"))
    assert {(wt / ".git").resolve(), common / "config", common / "hooks"} <= set(policy.read_only)


def test_submodule_git_folders_are_read_only_too(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    module = ws / ".git" / "modules" / "lib"
    (module / "hooks").mkdir(parents=True)
    (module / "config").write_text("[core]\n")
    read_only, _, _ = git_dirs(ws)
    assert module / "config" in read_only and module / "hooks" in read_only


def test_a_nested_repository_is_found_by_the_walk(tree: tuple[Path, Path]) -> None:
    home, ws = tree
    subprocess.run(["git", "init", "-q", str(ws / "vendor" / "lib")], check=True)
    policy = build_policy(PathPolicy(roots=[ws], home=home))
    nested = (ws / "vendor" / "lib" / ".git").resolve()
    assert nested / "config" in policy.read_only and nested in policy.pinned


def test_network_and_hosts(tree: tuple[Path, Path]) -> None:
    home, ws = tree
    closed = build_policy(PathPolicy(roots=[ws], home=home), allow_hosts=[" PyPI.org", "pypi.org", "", "github.com"])
    assert closed.network == "none" and closed.allow_hosts == ("pypi.org", "github.com")
    assert build_policy(PathPolicy(roots=[ws], home=home), network=True).network == "full"


def test_the_walk_is_bounded_and_says_so(tree: tuple[Path, Path]) -> None:
    home, ws = tree
    for n in range(30):
        (ws / f"f{n}").write_text("x")
    policy = build_policy(PathPolicy(roots=[ws], home=home), walk_limit=10)
    assert any("first 10 entries" in n for n in policy.notes)
    assert not any("first" in n for n in build_policy(PathPolicy(roots=[ws], home=home)).notes)


def test_the_policy_is_frozen_and_describes_itself(tree: tuple[Path, Path]) -> None:
    home, ws = tree
    policy = build_policy(PathPolicy(roots=[ws], home=home), allow_hosts=["pypi.org"], whole_disk=True)
    with pytest.raises(AttributeError):
        policy.network = "full"  # type: ignore[misc]
    text = "\n".join(policy.describe())
    assert f"writable:\n  {ws.resolve()}\n  /tmp (private" in text
    assert f"  {(home / '.ssh').resolve()}/" in text
    assert "network: none, but HTTP(S) through swebash-ai's proxy to: pypi.org" in text
    assert Hidden((home / ".aws").resolve(), "dir") in policy.hidden


def test_a_secret_added_after_a_walk_is_hidden_at_the_next(tree: tuple[Path, Path]) -> None:
    import os

    home, ws = tree
    sub = ws / "sub"
    sub.mkdir()
    (sub / "a.py").write_text("x")
    os.utime(sub, ns=(1_000_000_000, 1_000_000_000))  # an old folder: its listing is kept between walks
    paths = PathPolicy(roots=[ws], home=home)
    assert (sub / ".env").resolve() not in _hidden(build_policy(paths))
    (sub / ".env").write_text("K=1")  # the folder's mtime moves: it is read again
    assert (sub / ".env").resolve() in _hidden(build_policy(paths))
    (ws / "id_rsa").write_text("k")  # a folder that just changed is never kept: a second change in its tick
    assert (ws / "id_rsa").resolve() in _hidden(build_policy(paths))


def test_what_this_user_cannot_read_needs_no_cover(tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    home, ws = tree
    unreadable = {str(home / ".aws")}
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: str(p) not in unreadable and real_access(p, mode))
    hidden = _hidden(build_policy(PathPolicy(roots=[ws], home=home), whole_disk=True))
    assert (home / ".aws").resolve() not in hidden and (home / ".ssh").resolve() in hidden


def test_service_sockets_and_the_runtime_folder_are_hidden(tree: tuple[Path, Path], tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from swebash_ai.sandbox.policy import RUNTIME_SOCKETS

    home, ws = tree
    bus = tmp_path / "run" / "dbus"
    bus.mkdir(parents=True)
    docker = tmp_path / "run" / "docker.sock"
    docker.write_text("")
    hidden = _hidden(build_policy(PathPolicy(roots=[ws], home=home), runtime=[bus, docker, tmp_path / "run/nope"],
                                  whole_disk=True))
    assert hidden[bus.resolve()] == "dir" and hidden[docker.resolve()] == "file"
    xdg = tmp_path / "xdg"
    xdg.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(xdg))
    assert xdg.resolve() in _hidden(build_policy(PathPolicy(roots=[ws], home=home), whole_disk=True))
    assert {"/run/user", "/run/dbus", "/run/systemd/private", "/run/docker.sock"} <= {p for p, _ in RUNTIME_SOCKETS}
