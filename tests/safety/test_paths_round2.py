"""Path policy, round 2: credential files from a real list, fail closed on every resolution error, /proc aliases.

Layout: a temporary HOME with the workspace inside (``home/proj``); the real home is never used.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from swebash_ai.safety import paths as paths_mod
from swebash_ai.safety.commands import CommandPolicy
from swebash_ai.safety.paths import PathPolicy, PathRefused


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path, PathPolicy]:
    base = Path(os.path.realpath(tmp_path))
    home, ws = base / "home", base / "home" / "proj"
    (ws / "src").mkdir(parents=True)
    (ws / "README.md").write_text("hello\n")
    return home, ws, PathPolicy(roots=[ws], home=home)


# Credential files, in the workspace (where CI steps and tools write them) or in the home directory.
CREDENTIALS = [
    "gha-creds-3f9a1c2b7d.json",  # why: written into the workspace by a CI auth step
    "deploy/gha-creds-abc.json",  # why: in a subfolder too
    "prod-service-account.json",  # why: a service-account JSON key
    "my_service_account_key.json",  # why: the underscore spelling
    "ci-sa-key.json",  # why: a common name for a service-account key
    "client_secret_1234.apps.googleusercontent.com.json",  # why: OAuth client secret
    "credentials.json",  # why: the default name of OAuth client files
    "terraform.tfstate",  # why: Terraform state holds every secret it manages
    "terraform.tfstate.backup",  # why: and so does its backup
    "infra/prod.tfvars",  # why: variables files hold passwords
    "vars.auto.tfvars",  # why: auto-loaded variables
    "secrets.tfvars.json",  # why: the JSON form
    "kubeconfig",  # why: cluster credentials
    "kubeconfig.yaml",  # why: with an extension
    "cluster.kubeconfig",  # why: as a suffix
    ".netrc",  # why: machine passwords
    "_netrc",  # why: the Windows spelling
    ".pgpass",  # why: PostgreSQL passwords
    ".my.cnf",  # why: MySQL passwords
    ".mylogin.cnf",  # why: MySQL's obfuscated passwords
    ".git-credentials",  # why: git's stored credentials
    ".npmrc",  # why: npm tokens
    ".pypirc",  # why: PyPI tokens
    ".yarnrc.yml",  # why: npmAuthToken
    ".vault-token",  # why: a Vault token
    "release.keystore",  # why: Android signing keys
    "store.jks",  # why: Java keystores
    "putty.ppk",  # why: PuTTY private keys
    "passwords.kdbx",  # why: a KeePass database
    "login.keychain-db",  # why: a macOS keychain
    "~/.config/gcloud/application_default_credentials.json",  # why: gcloud ADC
    "~/.config/gcloud/legacy_credentials/me@example.com/adc.json",  # why: gcloud legacy credentials
    "~/.config/gcloud/access_tokens.db",  # why: gcloud tokens
    "~/.azure/accessTokens.json",  # why: Azure CLI tokens
    "~/.oci/config",  # why: Oracle Cloud keys
    "~/.config/doctl/config.yaml",  # why: DigitalOcean token
    "~/.kube/config",  # why: kubeconfig in its usual place
    "~/.cargo/credentials.toml",  # why: crates.io token
    "~/.cargo/credentials",  # why: the old name
    "~/.terraform.d/credentials.tfrc.json",  # why: Terraform Cloud token
    "~/.docker/config.json",  # why: registry auth
    "~/.config/containers/auth.json",  # why: podman registry auth
    "~/.gem/credentials",  # why: RubyGems key
    "~/.mozilla/firefox/x.default/logins.json",  # why: browser saved passwords
    "~/.config/google-chrome/Default/Cookies",  # why: browser cookies
    "~/Library/Keychains/login.keychain-db",  # why: macOS keychains
    "~/.local/share/keyrings/login.keyring",  # why: GNOME keyring
]


@pytest.mark.parametrize("name", CREDENTIALS)
def test_credential_files_are_denied(layout: tuple[Path, Path, PathPolicy], name: str) -> None:
    _home, ws, policy = layout
    v = policy.check(name, "read", str(ws))
    assert v.decision == "deny" and v.rule == "path.denied.secret", v


@pytest.mark.parametrize("name", CREDENTIALS[:12])
def test_credential_files_are_denied_to_commands_too(layout: tuple[Path, Path, PathPolicy], name: str) -> None:
    _home, ws, policy = layout
    v = CommandPolicy(policy).assess(f"cat {name}", str(ws))
    assert v.decision == "deny", v


# Ordinary files that look a little like credentials stay readable (no friction on everyday names).
ORDINARY = [
    "src/credentials.py",  # why: code about credentials, not a credential
    "kubeconfig.go",  # why: source file
    "docs/terraform.md",  # why: docs
    "package.json",  # why: not a key
    "tsconfig.json",  # why: not a key
    "id_utils.py",  # why: has a dot, not a custom ssh key
    ".env.example",  # why: a template
]


@pytest.mark.parametrize("name", ORDINARY)
def test_ordinary_names_stay_readable(layout: tuple[Path, Path, PathPolicy], name: str) -> None:
    _home, ws, policy = layout
    assert policy.check(name, "read", str(ws)).decision == "allow"


# -- fail closed ------------------------------------------------------------------------------------


def test_symlink_loop_is_denied_for_every_operation(layout: tuple[Path, Path, PathPolicy]) -> None:
    _home, ws, policy = layout
    (ws / "a").symlink_to(ws / "b")
    (ws / "b").symlink_to(ws / "a")
    for op in ("read", "list", "exists", "metadata", "write"):
        for path in ("a", "a/inner.txt", "src/../a"):
            v = policy.check(path, op, str(ws))
            assert v.decision == "deny" and "ELOOP" in v.reasons[0], (op, path, v)
    with pytest.raises(PathRefused):
        policy.resolve("a", str(ws))


def test_self_loop_through_a_directory_is_denied(layout: tuple[Path, Path, PathPolicy]) -> None:
    _home, ws, policy = layout
    (ws / "src" / "self").symlink_to("self")
    v = policy.check("src/self/x", "read", str(ws))
    assert v.decision == "deny" and v.rule == "path.unresolvable"


@pytest.mark.parametrize(
    "path",
    [
        "n" * 256,  # why: one component over NAME_MAX
        "missing/" + "n" * 300,  # why: over NAME_MAX below a missing folder (the OS would refuse it too)
        "/".join(["d"] * 2100),  # why: over PATH_MAX
    ],
)
def test_overlong_names_are_denied(layout: tuple[Path, Path, PathPolicy], path: str) -> None:
    _home, ws, policy = layout
    v = policy.check(path, "read", str(ws))
    assert v.decision == "deny" and "ENAMETOOLONG" in v.reasons[0], v


def test_unsearchable_parent_is_denied(layout: tuple[Path, Path, PathPolicy], monkeypatch: pytest.MonkeyPatch) -> None:
    # why: EACCES on a directory on the way: the text of the path says nothing about where it leads. The
    # suite runs as root (which ignores permissions), so the OS error is injected at the one call that sees it.
    _home, ws, policy = layout
    (ws / "locked").mkdir()
    real_lstat = os.lstat

    def lstat(p: str | bytes | os.PathLike[str], *a: object, **k: object) -> os.stat_result:
        if os.fspath(p) == str(ws / "locked" / "inner"):
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(p))
        return real_lstat(p, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "lstat", lstat)
    v = policy.check("locked/inner/file.txt", "read", str(ws))
    assert v.decision == "deny" and "EACCES" in v.reasons[0], v
    assert CommandPolicy(policy).assess("cat locked/inner/file.txt", str(ws)).decision == "deny"


def test_any_other_os_error_is_denied(layout: tuple[Path, Path, PathPolicy], monkeypatch: pytest.MonkeyPatch) -> None:
    _home, ws, policy = layout

    def realpath(p: str, *, strict: bool = False) -> str:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(paths_mod.os.path, "realpath", realpath)
    assert policy.check("README.md", "read", str(ws)).decision == "deny"


def test_missing_files_still_resolve(layout: tuple[Path, Path, PathPolicy]) -> None:
    # why: failing closed must not refuse a file that does not exist yet (a write, an exists check)
    _home, ws, policy = layout
    assert policy.check("new/file.txt", "exists", str(ws)).decision == "allow"
    assert policy.check("README.md/not-a-dir", "exists", str(ws)).decision == "allow"
    assert policy.check("new.txt", "write", str(ws)).decision == "ask"


# -- /proc aliases ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "decision"),
    [
        ("/proc/self/cwd/README.md", "allow"),  # why: the workspace's README, named through /proc
        ("/proc/thread-self/cwd/src", "allow"),  # why: the same through thread-self
        ("/proc/self/cwd/../../.ssh/id_rsa", "deny"),  # why: the alias cannot launder a secret
        ("/proc/self/environ", "deny"),  # why: the environment holds keys
        ("/proc/self/fd/3", "deny"),  # why: descriptors stay protected
        ("/proc/1/cwd/README.md", "deny"),  # why: another process's directory
    ],
)
def test_proc_self_aliases_are_judged_as_what_they_name(
    layout: tuple[Path, Path, PathPolicy], path: str, decision: str
) -> None:
    home, ws, policy = layout
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("KEY")
    assert policy.check(path, "read", str(ws)).decision == decision
    assert CommandPolicy(policy).assess(f"cat {path}", str(ws)).decision == decision


def test_proc_self_root_is_the_root(layout: tuple[Path, Path, PathPolicy]) -> None:
    _home, ws, policy = layout
    assert policy.check(f"/proc/self/root{ws}/README.md", "read", str(ws)).decision == "allow"
    assert policy.check("/proc/self/root/etc/shadow", "read", str(ws)).rule == "path.denied.system"


# -- `..` after a symlink -------------------------------------------------------------------------------


def test_dotdot_after_a_symlink_is_resolved_the_way_the_os_does(layout: tuple[Path, Path, PathPolicy]) -> None:
    # why: a cloned repository can ship `s -> ~/.aws/cli`; the OS reads `s/../credentials` as
    # ~/.aws/credentials, while normalising the text first gave the harmless-looking `credentials`
    home, ws, policy = layout
    (home / ".aws" / "cli").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("[default]\n")
    (ws / "s").symlink_to(home / ".aws" / "cli")
    for path in ("s/../credentials", "src/../s/../credentials", "/proc/self/cwd/s/../credentials"):
        assert policy.check(path, "read", str(ws)).decision == "deny", path
        assert CommandPolicy(policy).assess(f"cat {path}", str(ws)).decision == "deny", path
    assert policy.resolve("s/../credentials", str(ws)) == home / ".aws" / "credentials"


def test_git_config_blob_is_checked_as_the_file_it_reads(layout: tuple[Path, Path, PathPolicy]) -> None:
    _home, ws, policy = layout
    assert CommandPolicy(policy).assess("git config --blob HEAD:.env --list", str(ws)).decision == "deny"
