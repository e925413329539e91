"""Private keys in a line range of a file, judged on the file around the range, not on the range alone.

Contract:
    ``read_file`` with a line range shows each line as a read of the whole file would show it once its
    private keys are removed (:func:`~swebash_ai.safety.secrets.private_key_lines`): a line of a key block
    or of a headerless key body is removed whatever the range, and no other line is. The result counts the
    blocks it touched (``ToolResult.keys_removed``), so the loop's one note tells the model about them.
    :func:`shown_without_keys` does it for a file read whole into memory; :func:`streamed_without_keys` for
    a file over ``fs_max_size``, streamed line by line: it reads the :data:`LOOKBACK` bytes before the range
    again (a seek: the lines before the range are skipped in chunks by :func:`skip_lines`, which keeps only
    the last BEGIN line still open), reads on past the range while the lines may still belong to a key
    body that runs into it (at most :data:`LOOKAHEAD` lines), and judges that window.

Why:
    The loop scans every result, but a scan of the range alone cannot recognise two lines from the middle
    of a key: the header above it, the DER start of a headerless body (``sed -n 2,30p key.pem`` kept in a
    log), the END line below are all out of sight, and two base64 lines are also what a certificate or a
    data URI looks like. The file shows which they are.

    A key header above the range is followed the way the whole-file scan follows it: :func:`skip_lines` keeps
    the headers that come after the last key END line (the block they may open is still open where the range
    begins), and :func:`open_key_head` finds the first of them with key material within reach, as the scan
    does: the header of the block the range begins in, if any. A block that opens in the window (its header
    at most :data:`LOOKBACK` bytes above the range: every real key, 8 KB at most) is judged on the window like
    a block in the range, so the lines of a log around a key are shown and the key's lines masked. What is
    refused (:class:`RangeNotJudged`, with the reason) is what the window cannot judge: a range that begins
    inside a block opened further up than the window (an END line missing, or a block longer than any key),
    and more headers without their END than :data:`MAX_HEADS` to follow.

    A run of body lines that began more than :data:`LOOKBACK` bytes before the range has its start out of
    sight: the window is then judged like any middle of a run (three full lines are a key), the safe side.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import BinaryIO

from swebash_ai.safety.key_body import bytes_may_hold_key_body
from swebash_ai.safety.secrets import KEY_LINE_PATTERNS, opens_key_block, private_key_lines

__all__ = [
    "LOOKAHEAD",
    "LOOKBACK",
    "MAX_HEADS",
    "RangeNotJudged",
    "Skipped",
    "open_key_head",
    "shown_without_keys",
    "skip_lines",
    "streamed_without_keys",
]

# Bytes before the range: more than any key body (an 8192-bit RSA key in PKCS#8 is about 6 KB), and more than
# the 100,000 characters the body check looks back for an open BEGIN CERTIFICATE or PGP block.
LOOKBACK = 128 * 1024
LOOKAHEAD = 256  # lines
_SHORT = 512  # bytes: a longer line is no body line (64 or 70 characters, and a prefix)
_CHUNK = 1 << 20
_CARRY = 128
# The lines the whole-file scan opens and closes a private key block with (safety/secrets.py), on bytes.
_KEY_LINES = re.compile(b"(?P<begin>%s)|%s" % tuple(p.encode() for p in KEY_LINE_PATTERNS))
MAX_HEADS = 64
"""How many private key headers without their END line :func:`skip_lines` keeps, in order (a file with more, as
read_file meets them, is refused rather than judged: see :func:`open_key_head`)."""
_HEAD_READ = 8 * 1024  # bytes read at a header to see whether key material follows it (600 characters)
_ARMOR = re.compile(rb"-----? ?(?P<what>BEGIN|END) [A-Z0-9 ]+? ?-{4,5}")  # a literal start: fast to search
# How far above a run of body lines an open BEGIN makes it public (key_body._inside_public_block's reach): a
# BEGIN further up than that is not let off here either, so a streamed range is never judged more leniently.
_PUBLIC_REACH = 100_000
_BODY = re.compile(rb"[A-Za-z0-9+/]{40,}")


def shown_without_keys(text: str, lines: list[str], first: int, last: int) -> tuple[list[str], int]:
    """Lines ``first..last`` (0-based, inclusive) of ``lines`` (``text`` split into lines) with the lines of
    the file's private keys removed, and how many key blocks they touch."""
    keys = private_key_lines(text)
    if not keys.blocks:
        return lines[first : last + 1], 0
    return [keys.shown.get(i, lines[i]) for i in range(first, last + 1)], keys.blocks_in(first, last)


@dataclass(frozen=True)
class Skipped:
    """What :func:`skip_lines` passed over.

    Attributes:
        lines: How many lines (fewer than asked when the file ended).
        key_heads: The offsets of the private key headers after the last key END line among them (the first
            :data:`MAX_HEADS`): the range may begin inside a block one of them opens (:func:`open_key_head`).
        more_heads: There were more such headers than kept.
        armor: The last BEGIN line still open (offset, the line), or None: a certificate or PGP block the
            range may begin in.
    """

    lines: int
    key_heads: tuple[int, ...]
    more_heads: bool
    armor: tuple[int, bytes] | None


