"""The macOS backend: the policy as a Seatbelt profile for ``/usr/bin/sandbox-exec``.

Contract:
    :func:`profile` (pure) writes the profile text; :func:`render` gives
    ``sandbox-exec -p PROFILE -D TMPDIR=... ARGV``. In a Seatbelt profile the last matching rule wins, so the
    profile allows by default, then denies every write, allows the writable roots and the temporary folders,
    denies writes again to the read-only paths, denies reading every home folder, volume, runtime and shared
    temporary folder but the view's entries there (``view.py``), denies reading and writing what is hidden, and
    denies the
    network (all of it, or nothing with ``exec_sandbox_network``). Paths are given resolved (``/private/tmp``,
    not ``/tmp``), as Seatbelt matches them.

``sandbox-exec`` is deprecated by Apple but ships with every macOS and is what other tools use (Codex, Claude
Code); this backend is tested as text here, not run.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from swebash_ai.sandbox.policy import SandboxPolicy

__all__ = ["SANDBOX_EXEC", "profile", "render"]

SANDBOX_EXEC = "/usr/bin/sandbox-exec"


def _quote(path: Path | str) -> str:
    text = str(path).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def profile(policy: SandboxPolicy) -> str:
    """The Seatbelt profile (SBPL) for ``policy``."""
    lines = ["(version 1)", "(allow default)", "(deny file-write*)"]
    allowed = [f"(subpath {_quote(p)})" for p in policy.writable]
    if policy.private_tmp:  # no private /tmp on macOS: the run's own folder (TMPDIR), and the devices
        allowed.append('(subpath (param "TMPDIR"))')
    allowed += [f'(literal "{d}")' for d in ("/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper")]
    lines.append("(allow file-write*\n    " + "\n    ".join(allowed) + ")")
    if policy.read_only:
        ro = [f"({'subpath' if p.is_dir() else 'literal'} {_quote(p)})" for p in policy.read_only]
        lines.append("(deny file-write*\n    " + "\n    ".join(ro) + ")")
    lines += _view(policy)
    if policy.hidden:
        hidden = [f"({'subpath' if h.kind == 'dir' else 'literal'} {_quote(h.path)})" for h in policy.hidden]
        lines.append("(deny file-read* file-write*\n    " + "\n    ".join(hidden) + ")")
    if policy.network != "full":
        lines.append("(deny network*)")  # DNS too: the mDNSResponder socket is network-outbound
    return "\n".join(lines) + "\n"


_PRIVATE = ("/Users", "/Volumes", "/private/var/run", "/private/tmp", "/private/var/folders")
"""What the view takes away on macOS: every user's home, mounted volumes, the runtime sockets and the shared
temporary folders (the run's own TMPDIR is given back)."""


def _view(policy: SandboxPolicy) -> list[str]:
    """The view as Seatbelt rules: reading the private places is denied, then the view's entries under them, the
    writable roots and the run's TMPDIR are allowed again, and the folders on the way to them may be looked up
    (metadata only: not listed)."""
    if policy.view is None:
        return []
    shown = [*policy.writable, *(v.path for v in policy.view)]
    shown = [p for p in shown if any(p.is_relative_to(top) for top in (*_PRIVATE, policy.home))]
    deny = [f"(subpath {_quote(p)})" for p in dict.fromkeys((*_PRIVATE, str(policy.home)))]
    out = ["(deny file-read*\n    " + "\n    ".join(deny) + ")"]
    allow = [f"(subpath {_quote(p)})" for p in shown] + ['(subpath (param "TMPDIR"))']
    out.append("(allow file-read*\n    " + "\n    ".join(allow) + ")")
    parents = sorted({str(a) for p in shown for a in p.parents})
    if parents:
        out.append("(allow file-read-metadata\n    " + "\n    ".join(f"(literal {_quote(a)})" for a in parents)
                   + ")")
    return out


def render(policy: SandboxPolicy, argv: Sequence[str], *, tmpdir: Path) -> list[str]:
    """The argv that runs ``argv`` under ``policy``; ``tmpdir`` is the run's own writable temporary folder."""
    # env: the command's TMPDIR is the folder the profile lets it write (macOS's own is per user, not writable)
    return [SANDBOX_EXEC, "-p", profile(policy), "-D", f"TMPDIR={tmpdir}", "/usr/bin/env", f"TMPDIR={tmpdir}", *argv]
