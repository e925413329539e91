"""Changing the user's config file: a rule saved or removed, a project trusted, a profile saved with its key.

Contract:
    The file is edited as text, not re-serialised: the standard library reads TOML but cannot write it, and a
    re-serialised file would lose the user's comments and layout. Each change reads the file
    (:func:`read_config`), changes its text (appending a table, cutting out the one table asked for, or
    rewriting the lines of the keys it owns), checks that the new text parses to exactly the intended change,
    and writes it (:func:`write_config`) atomically through :mod:`swebash_ai.storage.private_files` (a
    temporary file beside it, then a rename; missing folders 0700). On anything unexpected a
    :class:`ConfigError` says what and the file is left as it was. A symbolic link is followed: the file it
    points to is changed, the link stays.

    The mode rule is the writer's one parameter. A new file is always 0600. An existing file:

    * ``secret=False`` (a rule, a trust): keeps its mode (without execute bits), never widened;
    * ``secret=True`` (a profile, which may hold an API key): narrowed to the owner's bits it had (0644
      becomes 0600, 0400 stays 0400), never widened.
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
from swebash_ai.storage.private_files import FILE_MODE, make_dirs, replace_atomically

#: The keys a saved profile sets; an existing profile's other keys are left as they are.
OWNED_KEYS = ("model", "api_base", "api_key", "api_key_source")

PROFILE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
NEW_FILE_HEADER = "# swebash-ai settings: see docs/configuration.md (`swebash-ai config` shows what is in force).\n"

_HEADER = re.compile(r"^\s*\[")
_TOP_PROFILE = re.compile(r"^\s*profile\s*=")
_OWNED_LINE = re.compile(r"^\s*(" + "|".join(OWNED_KEYS) + r")\s*=")


# --- the one reader and the one writer ------------------------------------------------------------------
def read_config(path: Path, missing: str = "") -> tuple[Path, str]:
    """The file ``path`` leads to (a link followed) and its text; ``missing`` when there is no file yet.

    Raises:
        ConfigError: the file cannot be read (permissions, not UTF-8...).
    """
    target = Path(os.path.realpath(path))
    try:
        return target, target.read_text(encoding="utf-8")
    except FileNotFoundError:
        return target, missing
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the config file: {exc}") from None


def write_config(target: Path, text: str, *, secret: bool) -> None:
    """Replace ``target`` with ``text`` atomically; its mode follows the rule in the module docstring.

    Raises:
        ConfigError: the file cannot be written.
    """
    try:
        try:
            before = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            mode = FILE_MODE
        else:
            mode = before & (FILE_MODE if secret else 0o666)
        make_dirs(target.parent)
        replace_atomically(target, text.encode("utf-8"), mode)
    except OSError as exc:
        raise ConfigError(f"{target}: cannot write the config file: {exc.strerror or exc}") from None


def _read(path: Path) -> tuple[Path, str, dict[str, Any]]:
    target, text = read_config(path)
    try:
        return target, text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: cannot change the config file: {exc}") from None


def _write(target: Path, text: str) -> None:
    write_config(target, text, secret=False)


def _toml(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _table(header: str, body: Mapping[str, Any], comment: str = "") -> str:
    lines = [f"# {comment}"] if comment else []
    lines.append(f"[[{header}]]")
    lines += [f"{k} = {_toml(v)}" for k, v in body.items()]
    return "\n".join(lines) + "\n"


def _append(text: str, table: str) -> str:
    if text and not text.endswith("\n"):
        text += "\n"
    return text + ("\n" if text else "") + table


# --- rules and trust ---------------------------------------------------------------------------------------
def add_rule(path: Path, body: Mapping[str, Any], comment: str = "") -> int:
    """Append a ``[[rules]]`` table; returns its number among the file's top-level rules."""
    target, text, before = _read(path)
    new = _append(text, _table("rules", body, comment))
    after = _parse(new, path)
    if after.get("rules", [])[:-1] != before.get("rules", []) or after["rules"][-1] != dict(body):
        raise ConfigError(f"{path}: the rule could not be added safely (is 'rules' written inline?); add it by hand.")
    _write(target, new)
    return len(after["rules"])


