"""The per-run supervisor: a small program between swebash-ai and one command (Linux).

Contract:
    Run as ``python -I -S supervisor.py CMD_FD REPORT_FD GRACE ARGV...`` by ``tools/process.py`` (never
    imported by the package); without ARGV it is a warm spare, started ahead of time, that reads the
    command, its working directory and environment from CMD_FD (see :func:`_read_spec`). It makes itself
    a child subreaper (``PR_SET_CHILD_SUBREAPER``), starts ARGV in
    a process group of its own, and from then on every process the command starts stays a descendant of
    this one, whatever it does to its session, process group or environment: an orphan re-parents here,
    not to init. The run ends when the command exits, or when CMD_FD becomes readable (swebash-ai closes
    its end to stop the run, and a crashed swebash-ai closes it too). Then every descendant gets SIGTERM,
    a grace of GRACE seconds, and SIGKILL until none is left (a process forking while it is killed is
    found again at the next sweep: its children re-parent here). The report, written to REPORT_FD
    before exiting, is one line per fact:

        F                  PR_SET_CHILD_SUBREAPER failed: the descendants below are incomplete
        P <pid>            the command's process
        X <status>         the command's wait status (as os.waitpid gives it)
        S <pid> <cmdline>  a process that was running at the end and was stopped (at most _LIST lines)
        N <count>          how many were stopped in all
        L <pid> <cmdline>  a process still running after the sweep: it could not be stopped
        D                  the report is complete

Why a separate program: orphans re-parent to the nearest subreaper, so a subreaper per run knows exactly
which processes are this run's (swebash-ai's other children, other runs and MCP servers, are never candidates;
an MCP stdio server is a run of its own, under its own supervisor),
and it works the same for a command that runs to completion and for one that runs in the background.
Start-up is kept small (about 10 ms): only built-in modules and ctypes, no ``signal``/``json`` imports.
"""

# The built-in behind ``signal`` (importing ``signal`` costs ~6 ms of enum set-up); no contextlib either.
import _signal  # type: ignore[import-not-found]
import os
import sys
import time

_LIST = 50  # processes named per kind in the report; the count says the rest
_KILL_ROUNDS_FOR = 2.0  # seconds of SIGKILL sweeps before what is left is reported as a survivor
_SIGNALS = (1, 2, 3, 13, 15, 25)  # HUP INT QUIT PIPE TERM XFSZ: ours ignored, the command's restored


