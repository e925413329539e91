"""``swebash-ai rules``, ``swebash-ai trust`` and ``--approval-mode``, run as a user runs them."""

from __future__ import annotations

import json
import os
from pathlib import Path

from swebash_ai.testing.fake_server import FakeLLMServer, Reply


def config(text: str) -> Path:
    path = Path(os.environ["SWEBASH_AI_HOME"]) / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_rules_lists_every_rule_with_its_source_and_removes_one(run_cli, workspace: Path) -> None:
    path = config('[[rules]]\nprefix = ["npm", "test"]\ndecision = "allow"\n\n'
                  '[[rules]]\ntool = "mcp__tracker__*"\ndecision = "ask"\n')
    (workspace / ".swebash-ai").mkdir()
    (workspace / ".swebash-ai" / "rules.toml").write_text('[[rules]]\nprefix = ["make"]\ndecision = "allow"\n')
    listed = run_cli("rules")
    assert listed.returncode == 0, listed.stderr
    out = listed.stdout
    assert "1  allow  `npm test` (and what follows)" in out and f"from {path} [[rules]] #1" in out
    assert "2  ask    mcp__tracker__*" in out
    assert "3  allow  `make`" in out and "not in force: the project is not trusted" in out
    refused = run_cli("rules", "remove", "3")
    assert refused.returncode == 2 and "change that file" in refused.stderr
    removed = run_cli("rules", "remove", "1")
    assert removed.returncode == 0 and "Removed rule 1" in removed.stdout
    assert "npm" not in path.read_text() and "mcp__tracker__" in path.read_text()


def test_usage_slips_are_usage_errors_without_a_configuration_title(run_cli) -> None:
    missing = run_cli("rules", "remove")
    assert missing.returncode == 2
    assert missing.stderr.startswith("swebash-ai: rules remove needs the number of a rule: swebash-ai rules remove N")
    unknown = run_cli("rules", "remove", "7")
    assert unknown.returncode == 2
    assert unknown.stderr.startswith("swebash-ai: There is no rule 7 (see `swebash-ai rules list`).")
    assert "Configuration error" not in missing.stderr + unknown.stderr


def test_no_rules_names_the_dialog_button_that_saves_one(run_cli) -> None:
    import inspect
    import re

    from swebash_ai.frontends.tui.screens import confirm

    button = re.search(r'Button\("([^"]+)", id="allow_always"', inspect.getsource(confirm))
    assert button is not None
    listed = run_cli("rules")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("No rules.")
    assert f'"{button.group(1)}"' in listed.stdout  # the label a person sees, not another name for it


def test_trust_records_the_hash_and_a_changed_file_needs_it_again(run_cli, workspace: Path) -> None:
    path = config("")
    rules = workspace / ".swebash-ai" / "rules.toml"
    rules.parent.mkdir()
    rules.write_text('[[rules]]\nprefix = ["make"]\ndecision = "allow"\n')
    nobody = run_cli("trust")
    assert nobody.returncode == 2 and "trust --yes" in nobody.stderr and "allow  `make`" in nobody.stdout
    done = run_cli("trust", "--yes")
    assert done.returncode == 0 and "Trusted" in done.stdout
    assert str(rules) in path.read_text() and "not in force" not in run_cli("rules").stdout
    rules.write_text('[[rules]]\nprefix = ["make", "deploy"]\ndecision = "allow"\n')
    assert "not in force: the project is not trusted" in run_cli("rules").stdout


def test_approval_mode_plan_refuses_a_write_even_with_yes(run_cli, llm_env: FakeLLMServer, workspace: Path) -> None:
    llm_env.enqueue(Reply.tool_calls([("write_file", {"path": "a.txt", "content": "x"})]), Reply.text("planned"))
    done = run_cli("--approval-mode", "plan", "--yes", "--json", "-c", "write it")
    assert done.returncode in (0, 3), done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines() if '"tool_result"' in line]
    assert results[0]["decided_by"] == "mode:plan" and "plan mode" in results[0]["content"]
    assert not (workspace / "a.txt").exists()
    bad = run_cli("--approval-mode", "yolo", "-c", "x")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


def test_help_names_the_mode_and_the_commands(run_cli) -> None:
    shown = run_cli("--help").stdout
    assert "--approval-mode" in shown and "rules [list|remove N]" in shown and "swebash-ai trust" in shown


def test_trust_lists_the_files_it_covers_and_a_changed_hook_script_needs_it_again(run_cli, workspace: Path) -> None:
    config("")
    hooks = workspace / ".swebash-ai" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "check.sh").write_text("#!/bin/sh\nexit 0\n")
    (workspace / ".swebash-ai" / "rules.toml").write_text(
        '[[hooks]]\nevent = "before_tool"\ncommand = ["./.swebash-ai/hooks/check.sh", "/etc/hosts"]\n')
    done = run_cli("trust", "--yes")
    assert done.returncode == 0, done.stderr
    assert "covers ./.swebash-ai/hooks/check.sh (sha256 " in done.stdout
    assert "not covered: /etc/hosts (outside the project" in done.stdout
    assert "Already trusted" in run_cli("trust").stdout
    (hooks / "check.sh").write_text("#!/bin/sh\nexit 2\n")
    again = run_cli("trust")
    assert again.returncode == 2 and "Already trusted" not in again.stdout and "trust --yes" in again.stderr
    assert "changed since you trusted it" in again.stdout  # not read as a first look at the same file


def test_trust_lists_a_program_found_on_a_project_path_entry(run_cli, workspace: Path) -> None:
    path = config("")
    lint = workspace / "node_modules" / ".bin" / "lint"
    lint.parent.mkdir(parents=True)
    lint.write_text("#!/bin/sh\n")
    lint.chmod(0o755)
    rules = workspace / ".swebash-ai" / "rules.toml"
    rules.parent.mkdir()
    rules.write_text('[[hooks]]\nevent = "after_tool"\ncommand = ["lint"]\n')
    env = {"PATH": f"node_modules/.bin{os.pathsep}{os.environ['PATH']}"}
    done = run_cli("trust", "--yes", env=env)
    assert done.returncode == 0, done.stderr
    assert "covers node_modules/.bin/lint (lint on PATH; sha256 " in done.stdout
    assert str(rules) in path.read_text()
    assert "Already trusted" in run_cli("trust", env=env).stdout
    lint.write_text("#!/bin/sh\necho changed\n")
    assert run_cli("trust", env=env).returncode == 2  # changed: not trusted any more, and nobody to confirm
