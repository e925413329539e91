"""git's rules: which git commands are read-only, and what a repository's own config can make git run.

Separate from :mod:`command_rules` because git is a small world of its own: global options that change
the repository or the configuration (``-c``, ``-C``, ``--git-dir``), subcommands that only list
(``branch``/``tag`` without a name), options that write or run programs (``--output``, ``--ext-diff``), and
a per-repository config that can name programs git runs on "read-only" commands.
"""

from __future__ import annotations

import re
from pathlib import Path

from swebash_ai.safety.command_rules import ProgramCheck, _fs, _long_match

_GIT_SUBCOMMANDS: frozenset[str] = _fs("status log diff show branch rev-parse ls-files blame shortlog describe tag")
_GIT_FORBIDDEN_GLOBAL: tuple[str, ...] = (
    "-c",
    "--config-env",
    "--exec-path",
    "-C",
    "--git-dir",
    "--work-tree",
    "-p",
    "--paginate",
    "--namespace",
    "--super-prefix",
    "--list-cmds",
)
_GIT_FORBIDDEN_LONG: frozenset[str] = _fs(
    "--output --ext-diff --textconv --exec --no-index --open-files-in-pager --upload-pack --receive-pack "
    "--contents --revs-file --ignore-revs-file"
)
_GIT_BRANCH_LIST_FLAGS: frozenset[str] = _fs(
    "-a -r -l -v -vv --list --all --remotes --verbose --show-current --no-color --color "
    "--contains --no-contains --merged --no-merged --sort --points-at --format --column "
    "--no-column --omit-empty -i --ignore-case"
)


def check_git(args: list[str]) -> ProgramCheck:
    """The read-only git subcommands and options; everything else is a problem (so it asks)."""
    out = ProgramCheck()
    i = 0
    while i < len(args) and args[i].startswith("-"):
        a = args[i]
        name = a.partition("=")[0]
        if name in _GIT_FORBIDDEN_GLOBAL or (a.startswith("-c") and not a.startswith("--")):
            out.problems.append(
                f"git {a} changes configuration or the repository used (it can make git run arbitrary programs)"
            )
            return out
        if name not in (
            "--no-pager",
            "--no-optional-locks",
            "-P",
            "--literal-pathspecs",
            "--bare",
            "--no-replace-objects",
            "--glob-pathspecs",
            "--noglob-pathspecs",
        ):
            out.problems.append(f"git option {a} is not on the read-only list")
            return out
        i += 1
    if i >= len(args):
        out.problems.append("git without a subcommand")
        return out
    sub, rest = args[i], args[i + 1 :]
    if sub not in _GIT_SUBCOMMANDS:
        out.problems.append(
            f"git {sub} is not a read-only git command (read-only: {', '.join(sorted(_GIT_SUBCOMMANDS))})"
        )
        return out
    after_dashdash = False
    for a in rest:
        if a == "--":
            after_dashdash = True
            continue
        if after_dashdash:
            out.paths.append((a, "read"))
            continue
        if ":" in a and not a.startswith("-"):  # REV:path prints that file as committed (HEAD:.env)
            blob = a.partition(":")[2].removeprefix("./")
            if blob:
                out.paths.append((blob, "read"))
        name = a.partition("=")[0]
        if a.startswith("--") and _long_match(name, _GIT_FORBIDDEN_LONG):
            out.problems.append(f"git {sub} {name} writes files, reads other files or runs programs")
        if sub == "branch" and a.startswith("-") and name not in _GIT_BRANCH_LIST_FLAGS:
            out.problems.append(f"git branch {a} changes branches (only listing is auto-allowed)")
        if (
            sub == "tag"
            and a.startswith("-")
            and name not in ("-l", "--list", "-n", "--sort", "--contains", "--merged", "--no-merged", "--points-at")
        ):
            out.problems.append(f"git tag {a} changes tags (only listing is auto-allowed)")
    if sub in ("branch", "tag"):
        listing = any(a in ("-l", "--list") for a in rest)
        plain = [a for a in rest if not a.startswith("-")]
        if (
            plain
            and not listing
            and not any(
                a.startswith(("--contains", "--merged", "--no-merged", "--points-at", "--sort", "--format"))
                for a in rest
            )
        ):
            out.problems.append(f"git {sub} {' '.join(plain)} creates a {sub} (only listing is auto-allowed)")
    return out


