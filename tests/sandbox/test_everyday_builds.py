"""Everyday work in the sandbox's view: a Python project and a Node project build and test in auto mode, unasked.

The view shows a command the system, the workspace and the toolchain folders of home, nothing else; these tests
prove that what ordinary builds need is in it. Python: a virtual environment, ``pip install`` of a local wheel
(pip's cache is a throw-away overlay), the project's tests with pytest. Node: ``npm pack`` of a local package and
``npm install`` of it with npm's cache in the workspace, then ``npm test``. Every call runs in the sandbox, no
question asked (no terminal: a question would be a refusal), and succeeds.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from swebash_ai.sandbox import detect
from swebash_ai.testing.fake_server import FakeLLMServer
from swebash_ai.testing.replies import Reply

REPO = Path(__file__).resolve().parents[2]
CHOICE = detect.choose("auto")
pytestmark = [pytest.mark.skipif(not CHOICE.ok, reason=f"no sandbox works here: {CHOICE.problem}"),
              pytest.mark.timeout(600)]


@pytest.fixture
def project() -> Iterator[Path]:
    base = "/var/tmp" if os.access("/var/tmp", os.W_OK) else None
    top = Path(tempfile.mkdtemp(prefix="builds-", dir=base))
    (top / "home").mkdir()
    (top / "ws").mkdir()
    try:
        yield top
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _wheel(folder: Path) -> None:
    """A one-module wheel, written by hand (no build backend needed, nothing downloaded)."""
    folder.mkdir()
    dist = "tinypkg-1.0.dist-info"
    files = {"tinypkg/__init__.py": "VALUE = 42\n",
             f"{dist}/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
             f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = "".join(f"{name},,\n" for name in files) + f"{dist}/RECORD,,\n"
    with zipfile.ZipFile(folder / "tinypkg-1.0-py3-none-any.whl", "w") as zf:
        for name, text in {**files, f"{dist}/RECORD": record}.items():
            zf.writestr(name, text)


def _run(top: Path, commands: list[str]) -> list[dict[str, object]]:
    ws, home = top / "ws", top / "home"
    with FakeLLMServer("openai") as server:
        for command in commands:  # one call a round: each builds on the one before
            server.enqueue(Reply.tool_calls([("run_command", {"command": command, "timeout": 240})]))
        server.enqueue(Reply.text("done"))
        env = {k: v for k, v in os.environ.items() if not k.startswith("SWEBASH_AI_")}
        env.update(HOME=str(home), SWEBASH_AI_HOME=str(home / ".swebash-ai"), PYTHONPATH=str(REPO),
                   SWEBASH_AI_MODEL="openai/fake-model", SWEBASH_AI_API_BASE=server.base_url,
                   SWEBASH_AI_PROVIDER_RETRIES="0", SWEBASH_AI_API_KEY="sk-test", SWEBASH_AI_TOOLS_MAX_ITER="20",
                   SWEBASH_AI_EXEC_TIMEOUT="240")
        out = subprocess.run([sys.executable, "-m", "swebash_ai", "--approval-mode", "auto", "--json", "-c", "go"],
                             cwd=ws, env=env, capture_output=True, text=True, timeout=580,
                             stdin=subprocess.DEVNULL, start_new_session=True)
        assert server.remaining == 0, out.stderr[-3000:]
    results = [e for e in (json.loads(line) for line in out.stdout.splitlines() if line.startswith("{"))
               if e.get("type") == "tool_result"]
    assert len(results) == len(commands), out.stderr[-3000:]
    return results


def _all_ran_unasked(results: list[dict[str, object]]) -> None:
    for r in results:
        assert r.get("decided_by") in ("mode:auto", "command.readonly"), r
        assert r.get("exit_code") == 0, r.get("content")


def test_a_python_project_builds_and_tests_in_the_sandbox(project: Path) -> None:
    ws = project / "ws"
    _wheel(ws / "wheels")
    (ws / "tests").mkdir()
    (ws / "tests" / "test_value.py").write_text("import tinypkg\n\n\ndef test_value():\n"
                                                "    assert tinypkg.VALUE == 42\n")
    pytest_path = sysconfig.get_paths()["purelib"]  # pytest itself, from this interpreter's packages (read-only)
    results = _run(project, [
        "python3 -m venv .venv",
        ".venv/bin/python -m pip install -q --no-index --find-links wheels tinypkg",
        f"PYTHONPATH={pytest_path} .venv/bin/python -m pytest -q -p no:cacheprovider -p no:xdist -p no:randomly "
        "tests",
    ])
    _all_ran_unasked(results)
    assert list((ws / ".venv").glob("lib/python*/site-packages/tinypkg/__init__.py"))
    assert "1 passed" in str(results[-1]["content"])
    assert all(r.get("sandbox") == CHOICE.backend for r in results)


@pytest.mark.skipif(shutil.which("npm") is None or shutil.which("node") is None, reason="no node/npm here")
def test_a_node_project_installs_and_tests_in_the_sandbox(project: Path) -> None:
    ws = project / "ws"
    lib = ws / "tinylib"
    lib.mkdir()
    (lib / "package.json").write_text(json.dumps({"name": "tinylib", "version": "1.0.0", "main": "index.js"}))
    (lib / "index.js").write_text("module.exports = 42;\n")
    (ws / "package.json").write_text(json.dumps({"name": "app", "version": "1.0.0", "private": True,
                                                 "scripts": {"test": "node test.js"}}))
    (ws / "test.js").write_text("const v = require('tinylib'); if (v !== 42) process.exit(1); console.log('ok');\n")
    results = _run(project, [
        "npm pack --silent ./tinylib",
        "npm install --offline --no-audit --no-fund --cache ./.npm-cache ./tinylib-1.0.0.tgz",
        "npm test --silent",
    ])
    _all_ran_unasked(results)
    assert (ws / "node_modules" / "tinylib" / "index.js").exists()
    assert "ok" in str(results[-1]["content"])
