"""``[[rules]]`` tables: the user's decisions about tool calls, as data loaded with the settings.

Three kinds of rule, each with a ``decision`` (``allow``, ``ask`` or ``deny``)::

    [[rules]]                       # a command rule: the command's first words, after parsing
    prefix = ["npm", "test"]
    decision = "allow"
    workspaces = ["~/src/shop"]     # optional, any rule: only in sessions whose workspace is there

    [[rules]]                       # a tool rule: a name glob, optionally arguments matched by globs
    tool = "mcp__tracker__*"
    arguments = { project = "WEB-*" }
    decision = "ask"

    [[rules]]                       # fetch_url's host rules (judged by the tool itself, see web_guard)
    tool = "fetch_url"
    host = "*.python.org"
    decision = "allow"

Where rules come from: the config file's top level, the chosen profile (``[[profiles.NAME.rules]]``), and a
project's ``.swebash-ai/rules.toml``, whose ``allow`` rules count only once the user trusts that file (see
:mod:`swebash_ai.agent.project`). When several rules match, the strictest wins (deny > ask > allow),
whatever their order or source.

This module is data: parsing and the word-level matching of one simple command. Splitting a command line
into simple commands is the decision pipeline's (:mod:`swebash_ai.agent.decide`); a rule can only decide
what the tool's own policy leaves open: what the policy denies stays denied whatever a rule says.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from swebash_ai.errors import ConfigError

RuleDecision = Literal["allow", "ask", "deny"]

COMMAND_TOOL = "run_command"
"""The tool ``prefix`` rules are about."""

_RANK = {"allow": 0, "ask": 1, "deny": 2}
_LABEL = re.compile(r"^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$")
_INTERNAL = ("origin", "number")

# Options that change what a program does (its configuration, its directory, code it runs) and that sit
# before the subcommand: a prefix that stops before the subcommand never covers them unless it names them.
GLOBAL_OPTIONS: dict[str, tuple[str, ...]] = {
    "git": ("-c", "--config-env", "-C", "--exec-path", "--git-dir", "--work-tree", "--namespace",
            "--super-prefix", "--attr-source"),
    "npm": ("--prefix", "-C", "--userconfig", "--globalconfig", "--script-shell", "--node-options", "--dir"),
    "npx": ("--prefix", "--userconfig", "--globalconfig", "--node-options", "-c", "--call", "-p", "--package"),
    "pnpm": ("-C", "--dir", "--config", "--prefix", "--userconfig", "--globalconfig"),
    "yarn": ("--cwd", "--use-yarnrc", "--rc-filename"),
    "cargo": ("--config", "-Z", "-C", "--manifest-path"),
    "docker": ("-H", "--host", "--config", "-c", "--context"),
    "kubectl": ("--kubeconfig", "--context", "--server", "-s", "--cluster", "--token"),
    "make": ("-f", "--file", "--makefile", "-C", "--directory", "-I", "--include-dir", "--eval", "-E"),
    "python": ("-c", "-m"),
    "python3": ("-c", "-m"),
    "node": ("-e", "--eval", "-p", "--print", "-r", "--require", "--import", "--loader"),
}


def whose(origin: str, *, user: str) -> str:
    """Whose a rule or hook read from ``origin`` is, as a sentence says it: ``"the project's"`` for the project's
    ``.swebash-ai/rules.toml``, else ``user`` (``"your"`` to the user, ``"the user's"`` to the model): a project's
    rule is not the user's word, and neither the user nor the model should read it as such."""
    return "the project's" if origin == "project" else user


def _valid_host(host: str) -> bool:
    labels = host.split(".")
    return 0 < len(host) <= 253 and all(_LABEL.match(label) for label in labels)


