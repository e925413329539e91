"""``read_file`` with a line range inside a private key: the lines are judged on the whole file, not the range.

A scan of two lines from the middle of a key cannot tell them from other base64; the file can (its header above
and END below, or the DER start of a headerless body above). Each case is read in memory and streamed (a file
over ``fs_max_size``), then masked by the loop's scan, as the model would see it. The keys are built at run
time: a real DER or OpenSSH prefix followed by random bytes, so no file of this repository holds key-shaped text.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import random
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from swebash_ai.config.settings import load_settings
from swebash_ai.safety.paths import PathPolicy
from swebash_ai.safety.secrets import KEY_MARKER
from swebash_ai.tools import fs, key_ranges
from swebash_ai.tools.registry import ToolContext, ToolResult

_RNG = random.Random(11)


def body(prefix: bytes, size: int, width: int = 64) -> list[str]:
    data = prefix + bytes(_RNG.randrange(256) for _ in range(size))
    return textwrap.wrap(base64.b64encode(data).decode(), width)


RSA = body(bytes.fromhex("308204a402010002820101"), 1180)  # PKCS#1 RSA: "MIIEpAIBAAKCAQEA..."
OPENSSH = body(b"openssh-key-v1\x00" + b"\x00\x00\x00\x04none", 360, width=70)
CERT = body(bytes.fromhex("308202f9308201e1a003020102021440"), 740)
PROSE = [f"line {i} of the notes: nothing secret here, only words about the project." for i in range(12)]


def layout(*parts: list[str] | str) -> list[str]:
    out: list[str] = []
    for part in parts:
        out.extend([part] if isinstance(part, str) else part)
    return out


# (file lines, 1-based range, material that must not be shown, lines that must stay as they are, why)
CASES: list[tuple[list[str], tuple[int, int], list[str], list[str], str]] = [
    (layout(PROSE, "-----BEGIN RSA PRIVATE KEY-----", RSA, "-----END RSA PRIVATE KEY-----", PROSE),
     (20, 21), RSA[6:8], [], "two lines from the middle of a PEM key: header above, footer below"),
    (layout(PROSE, "-----BEGIN OPENSSH PRIVATE KEY-----", OPENSSH, "-----END OPENSSH PRIVATE KEY-----", PROSE),
     (12, 15), OPENSSH[:2], [PROSE[11]], "the line before the header is kept, the key's first lines are not"),
    (layout(PROSE, "key:", RSA, PROSE), (16, 17), RSA[2:4], [], "a headerless body: its DER start is above the range"),
    (layout(PROSE, RSA[3:], "-----END RSA PRIVATE KEY-----", PROSE), (18, 19), RSA[8:10], [],
     "a headerless middle that ends with a private END below the range"),
    (layout(PROSE, OPENSSH, PROSE), (15, 16), OPENSSH[2:4], [], "an OpenSSH body: its magic is above the range"),
    (layout(PROSE, "-----BEGIN RSA PRIVATE KEY-----", RSA, "-----END RSA PRIVATE KEY-----", PROSE),
     (10, 14), [RSA[0]], PROSE[9:12], "a range that ends in a key's first line: the prose above stays"),
]


@pytest.fixture
def ctx(workspace: Path, isolated_env: Path) -> ToolContext:
    return ToolContext(settings=load_settings().settings, cwd=workspace,
                       path_policy=PathPolicy(roots=[workspace], home=isolated_env), command_policy=None)


async def read(ctx: ToolContext, **kw: Any) -> ToolResult:
    args = fs.read_file.parse_arguments(kw)
    assert not isinstance(args, ToolResult), args.content
    return await asyncio.wait_for(fs.read_file.invoke(ctx, args), timeout=10)


def streamed(ctx: ToolContext) -> ToolContext:
    return dataclasses.replace(ctx, settings=ctx.settings.model_copy(update={"fs_max_size": 1024}))


@pytest.mark.parametrize("stream", [False, True], ids=["in memory", "streamed"])
@pytest.mark.parametrize(("lines", "span", "secret", "kept", "why"), CASES, ids=[c[4] for c in CASES])
async def test_a_range_inside_a_key_is_masked_as_the_whole_file_would_be(
    ctx: ToolContext, workspace: Path, stream: bool, lines: list[str], span: tuple[int, int], secret: list[str],
    kept: list[str], why: str,
) -> None:
    (workspace / "notes.txt").write_text("\n".join(lines) + "\n")
    res = await read(streamed(ctx) if stream else ctx, path="notes.txt", start_line=span[0], end_line=span[1])
    assert res.ok and bool(res.metadata.get("streamed")) is stream, res.text
    seen = res.with_secrets_masked()
    assert not any(s in seen.text for s in secret), (why, seen.text)
    assert not re.search(r"[A-Za-z0-9+/]{40}", seen.text), (why, seen.text)  # no piece of material is left
    assert all(line in seen.text for line in kept), (why, seen.text)
    assert seen.metadata["private_keys_removed"] == 1 and seen.text.count("(note: ") == 1, why
    assert f"{span[0]:>4}| " in seen.text and f"{span[1]:>4}| " in seen.text  # line numbers stay right
    assert KEY_MARKER in seen.text


# (file lines, 1-based range, why): public base64 in ranges of two lines, left alone in memory and streamed (three
# lines or more from the middle of a run are masked by the loop's scan of the range, whatever the file says)
PUBLIC: list[tuple[list[str], tuple[int, int], str]] = [
    (layout(PROSE, "-----BEGIN CERTIFICATE-----", CERT, "-----END CERTIFICATE-----", PROSE), (16, 17),
     "two lines from the middle of a certificate"),
    (layout(PROSE, CERT, PROSE), (15, 16), "a headerless certificate: its DER start says public"),
    (layout(PROSE, "-----BEGIN PGP MESSAGE-----", [x for _ in range(200) for x in CERT[1:14]],
            "-----END PGP MESSAGE-----", PROSE), (2200, 2201),
     "deep inside a long armored block: its start is 140 KB up, its BEGIN further"),
]


@pytest.mark.parametrize("stream", [False, True], ids=["in memory", "streamed"])
@pytest.mark.parametrize(("lines", "span", "why"), PUBLIC, ids=[c[2] for c in PUBLIC])
async def test_a_range_of_public_base64_is_shown(
    ctx: ToolContext, workspace: Path, stream: bool, lines: list[str], span: tuple[int, int], why: str
) -> None:
    (workspace / "notes.txt").write_text("\n".join(lines) + "\n")
    res = await read(streamed(ctx) if stream else ctx, path="notes.txt", start_line=span[0], end_line=span[1])
    seen = res.with_secrets_masked()
    assert res.ok and res.keys_removed == 0 and "masked_secrets" not in seen.metadata, (why, seen.text)
    assert all(line in seen.text for line in lines[span[0] - 1 : span[1]]), why


async def test_a_whole_read_is_left_to_the_loop_and_counts_once(ctx: ToolContext, workspace: Path) -> None:
    """Read whole, the tool shows the file and the loop's scan removes the key: one block, one note."""
    lines = layout(PROSE, "-----BEGIN RSA PRIVATE KEY-----", RSA, "-----END RSA PRIVATE KEY-----", PROSE)
    (workspace / "notes.txt").write_text("\n".join(lines) + "\n")
    res = await read(ctx, path="notes.txt")
    assert res.keys_removed == 0 and RSA[5] in res.text  # the tool's own copy (never sent as it is)
    seen = res.with_secrets_masked()
    assert RSA[5] not in seen.text and seen.metadata["private_keys_removed"] == 1


