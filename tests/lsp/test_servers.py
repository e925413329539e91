"""The server table, the user's [lsp] tables over it, finding programs and roots, and the report's caps and
cleaning of untrusted text."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swebash_ai.config.lsp import parse_lsp_tables
from swebash_ai.config.settings import load_settings
from swebash_ai.errors import ConfigError
from swebash_ai.lsp.client import Diag
from swebash_ai.lsp.report import MESSAGE_CHARS, PER_FILE, render
from swebash_ai.lsp.servers import DEFAULT_SERVERS, choose, find_program, language_of, merge_servers, root_for
from swebash_ai.lsp.service import FileCheck


def _exe(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


@pytest.mark.parametrize(("name", "language"), [
    ("a.py", "python"), ("b.PYI", "python"), ("c.ts", "typescript"), ("d.jsx", "typescript"), ("e.go", "go"),
    ("f.rs", "rust"), ("g.sh", "bash"), ("README.md", None), ("Makefile", None),
])
def test_language_by_extension(name: str, language: str | None) -> None:
    assert language_of(Path(name), DEFAULT_SERVERS) == language


def test_the_projects_own_programs_come_before_path(tmp_path: Path) -> None:
    local = _exe(tmp_path / ".venv" / "bin" / "ty")
    on_path = _exe(tmp_path / "bin" / "ty")
    assert find_program("ty", tmp_path, str(on_path.parent)) == str(local)
    node = _exe(tmp_path / "node_modules" / ".bin" / "typescript-language-server")
    assert find_program("typescript-language-server", tmp_path, "") == str(node)
    assert find_program("ty", tmp_path / "elsewhere", str(on_path.parent)) == str(on_path)
    assert find_program("nothing-such", tmp_path, str(on_path.parent)) is None


def test_choose_takes_the_first_found_in_table_order_and_names_what_it_looked_for(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    _exe(bin_dir / "pylsp")
    _exe(bin_dir / "ruff")
    spec, _root, program, looked = choose(tmp_path / "a.py", DEFAULT_SERVERS, tmp_path, str(bin_dir))
    assert spec is not None and spec.name == "ruff" and program == str(bin_dir / "ruff")
    assert looked == ["ty", "basedpyright-langserver", "pyright-langserver"]
    spec, _root, program, looked = choose(tmp_path / "a.go", DEFAULT_SERVERS, tmp_path, str(bin_dir))
    assert spec is None and looked == ["gopls"]


def test_user_tables_add_change_and_turn_off(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    for name in ("ty", "ruff", "my-lsp"):
        _exe(bin_dir / name)
    servers = merge_servers({
        "ty": {"enabled": False},
        "ruff": {"command": ["ruff", "server", "--preview"]},
        "mine": {"command": ["my-lsp"], "extensions": ["zz"], "languages": ["zed"]},
    })
    spec, *_ = choose(tmp_path / "a.py", servers, tmp_path, str(bin_dir))
    assert spec is not None and spec.name == "ruff" and spec.command == ("ruff", "server", "--preview")
    spec, *_ = choose(tmp_path / "a.zz", servers, tmp_path, str(bin_dir))
    assert spec is not None and spec.name == "mine"
    with pytest.raises(ConfigError, match="needs 'command' and 'extensions'"):
        merge_servers({"new": {"command": ["x"]}})


def test_root_is_the_nearest_marker_never_above_the_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "pkg" / "src").mkdir(parents=True)
    (ws / "pkg" / "pyproject.toml").write_text("")
    (tmp_path / "pyproject.toml").write_text("")  # above the workspace: never a root
    assert root_for(ws / "pkg" / "src" / "a.py", ["pyproject.toml"], ws) == ws / "pkg"
    assert root_for(ws / "b.py", ["pyproject.toml"], ws) == ws


@pytest.mark.parametrize(("raw", "error"), [
    ([1], "must be a table"),
    ({"bad name!": {}}, "must be a table named"),
    ({"x": {"cmd": ["a"]}}, "unknown key 'cmd'"),
    ({"x": {"command": "ty server"}}, "command must be a list of strings"),
    ({"x": {"enabled": "no"}}, "enabled must be a bool"),
])
def test_bad_lsp_tables_are_config_errors(raw: object, error: str) -> None:
    with pytest.raises(ConfigError, match=error):
        parse_lsp_tables(raw, "config.toml")


def test_the_config_file_lsp_tables_reach_the_loaded_settings(isolated_env: Path) -> None:
    config = isolated_env / ".swebash-ai" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('lsp_wait = 2.5\n[lsp.ty]\nenabled = false\n[lsp.gopls]\ncommand = ["gopls", "-rpc.trace"]\n')
    loaded = load_settings()
    assert loaded.settings.lsp_wait == 2.5
    assert loaded.lsp == {"ty": {"enabled": False}, "gopls": {"command": ["gopls", "-rpc.trace"]}}


def _d(line: int, severity: int = 1, message: str = "m", path: str = "/ws/a.py") -> Diag:
    return Diag(path, line, 1, severity, "code", "src", message)


def test_report_puts_errors_first_and_caps_with_n_more() -> None:
    diags = tuple(_d(i, severity=2 if i % 2 else 1) for i in range(1, 30))
    text, data = render(FileCheck(Path("/ws/a.py"), "ok", "ty", diags), Path("/ws"))
    lines = text.strip().split("\n")
    assert lines[0] == "Diagnostics (ty) for a.py: 14 errors, 15 warnings"
    shown = lines[1:-1]
    assert len(shown) == PER_FILE and all(": error[code] (src) m" in line for line in shown)
    assert lines[-1] == f"  ... {29 - PER_FILE} more"
    assert data["errors"] == 14 and data["more"] == 29 - PER_FILE and len(data["items"]) == PER_FILE


def test_report_cleans_untrusted_messages() -> None:
    evil = "bad \x1b]52;c;ZXZpbA==\x07name\x1b[2J " + "x" * 1000 + " key AKIAQWERTYUIOPASDFGH"
    text, data = render(FileCheck(Path("/ws/a.py"), "ok", "ty", (_d(1, message=evil),)), Path("/ws"))
    message = data["items"][0]["message"]
    assert "\x1b" not in text and "\x07" not in text and "\x1b" not in message
    assert len(message) <= MESSAGE_CHARS + 1
    secret = "token AKIAQWERTYUIOPASDFGH in a message"
    text, data = render(FileCheck(Path("/ws/a.py"), "ok", "ty", (_d(1, message=secret),)), Path("/ws"))
    assert "AKIAQWERTYUIOPASDFGH" not in text and "AKIAQWERTYUIOPASDFGH" not in data["items"][0]["message"]


def test_report_names_paths_relative_to_the_workspace() -> None:
    text, _ = render(FileCheck(Path("/ws/pkg/a.py"), "ok", "ty", (_d(3, path="/ws/pkg/a.py"),)), Path("/ws"))
    assert f"pkg{os.sep}a.py:3:1: error[code] (src) m" in text


def test_doctor_names_the_server_of_each_language_found_and_how_to_get_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from swebash_ai.commands.doctor import _lsp_check

    bin_dir = tmp_path / "bin"
    _exe(bin_dir / "gopls")
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SWEBASH_AI_LSP_DIAGNOSTICS", "edit")
    check = _lsp_check(load_settings())
    assert check.status == "ok" and f"go: gopls ({bin_dir / 'gopls'})" in check.detail
    assert "none for python, typescript, rust, bash, c" in check.detail
    assert "pip install 'swebash-ai[lsp]'" in check.fix
    monkeypatch.setenv("SWEBASH_AI_LSP_DIAGNOSTICS", "off")
    assert _lsp_check(load_settings()).detail == 'off (lsp_diagnostics = "off")'
