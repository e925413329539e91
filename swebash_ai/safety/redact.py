"""Redaction: keep secrets out of logs, transcripts and child environments.

Contract:
    :func:`redact` returns a deep copy of JSON-like data (dicts, lists, tuples, strings, numbers) in
    which values of secret-named keys become ``"***"`` and API-key-looking substrings inside every
    string become ``"***"``.  The input is never modified.  :func:`looks_secret_env` says whether an
    environment variable name looks like it holds a secret, so the command runner can drop it from a
    child's environment. :func:`redact_output` masks the output of a command nobody approved, with the
    markers of the content scan (``[masked:KIND]``), not ``***``: those results go to the model.

Why:
    Whatever the assistant logs or sends to a model may end up in a provider's logs or a bug report.
    Key names are matched as whole word parts (``api_key``, ``OPENAI_API_KEY``, ``x-api-key``) so that
    ``keyboard`` or ``monkey`` are left alone; values are matched by the shapes real providers use.

Pure: standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from swebash_ai.safety.secrets import KEY_MARKER, MARKER_PREFIX, Scan, mask_secrets

__all__ = ["MASK", "looks_secret_env", "looks_secret_key", "redact", "redact_output", "redact_text"]

MASK = "***"

# Word parts (after splitting on non-alphanumerics and camelCase) that make a key secret.
_SECRET_PARTS: frozenset[str] = frozenset(
    {
        "password",
        "passwd",
        "passphrase",
        "secret",
        "secrets",
        "token",
        "apikey",
        "key",
        "authorization",
        "auth",
        "credential",
        "credentials",
        "private",
        "cookie",
    }
)
# Compound names written without separators.
_SECRET_JOINED: tuple[str, ...] = ("apikey", "accesstoken", "refreshtoken", "secretkey", "privatekey")

_ENV_PARTS: frozenset[str] = frozenset(
    {
        "KEY",
        "APIKEY",
        "TOKEN",
        "SECRET",
        "SECRETS",
        "PASSWORD",
        "PASSWD",
        "PASS",
        "PASSPHRASE",
        "CREDENTIAL",
        "CREDENTIALS",
        "CREDS",
        "AUTH",
        "PRIVATE",
        "COOKIE",
    }
)

_ENV_SUBSTRINGS: tuple[str, ...] = ("PASSWORD", "PASSWD", "SECRET", "CREDENTIAL", "APIKEY", "API_KEY")

_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPLIT_RE = re.compile(r"[^A-Za-z0-9]+")

_VALUE_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{10,}"),
    re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"\bglpat-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"\bxox[baprs]-[A-Za-z0-9\-]{10,}"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"),
    re.compile(r"\bhf_[A-Za-z0-9]{30,}"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)"),
)
# Keep the prefix, mask the value.
_PREFIXED_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"(?i)(\bBearer\s+)[A-Za-z0-9._~+/\-]{8,}=*"),
    re.compile(r"(?i)(\bBasic\s+)[A-Za-z0-9+/]{8,}=*"),
    re.compile(
        r"(?i)(\b(?:api[_-]?key|access[_-]?key|secret|token|access_token|password|passwd|key)\s*[=:]\s*[\"']?)"
        r"[A-Za-z0-9+/_\-.]{32,}=*"
    ),
)


def _parts(name: str) -> list[str]:
    spaced = _CAMEL_RE.sub("_", name)
    return [p for p in _SPLIT_RE.split(spaced.lower()) if p]


def looks_secret_key(name: str) -> bool:
    """True when a mapping key names a secret (``api_key``, ``X-Api-Key``, ``clientSecret``)."""
    parts = _parts(name)
    if any(p in _SECRET_PARTS for p in parts):
        return True
    joined = "".join(parts)
    return any(j in joined for j in _SECRET_JOINED)


def looks_secret_env(name: str) -> bool:
    """True for environment variable names that look like secrets (``OPENAI_API_KEY``, ``GITHUB_TOKEN``).

    The name is split on ``_`` (and other separators); any word part such as KEY, TOKEN, SECRET,
    PASSWORD, CREDENTIAL, AUTH or PRIVATE makes it secret, so ``KEYBOARD_LAYOUT`` is not.  PASSWORD,
    PASSWD, SECRET and CREDENTIAL also count inside a word (``PGPASSWORD``): no harmless name has them.
    Note that ``SSH_AUTH_SOCK`` counts as secret (it grants use of the ssh agent).
    """
    upper = name.upper()
    parts = [p for p in re.split(r"[^A-Za-z0-9]+", upper) if p]
    if any(p in _ENV_PARTS for p in parts):
        return True
    # MYSQL_PWD is a password; PWD alone is the working directory.
    if "PWD" in parts and len(parts) > 1:
        return True
    # Words that never appear in harmless names are matched inside words too (PGPASSWORD).
    if any(w in upper for w in _ENV_SUBSTRINGS):
        return True
    joined = "".join(parts)
    return any(j.upper() in joined for j in _SECRET_JOINED)


def redact_text(text: str) -> str:
    """Mask API-key-looking substrings in one string."""
    for pat in _VALUE_PATTERNS:
        text = pat.sub(MASK, text)
    for pat in _PREFIXED_PATTERNS:
        text = pat.sub(lambda m: m.group(1) + MASK, text)
    return text


def redact(value: Any) -> Any:
    """A deep copy of JSON-like ``value`` with secret-named keys' values and key-like substrings masked."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for k, v in value.items():
            if isinstance(k, str) and looks_secret_key(k) and v is not None and v != "":
                out[k] = MASK
            else:
                out[k] = redact(v)
        return out
    if isinstance(value, list):
        return [redact(v) for v in value]
    if isinstance(value, tuple):
        return tuple(redact(v) for v in value)
    return value