def remove_rule(path: Path, origin: str, number: int) -> None:
    """Remove rule ``number`` (1-based) of ``origin`` (``config`` or ``profile.NAME``) from the file."""
    header = "rules" if origin == "config" else f"profiles.{origin.removeprefix('profile.')}.rules"
    target, text, before = _read(path)
    new = _cut_table(text, header, number)
    expected = _array(before, header)
    if new is None or not 1 <= number <= len(expected):
        raise ConfigError(f"{path}: cannot find [[{header}]] #{number} written as a table; edit the file by hand.")
    del expected[number - 1]
    if _array(_parse(new, path), header) != expected:
        raise ConfigError(f"{path}: [[{header}]] #{number} could not be removed safely; edit the file by hand.")
    _write(target, new)


def trust_project(path: Path, project_file: Path, sha256: str) -> None:
    """Record (or replace) the trust of ``project_file`` at this hash."""
    target, text, before = _read(path)
    old = before.get("trusted_projects", [])
    kept = [t for t in old if t.get("path") != str(project_file)]
    for n in range(len(old), 0, -1):  # cut the stale entries of this file, last first
        if old[n - 1].get("path") == str(project_file):
            cut = _cut_table(text, "trusted_projects", n)
            if cut is None:
                raise ConfigError(f"{path}: cannot update [[trusted_projects]]; edit the file by hand.")
            text = cut
    entry = {"path": str(project_file), "sha256": sha256}
    new = _append(text, _table("trusted_projects", entry))
    if _parse(new, path).get("trusted_projects") != [*kept, entry]:
        raise ConfigError(f"{path}: the trust could not be recorded safely; edit the file by hand.")
    _write(target, new)


def _parse(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: the change would break the file ({exc}); nothing was written.") from None


def _array(data: Mapping[str, Any], dotted: str) -> list[Any]:
    node: Any = data
    for part in dotted.split("."):
        node = node.get(part, {}) if isinstance(node, Mapping) else {}
    return list(node) if isinstance(node, list) else []


def _cut_table(text: str, header: str, number: int) -> str | None:
    """``text`` without the ``number``-th ``[[header]]`` table (its header line to the next header)."""
    lines = text.splitlines(keepends=True)
    wanted = re.compile(r"^\s*\[\[\s*" + re.escape(header).replace(r"\.", r"\s*\.\s*") + r"\s*\]\]\s*(#.*)?$")
    seen = 0
    for i, line in enumerate(lines):
        if wanted.match(line.rstrip("\n")):
            seen += 1
            if seen == number:
                end = next((j for j in range(i + 1, len(lines)) if _HEADER.match(lines[j])), len(lines))
                while end > i + 1 and lines[end - 1].lstrip().startswith("#"):
                    end -= 1  # a comment just above the next table belongs to it
                return "".join(lines[:i] + lines[end:])
    return None


# --- profiles (``swebash-ai setup`` and the app's setup screen) ---------------------------------------------
def check_profile_name(name: str) -> str:
    """``name`` when it can be a bare TOML key; raises ConfigError otherwise."""
    if not PROFILE_NAME.match(name):
        raise ConfigError(f"Profile name '{name}' is not allowed: use letters, digits, '-' and '_' (at most 64).")
    return name


def _table_lines(values: Mapping[str, str]) -> list[str]:
    return [f"{key} = {_toml(value)}\n" for key, value in values.items()]


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
    default_line = f"profile = {_toml(name)}\n"
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
    """Write ``[profiles.NAME]`` = ``values`` into the config file at ``path`` and make it the default: what
    setup proved to work. Only the lines of the keys in :data:`OWNED_KEYS` change.

    Raises:
        ConfigError: the file cannot be read, parsed, edited safely or written.
    """
    target, text = read_config(path, missing=NEW_FILE_HEADER)
    write_config(target, render_profile_edit(text, name, values), secret=True)  # it may hold a key now