def _subreaper() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        return bool(ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _children(pid: int) -> list[int]:
    """Direct children of ``pid`` (every thread's), from ``/proc/PID/task/*/children``."""
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                out += [int(x) for x in f.read().split()]
        except OSError:
            continue
    return out


def _state(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
        return data[data.rindex(b")") + 2 :][:1]
    except (OSError, ValueError):
        return b"X"


def _alive_descendants(me: int) -> list[int]:
    """Every descendant that is not a zombie (a zombie has no children and holds nothing)."""
    out, todo = [], [me]
    while todo:
        for pid in _children(todo.pop()):
            todo.append(pid)
            if _state(pid) not in (b"Z", b"X"):
                out.append(pid)
    return out


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read(4096)
    except OSError:
        return "?"
    text = raw.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", "replace")
    text = "".join(c if c.isprintable() else " " for c in text)
    return text[:200] or "?"


def _kill(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:  # noqa: SIM105 - contextlib is not imported here (start-up time)
            os.kill(pid, sig)
        except OSError:  # gone already, or not ours to signal (it will be reported as a survivor)
            pass


class _Run:
    def __init__(self, main: int) -> None:
        self.main = main
        self.status: int | None = None
        self.seen: dict[int, str] = {}

    def reap(self) -> None:
        """Reap every exited child: the command, and orphans that re-parented here."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.main:
                self.status = status

    def note(self, pids: list[int]) -> None:
        for pid in pids:
            if pid not in self.seen:
                self.seen[pid] = _cmdline(pid)

    def sweep(self, me: int, grace: float) -> list[int]:
        """Stop every descendant; return those still running at the end."""
        found = _alive_descendants(me)
        self.note(found)
        termed = set(found)
        _kill(found, 15)
        deadline = time.monotonic() + grace
        while found and time.monotonic() < deadline:
            time.sleep(0.01)
            self.reap()
            found = _alive_descendants(me)
            self.note(new := [p for p in found if p not in termed])
            termed.update(new)
            _kill(new, 15)
        end = time.monotonic() + _KILL_ROUNDS_FOR
        while found:
            _kill(found, 19)  # SIGSTOP first: a frozen process cannot fork while the others are killed
            _kill(found, 9)
            time.sleep(0.002)
            self.reap()
            found = _alive_descendants(me)
            self.note(found)
            if time.monotonic() > end:
                break
        return found


def _read_spec(fd: int) -> tuple[bytes, list[bytes], dict[bytes, bytes]] | None:
    """A warm start's command: ``LENGTH\\n`` then NUL-separated cwd, argc, argv, ``KEY=VALUE`` entries.
    ``None`` when the pipe closes first (a spare that was never used)."""
    data = b""
    while b"\n" not in data:
        chunk = os.read(fd, 65_536)
        if not chunk:
            return None
        data += chunk
    head, _, data = data.partition(b"\n")
    while len(data) < int(head):
        chunk = os.read(fd, 65_536)
        if not chunk:
            return None
        data += chunk
    parts = data[: int(head)].split(b"\0")
    argc = int(parts[1])
    env = dict(e.split(b"=", 1) for e in parts[2 + argc :] if b"=" in e)
    return parts[0], parts[2 : 2 + argc], env


def main(argv: list[str]) -> int:
    cmd_fd, rep_fd, grace = int(argv[1]), int(argv[2]), float(argv[3])
    lines = [] if _subreaper() else ["F"]
    for sig in _SIGNALS:  # the command (its own group) may signal its group, or $PPID: this one survives that
        _signal.signal(sig, _signal.SIG_IGN)
    cwd, env = None, None
    command: list[bytes] = [os.fsencode(a) for a in argv[4:]]
    if not command:  # a warm start: wait for the command (started ahead of it, Python's start-up is not paid then)
        spec = _read_spec(cmd_fd)
        if spec is None:
            return 0
        cwd, command, env = spec
    me = os.getpid()
    pid = os.fork()
    if pid == 0:  # the command: default signal dispositions, its own process group, none of our pipes
        try:
            for sig in _SIGNALS:
                _signal.signal(sig, _signal.SIG_DFL)
            os.setpgid(0, 0)
            os.close(cmd_fd)
            os.close(rep_fd)
            if cwd is not None:
                os.chdir(cwd)
            if env is None:
                os.execv(command[0], command)  # noqa: S606 - the command swebash-ai built (bash or bwrap)
            os.execve(command[0], command, env)  # noqa: S606
        except BaseException as exc:
            os.write(2, f"cannot start {command[0]!r}: {exc}\n".encode())
        os._exit(127)
    lines.append(f"P {pid}")
    run = _Run(pid)
    waker = None
    try:  # noqa: SIM105 - as above
        waker = os.pidfd_open(pid)
    except (AttributeError, OSError):  # an old kernel: poll the command instead
        pass
    import select

    poll = select.poll()
    poll.register(cmd_fd, select.POLLIN)
    if waker is not None:
        poll.register(waker, select.POLLIN)
    while run.status is None:
        events = poll.poll(1000 if waker is not None else 20)
        run.reap()
        if any(fd == cmd_fd for fd, _ in events):
            break
    left = run.sweep(me, grace)
    run.reap()
    if run.status is not None:
        lines.append(f"X {run.status}")
    stopped = [(p, c) for p, c in run.seen.items() if p != pid and p not in left]
    lines += [f"S {p} {c}" for p, c in stopped[:_LIST]]
    lines.append(f"N {len(stopped)}")
    lines += [f"L {p} {run.seen.get(p) or _cmdline(p)}" for p in left[:_LIST]]
    lines.append("D")
    data = ("\n".join(lines) + "\n").encode()
    try:
        while data:
            data = data[os.write(rep_fd, data) :]
    except OSError:  # nobody reads it any more (swebash-ai ended): the sweep is done all the same
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
