"""Persistence points are floor: a write there needs a person, whatever a rule, mode, hook or --yes says;
and an allow rule covers no option after its prefix that runs code or writes elsewhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from swebash_ai.agent.decide import Gate
from swebash_ai.config.rules import parse_rule_list
from swebash_ai.safety.commands import CommandPolicy
from swebash_ai.safety.paths import PathPolicy
from swebash_ai.safety.persistence import persistence_program, persistence_reason
from swebash_ai.safety.proven import effect_option


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    (h / "project").mkdir(parents=True)
    return h


@pytest.mark.parametrize(("path", "kind"), [
    ("~/.bashrc", "shell start-up"),
    ("~/.profile", "shell start-up"),
    ("~/.zshrc", "shell start-up"),
    ("~/.config/fish/config.fish", "shell start-up"),  # a folder covers what is below it
    ("~/.config/autostart/x.desktop", "autostart"),
    ("~/.config/systemd/user/evil.service", "systemd"),
    ("~/.local/bin/ls", "PATH"),
    ("~/bin/git", "PATH"),
    ("~/.gitconfig", "git"),
    ("~/.config/git/hooks/pre-commit", "git"),
    ("/etc/cron.d/job", "crontab"),
    ("/var/spool/cron/crontabs/root", "crontab"),
    ("../.bashrc", "shell start-up"),  # relative to the project folder, .. leads home
])
def test_persistence_points_are_named(path: str, kind: str, home: Path) -> None:
    reason = persistence_reason(path, str(home / "project"), str(home), str(home / "project"), path_env="")
    assert reason is not None and kind in reason


@pytest.mark.parametrize("path", ["notes.txt", "src/.bashrc.example", "~/.bashrc_history_notes/x", "~/docs/a"])
def test_ordinary_places_are_not(path: str, home: Path) -> None:
    assert persistence_reason(path, str(home / "project"), str(home), str(home / "project"), path_env="") is None


def test_path_folders_outside_the_workspace_count_and_the_projects_own_do_not(home: Path, tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    project_bin = home / "project" / "node_modules" / ".bin"
    env = f"{tools}:{project_bin}"
    assert persistence_reason(str(tools / "ls"), "/", str(home), str(home / "project"), env) is not None
    assert persistence_reason(str(project_bin / "x"), "/", str(home), str(home / "project"), env) is None


def test_a_symlink_into_a_persistence_point_is_one(home: Path) -> None:
    (home / ".bashrc").write_text("")
    (home / "project" / "rc").symlink_to(home / ".bashrc")
    assert persistence_reason("rc", str(home / "project"), str(home), str(home / "project"), "") is not None


@pytest.mark.parametrize(("argv", "installs"), [
    (["crontab", "jobs.txt"], True), (["crontab", "-l"], False), (["systemctl", "--user", "enable", "x"], True),
    (["systemctl", "status"], False), (["git", "config", "--global", "core.pager", "x"], True),
    (["git", "config", "--global", "--get", "user.name"], False), (["at", "now"], True),
])
def test_programs_that_install_what_runs_later(argv: list[str], installs: bool) -> None:
    assert (persistence_program(argv) is not None) is installs


def _gate(ws: Path, prefix: list[str], mode: str = "ask") -> Gate:
    rules = parse_rule_list([{"prefix": prefix, "decision": "allow"}], "config", "[[rules]]", "config")
    return Gate(rules=rules, workspace=ws, mode=mode)  # type: ignore[arg-type]


@pytest.mark.parametrize("command", [
    "touch ~/.bashrc", "touch ../.profile", "touch ~/.local/bin/ls", "touch ~/.config/autostart/x.desktop",
    "touch ~/.gitconfig",
])
def test_an_allow_rule_never_writes_a_persistence_point(command: str, home: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(home))
    ws = home / "project"
    policy = CommandPolicy(PathPolicy(roots=[ws], home=home))
    own = policy.assess(command, str(ws))
    step, _ = _gate(ws, ["touch"]).settle("run_command", "exec", {"command": command}, own, lambda _c: False)
    assert step.verdict.decision == "ask" and step.verdict.severe, step
    plain, _ = _gate(ws, ["touch"]).settle("run_command", "exec", {"command": "touch notes.txt"},
                                           policy.assess("touch notes.txt", str(ws)), lambda _c: False)
    assert plain.verdict.decision == "allow"  # the rule itself works


def test_accept_edits_in_a_home_workspace_does_not_write_bashrc(home: Path) -> None:
    policy = PathPolicy(roots=[home], home=home)
    own = policy.check(".bashrc", "write", str(home))
    assert own.decision == "ask" and own.severe
    step, _ = Gate(workspace=home, mode="accept-edits").settle("write_file", "fs", {"path": ".bashrc"}, own,
                                                                lambda _c: False)
    assert step.verdict.decision == "ask"
    ordinary = policy.check("notes.md", "write", str(home))
    step, _ = Gate(workspace=home, mode="accept-edits").settle("write_file", "fs", {"path": "notes.md"}, ordinary,
                                                                lambda _c: False)
    assert step.verdict.decision == "allow"


@pytest.mark.parametrize(("argv", "prefix", "stops_at"), [
    (["git", "log", "-p", "--ext-diff"], 2, "--ext-diff"),
    (["git", "log", "--textconv"], 2, "--textconv"),
    (["git", "fetch", "--upload-pack=evil"], 2, "--upload-pack=evil"),
    (["sort", "-o", "out", "in"], 1, "-o"),
    (["npm", "test", "--", "--script-shell=/tmp/x"], 2, "--script-shell=/tmp/x"),
    (["git", "log", "--oneline", "-5"], 2, None),
    (["npm", "test"], 2, None),
])
def test_an_allow_rule_stops_at_options_that_run_code(argv: list[str], prefix: int, stops_at: str | None) -> None:
    assert effect_option(argv, prefix) == stops_at


def test_git_log_rule_does_not_run_the_repositorys_diff_program(tmp_path: Path) -> None:
    ws = tmp_path
    policy = CommandPolicy(PathPolicy(roots=[ws]))
    command = "git log -p --ext-diff"
    own = policy.assess(command, str(ws))
    step, _ = _gate(ws, ["git", "log"]).settle("run_command", "exec", {"command": command}, own, lambda _c: False)
    assert step.verdict.decision == "ask"


def test_a_commondir_written_into_dot_git_takes_git_commands_back_to_asking(tmp_path: Path) -> None:
    """A sandboxed command can write .git/commondir (only .git/config is read-only): git then reads the config
    of the folder it names, where diff.external runs a program on the next `git diff`, unconfined."""
    import subprocess

    ws = tmp_path / "ws"
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    policy = CommandPolicy(PathPolicy(roots=[ws]))
    assert policy.assess("git diff", str(ws)).decision == "allow"
    evil = ws / "evil"
    evil.mkdir()
    (evil / "config").write_text("[diff]\n\texternal = sh -c 'echo PWNED'\n")
    (ws / ".git" / "commondir").write_text("../evil\n")
    verdict = policy.assess("git diff", str(ws))
    assert verdict.decision == "ask" and any("commondir" in r or "diff.external" in r for r in verdict.reasons)


@pytest.mark.parametrize("command", ['echo x >> $HOME/.bashrc', 'echo x >> "${HOME}/.profile"',
                                     "cp a.pth ~/.local/lib/python3.11/site-packages/",
                                     "cp agent.plist ~/Library/LaunchAgents/"])
def test_persistence_points_named_through_home_or_new_places(command: str, home: Path) -> None:
    policy = CommandPolicy(PathPolicy(roots=[home / "project"], home=home))
    verdict = policy.assess(command, str(home / "project"))
    assert verdict.decision == "ask" and verdict.severe, verdict


def test_the_sandbox_keeps_persistence_points_read_only_when_the_workspace_holds_home(home: Path) -> None:
    from swebash_ai.sandbox.policy import build_policy

    (home / ".bashrc").write_text("# rc\n")
    (home / ".config" / "autostart").mkdir(parents=True)
    policy = build_policy(PathPolicy(roots=[home], home=home))
    assert {home / ".bashrc", home / ".config" / "autostart"} <= set(policy.read_only)