# ``NAME=value`` / ``NAME: value`` lines (a committed .env in ``git log -p``, a config dump), with an optional
# diff marker and ``export``; the value is masked when the name looks like a secret's.
_ASSIGNMENT_RE = re.compile(
    r"(?m)^([+\- ]?\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.\-]*)\s*[=:]\s*[\"']?)([^\s\"'#]{4,})"
)
_URL_CREDENTIALS_RE = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s/:@]+:)([^\s/@]+)(@)")
# A token used as the user name (``https://<token>@host``): long enough not to be a plain login.
_URL_TOKEN_RE = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.\-]*://)([A-Za-z0-9_\-]{20,})(@)")


def redact_output(text: str) -> Scan:
    """Mask secrets in the output of a command nobody approved; returns the :class:`Scan` (text, counts, note).

    On top of :func:`~swebash_ai.safety.secrets.mask_secrets` (private keys, credential formats): values of
    ``NAME=value`` lines whose name looks secret (``DB_PASSWORD=...``, ``+AWS_SECRET_ACCESS_KEY=...`` in a diff)
    whatever they look like, and passwords and tokens in URLs (``https://user:pass@host``). This is the
    backstop for output that reaches a model from a command nobody approved: ``git log -p`` of a secret that
    was committed once, or a file that appeared under a folder after a recursive read was judged.

    The markers are the content scan's (``[masked:KIND]``, :data:`~swebash_ai.safety.secrets.KEY_MARKER`) and
    so is the note, so a model sees one style whichever guard masked a value. :data:`MASK` is for logs,
    transcripts and exports (:func:`redact`, :func:`redact_text`), which no model reads back as a tool result.
    """
    scan = mask_secrets(text)
    kinds = dict(scan.kinds)

    def masked(kind: str) -> str:
        kinds[kind] = kinds.get(kind, 0) + 1
        return f"{MARKER_PREFIX}{kind}]"

    def assignment(m: re.Match[str]) -> str:
        if not (looks_secret_env(m.group(2)) or looks_secret_key(m.group(2))) or _is_marker(m.string, m.start(3)):
            return m.group(0)
        if _names_code(m.group(2), m.group(3), m.string[m.end(3) : m.end(3) + 1], m.group(1)[-1:]):
            return m.group(0)
        return m.group(1) + masked("secret-env")

    def url(kind: str) -> Callable[[re.Match[str]], str]:
        def sub(m: re.Match[str]) -> str:
            if _is_marker(m.string, m.start(2)) or MARKER_PREFIX in m.group(1):  # user name masked already
                return m.group(0)
            if kind == "url-password" and not _url_password(m.group(2)):
                return m.group(0)
            return m.group(1) + masked(kind) + m.group(3)

        return sub

    out = _ASSIGNMENT_RE.sub(assignment, scan.text)
    out = _URL_CREDENTIALS_RE.sub(url("url-password"), out)
    out = _URL_TOKEN_RE.sub(url("url-token"), out)
    return Scan(out, kinds, scan.private_keys)


