"""What a confined command sees and which variables it gets: two allowlists, as data, each row with its reason.

Contract:
    :data:`SYSTEM` (folders of the system, read-only), :data:`HOME_TOOLCHAINS` (folders of the home folder that
    ordinary builds need: toolchains read-only, caches writable with the writes thrown away at the end) and
    :data:`ENV_PASS` / :data:`ENV_PASS_PREFIXES` (the variables a command gets) are the whole list: what no row
    names is absent (a folder) or dropped (a variable). :func:`shown` gathers the rows that exist here, with the
    user's own ``sandbox_read`` / ``sandbox_write`` additions, into :class:`Shown` entries;
    :func:`env_allowed` answers for one variable name. Pure but for ``os.path`` checks.

Why an allowlist: a list of secret files to hide misses every file nobody listed (a sibling project's ``.env``,
a token in a monorepo root, a socket under home). A list of what builds need fails the other way: a tool that
needs a folder nobody listed fails loudly, and the user adds it to ``[sandbox] read``.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["ENV_PASS", "ENV_PASS_PREFIXES", "HOME_TOOLCHAINS", "SYSTEM", "Shown", "env_allowed", "shown", "within"]

Mode = Literal["ro", "rw", "cache"]


@dataclass(frozen=True)
class Shown:
    """A path the command sees: ``ro`` read-only, ``rw`` writable (the user's ``sandbox_write``), ``cache``
    writable with every write thrown away at the end (bubblewrap: an overlay on the real folder; a missing one
    is an empty folder)."""

    path: Path
    mode: Mode
    why: str


# (path, why it is shown). Read-only. The root's symlinks (/bin -> usr/bin on merged-/usr systems) stay symlinks.
SYSTEM: tuple[tuple[str, str], ...] = (
    ("/usr", "programs, libraries, headers, /usr/local"),
    ("/bin", "programs (often a link to /usr/bin)"),
    ("/sbin", "system programs (often a link to /usr/sbin)"),
    ("/lib", "shared libraries (often a link to /usr/lib)"),
    ("/lib32", "32-bit libraries"),
    ("/lib64", "the dynamic loader and 64-bit libraries"),
    ("/libx32", "x32 libraries"),
    ("/etc", "system configuration: users, certificates, locales, DNS (its secret files are hidden)"),
    ("/opt", "software installed outside the package manager"),
    ("/nix", "Nix: the store every Nix program runs from"),
    ("/gnu", "Guix: the store"),
    ("/snap", "snap packages' programs"),
    ("/home/linuxbrew/.linuxbrew", "Homebrew on Linux"),
    ("/var/lib/ca-certificates", "the certificate store on some distributions (openSUSE)"),
    ("/sys", "CPU counts and device facts that build tools read (read-only)"),
)

# (path under the home folder, mode, why). Toolchains read-only; caches a build writes get a throw-away overlay.
HOME_TOOLCHAINS: tuple[tuple[str, Mode, str], ...] = (
    (".local/bin", "ro", "programs installed with pip --user, pipx, uv tool"),
    (".local/lib", "ro", "pip --user packages"),
    (".local/share/uv", "ro", "uv: its Python builds and tools"),
    (".local/share/pipx", "ro", "pipx: the tools' virtual environments"),
    (".local/share/virtualenvs", "ro", "pipenv's virtual environments"),
    (".virtualenvs", "ro", "virtualenvwrapper's virtual environments"),
    (".pyenv", "ro", "pyenv: Python versions and shims"),
    (".conda", "ro", "conda environments"),
    ("miniconda3", "ro", "Miniconda"),
    ("anaconda3", "ro", "Anaconda"),
    (".rye", "ro", "Rye: Python toolchains"),
    (".cargo/bin", "ro", "Rust: cargo, rustc and installed tools"),
    (".cargo/registry", "cache", "Rust: downloaded crates (writes thrown away)"),
    (".cargo/git", "cache", "Rust: git dependencies (writes thrown away)"),
    (".rustup", "ro", "Rust toolchains"),
    (".npm", "cache", "npm's cache (writes thrown away)"),
    (".nvm", "ro", "nvm: Node versions"),
    (".volta", "ro", "Volta: Node toolchains"),
    (".local/share/fnm", "ro", "fnm: Node versions"),
    (".local/share/pnpm", "ro", "pnpm and its store"),
    (".bun", "ro", "Bun"),
    (".deno", "ro", "Deno"),
    (".cache/pip", "cache", "pip's cache (writes thrown away)"),
    (".cache/uv", "cache", "uv's cache (writes thrown away)"),
    (".cache/yarn", "cache", "Yarn's cache (writes thrown away)"),
    (".cache/go-build", "cache", "Go's build cache (writes thrown away)"),
    (".cache/pre-commit", "ro", "pre-commit's hook environments"),
    ("go", "ro", "Go: GOPATH, modules and installed tools"),
    (".go", "ro", "Go toolchains"),
    ("sdk", "ro", "Go toolchains installed by `go install golang.org/dl/...`"),
    (".m2/repository", "cache", "Maven's downloaded artefacts (writes thrown away; settings.xml is not shown)"),
    (".gradle/caches", "cache", "Gradle's caches (writes thrown away; gradle.properties is not shown)"),
    (".gradle/wrapper", "ro", "Gradle wrapper distributions"),
    (".sdkman", "ro", "SDKMAN: JDKs and build tools"),
    (".rbenv", "ro", "rbenv: Ruby versions"),
    (".gem", "ro", "Ruby gems installed for the user"),
    (".local/share/gem", "ro", "Ruby gems installed for the user (XDG)"),
    (".asdf", "ro", "asdf: tool versions"),
    (".local/share/mise", "ro", "mise: tool versions"),
    (".ghcup", "ro", "GHCup: Haskell toolchains"),
    (".cabal/bin", "ro", "Cabal-installed programs"),
    (".stack/programs", "ro", "Stack's GHC builds"),
    (".opam", "ro", "opam: OCaml switches"),
    (".elan", "ro", "elan: Lean toolchains"),
    (".dotnet", "ro", ".NET SDKs"),
    (".nuget/packages", "cache", "NuGet's package folder (writes thrown away)"),
    (".nix-profile", "ro", "Nix: the user's profile (a link into /nix)"),
)

# Variables a confined command gets (exactly these names), on top of the ones command_env sets itself.
ENV_PASS: tuple[tuple[str, str], ...] = (
    ("PATH", "where programs are"), ("HOME", "the (mostly empty) home folder"), ("USER", "the user's name"),
    ("LOGNAME", "the user's name"), ("SHELL", "the login shell"), ("LANG", "locale"), ("LANGUAGE", "locale"),
    ("TZ", "time zone"), ("COLUMNS", "output width"), ("LINES", "output height"),
    ("SOURCE_DATE_EPOCH", "reproducible builds"), ("CI", "tools behave as on CI"),
    ("XDG_CONFIG_HOME", "where tools look for config"), ("XDG_CACHE_HOME", "where tools cache"),
    ("XDG_DATA_HOME", "where tools keep data"),
    ("VIRTUAL_ENV", "Python: the active virtual environment"), ("CONDA_PREFIX", "conda: the active environment"),
    ("CONDA_DEFAULT_ENV", "conda"), ("PYTHONPATH", "Python: import path"),
    ("PYTHONDONTWRITEBYTECODE", "Python"), ("PYTHONIOENCODING", "Python"), ("PYTHONUTF8", "Python"),
    ("PYENV_ROOT", "pyenv"), ("PYENV_VERSION", "pyenv"), ("PIP_INDEX_URL", "pip: the package index"),
    ("PIP_EXTRA_INDEX_URL", "pip"), ("PIP_FIND_LINKS", "pip: local wheels"), ("PIP_NO_INDEX", "pip"),
    ("UV_INDEX_URL", "uv"), ("UV_CACHE_DIR", "uv"),
    ("CARGO_HOME", "Rust"), ("RUSTUP_HOME", "Rust"), ("RUSTUP_TOOLCHAIN", "Rust"), ("RUSTFLAGS", "Rust"),
    ("CARGO_TARGET_DIR", "Rust"), ("GOPATH", "Go"), ("GOROOT", "Go"), ("GOFLAGS", "Go"), ("GOPROXY", "Go"),
    ("GOTOOLCHAIN", "Go"), ("GOCACHE", "Go"), ("GOMODCACHE", "Go"), ("CGO_ENABLED", "Go"),
    ("NVM_DIR", "nvm"), ("NVM_BIN", "nvm"), ("NODE_PATH", "Node"), ("NODE_ENV", "Node"),
    ("npm_config_cache", "npm"), ("NPM_CONFIG_CACHE", "npm"), ("npm_config_offline", "npm"),
    ("VOLTA_HOME", "Volta"), ("BUN_INSTALL", "Bun"), ("DENO_DIR", "Deno"), ("JAVA_HOME", "Java"),
    ("GRADLE_USER_HOME", "Gradle"), ("MAVEN_OPTS", "Maven"), ("SDKMAN_DIR", "SDKMAN"), ("GEM_HOME", "Ruby"),
    ("GEM_PATH", "Ruby"), ("RBENV_ROOT", "rbenv"), ("DOTNET_ROOT", ".NET"), ("CC", "C compiler"),
    ("CXX", "C++ compiler"), ("CFLAGS", "C"), ("CXXFLAGS", "C++"), ("CPPFLAGS", "C"), ("LDFLAGS", "linker"),
    ("PKG_CONFIG_PATH", "pkg-config"), ("LD_LIBRARY_PATH", "libraries"), ("MAKEFLAGS", "make"),
    ("CMAKE_PREFIX_PATH", "CMake"), ("PYTEST_ADDOPTS", "pytest"),
)
ENV_PASS_PREFIXES: tuple[tuple[str, str], ...] = (("LC_", "locale categories"),)


def env_allowed(name: str, extra: Iterable[str] = ()) -> bool:
    """Whether a confined command gets variable ``name``: a row of :data:`ENV_PASS`, a prefix of
    :data:`ENV_PASS_PREFIXES`, or one of ``extra`` (``[sandbox] env_pass``)."""
    return (name in _ENV_NAMES or name.startswith(tuple(p for p, _ in ENV_PASS_PREFIXES))
            or name in frozenset(extra))


_ENV_NAMES = frozenset(n for n, _ in ENV_PASS)


def within(p: Path | str, root: Path | str) -> bool:
    """``p`` is ``root`` or below it, by whole components (``/x/ws2`` is not below ``/x/ws``); both absolute and
    normalised. A string test: ``Path.is_relative_to`` parses both paths, and a policy asks this thousands of times."""
    a, b = str(p), str(root)
    return a == b or a.startswith(b if b.endswith("/") else b + "/")


def _under(p: Path, roots: Iterable[Path]) -> bool:
    return any(within(p, r) for r in roots)


def _toolchain_root(folder: Path) -> Path:
    """A folder on ``PATH`` inside a toolchain the home table names (``/root/.pyenv/shims`` with another
    ``HOME``): the toolchain's whole root, read-only, as the table shows it under home (a pyenv shim runs
    ``.pyenv/libexec/pyenv``). Any other folder: itself."""
    text = folder.as_posix()
    for rel, mode, _why in HOME_TOOLCHAINS:
        if mode != "ro":
            continue
        at = text.find("/" + rel + "/")
        if at > 0 and not text.endswith("/" + rel):
            return Path(text[: at + 1 + len(rel)])
    return folder


def _expand(raw: str | Path, home: Path) -> Path | None:
    text = str(raw).strip()
    if text.startswith("~"):
        text = str(home) + text[1:] if text == "~" or text.startswith("~/") else ""
    return Path(os.path.realpath(text)) if os.path.isabs(text) else None


_OWN_PACKAGE = Path(os.path.realpath(Path(__file__).parent.parent))
"""The ``swebash_ai`` package folder."""

_CACHE_SECONDS = 5.0
_cache: dict[tuple[object, ...], tuple[float, list[Shown]]] = {}


def shown(home: Path, *, read: Sequence[str | Path] = (), write: Sequence[str | Path] = (),
          path_env: str | None = None, workspace: Sequence[Path] = ()) -> list[Shown]:
    """The rows that exist here (and the cache rows, which are shown empty when missing), the user's additions,
    the folders on ``PATH`` outside the home folder (a virtual environment whole), and swebash-ai's own Python
    (the relay and the Landlock launcher run on it). Never the home folder itself, a folder that holds it or the
    workspace, nor ``/``. Kept for a few seconds (a tool installed meanwhile shows from the next command on):
    some sixty existence checks a command otherwise."""
    path_env = os.environ.get("PATH", "") if path_env is None else path_env
    key = (home, tuple(map(str, read)), tuple(map(str, write)), path_env, tuple(workspace))
    now = time.monotonic()
    hit = _cache.get(key)
    if hit is not None and now - hit[0] < _CACHE_SECONDS:
        return list(hit[1])
    found = _shown(home, read, write, path_env, workspace)
    if len(_cache) > 64:
        _cache.clear()
    _cache[key] = (now, found)
    return list(found)


def _shown(home: Path, read: Sequence[str | Path], write: Sequence[str | Path], path_env: str,
           workspace: Sequence[Path]) -> list[Shown]:
    out: list[Shown] = []
    for path, why in SYSTEM:
        if os.path.lexists(path):
            out.append(Shown(Path(path), "ro", why))
    for rel, mode, why in HOME_TOOLCHAINS:
        p = home / rel
        if mode == "cache" or os.path.exists(p):
            out.append(Shown(p, mode, why))
    too_wide = [Path("/"), home, *workspace]

    def fits(p: Path) -> bool:
        return not any(within(w, p) for w in too_wide)

    added: list[tuple[str | Path, Mode, str]] = [(r, "ro", "sandbox_read") for r in read]
    added += [(w, "rw", "sandbox_write") for w in write]
    for raw, mode, why in added:
        where = _expand(raw, home)
        if where is not None and os.path.exists(where) and fits(where):
            out.append(Shown(where, mode, why))
    system = [Path(p) for p, _ in SYSTEM]
    extra: list[tuple[Path, str]] = []
    for entry in path_env.split(os.pathsep):
        folder = _expand(entry, home) if entry else None
        if folder is None or not os.path.isdir(folder) or _under(folder, system) or _under(folder, [home]):
            continue
        venv = folder.parent if (folder.parent / "pyvenv.cfg").exists() else folder
        extra.append((_toolchain_root(venv), "a folder on PATH"))
    for prefix in {sys.prefix, sys.base_prefix}:
        extra.append((Path(os.path.realpath(prefix)), "swebash-ai's own Python (the relay, the Landlock launcher)"))
    # swebash-ai's own package, wherever it is installed (an editable install's checkout lies outside the
    # environment): the servers it starts of its own code import it. The package folder only, never its parent.
    extra.append((_OWN_PACKAGE, "swebash-ai's own code (servers it starts of its own import it)"))
    shown_now = [s.path for s in out]
    for p, why in extra:
        if fits(p) and not _under(p, shown_now) and not _under(p, workspace):
            out.append(Shown(p, "ro", why))
            shown_now.append(p)
    return out
