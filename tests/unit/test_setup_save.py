"""Saving a setup: the config file edited in place (comments kept, modes never widened) and the key in the
OS keyring when a backend is usable (a fake one here), read back when the settings load."""

from __future__ import annotations

import io
import os
import stat
import tomllib
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.commands.setup_flow import Candidate, kind_named, save
from swebash_ai.config.edit import add_rule, read_config, render_profile_edit, save_profile, write_config
from swebash_ai.config.settings import load_settings
from swebash_ai.errors import ConfigError

KEY = "sk-ring-0123456789abcdef"


def test_an_existing_profile_gets_new_values_and_keeps_the_rest() -> None:
    text = ('profile = "old"  # chosen by hand\n\n[profiles.old]\nmodel = "a"\n\n[profiles.mine]\n'
            'theme = "light"  # mine\napi_key = "sk-stale"\nmodel = "openai/b"\n')
    out = render_profile_edit(text, "mine", {"model": "openai/c", "api_base": "http://h/v1"})
    assert out.splitlines()[0] == 'profile = "mine"'
    assert 'theme = "light"  # mine' in out and "sk-stale" not in out and 'model = "openai/b"' not in out
    data = tomllib.loads(out)
    assert data["profiles"]["mine"] == {"model": "openai/c", "api_base": "http://h/v1", "theme": "light"}
    assert data["profiles"]["old"] == {"model": "a"}


@pytest.mark.parametrize("text", [
    '[profiles]\nmine = { model = "x" }\n',  # the profile as an inline table: cannot be edited by lines
    'x = """\n[profiles.mine]\n"""\n',  # a header inside a string: the edit would land in it
])
def test_a_layout_the_edit_cannot_follow_is_refused(text: str) -> None:
    with pytest.raises(ConfigError, match=r"Cannot add \[profiles.mine\]"):
        render_profile_edit(text, "mine", {"model": "openai/c"})


def test_values_are_escaped_as_toml_strings() -> None:
    tricky = 'a"b\\c\n\u00e9\U0001f600'
    out = render_profile_edit("", "p", {"model": tricky})
    assert tomllib.loads(out)["profiles"]["p"]["model"] == tricky


def test_a_new_file_is_0600_in_a_0700_folder(tmp_path: Path) -> None:
    path = tmp_path / "new" / "config.toml"
    save_profile(path, "p", {"model": "openai/x"})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert not [p for p in path.parent.iterdir() if p.name != "config.toml"]  # no temporary file left


@pytest.mark.parametrize(("before", "after"), [
    (0o644, 0o600),  # readable by others: narrowed to the owner (it may hold a key now)
    (0o600, 0o600),
    (0o400, 0o400),  # read-only for its owner: stays so, never widened to 0600
])
def test_an_existing_mode_is_never_widened(tmp_path: Path, before: int, after: int) -> None:
    path = tmp_path / "config.toml"
    path.write_text("# mine\n")
    os.chmod(path, before)
    save_profile(path, "p", {"model": "openai/x", "api_key": "k"})
    assert stat.S_IMODE(path.stat().st_mode) == after
    assert path.read_text().startswith("# mine\n")


keyring = pytest.importorskip("keyring")


class FakeKeyring(keyring.backend.KeyringBackend):  # type: ignore[misc,name-defined]
    """An in-memory backend, as keyring's API lets a program install one."""

    priority = 1

    def __init__(self) -> None:
        super().__init__()
        self.saved: dict[tuple[str, str], str] = {}

    def set_password(self, service: str, username: str, password: str) -> None:
        self.saved[(service, username)] = password

    def get_password(self, service: str, username: str) -> str | None:
        return self.saved.get((service, username))

    def delete_password(self, service: str, username: str) -> None:
        self.saved.pop((service, username), None)


@pytest.fixture
def fake_ring() -> Any:
    before = keyring.get_keyring()
    ring = FakeKeyring()
    keyring.set_keyring(ring)
    yield ring
    keyring.set_keyring(before)