class ToolRule(BaseModel):
    """One ``[[rules]]`` table (see the module docstring); ``origin`` and ``number`` say where it was read."""

    # Built at the first table read: most configurations have none, and a start would pay for it anyway.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    decision: RuleDecision
    """``allow`` runs without asking, ``ask`` always asks, ``deny`` never runs."""
    tool: str | None = None
    """A tool name or glob (``mcp__tracker__*``); with ``prefix``: ``run_command`` (the default)."""
    prefix: tuple[str, ...] | None = None
    """A command's first words (program, subcommand...), compared after quote removal."""
    host: str | None = None
    """``fetch_url`` only: a host name, ``*.`` and a domain (the domain and its subdomains), or ``*``."""
    arguments: dict[str, str] | None = None
    """Tool rules: argument name -> glob its value must match (all must)."""
    workspaces: tuple[str, ...] = ()
    """Only in sessions whose workspace lies in one of these folders (``~`` is your home)."""
    origin: str = Field(default="config", exclude=True)
    number: int = Field(default=0, exclude=True)

    @field_validator("host")
    @classmethod
    def _host_pattern(cls, value: str | None) -> str | None:
        if value is None:
            return None
        host = value.strip().lower().rstrip(".")
        bare = host[2:] if host.startswith("*.") else host
        if host != "*" and not _valid_host(bare):
            raise ValueError(
                f"{value!r} is not a host pattern: write a host name (docs.python.org), '*.' and a domain "
                "(*.python.org) or '*', without a scheme, port or path"
            )
        return host

    @field_validator("prefix")
    @classmethod
    def _words(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is not None and (not value or any(not w or "\x00" in w for w in value)):
            raise ValueError("a prefix is a non-empty list of non-empty words, e.g. [\"npm\", \"test\"]")
        return value

    @model_validator(mode="after")
    def _one_kind(self) -> ToolRule:
        if self.prefix is None and self.tool is None:
            raise ValueError("a rule needs 'prefix' (a command's first words) or 'tool' (a tool name or glob)")
        if self.prefix is not None and self.tool not in (None, COMMAND_TOOL):
            raise ValueError(f"'prefix' is for {COMMAND_TOOL} rules (got tool {self.tool!r})")
        if self.prefix is not None and (self.host is not None or self.arguments is not None):
            raise ValueError("a prefix rule takes no 'host' or 'arguments'")
        if self.host is not None and self.tool != "fetch_url":
            raise ValueError("'host' is for fetch_url only")
        if self.host is not None and (self.arguments is not None or self.workspaces):
            raise ValueError("a host rule takes no 'arguments' or 'workspaces'")
        if self.tool == "fetch_url" and self.host is None and self.arguments is None:
            raise ValueError("a fetch_url rule names a 'host' (or 'arguments')")
        return self

    @property
    def label(self) -> str:
        """Who decided, for the audit log: ``rule:config#2``, ``rule:project#1``."""
        return f"rule:{self.origin}#{self.number}"

    def describe(self) -> str:
        if self.host is not None:
            return f'rule {self.decision} {self.tool} host "{self.host}"'
        return f"rule {self.decision} {self.what()} ({self.origin} #{self.number})"

    def what(self) -> str:
        """What the rule matches, as a person reads it."""
        if self.prefix is not None:
            return "`" + " ".join(self.prefix) + "` (and what follows)"
        if self.host is not None:
            return f"{self.tool} {self.host}"
        args = ", ".join(f"{k}={v}" for k, v in (self.arguments or {}).items())
        return f"{self.tool}({args})" if args else str(self.tool)

    def matches(self, host: str) -> bool:
        """A host rule against a host name."""
        host = host.lower().rstrip(".")
        if self.host is None:
            return False
        if self.host == "*":
            return True
        if self.host.startswith("*."):
            domain = self.host[2:]
            return host == domain or host.endswith("." + domain)
        return host == self.host

    def applies_in(self, workspace: Path, home: Path | None = None) -> bool:
        if not self.workspaces:
            return True
        home = home or Path(os.path.expanduser("~"))
        for folder in self.workspaces:
            raw = str(home) + folder[1:] if folder == "~" or folder.startswith("~/") else folder
            if workspace.is_relative_to(Path(os.path.realpath(raw))):
                return True
        return False

    def covers_tool(self, tool: str, arguments: Mapping[str, Any]) -> bool:
        """A tool rule against a call (never a host rule: fetch_url judges those itself)."""
        if self.tool is None or self.prefix is not None or self.host is not None:
            return False
        if not fnmatch.fnmatchcase(tool, self.tool):
            return False
        for name, pattern in (self.arguments or {}).items():
            if name not in arguments or not fnmatch.fnmatchcase(_as_text(arguments[name]), pattern):
                return False
        return True

    def covers_argv(self, argv: Sequence[str]) -> bool:
        """A prefix rule against one simple command's words (quotes already removed).

        The words it names must come first, exactly; a word it does not name that changes what the
        program does (``git -c``, ``--config-env``, ``-C``: see :data:`GLOBAL_OPTIONS`) is not covered when
        it stands before the program's first operand.
        """
        if self.prefix is None or len(argv) < len(self.prefix) or tuple(argv[: len(self.prefix)]) != self.prefix:
            return False
        risky = GLOBAL_OPTIONS.get(os.path.basename(argv[0]), ())
        if _names_operand(self.prefix[1:], risky):
            return True  # the prefix names the subcommand: what follows is that subcommand's own
        for word in argv[len(self.prefix):]:
            if not word.startswith("-") or word == "--":
                break
            name = word.split("=", 1)[0]
            if name in risky or any(len(o) == 2 and word.startswith(o) for o in risky):
                return False
        return True


def _names_operand(words: Sequence[str], risky: Sequence[str]) -> bool:
    """Whether ``words`` (after the program) reach an operand, skipping options and the values of risky ones."""
    it = iter(words)
    for word in it:
        if not word.startswith("-"):
            return True
        if word in risky:  # `-c NAME=VALUE`: the next word is the option's value, not a subcommand
            next(it, None)
    return False


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


@dataclass(frozen=True)
class ToolRules:
    """The rules in force; the strictest that matches wins."""

    rules: tuple[ToolRule, ...] = field(default_factory=tuple)

    def decide(self, tool: str, host: str) -> ToolRule | None:
        """The strictest host rule for ``tool`` matching ``host``, or ``None`` when no rule speaks."""
        return strictest(r for r in self.rules if r.tool == tool and r.host is not None and r.matches(host))

    def __len__(self) -> int:
        return len(self.rules)

    def __add__(self, other: ToolRules) -> ToolRules:
        return ToolRules(self.rules + other.rules)


def strictest(rules: Iterable[ToolRule]) -> ToolRule | None:
    """deny > ask > allow; the first of equal strictness."""
    found: ToolRule | None = None
    for rule in rules:
        if found is None or _RANK[rule.decision] > _RANK[found.decision]:
            found = rule
    return found


def parse_rules(file_rules: Any, profile_rules: Any, where: str, profile: str | None = None) -> ToolRules:
    """Validate the file's and the profile's ``rules`` arrays; both apply.

    Raises:
        ConfigError: not an array of tables, an unknown key, an unknown tool, a bad host pattern or decision.
    """
    first = parse_rule_list(file_rules, where, "[[rules]]", "config")
    second = parse_rule_list(profile_rules, where, f"[[profiles.{profile}.rules]]", f"profile.{profile}")
    return first + second


def parse_rule_list(rules: Any, where: str, label: str, origin: str) -> ToolRules:
    """One ``rules`` array read from ``where`` (``label`` names it in errors; ``origin`` in the audit log)."""
    if rules is None:
        return ToolRules()
    if not isinstance(rules, list) or not all(isinstance(r, Mapping) for r in rules):
        raise ConfigError(f"{where}: {label} must be an array of tables (prefix or tool = ..., decision = ...).")
    return ToolRules(tuple(_one(body, f"{where}: {label} #{n}", origin, n) for n, body in enumerate(rules, 1)))


def _one(body: Mapping[str, Any], what: str, origin: str, number: int) -> ToolRule:
    inside = [k for k in body if k in _INTERNAL]
    if inside:
        raise ConfigError(f"{what}: unknown key '{inside[0]}'.", hint="See docs/approvals.md for how rules are written")
    try:
        rule = ToolRule(**dict(body))
    except ValidationError as exc:
        raise ConfigError(f"{what}: " + "; ".join(_problems(exc.errors())) + ".",
                          hint="See docs/approvals.md for how rules are written") from None
    return rule.model_copy(update={"origin": origin, "number": number})


def _problems(errors: Iterable[Any]) -> list[str]:
    out = []
    for err in errors:
        loc = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            out.append(f"unknown key '{loc}' (a rule has prefix or tool, decision, and host, arguments, workspaces)")
        elif err["type"] == "missing":
            out.append(f"missing key '{loc}'")
        else:
            msg = str(err["msg"]).removeprefix("Value error, ")
            out.append(f"'{loc}': {msg}" if loc else msg)
    return out
