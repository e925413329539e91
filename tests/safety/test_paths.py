"""Path policy: resolution, protected paths, workspace boundaries, safe open.

Every test uses a temporary HOME (``home``) with a workspace inside it (``ws = home/proj``, the usual
layout) and a sibling directory outside both (``tmp/outside``); the real home is never touched.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from swebash_ai.safety import paths as paths_mod
from swebash_ai.safety.paths import PathPolicy, PathRefused, is_binary, open_for_read

SECRET = "access to this path is not allowed (protected: credentials/secrets)"


@dataclass
class Env:
    tmp: Path
    home: Path
    ws: Path
    outside: Path
    policy: PathPolicy


def _build(base: Path) -> Env:
    tmp = Path(os.path.realpath(base))
    home = tmp / "home"
    ws = home / "proj"
    outside = tmp / "outside"
    for d in (home / ".ssh", home / ".aws", home / ".config" / "gh", ws / "src", ws / ".git", outside):
        d.mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY")
    (home / ".ssh" / "config").write_text("Host x")
    (home / ".aws" / "credentials").write_text("[default]")
    (home / ".bash_history").write_text("export TOKEN=x")
    (home / "app.toml").write_text("api_key = 'x'")
    (ws / "README.md").write_text("hello\n")
    (ws / "src" / "main.py").write_text("print(1)\n")
    (ws / ".env").write_text("KEY=1\n")
    (ws / ".env.example").write_text("KEY=\n")
    (ws / "id_rsa").write_text("key")
    (ws / "id_rsa.pub").write_text("ssh-rsa AAAA")
    (ws / "id_utils.py").write_text("x = 1\n")
    (outside / "notes.txt").write_text("outside\n")
    policy = PathPolicy(roots=[ws], home=home, protected_files=[home / "app.toml"], extra_deny=["*.sqlite"])
    return Env(tmp, home, ws, outside, policy)


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    """A fresh layout per test (for tests that change files); HOME and cwd point into it."""
    e = _build(tmp_path)
    monkeypatch.setenv("HOME", str(e.home))
    monkeypatch.chdir(e.ws)
    return e


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Env:
    """One layout for the read-only table tests (they never change files; home= is passed explicitly)."""
    return _build(tmp_path_factory.mktemp("layout"))


# (path, op, expected decision, substring expected in the reasons or the rule)
CHECK_CASES = [
    ("README.md", "read", "allow", "path.workspace"),  # why: a plain workspace file is readable
    ("src/main.py", "read", "allow", "path.workspace"),  # why: nested workspace file
    (".", "list", "allow", "path.workspace"),  # why: the workspace root itself is inside
    ("src/../README.md", "read", "allow", "path.workspace"),  # why: .. that stays inside is fine
    ("../../outside/notes.txt", "read", "ask", "outside the workspace:"),  # why: .. escaping the workspace
    ("/etc/hosts", "read", "ask", "outside the workspace: /etc/hosts"),  # why: outside asks and names it
    ("~", "list", "ask", "outside the workspace:"),  # why: home is outside the workspace (it contains it)
    ("~/.ssh/id_rsa", "read", "deny", SECRET),  # why: ssh private key
    ("~/.ssh", "list", "deny", SECRET),  # why: listing into ~/.ssh is denied too
    ("~/.SSH/config", "read", "deny", SECRET),  # why: names compared case-insensitively
    ("~/.aws/credentials", "read", "deny", SECRET),  # why: cloud credentials
    ("~/.config/gh/hosts.yml", "read", "deny", SECRET),  # why: gh token file
    ("~/.bash_history", "read", "deny", SECRET),  # why: shell histories hold secrets typed on the CLI
    ("~/.netrc", "exists", "deny", SECRET),  # why: denied even when missing
    ("~/app.toml", "read", "deny", "assistant's own configuration"),  # why: protected_files (API keys)
    (".env", "read", "deny", SECRET),  # why: dotenv holds secrets
    (".env.local", "read", "deny", SECRET),  # why: .env.* variants too
    (".ENV", "read", "deny", SECRET),  # why: case-insensitive names
    (".env.example", "read", "allow", "path.workspace"),  # why: example dotenv has no secrets
    (".env.sample", "read", "allow", "path.workspace"),  # why: sample dotenv (missing file, still allowed)
    ("id_rsa", "read", "deny", SECRET),  # why: private key by name, anywhere
    ("id_rsa.pub", "read", "allow", "path.workspace"),  # why: public keys are fine
    ("id_utils.py", "read", "allow", "path.workspace"),  # why: id_* only for names without a dot
    ("certs/server.key", "read", "deny", SECRET),  # why: *.key private key by name
    ("certs/server.PEM", "read", "deny", SECRET),  # why: *.pem, case-insensitive
    ("sub/.git-credentials", "read", "deny", SECRET),  # why: .git-credentials anywhere
    ("sub/.pgpass", "read", "deny", SECRET),  # why: postgres password file anywhere
    ("data/db.sqlite", "read", "deny", "denied by configuration"),  # why: extra_deny glob
    ("/etc/shadow", "read", "deny", "system credentials"),  # why: password hashes
    ("/etc/sudoers.d/x", "read", "deny", "system credentials"),  # why: below a denied dir
    ("/proc/self/root/etc/shadow", "read", "deny", "system credentials"),  # why: judged as the /etc/shadow it is
    ("/proc/self/environ", "read", "deny", "/proc"),  # why: environment holds API keys
    ("/dev/stdin", "read", "deny", "/dev"),  # why: devices block or never end
    ("/dev/zero", "read", "deny", "/dev"),  # why: never ends
    ("/sys/class", "list", "deny", "/sys"),  # why: pseudo filesystem
    ("~bob/.ssh/id_rsa", "read", "deny", "'~user' expansion is not supported"),  # why: ~user refused
    ("$HOME/.ssh/id_rsa", "read", "deny", "shell variables are not expanded"),  # why: $VAR refused
    ("${HOME}/x", "read", "deny", "shell variables are not expanded"),  # why: ${VAR} refused
    ("file:///etc/passwd", "read", "deny", "URLs are not file paths"),  # why: URL refused
    ("http://example.com/x", "read", "deny", "URLs are not file paths"),  # why: URL refused
    ("a\x00b", "read", "deny", "NUL byte"),  # why: NUL truncates paths in C
    ("a\nb", "read", "deny", "control characters"),  # why: control chars confuse prompts and logs
    ("evil\u202etxt.sh", "read", "deny", "control characters"),  # why: bidi override disguises names
    ("", "read", "deny", "empty path"),  # why: nothing to check
    ("README.md", "write", "ask", "writes inside the workspace"),  # why: writes always need approval
    ("/tmp/x.txt", "write", "ask", "writes outside the workspace"),  # why: outside write asks, names it
    (".git/hooks/pre-commit", "write", "deny", "path.git_write"),  # why: hooks run code
    (".GIT/config", "write", "deny", "path.git_write"),  # why: case-insensitive .git
    (".git/config", "read", "allow", "path.workspace"),  # why: reading .git is fine
    ("README.md", "delete", "deny", "unknown path operation"),  # why: unknown ops are refused
]


@pytest.mark.parametrize(("path", "op", "decision", "needle"), CHECK_CASES)
def test_check_table(shared: Env, path: str, op: str, decision: str, needle: str) -> None:
    v = shared.policy.check(path, op, cwd=str(shared.ws))
    assert v.decision == decision, v
    assert needle in " ".join(v.reasons) + " " + v.rule, v


def test_component_comparison_not_prefix(env: Env) -> None:
    # why: /x/ws2 starts with /x/ws as a string but is not inside it
    sibling = env.home / "proj2"
    sibling.mkdir()
    (sibling / "a.txt").write_text("x")
    v = env.policy.check(str(sibling / "a.txt"), "read")
    assert v.decision == "ask"
    assert str(sibling / "a.txt") in v.reasons[0]


# (link name in the workspace, target relative to tmp, expected decision, needle)
SYMLINK_CASES = [
    ("to_outside", "outside/notes.txt", "ask", "outside the workspace"),  # why: inside->outside link
    ("to_ssh", "home/.ssh/id_rsa", "deny", SECRET),  # why: link to a secret is denied via the target
    ("to_sshdir", "home/.ssh", "deny", SECRET),  # why: link to a secret directory
    ("dangling", "outside/missing.txt", "ask", "outside the workspace"),  # why: dangling judged by target
    ("to_readme", "home/proj/README.md", "allow", "path.workspace"),  # why: link staying inside
]


@pytest.mark.parametrize(("name", "target", "decision", "needle"), SYMLINK_CASES)
def test_symlinks_from_workspace(env: Env, name: str, target: str, decision: str, needle: str) -> None:
    (env.ws / name).symlink_to(env.tmp / target)
    v = env.policy.check(name, "read")
    assert v.decision == decision, v
    assert needle in " ".join(v.reasons) + v.rule


def test_symlink_through_directory_to_secret(env: Env) -> None:
    # why: an intermediate directory link cannot launder ~/.ssh
    (env.ws / "cfg").symlink_to(env.home / ".ssh")
    assert env.policy.check("cfg/config", "read").decision == "deny"


def test_symlink_outside_pointing_inside(env: Env) -> None:
    # why: outside->inside: the OS opens the workspace file, so it is allowed
    link = env.outside / "back"
    link.symlink_to(env.ws / "README.md")
    assert env.policy.check(str(link), "read").decision == "allow"


def test_symlink_named_like_secret_to_harmless(env: Env) -> None:
    # why: deny rules apply to the path as written, not only the target
    (env.ws / "leak").mkdir()
    (env.ws / "leak" / ".env").symlink_to(env.ws / "README.md")
    assert env.policy.check("leak/.env", "read").decision == "deny"


def test_symlink_loop_does_not_hang(env: Env) -> None:
    # why: looping links must give a verdict, not raise or spin
    (env.ws / "loop_a").symlink_to(env.ws / "loop_b")
    (env.ws / "loop_b").symlink_to(env.ws / "loop_a")
    v = env.policy.check("loop_a", "read")
    assert v.decision == "deny" and v.rule == "path.unresolvable", v
    assert "ELOOP" in v.reasons[0]


def test_hard_link_to_protected_file(env: Env) -> None:
    # why: realpath cannot see hard links; (dev, inode) must match the protected key
    try:
        os.link(env.home / ".ssh" / "id_rsa", env.ws / "innocent.txt")
    except OSError:
        pytest.skip("hard links not supported here")
    v = env.policy.check("innocent.txt", "read")
    assert v.decision == "deny"
    assert v.reasons == [SECRET]


def test_hard_link_to_protected_app_config(env: Env) -> None:
    # why: protected_files are covered by the inode check too
    os.link(env.home / "app.toml", env.ws / "settings.txt")
    assert env.policy.check("settings.txt", "read").decision == "deny"


def test_hard_link_to_a_workspace_secret(env: Env) -> None:
    # why: a .env inside the project is protected by name; a second name for it must not be a way around that
    (env.ws / "sub").mkdir()
    (env.ws / "sub" / ".env").write_text("API_KEY=sk-secret\n")
    os.link(env.ws / "sub" / ".env", env.ws / "notes.txt")
    assert env.policy.check("notes.txt", "read").decision == "deny"


def test_plain_hard_link_between_harmless_files_is_allowed(env: Env) -> None:
    # why: nlink > 1 alone is not a reason to deny
    os.link(env.ws / "README.md", env.ws / "README2.md")
    assert env.policy.check("README2.md", "read").decision == "allow"


@pytest.mark.parametrize(
    ("existing", "missing", "op"),
    [
        ("~/.ssh/id_rsa", "~/.ssh/id_missing", "exists"),  # why: no existence oracle inside ~/.ssh
        ("~/.aws/credentials", "~/.aws/nothing", "metadata"),  # why: metadata answers the same
        (".env", ".env.production", "exists"),  # why: dotenv, existing vs missing
        ("~/.bash_history", "~/.zsh_history", "metadata"),  # why: histories
    ],
)
def test_denied_paths_are_not_an_existence_oracle(shared: Env, existing: str, missing: str, op: str) -> None:
    a = shared.policy.check(existing, op)
    b = shared.policy.check(missing, op)
    assert a.decision == b.decision == "deny"
    assert a.reasons == b.reasons == [SECRET]
    assert a.rule == b.rule


def test_resolve(env: Env) -> None:
    # why: only a leading ~ expands; relative to cwd; symlinks followed
    assert env.policy.resolve("~/x") == env.home / "x"
    assert env.policy.resolve("a/../b", cwd=str(env.outside)) == env.outside / "b"
    (env.ws / "l").symlink_to(env.outside)
    assert env.policy.resolve("l/notes.txt") == env.outside / "notes.txt"
    assert env.policy.resolve("x~y") == env.ws / "x~y"
    with pytest.raises(PathRefused, match="~user"):
        env.policy.resolve("~root/x")
    with pytest.raises(ValueError, match="variables"):
        env.policy.resolve("$HOME")


def test_module_check_defaults_to_cwd(env: Env) -> None:
    # why: public API roots at cwd; the real ~/.ssh (here the tmp HOME) is denied
    assert paths_mod.check("README.md", "read", cwd=str(env.ws)).decision == "allow"
    assert paths_mod.check("/etc/hosts", "read", cwd=str(env.ws)).decision == "ask"
    assert paths_mod.check("~/.ssh/id_rsa", "read").decision == "deny"


def test_roots_default_to_cwd(env: Env) -> None:
    # why: without roots the current directory is the workspace
    p = PathPolicy(home=env.home)
    assert p.roots == [env.ws]


# ---------------------------------------------------------------------------------------------- open


def test_open_for_read_regular_file(env: Env) -> None:
    # why: the happy path returns content and no truncation
    data, truncated = open_for_read(env.ws / "README.md", 100)
    assert (data, truncated) == (b"hello\n", False)


def test_open_for_read_truncates(env: Env) -> None:
    # why: at most max_size bytes, with the truncated flag
    data, truncated = open_for_read(env.ws / "README.md", 3)
    assert (data, truncated) == (b"hel", True)


def test_open_for_read_exact_size_not_truncated(env: Env) -> None:
    # why: a file of exactly max_size bytes is complete
    assert open_for_read(env.ws / "README.md", 6) == (b"hello\n", False)


def test_open_for_read_refuses_fifo_without_blocking(env: Env) -> None:
    # why: FIFOs block forever on open/read; O_NONBLOCK + fstat must refuse at once
    fifo = env.ws / "pipe"
    os.mkfifo(fifo)
    result: list[BaseException | None] = []

    def run() -> None:
        try:
            open_for_read(fifo, 10)
            result.append(None)
        except BaseException as e:
            result.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout=5)
    if t.is_alive():  # unblock the thread before failing
        with open(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK), "wb"):
            pass
        pytest.fail("open_for_read blocked on a FIFO")
    assert isinstance(result[0], PathRefused)
    assert "FIFO" in str(result[0])


def test_open_for_read_refuses_device() -> None:
    # why: /dev/zero never ends
    with pytest.raises(PathRefused, match="device"):
        open_for_read(Path("/dev/zero"), 10)


def test_open_for_read_refuses_directory(env: Env) -> None:
    # why: only regular files
    with pytest.raises(PathRefused, match="directory"):
        open_for_read(env.ws / "src", 10)


def test_open_for_read_refuses_final_symlink(env: Env) -> None:
    # why: O_NOFOLLOW: a link swapped in at the last component fails
    (env.ws / "link").symlink_to(env.ws / "README.md")
    with pytest.raises(OSError):
        open_for_read(env.ws / "link", 10)


@pytest.mark.skipif(not os.path.exists("/proc/self/fd"), reason="needs /proc")
def test_open_for_read_detects_swapped_directory(env: Env) -> None:
    # why: the checked path /ws/d/f was swapped for a link to elsewhere before the open
    (env.outside / "f").write_text("secret")
    (env.ws / "d").symlink_to(env.outside)
    with pytest.raises(PathRefused, match="changed between the check and the open"):
        open_for_read(env.ws / "d" / "f", 10)


@pytest.mark.parametrize(
    ("data", "binary"),
    [
        (b"hello\n", False),  # why: ascii text
        ("héllo ✓".encode(), False),  # why: valid UTF-8 multibyte
        ("abc✓".encode()[:-1], False),  # why: multibyte char cut at the end is tolerated
        (b"abc\x00def", True),  # why: NUL byte means binary
        (b"\xff\xfe\xfa text", True),  # why: invalid UTF-8 at the start
        (b"a" * 9000 + b"\x00", False),  # why: only the first 8 KiB are inspected
        (b"a" * 8191 + "✓".encode(), False),  # why: char cut by the 8 KiB sample boundary
        (b"", False),  # why: empty is text
    ],
    ids=["ascii", "utf8", "cut-char", "nul", "invalid", "nul-after-8k", "cut-at-8k", "empty"],
)
def test_is_binary(data: bytes, binary: bool) -> None:
    assert is_binary(data) is binary