def test_the_key_goes_to_the_keyring_and_is_read_back_when_settings_load(fake_ring: Any) -> None:
    from swebash_ai.commands.config_show import print_config

    candidate = Candidate(kind_named("openai"), "http://127.0.0.1:9/v1", KEY, "gpt-4.1-mini")
    path = load_settings().config_file
    saved = save(candidate, "work", path)
    assert saved.key_place == "keyring" and "OS keyring" in saved.summary()
    assert fake_ring.saved == {("swebash-ai", "work"): KEY}
    text = path.read_text()
    assert KEY not in text and 'api_key_source = "keyring"' in text
    loaded = load_settings()
    assert loaded.profile == "work" and loaded.settings.api_key is not None
    assert loaded.settings.api_key.get_secret_value() == KEY and loaded.origins["api_key"] == "keyring"
    out = io.StringIO()
    print_config(loaded, out)
    assert KEY not in out.getvalue() and "key ****cdef from OS keyring" in out.getvalue()


def test_a_key_missing_from_the_keyring_is_a_clear_config_error(fake_ring: Any) -> None:
    candidate = Candidate(kind_named("openai"), "http://127.0.0.1:9/v1", KEY, "gpt-4.1-mini")
    save(candidate, "work", load_settings().config_file)
    fake_ring.saved.clear()
    with pytest.raises(ConfigError, match=r"\[profiles.work\] is in the OS keyring, but the keyring holds no key"):
        load_settings()


def test_without_a_usable_backend_the_key_goes_to_the_file() -> None:
    # The tests' default backend is keyring's "fail" one (see conftest): not usable.
    candidate = Candidate(kind_named("openai"), "http://127.0.0.1:9/v1", KEY, "gpt-4.1-mini")
    saved = save(candidate, "work", load_settings().config_file)
    assert saved.key_place == "file" and f'api_key = "{KEY}"' in saved.path.read_text()
    assert load_settings().settings.api_key.get_secret_value() == KEY  # type: ignore[union-attr]


def test_the_command_line_names_every_kind_of_the_setup() -> None:
    from swebash_ai.commands.setup_flow import KINDS
    from swebash_ai.frontends.cli import SETUP_PROVIDERS

    assert tuple(k.id for k in KINDS) == SETUP_PROVIDERS


def test_a_provider_choice_never_shows_its_key_in_a_repr() -> None:
    from swebash_ai.providers import ProviderChoice

    choice = ProviderChoice("openai/gpt-4.1", None, "sk-proj-secret-value-123", "test")
    assert "sk-proj-secret-value-123" not in repr(choice) and "openai/gpt-4.1" in repr(choice)


@pytest.mark.parametrize(("before", "secret", "after"), [
    (None, False, 0o600), (None, True, 0o600),  # a new file is private either way
    (0o644, False, 0o644),  # a rule or a trust: the user's mode kept
    (0o755, False, 0o644),  # but never an execute bit
    (0o644, True, 0o600),  # a profile may hold a key: the owner's bits only
    (0o440, True, 0o400),  # narrowed, never widened to 0600
])
def test_the_one_writer_keeps_or_narrows_the_mode(tmp_path: Path, before: int | None, secret: bool,
                                                  after: int) -> None:
    path = tmp_path / "config.toml"
    if before is not None:
        path.write_text("# mine\n")
        os.chmod(path, before)
    write_config(path, 'theme = "light"\n', secret=secret)
    assert stat.S_IMODE(path.stat().st_mode) == after
    assert path.read_text() == 'theme = "light"\n'


def test_a_linked_config_file_is_changed_and_the_link_kept(tmp_path: Path) -> None:
    """Dotfiles managers link the config file: a profile or a rule changes the file, not the link."""
    real = tmp_path / "dotfiles" / "config.toml"
    real.parent.mkdir()
    real.write_text("# mine\n")
    link = tmp_path / "config.toml"
    link.symlink_to(real)
    save_profile(link, "p", {"model": "openai/x"})
    add_rule(link, {"prefix": ["ls"], "decision": "allow"})
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert tomllib.loads(real.read_text())["profiles"]["p"] == {"model": "openai/x"}
    assert read_config(link) == (real, real.read_text())


def test_an_unreadable_config_file_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b"\xff\xfe not utf-8")
    with pytest.raises(ConfigError, match="cannot read the config file"):
        save_profile(path, "p", {"model": "openai/x"})
    assert path.read_bytes() == b"\xff\xfe not utf-8"