# Names of things about a secret, not the secret (``secret_name``, ``key_length``, ``token_url``, ``kms_key_arn``).
_ABOUT = ("name", "length", "len", "url", "uri", "type", "id", "arn", "ref", "prefix", "var", "hash", "header", "path",
          "file", "size", "username", "user", "email", "host", "port", "domain")  # fmt: skip
_REFERENCE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[a-z]+(?:_[a-z0-9]+)+|[A-Za-z]+(?:_[A-Za-z0-9]+){2,}")
# What the last word of a secret's name ends with (``PGPASSWORD``, ``GITHUB_TOKEN``, ``SECRET_KEY_BASE``).
_SECRET_TAILS = ("password", "passwd", "pass", "passphrase", "pwd", "pw", "secret", "secrets", "token", "tokens", "key",
                 "keys", "auth", "credential", "credentials", "creds", "dsn", "cookie", "base", "salt", "private",
                 "authorization", "sig", "signature")  # fmt: skip
_URL_PLACEHOLDERS = frozenset({"secret", "password", "pass", "passwd", "pwd", "changeme"})


def _names_code(name: str, value: str, after: str, quote: str) -> bool:
    """An assignment whose value is code or a reference, not a secret: a call or subscript (``os.environ[...]``,
    ``request.headers["apikey"]``, ``get_token(...)``), a template (``${X}``, ``<%= ENV["X"] %>``, ``{{ x }}``,
    ``<ACCESS KEY>``), an identifier (``settings.SECRET_KEY``, ``api_key``, ``DOC_Vector_5_32``), a URL or an ARN,
    the first word of a quoted phrase; or a name about a secret (``secret_name``, ``key_length``,
    ``AUTH_USERNAME``) or a public one (``public_key``)."""
    parts = _parts(name)
    if parts and (parts[-1] in _ABOUT or "public" in parts or not parts[-1].endswith(_SECRET_TAILS)):
        return True  # ``KeyManager``, ``token_url``: the last word says what the name is, and it is no secret
    if after in "([" or "(" in value or "[" in value or value.startswith(("$", "<", "{{", "%(", "${", "arn:")):
        return True
    if "://" in value or (quote in "\"'" and quote and after == " "):
        return True
    return _REFERENCE.fullmatch(value) is not None


def _url_password(value: str) -> bool:
    """A password in a URL, not a template (``$password``), a placeholder word (``user:secret@``) or the port and
    quote of a URL followed by something else (``"https://url:8000";@x``)."""
    if value.startswith(("$", "<", "{", "%")) or any(c in value for c in "\"';"):
        return False
    return value.lower() not in _URL_PLACEHOLDERS


def _is_marker(text: str, at: int) -> bool:
    """A value that is already a marker (masked by the content scan) is not masked twice."""
    return text.startswith((MARKER_PREFIX, KEY_MARKER, MASK), at)
