"""``swebash-ai stats`` and ``/stats``: what the tools did, how well and at what cost, from stored data only.

Three sources, all already on disk: the audit log (one line per tool call: outcome, duration, decision and
who decided), ``turns.jsonl`` (one line per turn: model requests, retries, tokens, cost, tool rounds) and,
for sessions saved before turns were recorded, the sessions themselves (their tool rounds per turn).
Nothing is sent anywhere; the figures are the same whatever front end made them.

Speed: a year of use is tens of thousands of lines; each is one ``json.loads`` and a few dict reads, and
timestamps are compared as numbers (the audit log's are parsed only when a window is asked for).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swebash_ai.storage.locations import Locations

WIDTH = 80
_SINCE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_since(text: str) -> float:
    """``7d``, ``24h``, ``30m``, ``2w``, ``90s`` -> seconds. Raises ValueError with a usable message."""
    match = _SINCE.match(text)
    if not match:
        raise ValueError(f"--since takes a duration such as 30m, 24h, 7d or 2w, not {text!r}")
    return float(match.group(1)) * _UNITS[match.group(2)]


@dataclass(frozen=True)
class Window:
    """Which records count: one session (an id or a unique prefix), everything since a time, or all."""

    session: str | None = None
    since: float | None = None
    """A Unix time; records before it are left out."""

    def after(self, stamp: Any) -> bool:
        """Whether an audit time (``2026-11-25T14:30:00+0000``) is at or after ``since``.

        Most lines are days away from the edge: their date alone decides (an offset is under a day), and
        only the two days around it are parsed in full (parsing 50,000 times costs more than the rest).
        """
        if self.since is None:
            return True
        text = str(stamp)
        day = text[:10]
        low, high = self._edge_days
        if not (day[:4].isdigit() and day[4:5] == "-"):
            return False  # not an audit time: a foreign or damaged line does not count
        if day > high:
            return True
        if day < low:
            return False
        when = _audit_time(text)
        return when is not None and when >= self.since

    @functools.cached_property
    def _edge_days(self) -> tuple[str, str]:
        since = self.since or 0.0
        return dt.date.fromtimestamp(since - 86400).isoformat(), dt.date.fromtimestamp(since + 86400).isoformat()

    def takes_session(self, session_id: str) -> bool:
        return self.session is None or session_id == self.session or session_id.startswith(self.session)


_DECODE = json.JSONDecoder().decode  # str in, no encoding sniffing per line (a fifth of the time on bytes)


def _lines(path: Path, skip: Callable[[str], bool] | None = None) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSONL file; a torn or foreign line is skipped (the logs are append-only).

    ``skip`` drops a line before it is parsed (cheaper than parsing what would be thrown away).
    """
    try:
        fh = path.open(encoding="utf-8", errors="replace")
    except OSError:
        return
    with fh:
        for raw in fh:
            if skip is not None and skip(raw):
                continue
            try:
                obj = _DECODE(raw)
            except ValueError:
                continue
            if isinstance(obj, dict):
                yield obj


def _tool_message(line: str) -> bool:
    """A saved tool result (the bulk of a session: file contents, command output), which stats never needs."""
    return line.startswith('{"role": "tool"')


def _audit_time(text: Any) -> float | None:
    try:
        return dt.datetime.strptime(str(text), "%Y-%m-%dT%H:%M:%S%z").timestamp()
    except ValueError:
        return None


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (``q`` in 0..100) of ``values``; ``None`` when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def _server_of(tool: str) -> str | None:
    if tool.startswith("mcp__"):
        parts = tool.split("__", 2)
        return parts[1] if len(parts) == 3 else None
    return None


# Who let a call run, from the audit log's ``decision`` and ``decided_by`` (see agent/loop.py).
def _decision_kind(decision: str, decided_by: str, outcome: str) -> str:
    if decision == "deny":
        return "denied_by_policy"
    if decision == "allow":
        return "auto_allowed"
    if decision != "ask":
        return "other"
    if outcome == "denied":
        return "denied_by_user" if decided_by == "user" else "denied_unattended"
    if decided_by in ("user", "user-outside"):
        return "approved_once"
    if decided_by == "user-session":
        return "approved_for_session"
    if decided_by == "session":
        return "covered_by_session"
    if decided_by.startswith("rule"):
        return "allowed_by_rule"
    if decided_by.startswith("mode"):
        return "allowed_by_mode"
    if decided_by.startswith("hook"):
        return "allowed_by_hook"
    if decided_by == "--yes":
        return "allowed_by_yes"
    if decided_by == "no-confirm":
        return "allowed_no_confirm"
    return "other"


