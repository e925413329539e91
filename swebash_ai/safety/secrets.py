"""Secrets by content: credentials found in text that is about to reach a model, whatever it came from.

Contract:
    :func:`mask_secrets` returns a :class:`Scan`: the text with every private key block replaced by
    :data:`KEY_MARKER` and every value in a known credential format replaced by ``[masked:KIND]``, and how
    many of each were found. :func:`holds_private_key` says whether a text holds private key material;
    :func:`is_key_file` whether a file's text is essentially a key (``read_file`` refuses those like a
    protected file). :func:`remove_private_keys` blanks key blocks but keeps the line count (for search);
    :func:`private_key_lines` says which lines that changes, for a reader that shows only some of them.

Why:
    The path rules know credential files by name, and every list of names is incomplete: a key copied to
    ``notes/old-laptop.txt``, a token in ``~/.bashrc``, a password in a command's output. So everything a
    tool returns is scanned once before the model sees it (the loop does it for every tool result).

    The rules are a data table, each with its source: most come from the public rule sets of gitleaks
    (``config/gitleaks.toml``, rule ids given) and detect-secrets (plugin names given). The detect-secrets
    package itself was not taken: its scanner runs every plugin per line with entropy filters (slow on
    a 1 MiB result) and its plugins flag hashes and high-entropy strings that are everywhere in code.
    A header that merely mentions ``PRIVATE KEY`` (a parser's source code) is not a key: material must
    follow it. Documented example values (``AKIAIOSFODNN7EXAMPLE``) and placeholders (``${TOKEN}``,
    ``<password>``, ``changeme``) are left alone, as gitleaks' allowlists do.

Speed: every pattern is compiled once and only run when one of its literal hints is in the text (a
``str`` find, far faster than a regex scan); ``bench/false_masks.py`` measures it and the false masks.

Pure: standard library only.
"""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from swebash_ai.safety.key_body import bytes_may_hold_key_body, key_body_spans

__all__ = [
    "KEY_MARKER",
    "MARKER_PREFIX",
    "RULES",
    "KeyLines",
    "Rule",
    "Scan",
    "blank_private_keys",
    "holds_private_key",
    "is_key_file",
    "mask_secrets",
    "private_key_lines",
    "remove_private_keys",
]

KEY_MARKER = "[private key removed]"
MARKER_PREFIX = "[masked:"

# ``-----BEGIN RSA PRIVATE KEY-----``, ``OPENSSH``, ``EC``, ``DSA``, ``ENCRYPTED``, bare ``PRIVATE KEY``,
# ``PGP PRIVATE KEY BLOCK``, and the ssh.com form ``---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----``.
_KEY_BEGIN = re.compile(r"-{4,5} ?BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)? ?-{4,5}")
_KEY_END = re.compile(r"-{4,5} ?END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)? ?-{4,5}")
# Key material: a base64 run (PEM lines are 64 characters, OpenSSH 70). Within reach of the header, before
# its END: a parser's source that names the header has code there, not 40 base64 characters in a row.
_MATERIAL = re.compile(r"[A-Za-z0-9+/]{40,}")
_MATERIAL_REACH = 600
# PuTTY key files keep the private part in a ``Private-Lines: N`` section (followed by key material; a line
# number prefix is allowed: read_file and search show lines numbered).
_PUTTY = re.compile(r"Private-Lines: *\d+[ \t]*\r?\n(?:\s*\d+[|:\-] )?[A-Za-z0-9+/=]{40,}[\s\S]*?(?=Private-MAC:|\Z)")