# (file bytes, lines to skip, lines skipped, the next line, a private key header without its END among them, open
# BEGIN, why)
SKIPS: list[tuple[bytes, int, int, bytes, bool, bytes | None, str]] = [
    (b"a\nb\nc\n", 2, 2, b"c\n", False, None, "stops at the start of the line asked for"),
    (b"a\nb\nc", 5, 3, b"", False, None, "the file ends first: a last line without a newline counts"),
    (b"a\n" * 10 + b"x" * 5000 + b"\nz\n", 11, 11, b"z\n", False, None, "a line longer than a chunk"),
    (b"-----BEGIN CERTIFICATE-----\n" + b"QUJD\n" * 3 + b"z\n", 4, 4, b"z\n", False, b"-----BEGIN CERTIFICATE-----\n",
     "a certificate still open"),
    (b"-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\nz\n", 3, 3, b"z\n", False, None,
     "a certificate closed"),
    (b"-----BEGIN RSA PRIVATE KEY-----\nQUJD\n-----END RSA PRIVATE KEY-----\nz\n", 3, 3, b"z\n", False, None,
     "a key closed by its END"),
    (b"error: want BEGIN RSA PRIVATE KEY\nz\n", 1, 1, b"z\n", False, None, "a header named without its dashes"),
    (b"pad\n" * 249 + b"-----BEGIN RSA PRIVATE KEY-----\nQUJD\nz\n", 251, 251, b"z\n", True,
     b"-----BEGIN RSA PRIVATE KEY-----\n", "a key header across two chunks"),
    (b"-----BEGIN RSA PRIVATE KEY-----\nQUJD\nz\n", 0, 0, b"-----BEGIN RSA PRIVATE KEY-----\n", False, None,
     "nothing to skip"),
]


@pytest.mark.parametrize(("data", "count", "skipped", "following", "key", "armor", "why"), SKIPS,
                         ids=[c[-1] for c in SKIPS])
def test_skip_lines_in_chunks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, data: bytes, count: int,
                              skipped: int, following: bytes, key: bool, armor: bytes | None, why: str) -> None:
    monkeypatch.setattr(key_ranges, "_CHUNK", 1000)  # small chunks: headers and lines cross their edges
    (tmp_path / "f").write_bytes(data)
    with (tmp_path / "f").open("rb") as f:
        got = key_ranges.skip_lines(f, count)
        assert (got.lines, f.readline(), bool(got.key_heads)) == (skipped, following, key), why
    assert (got.armor[1] if got.armor else None) == armor, why
    if got.armor:
        assert data[got.armor[0] :].startswith(got.armor[1]), why  # its offset in the file


