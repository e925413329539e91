"""``swebash-ai stats``: what the tools did, how well and at what cost, read from what is stored here."""

from __future__ import annotations

from swebash_ai.errors import ExitCode, UsageError


def run_stats(session: str | None, since_text: str | None, *, as_json: bool) -> int:
    """``swebash-ai stats``: the figures of :mod:`swebash_ai.observe.stats`, as text or one JSON object."""
    import json
    import time

    from swebash_ai.observe.stats import Window, collect, parse_since, render
    from swebash_ai.storage.locations import locations

    try:
        since = None if since_text is None else time.time() - parse_since(since_text)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    figures = collect(locations(), Window(session=session, since=since))
    from swebash_ai.safety.terminal_text import safe

    print(json.dumps(figures, indent=1) if as_json else safe(render(figures), visible=True))  # MCP tool names
    return ExitCode.OK
