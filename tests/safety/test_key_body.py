"""Private key bodies printed without their BEGIN line (``tail -n +2 key.pem``, ``sed -n 2,20p id_ed25519``).

The keys are built at run time: a real DER or OpenSSH prefix (the bytes the detector reads) followed by random
bytes, wrapped as PEM (64) or OpenSSH (70) does, so no file of this repository holds key-shaped text.
"""

from __future__ import annotations

import base64
import random
import re
import textwrap

import pytest

from swebash_ai.safety.key_body import MIDDLE_LINES, key_body_spans
from swebash_ai.safety.secrets import KEY_MARKER, holds_private_key, is_key_file, mask_secrets, remove_private_keys

_RNG = random.Random(7)


def body(prefix: bytes, size: int, width: int = 64) -> list[str]:
    """Body lines of a key or certificate: ``prefix`` then random bytes, base64, wrapped at ``width``."""
    data = prefix + bytes(_RNG.randrange(256) for _ in range(size))
    return textwrap.wrap(base64.b64encode(data).decode(), width)


def pem(label: str, lines: list[str]) -> list[str]:
    return [f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"]


# The first bytes of each structure, as the tools that write them produce them.
RSA_PKCS1 = body(bytes.fromhex("308204a402010002820101"), 1180)  # openssl genrsa -traditional
PKCS8 = body(bytes.fromhex("308204bd020100300d06092a864886f70d01010105000482"), 1190)  # openssl genpkey
EC_SEC1 = body(bytes.fromhex("307702010104"), 115)  # openssl ecparam -genkey (P-256): "MHcCAQEE..."
ENCRYPTED = body(bytes.fromhex("3082052d305706092a864886f70d01050d"), 1300)  # pkcs8 -topk8
OPENSSH = body(b"openssh-key-v1\x00" + b"\x00\x00\x00\x04none", 360, width=70)  # ssh-keygen -t ed25519
CERT = body(bytes.fromhex("308202f9308201e1a003020102021440"), 740)  # openssl req -x509
PUBLIC = body(bytes.fromhex("30820122300d06092a864886f70d01010105000382010f00"), 270)  # openssl pkey -pubout
MIDDLE = RSA_PKCS1[5:11]  # six full lines from inside a key: no start, no end


def encoded(block: list[str]) -> str:
    """A PEM block base64-encoded as one token, as kubeconfig's ``client-key-data`` holds it."""
    return base64.b64encode(("\n".join(block) + "\n").encode()).decode()


def lines(*parts: list[str] | str) -> str:
    out: list[str] = []
    for part in parts:
        out.extend([part] if isinstance(part, str) else part)
    return "\n".join(out) + "\n"


# (text, is a key's body, why)
CASES: list[tuple[str, bool, str]] = [
    (lines(RSA_PKCS1, "-----END RSA PRIVATE KEY-----"), True, "tail -n +2 key.pem: body and an orphan END"),
    (lines(OPENSSH), True, "sed -n 2,20p id_ed25519: starts with the openssh-key-v1 magic"),
    (lines(OPENSSH[:1]), True, "sed -n 2p id_ed25519: one line is enough when it carries the magic"),
    (lines(MIDDLE), True, "head -n 11 | tail -n 6: a fragment of a key is still a leak (ambiguous, masked)"),
    (lines(PKCS8[:12]), True, "PKCS#8 start without header or end: DER says version INTEGER, a key"),
    (lines(EC_SEC1), True, "SEC1 EC key, 'MHc...', shorter than MII: version 1 INTEGER"),
    (lines(ENCRYPTED[:8]), True, "encrypted PKCS#8: the PBES2 AlgorithmIdentifier says key"),
    (lines([f"{n:>3}| {x}" for n, x in enumerate(RSA_PKCS1, 2)]), True, "read_file's numbered lines"),
    (lines([f"notes/k.txt:{n}:{x}" for n, x in enumerate(PKCS8, 2)]), True, "grep -rn output of a key"),
    (lines([f"+{x}" for x in RSA_PKCS1]), True, "git log -p of a key committed without its header"),
    (lines(["     7\t" + x for x in OPENSSH]), True, "cat -n | tail: tab after the number"),
    (lines("log output", MIDDLE, "more log"), True, "a key's middle inside other output"),
    (lines("users:", "- user:", f"    client-key-data: {encoded(pem('RSA PRIVATE KEY', RSA_PKCS1))}"), True,
     "kubectl config view --raw: a PEM key encoded once more in base64"),
    (lines(f"  tls.key: {encoded(pem('PRIVATE KEY', PKCS8))}"), True, "a Kubernetes TLS secret's key"),
    (lines(f"    client-certificate-data: {encoded(pem('CERTIFICATE', CERT))}"), False,
     "the certificate beside it in a kubeconfig is public"),
    (lines(f"  example: {encoded(pem('RSA PRIVATE KEY', []))}"), False, "an encoded header with no material (docs)"),
    (lines(CERT, "-----END CERTIFICATE-----"), False, "tail -n +2 cert.pem: an END CERTIFICATE says public"),
    (lines(CERT), False, "headerless certificate: DER starts with a SEQUENCE (tbsCertificate), not a version"),
    (lines(PUBLIC), False, "headerless public key: SubjectPublicKeyInfo, a SEQUENCE of the RSA algorithm"),
    (lines(pem("CERTIFICATE", CERT)), False, "a whole certificate (a CA bundle)"),
    (lines('"KeyCertificate":', f'  "{CERT[0]}', [f"  {x}" for x in CERT[1:-1]], f'  {CERT[-1]}",'), False,
     "a certificate wrapped in a JSON string of API docs: the quote does not hide its DER start"),
    (lines("-----BEGIN CERTIFICATE-----", CERT[:10]), False, "head of a cert: lines under an open BEGIN CERTIFICATE"),
    (lines(pem("PGP PUBLIC KEY BLOCK", ["", *CERT[3:9]])), False, "PGP armor is 64 wide; a public block is public"),
    (lines([f"{_RNG.getrandbits(256):064x}" for _ in range(6)]), False, "a column of SHA-256 hex digests"),
    (lines([base64.b32encode(_RNG.randbytes(40)).decode() for _ in range(5)]), False, "base32, all upper case"),
    (lines([f'  integrity sha512-{x}{x[:24]}==' for x in MIDDLE]), False, "lock file integrity hashes"),
    (lines('{"icon":"data:image/png;base64,' + "".join(MIDDLE) + '"}'), False, "minified data on one line"),
    (lines(textwrap.wrap("".join(MIDDLE), 76)), False, "MIME / base64(1) output is 76 wide, not a PEM width"),
    (lines(MIDDLE[: MIDDLE_LINES - 1]), False, "two middle lines: too little to tell from other base64 (a limit)"),
    (lines("-----END RSA PRIVATE KEY-----"), False, "a lone END line holds no material"),
    (lines("x" * 64, "y" * 64, "z" * 64), False, "filler lines: no mix of cases and digits"),
]


@pytest.mark.parametrize(("text", "is_key", "why"), CASES, ids=[c[2] for c in CASES])
def test_key_bodies_without_their_header(text: str, is_key: bool, why: str) -> None:
    scan = mask_secrets(text)
    if is_key:
        assert scan.private_keys == 1 and KEY_MARKER in scan.text, why
        assert not re.search(r"[A-Za-z0-9+/]{40}", scan.text), why  # no piece of material is left
        assert holds_private_key(text)
    else:
        assert scan.text == text and scan.private_keys == 0, why
        assert not key_body_spans(text)


def test_line_numbers_stay_right_and_a_bare_body_file_is_a_key_file() -> None:
    text = lines("before", RSA_PKCS1, "-----END RSA PRIVATE KEY-----", "after")
    out, count = remove_private_keys(text)
    assert count == 1 and out.count("\n") == text.count("\n") and out.splitlines()[-1] == "after"
    assert is_key_file(lines(OPENSSH))  # a copied key file that lost its first line is refused like a key
    assert not is_key_file(lines(CERT))