def _tool_stats(audit: Iterable[dict[str, Any]], window: Window) -> tuple[dict[str, Any], Counter[str], set[str]]:
    per_tool: dict[str, Counter[str]] = defaultdict(Counter)
    durations: dict[str, list[float]] = defaultdict(list)
    decisions: Counter[str] = Counter()
    sessions: set[str] = set()
    for entry in audit:
        session = str(entry.get("session", ""))
        if not window.takes_session(session):
            continue
        if window.since is not None and not window.after(entry.get("time")):
            continue
        tool = str(entry.get("tool", "?"))
        outcome = str(entry.get("outcome", "?"))
        per_tool[tool]["calls"] += 1
        per_tool[tool][outcome] += 1
        duration = entry.get("duration")
        if isinstance(duration, int | float):
            durations[tool].append(float(duration))
        if entry.get("decision") == "ask" and entry.get("decided_by") in ("user", "user-session", "user-outside"):
            decisions["asked"] += 1  # a person answered (yes, yes for the session, or no)
        decisions[_decision_kind(str(entry.get("decision", "")), str(entry.get("decided_by", "")), outcome)] += 1
        where = entry.get("sandbox")
        if isinstance(where, str):  # commands only (absent in lines written before the sandbox)
            decisions["sandboxed" if where not in ("none", "unavailable") and not where.startswith("outside")
                      else "outside_approved" if where.startswith("outside") else "unconfined"] += 1
            decisions["sandbox_blocked"] += 1 if entry.get("sandbox_blocked") else 0
        sessions.add(session)
    tools: dict[str, Any] = {}
    for name in sorted(per_tool, key=lambda n: (-per_tool[n]["calls"], n)):
        counts = per_tool[name]
        tools[name] = {
            "server": _server_of(name),
            "calls": counts["calls"],
            **{k: counts[k] for k in ("ok", "error", "denied", "timeout", "cancelled")},
            "p50": percentile(durations[name], 50),
            "p95": percentile(durations[name], 95),
        }
    return tools, decisions, sessions


def _old_session_turns(folder: Path, window: Window, recorded: set[str]) -> list[int]:
    """Tool rounds per turn of saved sessions that have no turn records (saved before they were kept)."""
    rounds: list[int] = []
    if not folder.is_dir():
        return rounds
    for path in folder.glob("*.jsonl"):
        if path.stem in recorded or not window.takes_session(path.stem):
            continue
        try:
            if window.since is not None and path.stat().st_mtime < window.since:
                continue
        except OSError:
            continue
        current: int | None = None
        for msg in _lines(path, _tool_message):
            role = msg.get("role")
            if role == "user":
                if current is not None:
                    rounds.append(current)
                current = 0
            elif role == "assistant" and msg.get("tool_calls") and current is not None:
                current += 1
        if current is not None:
            rounds.append(current)
    return rounds


