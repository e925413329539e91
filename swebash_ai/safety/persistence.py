"""Persistence points: files whose content runs later, outside any question (shell start-up files, autostart
entries, crontabs, systemd user units, folders on ``PATH``, git's global config and hooks).

Contract:
    :func:`persistence_reason` says whether a path (as a tool or a command names it) lands on one, and why.
    A write there is floor: no rule, mode, hook or ``--yes`` allows it; a person answers each time. The path
    policy makes such a write a *severe* ask; the command policy does the same for a command that names one
    (any word, option value or redirection target) when it is not proven read-only, and for the programs
    that install such entries themselves (``crontab FILE``, ``systemctl --user enable``).

Why a list and not "outside the workspace": the workspace itself may be the home folder, and a PATH folder
inside the home folder is where a planted ``ls`` waits for the next shell.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = ["HOME_POINTS", "SYSTEM_POINTS", "persistence_program", "persistence_reason", "persistence_words",
           "written_words"]

#: Under the home folder: (relative path, what it is). A folder covers everything below it.
HOME_POINTS: tuple[tuple[str, str], ...] = (
    *((name, "a shell start-up file") for name in (
        ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".bashrc.d", ".zshrc", ".zshenv",
        ".zprofile", ".zlogin", ".zlogout", ".oh-my-zsh/custom", ".kshrc", ".mkshrc", ".cshrc", ".tcshrc",
        ".login", ".logout", ".config/fish", ".config/nushell", ".config/powershell", ".inputrc")),
    *((name, "a desktop session start-up file") for name in (
        ".xprofile", ".xinitrc", ".xsession", ".xsessionrc", ".pam_environment", ".config/environment.d",
        ".config/plasma-workspace/env")),
    (".config/autostart", "an autostart entry"),
    (".config/systemd", "a systemd user unit"),
    (".local/share/systemd", "a systemd user unit"),
    (".config/upstart", "an autostart entry"),
    ("Library/LaunchAgents", "a launchd agent (macOS autostart)"),
    (".local/lib", "Python's user site-packages (a .pth file there runs at every start of Python)"),
    (".gitconfig", "git's global config (it names programs git runs)"),
    (".config/git", "git's global config and hooks"),
    (".local/bin", "a folder on PATH"),
    ("bin", "a folder on PATH"),
    *((name, "an editor start-up file (it runs commands)") for name in (
        ".vimrc", ".vim/plugin", ".exrc", ".config/nvim", ".emacs", ".emacs.d/init.el", ".emacs.d/early-init.el")),
    (".ssh", "ssh's keys and configuration"),
)

#: System-wide: (absolute path, what it is).
SYSTEM_POINTS: tuple[tuple[str, str], ...] = (
    *((p, "a shell start-up file") for p in ("/etc/profile", "/etc/profile.d", "/etc/bash.bashrc", "/etc/bashrc",
                                            "/etc/zsh", "/etc/environment", "/etc/fish")),
    *((p, "a crontab") for p in ("/etc/crontab", "/etc/cron.d", "/etc/cron.hourly", "/etc/cron.daily",
                                "/etc/cron.weekly", "/etc/cron.monthly", "/var/spool/cron")),
    ("/etc/systemd", "a systemd unit"), ("/etc/xdg/autostart", "an autostart entry"),
    ("/etc/ld.so.preload", "a library every program loads"), ("/etc/sudoers", "sudo's rules"),
    ("/etc/sudoers.d", "sudo's rules"), ("/etc/gitconfig", "git's system config"),
)

_READONLY_CRONTAB = frozenset({"-l", "-V"})


def persistence_reason(path: str, cwd: str, home: str | None = None, workspace: str | None = None,
                       path_env: str | None = None) -> str | None:
    """Why a write to ``path`` (relative to ``cwd``; ``~`` is the home folder) is a persistence point, or ``None``.

    ``path_env`` is the ``PATH`` commands run with: every folder on it outside ``workspace`` counts."""
    home_dir = os.path.abspath(os.path.expanduser(home or "~"))
    text = path.strip()
    if not text or "\x00" in text:
        return None
    if text == "~" or text.startswith("~/"):
        text = home_dir + text[1:]
    full = os.path.normpath(os.path.join(cwd, text))
    candidates = {Path(full), _resolved(full)}
    for base, label in _points(home_dir, workspace, path_env):
        for candidate in candidates:
            if candidate == base or candidate.is_relative_to(base):
                shown = str(candidate).replace(home_dir, "~", 1) if candidate.is_relative_to(home_dir) else candidate
                return f"writes {label} ({shown}): what is written there runs later, unasked"
    return None


def persistence_words(words: Iterable[str], cwd: str, home: str | None = None, workspace: str | None = None,
                      path_env: str | None = None) -> str | None:
    """The first reason any of ``words`` (or the value of ``--opt=VALUE``) names a persistence point."""
    for word in words:
        for candidate in {word, word.split("=", 1)[1] if word.startswith("-") and "=" in word else word}:
            if candidate.startswith("-") or not candidate:
                continue
            reason = persistence_reason(candidate, cwd, home, workspace, path_env)
            if reason:
                return reason
    return None


_COPIERS = frozenset({"cp", "mv", "ln", "install"})
_COPIER_VALUES = frozenset({"-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group"})


def written_words(argv: Sequence[str]) -> list[str] | None:
    """For a program that copies, moves or links (``cp``, ``mv``, ``ln``, ``install``): the one word it writes
    (its last operand, its ``-t`` folder, or for ``ln TARGET`` alone the link it makes here); the others are
    only read, so ``cp /usr/bin/x ./x`` does not write a PATH folder. ``None`` for any other program."""
    name = os.path.basename(argv[0]) if argv else ""
    if name not in _COPIERS:
        return None
    args, operands, target, i, only = list(argv[1:]), [], None, 0, False
    while i < len(args):
        word = args[i]
        i += 1
        if only or not word.startswith("-") or word == "-":
            operands.append(word)
        elif word == "--":
            only = True
        elif word in ("-t", "--target-directory"):
            target = args[i] if i < len(args) else ""
            i += 1
        elif word.startswith("--target-directory="):
            target = word.partition("=")[2]
        elif word.startswith("-t") or (not word.startswith("--") and "t" in word[1:]):
            return list(args)  # -t in a cluster (-vt DIR): read no further, every word is checked
        elif word in _COPIER_VALUES:
            i += 1
    if target is not None:
        return [target]
    if name == "ln" and len(operands) == 1:
        return ["./" + os.path.basename(operands[0].rstrip("/"))]
    return operands[-1:]


def persistence_program(argv: Sequence[str]) -> str | None:
    """Programs that install an entry that runs later themselves, whatever their words name."""
    name = os.path.basename(argv[0]) if argv else ""
    args = list(argv[1:])
    if name == "crontab" and not (set(args) & _READONLY_CRONTAB):
        return "crontab installs a job that runs later, unasked"
    if name == "systemctl" and any(a in ("enable", "link", "edit", "preset", "add-wants", "add-requires", "revert")
                                   for a in args):
        return f"systemctl {next(a for a in args if not a.startswith('-'))} installs a unit that runs later, unasked"
    if name == "at" or name == "batch":
        return f"{name} schedules a command that runs later, unasked"
    if name == "git" and "config" in args and any(a in ("--global", "--system") for a in args) \
            and not any(a in ("--get", "--get-all", "--list", "-l", "--get-regexp") for a in args):
        return "git config --global changes what git runs in every repository"
    return None


def _points(home: str, workspace: str | None, path_env: str | None) -> tuple[tuple[Path, str], ...]:
    return _resolved_points(home, workspace, os.environ.get("PATH", "") if path_env is None else path_env)


@functools.lru_cache(maxsize=16)
def _resolved_points(home: str, workspace: str | None, path_env: str) -> tuple[tuple[Path, str], ...]:
    """Every point, as written and resolved: built once per home, workspace and PATH (each word of a command
    is checked against them)."""
    out: list[tuple[Path, str]] = []
    for rel, label in HOME_POINTS:
        base = Path(home) / rel
        out += [(base, label), (_resolved(str(base)), label)]
    for absolute, label in SYSTEM_POINTS:
        out += [(Path(absolute), label), (_resolved(absolute), label)]
    ws = _resolved(workspace) if workspace else None
    for folder in path_env.split(os.pathsep):
        if not folder or not os.path.isabs(folder):
            continue
        real = _resolved(folder)
        if ws is not None and (real.is_relative_to(ws) or ws.is_relative_to(real)):
            continue  # a project's own node_modules/.bin or .venv/bin: the workspace's business
        out += [(Path(os.path.normpath(folder)), "a folder on PATH"), (real, "a folder on PATH")]
    return tuple(out)


def _resolved(path: str) -> Path:
    """``realpath`` that never raises (a missing tail is kept as written)."""
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError):
        return Path(os.path.normpath(path))
