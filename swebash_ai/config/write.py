"""Writing a profile into the user's config file, keeping everything else in it (comments included).

``swebash-ai setup`` and the app's setup screen save what they proved to work as ``[profiles.NAME]`` and make
it the default (the top-level ``profile`` key). The file is edited as text, not re-serialised: the standard
library reads TOML but cannot write it, and a re-serialised file would lose the user's comments and layout.
Only the lines of the keys we own change; the result is parsed again and compared with what was meant, so a
layout the line editing cannot follow is refused with a clear error instead of being half-written.

The write is atomic (a temporary file beside it, then a rename) and private, like all of the app's own files
(:mod:`swebash_ai.storage.private_files`): a new file is 0600 in a 0700 folder; an existing file is narrowed to the
owner's bits it had (0644 becomes 0600, 0400 stays 0400), never widened.
"""

from __future__ import annotations

import json
import os
import re
import stat
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from swebash_ai.errors import ConfigError

#: The keys a saved profile sets; an existing profile's other keys are left as they are.
OWNED_KEYS = ("model", "api_base", "api_key", "api_key_source")

PROFILE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_HEADER = re.compile(r"^\s*\[")
_TOP_PROFILE = re.compile(r"^\s*profile\s*=")
_OWNED_LINE = re.compile(r"^\s*(" + "|".join(OWNED_KEYS) + r")\s*=")

NEW_FILE_HEADER = "# swebash-ai settings: see docs/configuration.md (`swebash-ai config` shows what is in force).\n"


def check_profile_name(name: str) -> str:
    """``name`` when it can be a bare TOML key; raises ConfigError otherwise."""
    if not PROFILE_NAME.match(name):
        raise ConfigError(f"Profile name '{name}' is not allowed: use letters, digits, '-' and '_' (at most 64).")
    return name


def _toml_string(value: str) -> str:
    # JSON string escapes are TOML basic-string escapes; ensure_ascii=False avoids surrogate pairs TOML refuses.
    return json.dumps(value, ensure_ascii=False)


def _table_lines(values: Mapping[str, str]) -> list[str]:
    return [f"{key} = {_toml_string(value)}\n" for key, value in values.items()]


def render_profile_edit(text: str, name: str, values: Mapping[str, str]) -> str:
    """``text`` (a config file's content) with ``[profiles.NAME]`` holding ``values`` and made the default.

    Raises:
        ConfigError: the file is not valid TOML, or its layout cannot be edited line by line safely.
    """
    check_profile_name(name)
    try:
        before = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"The config file is not valid TOML ({exc}); fix it before saving a profile.") from None
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    header_at = next((i for i, line in enumerate(lines) if _HEADER.match(line)), len(lines))
    # The default profile: replace the top-level key, else add it before the first table.
    top = next((i for i in range(header_at) if _TOP_PROFILE.match(lines[i])), None)
    default_line = f"profile = {_toml_string(name)}\n"
    if top is not None:
        lines[top] = default_line
    else:
        at = header_at
        while at > 0 and not lines[at - 1].strip():  # after the top-level keys, before the blank lines
            at -= 1
        lines[at:at] = [default_line] + (["\n"] if at == header_at < len(lines) else [])
    own = re.compile(r"^\s*\[\s*profiles\s*\.\s*" + re.escape(name) + r"\s*\]\s*(#.*)?$")
    start = next((i for i, line in enumerate(lines) if own.match(line.rstrip("\n"))), None)
    if start is None:
        if lines and lines[-1].strip():
            lines.append("\n")
        lines += [f"[profiles.{name}]\n", *_table_lines(values)]
    else:
        end = next((i for i in range(start + 1, len(lines)) if _HEADER.match(lines[i])), len(lines))
        kept = [line for line in lines[start + 1:end] if not _OWNED_LINE.match(line)]
        lines[start + 1:end] = _table_lines(values) + kept
    result = "".join(lines)
    _verify(before, result, name, values)
    return result


def _verify(before: dict[str, Any], result: str, name: str, values: Mapping[str, str]) -> None:
    """The edit changed exactly what was meant, or nothing is written."""
    try:
        after = tomllib.loads(result)
    except tomllib.TOMLDecodeError:
        after = None
    expected = dict(before)
    expected["profile"] = name
    profiles = dict(expected.get("profiles") or {})
    table = {k: v for k, v in dict(profiles.get(name) or {}).items() if k not in OWNED_KEYS}
    profiles[name] = {**values, **table}
    expected["profiles"] = profiles
    if after != expected:
        raise ConfigError(
            f"Cannot add [profiles.{name}] to the config file without disturbing it (an unusual layout).",
            hint=f"Add a [profiles.{name}] table with model, api_base and the key yourself, and profile = "
            f"\"{name}\" at the top; or save under another name with --profile.",
        )


def save_profile(path: Path, name: str, values: Mapping[str, str]) -> None:
    """Write ``[profiles.NAME]`` = ``values`` into the config file at ``path`` and make it the default.

    Raises:
        ConfigError: the file cannot be read, parsed, edited safely or written.
    """
    try:
        text = path.read_text(encoding="utf-8")
        mode: int | None = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        text, mode = NEW_FILE_HEADER, None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the config file: {exc}") from None
    new = render_profile_edit(text, name, values)
    # Never wider than before, and never wider than the owner's read and write (the private-file rule).
    mode = 0o600 if mode is None else mode & 0o600
    try:
        _write_private(path, new.encode("utf-8"), mode)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write the config file: {exc.strerror or exc}") from None


def _write_private(path: Path, data: bytes, mode: int) -> None:
    """Atomic, through the app's private-file helper (0600 from creation, folders 0700); then narrowed further
    when the file was narrower than that before (0400 stays read-only)."""
    from swebash_ai.storage.private_files import FILE_MODE, write_file

    write_file(path, data)
    if mode != FILE_MODE:
        os.chmod(path, mode & FILE_MODE)
