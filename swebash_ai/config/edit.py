"""Changing the user's config file: a rule saved from the approval dialog, a rule removed, a project trusted.

Contract:
    Each function reads the file, changes its text (appending a table, or cutting out the one table asked
    for, leaving comments and everything else as written), checks that the new text parses to exactly the
    intended change, and writes it atomically (a temporary file, then a rename). A new file is created
    private (0600); an existing file keeps its mode, never widened. A symbolic link is followed (the file
    it points to is changed, the link stays). On anything unexpected a :class:`ConfigError` says what and
    the file is left as it was.
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
from swebash_ai.storage.private_files import make_dirs, replace_atomically

_HEADER = re.compile(r"^\s*\[")


def _read(path: Path) -> tuple[Path, str, dict[str, Any]]:
    target = Path(os.path.realpath(path))
    try:
        text = target.read_text(encoding="utf-8") if target.exists() else ""
        return target, text, tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot change the config file: {exc}") from None


def _write(target: Path, text: str) -> None:
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode) & 0o666 if target.exists() else 0o600
        make_dirs(target.parent)
        replace_atomically(target, text.encode("utf-8"), mode)
    except OSError as exc:
        raise ConfigError(f"{target}: cannot write the config file: {exc.strerror or exc}") from None


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