def collect(where: Locations, window: Window = Window()) -> dict[str, Any]:
    """Every figure ``stats`` prints, as plain data (the ``--json`` form)."""
    tools, decisions, _ = _tool_stats(_lines(where.audit_log), window)
    rounds: list[int] = []
    reasons: Counter[str] = Counter()
    latencies: list[float] = []
    first_tokens: list[float] = []
    failed_requests = retries = 0
    tokens = {k: {"turns": 0, "prompt": 0, "cached": 0, "completion": 0} for k in ("with_tools", "without_tools")}
    cost = 0.0
    unpriced = 0
    recorded: set[str] = set()
    models: Counter[str] = Counter()
    agents: dict[str, Counter[str]] = defaultdict(Counter)
    lsp = {"checks": 0, "seconds": 0.0, "timeouts": 0}
    for turn in _lines(where.turns_log):
        session = str(turn.get("session", ""))
        recorded.add(session)
        if not window.takes_session(session):
            continue
        when = turn.get("time")
        if window.since is not None and (not isinstance(when, int | float) or when < window.since):
            continue
        reasons[str(turn.get("reason", "?"))] += 1
        rounds.append(int(turn.get("rounds", 0)))
        for request in turn.get("requests", []):
            if not isinstance(request, list) or len(request) < 3:
                continue
            latencies.append(float(request[0]))
            failed_requests += 0 if request[2] else 1
            if len(request) > 3 and isinstance(request[3], int | float):
                first_tokens.append(float(request[3]))
        retries += int(turn.get("retries", 0))
        lane = tokens["with_tools" if turn.get("tool_calls") else "without_tools"]
        lane["turns"] += 1
        lane["prompt"] += int(turn.get("prompt_tokens", 0))
        lane["completion"] += int(turn.get("completion_tokens", 0))
        lane["cached"] += int(turn.get("cached_tokens", 0))  # absent in lines written before it was recorded
        if isinstance(turn.get("cost"), int | float):
            cost += float(turn["cost"])
        elif turn.get("requests"):
            unpriced += 1
        if turn.get("model"):
            models[str(turn["model"])] += 1
        for name, figures in (turn.get("agents") or {}).items():  # helper agents the turn's task calls ran
            if isinstance(figures, dict):
                agents[str(name)].update({k: int(v) for k, v in figures.items()
                                          if k != "cost" and isinstance(v, int) and not isinstance(v, bool)})
        if isinstance(got := turn.get("lsp"), list) and len(got) == 3:  # checks, seconds, timeouts
            lsp["checks"] += int(got[0])
            lsp["seconds"] += float(got[1])
            lsp["timeouts"] += int(got[2])
    older = _old_session_turns(where.sessions_dir, window, recorded)
    since = None if window.since is None else dt.datetime.fromtimestamp(window.since).isoformat(" ", "seconds")
    return {
        "window": {"session": window.session, "since": since},
        "tools": tools,
        "decisions": dict(decisions),
        "turns": {
            "count": len(rounds) + len(older),
            "recorded": len(rounds),
            "from_saved_sessions": len(older),
            "by_reason": dict(reasons),
            "rounds": {str(k): v for k, v in sorted(Counter(rounds + older).items())},
        },
        "requests": {
            "count": len(latencies),
            "failed": failed_requests,
            "retries": retries,
            "p50": percentile(latencies, 50),
            "p95": percentile(latencies, 95),
            "first_token_p50": percentile(first_tokens, 50),
        },
        "models": dict(models),
        "agents": {name: dict(figures) for name, figures in sorted(agents.items())},
        "tokens": tokens,
        "cost": {"usd": round(cost, 6), "turns_without_price": unpriced},
        "language_servers": {**lsp, "seconds": round(float(lsp["seconds"]), 3)},
    }


# --- text, 80 columns ------------------------------------------------------------------------------------
def _secs(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value * 1000:.0f}ms" if value < 1 else f"{value:.2f}s"


def _n(count: int, one: str, many: str = "") -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


def _bar(value: int, top: int, width: int = 30) -> str:
    if top <= 0 or value <= 0:
        return ""
    return "█" * max(1, round(value / top * width))


def _title(text: str) -> str:
    return f"\n{text}\n{'─' * min(WIDTH, len(text))}"


