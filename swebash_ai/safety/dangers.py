"""What a command may do, for the question put to the user: the danger table and its explanations.

Contract:
    :func:`describe_dangers` and :func:`pipe_dangers` explain what a command may do (from
    :data:`DANGERS`, resolved targets of ``rm``/``mv``/``chmod``..., inner commands of
    ``bash -c``/``xargs``/``find -exec``/wrappers, to be judged too) and say when it is *severe* (the root,
    the home directory, a whole workspace). They choose how loud the question is; they never make
    anything ``allow``: that is the read-only allowlist's business (:mod:`swebash_ai.safety.command_rules`).

Pure: standard library and :mod:`swebash_ai.safety.paths` only; reads the file system (glob,
realpath) but never changes it.
"""

from __future__ import annotations

import glob as _glob
import os
import shlex
from pathlib import Path

from swebash_ai.safety.command_rules import FIND_FORBIDDEN
from swebash_ai.safety.git_rules import git_danger_reasons
from swebash_ai.safety.paths import PathPolicy
from swebash_ai.safety.programs import fs as _fs

__all__ = ["DANGERS", "INTERPRETERS", "SHELLS", "WRAPPERS", "describe_dangers", "pipe_dangers"]



def _pairs(text: str) -> dict[str, str]:
    """``"a=1 b=2"`` as a dict (keeps the tables compact)."""
    return dict(w.split("=", 1) for w in text.split())


# Programs whose danger is explained in the question to the user (never allowed automatically).
DANGERS: dict[str, str] = dict(
    entry.split(": ", 1)
    for entry in """
rm: deletes files | rmdir: deletes directories | shred: destroys file contents | unlink: deletes a file
mv: moves or overwrites files | cp: copies over files | dd: writes raw data to files or disks
tee: writes to files | truncate: empties files | ln: creates or replaces links
install: copies over files | sudo: runs a command as root | su: switches user
doas: runs a command as root | pkexec: runs a command as root | mkfs: formats a disk
fdisk: edits disk partitions | parted: edits disk partitions | mount: mounts file systems
umount: unmounts file systems | chmod: changes permissions | chown: changes file owners
chgrp: changes file groups | chattr: changes file attributes | curl: uses the network
wget: downloads from the network | ssh: connects to another machine | scp: copies files over the network
nc: opens network connections | ncat: opens network connections
rsync: copies and deletes files, possibly over the network
pip: installs packages (runs their install code) | pip3: installs packages (runs their code)
apt: installs system packages | apt-get: installs system packages | npm: runs package scripts
yarn: runs package scripts | pnpm: runs package scripts | brew: installs packages
cargo: builds and runs code | gem: installs packages | uv: installs packages | kill: kills processes
pkill: kills processes | killall: kills processes | shutdown: shuts the machine down
reboot: reboots the machine | poweroff: powers off | halt: halts the machine
systemctl: controls system services | crontab: edits scheduled jobs
env: runs a command with a changed environment (or prints the environment, which may hold API keys)
printenv: prints the environment, which may hold API keys
set: prints shell variables, which may hold API keys | export: changes the environment
eval: runs a string as a command | exec: replaces the shell with a command
source: runs a script in the shell | .: runs a script in the shell
command: runs a command bypassing checks | builtin: runs a shell builtin
xargs: runs a command for each input line | nohup: runs a command that outlives the session
time: runs a command | nice: runs a command | timeout: runs a command
setsid: runs a command outside the session | watch: runs a command repeatedly | less: is interactive
more: is interactive | vi: is interactive | vim: is interactive | nano: is interactive
emacs: is interactive | top: is interactive
""".strip()
    .replace("\n", " | ")
    .split(" | ")
)
SHELLS: frozenset[str] = _fs("sh bash zsh dash ksh fish busybox")
INTERPRETERS: dict[str, str] = _pairs(
    "python=-c python3=-c python2=-c perl=-e ruby=-e node=-e php=-r lua=-e deno=eval bun=-e osascript=-e"
)
# Programs that run the rest of their argv as a command (after their own options).
WRAPPERS: dict[str, str] = _pairs(
    "sudo=su doas= env=uSC nohup= time=fo nice=n timeout=sk command= exec=a builtin= "
    "xargs=adEeIiLlnPsd setsid= stdbuf=ioe ionice=cnp chroot= watch=nd strace=oepsu "
    "pkexec= unbuffer="
)



_TARGET_VERBS: dict[str, str] = {
    "rm": "deletes", "rmdir": "deletes", "unlink": "deletes", "shred": "destroys", "mv": "moves",
    "cp": "copies onto", "chmod": "changes permissions of", "chown": "changes the owner of",
    "chgrp": "changes the group of", "truncate": "truncates", "ln": "links",
}  # fmt: skip
_SKIP_FIRST = frozenset({"chmod", "chown", "chgrp"})
_VALUE_FLAGS: dict[str, str] = {"truncate": "sr", "cp": "S", "mv": "S", "chown": "", "ln": "S"}


def _is_catastrophic(p: str, paths: PathPolicy) -> str | None:
    q = Path(p)
    if q == Path("/"):
        return f"the root directory {q}"
    for home in (paths.home, paths.home_real):
        if q == home:
            return f"your home directory {q}"
        if home.is_relative_to(q):
            return f"{q}, which contains your home directory"
    for r in paths.roots:
        if q == r:
            return f"the whole workspace {q}"
        if r.is_relative_to(q):
            return f"{q}, which contains the workspace"
    return None


