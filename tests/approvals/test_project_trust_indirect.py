"""Trust of a project covers the files its hooks run without naming them: a program found on a PATH entry inside
the project (./node_modules/.bin, ./.venv/bin, ./bin) and the module files of ``python -m pkg.module``. A change
to one turns the project's hooks off until it is trusted again; the hooks are really run to show it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from swebash_ai.agent.decide import Gate
from swebash_ai.agent.hook_files import indirect_files
from swebash_ai.config.hooks import Hook
from swebash_ai.safety.verdict import Verdict
from tests.approvals.conftest import call_once
from tests.approvals.test_project_and_hooks import project
from tests.approvals.test_project_trust_files import runs, session_for


def program(path: Path, marker: Path) -> Path:
    """An executable script that leaves a line in ``marker`` each time it runs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho ran >> '{marker}'\n")
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("entry", [
    "node_modules/.bin",  # a relative PATH entry: bash reads it from the hook's working directory
    "ABSOLUTE/.venv/bin",  # an activated virtual environment of the project
])
def test_a_program_found_on_a_path_entry_inside_the_project_is_covered(
    entry: str, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "ran"
    where = entry.replace("ABSOLUTE", str(workspace))
    lint = program(workspace / where.replace(str(workspace) + "/", "") / "lint", marker)
    monkeypatch.setenv("PATH", f"{where}{os.pathsep}{os.environ['PATH']}")
    project(workspace, '[[hooks]]\nevent = "before_tool"\ncommand = ["lint", "--quiet"]\n')
    session = session_for(workspace)
    shown = os.path.relpath(lint, workspace)
    assert [(c.word, c.via, c.state[:7]) for c in session.project.covered] == [(shown, "lint on PATH", "sha256:")]
    assert any(line.strip().startswith(f"covers {shown} (lint on PATH; sha256 ") for line in session.project.summary())
    session.trust_project()
    call_once("run_command", {"command": "ls"}, workspace)
    assert runs(marker) == 1

    lint.write_text(lint.read_text() + f"echo ran >> '{marker}'\n")  # e.g. npm install replaced it
    _, _, session = call_once("run_command", {"command": "ls"}, workspace)
    assert runs(marker) == 1  # the changed program did not run
    assert session.project.needs_trust and session.project.stale
    session.trust_project()
    call_once("run_command", {"command": "ls"}, workspace)
    assert runs(marker) == 3  # trusted again: it runs (two lines now)


def test_a_program_created_in_an_earlier_project_path_entry_asks_again(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "ran"
    program(workspace / "bin" / "lint", marker)
    monkeypatch.setenv("PATH", os.pathsep.join(["tools", "bin", os.environ["PATH"]]))
    project(workspace, '[[hooks]]\nevent = "after_tool"\ncommand = ["lint"]\n')
    session = session_for(workspace)
    assert [(c.word, c.state[:7]) for c in session.project.covered] == [("tools/lint", "absent"),
                                                                          ("bin/lint", "sha256:")]
    session.trust_project()
    assert session_for(workspace).project.trusted
    shadow = program(workspace / "tools" / "lint", tmp_path / "shadow")  # bash would run this one first now
    assert session_for(workspace).project.needs_trust
    shadow.chmod(0o644)  # not executable: bash passes it by, but making it executable later must ask again
    found = session_for(workspace).project
    assert found.needs_trust and found.covered[0].via == "lint on PATH, not executable"


def test_a_program_outside_the_project_adds_nothing(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # No PATH entry inside the project: nothing is added, so trust recorded before still holds.
    monkeypatch.setenv("PATH", os.pathsep.join(["/usr/local/bin", "/usr/bin", "/bin"]))
    project(workspace, '[[hooks]]\nevent = "after_tool"\ncommand = ["sh", "-c", "true"]\n')
    assert session_for(workspace).project.covered == ()


def test_a_module_run_with_python_m_is_covered(workspace: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    package = workspace / "tools"
    package.mkdir()
    (package / "__init__.py").write_text("")
    check = package / "check.py"
    check.write_text(f"open({str(marker)!r}, 'a').write('ran\\n')\n")
    project(workspace, f'[[hooks]]\nevent = "before_tool"\ncommand = ["{sys.executable}", "-m", "tools.check"]\n')
    session = session_for(workspace)
    covered = {c.word: c for c in session.project.covered}
    assert covered["tools/__init__.py"].via == covered["tools/check.py"].via == "python -m tools.check"
    assert covered["tools/check.py"].state.startswith("sha256:")
    assert any(line.strip().startswith("covers tools/check.py (python -m tools.check; sha256 ")
               for line in session.project.summary())
    session.trust_project()
    call_once("run_command", {"command": "ls"}, workspace)
    assert runs(marker) == 1

    check.write_text(check.read_text() + "# harmless?\n")
    _, _, session = call_once("run_command", {"command": "ls"}, workspace)
    assert runs(marker) == 1 and session.project.needs_trust
    session.trust_project()
    (package / "__init__.py").write_text("import os\n")  # the package runs first: covered too
    _, _, session = call_once("run_command", {"command": "ls"}, workspace)
    assert runs(marker) == 1 and session.project.needs_trust


def test_a_project_module_that_would_shadow_the_interpreter_s_own_asks_again(workspace: Path) -> None:
    # `python -m json.tool` runs the standard library's module; the working directory comes first on sys.path,
    # so a json package created in the project later would run instead.
    project(workspace, f'[[hooks]]\nevent = "after_tool"\ncommand = ["{sys.executable}", "-m", "json.tool"]\n')
    session = session_for(workspace)
    assert {c.state for c in session.project.covered if c.via} == {"absent"}
    session.trust_project()
    (workspace / "json").mkdir()
    (workspace / "json" / "__init__.py").write_text("")
    assert session_for(workspace).project.needs_trust


def test_a_module_on_a_project_pythonpath_entry_is_covered(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", "src")
    (workspace / "src").mkdir()
    (workspace / "src" / "lintme.py").write_text("print('ok')\n")
    hook = Hook(event="after_tool", command=("uv", "run", "python3", "-X", "dev", "-m", "lintme"))
    files = [(os.path.relpath(f.path, workspace), f.via) for f in indirect_files(hook, workspace, os.environ)]
    # The working directory first (nothing there: recorded as absent), then src, where it is found.
    assert ("lintme", "python -m lintme") in files and ("src/lintme.py", "python -m lintme") in files


def test_accept_edits_never_writes_a_program_a_hook_finds_on_path_unasked(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program(workspace / "bin" / "lint", tmp_path / "ran")
    monkeypatch.setenv("PATH", f"bin{os.pathsep}{os.environ['PATH']}")
    gate = Gate(hooks=(Hook(event="after_tool", command=("lint",)),), mode="accept-edits", workspace=workspace)
    ask = Verdict.ask("write", rule="path.write")
    step, _ = gate.settle("write_file", "fs", {"path": "bin/lint"}, ask, lambda _c: False)
    assert step.verdict.decision == "ask"
    step, _ = gate.settle("write_file", "fs", {"path": "notes.txt"}, ask, lambda _c: False)
    assert step.verdict.decision == "allow"


def test_a_module_beside_a_folder_of_the_same_name_without_init_is_covered(workspace: Path, tmp_path: Path) -> None:
    # tools/ without an __init__ is a namespace package, which Python imports only when no tools.py (or other
    # module of the name) stands beside it: a tools.py created later runs instead, so it must ask again.
    marker = tmp_path / "ran"
    (workspace / "tools").mkdir()
    (workspace / "tools" / "check.py").write_text("print('checked')\n")
    project(workspace, f'[[hooks]]\nevent = "before_tool"\ncommand = ["{sys.executable}", "-m", "tools.check"]\n')
    session_for(workspace).trust_project()
    (workspace / "tools.py").write_text(f"open({str(marker)!r}, 'a').write('ran\\n')\n")
    _, _, session = call_once("run_command", {"command": "ls"}, workspace)
    assert runs(marker) == 0 and session.project.needs_trust  # it never ran: the hooks wait for trust
    assert "tools.py" in {c.word for c in session.project.covered}


def test_a_namespace_folder_does_not_hide_a_module_on_a_later_pythonpath_entry(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A namespace portion in the working directory loses to a module of the name on any later sys.path entry.
    monkeypatch.setenv("PYTHONPATH", "src")
    (workspace / "src").mkdir()
    (workspace / "src" / "lintme.py").write_text("print('ok')\n")
    (workspace / "lintme").mkdir()
    hook = Hook(event="after_tool", command=(sys.executable, "-m", "lintme"))
    files = {os.path.relpath(f.path, workspace) for f in indirect_files(hook, workspace, os.environ)}
    assert "src/lintme.py" in files


@pytest.mark.parametrize("options", [["-Bm", "tools.check"], ["-I", "-Bmtools.check"],
                                     ["--check-hash-based-pycs", "default", "-m", "tools.check"]],
                         ids=["combined", "combined-attached", "long-option-with-value"])
def test_python_options_written_together_still_cover_the_module(options: list[str], workspace: Path) -> None:
    package = workspace / "tools"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "check.py").write_text("print('checked')\n")
    hook = Hook(event="after_tool", command=(sys.executable, *options))
    files = {os.path.relpath(f.path, workspace) for f in indirect_files(hook, workspace, os.environ)}
    assert {"tools/__init__.py", "tools/check.py"} <= files


def test_accept_edits_never_writes_a_module_that_would_replace_a_namespace_package_unasked(workspace: Path) -> None:
    (workspace / "tools").mkdir()
    (workspace / "tools" / "check.py").write_text("print('checked')\n")
    hook = Hook(event="after_tool", command=(sys.executable, "-m", "tools.check"))
    gate = Gate(hooks=(hook,), mode="accept-edits", workspace=workspace)
    ask = Verdict.ask("write", rule="path.write")
    step, _ = gate.settle("write_file", "fs", {"path": "tools.py"}, ask, lambda _c: False)
    assert step.verdict.decision == "ask"