@dataclass(frozen=True)
class Rule:
    """One credential format.

    Attributes:
        kind: Short name shown in the mask (``[masked:github-token]``).
        how: ``token``: a prefixed format (``ghp_...``); the pattern is tried where a word of the text starts
            with one of the ``hints`` (one pass over the text finds the words for every such rule).
            ``scan``: the pattern is searched in the whole text when one of the ``hints`` is in it.
        pattern: The regex; the group named ``v`` is what is masked (the whole match if there is none). Written
            to start with a literal where it can: ``re`` then skips ahead with a fast prefix search.
        source: Where the format comes from (a gitleaks rule id, a detect-secrets plugin, a vendor's docs).
        hints: Literal substrings one of which every match contains: the regex only runs when one is in the
            text (a ``str`` find).
        lower: The pattern and hints are lower-case and run on the lower-cased text (case-insensitive, without
            ``re.IGNORECASE``, which disables the prefix search).
        word_start: The match must not continue a word (``\b`` written in the pattern would, again, disable
            the prefix search).
        credible: Extra check on the value (``None``: every match is a secret).
        context: Extra check of the match in its text (the key's full name, where it stands), or ``None``.
        keywords: When given, ``{k}`` in the pattern stands for each of them in turn (group ``k``).
    """

    kind: str
    how: Literal["token", "scan"]
    pattern: str
    source: str
    hints: tuple[str, ...]
    lower: bool = False
    word_start: bool = True
    credible: Callable[[str], bool] | None = None
    context: Callable[[str, re.Match[str]], bool] | None = None
    keywords: tuple[str, ...] = ()

    # Compiled at the first scan, not at import: every start imports this module, and most one-shot answers
    # scan nothing (compiling every rule cost about 5 ms of CPU).
    @functools.cached_property
    def parts(self) -> tuple[re.Pattern[str], ...]:
        # A pattern that starts with one of several keywords is compiled once per keyword: each then starts
        # with a literal and ``re`` skips ahead to it, two to three times faster than one alternation.
        alternatives = [self.pattern.replace("{k}", f"(?P<k>{w})") for w in self.keywords] or [self.pattern]
        return tuple(re.compile(a, re.MULTILINE) for a in alternatives)

    @property
    def compiled(self) -> re.Pattern[str]:
        return self.parts[0]


_PLACEHOLDER_WORDS = frozenset(
    {
        "password", "passwd", "secret", "token", "changeme", "changeit", "example", "redacted", "none", "null",
        "undefined", "placeholder", "xxxxxxxx", "your-token", "your_token", "mytoken", "mypassword", "pass", "pwd",
        "pw", "hunter2",
    }
)  # fmt: skip
_PLACEHOLDER_PARTS = ("example", "changeme", "your_", "your-", "xxxx", "****", "...", "<", ">", "${", "{{", "%(",
                      "environ", "getenv")  # fmt: skip
_NAME_WORDS = ("secret", "token", "credential", "password")
_CODE_CHARS = frozenset("()[]{}$%`\\")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_WORD = re.compile(r"\w")


def _not_placeholder(value: str) -> bool:
    """A token that is not a template or a documented example (gitleaks allowlists ``...EXAMPLE``)."""
    low = value.lower()
    if low in _PLACEHOLDER_WORDS or any(p in low for p in _PLACEHOLDER_PARTS):
        return False
    if value.startswith(("$", "%", ":")) or set(value) <= {"*", "x", "X", "0", "."}:
        return False
    return not value.endswith("EXAMPLE") and MARKER_PREFIX not in value


def _assigned_secret(value: str) -> bool:
    """A value assigned to a secret-named key that looks like a literal credential, not code or a template.

    Letters and digits both (``hunter2hunter2``, not ``correcthorse``), no code characters
    (``os.environ["X"]``, ``get_token()``), not a dotted or snake-case identifier (``settings.SECRET_KEY``,
    ``token_value``), not a name (``m2m-client-credentials``) and not a placeholder.
    """
    if len(value) < 8 or not _not_placeholder(value) or _CODE_CHARS.intersection(value):
        return False
    if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
        return False
    if any(w in value.lower() for w in _NAME_WORDS):
        return False
    return not (_IDENTIFIER.fullmatch(value) and ("_" in value or "." in value))


def _not_template(value: str) -> bool:
    """A password in a URL: anything but a template (``${DB_PASSWORD}``, ``<password>``, ``%(pw)s``) or the
    placeholder words of documentation (``user:pass@host``, ``user:password@host``)."""
    if value.startswith(("$", "%", "<", "{")) or "{{" in value or set(value) <= {"*", "x", "X", "."}:
        return False
    return value.lower() not in _PLACEHOLDER_WORDS and MARKER_PREFIX not in value


