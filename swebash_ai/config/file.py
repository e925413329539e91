"""The config file and the profile, read with the standard library only.

:func:`swebash_ai.config.settings.load_settings` validates everything with pydantic, whose import costs tens of
milliseconds. The interactive app paints its first frame before that, from what this module can
tell cheaply: where things live, and the raw theme, model and profile, found with the same precedence as
the full load (flag > environment > profile > file). The full load follows right after the first frame.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swebash_ai.errors import ConfigError
from swebash_ai.storage.locations import Locations, locations

ENV_PREFIX = "SWEBASH_AI_"


@dataclass(frozen=True)
class ConfigFile:
    """The config file's top-level settings, its profiles, and the profile chosen for this run."""

    locations: Locations
    top: dict[str, Any] = field(default_factory=dict)
    profiles: dict[str, dict[str, Any]] = field(default_factory=dict)
    profile: str | None = None

    @property
    def path(self) -> Path:
        return self.locations.config_file

    @property
    def profile_table(self) -> dict[str, Any]:
        return dict(self.profiles[self.profile]) if self.profile else {}

    def raw(self, name: str, flags: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None) -> Any:
        """The unvalidated value of setting ``name``: flag > environment > profile > file, else ``None``."""
        if flags and flags.get(name) is not None:
            return flags[name]
        env = os.environ if environ is None else environ
        wanted = ENV_PREFIX + name.upper()
        for key, value in env.items():
            if key.upper() == wanted:
                return value
        table = self.profile_table
        return table[name] if name in table else self.top.get(name)


def read_config_file(profile: str | None = None, environ: Mapping[str, str] | None = None) -> ConfigFile:
    """Read the config file and choose the profile (``--profile``, else ``SWEBASH_AI_PROFILE``, else the file's
    ``profile`` key).

    Raises:
        ConfigError: the file is not valid TOML or cannot be read, or the chosen profile does not exist.
    """
    env = os.environ if environ is None else environ
    locs = locations(dict(env))
    path = locs.config_file
    top: dict[str, Any] = {}
    if path.exists():
        try:
            with path.open("rb") as fh:
                top = tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read the config file: {exc.strerror}") from exc
    profiles = top.pop("profiles", {})
    if not isinstance(profiles, dict) or not all(isinstance(t, dict) for t in profiles.values()):
        raise ConfigError(f"{path}: 'profiles' must be a table of [profiles.NAME] tables.")
    file_profile = top.pop("profile", None)
    chosen = profile or env.get(ENV_PREFIX + "PROFILE") or file_profile or None
    if chosen and chosen not in profiles:
        available = ", ".join(sorted(profiles)) or "none defined"
        raise ConfigError(
            f"Unknown profile '{chosen}' (profiles in {path}: {available}).",
            hint="Define it as a [profiles.NAME] table in the config file, or pick another with --profile.",
        )
    return ConfigFile(locs, top, profiles, str(chosen) if chosen else None)


@dataclass(frozen=True)
class StartInfo:
    """What the interactive app shows before the settings are validated."""

    locations: Locations
    theme: str
    model: str
    profile: str | None
    mode: str = "ask"
    """The approval mode (``approval_mode``), shown in the status bar from the first frame."""

    @classmethod
    def peek(
        cls,
        flags: Mapping[str, Any] | None = None,
        profile: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> StartInfo:
        """Raw values, cheaply (see the module docstring); raises ConfigError like :func:`read_config_file`."""
        config = read_config_file(profile, environ)
        theme = config.raw("theme", flags, environ)
        model = config.raw("model", flags, environ)
        mode = config.raw("approval_mode", flags, environ)
        return cls(config.locations, str(theme or "dark"), str(model or ""), config.profile, str(mode or "ask"))
