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
    if session is not None:
        # A mistyped id showed a page of zeros and exit 0; a prefix of several merged them. Name one, as export does.
        from swebash_ai.agent.session_files import find_session

        folder = locations().sessions_dir
        found = find_session(folder, session)
        if found is None:
            raise UsageError(f"stats: no single session matches '{session}' in {folder} (/sessions in the app "
                             "lists them).")
        session = found.stem
    figures = collect(locations(), Window(session=session, since=since))
    from swebash_ai.safety.terminal_text import safe

    print(json.dumps(figures, indent=1) if as_json else safe(render(figures), visible=True))  # MCP tool names
    return ExitCode.OK