def _basic_credentials(value: str) -> bool:
    """``Basic <base64>`` that decodes to ``user:password`` (not the word after "basic" in prose)."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except ValueError:
        return False
    return b":" in decoded and decoded.isascii() and decoded.decode("ascii").isprintable()


# What may stand before a secret-named key on its line: a read_file or search line number, a diff marker,
# ``export``, a quote, and the rest of the key's name (``db_`` of ``db_password``, ``spring.datasource.``).
_KEY_LINE_PREFIX = re.compile(r"(?:\s*\d+[|:\-] )?[ \t+\-]*(?:export\s+)?[\"']?([\w.\-]*)")
_JSON_KEY_PREFIX = re.compile(r"[\w.\-]*")


# Names that end in a secret's word but name something else: request and pagination tokens of cloud APIs.
_NOT_SECRET_NAMES = ("requesttoken", "changetoken", "clienttoken", "nexttoken", "pagetoken", "paginationtoken",
                     "continuationtoken", "idempotencytoken", "synctoken", "resumetoken", "starttoken", "csrftoken",
                     "tokenizer")  # fmt: skip


def _secret_name(name: str) -> bool:
    return not "".join(c for c in name if c.isalnum()).endswith(_NOT_SECRET_NAMES)


def _starts_key_line(hay: str, m: re.Match[str]) -> bool:
    """The key that ends at the match is the first thing on its line (``db_password = ...``, not
    ``call(password=...)`` in the middle of code, whose value is rarely a literal)."""
    start = hay.rfind("\n", 0, m.start()) + 1
    prefix = _KEY_LINE_PREFIX.fullmatch(hay, start, m.start())
    return prefix is not None and _secret_name(hay[prefix.start(1) : m.end("k")])


def _in_json_key(hay: str, m: re.Match[str]) -> bool:
    """The keyword ends a quoted JSON key (``"db_password": "..."``)."""
    quote = hay.rfind('"', max(0, m.start() - 80), m.start())
    if quote < 0 or _JSON_KEY_PREFIX.fullmatch(hay, quote + 1, m.start()) is None:
        return False
    return _secret_name(hay[quote + 1 : m.end("k")])


# Key names (lower-cased) whose values are secrets: the same words the redaction of logs uses.
_SECRET_WORDS: tuple[str, ...] = (
    "password", "passwd", "passphrase", "secret", r"secret[_\-]?key", "token", r"api[_\-]?key",
    r"access[_\-]?key", r"private[_\-]?key", r"signing[_\-]?key", "auth", "credentials?", "dsn", "_pwd",
)  # fmt: skip
TOKEN: Literal["token"] = "token"  # noqa: S105 - a kind of rule
SCAN: Literal["scan"] = "scan"
_KV_HINTS = ("pass", "secret", "token", "key", "auth", "credential", "dsn", "pwd")

RULES: tuple[Rule, ...] = (
    # --- private keys are removed before these run (see remove_private_keys) ---
    # --- cloud providers ---
    Rule("aws-access-key", TOKEN, r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b", "gitleaks aws-access-token",
         ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"), credible=_not_placeholder),
    Rule("aws-secret-key", SCAN,
         r"aws_?secret_?(?:access_?)?key[\"']?\s*[:=]\s*[\"']?(?P<v>[a-z0-9/+=]{40})(?![a-z0-9/+=])",
         "detect-secrets AWSKeyDetector", ("aws",), lower=True, word_start=False, credible=_not_placeholder),
    Rule("gcp-api-key", TOKEN, r"AIza[0-9A-Za-z_\-]{35}", "gitleaks gcp-api-key", ("AIza",)),
    Rule("google-oauth-secret", TOKEN, r"GOCSPX-[A-Za-z0-9_\-]{28}", "gitleaks gcp-client-secret (OAuth client secret)",
         ("GOCSPX-",)),
    Rule("google-oauth-token", TOKEN, r"ya29\.[0-9A-Za-z_\-]{20,}", "Google OAuth 2.0 access token format "
         "(developers.google.com/identity)", ("ya29.",)),
    Rule("google-refresh-token", SCAN, r"1//0[0-9A-Za-z_\-]{40,}", "Google OAuth 2.0 refresh token format", ("1//0",)),
    Rule("azure-storage-key", SCAN, r"accountkey=(?P<v>[a-z0-9+/]{86}==)", "detect-secrets AzureStorageKeyDetector",
         ("accountkey=",), lower=True, word_start=False),
    Rule("azure-sas-signature", SCAN, r"[?&]sig=(?P<v>[A-Za-z0-9%+/=]{30,})", "Azure shared access signature (sig=)",
         ("sig=",), word_start=False),
    Rule("azure-ad-secret", SCAN, r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])",
         "gitleaks azure-ad-client-secret", ("Q~",)),
    Rule("digitalocean-token", TOKEN, r"do[por]_v1_[a-f0-9]{64}\b", "gitleaks digitalocean-pat",
         ("dop_v1_", "doo_v1_", "dor_v1_")),
    # --- code hosts and CI ---
    Rule("github-token", TOKEN, r"gh[pousr]_[A-Za-z0-9]{36,}\b|github_pat_[A-Za-z0-9_]{22,}",
         "gitleaks github-pat, github-oauth, github-app-token, github-fine-grained-pat",
         ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    Rule("gitlab-token", TOKEN, r"gl(?:pat|dt|rt|ptt|cbt|oas|soat|ft|imt|agent|wt|cf)-[A-Za-z0-9_\-]{20,}"
         r"|GR1348941[A-Za-z0-9_\-]{20,}", "gitleaks gitlab-pat, gitlab-deploy-token, gitlab-runner-*, gitlab-cicd-*",
         ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "gloas-", "glsoat-", "glft-", "glimt-", "glagent-",
          "glwt-", "glcf-", "GR1348941")),
    Rule("bitbucket-token", TOKEN, r"ATBB[A-Za-z0-9_=.\-]{32,}", "Bitbucket app password format", ("ATBB",)),
    Rule("atlassian-token", TOKEN, r"ATATT3[A-Za-z0-9_\-=]{100,}", "gitleaks atlassian-api-token", ("ATATT3",)),
    Rule("buildkite-token", TOKEN, r"bkua_[a-f0-9]{40}\b", "Buildkite API access token format", ("bkua_",)),
    Rule("circleci-token", TOKEN, r"CCIPAT_[A-Za-z0-9]{20,}_[a-f0-9]{40}\b", "CircleCI personal API token format",
         ("CCIPAT_",)),
    Rule("terraform-token", SCAN, r"[a-z0-9]{14}\.atlasv1\.[a-z0-9\-_=]{60,70}", "gitleaks hashicorp-tf-api-token",
         ("atlasv1",)),
    Rule("vault-token", TOKEN, r"hv[sb]\.[A-Za-z0-9_\-]{24,}", "gitleaks vault-service-token, vault-batch-token",
         ("hvs.", "hvb.")),
    Rule("doppler-token", TOKEN, r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}", "gitleaks doppler-api-token",
         ("dp.",)),
    # --- package registries ---
    Rule("npm-token", TOKEN, r"npm_[A-Za-z0-9]{36}\b", "gitleaks npm-access-token", ("npm_",)),
    Rule("pypi-token", TOKEN, r"pypi-AgE[A-Za-z0-9_\-]{50,}", "gitleaks pypi-upload-token", ("pypi-AgE",)),
    Rule("rubygems-token", TOKEN, r"rubygems_[a-f0-9]{48}\b", "gitleaks rubygems-api-token", ("rubygems_",)),
    Rule("docker-hub-token", TOKEN, r"dckr_pat_[A-Za-z0-9_\-]{20,}", "Docker Hub personal access token format",
         ("dckr_pat_",)),
    # --- chat, payments, mail ---
    Rule("slack-token", TOKEN, r"xox[abeprs]-[A-Za-z0-9\-]{10,}|xapp-\d-[A-Za-z0-9\-]{20,}",
         "gitleaks slack-bot-token, slack-user-token, slack-app-token...", ("xox", "xapp-")),
    Rule("slack-webhook", SCAN, r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9_/+\-]{20,})",
         "gitleaks slack-webhook-url", ("hooks.slack.com",), word_start=False),
    Rule("discord-webhook", SCAN, r"/api/webhooks/(?P<v>\d+/[A-Za-z0-9_\-]{40,})", "Discord webhook URL format",
         ("/api/webhooks/",), word_start=False),
    Rule("telegram-bot-token", SCAN, r"\d{8,10}:AA[0-9A-Za-z_\-]{33}\b", "gitleaks telegram-bot-api-token", (":AA",)),
    Rule("stripe-key", TOKEN, r"(?:sk|rk|whsec)_(?:live_|test_)?[0-9a-zA-Z]{24,}\b", "gitleaks stripe-access-token",
         ("sk_", "rk_", "whsec_")),
    Rule("sendgrid-key", TOKEN, r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}\b", "gitleaks sendgrid-api-token",
         ("SG.",)),
    Rule("twilio-key", TOKEN, r"SK[0-9a-fA-F]{32}\b", "gitleaks twilio-api-key", ("SK",)),
    Rule("mailgun-key", TOKEN, r"key-[0-9a-z]{32}\b", "gitleaks mailgun-private-api-token", ("key-",)),
    Rule("shopify-token", TOKEN, r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", "gitleaks shopify-access-token...", ("shp",)),
    # --- AI providers ---
    Rule("anthropic-key", TOKEN, r"sk-ant-[A-Za-z0-9_\-]{20,}", "gitleaks anthropic-api-key", ("sk-ant-",)),
    Rule("openai-key", TOKEN, r"sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}", "gitleaks openai-api-key",
         ("sk-",), credible=_not_placeholder),
    Rule("huggingface-token", TOKEN, r"hf_[A-Za-z0-9]{30,}|api_org_[A-Za-z0-9]{30,}",
         "gitleaks huggingface-access-token, huggingface-organization-api-token", ("hf_", "api_org_")),
    Rule("ai-provider-key", TOKEN,
         r"gsk_[A-Za-z0-9]{48,}|xai-[A-Za-z0-9]{60,}|r8_[A-Za-z0-9]{37}|pplx-[A-Za-z0-9]{40,}",
         "Groq, xAI, Replicate and Perplexity key formats", ("gsk_", "xai-", "r8_", "pplx-")),
    # --- observability and productivity SaaS ---
    Rule("grafana-token", TOKEN, r"glc_[A-Za-z0-9+/]{32,}=*|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}",
         "gitleaks grafana-cloud-api-token, grafana-service-account-token", ("glc_", "glsa_")),
    Rule("newrelic-key", TOKEN, r"NRAK-[A-Z0-9]{27}\b", "gitleaks new-relic-user-api-key", ("NRAK-",)),
    Rule("sentry-token", TOKEN, r"sntry[su]_[A-Za-z0-9+/=_\-]{40,}", "gitleaks sentry-org-token, sentry-user-token",
         ("sntr",)),
    Rule("linear-key", TOKEN, r"lin_api_[A-Za-z0-9]{40}\b", "gitleaks linear-api-key", ("lin_api_",)),
    Rule("postman-key", TOKEN, r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", "gitleaks postman-api-token", ("PMAK-",)),
    Rule("databricks-token", TOKEN, r"dapi[a-f0-9]{32}(?:-\d)?\b", "gitleaks databricks-api-token", ("dapi",)),
    # --- generic shapes ---
    Rule("jwt", TOKEN, r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", "gitleaks jwt", ("eyJ",)),
    Rule("bearer-token", SCAN, r"(?:bearer|token)[ \t]+(?P<v>[a-z0-9._~+/\-]{20,}=*)",
         "detect-secrets KeywordDetector (Authorization headers)", ("bearer", "token"), lower=True,
         credible=_assigned_secret),
    Rule("basic-auth", SCAN, r"basic[ \t]+(?P<v>[a-z0-9+/]{12,}={0,2})(?![a-z0-9+/=])",
         "detect-secrets BasicAuthDetector (Authorization: Basic)", ("basic",), lower=True,
         credible=_basic_credentials),
    Rule("url-password", SCAN, r"://[^\s/:@\"'<>]+:(?P<v>[^\s/@\"'<>]+)@[^\s/@\"'<>]",
         "detect-secrets BasicAuthDetector (user:password@ in a URL)", ("://",), word_start=False,
         credible=_not_template),
    Rule("url-token", SCAN, r"://(?P<v>[A-Za-z0-9_\-]{20,})@",
         "a token as the user name of a URL (GitHub, Sentry DSNs)",
         ("://",), word_start=False, credible=_not_placeholder),
    Rule("secret-env", SCAN, r"(?:PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|ACCESS_KEY|PRIVATE_KEY|_DSN|_PWD|_KEY|_AUTH)"
         r"[ \t]*=[ \t]*[\"']?(?P<v>[^\s\"'`;&|]{8,})", "detect-secrets KeywordDetector (NAME=value)",
         ("PASS", "SECRET", "TOKEN", "KEY", "DSN", "PWD", "AUTH"), word_start=False, credible=_assigned_secret),
    Rule("secret-field", SCAN, r"{k}[\"']?[ \t]*[:=][ \t]*[\"']?(?P<v>[^\s\"'#,;]{8,})"
         r"(?=[\"']?[ \t]*(?:[#,;]|$))", "detect-secrets KeywordDetector (key = value lines of config and code)",
         _KV_HINTS, lower=True, word_start=False, credible=_assigned_secret, context=_starts_key_line,
         keywords=_SECRET_WORDS),
    Rule("secret-json", SCAN, r"{k}\"\s*:\s*\"(?P<v>[^\"\s]{8,})\"",
         "detect-secrets KeywordDetector (JSON)",
         _KV_HINTS, lower=True, word_start=False, credible=_assigned_secret, context=_in_json_key,
         keywords=_SECRET_WORDS),
)  # fmt: skip


@dataclass(frozen=True)
class Scan:
    """What :func:`mask_secrets` found. ``kinds`` counts masked values per rule kind."""

    text: str
    kinds: dict[str, int]
    private_keys: int

    @property
    def masked(self) -> int:
        return sum(self.kinds.values()) + self.private_keys

    def note(self) -> str:
        """One line for the model: what was masked and why the value is not there."""
        parts = []
        if self.private_keys:
            parts.append(f"{self.private_keys} private key block(s) replaced by {KEY_MARKER!r}")
        values = sum(self.kinds.values())
        if values:
            parts.append(f"{values} value(s) in credential formats ({', '.join(sorted(self.kinds))}) shown as "
                         "[masked:KIND]")
        return ("(note: " + "; ".join(parts) + ". They are kept from the model on purpose; do not try to read them "
                "another way. If the user needs them, they can look themselves.)")


def _key_blocks(text: str) -> list[tuple[int, int]]:
    """Spans of private key blocks that hold key material (from the header to its END, or to the end)."""
    spans: list[tuple[int, int]] = []
    pos = 0
    while True:
        head = _KEY_BEGIN.search(text, pos)
        if head is None:
            break
        stop = _block_stop(text, head)
        if stop is None:
            pos = head.end()  # a header named in code or docs, not a key
            continue
        spans.append((head.start(), stop))
        pos = stop
    return spans


def _block_stop(text: str, head: re.Match[str]) -> int | None:
    """Where the block a header opens ends (its END line, or the end of ``text``); ``None`` when no key material
    follows the header within reach, before its END: then it is no key."""
    end = _KEY_END.search(text, head.end())
    limit = min(head.end() + _MATERIAL_REACH, end.start() if end else len(text))
    if _MATERIAL.search(text, head.end(), limit) is None:
        return None
    return end.end() if end else len(text)


KEY_LINE_PATTERNS = (_KEY_BEGIN.pattern, _KEY_END.pattern)
"""The header and the END line of a private key block (regex sources), for a reader that follows blocks across a
file it reads in parts (:mod:`swebash_ai.tools.key_ranges`)."""


def opens_key_block(text: str) -> bool:
    """True when ``text`` begins with a private key header that :func:`_key_blocks` takes for a block: key material
    follows within reach, before its END. ``text`` must run at least that reach past the header."""
    head = _KEY_BEGIN.match(text)
    return head is not None and _block_stop(text, head) is not None


def holds_private_key(text: str) -> bool:
    """True when ``text`` holds a private key block with key material (not a mere mention of the header), or
    a key's body printed without its header (:mod:`swebash_ai.safety.key_body`)."""
    headed = "PRIVATE KEY" in text or "Private-Lines:" in text
    if headed and (_key_blocks(text) or _PUTTY.search(text) is not None):
        return True
    return bool(key_body_spans(text))


