"""The sandbox settings: the [sandbox] table, its environment variables, the old exec_sandbox value."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swebash_ai.config.settings import load_settings
from swebash_ai.errors import ConfigError
from swebash_ai.sandbox.confine import backend_setting


def _write_config(text: str) -> Path:
    path = Path(os.environ["SWEBASH_AI_HOME"]) / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_sandbox_table_and_a_profile_s_own() -> None:
    _write_config('[sandbox]\nallow_hosts = ["pypi.org", "*.pythonhosted.org"]\nbackend = "landlock"\n\n'
                  '[profiles.ci.sandbox]\nallow_hosts = ["github.com"]\n')
    loaded = load_settings({})
    assert loaded.settings.sandbox_allow_hosts == ["pypi.org", "*.pythonhosted.org"]
    assert loaded.settings.sandbox_backend == "landlock" and loaded.origins["sandbox_allow_hosts"] == "file"
    assert load_settings({}, profile="ci").settings.sandbox_allow_hosts == ["github.com"]


def test_the_environment_wins_and_splits_at_commas(monkeypatch: pytest.MonkeyPatch) -> None:
    _write_config('[sandbox]\nallow_hosts = ["pypi.org"]\n')
    monkeypatch.setenv("SWEBASH_AI_SANDBOX_ALLOW_HOSTS", "a.example, b.example")
    assert load_settings({}).settings.sandbox_allow_hosts == ["a.example", "b.example"]


@pytest.mark.parametrize(("text", "says"), [
    ("[sandbox]\nallowed_hosts = []\n", "unknown setting sandbox_allowed_hosts"),
    ('sandbox = "yes"\n', "[sandbox] must be a table"),
    ('[sandbox]\nbackend = "docker"\n', "sandbox_backend"),
])
def test_mistakes_are_named(text: str, says: str) -> None:
    _write_config(text)
    with pytest.raises(ConfigError) as err:
        load_settings({})
    assert says in err.value.message


@pytest.mark.parametrize(("exec_sandbox", "backend", "chosen"), [
    ("bwrap", "auto", "bwrap"),      # the old setting keeps its meaning: every command, under bubblewrap
    ("all", "auto", "auto"),
    ("bwrap", "landlock", "landlock"),
    ("none", "seatbelt", "seatbelt"),
])
def test_the_old_exec_sandbox_value_still_names_bubblewrap(exec_sandbox: str, backend: str, chosen: str) -> None:
    settings = load_settings({"exec_sandbox": exec_sandbox, "sandbox_backend": backend}).settings
    assert backend_setting(settings) == chosen