def skip_lines(f: BinaryIO, count: int) -> Skipped:
    """Read past ``count`` lines of ``f`` (from where it stands) in chunks, holding none of them; ``f`` is left
    at the start of the next line. Chunks, not lines: the lines before a range deep in a big log are many, and
    one ``bytes.count`` and one regex search per MiB cost far less than a ``readline`` each."""
    done, armor = 0, None
    heads: list[int] = []
    more = False
    pos = f.tell()
    carry = b""  # the end of the previous chunk: a header split between two chunks is still found
    last = b"\n"
    while done < count:
        chunk = f.read(_CHUNK)
        if not chunk:
            done += last != b"\n"  # a last line without a newline is a line
            break
        n = chunk.count(b"\n")
        if done + n >= count:  # the range begins in this chunk: stop after its (count - done)th newline
            cut = -1
            for _ in range(count - done):
                cut = chunk.index(b"\n", cut + 1)
            chunk = chunk[: cut + 1]
            f.seek(pos + len(chunk))
            n = count - done
        hay, base = carry + chunk, pos - len(carry)
        if b"PRIVATE KEY" in hay:
            for m in _KEY_LINES.finditer(hay):
                if base + m.end() <= pos:
                    continue  # wholly in the carry: seen with the chunk before
                if m.group("begin") is None:
                    heads, more = [], False  # an END closes whatever block is open
                elif len(heads) < MAX_HEADS:
                    heads.append(base + m.start())
                else:
                    more = True
        for m in _ARMOR.finditer(hay):
            armor = (base + m.start(), m.group() + b"\n") if m.group("what") == b"BEGIN" else None
        done, pos, carry, last = done + n, pos + len(chunk), chunk[-_CARRY:], chunk[-1:]
    return Skipped(done, tuple(heads), more, armor)


class RangeNotJudged(Exception):
    """A range of a streamed file that cannot be judged safely: its text says why (for the model and the user)."""


def open_key_head(f: BinaryIO, skipped: Skipped) -> int | None:
    """The offset of the header of the private key block open where the range begins (``None``: none is), by the
    rule of the whole-file scan: after the last END line, the first header followed by key material within reach
    opens a block (one without is a header named in code or a log, not a key). ``f`` is left where it was.

    Raises:
        RangeNotJudged: none of the :data:`MAX_HEADS` headers kept opens a block, and more were not kept.
    """
    if not skipped.key_heads:
        return None
    pos = f.tell()
    try:
        for head in skipped.key_heads:
            f.seek(head)
            if opens_key_block(f.read(_HEAD_READ).decode("utf-8", "replace")):
                return head
    finally:
        f.seek(pos)
    if skipped.more_heads:
        raise RangeNotJudged(f"more than {MAX_HEADS} private key headers without their END line come before it, "
                             "too many to follow")
    return None


def streamed_without_keys(
    f: BinaryIO, offset: int, lines: list[str], kept: bytes, *, ahead: bool, armor: tuple[int, bytes] | None,
    key_head: int | None = None,
) -> tuple[list[str], int]:
    """``lines`` (the range of a streamed file: ``kept``, its bytes, began at ``offset``) with the lines of the
    private keys that the window around it shows removed, and how many key blocks they touch.

    ``f`` stands just past the range; ``ahead``: the range ended before the file did (read on past it);
    ``armor``: the BEGIN line open where the range begins (:attr:`Skipped.armor`), which may be above the
    window: it counts when it is within the reach the body check gives an open block (``_PUBLIC_REACH``);
    ``key_head``: the header of the private key block open where the range begins (:func:`open_key_head`).

    Raises:
        RangeNotJudged: that header is above the window, which then begins inside its block.
    """
    after = _read_ahead(f) if ahead else []
    since = max(0, offset - LOOKBACK)
    f.seek(since)
    before = f.read(offset - since)
    if since:  # begin at a line's start
        nl = before.find(b"\n")
        since, before = (since + nl + 1, before[nl + 1 :]) if nl >= 0 else (offset, b"")
    if key_head is not None and key_head < since:
        raise RangeNotJudged(f"it begins inside a private key block whose header is {_kib(offset - key_head)} "
                             "above it with no END line between: too far to tell which of its lines are the key's")
    if armor is not None and since - _PUBLIC_REACH <= armor[0] < since:
        before = armor[1] + before  # the block the window starts in (a certificate, a PGP message): public
    window = b"".join([before, kept, *after])
    if b"PRIVATE KEY" not in window and b"Private-Lines:" not in window and not bytes_may_hold_key_body(window):
        return lines, 0
    keys = private_key_lines(window.decode("utf-8", "replace"))
    first = before.count(b"\n")
    shown = [keys.shown.get(first + i, line) for i, line in enumerate(lines)]
    return shown, keys.blocks_in(first, first + len(lines) - 1)


def _kib(size: int) -> str:
    return f"{size / 1024:,.0f} KiB"


def _read_ahead(f: BinaryIO) -> list[bytes]:
    """The lines after the range that may still belong to a body running into it: while they hold base64 runs,
    and the two after (a body's short last line, then an END line)."""
    out: list[bytes] = []
    misses = 0
    while len(out) < LOOKAHEAD and misses < 2:
        line = f.readline(_SHORT + 1)
        if not line or len(line) > _SHORT:
            break
        out.append(line)
        misses = 0 if _BODY.search(line) else misses + 1
    return out
