"""Trust of a project covers the files its hooks run: a changed hook script asks again, as a changed rules file."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pytest

from swebash_ai.agent.decide import Gate
from swebash_ai.agent.project import load_project
from swebash_ai.config.hooks import Hook, TrustedProject
from swebash_ai.errors import ConfigError
from swebash_ai.safety.verdict import Verdict
from swebash_ai.session import Session
from tests.approvals.conftest import call_once, notices
from tests.approvals.test_project_and_hooks import project


def shell_hook(workspace: Path, marker: Path) -> Path:
    """An executable hook script inside the project that leaves a line in ``marker`` each time it runs."""
    script = workspace / ".swebash-ai" / "hooks" / "check.sh"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(f"#!/bin/sh\necho ran >> '{marker}'\n")
    script.chmod(0o755)
    return script


def runs(marker: Path) -> int:
    return len(marker.read_text().splitlines()) if marker.exists() else 0


def test_a_changed_hook_script_stops_the_trust_until_trusted_again(workspace: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    script = shell_hook(workspace, marker)
    project(workspace, '[[hooks]]\nevent = "before_tool"\ncommand = ["./.swebash-ai/hooks/check.sh"]\n')
    _, _, session = call_once("run_command", {"command": "ls"}, workspace)
    assert runs(marker) == 0 and session.project.needs_trust
    assert [c.word for c in session.project.covered] == ["./.swebash-ai/hooks/check.sh"]
    session.trust_project()
    call_once("run_command", {"command": "ls"}, workspace)
    assert runs(marker) == 1

    script.write_text(script.read_text() + f"echo ran >> '{marker}'\n")  # e.g. a git pull changed it
    _, events, session = call_once("run_command", {"command": "ls"}, workspace)
    assert runs(marker) == 1  # the changed script did not run
    assert session.project.needs_trust and session.project.stale
    shown = notices(events) + session.notices
    assert any("changed since you trusted it" in n and "wait until you trust it" in n for n in shown)
    session.trust_project()
    call_once("run_command", {"command": "ls"}, workspace)
    assert runs(marker) == 3  # trusted again: the new script runs (it writes two lines)


def test_a_script_given_to_an_interpreter_is_covered(workspace: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    (workspace / "scripts").mkdir()
    check = workspace / "scripts" / "check.py"
    check.write_text(f"open({str(marker)!r}, 'a').write('ran\\n')\n")
    project(workspace, f'[[hooks]]\nevent = "before_tool"\ncommand = ["{sys.executable}", "scripts/check.py"]\n')
    session = session_for(workspace)
    lines = session.project.summary()
    assert any(line.strip().startswith("covers scripts/check.py (sha256 ") for line in lines)
    assert any("not covered: " + sys.executable in line and "outside the project" in line for line in lines)
    session.trust_project()
    call_once("run_command", {"command": "ls"}, workspace)
    assert runs(marker) == 1
    check.write_text(check.read_text() + "# harmless?\n")
    _, _, session = call_once("run_command", {"command": "ls"}, workspace)
    assert runs(marker) == 1 and session.project.needs_trust


def test_a_named_file_that_appears_later_asks_again(workspace: Path) -> None:
    project(workspace, '[[hooks]]\nevent = "after_tool"\ncommand = ["./tools/fmt.sh", "--check"]\n')
    session = session_for(workspace)
    assert [(c.word, c.state) for c in session.project.covered] == [("./tools/fmt.sh", "absent")]
    session.trust_project()
    assert session.project.trusted
    (workspace / "tools").mkdir()
    (workspace / "tools" / "fmt.sh").write_text("#!/bin/sh\n")
    assert session_for(workspace).project.needs_trust


def test_a_trust_recorded_for_the_rules_file_alone_fails_closed_when_hooks_name_project_files(
    workspace: Path, tmp_path: Path
) -> None:
    text = '[[hooks]]\nevent = "before_tool"\ncommand = ["./.swebash-ai/hooks/check.sh"]\n'
    path = project(workspace, text)
    shell_hook(workspace, tmp_path / "ran")
    old = [TrustedProject(str(path.resolve()), hashlib.sha256(text.encode()).hexdigest())]  # an older record
    policy = session_for(workspace).context.path_policy
    found = load_project(workspace, policy, old)
    assert not found.trusted and found.needs_trust and found.stale
    # A project whose hooks name no project file is covered by its rules file alone: such a record holds.
    plain = '[[hooks]]\nevent = "after_tool"\ncommand = ["ruff", "format", "--quiet", "."]\n'
    project(workspace, plain)
    old = [TrustedProject(str(path.resolve()), hashlib.sha256(plain.encode()).hexdigest())]
    found = load_project(workspace, policy, old)
    assert found.covered == () and found.trusted


def test_a_hook_naming_a_protected_file_cannot_be_trusted(workspace: Path) -> None:
    (workspace / ".env").write_text("TOKEN=secret\n")
    project(workspace, '[[hooks]]\nevent = "before_tool"\ncommand = ["./check", ".env"]\n')
    session = session_for(workspace)
    assert session.project.unverified.startswith(".env: ")
    assert any("cannot be trusted" in line for line in session.project.summary())
    with pytest.raises(ConfigError, match="cannot be trusted"):
        session.trust_project()
    assert not session.project.trusted


def test_accept_edits_never_writes_a_file_a_hook_runs_unasked(workspace: Path) -> None:
    hooks = (Hook(event="after_tool", command=("python3", "scripts/x.py")),)
    gate = Gate(hooks=hooks, mode="accept-edits", workspace=workspace)
    ask = Verdict.ask("write", rule="path.write")

    def settled(path: str) -> str:
        step, _ = gate.settle("write_file", "fs", {"path": path, "content": "x"}, ask, lambda _c: False)
        return step.verdict.decision

    assert settled("scripts/x.py") == "ask"
    assert settled("scripts/y.py") == "allow"


def session_for(workspace: Path) -> Session:
    from swebash_ai.config.settings import load_settings

    return Session(load_settings(), cwd=workspace, probe_ollama=False, environ=dict(os.environ))
