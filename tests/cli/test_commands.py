"""``config``, ``config --path``, ``doctor``, ``--help`` and ``--version`` through the real entry point."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from swebash_ai import __version__
from swebash_ai.testing.fake_server import FakeLLMServer, Reply


def test_config_shows_sources_and_masks_secrets(run_cli: Any, cli_env: dict[str, str]) -> None:
    home = Path(cli_env["SWEBASH_AI_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text('theme = "light"\n[profiles.work]\nexec_timeout = 60\n')
    key = cli_env["SWEBASH_AI_API_KEY"]
    res = run_cli("config", "--profile", "work", "--model", "openai/other-model")
    assert res.returncode == 0, res.stderr
    rows = {line.split()[0]: line for line in res.stdout.splitlines() if line and not line.endswith(":")}
    assert rows["model"].split()[1:] == ["openai/other-model", "flag"]
    assert rows["api_base"].endswith("env SWEBASH_AI_API_BASE")
    assert rows["exec_timeout"].split()[1:] == ["60", "profile", "[profiles.work]"]
    assert rows["theme"].split()[1:] == ["light", "file"]
    assert rows["tools_max_iter"].split()[1:] == ["300", "default"]
    assert "****" + key[-4:] in rows["api_key"]
    assert key not in res.stdout  # never the secret itself
    assert "provider:    openai/other-model via the OpenAI-compatible client" in res.stdout
    assert "(because the model is set by --model (or /model in the app))" in res.stdout  # not the env var


def test_config_path(run_cli: Any, cli_env: dict[str, str]) -> None:
    res = run_cli("config", "--path")
    assert res.returncode == 0
    assert res.stdout.strip() == str(Path(cli_env["SWEBASH_AI_HOME"]) / "config.toml")


def test_help_teaches_and_version(run_cli: Any) -> None:
    res = run_cli("--help")
    assert res.returncode == 0
    for text in ("-c QUESTION", "--json", "--resume", "--tools", "examples:", "exit codes:", "| swebash-ai -c"):
        assert text in res.stdout
    res = run_cli("--version")
    assert res.returncode == 0 and res.stdout.strip() == f"swebash-ai {__version__}"


def test_each_command_has_its_own_usage_line(capsys: Any) -> None:
    """``swebash-ai undo --help`` starts with its own usage, not the whole program's usage text."""
    import argparse

    import pytest

    from swebash_ai.frontends.cli import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert {"config", "doctor", "mcp", "export", "shell-init", "undo"} <= set(commands)
    for name in commands:
        with pytest.raises(SystemExit):
            parser.parse_args([name, "--help"])
        usage = capsys.readouterr().out.splitlines()[0]
        assert usage.startswith(f"usage: swebash-ai {name} ["), usage
    # and the program's own usage, the first thing --help shows, names every command
    summary = parser.format_usage()
    missing = [name for name in commands if f"swebash-ai {name}" not in summary]
    assert not missing, f"--help's usage lines leave out {missing}"


def test_doctor_against_the_fake_server(llm_env: FakeLLMServer, run_cli: Any) -> None:
    llm_env.enqueue(Reply.tool_calls([("ping", {})]))
    res = run_cli("doctor")
    assert res.returncode == 0, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    for name in ("settings", "provider", "API key", "server", "tool calling", "sandbox", "containment", "shell parser",
                 "undo snapshots"):
        assert any(line.startswith(("✓ " + name, "! " + name)) for line in lines), (name, res.stdout)
    assert any(line.startswith("✓ tool calling") for line in lines)
    assert any(line.startswith("✓ server: ") and line.endswith(" answers (1 model)") for line in lines), res.stdout
    assert any(line.startswith("✓ containment") for line in lines) == (sys.platform == "linux"), res.stdout
    assert llm_env.requests[0]["path"].endswith("/models")
    assert llm_env.requests[1]["body"]["tools"][0]["function"]["name"] == "ping"