def is_key_file(text: str) -> bool:
    """True when a file's text is essentially private keys (what is left without them is a few lines of labels).

    Such a file is refused whole, like a protected file; a source file that embeds a test key is read with
    the block replaced.
    """
    if not holds_private_key(text):
        return False
    rest = text
    for start, stop in reversed(_key_blocks(text)):
        rest = rest[:start] + rest[stop:]
    rest = _PUTTY.sub("", rest)
    for start, stop in reversed(key_body_spans(rest)):
        rest = rest[:start] + rest[stop:]
    return len(rest.strip()) < 400


def remove_private_keys(text: str) -> tuple[str, int]:
    """Key blocks replaced by :data:`KEY_MARKER`, followed by as many newlines as they spanned (line numbers
    after them stay right); returns the text and the number of blocks. Bodies printed without their header
    (``tail -n +2 key.pem``) count as blocks too."""
    text, blocks = _remove_keys(text)
    return text, len(blocks)


@dataclass(frozen=True)
class KeyLines:
    """Where a text's private keys are, by line: what :func:`private_key_lines` returns.

    Attributes:
        shown: 0-based line index -> what that line is once the keys are removed (:data:`KEY_MARKER` on a
            block's first line, what stood before its header kept; empty lines after it), for every line a
            removed block touches.
        blocks: (first, last) 0-based line indexes of each removed block, in order.
    """

    shown: dict[int, str]
    blocks: list[tuple[int, int]]

    def blocks_in(self, first: int, last: int) -> int:
        """How many blocks touch lines ``first..last`` (0-based, inclusive)."""
        return sum(1 for a, b in self.blocks if a <= last and first <= b)


