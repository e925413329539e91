"""``swebash-ai rules [list|remove N]`` and ``swebash-ai trust``: the rules in force, where each came from.

Numbers are those ``rules list`` prints: the config file's rules, then the profile's, then the project's.
Only the user's own rules (config file, profile) can be removed here; a project's rules are changed in its
``.swebash-ai/rules.toml``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from swebash_ai.agent.project import ProjectRules, load_project
from swebash_ai.config.rules import ToolRule
from swebash_ai.config.settings import LoadedSettings
from swebash_ai.errors import ConfigError, UsageError
from swebash_ai.safety.terminal_text import safe
from swebash_ai.session import session_path_policy


def project_of(loaded: LoadedSettings, cwd: Path) -> ProjectRules:
    return load_project(cwd, session_path_policy(loaded, cwd), loaded.trusted_projects,
                        loaded.settings.fs_max_size)


def numbered(loaded: LoadedSettings, project: ProjectRules) -> list[tuple[int, ToolRule, str]]:
    """Every rule with its number and a note (``not in force: ...``)."""
    out: list[tuple[int, ToolRule, str]] = []
    for rule in (*loaded.rules.rules, *project.rules.rules):
        note = ""
        if rule.origin == "project" and rule.decision == "allow" and not project.trusted:
            note = "not in force: the project is not trusted (swebash-ai trust)"
        out.append((len(out) + 1, rule, note))
    return out


def where(loaded: LoadedSettings, rule: ToolRule, project: ProjectRules) -> str:
    if rule.origin == "project":
        return f"{project.path} #{rule.number}"
    table = "[[rules]]" if rule.origin == "config" else f"[[{rule.origin.replace('profile.', 'profiles.')}.rules]]"
    return f"{loaded.config_file} {table} #{rule.number}"


def render_rules(loaded: LoadedSettings, project: ProjectRules) -> str:
    rows = numbered(loaded, project)
    if not rows:
        # the dialog's button is "Always here (w)": name it as the person will see it
        return "No rules. Add [[rules]] to the config file (see docs/approvals.md), or answer \"Always here (w)\" " \
               "in the approval dialog."
    lines = []
    for n, rule, note in rows:
        extra = f" only in {', '.join(rule.workspaces)}" if rule.workspaces else ""
        lines.append(f"{n:>3}  {rule.decision:5}  {rule.what()}{extra}")
        lines.append(f"       from {where(loaded, rule, project)}" + (f"; {note}" if note else ""))
    if project.problem:
        lines.append(f"  ! {project.problem}")
    return "\n".join(safe(line, visible=True) for line in lines)


def remove(loaded: LoadedSettings, project: ProjectRules, number: int) -> str:
    """Remove rule ``number`` (as listed) from the user's config file; returns what was removed.

    Raises:
        UsageError: no such rule. ConfigError: a project rule.
    """
    from swebash_ai.config.edit import remove_rule

    rows = {n: rule for n, rule, _ in numbered(loaded, project)}
    rule = rows.get(number)
    if rule is None:
        raise UsageError(f"There is no rule {number} (see `swebash-ai rules list`).")
    if rule.origin == "project":
        raise ConfigError(f"Rule {number} comes from {project.path}: change that file to remove it.")
    remove_rule(loaded.config_file, rule.origin, rule.number)
    return f"Removed rule {number}: {rule.decision} {rule.what()} (from {where(loaded, rule, project)})."


def run_rules(loaded: LoadedSettings, cwd: Path, action: str, number: int | None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    project = project_of(loaded, cwd)
    if action == "remove":
        if number is None:
            raise UsageError("rules remove needs the number of a rule: swebash-ai rules remove N "
                             "(N as `swebash-ai rules list` shows it).")
        print(safe(remove(loaded, project, number), visible=True), file=out)
        return 0
    print(render_rules(loaded, project), file=out)
    return 0


def run_trust(loaded: LoadedSettings, cwd: Path, yes: bool, out: TextIO | None = None) -> int:
    """Show what the project's file would allow and run, then record the user's trust in it."""
    from swebash_ai.config.edit import trust_project

    out = out or sys.stdout
    project = project_of(loaded, cwd)
    if project.path is None:
        print(f"No project rules here ({cwd}/.swebash-ai/rules.toml does not exist).", file=out)
        return 0
    if project.problem:
        raise ConfigError(project.problem)
    since = " (changed since you trusted it: it, or a file its hooks run)" if project.stale else ""
    print(safe(f"{project.path}{since} asks for:", visible=True), file=out)
    for line in project.summary():
        print("  " + safe(line, visible=True), file=out)
    if project.trusted:
        print("Already trusted as it is.", file=out)
        return 0
    if project.unverified:
        raise ConfigError(f"{project.path} cannot be trusted: {project.unverified}.",
                          hint="Trust covers every project file its hooks run; see docs/approvals.md (Project rules).")
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError("trust: not trusted, there is no terminal to confirm on. Read the list above and run "
                             "`swebash-ai trust --yes`.")
        answer = input("Trust these rules and hooks (they apply until the file or a file listed changes)? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("Not trusted.", file=out)
            return 3
    trust_project(loaded.config_file, project.path, project.sha256)
    print(f"Trusted; recorded in {loaded.config_file}. A change to the file or to a file it covers asks again.",
          file=out)
    return 0
