"""``swebash-ai sandbox``: the policy as it applies here, one command run under it, and doctor's self-test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from swebash_ai.sandbox import detect

BWRAP = detect.choose("bwrap")
needs_bwrap = pytest.mark.skipif(not BWRAP.ok, reason=f"bubblewrap cannot run here: {BWRAP.problem}")


@needs_bwrap
def test_show_prints_the_policy_and_the_backend(run_cli: Any, workspace: Path) -> None:
    (workspace / ".env").write_text("K=1\n")
    res = run_cli("sandbox", "--show", env={"SWEBASH_AI_SANDBOX_BACKEND": "bwrap",
                                            "SWEBASH_AI_SANDBOX_ALLOW_HOSTS": "pypi.org"})
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert f"sandbox policy for {workspace}" in out and "backend: bwrap (" in out
    assert f"writable:\n  {workspace.resolve()}\n  /tmp (private" in out
    assert f"  {(workspace / '.env').resolve()}" in out and "everything else (the rest of home, other projects" in out
    assert "read-only, shown from outside the workspace:\n  /usr (" in out
    assert "network: none, but HTTP(S) through swebash-ai's proxy to: pypi.org" in out
    assert "applies to: every command not proven read-only, whoever allowed it" in out
    assert "your plain yes); only your answer 'outside' to one command runs it unconfined" in out


@needs_bwrap
def test_a_command_runs_confined_with_its_exit_code(run_cli: Any, workspace: Path) -> None:
    res = run_cli("sandbox", "--", "echo inside > made; touch /usr/x-sandbox-cli; exit 7",
                  env={"SWEBASH_AI_SANDBOX_BACKEND": "bwrap"})
    assert res.returncode == 7
    assert (workspace / "made").read_text() == "inside\n"
    assert "Read-only file system" in res.stderr and not Path("/usr/x-sandbox-cli").exists()
    several = run_cli("sandbox", "--", "sh", "-c", "echo $0 $1", "a b", "c")  # several words: program + arguments
    assert several.returncode == 0 and several.stdout == "a b c\n"


def test_no_backend_refuses_the_command(run_cli: Any, workspace: Path) -> None:
    res = run_cli("sandbox", "--", "touch ran", env={"SWEBASH_AI_SANDBOX_BACKEND": "seatbelt"} if
                  detect.sys.platform != "darwin" else {"SWEBASH_AI_SANDBOX_BACKEND": "bwrap", "PATH": "/nonexistent"})
    assert res.returncode == 2
    assert "The command was not run" in res.stderr and not (workspace / "ran").exists()


def test_usage_errors_and_help(run_cli: Any) -> None:
    both = run_cli("sandbox", "--show", "--", "true")
    assert both.returncode == 2 and "takes --show, or -- COMMAND" in both.stderr
    assert run_cli("sandbox").returncode == 2
    helped = run_cli("sandbox", "--help")
    assert helped.returncode == 0
    for text in ("--show", "-- COMMAND", "examples:", "no network", "each result saying so", "exit codes:"):
        assert text in helped.stdout


@needs_bwrap
def test_doctor_runs_the_self_test(run_cli: Any) -> None:
    res = run_cli("doctor", env={"SWEBASH_AI_API_BASE": "http://127.0.0.1:9/v1", "SWEBASH_AI_SANDBOX_BACKEND": "bwrap",
                                 "SWEBASH_AI_EXEC_SANDBOX": "all", "SWEBASH_AI_SANDBOX_ALLOW_HOSTS": "pypi.org"})
    line = next(x for x in res.stdout.splitlines() if "sandbox:" in x)
    assert line == ("✓ sandbox: bwrap, self-test passed (a write outside the workspace refused, a hidden file "
                    "unreadable, no network); confines every command"), line
    assert "✓ tools: shell: run_command; commands reach only pypi.org (sandbox_allow_hosts, through the proxy)" \
        in res.stdout.splitlines()


@pytest.mark.skipif(not detect.choose("landlock").ok, reason="Landlock ABI 4+ is not available here")
def test_doctor_says_what_landlock_gives_less_than_bubblewrap(run_cli: Any) -> None:
    res = run_cli("doctor", env={"SWEBASH_AI_API_BASE": "http://127.0.0.1:9/v1",
                                 "SWEBASH_AI_SANDBOX_BACKEND": "landlock", "SWEBASH_AI_EXEC_SANDBOX": "all"})
    line = next(x for x in res.stdout.splitlines() if "sandbox:" in x)
    assert line.startswith("✓ sandbox: landlock, self-test passed"), line
    assert "Landlock gives less than bubblewrap: inside the workspace .git/config, hooks and .env are not" in line
    assert "no pid namespace" in line


def test_show_says_who_is_confined_when_no_backend_works(run_cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never "every command is confined" where none can be: a named backend that does not work refuses the
    commands; with the automatic choice and none working, a command a person allows runs unconfined."""
    import io

    from swebash_ai.commands import sandbox as command
    from swebash_ai.config.settings import load_settings

    other = "seatbelt" if detect.sys.platform != "darwin" else "landlock"
    res = run_cli("sandbox", "--show", env={"SWEBASH_AI_SANDBOX_BACKEND": other})
    assert res.returncode == 1
    assert (f"applies to: no command is confined: every command not proven read-only is refused, since "
            f"sandbox_backend = {other} does not work here") in res.stdout
    none_works = detect.Choice(None, "", "no bubblewrap, no Landlock")
    monkeypatch.setattr(detect, "choose", lambda wanted="auto": none_works)
    out = io.StringIO()
    assert command._show(load_settings(), Path.cwd(), out) == 1
    text = out.getvalue()
    assert "applies to: nothing is confined: no sandbox works here, so a command you allow runs unconfined" in text
    assert "every command not proven read-only, whoever allowed it" not in text