def private_key_lines(text: str) -> KeyLines:
    """The lines of ``text`` that :func:`remove_private_keys` changes, and what they become.

    A reader that shows part of a file (``read_file`` with a line range) masks the lines of its range with
    this, judged on the whole file: two lines from the middle of a PEM key, or a headerless body whose DER
    start is above the range, carry nothing a scan of the range alone could recognise. The lines are the
    ones a read of the whole file would have masked, so a range never shows more, and never masks more.
    """
    removed, blocks = _remove_keys(text)
    if not blocks:
        return KeyLines({}, [])
    lines = removed.split("\n")
    shown = {i: lines[i].removesuffix("\r") for a, b in blocks for i in range(a, b + 1)}
    return KeyLines(shown, blocks)


def _remove_keys(text: str) -> tuple[str, list[tuple[int, int]]]:
    """:func:`remove_private_keys`, with the (first, last) line indexes of each block (blocks keep the line
    count, so the indexes hold in the text before and after each step)."""
    blocks: list[tuple[int, int]] = []

    def lines_of(spans: list[tuple[int, int]]) -> None:
        blocks.extend((text.count("\n", 0, a), text.count("\n", 0, max(a, b - 1))) for a, b in spans)

    if "PRIVATE KEY" in text or "Private-Lines:" in text:
        for found in (_key_blocks, lambda t: [m.span() for m in _PUTTY.finditer(t)]):
            spans = found(text)
            lines_of(spans)
            text = _replace_spans(text, spans)
    bodies = key_body_spans(text)
    lines_of(bodies)
    return _replace_spans(text, bodies), sorted(blocks)


