"""Safety policies: pure functions that say allow, ask or deny (see docs/safety.md)."""

from __future__ import annotations

from swebash_ai.safety.verdict import Decision, Verdict

__all__ = ["Decision", "Verdict"]
