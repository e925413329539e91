"""``swebash-ai setup`` as scripts and people run it, against the scripted provider: the test request decides,
the profile is saved as the default in a private file, and then ``-c`` works with no variable set."""

from __future__ import annotations

import io
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.testing.fake_server import FakeLLMServer, Reply

KEY = "sk-test-setup-0123456789abcdef"
NO_PROVIDER_ENV: dict[str, str | None] = {"SWEBASH_AI_MODEL": None, "SWEBASH_AI_API_BASE": None,
                                          "SWEBASH_AI_API_KEY": None}


def _config(home: Path) -> Path:
    return home / ".swebash-ai" / "config.toml"


def _setup(run_cli: Any, base: str, *extra: str, key: str = KEY) -> Any:
    return run_cli("setup", "--provider", "openai-compatible", "--api-base", base, "--model", "fake-model",
                   "--api-key-stdin", *extra, input=key + "\n", env=NO_PROVIDER_ENV)


def test_scripted_setup_saves_a_private_default_profile_and_then_c_works(
        run_cli: Any, llm_env: FakeLLMServer, isolated_env: Path) -> None:
    llm_env.enqueue(Reply.text("ok"), Reply.text("Hello from the saved profile."))
    res = _setup(run_cli, llm_env.base_url)
    assert res.returncode == 0, res.stderr
    assert KEY not in res.stderr + res.stdout  # the key is never echoed
    test_call = llm_env.requests[-1]
    assert test_call["headers"]["authorization"] == f"Bearer {KEY}"  # the test request used the pasted key
    config = _config(isolated_env)
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    text = config.read_text()
    assert 'profile = "openai-compatible"' in text and "[profiles.openai-compatible]" in text
    assert f'api_key = "{KEY}"' in text  # no usable keyring here: the file, and the summary says so
    assert "readable by you only" in res.stderr
    answer = run_cli("-c", "hi", env=NO_PROVIDER_ENV)
    assert answer.returncode == 0, answer.stderr
    assert "Hello from the saved profile." in answer.stdout
    shown = run_cli("config", env=NO_PROVIDER_ENV)
    assert KEY not in shown.stdout
    assert "key ****cdef from profile [profiles.openai-compatible]" in shown.stdout


@pytest.mark.parametrize(("reply", "said"), [
    (Reply.error(401, "invalid api key"), "The key was refused (401)"),
    (Reply.error(404, "The model does not exist"), "No model 'fake-model'"),
])
def test_a_failing_test_request_exits_1_and_saves_nothing(
        run_cli: Any, llm_env: FakeLLMServer, isolated_env: Path, reply: Reply, said: str) -> None:
    llm_env.enqueue(reply)
    res = _setup(run_cli, llm_env.base_url)
    assert res.returncode == 1
    assert said in res.stderr and "Nothing was saved" in res.stderr and "Traceback" not in res.stderr
    assert not _config(isolated_env).exists()


def test_an_unreachable_server_is_named(run_cli: Any, isolated_env: Path) -> None:
    res = _setup(run_cli, "http://127.0.0.1:9/v1")
    assert res.returncode == 1
    assert "Cannot reach http://127.0.0.1:9/v1" in res.stderr
    assert not _config(isolated_env).exists()


def test_a_key_echoed_by_the_server_is_masked(run_cli: Any, llm_env: FakeLLMServer) -> None:
    llm_env.enqueue(Reply.error(401, f"bad key {KEY}"))
    res = _setup(run_cli, llm_env.base_url)
    assert res.returncode == 1 and KEY not in res.stderr


def test_usage_errors_exit_2(run_cli: Any, llm_env: FakeLLMServer) -> None:
    res = run_cli("setup", "--provider", "openai", "--model", "gpt-4.1", input="", env=NO_PROVIDER_ENV)
    assert res.returncode == 2 and "needs an API key" in res.stderr
    res = run_cli("setup", "--provider", "openai-compatible", input="", env=NO_PROVIDER_ENV)
    assert res.returncode == 2 and "--api-base ADDRESS is needed" in res.stderr
    res = run_cli("setup", "--provider", "openai-compatible", "--api-base", "not an address", input="",
                  env=NO_PROVIDER_ENV)
    assert res.returncode == 2
    assert ("'not an address' is not an http:// or https:// URL (e.g. http://localhost:8000/v1)" in res.stderr)
    res = run_cli("setup", input="", env=NO_PROVIDER_ENV)
    assert res.returncode == 2 and "--provider is needed" in res.stderr