def _replace_spans(text: str, spans: list[tuple[int, int]]) -> str:
    for start, stop in reversed(spans):
        text = text[:start] + KEY_MARKER + "\n" * text.count("\n", start, stop) + text[stop:]
    return text


# Words of the text where a prefixed token may start: no ``=``, ``:``, ``@``, ``/``, quotes or ``+`` (what stands
# before a token: ``KEY=``, ``https://user:``, a diff's ``+``); a leading ``-`` (a diff's) is skipped below.
_TOKEN_WORD = re.compile(r"(?<![A-Za-z0-9_.~\-])[A-Za-z0-9_.~\-]{15,}")
_BY_PREFIX: tuple[tuple[str, Rule], ...] = tuple((h, r) for r in RULES if r.how == "token" for h in r.hints)
_PREFIXES: tuple[str, ...] = tuple(p for p, _r in _BY_PREFIX)


def blank_private_keys(data: bytes) -> bytes:
    """:func:`remove_private_keys` on a file's bytes (``data`` itself when it holds no key: the common case
    costs a few ``bytes`` finds and one ``translate``)."""
    if b"PRIVATE KEY" not in data and b"Private-Lines:" not in data and not bytes_may_hold_key_body(data):
        return data
    text, blocks = remove_private_keys(data.decode("utf-8", "surrogateescape"))
    return text.encode("utf-8", "surrogateescape") if blocks else data


