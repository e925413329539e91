"""The macOS backend: the policy as a Seatbelt profile for ``/usr/bin/sandbox-exec``.

Contract:
    :func:`profile` (pure) writes the profile text; :func:`render` gives
    ``sandbox-exec -p PROFILE -D TMPDIR=... ARGV``. In a Seatbelt profile the last matching rule wins. The
    profile denies by default and allows, each with why (:data:`ALLOWED`), what a build's processes need that is
    not a file or the network: starting and signalling their own processes, reading system settings, loading
    libraries, a terminal, shared memory, and a list of system services (:data:`MACH_SERVICES`: no other
    service can be reached, so none acts for the command outside). Then files: reading is allowed, writing
    denied, the writable roots and the temporary folders allowed,
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

__all__ = ["ALLOWED", "MACH_SERVICES", "SANDBOX_EXEC", "profile", "render"]

SANDBOX_EXEC = "/usr/bin/sandbox-exec"

ALLOWED: tuple[tuple[str, str], ...] = (
    ("(allow process-exec process-fork)", "a command runs programs, and they run others"),
    ("(allow process-info* (target same-sandbox))", "ps, job control: its own processes, not the user's others"),
    ("(allow signal (target same-sandbox))", "kill, Ctrl-C to a child: its own processes only"),
    ("(allow sysctl-read)", "CPU counts, the OS version, memory sizes that build tools read"),
    ("(allow user-preference-read)", "locale and format settings that programs read at start"),
    ("(allow file-map-executable)", "loading libraries (dyld maps every dylib executable)"),
    ("(allow file-ioctl)", "terminal modes, and tools that ask a file how big it is"),
    ("(allow pseudo-tty)", "programs that open a terminal of their own (script, expect)"),
    ("(allow ipc-posix-shm ipc-posix-sem)", "shared memory and semaphores (Python's multiprocessing, compilers)"),
    ("(allow system-socket (socket-domain AF_UNIX))", "socket pairs between a command's own processes"),
)
"""What the deny-default profile allows besides files and the network, each with why."""

MACH_SERVICES: tuple[tuple[str, str], ...] = (
    ("com.apple.system.opendirectoryd.libinfo", "user and group names (getpwuid: ls -l, whoami, git)"),
    ("com.apple.system.opendirectoryd.membership", "group membership checks"),
    ("com.apple.system.DirectoryService.libinfo_v1", "user names on older systems"),
    ("com.apple.bsd.dirhelper", "the per-user temporary and cache folders' names (confstr)"),
    ("com.apple.system.logger", "os_log and syslog from the command's programs"),
    ("com.apple.logd", "the unified log"),
    ("com.apple.system.notification_center", "notify_get_state: time zone and locale changes"),
    ("com.apple.cfprefsd.daemon", "system preferences, read"),
    ("com.apple.cfprefsd.agent", "the user's preferences, read (the write is refused: user-preference-write)"),
    ("com.apple.trustd.agent", "certificate checks (a proxied HTTPS download verifies the server)"),
    ("com.apple.SecurityServer", "the keychain's trust settings, for the same checks"),
    ("com.apple.coreservices.launchservicesd", "what kind of file a path is (open, mdls): no app is started"),
    ("com.apple.lsd.mapdb", "the same database, read"),
    ("com.apple.FontObjectsServer", "fonts, for tools that render text (docs, plots)"),
    ("com.apple.fonts", "the same, newer systems"),
)
"""The system services a confined command may look up (``mach-lookup``); every other is refused. Incomplete by
nature, like every list of names: a tool that needs another fails loudly (its lookup is denied) and runs
outside the sandbox on a person's answer; it never reaches a service that acts with the user's rights."""

_NETWORK_SERVICES = ("com.apple.SystemConfiguration.configd", "com.apple.SystemConfiguration.DNSConfiguration",
                     "com.apple.dnssd.service", "com.apple.networkd", "com.apple.nsurlsessiond")
"""Looked up only with the network open (``exec_sandbox_network``): names, proxies, DNS."""


def _quote(path: Path | str) -> str:
    text = str(path).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def profile(policy: SandboxPolicy) -> str:
    """The Seatbelt profile (SBPL) for ``policy``."""
    lines = ["(version 1)", "(deny default)"]
    lines += [rule for rule, _why in ALLOWED]
    services = [name for name, _why in MACH_SERVICES] + (list(_NETWORK_SERVICES) if policy.network == "full" else [])
    lines.append("(allow mach-lookup\n    " + "\n    ".join(f'(global-name "{n}")' for n in services) + ")")
    lines += ["(allow file-read*)", "(deny file-write*)"]
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
    if policy.network == "full":
        lines.append("(allow network*)")
    else:  # denied by default; said again so that no earlier allowance can open it (DNS's socket included)
        lines.append("(deny network*)")
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
