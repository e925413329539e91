"""Command policy, round 3: what a second red-team pass found, each class with its variants.

Each seed was found by running commands the classifier allowed in the sandbox harness
(:mod:`tests.safety.test_sandbox_harness`, where each one is also a named probe); here every class is crossed
with the ways a shell lets one write it (negation, chaining, subshells, groups, functions, shell wrappers),
so a fix that only matches one spelling fails.  The git classes need real repositories on disk and build
them in a temporary HOME; the real home is never used.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from swebash_ai.safety.commands import CommandPolicy
from swebash_ai.safety.paths import PathPolicy
from tests.safety.test_command_classes import _wrap


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = Path(os.path.realpath(tmp_path_factory.mktemp("round3")))
    ws = base / "home" / "proj"
    (ws / "src").mkdir(parents=True)
    (ws / "README.md").write_text("# readme\n")
    (ws / ".env").write_text("TOKEN=x\n")
    (base / "home" / ".netrc").write_text("machine x password y\n")
    return ws


def _policy(ws: Path) -> CommandPolicy:
    return CommandPolicy(PathPolicy(roots=[ws], home=ws.parent))


# -- [ a > b ]: the parser reads a comparison, bash a redirection ------------------------------------------

BRACKET_REDIRECTS = [
    v
    for seed in ("[ a > b ]", "[ a >> b ]", "[ -n x > out ]", "[ a = a -a b > out ]", "[ ! a > out ]",
                 "[ a >out ]", "[ x > /tmp/p ]", "[ a | touch ]", "[ -n a -o x | touch ]", "[ a || touch ]",
                 "[ a && touch README.md ]", "[ a & touch ]", "[ ! a | touch ]", "[ a << b ]", "[ a |& touch ]")
    for v in _wrap(seed)
]  # fmt: skip


@pytest.mark.parametrize("command", BRACKET_REDIRECTS)
def test_a_redirection_inside_single_brackets_asks(ws: Path, command: str) -> None:
    assert _policy(ws).assess(command, str(ws)).decision != "allow", command


def test_comparisons_in_double_brackets_and_input_redirects_stay_allowed(ws: Path) -> None:
    p = _policy(ws)
    for command in ("[ a = b -o c = d ]", "[ -n a ] && [ -e README.md ]", "[ -e README.md ] || echo no",
                    "[[ -n a && -e README.md ]]", "[[ -e README.md || -d src ]]", "[ ! -e x ]"):
        assert p.assess(command, str(ws)).decision == "allow", command
    assert p.assess("[[ a > b ]]", str(ws)).decision == "allow"  # [[ ]]: a string comparison
    assert p.assess("[ a < README.md ]", str(ws)).decision == "allow"  # reads README.md as stdin
    assert p.assess("[ a < .env ]", str(ws)).decision == "deny"


# -- jq: an option's value taken for an option -------------------------------------------------------------

JQ_OPTION_ORDER = [
    v
    for seed in ("jq -R -L --arg . .env x", "jq -R -L --arg . ../.netrc x", "jq -RL . ../.netrc",
                 "jq -nRL . ../.netrc", "jq -R -L --rawfile . ../.netrc x", "jq -R -L --argjson . .env x",
                 "jq -R --indent --arg . .env x")
    for v in _wrap(seed)
]  # fmt: skip


@pytest.mark.parametrize("command", JQ_OPTION_ORDER)
def test_jq_options_are_read_in_order(ws: Path, command: str) -> None:
    assert _policy(ws).assess(command, str(ws)).decision != "allow", command


def test_jq_library_directories_stay_allowed(ws: Path) -> None:
    p = _policy(ws)
    for command in ("jq -L lib . README.md", "jq -Llib . README.md", "jq -nr .", "jq --indent 2 . README.md"):
        assert p.assess(command, str(ws)).decision == "allow", command


# -- git -O ORDERFILE: a file git reads ---------------------------------------------------------------------

GIT_ORDERFILE = [
    v
    for seed in ("git log -p -O../.netrc -1", "git log -p -O ../.netrc", "git diff -O .env HEAD",
                 "git show -O.env HEAD", "git diff -R -O.env", "git diff -pO.env", "git stash show -O .env")
    for v in _wrap(seed)
]  # fmt: skip


@pytest.mark.parametrize("command", GIT_ORDERFILE)
def test_git_orderfile_is_a_path(ws: Path, command: str) -> None:
    assert _policy(ws).assess(command, str(ws)).decision != "allow", command


# -- a repository's own config, wherever git finds it -----------------------------------------------------

_GIT_ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x.invalid", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@x.invalid"}


def _repo(path: Path) -> Path:
    path.mkdir(parents=True)
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "x"]):
        subprocess.run(["git", *args], cwd=path, env=_GIT_ENV, check=True, capture_output=True)
    return path


READERS = ["git status", "git diff", "git log -p", "git show", "git blame README.md", "git log --alternate-refs"]


@pytest.mark.parametrize(
    ("where", "setting"),
    [
        ("config", "[diff]\n\texternal = touch /tmp/p"),
        ("config", "[core]\n\talternateRefsCommand = touch /tmp/p"),
        ("config", "[core]\n\tworktree = /"),
        ("config", "[blame]\n\tignoreRevsFile = /etc/shadow"),
        ("config.worktree", "[diff]\n\texternal = touch /tmp/p"),
        ("config.worktree", '[filter "x"]\n\tclean = touch /tmp/p'),
        ("config", "[alias]\n\tstatus = !touch /tmp/p\n\tlog = !touch /tmp/p\n\tdiff = !touch /tmp/p\n"
                   "\tshow = !touch /tmp/p\n\tblame = !touch /tmp/p"),
    ],
)
def test_settings_that_run_programs_make_git_readers_ask(tmp_path: Path, where: str, setting: str) -> None:
    ws = _repo(tmp_path / "proj")
    with open(ws / ".git" / where, "a", encoding="utf-8") as fh:
        fh.write(setting + "\n")
    p = _policy(ws)
    for command in READERS:
        assert p.assess(command, str(ws)).decision == "ask", (command, where, setting)


def test_a_bare_repository_in_the_workspace_is_judged_by_its_own_config(tmp_path: Path) -> None:
    ws = _repo(tmp_path / "proj")
    bare = ws / "vendor" / "lib.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(ws), str(bare)], env=_GIT_ENV, check=True)
    p = _policy(ws)
    assert p.assess("git -C vendor/lib.git log", str(ws)).decision == "allow"  # a harmless config
    with open(bare / "config", "a", encoding="utf-8") as fh:
        fh.write("[diff]\n\texternal = touch /tmp/p\n")
    for command in [*(f"git -C vendor/lib.git {r.removeprefix('git ')}" for r in READERS),
                    "cd vendor/lib.git && git diff", "git -C vendor/lib.git/refs diff"]:
        assert p.assess(command, str(ws)).decision == "ask", command
    assert p.assess("git status", str(ws)).decision == "allow"  # the outer repository is not that one


def test_credentials_in_the_users_git_config_make_config_listings_ask(tmp_path: Path) -> None:
    ws = _repo(tmp_path / "home" / "proj")
    subprocess.run(["git", "remote", "add", "origin", "https://github.com/x/y.git"], cwd=ws, env=_GIT_ENV, check=True)
    p = _policy(ws)
    listings = ["git remote -v", "git remote get-url origin", "git config --list", "git config --global -l",
                "git config --get-regexp url", "git -C . remote -v", "bash -c 'git remote -v'"]
    assert all(p.assess(c, str(ws)).decision == "allow" for c in listings)  # nothing secret yet
    for where in (ws.parent / ".gitconfig", ws.parent / ".config" / "git" / "config"):
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_text('[url "https://x-access-token:ghs_0123456789abcdef@github.com/"]\n\tinsteadOf = x\n')
        for command in listings:
            assert p.assess(command, str(ws)).decision == "ask", (where, command)
        assert p.assess("git log", str(ws)).decision == "allow"  # readers that print no config stay allowed
        where.unlink()


# -- version-dependent readings: gawk's SYMTAB, git reflog's subcommands -----------------------------------

VERSION_DEPENDENT = [
    v
    for seed in ("awk 'BEGIN { for (k in SYMTAB[\"ENV\" \"IRON\"]) print k }'",
                 "gawk 'BEGIN { SYMTAB[\"ARG\" \"V\"][1] = \".env\" } {print}' README.md",
                 "git reflog drop", "git reflog write HEAD 0 0 x", "git reflog frobnicate")
    for v in _wrap(seed)
]  # fmt: skip


@pytest.mark.parametrize("command", VERSION_DEPENDENT)
def test_what_a_newer_version_reads_differently_asks(ws: Path, command: str) -> None:
    assert _policy(ws).assess(command, str(ws)).decision != "allow", command


def test_reflog_readings_stay_allowed(ws: Path) -> None:
    p = _policy(ws)
    for command in ("git reflog", "git reflog show main", "git reflog list", "git reflog HEAD@{1}",
                    "git reflog -n 5", "git reflog show --oneline feature/x", "git reflog origin/main"):
        assert p.assess(command, str(ws)).decision == "allow", command


def test_ordinary_aliases_do_not_make_readers_ask(tmp_path: Path) -> None:
    ws = _repo(tmp_path / "proj")
    with open(ws / ".git" / "config", "a", encoding="utf-8") as fh:
        fh.write("[alias]\n\tlg = log --oneline\n\tst = status\n")
    assert _policy(ws).assess("git log", str(ws)).decision == "allow"


# -- $"...": bash drops the $, the parser keeps it ------------------------------------------------------------

TRANSLATED = [v for seed in ('cat $".env"', 'grep -c . $"../.netrc"', '[ -e $".env" ]', 'echo $"x"',
                             'git show $"HEAD:README.md"') for v in _wrap(seed)]  # fmt: skip


@pytest.mark.parametrize("command", TRANSLATED)
def test_translated_strings_ask(ws: Path, command: str) -> None:
    assert _policy(ws).assess(command, str(ws)).decision == "ask", command


def test_a_dollar_before_a_separate_string_is_only_a_dollar(ws: Path) -> None:
    assert _policy(ws).assess('echo $ "x"', str(ws)).decision == "allow"


def test_a_glob_after_git_c_asks(tmp_path: Path) -> None:
    """bash expands `git -C vendor/l*` to the bare repository; the DIR as written names no repository."""
    ws = _repo(tmp_path / "proj")
    bare = ws / "vendor" / "lib.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(ws), str(bare)], env=_GIT_ENV, check=True)
    with open(bare / "config", "a", encoding="utf-8") as fh:
        fh.write("[diff]\n\texternal = touch /tmp/p\n")
    p = _policy(ws)
    for seed in ("git -C vendor/l* diff", "git -C vendor/lib.gi? log -p", "git -C vendor -C [l]ib.git diff",
                 "git -C v*/lib.git show", "git -P -C vendor/* diff"):
        for command in _wrap(seed):
            assert p.assess(command, str(ws)).decision == "ask", command
    assert p.assess("git -C . log -- '*.py'", str(ws)).decision == "allow"


# -- an unquoted glob is replaced by file names wherever it stands -------------------------------------------


@pytest.fixture(scope="module")
def crafted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace whose file names a malicious clone chose."""
    ws = Path(os.path.realpath(tmp_path_factory.mktemp("crafted"))) / "proj"
    ws.mkdir()
    for name in ("README.md", "cat README.md; touch pwned", ".envrc", "{print > \"x\"} R", ".x", "a.py", "b.py"):
        (ws / name).write_text("x\n")
    return ws