def mask_secrets(text: str) -> Scan:
    """Remove private key blocks and mask values in known credential formats (see the module docstring).

    Every rule finds its spans on the same text; a span overlapping one found by an earlier rule is dropped;
    the text is rebuilt once.
    """
    text, keys = remove_private_keys(text)
    lowered = text.lower()
    if len(lowered) != len(text):  # a few characters grow when lower-cased (U+0130): keep offsets aligned
        lowered = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    spans: list[tuple[int, int, str]] = []
    _find_tokens(text, spans)
    for rule in RULES:
        hay = lowered if rule.lower else text
        if rule.how == "scan" and any(hint in hay for hint in rule.hints):
            _find(rule, text, hay, spans)
    if not spans:
        return Scan(text, {}, keys)
    spans.sort()
    out: list[str] = []
    kinds: dict[str, int] = {}
    pos = 0
    for start, stop, kind in spans:
        out.append(text[pos:start])
        out.append(f"{MARKER_PREFIX}{kind}]")
        kinds[kind] = kinds.get(kind, 0) + 1
        pos = stop
    out.append(text[pos:])
    return Scan("".join(out), kinds, keys)


def _find_tokens(text: str, spans: list[tuple[int, int, str]]) -> None:
    """The prefixed formats, tried only at the words that start with one of their prefixes."""
    for word in _TOKEN_WORD.finditer(text):
        start = word.start()
        token = word.group()
        if token.startswith("-"):
            stripped = token.lstrip("-")
            start += len(token) - len(stripped)
            token = stripped
        if not token.startswith(_PREFIXES):
            continue
        for prefix, rule in _BY_PREFIX:
            if not token.startswith(prefix):
                continue
            m = rule.compiled.match(text, start)
            if m is None or (rule.credible is not None and not rule.credible(m.group())):
                continue
            if not any(m.start() < b and a < m.end() for a, b, _k in spans):
                spans.append((m.start(), m.end(), rule.kind))
            break


def _find(rule: Rule, text: str, hay: str, spans: list[tuple[int, int, str]]) -> None:
    for part in rule.parts:
        _find_part(rule, part, text, hay, spans)


def _find_part(rule: Rule, part: re.Pattern[str], text: str, hay: str, spans: list[tuple[int, int, str]]) -> None:
    named = "v" in part.groupindex
    for m in part.finditer(hay):
        if rule.word_start and m.start() and _WORD.match(hay, m.start() - 1):
            continue
        start, stop = m.span("v" if named else 0)
        if start < 0:
            continue
        if rule.credible is not None and not rule.credible(text[start:stop]):
            continue
        if rule.context is not None and not rule.context(hay, m):
            continue
        if any(start < b and a < stop for a, b, _k in spans):
            continue
        spans.append((start, stop, rule.kind))
