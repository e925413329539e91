"""The view and the environment as allowlists (sandbox/view.py), and the check after a run (sandbox/planted.py)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import time
from pathlib import Path

import pytest

from swebash_ai.safety.paths import PathPolicy
from swebash_ai.sandbox import bwrap, planted
from swebash_ai.sandbox.policy import _walk_workspace, build_policy
from swebash_ai.sandbox.view import ENV_PASS, HOME_TOOLCHAINS, SYSTEM, env_allowed, shown
from swebash_ai.tools.command_env import child_environment


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    home, ws = tmp_path / "home", tmp_path / "ws"
    (home / ".cargo" / "bin").mkdir(parents=True)
    (home / ".cargo" / "credentials.toml").write_text("token = x\n")
    (home / ".pyenv").mkdir()
    (home / "notes").mkdir()
    ws.mkdir()
    return home, ws


def test_every_row_says_why() -> None:
    assert all(why.strip() for _p, why in SYSTEM) and all(why.strip() for _r, _m, why in HOME_TOOLCHAINS)
    assert all(why.strip() for _n, why in ENV_PASS)
    assert not any(rel in (".ssh", ".aws", ".cargo", ".m2", ".gradle", ".config", ".docker") for rel, _m, _w in
                   HOME_TOOLCHAINS)  # folders holding credentials are never shown whole


def test_the_view_shows_toolchains_and_caches_not_the_rest_of_home(tree: tuple[Path, Path]) -> None:
    home, ws = tree
    view = {v.path: v.mode for v in shown(home, path_env="/usr/bin", workspace=[ws])}
    assert view[home / ".cargo" / "bin"] == "ro" and view[home / ".pyenv"] == "ro"
    assert view[home / ".npm"] == "cache"  # shown empty and writable when missing: npm runs
    assert home / ".cargo" not in view and home / "notes" not in view and home not in view
    assert Path("/usr") in view


def test_the_users_additions_never_widen_to_home_or_the_root(tree: tuple[Path, Path]) -> None:
    home, ws = tree
    view = {v.path: v.mode for v in shown(home, read=["~/notes", "~", "/", str(ws.parent)], write=["~/notes"],
                                          path_env="", workspace=[ws])}
    assert view[home / "notes"] in ("ro", "rw")
    assert home not in view and Path("/") not in view and ws.parent not in view


def test_a_path_folder_outside_home_is_shown_a_venv_whole(tmp_path: Path, tree: tuple[Path, Path]) -> None:
    home, ws = tree
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    inside = home / "bin"
    inside.mkdir()
    view = {v.path for v in shown(home, path_env=f"{venv / 'bin'}:{inside}", workspace=[ws])}
    assert venv.resolve() in view and inside not in view  # home only through the table


def test_the_policy_renders_an_empty_read_only_home_with_the_table_in_it(tree: tuple[Path, Path]) -> None:
    home, ws = tree
    policy = build_policy(PathPolicy(roots=[ws], home=home))
    assert policy.empty_home == home
    argv = bwrap.render(policy, ["true"], cwd=ws, bwrap="bwrap")
    line = " ".join(argv)
    assert f"--tmpfs {home} " in line and f"--remount-ro {home} " in line
    assert f"--ro-bind-try {home / '.cargo' / 'bin'}" in line and "--ro-bind / /" not in line
    assert argv.index("--tmpfs") < argv.index(str(ws))  # the workspace after home: a workspace in home is seen
    assert "--proc" in argv and "--dev" in argv
    whole = build_policy(PathPolicy(roots=[ws], home=home), whole_disk=True)
    assert whole.view is None and whole.empty_home is None
    assert "--ro-bind / /" in " ".join(bwrap.render(whole, ["true"], cwd=ws, bwrap="bwrap"))


def test_a_credential_folder_copied_anywhere_in_the_workspace_is_hidden(tree: tuple[Path, Path]) -> None:
    home, ws = tree
    (ws / "deploy" / ".aws").mkdir(parents=True)
    (ws / "ops" / ".docker").mkdir(parents=True)
    (ws / "ops" / ".docker" / "config.json").write_text("{}")
    (ws / "ops" / ".docker" / "daemon.json").write_text("{}")
    hidden = {h.path for h in build_policy(PathPolicy(roots=[ws], home=home)).hidden}
    assert (ws / "deploy" / ".aws").resolve() in hidden and (ws / "ops/.docker/config.json").resolve() in hidden
    assert (ws / "ops/.docker/daemon.json").resolve() not in hidden
    paths = PathPolicy(roots=[ws], home=home)
    assert paths.check(str(ws / "deploy/.aws/credentials"), "read").decision == "deny"
    assert paths.check(str(ws / "ops/.docker/daemon.json"), "read").decision == "allow"


def test_the_environment_is_the_table_and_every_value_is_scanned(tree: tuple[Path, Path]) -> None:
    home, ws = tree
    policy = build_policy(PathPolicy(roots=[ws], home=home), env_pass=["MY_TOOL_MODE"])
    base = {"PATH": "/usr/bin", "HOME": str(home), "LANG": "C.UTF-8", "LC_ALL": "C", "CARGO_HOME": "/c",
            "DATABASE_URL": "postgres://app:hunter2-long-pass@db/app", "SLACK_WEBHOOK_URL": "https://hooks.slack.com/x",
            "MY_TOOL_MODE": "fast", "RANDOM_THING": "1", "PIP_INDEX_URL": "https://user:s3cr3tpassw0rd@pypi.corp/simple",
            "PYTHONPATH": "/src"}
    env = child_environment(base, sandbox=policy)
    assert {"PATH", "HOME", "LANG", "LC_ALL", "CARGO_HOME", "MY_TOOL_MODE", "PYTHONPATH"} <= set(env)
    assert not {"DATABASE_URL", "SLACK_WEBHOOK_URL", "RANDOM_THING", "PIP_INDEX_URL"} & set(env)
    assert env["GIT_CONFIG_GLOBAL"] == "/dev/null" and env["TERM"] == "dumb"
    unconfined = child_environment(base)  # a person's yes to this call: the old scrub by name
    assert "RANDOM_THING" in unconfined
    assert env_allowed("LC_TIME") and not env_allowed("AWS_PROFILE") and env_allowed("AWS_PROFILE", ["AWS_PROFILE"])


def test_missing_git_folders_are_sealed_and_a_planted_commondir_is_removed(tree: tuple[Path, Path]) -> None:
    home, ws = tree
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    for sub in ("hooks", "info"):
        subprocess.run(["rm", "-rf", str(ws / ".git" / sub)], check=True)
    paths = PathPolicy(roots=[ws], home=home)
    policy = build_policy(paths)
    real = ws.resolve()
    assert {real / ".git/hooks", real / ".git/info"} <= set(policy.sealed)
    watch = planted.before(policy, paths)
    (ws / ".git" / "commondir").write_text("/elsewhere/.git\n")  # what a command under Landlock could do
    (ws / ".git" / "config").write_text((ws / ".git" / "config").read_text() + "[core]\n\tfsmonitor = evil\n")
    (ws / ".swebash-ai").mkdir()
    lines = planted.after(watch, policy, paths)
    assert not (ws / ".git" / "commondir").exists() and "fsmonitor" not in (ws / ".git" / "config").read_text()
    assert not (ws / ".swebash-ai").exists() and len(lines) == 3
    assert subprocess.run(["git", "status"], cwd=ws, capture_output=True).returncode == 0


def test_a_new_nested_repository_is_kept_when_plain_and_refused_when_it_runs_programs(
        tree: tuple[Path, Path]) -> None:
    home, ws = tree
    paths = PathPolicy(roots=[ws], home=home)
    policy = build_policy(paths)
    watch = planted.before(policy, paths)
    subprocess.run(["git", "init", "-q", str(ws / "plain")], check=True)
    subprocess.run(["git", "init", "-q", str(ws / "evil")], check=True)
    subprocess.run(["git", "-C", str(ws / "evil"), "config", "alias.st", "!touch x"], check=True)
    time.sleep(0.01)
    lines = planted.after(watch, policy, paths)
    assert (ws / "plain" / ".git").is_dir() and not (ws / "evil" / ".git").exists()
    assert any("refused" in line and "alias.st" in line for line in lines)
    assert any("new repository was created at" in line and "plain" in line for line in lines)
    assert planted.unknown_keys("[remote \"o\"]\n\turl = x\n[core]\n\tbare = false\n") == []
    assert planted.unknown_keys("[include]\n\tpath = /x\n[core]\n\tsshCommand = y\n") == ["include.path",
                                                                                          "core.sshcommand"]


@pytest.mark.timeout(120)
def test_a_large_workspace_costs_a_stat_per_folder_after_the_first_walk(tmp_path: Path) -> None:
    """The 20,000-file workspace of the issue: the first walk reads every folder, later ones only stat them."""
    ws = tmp_path / "big"
    for d in range(200):
        folder = ws / f"pkg{d}" / "src"
        folder.mkdir(parents=True)
        for f in range(100):
            (folder / f"m{f}.py").write_text("")
    (ws / "pkg7" / "src" / ".env").write_text("K=1\n")
    old = time.time() - 60  # older than the racy window: cacheable
    for root, dirs, _files in os.walk(ws):
        for d in dirs:
            os.utime(Path(root, d), (old, old))
    os.utime(ws, (old, old))
    paths = PathPolicy(roots=[ws], home=tmp_path / "h")
    started = time.perf_counter()
    secret, _repos, cut = _walk_workspace(paths, [ws], 40_000)
    first = time.perf_counter() - started
    started = time.perf_counter()
    again, _repos, _cut = _walk_workspace(paths, [ws], 40_000)
    second = time.perf_counter() - started
    assert not cut and secret == again == [ws / "pkg7" / "src" / ".env"]
    assert second < first


def test_a_path_folder_inside_a_toolchain_shows_the_toolchain_root(tmp_path: Path, tree: tuple[Path, Path]) -> None:
    """Another HOME (a test's, a sudo's) with the real pyenv's shims on PATH: a shim runs pyenv's libexec, so the
    whole toolchain root is shown, read-only; a plain folder stays itself."""
    home, ws = tree
    other = tmp_path / "realhome"
    (other / ".pyenv" / "shims").mkdir(parents=True)
    (other / ".pyenv" / "libexec").mkdir()
    (other / ".cargo" / "bin").mkdir(parents=True)
    plain = tmp_path / "opt" / "bin"
    plain.mkdir(parents=True)
    view = {v.path: v.mode for v in shown(home, path_env=f"{other / '.pyenv' / 'shims'}:{other / '.cargo' / 'bin'}:"
                                                         f"{plain}", workspace=[ws])}
    assert view[(other / ".pyenv").resolve()] == "ro" and (other / ".pyenv" / "shims").resolve() not in view
    assert view[(other / ".cargo" / "bin").resolve()] == "ro" and (other / ".cargo").resolve() not in view
    assert view[plain.resolve()] == "ro"


def test_a_view_folder_under_tmp_is_bound_after_the_private_tmp(tmp_path: Path, tree: tuple[Path, Path]) -> None:
    home, ws = tree
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    policy = build_policy(PathPolicy(roots=[ws], home=home))
    policy = dataclasses.replace(policy, view=(*(policy.view or ()), *shown(home, path_env=str(venv / "bin"),
                                                                             workspace=[ws])))
    argv = bwrap.render(policy, ["true"], cwd=ws, bwrap="bwrap")
    if str(venv.resolve()).startswith("/tmp/") and policy.private_tmp:
        at = [i for i, a in enumerate(argv) if a == str(venv.resolve())]
        tmpfs = [i for i in range(len(argv) - 1) if argv[i] == "--tmpfs" and argv[i + 1] == "/tmp"]
        assert at and tmpfs and min(at) > tmpfs[0]
    else:
        pytest.skip("the temporary folder is not under /tmp here")


@pytest.mark.skipif(bwrap.find() is None or not __import__("swebash_ai.sandbox.detect", fromlist=["choose"])
                    .choose("bwrap").ok, reason="bubblewrap does not work here")
def test_an_existing_cache_folder_runs_with_any_bwrap(tree: tuple[Path, Path]) -> None:
    """An existing cache folder (~/.npm) was rendered as an overlay, which bubblewrap before 0.10 (Debian 12's
    0.8) refuses: every confined command failed with "Unknown option --overlay-src"."""
    home, ws = tree
    (home / ".npm").mkdir()
    (home / ".npm" / "kept").write_text("cached\n")
    policy = build_policy(PathPolicy(roots=[ws], home=home))
    found = bwrap.find()
    assert found is not None
    argv = bwrap.render(policy, ["/bin/sh", "-c", f"cat {home}/.npm/kept; echo x > {home}/.npm/new"], cwd=ws,
                        bwrap=found)
    out = subprocess.run(argv, cwd=ws, capture_output=True, text=True, timeout=60)
    assert "cached" in out.stdout, out.stderr
    assert not (home / ".npm" / "new").exists()  # the cache's writes are never the host's


def test_what_the_command_linked_elsewhere_is_never_removed_or_written_there(tmp_path: Path) -> None:
    """The put-back runs on the host: a `.swebash-ai` link to a folder of the user's listed every file there as
    "created by the command" and removed it; a `.git/hooks` replaced by a link had the old hook written through
    it; a `.git` file naming another repository had that repository's config and hooks removed."""
    ws, victim, other = tmp_path / "ws", tmp_path / "victim", tmp_path / "other"
    (victim / "sub").mkdir(parents=True)
    (victim / "a.txt").write_text("precious\n")
    (victim / "sub" / "b.txt").write_text("precious too\n")
    (ws / "nested" / ".git" / "hooks").mkdir(parents=True)
    (ws / "nested" / ".git" / "config").write_text("[core]\n\tbare = false\n")
    (ws / "nested" / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\necho the user's hook\n")
    (other / ".git" / "hooks").mkdir(parents=True)
    (other / ".git" / "config").write_text("[core]\n\tbare = false\n")
    (other / ".git" / "hooks" / "post-commit").write_text("#!/bin/sh\n")
    paths = PathPolicy(roots=[ws])
    policy = build_policy(paths)
    watch = planted.before(dataclasses.replace(policy, writable=(ws, ws / "nested")), paths)
    # what a confined command can do in its workspace
    (ws / ".swebash-ai").symlink_to(victim)
    hooks = ws / "nested" / ".git" / "hooks"
    hooks.rename(ws / "moved-hooks")
    hooks.symlink_to(victim)
    (ws / ".git").write_text(f"gitdir: {other / '.git'}\n")
    lines = planted.after(watch, dataclasses.replace(policy, writable=(ws, ws / "nested")), paths)
    assert sorted(p.name for p in victim.rglob("*")) == ["a.txt", "b.txt", "sub"], lines
    assert (victim / "a.txt").read_text() == "precious\n"
    assert (other / ".git" / "config").exists() and (other / ".git" / "hooks" / "post-commit").exists(), lines
    assert not (ws / ".swebash-ai").exists() and not hooks.is_symlink()
    assert any(f"to {victim}: removed" in line for line in lines), lines
    assert (hooks / "pre-commit").read_text() == "#!/bin/sh\necho the user's hook\n"  # put back in place