GLOB_SHIFTS = [
    v
    for seed in ("bash -c cat\\ R*", "sh -c 'cat 'R*", "bash -c \"cat \"R*", "bash -lc cat\\ R?ADME*",
                 "grep .e* README.md", "rg .e* README.md", "awk \\{print*\\ R README.md", "find . -name *.py",
                 "tree -P *.py", "test -v *.py")
    for v in _wrap(seed)
]  # fmt: skip


@pytest.mark.parametrize("command", GLOB_SHIFTS)
def test_a_glob_that_matches_files_asks_where_it_is_not_a_path(crafted: Path, command: str) -> None:
    assert _policy(crafted).assess(command, str(crafted)).decision != "allow", command


def test_globs_that_expand_to_paths_or_text_stay_allowed(crafted: Path) -> None:
    p = _policy(crafted)
    for command in ("cat *.py", "grep -n x *.py", "echo *", "printf '%s\\n' *.py", "wc -l *.py", "ls -d *",
                    "head -n1 *.md", "[ -e *.md ]", "timeout 5 cat *.py", "find . -name '*.py'", "bash -c 'cat *.py'",
                    "grep x.* README.md"):
        assert p.assess(command, str(crafted)).decision == "allow", command


# -- listings that follow symlinks into a protected folder -------------------------------------------------


