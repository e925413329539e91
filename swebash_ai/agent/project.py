"""A project's own rules and hooks (``.swebash-ai/rules.toml``), and whether the user trusts them.

Contract:
    :func:`load_project` reads the file through :func:`~swebash_ai.safety.unasked.read_unasked` (it must
    lie inside the workspace, and never leads to a protected file) and returns a :class:`ProjectRules`.
    Its ``ask`` and ``deny`` rules are always in force; its ``allow`` rules and its hooks only once the user
    trusted that exact file and what it makes us run: ``[[trusted_projects]]`` in the user's config holds
    the file's path and a SHA-256 that covers its text and every project file its hooks name
    (:meth:`~swebash_ai.config.hooks.Hook.file_words`: ``./.swebash-ai/hooks/check.sh``, the
    ``scripts/x.py`` of ``python scripts/x.py``) or runs without naming them
    (:func:`~swebash_ai.agent.hook_files.indirect_files`: a bare ``eslint`` found in ``./node_modules/.bin``
    on ``PATH``, the module files of ``python -m tools.check``), so a change to any of them asks again. It
    covers the project's agent files too (``.swebash-ai/agents/*.md``, ``.claude/agents``, ``.opencode``'s):
    trusting the project puts them in force, so one changed, added or removed afterwards asks again.

    What the hash covers, per word: a file inside the project, its bytes; a word naming nothing yet, that
    it is absent (a file appearing there later asks again); a directory or a file outside the project
    (``/usr/bin/x``, a link leading out), only where it leads: its content is not the repository's to
    change, and a directory's files are not covered. A file that cannot be hashed (protected, not a regular
    file, over :data:`HASH_MAX_BYTES`) makes the project impossible to trust (``unverified``). With no such
    word the hash is the rules file's alone, as records made before hooks' files were covered hold: those
    stay valid where they cover everything, and ask again where hooks name project files. Files found through
    ``PATH`` depend on the environment the assistant starts in: started with another ``PATH`` (a virtual
    environment activated or not), the same project may ask again.

Why:
    A cloned repository is written by someone else. It may make the assistant more careful by itself; it
    must never make it less careful, nor run its programs as hooks, without the user saying so after
    reading what it asks for. A ``git pull`` that changes a hook's script changes what runs as much as a
    change to the rules file does.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swebash_ai.config.rules import ToolRules, parse_rule_list
from swebash_ai.errors import ConfigError
from swebash_ai.safety.paths import PathPolicy, PathRefused, open_for_read
from swebash_ai.safety.unasked import DEFAULT_MAX_BYTES, UnaskedText, read_unasked

if TYPE_CHECKING:
    from swebash_ai.config.hooks import Hook, TrustedProject

PROJECT_FILE = Path(".swebash-ai") / "rules.toml"
HASH_MAX_BYTES = 16 * 1024 * 1024
"""The largest file a project's hooks may name and still be trusted (its bytes are hashed whole)."""


@dataclass(frozen=True)
class Covered:
    """One file a project's hooks name, as the trust hash covers it."""

    word: str
    """As the hook command writes it."""
    resolved: Path
    state: str
    """``sha256:HEX``, ``absent``, ``directory`` or ``outside`` (see the module docstring)."""
    via: str = ""
    """For a file the hook runs without naming it: how it gets there (``eslint on PATH``, ``python -m x``)."""

    def line(self) -> str:
        """For the trust prompt and ``swebash-ai trust``."""
        how = f"{self.via}; " if self.via else ""
        if self.state.startswith("sha256:"):
            return f"covers {self.word} ({how}sha256 {self.state[7:19]}...)"
        if self.state == "absent":
            return f"covers {self.word} ({how}absent now: a file created there asks again)"
        where = "a directory: its files are not covered" if self.state == "directory" else \
            f"outside the project: {self.resolved}"
        return f"not covered: {self.word} ({how}{where})"


