"""The one answer every safety check gives: allow, ask or deny, with reasons a person can read.

A verdict is a value, never an exception: the loop turns ``deny`` into a tool result the model sees,
``ask`` into a question for the user (or a denial when nobody can answer), ``allow`` into a run.
``rule`` names what decided, so the audit log can say *why* a call ran or did not.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

Decision = Literal["allow", "ask", "deny"]

_RANK: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}


@dataclass(frozen=True)
class Verdict:
    """The outcome of a safety check.

    Attributes:
        decision: ``"allow"`` runs without asking, ``"ask"`` needs the user's approval, ``"deny"`` never runs.
        reasons: Human-readable reasons, most important first (empty for a plain allow).
        rule: A short stable identifier of the rule that decided (for the audit log), e.g. ``"path.denied"``.
        severe: The call could be catastrophic (deleting ``/``, the home directory, the whole workspace). An
            ``ask`` that is severe needs a person: a blanket ``--yes`` never covers it.
    """

    decision: Decision
    reasons: list[str] = field(default_factory=list)
    rule: str = ""
    severe: bool = False

    @classmethod
    def allow(cls, *reasons: str, rule: str = "allow") -> Verdict:
        return cls("allow", list(reasons), rule)

    @classmethod
    def ask(cls, *reasons: str, rule: str = "ask") -> Verdict:
        return cls("ask", list(reasons), rule)

    @classmethod
    def deny(cls, *reasons: str, rule: str = "deny") -> Verdict:
        return cls("deny", list(reasons), rule)

    @property
    def allowed(self) -> bool:
        return self.decision == "allow"

    def combine(self, other: Verdict) -> Verdict:
        """The stricter of two verdicts; reasons of equal strictness are merged."""
        a, b = _RANK[self.decision], _RANK[other.decision]
        severe = self.severe or other.severe
        if a != b:
            winner = self if a > b else other
            return winner if winner.severe == severe else replace(winner, severe=severe)
        merged = self.reasons + [r for r in other.reasons if r not in self.reasons]
        return Verdict(self.decision, merged, self.rule or other.rule, severe)

    @staticmethod
    def strictest(verdicts: list[Verdict]) -> Verdict:
        """Combine many verdicts; an empty list allows."""
        out = Verdict.allow()
        for v in verdicts:
            out = out.combine(v)
        return out