@pytest.fixture(scope="module")
def linked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = Path(os.path.realpath(tmp_path_factory.mktemp("linked"))) / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_work").write_text("key\n")
    ws = home / "proj"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("x\n")
    (ws / "keys").symlink_to("../.ssh")
    return ws


FOLLOWING_LISTINGS = [v for seed in ("ls -RL", "ls -R -L .", "ls --recursive --dereference", "du -aL", "du -L .",
                                     "tree -l", "find -L . -name 'id_*'", "find . -follow -type f")
                      for v in _wrap(seed)]  # fmt: skip


@pytest.mark.parametrize("command", FOLLOWING_LISTINGS)
def test_a_listing_that_follows_a_symlink_into_a_protected_folder_asks(linked: Path, command: str) -> None:
    p = CommandPolicy(PathPolicy(roots=[linked], home=linked.parent))
    assert p.assess("ls keys", str(linked)).decision == "deny"  # what the recursion would list
    assert p.assess(command, str(linked)).decision == "ask", command


def test_listings_that_do_not_follow_symlinks_stay_allowed(linked: Path) -> None:
    p = CommandPolicy(PathPolicy(roots=[linked], home=linked.parent))
    for command in ("ls -R", "ls -L", "ls -RL src", "du -a", "du -L src", "tree", "find . -name 'id_*'",
                    "find -L src", "ls -la"):
        assert p.assess(command, str(linked)).decision == "allow", command
