"""Rules the user keeps: precedence, compound commands, what a prefix never covers, and the floor."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swebash_ai.agent.approval import AllowApprover, Decision
from swebash_ai.agent.decide import command_rules
from swebash_ai.config.rules import ToolRule
from swebash_ai.config.settings import load_settings
from swebash_ai.errors import ConfigError
from tests.approvals.conftest import Recorder, audit_lines, call_once, config


def prefix(*words: str, decision: str = "allow") -> ToolRule:
    return ToolRule(prefix=words, decision=decision)  # type: ignore[arg-type]


def never(_command: str) -> bool:
    return False


@pytest.mark.parametrize(
    ("command", "covered"),
    [
        ("npm test", True),  # the words it names
        ("npm test -- --watch", True),  # and what follows
        ("'npm' \"test\"", True),  # quotes are removed before matching
        ("npm testing", False),  # a word is a word, not a string prefix
        ("npm test && curl x | sh", False),  # every simple command must be covered
        ("npm test; rm -rf build", False),  # a list too
        ("FOO=1 npm test", False),  # an environment assignment changes what runs
        ("LD_PRELOAD=/tmp/x.so npm test", False),
        ("npm test > out.txt", False),  # a redirection to a file writes
        ("npm test $(curl x)", False),  # a command substitution runs something else
        ("npm test `id`", False),
        ("echo $(npm test)", False),  # nested inside something uncovered
        ("cd /tmp && npm test", False),  # cd moves where the rule was meant to apply
        ("npm --prefix /elsewhere test", False),  # not the words it names
        ("npm test 2>&1", True),  # merging output writes nothing
        ("npm test >/dev/null", True),
        ("env npm test", False),  # a wrapper is another program
        ("./npm test", False),  # a path is not the program the rule names
        ("npm test \u202e", False),  # a bidi override makes it read unlike what runs: the classifier asks
        ("npm test a\u200bb", False),  # a zero-width space hides inside an argument
    ],
)
def test_a_prefix_rule_covers_each_simple_command_separately(command: str, covered: bool) -> None:
    found = command_rules(command, [prefix("npm", "test")], never)
    assert bool(found) is covered


@pytest.mark.parametrize(
    ("rule", "argv", "covered"),
    [
        (("git",), ["git", "status"], True),
        (("git",), ["git", "-c", "core.pager=sh -c x", "status"], False),  # config that runs code
        (("git",), ["git", "-ccore.fsmonitor=x", "status"], False),  # attached value
        (("git",), ["git", "--config-env=core.pager=X", "log"], False),
        (("git",), ["git", "-C", "/elsewhere", "status"], False),  # another repository, its config
        (("git",), ["git", "--git-dir=/x/.git", "status"], False),
        (("git",), ["git", "--no-pager", "log"], True),  # an option that changes nothing dangerous
        (("git", "log"), ["git", "log", "-c"], True),  # after the subcommand -c is log's own option
        (("git", "-c", "color.ui=never"), ["git", "-c", "color.ui=never", "status"], True),  # named: covered
        (("git", "-c", "color.ui=never"), ["git", "-c", "color.ui=never", "-c", "core.pager=x", "log"], False),
        (("cargo",), ["cargo", "--config", "build.rustc='x'", "build"], False),
        (("make",), ["make", "-f", "/tmp/evil.mk"], False),
        (("python3",), ["python3", "-c", "import os"], False),
    ],
)
def test_a_prefix_never_covers_global_options_it_does_not_name(
    rule: tuple[str, ...], argv: list[str], covered: bool
) -> None:
    assert prefix(*rule).covers_argv(argv) is covered


def test_precedence_deny_then_ask_then_allow_whatever_the_order() -> None:
    rules = [prefix("git", decision="allow"), prefix("git", "push", decision="deny"),
             prefix("git", "commit", decision="ask")]
    assert [r.decision for r in command_rules("git push origin", rules, never)] == ["deny"]
    assert [r.decision for r in command_rules("git commit -m x", rules, never)] == ["ask"]
    assert [r.decision for r in command_rules("git status", rules, never)] == ["allow"]
    # deny and ask rules match any simple command, even inside what an allow could not cover
    assert [r.decision for r in command_rules("echo $(git push)", rules, never)] == ["deny"]


def test_a_compound_is_allowed_when_the_rest_is_proven_read_only() -> None:
    judged: list[str] = []

    def proven(text: str) -> bool:
        judged.append(text)
        return text in ("grep FAIL", "cat 'a b' *.log")

    found = command_rules("npm test | grep FAIL", [prefix("npm", "test")], proven)
    assert found and found[0].prefix == ("npm", "test")
    assert not command_rules("npm test | sh", [prefix("npm", "test")], proven)
    # the classifier judges the words as written: a glob stays a glob (it expands to what it matches)
    assert command_rules("npm test; cat 'a b' *.log", [prefix("npm", "test")], proven)
    assert judged[-1] == "cat 'a b' *.log"


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[[rules]]\ndecision = "allow"\n', "needs 'prefix'"),
        ('[[rules]]\nprefix = []\ndecision = "allow"\n', "non-empty"),
        ('[[rules]]\nprefix = ["npm"]\ntool = "read_file"\ndecision = "allow"\n', "'prefix' is for run_command"),
        ('[[rules]]\nprefix = ["npm"]\ndecision = "allow"\norigin = "project"\n', "unknown key 'origin'"),
        ('[[rules]]\ntool = "x"\ndecision = "allow"\ncolour = 1\n', "unknown key 'colour'"),
    ],
)
def test_bad_rules_are_one_clear_error(toml: str, message: str) -> None:
    config(toml)
    with pytest.raises(ConfigError, match=message):
        load_settings()


# --- in the loop: real tools, the classifier, the audit log -------------------------------------------------
def test_an_allow_rule_runs_a_command_the_classifier_would_ask_about(workspace: Path) -> None:
    config('[[rules]]\nprefix = ["touch"]\ndecision = "allow"\n')
    approver = Recorder()
    done, _, session = call_once("run_command", {"command": "touch made"}, workspace, approver)
    assert done.result.ok and not approver.asked and (workspace / "made").exists()
    assert done.decided_by == "rule:config#1"
    assert audit_lines(session)[-1]["decided_by"] == "rule:config#1"


def test_an_ask_rule_asks_even_for_a_proven_read_only_command(workspace: Path) -> None:
    config('[[rules]]\nprefix = ["ls"]\ndecision = "ask"\n')
    approver = Recorder(Decision.ALLOW_ONCE)
    done, _, _ = call_once("run_command", {"command": "ls"}, workspace, approver)
    assert done.result.ok and len(approver.asked) == 1
    assert "your rule ask" in approver.asked[0].verdict.reasons[0]


def test_a_deny_rule_refuses_even_with_yes(workspace: Path) -> None:
    config('[[rules]]\nprefix = ["ls"]\ndecision = "deny"\n[[rules]]\nprefix = ["ls"]\ndecision = "allow"\n')
    done, _, _ = call_once("run_command", {"command": "ls"}, workspace, AllowApprover())
    assert done.result.status == "denied" and done.decided_by == "rule:config#1"


def test_no_rule_leaves_the_classifier_verdict(workspace: Path) -> None:
    config('[[rules]]\nprefix = ["npm", "test"]\ndecision = "allow"\n')
    approver = Recorder()
    done, _, _ = call_once("run_command", {"command": "touch made"}, workspace, approver)
    assert len(approver.asked) == 1 and not (workspace / "made").exists()
    done, _, _ = call_once("run_command", {"command": "ls"}, workspace, approver)
    assert done.result.ok and done.decided_by == "command.readonly"


def test_tool_rules_match_a_name_glob_and_arguments(workspace: Path) -> None:
    config('[[rules]]\ntool = "write_*"\narguments = { path = "docs/*" }\ndecision = "allow"\n')
    approver = Recorder()
    done, _, _ = call_once("write_file", {"path": "docs/a.md", "content": "x"}, workspace, approver)
    assert done.result.ok and done.decided_by == "rule:config#1" and not approver.asked
    call_once("write_file", {"path": "src/a.py", "content": "x"}, workspace, approver)
    assert len(approver.asked) == 1  # another argument: the rule does not speak


def test_a_tool_rule_cannot_allow_commands_only_a_prefix_can(workspace: Path) -> None:
    config('[[rules]]\ntool = "*"\ndecision = "allow"\n')
    approver = Recorder()
    call_once("run_command", {"command": "touch made"}, workspace, approver)
    assert len(approver.asked) == 1 and not (workspace / "made").exists()


def test_workspaces_limit_where_a_rule_applies(workspace: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    config(f'[[rules]]\nprefix = ["touch"]\ndecision = "allow"\nworkspaces = ["{other}"]\n')
    approver = Recorder()
    call_once("run_command", {"command": "touch made"}, workspace, approver)
    assert len(approver.asked) == 1
    done, _, _ = call_once("run_command", {"command": "touch made"}, other, approver)
    assert done.result.ok and len(approver.asked) == 1


# --- the floor: what no rule lifts --------------------------------------------------------------------------
def test_a_rule_cannot_allow_deleting_home(workspace: Path) -> None:
    config('[[rules]]\nprefix = ["rm"]\ndecision = "allow"\n')
    canary = Path(os.environ["HOME"]) / "keep.txt"
    canary.write_text("x")
    done, _, _ = call_once("run_command", {"command": "rm -rf ~"}, workspace, AllowApprover())
    assert done.result.status == "denied" and canary.exists()
    assert done.decided_by == "non-interactive"  # a person must answer; --yes and the rule do not


def test_a_rule_cannot_allow_reading_a_private_key_or_env_file(workspace: Path) -> None:
    ssh = Path(os.environ["HOME"]) / ".ssh"
    ssh.mkdir()
    (ssh / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nKEYMATERIAL\n")
    (workspace / ".env").write_text("TOKEN=hunter2\n")
    config('[[rules]]\ntool = "read_file"\ndecision = "allow"\n'
           '[[rules]]\nprefix = ["cat"]\ndecision = "allow"\n')
    for name, args in [("read_file", {"path": "~/.ssh/id_rsa"}), ("read_file", {"path": ".env"}),
                       ("run_command", {"command": "cat ~/.ssh/id_rsa"}), ("run_command", {"command": "cat .env"})]:
        done, _, _ = call_once(name, args, workspace, AllowApprover())
        assert done.result.status == "denied", (args, done)
        assert "KEYMATERIAL" not in done.result.text and "hunter2" not in done.result.text
        assert not done.decided_by.startswith("rule:"), (args, done.decided_by)


def test_an_allow_rule_for_a_relative_path_holds_only_where_it_was_written(workspace: Path) -> None:
    # `./build.sh` names the file in the workspace; a call with `cwd` runs another folder's build.sh
    config('[[rules]]\nprefix = ["./build.sh"]\ndecision = "allow"\n')
    for folder in (workspace, workspace / "sub"):
        folder.mkdir(exist_ok=True)
        (folder / "build.sh").write_text("#!/bin/sh\ntouch made\n")
        (folder / "build.sh").chmod(0o755)
    approver = Recorder()
    done, _, _ = call_once("run_command", {"command": "./build.sh"}, workspace, approver)
    assert done.result.ok and not approver.asked and (workspace / "made").exists()
    call_once("run_command", {"command": "./build.sh", "cwd": "sub"}, workspace, approver)
    assert len(approver.asked) == 1 and not (workspace / "sub" / "made").exists()
    done, _, _ = call_once("run_command", {"command": "./build.sh", "cwd": "."}, workspace, approver)
    assert done.result.ok and len(approver.asked) == 1  # the same folder spelled out: the rule holds
