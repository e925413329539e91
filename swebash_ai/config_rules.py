"""``[[rules]]`` tables: the user's decisions about tool calls, as data loaded with the settings.

A rule names a tool, what it matches, and a decision::

    [[rules]]
    tool = "fetch_url"
    host = "*.python.org"
    decision = "allow"     # or "ask", or "deny"

For now only ``fetch_url`` rules exist, matched on the URL's host: a name (``docs.python.org``), ``*.``
and a domain (``*.python.org``: its subdomains and the domain itself), or ``*`` (every host). When several
rules match, the strictest wins (deny > ask > allow), whatever their order. Rules sit in the config file's
top level and in profiles (``[[profiles.NAME.rules]]``); both apply.

A rule can only decide what the tool's own policy leaves open: what the policy denies (a ``file://`` URL, a
loopback or private address) stays denied whatever a rule says. The loop's decision pipeline will take
rules for other tools later; this module is where they will be parsed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from swebash_ai.errors import ConfigError

RuleDecision = Literal["allow", "ask", "deny"]

RULE_TOOLS = frozenset({"fetch_url"})
"""Tools rules can be written for (so far)."""

_RANK = {"allow": 0, "ask": 1, "deny": 2}
_LABEL = re.compile(r"^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$")


def _valid_host(host: str) -> bool:
    labels = host.split(".")
    return 0 < len(host) <= 253 and all(_LABEL.match(label) for label in labels)


class ToolRule(BaseModel):
    """One ``[[rules]]`` table."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str
    """The tool the rule is about (``fetch_url``)."""
    host: str
    """A host name, ``*.`` and a domain (the domain and its subdomains), or ``*`` (every host)."""
    decision: RuleDecision
    """``allow`` runs without asking, ``ask`` always asks, ``deny`` never runs."""

    @field_validator("tool")
    @classmethod
    def _known_tool(cls, value: str) -> str:
        if value not in RULE_TOOLS:
            raise ValueError(f"rules can be written for {', '.join(sorted(RULE_TOOLS))} only (got {value!r})")
        return value

    @field_validator("host")
    @classmethod
    def _host_pattern(cls, value: str) -> str:
        host = value.strip().lower().rstrip(".")
        bare = host[2:] if host.startswith("*.") else host
        if host != "*" and not _valid_host(bare):
            raise ValueError(
                f"{value!r} is not a host pattern: write a host name (docs.python.org), '*.' and a domain "
                "(*.python.org) or '*', without a scheme, port or path"
            )
        return host

    def matches(self, host: str) -> bool:
        host = host.lower().rstrip(".")
        if self.host == "*":
            return True
        if self.host.startswith("*."):
            domain = self.host[2:]
            return host == domain or host.endswith("." + domain)
        return host == self.host

    def describe(self) -> str:
        return f'rule {self.decision} {self.tool} host "{self.host}"'


@dataclass(frozen=True)
class ToolRules:
    """The rules in force; :meth:`decide` picks the strictest that matches."""

    rules: tuple[ToolRule, ...] = field(default_factory=tuple)

    def decide(self, tool: str, host: str) -> ToolRule | None:
        """The strictest rule for ``tool`` matching ``host``, or ``None`` when no rule speaks."""
        found: ToolRule | None = None
        for rule in self.rules:
            if rule.tool != tool or not rule.matches(host):
                continue
            if found is None or _RANK[rule.decision] > _RANK[found.decision]:
                found = rule
        return found

    def __len__(self) -> int:
        return len(self.rules)


def parse_rules(file_rules: Any, profile_rules: Any, where: str, profile: str | None = None) -> ToolRules:
    """Validate the file's and the profile's ``rules`` arrays; both apply.

    Raises:
        ConfigError: not an array of tables, an unknown key, an unknown tool, a bad host pattern or decision.
    """
    parsed: list[ToolRule] = []
    for rules, label in ((file_rules, "[[rules]]"), (profile_rules, f"[[profiles.{profile}.rules]]")):
        if rules is None:
            continue
        if not isinstance(rules, list) or not all(isinstance(r, Mapping) for r in rules):
            raise ConfigError(f"{where}: {label} must be an array of tables (tool = ..., host = ..., decision = ...).")
        parsed.extend(_one(body, f"{where}: {label} #{n}") for n, body in enumerate(rules, 1))
    return ToolRules(tuple(parsed))


def _one(body: Mapping[str, Any], what: str) -> ToolRule:
    try:
        return ToolRule(**dict(body))
    except ValidationError as exc:
        raise ConfigError(f"{what}: " + "; ".join(_problems(exc.errors())) + ".",
                          hint="See docs/safety.md (Ways out) for how rules are written.") from None


def _problems(errors: Iterable[Any]) -> list[str]:
    out = []
    for err in errors:
        loc = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            out.append(f"unknown key '{loc}' (a rule has tool, host and decision)")
        elif err["type"] == "missing":
            out.append(f"missing key '{loc}'")
        else:
            msg = str(err["msg"]).removeprefix("Value error, ")
            out.append(f"'{loc}': {msg}" if loc else msg)
    return out
