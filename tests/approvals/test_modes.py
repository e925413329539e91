"""Approval modes: ask (default), accept-edits, plan; set by flag, environment, file and profile."""

from __future__ import annotations

from pathlib import Path

import pytest

from swebash_ai.agent.approval import AllowApprover
from swebash_ai.config.settings import load_settings
from swebash_ai.errors import ConfigError
from tests.approvals.conftest import Recorder, audit_lines, call_once, config


def test_ask_mode_asks_before_a_write(workspace: Path) -> None:
    approver = Recorder()
    done, _, _ = call_once("write_file", {"path": "a.txt", "content": "x\n"}, workspace, approver)
    assert len(approver.asked) == 1 and done.result.status == "denied"
    assert not (workspace / "a.txt").exists()


def test_accept_edits_applies_writes_and_edits_inside_the_workspace_without_a_question(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SWEBASH_AI_APPROVAL_MODE", "accept-edits")
    approver = Recorder()
    done, _, session = call_once("write_file", {"path": "src/a.txt", "content": "one\n"}, workspace, approver)
    assert done.result.ok and done.decided_by == "mode:accept-edits" and not approver.asked
    assert (workspace / "src/a.txt").read_text() == "one\n"
    assert audit_lines(session)[-1]["decided_by"] == "mode:accept-edits"
    done, _, session = call_once("edit_file", {"path": "src/a.txt", "old": "one", "new": "two"}, workspace, approver)
    assert done.result.ok and not approver.asked, done.result.text
    assert session.undo().restored  # checkpointed like an approved edit: /undo works


def test_accept_edits_still_asks_outside_the_workspace_and_refuses_protected_paths(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SWEBASH_AI_APPROVAL_MODE", "accept-edits")
    approver = Recorder()
    outside = tmp_path / "elsewhere.txt"
    done, _, _ = call_once("write_file", {"path": str(outside), "content": "x"}, workspace, approver)
    assert len(approver.asked) == 1 and not outside.exists()
    done, _, _ = call_once("write_file", {"path": ".env", "content": "TOKEN=1"}, workspace, approver)
    assert done.decided_by.startswith("path") and not (workspace / ".env").exists()


def test_accept_edits_leaves_commands_unchanged(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWEBASH_AI_APPROVAL_MODE", "accept-edits")
    approver = Recorder()
    call_once("run_command", {"command": "touch made"}, workspace, approver)
    assert len(approver.asked) == 1 and not (workspace / "made").exists()


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("write_file", {"path": "a.txt", "content": "x"}),  # a write
        ("run_command", {"command": "touch made"}),  # a command not proven read-only
        ("run_command", {"command": "ls | sh"}),  # a pipe into a shell
    ],
)
def test_plan_mode_refuses_writes_and_unproven_commands_even_with_yes(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, name: str, args: dict[str, str]
) -> None:
    monkeypatch.setenv("SWEBASH_AI_APPROVAL_MODE", "plan")
    done, _, session = call_once(name, args, workspace, AllowApprover())
    assert done.result.status == "denied" and done.decided_by == "mode:plan"
    assert "plan mode" in done.result.text
    assert not (workspace / "a.txt").exists() and not (workspace / "made").exists()
    assert audit_lines(session)[-1]["decided_by"] == "mode:plan"


def test_plan_mode_runs_what_is_proven_read_only(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWEBASH_AI_APPROVAL_MODE", "plan")
    (workspace / "notes.txt").write_text("hello\n")
    done, _, _ = call_once("run_command", {"command": "cat notes.txt"}, workspace, Recorder())
    assert done.result.ok and "hello" in done.result.text
    done, _, _ = call_once("read_file", {"path": "notes.txt"}, workspace, Recorder())
    assert done.result.ok


def test_plan_mode_is_not_lifted_by_a_rule(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config('[[rules]]\nprefix = ["touch"]\ndecision = "allow"\n')
    monkeypatch.setenv("SWEBASH_AI_APPROVAL_MODE", "plan")
    done, _, _ = call_once("run_command", {"command": "touch made"}, workspace, AllowApprover())
    assert done.decided_by == "mode:plan" and not (workspace / "made").exists()


def test_the_mode_comes_from_flag_env_profile_and_file_in_that_order(monkeypatch: pytest.MonkeyPatch) -> None:
    config('approval_mode = "plan"\n[profiles.edit]\napproval_mode = "accept-edits"\n')
    assert load_settings().settings.approval_mode == "plan"
    assert load_settings(profile="edit").settings.approval_mode == "accept-edits"
    monkeypatch.setenv("SWEBASH_AI_APPROVAL_MODE", "ask")
    assert load_settings(profile="edit").settings.approval_mode == "ask"
    assert load_settings({"approval_mode": "plan"}, profile="edit").settings.approval_mode == "plan"
    monkeypatch.setenv("SWEBASH_AI_APPROVAL_MODE", "yolo")
    with pytest.raises(ConfigError, match="SWEBASH_AI_APPROVAL_MODE"):
        load_settings()


def test_shift_tab_order_cycles_the_modes(workspace: Path) -> None:
    _, _, session = call_once("read_file", {"path": "."}, workspace)
    assert [session.set_mode() for _ in range(4)] == ["accept-edits", "auto", "plan", "ask"]
    with pytest.raises(ConfigError):
        session.set_mode("yolo")


def test_stats_say_who_allowed_a_call(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from swebash_ai.observe.stats import _decision_kind

    monkeypatch.setenv("SWEBASH_AI_APPROVAL_MODE", "accept-edits")
    _, _, session = call_once("write_file", {"path": "a.txt", "content": "x"}, workspace, Recorder())
    entry = audit_lines(session)[-1]
    assert _decision_kind(entry["decision"], entry["decided_by"], entry["outcome"]) == "allowed_by_mode"
    assert _decision_kind("ask", "rule:project#1", "ok") == "allowed_by_rule"
    assert _decision_kind("ask", "hook:check", "ok") == "allowed_by_hook"
    assert _decision_kind("deny", "mode:plan", "denied") == "denied_by_policy"


def test_auto_mode_runs_what_asks_but_not_what_needs_a_person(tmp_path: Path) -> None:
    """auto lifts the classifier's questions about commands and edits inside the workspace; catastrophes,
    persistence points, a rule's pinned ask and (with a rule in force) what is not proven still ask."""
    from swebash_ai.agent.decide import Gate
    from swebash_ai.config.rules import parse_rule_list
    from swebash_ai.safety.commands import CommandPolicy
    from swebash_ai.safety.paths import PathPolicy

    home = tmp_path / "home"
    ws = home / "project"
    ws.mkdir(parents=True)
    policy = CommandPolicy(PathPolicy(roots=[ws], home=home))
    rules = parse_rule_list([{"prefix": ["git", "push"], "decision": "ask"}], "config", "[[rules]]", "config")
    gate = Gate(rules=rules, workspace=ws, mode="auto")

    def settle(command: str) -> tuple[str, str]:
        own = policy.assess(command, str(ws))
        step, _ = gate.settle("run_command", "exec", {"command": command}, own, lambda _c: False)
        return step.verdict.decision, step.decided_by

    assert settle("mkdir -p build && touch build.txt") == ("allow", "mode:auto")
    # With a rule in force only what is proven runs unasked: npm's scripts and curl could run `git push`.
    assert settle("npm install && touch build.txt") == ("ask", "rule.unproven")
    assert settle("curl -fsSL https://example.com/x.sh -o x.sh") == ("ask", "rule.unproven")
    assert settle("rm -rf ~")[0] == "ask"  # a catastrophe needs a person
    assert settle("echo x >> ~/.bashrc")[0] == "ask"  # a persistence point needs a person
    assert settle("git push origin main") == ("ask", "rule:config#1")
    edit = PathPolicy(roots=[ws], home=home).check("src/a.py", "write", str(ws))
    step, _ = gate.settle("write_file", "fs", {"path": "src/a.py"}, edit, lambda _c: False)
    assert (step.verdict.decision, step.decided_by) == ("allow", "mode:auto")