def test_doctor_says_when_undo_cannot_revert_commands(monkeypatch: Any) -> None:
    from swebash_ai.commands import doctor
    from swebash_ai.config.settings import load_settings

    loaded = load_settings()
    assert doctor._snapshot_check(loaded).status == "ok"
    monkeypatch.setattr(doctor.shutil, "which", lambda name: None)
    missing = doctor._snapshot_check(loaded)
    assert missing.status == "warn" and "git" in missing.detail and missing.fix
    off = doctor._snapshot_check(load_settings({"command_snapshots": False}))
    assert off.status == "ok" and "off" in off.detail


def test_doctor_probes_where_openai_base_url_points_and_names_a_bad_one(llm_env: FakeLLMServer,
                                                                        monkeypatch: Any) -> None:
    from swebash_ai.commands import doctor
    from swebash_ai.providers import ProviderChoice

    choice = ProviderChoice("openai/x", None, "k", "test")
    real = doctor.urllib.request.urlopen

    def loopback_only(request: Any, timeout: float) -> Any:  # a probe of api.openai.com fails here, not online
        assert request.full_url.startswith(llm_env.base_url), request.full_url
        return real(request, timeout=timeout)

    monkeypatch.setattr(doctor.urllib.request, "urlopen", loopback_only)
    monkeypatch.setenv("OPENAI_BASE_URL", llm_env.base_url.removeprefix("http://"))  # the lane's address, no scheme
    reach = doctor._reachability_check(choice, 5.0)
    assert reach.status != "fail" and llm_env.base_url in reach.detail, reach
    monkeypatch.setenv("OPENAI_BASE_URL", "my server")
    bad = doctor._reachability_check(choice, 5.0)
    assert bad.status == "fail" and "OPENAI_BASE_URL='my server'" in bad.detail, bad


def test_doctor_lists_the_tool_categories_and_why_one_is_off(run_cli: Any) -> None:
    res = run_cli("doctor", env={"SWEBASH_AI_TOOLS_WEB": "false", "SWEBASH_AI_TOOLS_DENY": "edit_file",
                                 "SWEBASH_AI_API_BASE": "http://127.0.0.1:9/v1"})
    lines = [line for line in res.stdout.splitlines() if line[2:].startswith("tools: ")]
    names = [line[2:].split(":")[1].strip() for line in lines]
    assert names == ["shell", "files (read)", "files (write)", "search", "find", "process", "plan", "ask", "web",
                     "MCP"], res.stdout
    assert "✓ tools: find: find_files" in lines and "✓ tools: plan: update_plan" in lines
    assert "✓ tools: ask: ask_user" in lines
    assert "✓ tools: process: read_process, stop_process; started by run_command(background=true), up to 8 at once, " \
        "all stopped when the session ends" in lines
    assert "✓ tools: files (write): write_file; not offered: edit_file (named in tools_deny)" in lines
    assert "- tools: web: off: web_search, fetch_url (tools_web = false: the setting, or --tools / --no-tools)" \
        in lines
    no_plan = run_cli("doctor", env={"SWEBASH_AI_TOOLS_PLAN": "0", "SWEBASH_AI_API_BASE": "http://127.0.0.1:9/v1"})
    assert "- tools: plan: off: update_plan (tools_plan = false" in no_plan.stdout


def test_doctor_says_what_to_fix_when_broken(run_cli: Any) -> None:
    other = "bwrap" if sys.platform == "darwin" else "seatbelt"  # a backend that cannot work on this system
    res = run_cli("doctor", env={"SWEBASH_AI_API_BASE": "http://127.0.0.1:9/v1", "SWEBASH_AI_EXEC_SANDBOX": "all",
                                 "SWEBASH_AI_SANDBOX_BACKEND": other, "PATH": "/nonexistent"})
    assert res.returncode == 1
    assert "✗ server: cannot reach http://127.0.0.1:9/v1" in res.stdout
    assert f"✗ sandbox: no sandbox works here ({other}): " in res.stdout
    assert "→ " in res.stdout


def test_config_into_a_closed_pipe_exits_quietly(cli_env: dict[str, str], workspace: Any) -> None:
    # `swebash-ai config | head -0`: the reader is gone before the first write; no traceback, no error exit
    proc = subprocess.Popen([sys.executable, "-m", "swebash_ai", "config"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=cli_env, cwd=workspace)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the interpreter needs far longer to start than this takes
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=30) == 0
    assert "Traceback" not in err