def _targets(prog: str, args: list[str], cwd: str, paths: PathPolicy) -> tuple[list[str], bool]:
    """What a file-changing command acts on, resolved, for the question put to the user; and whether that
    is a catastrophe (the root, the home directory, a whole workspace, or what contains them)."""
    operands: list[str] = []
    i, only = 0, False
    while i < len(args):
        a = args[i]
        i += 1
        if only or not a.startswith("-") or a == "-":
            operands.append(a)
        elif a == "--":
            only = True
        elif not a.startswith("--") and a[-1:] in _VALUE_FLAGS.get(prog, ""):
            i += 1
    if prog in _SKIP_FIRST and not any(a.startswith("--reference") for a in args):
        operands = operands[1:]
    if prog in ("cp", "ln"):  # the sources are only read: `cp /usr/bin/x ./x` changes ./x alone
        from swebash_ai.safety.persistence import written_words

        operands = written_words([prog, *args]) or []
    reasons: list[str] = []
    resolved: list[str] = []
    for o in operands:
        matches = _glob.glob(o, root_dir=cwd) if any(c in o for c in "*?[") else [o]
        for m in matches or [o]:
            try:
                resolved.append(str(paths.lexical(m, cwd)))
            except ValueError:
                reasons.append(f"{prog} acts on {m!r}, which cannot be resolved")
    if not resolved:
        return reasons, False
    verb = _TARGET_VERBS[prog]
    outside = [p for p in resolved if not paths.in_workspace(Path(os.path.realpath(p)))]
    noun = "path" if len(resolved) == 1 else "paths"
    text = f"{verb} {len(resolved)} {noun}"
    if outside:
        text += f", {len(outside)} outside the workspace: {', '.join(outside[:5])}"
    else:
        text += f" in the workspace: {', '.join(resolved[:5])}"
    reasons.append(text)
    severe = False
    for p in resolved:
        what = _is_catastrophic(p, paths)
        if what:
            severe = True
            reasons.insert(0, f"DANGER: {prog} {verb} {what}")
    return reasons, severe


def describe_dangers(prog: str, args: list[str], cwd: str, paths: PathPolicy) -> tuple[list[str], list[str], bool]:
    """(inner command strings to judge too, reasons naming what ``prog args`` may do, whether it is severe)."""
    reasons: list[str] = []
    severe = False
    inner: list[str] = []
    if prog in DANGERS:
        reasons.append(f"{prog} {DANGERS[prog]}")
    if prog.startswith("mkfs"):
        reasons.append(f"{prog} formats a disk (erases it)")
    if prog in _TARGET_VERBS:
        target_reasons, severe = _targets(prog, args, cwd, paths)
        reasons += target_reasons
    if prog == "dd":
        for a in args:
            if a.startswith("of="):
                dest = a[3:]
                kind = "the device" if dest.startswith("/dev/") else "the file"
                reasons.append(f"dd writes to {kind} {dest} (can destroy a disk or a file)")
    if prog == "find":
        for j, a in enumerate(args):
            if a in FIND_FORBIDDEN:
                reasons.append(f"find {a} {FIND_FORBIDDEN[a]}")
            if a in ("-exec", "-execdir", "-ok", "-okdir"):
                rest = args[j + 1 :]
                end = next((k for k, x in enumerate(rest) if x in (";", "+")), len(rest))
                inner.append(shlex.join(x for x in rest[:end] if x != "{}"))
    if prog in SHELLS:
        script = None
        for j, a in enumerate(args):
            if a.startswith("-") and not a.startswith("--") and "c" in a[1:]:
                script = args[j + 1] if j + 1 < len(args) else ""
                break
        if script is not None:
            reasons.append(f"{prog} -c runs a command string")
            inner.append(script)
        elif not [a for a in args if not a.startswith("-")]:
            reasons.append(f"{prog} runs shell commands from its input")
        else:
            reasons.append(f"{prog} runs a shell script")
    if prog in INTERPRETERS:
        flag = INTERPRETERS[prog]
        if any(a == flag or (a.startswith(flag) and len(flag) == 2) for a in args):
            reasons.append(f"{prog} {flag} runs inline code")
        else:
            reasons.append(f"{prog} runs code")
    if prog in WRAPPERS:
        takes, j = WRAPPERS[prog], 0
        while j < len(args) and (
            args[j].startswith("-") or (prog == "env" and "=" in args[j]) or (prog == "timeout" and j == 0)
        ):
            if args[j].startswith("-") and not args[j].startswith("--") and args[j][-1] in takes:
                j += 1
            j += 1
        if prog == "timeout" and j < len(args) and not args[j].startswith("-"):
            j += 1
        if j < len(args):
            inner.append(shlex.join(args[j:]))
        elif prog in ("env", "printenv"):
            reasons[:] = ["env prints the environment, which may hold API keys"]
    if prog == "eval" and args:
        inner.append(" ".join(args))
    if prog == "git":
        reasons += git_danger_reasons(args)
    return inner, reasons, severe


_NETWORK = frozenset({"curl", "wget", "nc", "ncat", "ssh"})


def pipe_dangers(argvs: list[list[str]]) -> list[str]:
    """Reasons for pipelines that feed text into a shell or interpreter (``curl ... | sh``)."""
    reasons: list[str] = []
    for k, argv in enumerate(argvs[1:], start=1):
        prog = os.path.basename(argv[0]) if argv else ""
        if prog in SHELLS or prog in INTERPRETERS:
            reasons.append(f"pipes text into {prog}: runs whatever the previous command prints")
            if any(os.path.basename(a[0]) in _NETWORK for a in argvs[:k] if a):
                reasons.insert(0, f"downloads and runs code from the network (... | {prog})")
    return reasons
