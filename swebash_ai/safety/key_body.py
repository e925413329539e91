"""Private key material printed without its BEGIN line: runs of key body lines.

Contract:
    :func:`key_body_spans` returns the spans of ``text`` that are private key material shown without the
    ``-----BEGIN ... PRIVATE KEY-----`` line that :mod:`swebash_ai.safety.secrets` knows blocks by. Each span
    covers whole lines, from the first body line to the last (and the orphan END line when there is one).

Why:
    ``sed -n 2,20p ~/old/id_ed25519``, ``tail -n +2 key.pem``, ``head -n 12 key.pem | tail -n 6`` print a
    key without its header. The lines keep their shape: PEM wraps base64 at 64 characters, OpenSSH at 70,
    and the last line of a body is shorter. A run of such lines is judged, in this order:

    1. Inside a block opened by another BEGIN (``CERTIFICATE``, ``PUBLIC KEY``, a PGP message): public, kept.
    2. Followed by an END line: a ``PRIVATE KEY`` END makes it a key; any other END (a certificate's
       tail) makes it public.
    3. Its first line starts with ``b3BlbnNzaC1rZXktdjE`` (base64 of ``openssh-key-v1``, the magic that opens
       every OpenSSH private key and nothing else): a key.
    4. Its first line is the start of a DER structure (``MII...``): the first bytes decide. A SEQUENCE whose
       first element is a small INTEGER (the version: 0 in PKCS#1 RSA and DSA, PKCS#8; 1 in SEC1 EC keys and
       PKCS#8 v2; 3 in a PKCS#12 bundle) is a key; a SEQUENCE whose first element is an AlgorithmIdentifier of
       password-based encryption is an encrypted PKCS#8 key. Anything else (a certificate starts with a
       SEQUENCE, a public key with the RSA or EC algorithm, a CSR with a SEQUENCE) is public and kept: a
       certificate printed without its header is not mistaken for a key.
    5. Otherwise the run is the middle of something (``head | tail`` of a key, or of a certificate). It is
       treated as a key when it has at least :data:`MIDDLE_LINES` full lines: a fragment of a private key
       is still a leak (a known fraction of an RSA key's bits is enough to factor it), while public data
       printed in this exact shape, without its header or its start, is rare; ``bench/false_masks.py``
       measures the cost on ordinary code.

    A whole PEM key encoded once more in base64 (``client-key-data: LS0tLS1CRUdJTi...`` in a kubeconfig,
    ``tls.key`` of a Kubernetes secret) is one long token that starts with ``LS0tLS1CRUdJTi`` (base64 of
    ``-----BEGIN``): it is decoded, and removed when it is a private key with material after its header.

    A full line must hold upper- and lower-case letters and a digit, as 64 random base64 characters do
    (all but about 1 in 5,000): a column of SHA-256 hex digests or base32 is not base64 key material.

Pure: standard library only.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

__all__ = [
    "ENCODED_PEM",
    "MIDDLE_LINES",
    "OPENSSH_MAGIC",
    "bytes_may_hold_key_body",
    "key_body_spans",
    "may_hold_key_body",
]

OPENSSH_MAGIC = "b3BlbnNzaC1rZXktdjE"
ENCODED_PEM = "LS0tLS1CRUdJTi"
MIDDLE_LINES = 3
_WIDTHS = (64, 70)

# What may stand before a body line: indentation, a diff marker, a line number of read_file or search
# (``  12| ``, ``12:``), ``cat -n`` (``     5\t``), grep's ``path:12:``, the quote of a string that holds a
# wrapped body (a JSON example). After it: a closing quote, a comma.
_PREFIX = r"[ \t]*(?:[+\-][ \t]*)?(?:[^\s:]+:)?(?:\d+(?:[|:\-] ?|\t))?[ \t]*[\"']?"
_SUFFIX = r"[\"',;]*[ \t]*\r?"
# A full line (64 or 70 base64 characters) or the magic that opens an OpenSSH key, at any width.
_FULL = re.compile(rf"^{_PREFIX}(?P<b>[A-Za-z0-9+/]{{64}}(?:[A-Za-z0-9+/]{{6}})?){_SUFFIX}$", re.MULTILINE)
_MAGIC = re.compile(rf"^{_PREFIX}(?P<b>{OPENSSH_MAGIC}[A-Za-z0-9+/]*={{0,2}}){_SUFFIX}$", re.MULTILINE)
_TAIL = re.compile(rf"{_PREFIX}(?P<b>[A-Za-z0-9+/]{{1,70}}={{0,2}}){_SUFFIX}")
_END = re.compile(rf"{_PREFIX}-{{4,5}} ?END (?P<label>[A-Z0-9 ]+?) ?-{{4,5}}[ \t]*\r?")
_BEGIN = re.compile(r"-{4,5} ?BEGIN (?P<label>[A-Z0-9 ]+?) ?-{4,5}")
_ANY_END = re.compile(r"-{4,5} ?END [A-Z0-9 ]+? ?-{4,5}")
# A PEM block base64-encoded as one token (a header alone is ~50 characters: material makes it far longer).
_ENCODED = re.compile(rf"(?<![A-Za-z0-9+/]){ENCODED_PEM}[A-Za-z0-9+/]{{100,}}={{0,2}}")
_DECODED_KEY = re.compile(r"-{5}BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-{5}\s*(?:[\w-]+:[^\n]*\n)*\s*[A-Za-z0-9+/]{40,}")
# Object identifiers of password-based encryption (PKCS#5 PBES1/PBES2 and PKCS#12 PBE), DER-encoded.
_PBE_OIDS = (bytes.fromhex("2a864886f70d0105"), bytes.fromhex("2a864886f70d010c01"))


_B64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_ONLY_B64 = bytes(ord("a") if i in _B64 else ord(" ") for i in range(256))
_SIXTY_FOUR = b"a" * 64
_MAGIC_BYTES, _ENCODED_BYTES = OPENSSH_MAGIC.encode(), ENCODED_PEM.encode()


def may_hold_key_body(text: str) -> bool:
    """A cheap test first: the OpenSSH magic, or 64 base64 characters in a row somewhere.

    Every tool result goes through here: the line regexes scan each line start (about 10 MB/s on code), while
    this is a ``bytes.translate`` and a find (about 300 MB/s), and ordinary code has no such run.
    """
    return bytes_may_hold_key_body(text.encode("utf-8", "surrogatepass"))


def bytes_may_hold_key_body(data: bytes) -> bool:
    """:func:`may_hold_key_body` on bytes as read from a file (search's walk): the markers and the base64 run
    are ASCII, so the bytes are scanned as they are, without decoding them first."""
    if _MAGIC_BYTES in data or _ENCODED_BYTES in data:
        return True
    return _SIXTY_FOUR in data.translate(_ONLY_B64)


def key_body_spans(text: str, data: bytes | None = None) -> list[tuple[int, int]]:
    """Spans (start, stop) of headerless private key bodies in ``text``; see the module docstring. ``data``, when
    given, is the text as bytes already (any ASCII-compatible encoding), for the cheap test."""
    if not (may_hold_key_body(text) if data is None else bytes_may_hold_key_body(data)):
        return []
    spans: list[tuple[int, int]] = []
    starts = sorted({m.start() for m in _FULL.finditer(text)} | {m.start() for m in _MAGIC.finditer(text)})
    pos = 0
    for start in starts:
        if start < pos:
            continue
        run = _run(text, start)
        if run is None:
            continue
        stop, first, full, end_label = run
        pos = stop
        if _is_key(text, start, first, full, end_label):
            spans.append((start, stop))
    if ENCODED_PEM in text:
        spans = sorted(spans + [m.span() for m in _ENCODED.finditer(text) if _encoded_key(m.group())
                                if not any(a <= m.start() < b for a, b in spans)])
    return spans


def _encoded_key(token: str) -> bool:
    """The token decodes to a private key block with material (not just a header named in docs)."""
    try:
        decoded = base64.b64decode(token[:8192] + "=" * (-len(token[:8192]) % 4)).decode("ascii", "replace")
    except (binascii.Error, ValueError):
        return False
    return _DECODED_KEY.search(decoded) is not None


def _body(line: str) -> str | None:
    m = _FULL.fullmatch(line) or _MAGIC.fullmatch(line)
    return m.group("b") if m else None


def _random_looking(body: str) -> bool:
    return any(c.isupper() for c in body) and any(c.islower() for c in body) and any(c.isdigit() for c in body)


def _run(text: str, start: int) -> tuple[int, str, int, str | None] | None:
    """The run of body lines that begins at ``start``: (stop, first body, full lines, END label or None).

    Full lines share one width; the run ends at the first line that is not one, which may be the shorter last
    line of the body, and then possibly an END line.
    """
    lines = _lines_from(text, start)
    first_line, stop = next(lines)
    first = _body(first_line)
    if first is None or not (first.startswith(OPENSSH_MAGIC) or _random_looking(first)):
        return None
    width = len(first)
    full = 1
    end_label: str | None = None
    tail_seen = False
    for line, line_stop in lines:
        body = _body(line)
        if body is not None and len(body) == width and not tail_seen and _random_looking(body):
            full, stop = full + 1, line_stop
            continue
        end = _END.fullmatch(line)
        if end is not None:
            end_label, stop = end.group("label"), line_stop
            break
        tail = _TAIL.fullmatch(line)
        if tail is not None and not tail_seen and len(tail.group("b")) < width:
            tail_seen, stop = True, line_stop
            continue
        break
    if width not in _WIDTHS and not first.startswith(OPENSSH_MAGIC):
        return None
    return stop, first, full, end_label


def _lines_from(text: str, start: int) -> Iterator[tuple[str, int]]:
    """(line, end offset including its newline) for each line from ``start``."""
    pos = start
    while pos < len(text):
        nl = text.find("\n", pos)
        stop = len(text) if nl < 0 else nl + 1
        yield text[pos : stop - 1 if nl >= 0 else stop], stop
        pos = stop


def _is_key(text: str, start: int, first: str, full: int, end_label: str | None) -> bool:
    if _inside_public_block(text, start):
        return False
    if end_label is not None:
        return "PRIVATE KEY" in end_label
    if first.startswith(OPENSSH_MAGIC):
        return True
    der = _der_kind(first)
    if der is not None:
        return der == "private"
    return full >= MIDDLE_LINES


def _inside_public_block(text: str, start: int) -> bool:
    """True when the last BEGIN before ``start`` is still open and is not a private key's."""
    begins = list(_BEGIN.finditer(text, max(0, start - 100_000), start))
    begin = begins[-1] if begins else None
    if begin is None or _ANY_END.search(text, begin.end(), start) is not None:
        return False
    return "PRIVATE KEY" not in begin.group("label")


def _der_length(der: bytes, at: int) -> tuple[int, int] | None:
    """(length, offset of the content) of the DER element whose tag is at ``at``; None if malformed."""
    size = der[at + 1]
    if size < 0x80:
        return size, at + 2
    count = size & 0x7F
    if not 1 <= count <= 3:
        return None
    return int.from_bytes(der[at + 2 : at + 2 + count], "big"), at + 2 + count


def _der_kind(first: str) -> str | None:
    """``private`` or ``public`` when the line opens a DER SEQUENCE (``M...``), else None.

    ``public`` needs a well-formed nested SEQUENCE (a certificate, a public key, a CSR): a random middle line
    that happens to start with the SEQUENCE tag is not let off on one byte's evidence.
    """
    if not first.startswith("M"):
        return None
    try:
        der = base64.b64decode(first[:64], validate=True)
    except (binascii.Error, ValueError):
        return None
    outer = _der_length(der, 0) if der[0] == 0x30 else None
    if outer is None:
        return None
    size, at = outer
    if der[at : at + 2] == b"\x02\x01" and der[at + 2] in (0, 1, 3):
        return "private"  # PKCS#1, PKCS#8, SEC1 EC, DSA (version INTEGER first) or a PKCS#12 bundle
    if der[at] != 0x30:
        return None
    inner = _der_length(der, at)
    if inner is None or inner[1] + inner[0] > at + size:
        return None
    if der[inner[1]] == 0x06 and der[inner[1] + 2 : inner[1] + 2 + der[inner[1] + 1]].startswith(_PBE_OIDS):
        return "private"  # EncryptedPrivateKeyInfo: a password-encrypted PKCS#8 key
    return "public"
