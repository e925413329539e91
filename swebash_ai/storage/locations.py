"""Every path swebash-ai reads or writes on disk, in one place.

Defaults follow the XDG base directories. ``SWEBASH_AI_HOME`` moves everything (config file, sessions,
audit log, prompt history, user themes) under one directory: tests and portable installs use it.
``SWEBASH_AI_CONFIG`` points at a different config file only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

APP = "swebash-ai"


def _xdg(var: str, fallback: str) -> Path:
    value = os.environ.get(var, "")
    return Path(value) if value and Path(value).is_absolute() else Path.home() / fallback


@dataclass(frozen=True)
class Locations:
    """Resolved directories and files. Build with :func:`locations`; nothing is created until needed."""

    config_dir: Path
    data_dir: Path
    state_dir: Path
    config_file: Path

    @property
    def sessions_dir(self) -> Path:
        return self.data_dir / "sessions"

    @property
    def audit_log(self) -> Path:
        return self.state_dir / "audit.jsonl"

    @property
    def turns_log(self) -> Path:
        """One line per turn: model requests, tokens, rounds (``swebash-ai stats`` reads it with the audit log)."""
        return self.state_dir / "turns.jsonl"

    @property
    def prompt_history(self) -> Path:
        return self.state_dir / "prompt_history"

    @property
    def themes_dir(self) -> Path:
        return self.config_dir / "themes"


def locations(environ: dict[str, str] | None = None) -> Locations:
    """Where things live, from the environment (``os.environ`` by default)."""
    env = os.environ if environ is None else environ
    home = env.get("SWEBASH_AI_HOME", "")
    if home:
        base = Path(home).expanduser()
        config_dir = data_dir = state_dir = base
    else:
        config_dir = _xdg("XDG_CONFIG_HOME", ".config") / APP
        data_dir = _xdg("XDG_DATA_HOME", ".local/share") / APP
        state_dir = _xdg("XDG_STATE_HOME", ".local/state") / APP
    config_file = (
        Path(env["SWEBASH_AI_CONFIG"]).expanduser() if env.get("SWEBASH_AI_CONFIG") else (config_dir / "config.toml")
    )
    return Locations(config_dir, data_dir, state_dir, config_file)


def short_path(path: Path) -> str:
    """``path`` with the home directory shown as ``~``."""
    try:
        return "~/" + str(path.relative_to(Path.home())) if path != Path.home() else "~"
    except ValueError:
        return str(path)
