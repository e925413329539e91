"""Theme files: validated, a bad one reported with the file and the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from swebash_ai.frontends.tui.themes import ThemeFileError, load_theme_file, load_themes


def test_builtin_themes_load():
    found = load_themes()
    assert {"dark", "light", "high-contrast"} <= set(found.themes)
    assert found.failed == []
    assert found.themes["light"].dark is False


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("primary = '#123456'\nfoo = 1\n", "unknown key foo"),  # typo'd keys are not ignored
        ("name = 'x'\n", "'primary' is required"),  # textual cannot build a theme without it
        ("primary = 'reddish'\n", "is not a colour"),
        ("primary = 12\n", "must be a colour string"),
        ("primary = '#123456'\ndark = 'yes'\n", "'dark' must be true or false"),
        ("primary = '#123456'\ntext_alpha = 3\n", "between 0 and 1"),
        ("primary = '#123456'\n[variables]\nx = 1\n", "[variables] must map names to strings"),
        ("primary = = '#1'\n", "not valid TOML"),
        ("name = ''\nprimary = '#123456'\n", "'name' must be a non-empty string"),
    ],
)
def test_bad_theme_files_are_explained(tmp_path: Path, text: str, problem: str):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ThemeFileError, match=r"bad\.toml") as info:
        load_theme_file(path)
    assert problem in str(info.value)


def test_user_themes_override_and_bad_ones_are_listed(tmp_path: Path):
    (tmp_path / "dark.toml").write_text("name = 'dark'\nprimary = '#ff0000'\n")
    (tmp_path / "zzz.toml").write_text("nonsense")
    found = load_themes(tmp_path)
    assert found.themes["dark"].primary == "#ff0000"
    assert [p.name for p, _ in found.failed] == ["zzz.toml"]


def test_name_defaults_to_the_file_stem(tmp_path: Path):
    path = tmp_path / "ocean.toml"
    path.write_text("primary = '#0077be'\n")
    assert load_theme_file(path).name == "ocean"
