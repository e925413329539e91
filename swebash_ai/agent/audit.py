"""Audit log: one JSON line per tool call, saying what ran (or not) and *why*, with secrets redacted.

Writes are appends of whole lines (one ``write`` each), so concurrent calls never interleave a line. The
log is readable by its owner alone (0600 in 0700 folders).
A failure to write the log is logged and never breaks a turn.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from swebash_ai.storage import private_files

log = logging.getLogger(__name__)


class AuditLog:
    def __init__(self, path: Path, session_id: str = "", fixed: dict[str, str] | None = None) -> None:
        self.path = path
        self.session_id = session_id
        self.fixed = dict(fixed or {})
        """Fields every line of this log carries (a child agent's ``agent`` and ``task_call``)."""

    def for_child(self, agent: str, task_call: str) -> AuditLog:
        """The same log, each line naming the child agent that made the call and the parent's ``task`` call it
        runs under (a nested child: ``TASK/CALL``), so a line can be traced to who asked for it."""
        under = f"{self.fixed['task_call']}/{task_call}" if "task_call" in self.fixed else task_call
        return AuditLog(self.path, self.session_id, {**self.fixed, "agent": agent, "task_call": under})

    def record(self, **fields: Any) -> None:
        from swebash_ai.safety.redact import redact  # with the first tool call: an answer alone records nothing

        entry = {"time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "session": self.session_id, **self.fixed,
                 **redact(fields)}
        line = json.dumps(entry, ensure_ascii=False, default=str) + "\n"
        try:
            with private_files.open_append(self.path) as fh:
                fh.write(line.encode("utf-8"))
        except OSError as exc:
            log.warning("cannot write the audit log %s: %s", self.path, exc)