@dataclass(frozen=True)
class ProjectRules:
    """What a project's file says, and whether the user trusts it."""

    path: Path | None = None
    sha256: str = ""
    rules: ToolRules = field(default_factory=ToolRules)
    hooks: tuple[Hook, ...] = ()
    trusted: bool = False
    problem: str = ""
    """Why the file was left out (unreadable, refused, invalid): for a notice."""
    covered: tuple[Covered, ...] = ()
    """The files its hooks name, in the trust hash."""
    unverified: str = ""
    """Why it cannot be trusted (a file its hooks name cannot be hashed); empty when it can."""
    stale: bool = False
    """The user trusted this file once, with another hash: it, or a file its hooks name, changed since."""
    lsp: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Its ``[lsp.NAME]`` tables: language servers it adds, changes or turns off (in force once trusted)."""

    @property
    def in_force(self) -> ToolRules:
        """ask/deny always; allow only when trusted."""
        return ToolRules(tuple(r for r in self.rules.rules if self.trusted or r.decision != "allow"))

    @property
    def hooks_in_force(self) -> tuple[Hook, ...]:
        return self.hooks if self.trusted else ()

    @property
    def lsp_in_force(self) -> dict[str, dict[str, Any]]:
        """Its language-server tables once trusted: a server it names runs programs of its choosing."""
        return self.lsp if self.trusted else {}

    @property
    def needs_trust(self) -> bool:
        """It would widen something (allow rules, hooks, language servers) and the user has not trusted this
        version."""
        return not self.trusted and (bool(self.hooks) or bool(self.lsp)
                                     or any(r.decision == "allow" for r in self.rules.rules))

    def summary(self) -> list[str]:
        """One line per rule and hook, for the trust prompt."""
        lines = [f"{r.decision:5}  {r.what()}" + (f"  (only in {', '.join(r.workspaces)})" if r.workspaces else "")
                 for r in self.rules.rules]
        lines += [f"hook   {h.event}: runs {' '.join(h.command)}" for h in self.hooks]
        lines += [f"lsp    {name}: " + ("turned off" if table.get("enabled") is False else
                                        f"runs {' '.join(table['command'])}" if table.get("command") else "changed")
                  for name, table in self.lsp.items()]
        lines += [f"       {c.line()}" for c in self.covered]
        if self.unverified:
            lines.append(f"!      cannot be trusted: {self.unverified}")
        return lines


def load_project(
    root: Path, policy: PathPolicy, trusted: Sequence[TrustedProject], max_bytes: int = DEFAULT_MAX_BYTES,
    environ: Mapping[str, str] | None = None,
) -> ProjectRules:
    """The project file under ``root``, if any (see the module docstring); never raises. ``environ`` is what the
    hooks' environment is made from (default: ours, as :func:`~swebash_ai.agent.hooks.run_hook` does)."""
    path = root / PROJECT_FILE
    if not path.is_file() and not path.is_symlink():
        return ProjectRules()
    got = read_unasked(path, policy, within=[root], max_bytes=max_bytes)
    if not isinstance(got, UnaskedText):
        return ProjectRules(path, problem=f"{path} was left out: {got.reason}")
    import tomllib  # with a project file only, as its hooks

    from swebash_ai.config.hooks import parse_hooks

    digest = hashlib.sha256(got.text.encode("utf-8")).hexdigest()
    try:
        data = tomllib.loads(got.text)
        unknown = sorted(set(data) - {"rules", "hooks", "lsp"})
        if unknown:
            raise ConfigError(f"{path}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                              "(a project file has [[rules]], [[hooks]] and [lsp.NAME] tables)")
        rules = parse_rule_list(data.get("rules"), str(path), "[[rules]]", "project")
        hooks = parse_hooks(data.get("hooks"), str(path), "[[hooks]]", "project")
        from swebash_ai.config.lsp import parse_lsp_tables

        lsp = parse_lsp_tables(data.get("lsp"), str(path))
    except (tomllib.TOMLDecodeError, ConfigError) as exc:
        return ProjectRules(path, digest, problem=f"{path} was left out: {exc}")
    covered, unverified = _cover(root, policy, hooks, os.environ if environ is None else environ)
    agents, agents_unverified = _cover_agents(root, policy)
    covered += agents
    unverified = unverified or agents_unverified
    if covered:
        digest = _digest(digest, covered)
    key = str(got.resolved)
    ok = not unverified and any(t.path == key and t.sha256 == digest for t in trusted)
    stale = not ok and any(t.path == key for t in trusted)
    return ProjectRules(got.resolved, digest, rules, hooks, ok, covered=covered, unverified=unverified, stale=stale,
                        lsp=lsp)


def _digest(rules_digest: str, covered: Sequence[Covered]) -> str:
    """One hash over the rules file's and each covered file's state; never equal to a rules-only hash."""
    h = hashlib.sha256(b"swebash-ai project trust 2\0" + rules_digest.encode())
    for c in covered:
        via = f"\0{c.via}" if c.via else ""  # absent from older records' entries, which stay valid
        h.update(f"\0{c.word}\0{c.resolved}\0{c.state}{via}".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _cover(root: Path, policy: PathPolicy, hooks: Sequence[Hook],
           environ: Mapping[str, str]) -> tuple[tuple[Covered, ...], str]:
    """Every file the hooks name or run unnamed, with its state; and why one cannot be hashed ("" when all can)."""
    from swebash_ai.agent.hook_files import indirect_files  # with a project file only, as its hooks
    from swebash_ai.tools.command_env import child_environment

    base = Path(os.path.realpath(root))
    # Hooks run in the workspace: the words are relative to it.
    wanted = [(w, base / w, "") for w in dict.fromkeys(w for h in hooks for w in h.file_words())]
    env = child_environment(environ) if hooks else {}  # what a hook gets (agent/hooks.py, through run_process)
    seen = set()
    for hook in hooks:
        for found in indirect_files(hook, base, env):
            if (found.path, found.via) not in seen:
                seen.add((found.path, found.via))
                wanted.append((_shown(found.path, base), found.path, found.via))
    out: list[Covered] = []
    for word, path, via in wanted:
        resolved = Path(os.path.realpath(path))
        if not resolved.is_relative_to(base):
            out.append(Covered(word, resolved, "outside", via))
        elif not os.path.lexists(resolved):
            out.append(Covered(word, resolved, "absent", via))
        elif os.path.isdir(resolved):
            out.append(Covered(word, resolved, "directory", via))
        else:
            state = _hash(resolved, policy)
            if not state.startswith("sha256:"):
                return tuple(out), f"{word}: {state}"
            out.append(Covered(word, resolved, state, via))
    return tuple(out), ""


def _cover_agents(root: Path, policy: PathPolicy) -> tuple[tuple[Covered, ...], str]:
    """Every project agent file (agent/agent_files.py reads them; trusting the project puts them in force),
    hashed whole: an agent's prompt, tools and model are what a child runs with, as a hook's script is what a
    hook runs. A file added, changed or removed after the trust asks again. None: nothing is added (a project
    trusted before agents existed keeps its record)."""
    from swebash_ai.agent.agent_files import project_agent_files

    out: list[Covered] = []
    for path, top in project_agent_files(root):
        word = _shown(path, Path(os.path.realpath(top)))
        resolved = Path(os.path.realpath(path))
        if not resolved.is_relative_to(Path(os.path.realpath(top))):
            return tuple(out), f"{word}: leads outside the project"
        state = _hash(resolved, policy)
        if not state.startswith("sha256:"):
            return tuple(out), f"{word}: {state}"
        out.append(Covered(word, resolved, state, "an agent file"))
    return tuple(out), ""


def _shown(path: Path, base: Path) -> str:
    """A found file as the list shows it: relative to the project when it lies there (unresolved)."""
    absolute = Path(os.path.normpath(path))
    return str(absolute.relative_to(base)) if absolute.is_relative_to(base) else str(absolute)


def _hash(path: Path, policy: PathPolicy) -> str:
    """``sha256:HEX`` of the file's bytes, or why it cannot be hashed (the floor: protected files are not read)."""
    verdict = policy.check(str(path), "read")
    if verdict.decision == "deny":
        return "; ".join(verdict.reasons) or "refused by the path policy"
    try:
        data, truncated = open_for_read(path, HASH_MAX_BYTES, refuse=policy.descriptor_reason)
    except PathRefused as exc:
        return str(exc)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if truncated:
        return f"larger than {HASH_MAX_BYTES // (1024 * 1024)} MiB"
    return "sha256:" + hashlib.sha256(data).hexdigest()
