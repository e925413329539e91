"""read_unasked: the one guarded door for files the app reads without a tool call.

Layout: a temporary HOME holding credentials, the workspace inside it (``home/proj``); the real home is never
used. Each case builds one ``AGENTS.md`` in the workspace and reads it as the instruction loader does.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from swebash_ai.safety import paths as paths_mod
from swebash_ai.safety.paths import PathPolicy, PathRefused, open_for_read
from swebash_ai.safety.unasked import UnaskedRefusal, UnaskedText, read_unasked

SECRET = "CANARY-PRIVATE-KEY-6f1c"


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path, PathPolicy]:
    base = Path(os.path.realpath(tmp_path))
    home, ws = base / "home", base / "home" / "proj"
    (ws / "docs").mkdir(parents=True)
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{SECRET}\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text(f"[default]\naws_secret_access_key = {SECRET}\n")
    (home / ".bashrc").write_text(f"export OPENAI_API_KEY={SECRET}\n")  # not protected by name: only `within`
    (ws / "docs" / "agents.md").write_text("Run `make check`.\n")
    return home, ws, PathPolicy(roots=[ws], home=home)


def _fifo(home: Path, ws: Path) -> None:
    os.mkfifo(ws / "AGENTS.md")


def _big(home: Path, ws: Path) -> None:
    with open(ws / "AGENTS.md", "wb") as fh:  # sparse: 50 MB on paper, instant to make
        fh.write(SECRET.encode() + b"\n")
        fh.truncate(50 * 1024 * 1024)


# (how AGENTS.md is made, a word the refusal must hold)
REFUSED: list[tuple[str, Callable[[Path, Path], None], str]] = [
    # why: git stores absolute symlinks; a cloned repository can ship one
    ("absolute symlink", lambda h, w: (w / "AGENTS.md").symlink_to(h / ".ssh" / "id_rsa"), "credentials/secrets"),
    # why: the relative spelling of the same link
    ("relative symlink", lambda h, w: (w / "AGENTS.md").symlink_to("../.ssh/id_rsa"), "credentials/secrets"),
    # why: realpath cannot see a hard link; its (device, inode) gives it away
    ("hard link", lambda h, w: os.link(h / ".ssh" / "id_rsa", w / "AGENTS.md"), "credentials/secrets"),
    # why: a file the name rules do not know is still outside the repository
    ("symlink out of the repository", lambda h, w: (w / "AGENTS.md").symlink_to(h / ".bashrc"), "outside"),
    # why: a FIFO blocks a plain open forever
    ("FIFO", _fifo, "FIFO"),
    # why: a 50 MB file is not instructions; cutting it would send its start
    ("50 MB file", _big, "larger than 1.0 MiB"),
    # why: ELOOP: a path that cannot be resolved may lead anywhere
    ("symlink loop", lambda h, w: (w / "AGENTS.md").symlink_to("AGENTS.md"), "ELOOP"),
    # why: /dev is off limits (a device never ends)
    ("device", lambda h, w: (w / "AGENTS.md").symlink_to("/dev/zero"), "/proc, /sys and /dev"),
]


@pytest.mark.parametrize(("make", "word"), [(m, w) for _, m, w in REFUSED], ids=[n for n, _, _ in REFUSED])
def test_refused_with_a_reason(layout: tuple[Path, Path, PathPolicy], make: Callable[[Path, Path], None],
                               word: str) -> None:
    home, ws, policy = layout
    make(home, ws)
    started = time.monotonic()
    got = read_unasked(ws / "AGENTS.md", policy, within=[ws])
    assert time.monotonic() - started < 5  # the FIFO did not block
    assert isinstance(got, UnaskedRefusal) and got.guarded, got
    assert word in got.reason and "\n" not in got.reason
    assert SECRET not in got.reason


def test_symlink_names_where_it_leads(layout: tuple[Path, Path, PathPolicy]) -> None:
    home, ws, policy = layout
    (ws / "AGENTS.md").symlink_to(home / ".ssh" / "id_rsa")
    got = read_unasked(ws / "AGENTS.md", policy, within=[ws])
    assert isinstance(got, UnaskedRefusal)
    assert got.reason.endswith(f"it leads to {home / '.ssh' / 'id_rsa'}")


def test_in_workspace_symlink_to_an_ordinary_file_is_read(layout: tuple[Path, Path, PathPolicy]) -> None:
    _home, ws, policy = layout
    (ws / "AGENTS.md").symlink_to("docs/agents.md")
    got = read_unasked(ws / "AGENTS.md", policy, within=[ws])
    assert got == UnaskedText(ws / "AGENTS.md", ws / "docs" / "agents.md", "Run `make check`.\n")


def test_without_within_a_file_anywhere_the_policy_allows_is_read(layout: tuple[Path, Path, PathPolicy]) -> None:
    home, ws, policy = layout
    (home / "notes.md").write_text("personal notes")
    (ws / "AGENTS.md").symlink_to(home / "notes.md")
    assert isinstance(read_unasked(ws / "AGENTS.md", policy), UnaskedText)
    assert isinstance(read_unasked(ws / "AGENTS.md", policy, within=[ws]), UnaskedRefusal)


@pytest.mark.parametrize(
    ("content", "word"),
    [
        (b"\xff\xfe broken", "not UTF-8"),  # why: not text; harmless, so reported as unreadable
        (b"ok\x00then", "binary"),  # why: NUL bytes
    ],
)
def test_unreadable_is_not_a_guard_refusal(layout: tuple[Path, Path, PathPolicy], content: bytes, word: str) -> None:
    _home, ws, policy = layout
    (ws / "AGENTS.md").write_bytes(content)
    got = read_unasked(ws / "AGENTS.md", policy, within=[ws])
    assert isinstance(got, UnaskedRefusal) and not got.guarded and word in got.reason


def test_dangling_link_is_unreadable(layout: tuple[Path, Path, PathPolicy]) -> None:
    _home, ws, policy = layout
    (ws / "AGENTS.md").symlink_to("gone.md")
    got = read_unasked(ws / "AGENTS.md", policy, within=[ws])
    assert isinstance(got, UnaskedRefusal) and not got.guarded and "does not exist" in got.reason


def test_size_cap_is_whole_or_nothing(layout: tuple[Path, Path, PathPolicy]) -> None:
    _home, ws, policy = layout
    (ws / "AGENTS.md").write_text("x" * 2000)
    assert isinstance(read_unasked(ws / "AGENTS.md", policy, max_bytes=2000), UnaskedText)
    got = read_unasked(ws / "AGENTS.md", policy, max_bytes=1999)
    assert isinstance(got, UnaskedRefusal) and got.guarded and "fs_max_size" in got.reason


def test_protected_files_of_the_session_apply(layout: tuple[Path, Path, PathPolicy]) -> None:
    home, ws, _ = layout
    config = home / ".config" / "swebash-ai" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'api_key = "{SECRET}"\n')
    policy = PathPolicy(roots=[ws], home=home, protected_files=[config])
    (ws / "AGENTS.md").symlink_to(config)
    got = read_unasked(ws / "AGENTS.md", policy)
    assert isinstance(got, UnaskedRefusal) and "own configuration" in got.reason


def test_hard_link_renamed_in_after_the_check_is_caught_on_the_descriptor(
    layout: tuple[Path, Path, PathPolicy], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The path is judged, then a hard link to the key is renamed over it before the open: the descriptor's
    (device, inode) still matches the protected file."""
    home, ws, policy = layout
    target = ws / "AGENTS.md"
    target.write_text("harmless")
    real_open = paths_mod.open_for_read

    def swapped(path: Path, max_size: int, refuse: object = None) -> tuple[bytes, bool]:
        os.link(home / ".ssh" / "id_rsa", ws / "tmp-link")
        os.replace(ws / "tmp-link", target)
        return real_open(path, max_size, refuse)  # type: ignore[arg-type]

    monkeypatch.setattr("swebash_ai.safety.unasked.open_for_read", swapped)
    got = read_unasked(target, policy, within=[ws])
    assert isinstance(got, UnaskedRefusal) and got.guarded and "credentials/secrets" in got.reason


def test_open_for_read_refuse_hook(layout: tuple[Path, Path, PathPolicy]) -> None:
    _home, ws, _ = layout
    path = ws / "docs" / "agents.md"
    assert open_for_read(path, 100) == (b"Run `make check`.\n", False)
    with pytest.raises(PathRefused, match="no thanks"):
        open_for_read(path, 100, refuse=lambda st: "no thanks")