def test_skip_lines_keeps_the_headers_after_the_last_end_once_each(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    monkeypatch.setattr(key_ranges, "_CHUNK", 1000)  # a header in the carry of two chunks is counted once
    head, end = b"-----BEGIN PRIVATE KEY-----\n", b"-----END PRIVATE KEY-----\n"
    data = head + end + b"pad\n" * 240 + head + b"pad\n" * 10 + head + b"z\n"
    (tmp_path / "f").write_bytes(data)
    with (tmp_path / "f").open("rb") as f:
        got = key_ranges.skip_lines(f, data.count(b"\n") - 1)
    first = len(head + end) + 240 * 4
    assert got.key_heads == (first, first + len(head) + 40) and not got.more_heads
    monkeypatch.setattr(key_ranges, "MAX_HEADS", 1)
    with (tmp_path / "f").open("rb") as f:
        got = key_ranges.skip_lines(f, data.count(b"\n") - 1)
    assert got.key_heads == (first,) and got.more_heads


LOG = [f"2026-01-01 12:00:{i % 60:02d} worker {i}: request served in {i % 97} ms" for i in range(4000)]  # 250 KB


async def test_the_log_lines_around_a_key_in_a_big_file_are_read_and_the_key_masked(
    ctx: ToolContext, workspace: Path
) -> None:
    """A log over fs_max_size that happens to hold a key: ranges after it, far or near, and a range across its
    END are read (they used to be refused whole); only the key's lines are removed."""
    lines = layout(LOG[:100], "-----BEGIN RSA PRIVATE KEY-----", RSA, "-----END RSA PRIVATE KEY-----", LOG[100:])
    (workspace / "big.log").write_text("\n".join(lines) + "\n")
    after = 100 + len(RSA) + 2  # the END line, 1-based
    for span, why in [((after + 3000, after + 3005), "far below the key, past the window"),
                      ((after + 1, after + 4), "right after its END"),
                      ((after - 3, after + 2), "across its END: its last lines masked, the log after it shown")]:
        res = await read(streamed(ctx), path="big.log", start_line=span[0], end_line=span[1])
        assert res.ok and res.metadata.get("streamed"), (why, res.text)
        seen = res.with_secrets_masked()
        assert not re.search(r"[A-Za-z0-9+/]{40}", seen.text), (why, seen.text)
        shown = [line for line in lines[span[0] - 1 : span[1]] if line.startswith("2026")]
        assert shown and all(line in seen.text for line in shown), (why, seen.text)
        assert (KEY_MARKER in seen.text) is (span[0] <= after), why


async def test_a_header_named_in_a_big_log_does_not_hide_what_follows(ctx: ToolContext, workspace: Path) -> None:
    """A header with no key material after it (an error message quoting it) opens no block: the scan of the
    whole file shows what follows, and so does a range far below it."""
    lines = layout(LOG[:50], "error: expected -----BEGIN RSA PRIVATE KEY----- at the top of id.pem", LOG[50:])
    (workspace / "big.log").write_text("\n".join(lines) + "\n")
    res = await read(streamed(ctx), path="big.log", start_line=3500, end_line=3502)
    assert res.ok and all(line in res.text for line in lines[3499:3502]), res.text


async def test_a_range_inside_a_block_opened_above_the_window_is_refused_with_its_reason(
    ctx: ToolContext, workspace: Path
) -> None:
    """A header with key material and no END line for 250 KB: the whole-file scan masks all of it, and the window
    cannot see where the block began, so the range is refused, saying why; a range before the header is read."""
    lines = layout(LOG[:50], "-----BEGIN RSA PRIVATE KEY-----", RSA, LOG[50:])
    (workspace / "big.log").write_text("\n".join(lines) + "\n")
    res = await read(streamed(ctx), path="big.log", start_line=3500, end_line=3502)
    assert res.status == "denied" and res.metadata["rule"] == "content.private_key", res.text
    assert "Not shown: lines 3500-3502 of 'big.log', because it begins inside a private key block" in res.text
    assert "no END line" in res.text and not any(line in res.text for line in lines[3499:3502])
    res = await read(streamed(ctx), path="big.log", start_line=10, end_line=12)
    assert res.ok and all(line in res.text for line in lines[9:12]), res.text


async def test_more_headers_than_can_be_followed_are_refused_with_the_reason(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(key_ranges, "MAX_HEADS", 2)
    named = "error: expected -----BEGIN RSA PRIVATE KEY----- at the top of id.pem"
    lines = layout(LOG[:10], named, named, named, LOG[10:])
    (workspace / "big.log").write_text("\n".join(lines) + "\n")
    res = await read(streamed(ctx), path="big.log", start_line=3000, end_line=3001)
    assert res.status == "denied" and "more than 2 private key headers without their END line" in res.text
