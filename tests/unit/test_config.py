"""Settings: sources and their precedence, profiles, and errors a person can act on."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swebash_ai.config.settings import Settings, load_settings
from swebash_ai.errors import ConfigError


def write_config(text: str) -> Path:
    from swebash_ai.storage.locations import locations

    path = locations().config_file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_defaults() -> None:
    s = load_settings().settings
    assert (s.tools_fs, s.tools_exec, s.tools_web, s.tools_confirm) == (True, True, True, True)
    assert (s.tools_max_iter, s.max_tool_calls_per_turn, s.fs_max_size, s.exec_timeout) == (300, 0, 1048576, 30)
    assert s.web_provider == "duckduckgo" and s.api_key is None


def test_precedence_flag_env_profile_file_default(monkeypatch: pytest.MonkeyPatch) -> None:
    write_config(
        'exec_timeout = 11\nfs_max_size = 2000\ntheme = "light"\nprofile = "work"\n'
        "[profiles.work]\nexec_timeout = 22\nfs_max_size = 3000\n"
    )
    monkeypatch.setenv("SWEBASH_AI_EXEC_TIMEOUT", "33")
    loaded = load_settings({"exec_timeout": 44, "model": None})
    s, o = loaded.settings, loaded.origins
    assert (s.exec_timeout, o["exec_timeout"]) == (44, "flag")
    assert (s.fs_max_size, o["fs_max_size"]) == (3000, "profile")
    assert (s.theme, o["theme"]) == ("light", "file")
    assert (s.tools_max_iter, o["tools_max_iter"]) == (300, "default")
    assert load_settings().settings.exec_timeout == 33  # env beats profile
    assert loaded.profile == "work" and loaded.profiles == ["work"]


def test_profile_chosen_by_env_and_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    write_config('[profiles.a]\nmodel = "openai/a"\n[profiles.b]\nmodel = "anthropic/b"\n')
    monkeypatch.setenv("SWEBASH_AI_PROFILE", "a")
    assert load_settings().settings.model == "openai/a"
    assert load_settings(profile="b").settings.model == "anthropic/b"


def test_provider_reason_names_where_the_model_came_from(monkeypatch: pytest.MonkeyPatch) -> None:
    from swebash_ai.providers import choose_provider

    path = write_config('model = "openai/f"\n[profiles.a]\nmodel = "openai/a"\n')
    monkeypatch.delenv("SWEBASH_AI_MODEL", raising=False)

    def reason(loaded: object) -> str:
        from swebash_ai.config.settings import LoadedSettings

        assert isinstance(loaded, LoadedSettings)
        choice = choose_provider(loaded.settings, {}, probe_ollama=False, model_from=loaded.model_from)
        assert choice is not None
        return choice.reason

    assert reason(load_settings(profile="a")) == "the model is set by profile [profiles.a]"
    assert reason(load_settings()) == f"the model is set by the config file {path}"
    assert reason(load_settings({"model": "openai/x"})) == "the model is set by --model (or /model in the app)"
    monkeypatch.setenv("SWEBASH_AI_MODEL", "openai/e")
    assert reason(load_settings()) == "the model is set by env SWEBASH_AI_MODEL"


@pytest.mark.parametrize(
    ("var", "value", "expected"),
    [
        ("SWEBASH_AI_EXEC_TIMEOUT", "abc", "SWEBASH_AI_EXEC_TIMEOUT='abc': Input should be a valid integer"),
        ("SWEBASH_AI_EXEC_TIMEOUT", "900", "less than or equal to 300"),
        ("SWEBASH_AI_TOOLS_FS", "maybe", "SWEBASH_AI_TOOLS_FS='maybe': Input should be a valid boolean"),
        ("SWEBASH_AI_EXEC_SANDBOX", "docker", "'auto', 'all', 'none' or 'bwrap'"),
    ],
)
def test_bad_env_values_name_the_variable(monkeypatch: pytest.MonkeyPatch, var: str, value: str, expected: str) -> None:
    monkeypatch.setenv(var, value)
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert expected in str(info.value)


def test_unknown_profile_lists_the_known_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    write_config("[profiles.home]\ntheme = 'dark'\n")
    with pytest.raises(ConfigError, match=r"Unknown profile 'work' .*home"):
        load_settings(profile="work")


def test_unknown_key_and_bad_toml_in_file() -> None:
    path = write_config("exec_timout = 5\n")
    with pytest.raises(ConfigError, match="unknown setting exec_timout"):
        load_settings()
    path.write_text("exec_timeout = [\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings()


def test_bad_value_in_profile_names_the_profile() -> None:
    write_config("[profiles.x]\nexec_timeout = 0\n")
    with pytest.raises(ConfigError, match=r"\[profiles.x\]"):
        load_settings(profile="x")


def test_lists_are_comma_separated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWEBASH_AI_TOOLS_DENY", "run_command, web_search")
    assert load_settings().settings.tools_deny == ["run_command", "web_search"]


def test_api_key_is_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWEBASH_AI_API_KEY", "sk-very-secret-value")
    s = load_settings().settings
    assert "sk-very-secret-value" not in repr(s) and s.api_key is not None


def test_config_file_location_is_overridable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    alt = tmp_path / "alt.toml"
    alt.write_text("exec_timeout = 7\n")
    monkeypatch.setenv("SWEBASH_AI_CONFIG", str(alt))
    loaded = load_settings()
    assert loaded.settings.exec_timeout == 7 and loaded.config_file == alt


def test_every_setting_is_documented() -> None:
    from swebash_ai.config.settings import field_doc

    for name in Settings.model_fields:
        assert field_doc(name), f"{name} has no docstring"
    assert field_doc("exec_timeout") == "Default command timeout in seconds (1-300); the model may ask for up to 300."


def test_environment_values_are_read_as_text_in_any_case_and_unknown_ones_ignored() -> None:
    env = {"SWEBASH_AI_HOME": os.environ["SWEBASH_AI_HOME"],
           "swebash_ai_model": " openai/x ", "SWEBASH_AI_TOOLS_ALLOW": "read_file, list_dir",
           "Swebash_Ai_Tools_Exec": "0", "SWEBASH_AI_API_BASE": "", "SWEBASH_AI_NOT_A_SETTING": "1",
           "SWEBASH_AI_PATH_DENY": '["a"]'}
    loaded = load_settings(environ=env)
    s = loaded.settings
    assert (s.model, s.tools_allow, s.tools_exec, s.api_base) == ("openai/x", ["read_file", "list_dir"], False, "")
    assert s.path_deny == ['["a"]']  # a comma list, never JSON
    assert {loaded.origins[n] for n in ("model", "tools_allow", "tools_exec", "api_base")} == {"env"}


def test_an_explicit_environment_leaves_the_process_environment_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWEBASH_AI_EXEC_TIMEOUT", "33")
    home = {k: os.environ[k] for k in ("HOME", "SWEBASH_AI_HOME")}  # the test's private homes
    assert load_settings(environ={**home, "SWEBASH_AI_EXEC_TIMEOUT": "12"}).settings.exec_timeout == 12
    assert load_settings(environ=home).settings.exec_timeout == 30
    assert load_settings().settings.exec_timeout == 33
