"""Themes are data files (TOML), validated; a bad one is reported, never fatal.

Built-in themes ship inside the package (``swebash_ai/frontends/tui/themes/*.toml``, copies of the repository's
top-level ``themes/``; a test keeps the two identical). User themes load from
``Locations.themes_dir`` (``~/.config/swebash-ai/themes`` by default) and may replace a built-in of the
same name. See docs/themes.md for the format.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textual.color import Color, ColorParseError
from textual.theme import Theme

BUILTIN_DIR = Path(__file__).parent / "themes"

#: Colour fields of :class:`textual.theme.Theme` a file may set (``primary`` is required).
COLOR_FIELDS = (
    "primary", "secondary", "accent", "warning", "error", "success",
    "foreground", "background", "surface", "panel", "boost",
)
OTHER_FIELDS = ("name", "dark", "luminosity_spread", "text_alpha", "variables")


class ThemeFileError(ValueError):
    """A theme file that cannot be used; the message names the file and the problem."""


@dataclass
class ThemeSet:
    """Themes found on disk, by name, and the files that failed (path, reason)."""

    themes: dict[str, Theme] = field(default_factory=dict)
    failed: list[tuple[Path, str]] = field(default_factory=list)


def _check_color(path: Path, key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ThemeFileError(f"{path.name}: '{key}' must be a colour string like \"#1A1B26\", not {value!r}")
    try:
        Color.parse(value)
    except ColorParseError:
        raise ThemeFileError(f"{path.name}: '{key}' = {value!r} is not a colour") from None
    return value


def parse_theme(data: dict[str, Any], path: Path) -> Theme:
    """Validate a parsed theme table and build the :class:`Theme`.

    Raises:
        ThemeFileError: an unknown key, a missing ``primary``, a value of the wrong type or a bad colour.
    """
    unknown = sorted(k for k in data if k not in COLOR_FIELDS and k not in OTHER_FIELDS)
    if unknown:
        allowed = ", ".join((*OTHER_FIELDS, *COLOR_FIELDS))
        keys = "key" if len(unknown) == 1 else "keys"
        raise ThemeFileError(f"{path.name}: unknown {keys} {', '.join(unknown)} (allowed: {allowed})")
    if "primary" not in data:
        raise ThemeFileError(f"{path.name}: 'primary' is required")
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not name.strip():
        raise ThemeFileError(f"{path.name}: 'name' must be a non-empty string")
    colors = {k: _check_color(path, k, data[k]) for k in COLOR_FIELDS if k in data}
    dark = data.get("dark", True)
    if not isinstance(dark, bool):
        raise ThemeFileError(f"{path.name}: 'dark' must be true or false")
    numbers: dict[str, float] = {}
    for key in ("luminosity_spread", "text_alpha"):
        if key in data:
            value = data[key]
            if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value <= 1:
                raise ThemeFileError(f"{path.name}: '{key}' must be a number between 0 and 1")
            numbers[key] = float(value)
    variables = data.get("variables", {})
    if not isinstance(variables, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in variables.items()
    ):
        raise ThemeFileError(f"{path.name}: [variables] must map names to strings")
    try:
        theme = Theme(
            name=name.strip(), dark=dark, variables=dict(variables), primary=colors["primary"],
            secondary=colors.get("secondary"), accent=colors.get("accent"), warning=colors.get("warning"),
            error=colors.get("error"), success=colors.get("success"), foreground=colors.get("foreground"),
            background=colors.get("background"), surface=colors.get("surface"), panel=colors.get("panel"),
            boost=colors.get("boost"), luminosity_spread=numbers.get("luminosity_spread", 0.15),
            text_alpha=numbers.get("text_alpha", 0.95),
        )
        theme.to_color_system()  # fail here, not when the theme is applied
    except Exception as exc:
        raise ThemeFileError(f"{path.name}: {exc}") from None
    return theme


def load_theme_file(path: Path) -> Theme:
    """Read and validate one theme file.

    Raises:
        ThemeFileError: unreadable, not TOML, or not a valid theme.
    """
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ThemeFileError(f"{path.name}: not valid TOML: {exc}") from None
    except OSError as exc:
        raise ThemeFileError(f"{path.name}: cannot read it: {exc.strerror}") from None
    return parse_theme(data, path)


def load_dir(folder: Path, into: ThemeSet) -> None:
    """Load every ``*.toml`` in ``folder`` (sorted by name) into ``into``; a missing folder is fine."""
    if not folder.is_dir():
        return
    for path in sorted(folder.glob("*.toml")):
        try:
            theme = load_theme_file(path)
        except ThemeFileError as exc:
            into.failed.append((path, str(exc)))
        else:
            into.themes[theme.name] = theme


def load_themes(user_dir: Path | None = None) -> ThemeSet:
    """The built-in themes, then the user's (which win on a name clash)."""
    found = ThemeSet()
    load_dir(BUILTIN_DIR, found)
    if user_dir is not None:
        load_dir(user_dir, found)
    return found
