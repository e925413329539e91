"""Completion of ``@path`` in the prompt: the workspace's paths, matched fuzzily segment by segment.

:class:`PathIndex` walks the working directory once (bounded: :data:`MAX_ENTRIES` entries, ``.git`` never
entered, a gitignored folder listed but not entered) and answers :meth:`PathIndex.candidates` from memory.
A protected path (``.env``, keys, a link to one) is never in the index, so it is never offered; a
gitignored one is offered after all the others. No UI library here: the prompt widget asks, the app
builds the index in a thread.

Matching: the query is cut at ``/``; its last piece must match the last segment of a path and the pieces
before it earlier segments, in order, each as a prefix, a substring or a subsequence (``@s/ap`` finds
``src/app.py``; ``@app`` finds every ``app.py``). A query ending in ``/`` lists what that folder holds.
"""

from __future__ import annotations

import os
import re
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from swebash_ai.safety.paths import PathPolicy
from swebash_ai.safety.unasked import UnaskedRefusal, read_unasked
from swebash_ai.storage.pending_writes import is_temporary

MAX_ENTRIES = 20_000
MAX_DEPTH = 12
_START = re.compile(r"(?:^|(?<=[\s(\[{]))@")


@dataclass(frozen=True)
class Candidate:
    """One path to offer, relative to the working directory (a folder ends with ``/``)."""

    path: str
    is_dir: bool
    ignored: bool = False

    @property
    def insertion(self) -> str:
        """What replaces ``@query``: quoted when the path holds a space; a file is followed by a space."""
        text = f'@"{self.path}"' if " " in self.path else f"@{self.path}"
        return text if self.is_dir else text + " "


def mention_at(text: str, cursor: int) -> tuple[int, str] | None:
    """The ``@query`` being typed that ends at ``cursor``: (where its ``@`` is, the query), else ``None``."""
    before = text[:cursor]
    for m in reversed(list(_START.finditer(before))):
        query = before[m.end():]
        if query.startswith('"'):
            if '"' in query[1:]:
                return None
            return m.start(), query[1:]
        if any(c.isspace() for c in query) or "'" in query:
            return None
        return m.start(), query
    return None


def _tier(q: str, s: str) -> int | None:
    """0: a prefix, 1: a substring, 2: a subsequence; ``None``: no match (both lower case)."""
    if s.startswith(q):
        return 0
    if q in s:
        return 1
    it = iter(s)
    return 2 if all(c in it for c in q) else None


class PathIndex:
    """The workspace's paths for completion (see the module docstring)."""

    def __init__(self, root: Path, policy: PathPolicy, *, max_entries: int = MAX_ENTRIES) -> None:
        self.root = root
        self.policy = policy
        self.max_entries = max_entries
        self.entries: list[Candidate] = []
        self._segs: list[tuple[str, ...]] = []  # each entry's segments, lower case (made at the first query)
        self.complete = True
        """False when the walk stopped at ``max_entries``."""

    def build(self) -> PathIndex:
        """Walk the workspace (in a thread: it reads directories and ``.gitignore`` files)."""
        from swebash_ai.tools.guard import PolicyGate

        gate = PolicyGate(self.policy)
        found: list[Candidate] = []
        queue: deque[tuple[str, str, int, tuple[tuple[str, object], ...], bool]] = deque(
            [(str(self.root), "", 1, (), False)])
        while queue:
            directory, rel, depth, specs, ignored = queue.popleft()
            specs = (*specs, *self._gitignore(directory, rel))
            try:
                with os.scandir(directory) as it:
                    items = sorted(it, key=lambda e: e.name)
            except OSError:
                continue
            full = gate.full_check_below(directory)
            for entry in items:
                if entry.name == ".git" or is_temporary(entry.name) or gate.denied(entry.path, entry.name, full):
                    continue
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                    linked = entry.is_symlink() or (not is_dir and entry.stat(follow_symlinks=False).st_nlink > 1)
                except OSError:
                    continue
                if linked and gate.read_denied(entry.path):  # a link to a protected file is protected too
                    continue
                erel = rel + entry.name
                hidden = ignored or _ignored(specs, erel + ("/" if is_dir else ""))
                found.append(Candidate(erel + ("/" if is_dir else ""), is_dir, hidden))
                if len(found) >= self.max_entries:
                    self.entries, self.complete = found, False
                    return self
                if is_dir and not hidden and depth < MAX_DEPTH:
                    queue.append((entry.path, erel + "/", depth + 1, specs, hidden))
        self.entries, self.complete = found, True
        return self

    def _gitignore(self, directory: str, rel: str) -> tuple[tuple[str, object], ...]:
        """The folder's ``.gitignore`` as (folder, spec); read through the path guard like every file the
        app reads by itself."""
        path = Path(directory) / ".gitignore"
        if not os.path.lexists(path):
            return ()
        got = read_unasked(path, self.policy, within=(self.root,), max_bytes=256 * 1024)
        if isinstance(got, UnaskedRefusal):
            return ()
        import pathspec

        return ((rel, pathspec.GitIgnoreSpec.from_lines(got.text.splitlines())),)

    def candidates(self, query: str, limit: int = 8) -> list[Candidate]:
        """The best ``limit`` paths for ``query``: by match quality, folders first, gitignored last."""
        pieces = query.removeprefix("./").lower().split("/")
        last = pieces[-1]
        # Most names do not hold the last piece's letters in order: one linear regex search (in C) drops them.
        quick = re.compile("".join(f"[^{re.escape(c)}]*{re.escape(c)}" for c in last))
        if len(self._segs) != len(self.entries):
            self._segs = [tuple(c.path.rstrip("/").lower().split("/")) for c in self.entries]
        scored: list[tuple[tuple[int, int, int, int, int, str], Candidate]] = []
        for cand, segs in zip(self.entries, self._segs, strict=True):
            if last and not quick.match(segs[-1]):
                continue
            score = _score(pieces, segs)
            if score is not None:
                tier, skipped = score
                key = (int(cand.ignored), tier, int(not cand.is_dir), skipped, len(segs), cand.path.lower())
                scored.append((key, cand))
        scored.sort(key=lambda item: item[0])
        return [cand for _key, cand in scored[:limit]]


def _score(pieces: list[str], segs: tuple[str, ...]) -> tuple[int, int] | None:
    """(tier of the last piece, segments skipped) when the pieces match the segments, else ``None``."""
    if pieces[-1] == "":  # "src/": what the folder holds
        parents = pieces[:-1]
        if len(segs) != len(parents) + 1:
            return None
        if any(p and _tier(p, s) is None for p, s in zip(parents, segs, strict=False)):
            return None
        return 0, 0
    tier = _tier(pieces[-1], segs[-1])
    if tier is None:
        return None
    at = 0
    for piece in pieces[:-1]:  # the earlier pieces match earlier segments, in order
        while at < len(segs) - 1 and _tier(piece, segs[at]) is None:
            at += 1
        if at >= len(segs) - 1:
            return None
        at += 1
    return tier, len(segs) - len(pieces)


def _ignored(specs: tuple[tuple[str, object], ...], rel: str) -> bool:
    return any(rel.startswith(base) and spec.match_file(rel[len(base):])  # type: ignore[attr-defined]
               for base, spec in specs)