def test_api_base_without_a_scheme_is_completed_as_at_the_prompt(
        run_cli: Any, llm_env: FakeLLMServer, isolated_env: Path) -> None:
    llm_env.enqueue(Reply.text("ok"), Reply.text("Hello again."))
    res = _setup(run_cli, llm_env.base_url.removeprefix("http://"))  # 127.0.0.1:PORT/v1
    assert res.returncode == 0, res.stderr
    assert f"Using {llm_env.base_url}: http:// added (a local address)." in res.stderr.splitlines()
    assert llm_env.requests[-1]["headers"]["authorization"] == f"Bearer {KEY}"
    assert f'api_base = "{llm_env.base_url}"' in _config(isolated_env).read_text()
    assert run_cli("-c", "hi", env=NO_PROVIDER_ENV).stdout.strip() == "Hello again."


def test_the_environment_takes_an_address_without_a_scheme(run_cli: Any, llm_env: FakeLLMServer) -> None:
    # It used to fail at the first request: "UnsupportedProtocol: Request URL is missing an 'http://'...".
    llm_env.enqueue(Reply.text("Hello from a bare address."))
    res = run_cli("-c", "hi", env={"SWEBASH_AI_API_BASE": llm_env.base_url.removeprefix("http://")})
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "Hello from a bare address."
    res = run_cli("-c", "hi", env={"SWEBASH_AI_API_BASE": "not an address"})
    assert res.returncode == 2
    assert "SWEBASH_AI_API_BASE='not an address': 'not an address' is not an http:// or https:// URL" in res.stderr


def test_an_existing_file_keeps_its_content_and_is_not_widened(
        run_cli: Any, llm_env: FakeLLMServer, isolated_env: Path) -> None:
    config = _config(isolated_env)
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('# my settings\ntheme = "light"  # I like it\n\n[profiles.work]\nmodel = "openai/x"\n')
    os.chmod(config, 0o640)
    llm_env.enqueue(Reply.text("ok"))
    res = _setup(run_cli, llm_env.base_url, "--profile", "mine")
    assert res.returncode == 0, res.stderr
    text = config.read_text()
    assert text.startswith('# my settings\ntheme = "light"  # I like it\nprofile = "mine"\n')
    assert '[profiles.work]\nmodel = "openai/x"\n' in text and "[profiles.mine]" in text
    assert stat.S_IMODE(config.stat().st_mode) == 0o600  # a key went in: group read dropped, nothing added


def test_the_model_list_picks_the_model_when_none_is_given(
        run_cli: Any, llm_env: FakeLLMServer, isolated_env: Path) -> None:
    llm_env.models = ["zeta-model", "alpha-model"]
    llm_env.enqueue(Reply.text("ok"))
    res = run_cli("setup", "--provider", "openai-compatible", "--api-base", llm_env.base_url, input="",
                  env=NO_PROVIDER_ENV)
    assert res.returncode == 0, res.stderr
    assert 'model = "openai/alpha-model"' in _config(isolated_env).read_text()
    assert "api_key" not in _config(isolated_env).read_text()  # a keyless local server: no key anywhere


pexpect = pytest.importorskip("pexpect")


def test_interactive_setup_asks_step_by_step_without_echoing_the_key(
        cli_env: dict[str, str], llm_env: FakeLLMServer, workspace: Path, isolated_env: Path) -> None:
    llm_env.models = ["fake-model", "other-model"]
    llm_env.enqueue(Reply.error(401, "invalid api key"), Reply.text("ok"))
    env = {k: v for k, v in cli_env.items() if k not in NO_PROVIDER_ENV}
    env.update({"TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1", "COLUMNS": "100", "LINES": "30"})
    child = pexpect.spawn(sys.executable, ["-m", "swebash_ai", "setup"], env=env, cwd=str(workspace),
                          encoding="utf-8", timeout=60, dimensions=(30, 100))
    child.logfile_read = transcript = io.StringIO()  # everything the terminal was sent
    try:
        child.expect("Which provider")
        child.expect(r"5\. Any OpenAI-compatible server")  # Ollama is not offered: none answers here
        child.expect(r"Provider \[1-5\]:")
        child.sendline("5")
        child.expect("Server address")
        child.sendline("not an address")
        child.expect("is not an http:// or https:// URL")
        child.expect("Server address")
        child.sendline(llm_env.base_url.removeprefix("http://"))  # as people type a local server's address
        child.expect(r"Using http://127\.0\.0\.1:\d+/v1: http:// added \(a local address\)")
        child.expect("API key")
        child.sendline("wrong-key-000000")
        child.expect("Models: fake-model, other-model")
        child.expect("Model:")
        child.sendline("")  # the default: the first listed
        child.expect(r"The key was refused \(401\)")
        child.expect(r"Change \[k\]ey")
        child.sendline("k")
        child.expect("API key")
        child.sendline(KEY)
        child.expect("It works")
        child.expect("Saved profile 'openai-compatible'")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    shown = transcript.getvalue()
    assert "Saved profile" in shown and KEY not in shown and "wrong-key-000000" not in shown
    assert f'api_key = "{KEY}"' in _config(isolated_env).read_text()