def render(stats: dict[str, Any]) -> str:
    """The report as plain text that fits 80 columns."""
    window = stats["window"]
    scope = (f"session {window['session']}" if window["session"] else
             f"since {window['since']}" if window["since"] else "all recorded use")
    out = [f"swebash-ai statistics: {scope}"]
    tools = stats["tools"]
    out.append(_title("Tool calls"))
    if not tools:
        out.append("no tool calls recorded")
    else:
        out.append(f"{'tool':<28}{'calls':>6}{'ok':>6}{'error':>6}{'denied':>7}{'timeout':>8}{'p50':>9}{'p95':>9}")
        builtin = {n: t for n, t in tools.items() if t["server"] is None}
        servers: dict[str, dict[str, Any]] = defaultdict(dict)
        for name, t in tools.items():
            if t["server"] is not None:
                servers[t["server"]][name] = t
        groups: list[tuple[str | None, dict[str, Any]]] = [(None, builtin)]
        groups += sorted(servers.items())
        for server, group in groups:
            if server is not None:
                out.append(f"MCP server {server}:")
            for name, t in group.items():
                label = name.split("__", 2)[2] if server is not None else name
                label = ("  " + label if server is not None else label)[:27]
                out.append(f"{label:<28}{t['calls']:>6}{t['ok']:>6}{t['error']:>6}{t['denied']:>7}{t['timeout']:>8}"
                           f"{_secs(t['p50']):>9}{_secs(t['p95']):>9}")
    decisions = stats["decisions"]
    out.append(_title("Approval decisions"))
    labels = [
        ("asked", "asked a person"),
        ("auto_allowed", "allowed by the classifier (not asked)"),
        ("approved_once", "asked, approved once"),
        ("approved_for_session", "asked, approved for the session"),
        ("covered_by_session", "covered by a session approval"),
        ("allowed_by_rule", "allowed by a rule"),
        ("allowed_by_mode", "allowed by the approval mode"),
        ("allowed_by_hook", "allowed by a hook"),
        ("allowed_by_yes", "allowed by --yes"),
        ("allowed_no_confirm", "allowed: confirmation off"),
        ("denied_by_user", "asked, denied"),
        ("denied_unattended", "denied: nobody to ask"),
        ("denied_by_policy", "denied by policy (never asked)"),
    ]
    top = max((decisions.get(k, 0) for k, _ in labels), default=0)
    shown = [(label, decisions.get(k, 0)) for k, label in labels if decisions.get(k, 0)]
    if not shown:
        out.append("no decisions recorded")
    for label, n in shown:
        out.append(f"{label:<40}{n:>6}  {_bar(n, top)}")
    where = [("sandboxed", "ran in the sandbox"), ("outside_approved", "ran outside it: you approved that call"),
             ("unconfined", "ran unconfined (read-only, or no sandbox)"),
             ("sandbox_blocked", "the sandbox blocked something")]
    if any(decisions.get(k) for k, _ in where):
        out.append(_title("Commands and the sandbox"))
        top = max(decisions.get(k, 0) for k, _ in where)
        out += [f"{label:<40}{decisions.get(k, 0):>6}  {_bar(decisions.get(k, 0), top)}" for k, label in where]
    turns = stats["turns"]
    out.append(_title("Turns"))
    older = turns["from_saved_sessions"]
    out.append(f"{_n(turns['count'], 'turn')}" + (f" ({older} from sessions saved before turns were recorded)"
                                                  if older else ""))
    if turns["by_reason"]:
        out.append("ended: " + ", ".join(f"{k} {v}" for k, v in sorted(turns["by_reason"].items())))
    if turns["rounds"]:
        out.append("tool rounds per turn:")
        top = max(turns["rounds"].values())
        for k, v in turns["rounds"].items():
            out.append(f"  {k:>3} {v:>6}  {_bar(v, top)}")
    lsp = stats.get("language_servers") or {}
    if lsp.get("checks"):
        out.append(f"language servers: {_n(lsp['checks'], 'check')} after edits, {lsp['seconds']:.1f}s waited, "
                   f"{lsp['timeouts']} timed out")
    req = stats["requests"]
    out.append(_title("Model requests"))
    out.append(f"{_n(req['count'], 'request')}, {req['failed']} failed, {_n(req['retries'], 'retry', 'retries')}")
    out.append(f"latency p50 {_secs(req['p50'])}, p95 {_secs(req['p95'])}; first token p50 "
               f"{_secs(req['first_token_p50'])}")
    if stats["models"]:
        out.append("models: " + ", ".join(f"{m} ({_n(n, 'turn')})" for m, n in
                                          sorted(stats["models"].items(), key=lambda kv: -kv[1])))
    if stats.get("agents"):
        out.append(_title("Helper agents (task calls; their tokens count in the turns' too)"))
        out.append(f"{'agent':<24}{'runs':>6}{'requests':>10}{'tool calls':>12}{'tokens in':>13}{'out':>10}")
        for name, a in stats["agents"].items():
            out.append(f"{name[:23]:<24}{a.get('runs', 0):>6}{a.get('requests', 0):>10}{a.get('tool_calls', 0):>12}"
                       f"{a.get('prompt_tokens', 0):>13,}{a.get('completion_tokens', 0):>10,}")
    out.append(_title("Tokens"))
    for key, label in (("with_tools", "turns with tool calls"), ("without_tools", "turns without tools")):
        t = stats["tokens"][key]
        out.append(f"{label:<24}{t['turns']:>6} turns {t['prompt']:>12,} in {t['completion']:>10,} out")
    prompt = sum(t["prompt"] for t in stats["tokens"].values())
    if prompt:
        cached = sum(t["cached"] for t in stats["tokens"].values())
        out.append(f"cached prompt tokens: {cached:,} ({cached / prompt:.0%} of the tokens in, read from the "
                   "provider's cache)")
    cost = stats["cost"]
    unpriced = cost["turns_without_price"]
    if unpriced and not cost["usd"]:
        out.append(f"estimated cost: unknown (no price known for the models of {_n(unpriced, 'turn')})")
    else:
        note = f" ({_n(unpriced, 'turn')} with no known price, not counted)" if unpriced else ""
        out.append(f"estimated cost: ${cost['usd']:.4f}{note}")
    return "\n".join(line[:WIDTH] for line in out)
