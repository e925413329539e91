"""Which sandbox backend works here: probed once per process, with what is missing when none does.

Contract:
    :func:`choose` returns a :class:`Choice`: the backend (``bwrap``, ``landlock``, ``seatbelt``) and its
    binary, or ``None`` with ``problem``, a sentence naming what is missing and how to get it. ``auto`` tries
    bubblewrap, then Landlock, on Linux; Seatbelt on macOS. A named backend is probed alone: when it does not
    work the answer is its problem, never another backend and never no sandbox.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import Literal

from swebash_ai.sandbox import bwrap, landlock, seatbelt

__all__ = ["BACKENDS", "Backend", "Choice", "choose"]

Backend = Literal["bwrap", "landlock", "seatbelt"]
BACKENDS: tuple[Backend, ...] = ("bwrap", "landlock", "seatbelt")


@dataclass(frozen=True)
class Choice:
    """The backend commands are confined with here, or why there is none."""

    backend: Backend | None
    binary: str = ""
    problem: str = ""
    limits: tuple[str, ...] = ()
    """What this backend cannot enforce of the policy (printed with the policy)."""

    @property
    def ok(self) -> bool:
        return self.backend is not None


def _probe_bwrap() -> Choice:
    path = bwrap.find()
    if path is None:
        return Choice(None, problem=f"bubblewrap (bwrap) is not installed: {bwrap.INSTALL_HINT}")
    true = shutil.which("true") or "/bin/true"
    argv = [path, "--unshare-all", "--cap-drop", "ALL", "--die-with-parent", "--ro-bind", "/", "/",
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", true]  # noqa: S108 - bwrap's own tmpfs
    try:
        res = subprocess.run(argv, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Choice(None, problem=f"bubblewrap ({path}) cannot run: {exc}")
    if res.returncode != 0:
        said = res.stderr.decode("utf-8", "replace").strip().splitlines()
        why = said[-1] if said else f"exit {res.returncode}"
        if not any(w in why for w in ("namespace", "not permitted", "Permission denied", "uid map")):
            return Choice(None, problem=f"bubblewrap ({path}) does not run here: {why}")
        return Choice(None, problem=f"bubblewrap ({path}) cannot create its namespaces here ({why}): user "
                      "namespaces are off or restricted (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu "
                      "24.04+ an AppArmor profile for bwrap; in a container, run it with --privileged or a "
                      "seccomp profile that allows clone(CLONE_NEWUSER))")
    return Choice("bwrap", path)


def _probe_landlock() -> Choice:
    version = landlock.abi()
    if version == 0:
        return Choice(None, problem="Landlock is not enabled in this kernel (Linux 5.13+ with lsm=landlock)")
    if version < landlock.MIN_ABI:
        return Choice(None, problem=f"this kernel's Landlock (ABI {version}) cannot close the network: it needs "
                      f"ABI {landlock.MIN_ABI} (Linux 6.7+)")
    return Choice("landlock", sys.executable, limits=landlock.LIMITS)


def _probe_seatbelt() -> Choice:
    import os

    if sys.platform != "darwin" or not os.access(seatbelt.SANDBOX_EXEC, os.X_OK):
        return Choice(None, problem=f"Seatbelt ({seatbelt.SANDBOX_EXEC}) is only on macOS")
    return Choice("seatbelt", seatbelt.SANDBOX_EXEC,
                  limits=("seatbelt: no proxy: sandbox_allow_hosts is reachable under bubblewrap only",))


@functools.cache
def choose(preferred: str = "auto") -> Choice:
    """The backend to use (``preferred``: ``auto`` or one of :data:`BACKENDS`); probed once per process."""
    probes = {"bwrap": _probe_bwrap, "landlock": _probe_landlock, "seatbelt": _probe_seatbelt}
    if preferred in probes:
        return probes[preferred]()
    order = ["seatbelt"] if sys.platform == "darwin" else ["bwrap", "landlock"] if sys.platform.startswith(
        "linux") else []
    problems = []
    for name in order:
        choice = probes[name]()
        if choice.ok:
            return choice
        problems.append(choice.problem)
    if not order:
        return Choice(None, problem=f"no sandbox backend exists for {sys.platform} (Linux: bubblewrap or "
                      "Landlock; macOS: Seatbelt)")
    return Choice(None, problem="; and ".join(problems))