_GIT_CONFIG_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"]*")?\s*\]')
_GIT_CONFIG_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=|$)")


def git_config_dangers(cwd: str) -> list[str]:
    """Settings in the repository's own config that make read-only git commands run programs.

    A cloned repository cannot ship ``.git/config``, but anything that wrote into it can: an external diff
    or textconv driver runs on ``git diff/show/log -p``, a clean filter on ``git diff`` and ``git status``,
    ``gpg.program`` on ``git log --show-signature`` (or ``log.showSignature``), and ``include`` pulls in
    config we do not follow. The user's own global config is trusted; the repository's is not. (The exec
    environment separately forces ``core.fsmonitor``, ``core.pager`` and ``core.hooksPath``.)
    """
    config = _git_config_file(Path(cwd))
    if config is None:
        return []
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return [f"cannot read the repository's git config {config}"]
    found: list[str] = []
    section = ""
    for line in text.splitlines():
        head = _GIT_CONFIG_SECTION.match(line)
        if head:
            section = head.group(1).lower()
            line = line[head.end() :]
        key_match = _GIT_CONFIG_KEY.match(line)
        if not key_match:
            continue
        key = key_match.group(1).lower()
        top = section.split(".")[0]
        if (
            (top == "diff" and key in ("external", "textconv", "command"))
            or (top == "filter" and key in ("clean", "smudge", "process"))
            or (top == "gpg" and key == "program")
            or top in ("include", "includeif")
        ):
            found.append(f"{top}.{key}" if top not in ("include", "includeif") else top)
    if not found:
        return []
    names = ", ".join(dict.fromkeys(found))
    return [f"this repository's git config ({config}) can make git run programs ({names})"]


def _git_config_file(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return dot_git / "config"
        if dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
            try:
                target = dot_git.read_text(encoding="utf-8").strip().removeprefix("gitdir:").strip()
            except OSError:
                return None
            gitdir = (folder / target).resolve()
            common = gitdir / "commondir"
            if common.is_file():
                try:
                    gitdir = (gitdir / common.read_text(encoding="utf-8").strip()).resolve()
                except OSError:
                    return None
            return gitdir / "config"
    return None


GIT_DANGERS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("push", ("--force", "-f", "--force-with-lease", "--mirror", "--delete"), "rewrites remote history"),
    ("push", (), "publishes commits to a remote"),
    ("reset", ("--hard", "--merge", "--keep"), "discards uncommitted changes"),
    ("clean", (), "deletes untracked files"),
    ("rebase", (), "rewrites history"),
    ("checkout", ("--", ".", "-f", "--force"), "discards uncommitted changes"),
    ("restore", (), "discards uncommitted changes"),
    ("branch", ("-D", "-d", "--delete", "-M", "-m"), "deletes or renames branches"),
    ("stash", ("drop", "clear"), "deletes stashed changes"),
    ("commit", (), "creates commits"),
    ("filter-branch", (), "rewrites history"),
)  # fmt: skip


def git_danger_reasons(args: list[str]) -> list[str]:
    """Why a git command that is not read-only needs asking (``git push --force`` rewrites remote history)."""
    reasons: list[str] = []
    sub = next((a for a in args if not a.startswith("-")), "")
    if any(a == "-c" or a.startswith("--config-env") for a in args):
        reasons.append("git -c can make git run arbitrary programs (core.pager, core.fsmonitor ...)")
    for gsub, flags, what in GIT_DANGERS:
        if sub == gsub and (not flags or any(f in args for f in flags)):
            reasons.append(f"git {sub} {what}")
            break
    return reasons
