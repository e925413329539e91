"""The credential formats the content scan masks: one :class:`Rule` per format, each naming its source.

Contract:
    :data:`RULES` is the table :func:`swebash_ai.safety.secrets.mask_secrets` runs, in order (an earlier
    rule's span wins over a later overlapping one): service formats first (:mod:`secret_formats`, prefixed
    tokens a service issues), then the generic shapes here (JWTs, ``Bearer``/``Basic`` credentials, URL
    credentials, secret-named ``NAME=value`` lines, JSON fields and named values).

Why:
    A table of data, not code: every rule says where its format comes from (a gitleaks rule id, a
    noseyparker or kingfisher rule id, a detect-secrets plugin, a vendor's documentation) so a reviewer
    can check it, and ``tests/safety/test_secret_samples.py`` measures the whole table on the scanners'
    published samples.

Pure: standard library only.
"""

from __future__ import annotations

import base64
import functools
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

MARKER_PREFIX = "[masked:"

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
        word_check: For a ``token`` rule: a cheap test of the word before the pattern is tried (a Discord token
            has its first dot 24 to 28 characters in), for formats whose hints start many ordinary words.
        in_word: For a ``scan`` rule: its hints can only stand inside a word of 15 characters or more (letters,
            digits, ``_.~-``), so they are looked for among those words, not in the whole text.
        upper: The rule runs on the lower-cased text like ``lower``, but its keyword must be upper case in the
            text (``DB_PASSWORD=``, not ``db_password=``).
        at_end: For a ``token`` rule: the ``hints`` are found in the last 6 characters of the word, not at its
            start (Mailchimp's keys end in ``-us`` and a data centre number).
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
    at_end: bool = False
    upper: bool = False
    word_check: Callable[[str], bool] | None = None
    in_word: bool = False

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
# A part of a name that is random, not a word: 10 or more characters mixing upper and lower case and digits.
_RANDOM_PART = re.compile(r"(?=[A-Za-z0-9]*[0-9])(?=[A-Za-z0-9]*[a-z])(?=[A-Za-z0-9]*[A-Z])[A-Za-z0-9]{10,}")


def not_placeholder(value: str) -> bool:
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
    if len(value) < 8 or not not_placeholder(value) or _CODE_CHARS.intersection(value):
        return False
    if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
        return False
    if any(w in value.lower() for w in _NAME_WORDS):
        return False
    if _IDENTIFIER.fullmatch(value) and ("_" in value or "." in value):
        return any(_RANDOM_PART.fullmatch(p) for p in re.split(r"[_.]", value))  # ``HedmnK9h6KD_eh9KK8FlI9ah``
    return True


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
                     "tokenizer", "granttoken", "lifecycleactiontoken", "s3key", "objectkey", "cachekey", "sortkey",
                     "partitionkey", "primarykey", "foreignkey", "hashkey", "rangekey", "routingkey",
                     "idempotencykey")  # fmt: skip


def _secret_name(name: str) -> bool:
    """Not a request or pagination token of a cloud API, not a public key or token (``public_key``,
    ``publicToken``: public by name)."""
    joined = "".join(c for c in name if c.isalnum()).lower()
    return not joined.endswith(_NOT_SECRET_NAMES) and "public" not in joined


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
# Written to start with one of a few literals (``pass``, ``secret``, ``token``, ``key``...), the words before ``key``
# as lookbehinds: the scan finds each literal once for every rule (see ``secrets._plan``).
_KEY_AFTER = "(?:" + "|".join(f"(?<={w}{sep})" for w in ("api", "access", "private", "signing") for sep in "_-")
_KEY_AFTER += "|(?<=api)|(?<=access)|(?<=private)|(?<=signing))"
_SECRET_WORDS: tuple[str, ...] = (
    "pass(?:word|wd|phrase)", r"secret(?:[_\-]?key)?", "token", _KEY_AFTER + "key", "auth", "credentials?", "dsn",
    "(?<=_)pwd",
)  # fmt: skip
# Words that name a secret anywhere in a name (``fbApiKey``, ``SONAR_LOGIN``, ``nuget key``), for the named-value
# rule; what the name ends with after them decides whether it names the secret or something about it.
_NAMED_WORDS: tuple[str, ...] = ("key", "secret", "token", "pat", "pass(?:w)", "pwd", "credential", "login", "auth")
_NAMED_HINTS = ("key", "secret", "token", "pat", "passw", "pwd", "credential", "login", "auth")
# Names of things about a secret, not the secret: ``key_id``, ``token_url``, ``secret_name``, ``auth_type``...
_ABOUT_SUFFIXES = ("id", "ids", "name", "names", "url", "uri", "path", "file", "type", "size", "length", "len", "count",
                   "format", "prefix", "ttl", "expires", "expiry", "header", "field", "param", "env", "var", "dir",
                   "hash", "sha", "digest", "version", "index", "pattern", "regex", "alg", "algorithm", "method",
                   "mode", "class", "ref", "template", "store", "provider", "endpoint", "host", "user", "username",
                   "kind", "label", "ring", "board", "word", "words", "stroke", "frame", "frames", "note", "notes",
                   "pair", "space", "spaces", "map", "set", "list", "fn", "func", "str", "hint", "policy", "scope",
                   "scopes", "server", "service", "info", "data", "text", "bytes", "bits", "char", "chars")  # fmt: skip
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.-")


def _named_here(hay: str, m: re.Match[str]) -> bool:
    """The name around the keyword names the secret itself: not ``key_id``, ``token_url``, ``auth_type``, not a
    cloud API's request token, and the keyword starts a word part (``apikey``, ``api_key``, ``fbApiKey`` lowered,
    not ``monkey``)."""
    start = m.start("k")
    begin = start
    while begin > 0 and hay[begin - 1] in _NAME_CHARS:
        begin -= 1
    stop = m.end("k")
    end = stop
    while end < len(hay) and hay[end].isalnum():
        end += 1
    name = hay[begin:end]
    rest = hay[stop:end]
    plural = rest in ("s", "es") or rest.startswith(("s_", "word", "phrase"))
    if rest and not plural and not rest.endswith(("key", "secret", "token", "password")):
        return False  # ``keyboard``, ``tokenizer``, ``authority``: another word that starts with the keyword
    parts = [p for p in re.split(r"[_.\-]+", name) if p]
    if hay[m.start("v") - 1] == "-" and "-" in m.group("v") and not _UUID.fullmatch(m.group("v")):
        return False  # ``custom-key-store-1628627769469``: a kebab-case name goes on, no value follows
    return bool(parts) and parts[-1] not in _ABOUT_SUFFIXES and _secret_name(name)


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+){2,}")
_HEX = re.compile(r"[a-f0-9]+")
_VERSION = re.compile(r"\d\.\d+(?:\.\d+)*$|-\d+\.\d+")


def _random(value: str) -> bool:
    """A random token, not a camel-case name (``hf_requiredCharacteristicTypes``): a digit, or the case changes
    often (random letters change case every other character or so, words every few)."""
    if any(c.isdigit() for c in value):
        return True
    changes = sum(1 for a, b in itertools.pairwise(value) if a.isalpha() and b.isalpha() and a.isupper() != b.isupper())
    return changes * 3 >= len(value)


def named_value(value: str) -> bool:
    """A value named as a secret that looks like one: 16 characters or more, letters and digits, not an identifier,
    a path, a URL, a version or a placeholder."""
    value = value.rstrip("=:.")
    if len(value) < 16 or not _assigned_secret(value):
        return False
    if value.startswith(("/", "./", "../", "~/")) or value.count("/") > 2 or value.count(".") > 2:
        return False
    if _VERSION.search(value):
        return False  # ``jjwt-jackson-0.11.2``, ``SalesResults-1.2``: a name with a version
    if _SLUG.fullmatch(value) and not all(_HEX.fullmatch(p) for p in value.split("-")):
        return False  # ``cmp2-qat-1208358310``: words joined by hyphens (a UUID-shaped token is all hex)
    return sum(c.isdigit() for c in value) >= 2 and len(set(value)) >= 8


def mixed_parts(value: str) -> bool:
    """Every dot-separated part of a token mixes letters and digits (a Discord bot token, not ``a.b.c`` code)."""
    parts = value.split(".")
    return all(any(c.isdigit() for c in p) and any(c.isalpha() for c in p) for p in (parts[0], parts[-1]))


TOKEN: Literal["token"] = "token"  # noqa: S105 - a kind of rule
SCAN: Literal["scan"] = "scan"
_KV_HINTS = ("pass", "secret", "token", "key", "auth", "credential", "dsn", "pwd")

SERVICES: tuple[Rule, ...] = (
    # --- private keys are removed before these run (see remove_private_keys) ---
    # --- cloud providers ---
    Rule("aws-access-key", TOKEN, r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b", "gitleaks aws-access-token",
         ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"), credible=not_placeholder),
    Rule("aws-secret-key", SCAN,
         r"{k}_?(?:access_?)?key[\"']?\s*[:=]\s*[\"']?(?P<v>[a-z0-9/+=]{40})(?![a-z0-9/+=])",
         "detect-secrets AWSKeyDetector", ("aws",), lower=True, word_start=False, credible=not_placeholder,
         keywords=("(?:(?<=aws)|(?<=aws_))secret",)),
    Rule("gcp-api-key", TOKEN, r"AIza[0-9A-Za-z_\-]{35}", "gitleaks gcp-api-key", ("AIza",)),
    Rule("google-oauth-secret", TOKEN, r"GOCSPX-[A-Za-z0-9_\-]{28}", "gitleaks gcp-client-secret (OAuth client secret)",
         ("GOCSPX-",)),
    Rule("google-oauth-token", TOKEN, r"ya29\.[0-9A-Za-z_\-]{20,}", "Google OAuth 2.0 access token format "
         "(developers.google.com/identity)", ("ya29.",)),
    Rule("google-refresh-token", SCAN, r"1//0[0-9A-Za-z_\-]{40,}", "Google OAuth 2.0 refresh token format", ("1//0",)),
    Rule("azure-storage-key", SCAN, r"{k}=(?P<v>[a-z0-9+/]{86}==)", "detect-secrets AzureStorageKeyDetector",
         ("accountkey=",), lower=True, word_start=False, keywords=("(?<=account)key",)),
    Rule("azure-sas-signature", SCAN, r"[?&]sig=(?P<v>[A-Za-z0-9%+/=]{30,})", "Azure shared access signature (sig=)",
         ("sig=",), word_start=False),
    Rule("azure-ad-secret", SCAN, r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])",
         "gitleaks azure-ad-client-secret", ("Q~",), in_word=True),
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
         ("sk-",), credible=not_placeholder),
    Rule("huggingface-token", TOKEN, r"hf_[A-Za-z0-9]{30,}|api_org_[A-Za-z0-9]{30,}",
         "gitleaks huggingface-access-token, huggingface-organization-api-token", ("hf_", "api_org_"),
         credible=_random),
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
)  # fmt: skip

GENERIC: tuple[Rule, ...] = (
    Rule("jwt", TOKEN, r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}(?:\.[A-Za-z0-9_\-]*)?", "gitleaks jwt, "
         "detect-secrets JwtTokenDetector (unsigned too)", ("eyJ",)),
    Rule("bearer-token", SCAN, r"{k}[ \t]+(?P<v>[a-z0-9._~+/\-]{20,}=*)",
         "detect-secrets KeywordDetector (Authorization headers)", ("bearer", "token"), lower=True,
         credible=_assigned_secret, keywords=("bearer", "token")),
    Rule("basic-auth", SCAN, r"{k}[ \t]+(?P<v>[a-z0-9+/]{12,}={0,2})(?![a-z0-9+/=])",
         "detect-secrets BasicAuthDetector (Authorization: Basic)", ("basic",), lower=True,
         credible=_basic_credentials, keywords=("basic",)),
    Rule("url-password", SCAN, r"://[^\s/:@\"'<>]+:(?P<v>[^\s/@\"'<>]+)@[^\s/@\"'<>]",
         "detect-secrets BasicAuthDetector (user:password@ in a URL)", ("://",), word_start=False,
         credible=_not_template),
    Rule("url-token", SCAN, r"://(?P<v>[A-Za-z0-9_\-]{20,})@",
         "a token as the user name of a URL (GitHub, Sentry DSNs)",
         ("://",), word_start=False, credible=not_placeholder),
    Rule("secret-env", SCAN, r"{k}[ \t]*=[ \t]*[\"']?(?P<v>[^\s\"'`;&|]{8,})",
         "detect-secrets KeywordDetector (NAME=value)",
         ("pass", "secret", "token", "key", "dsn", "pwd", "auth"), word_start=False, credible=_assigned_secret,
         upper=True, keywords=("pass(?:word|wd)", "secret", "token", "(?:(?<=api)|(?<=api_)|(?<=access_)|(?<=private_)"
                               "|(?<=_))key", "(?<=_)dsn", "(?<=_)pwd", "(?<=_)auth")),
    Rule("secret-field", SCAN, r"{k}[\"']?[ \t]*[:=][ \t]*[\"']?(?P<v>[^\s\"'#,;]{8,})"
         r"(?=[\"']?[ \t]*(?:[#,;]|$))", "detect-secrets KeywordDetector (key = value lines of config and code)",
         _KV_HINTS, lower=True, word_start=False, credible=_assigned_secret, context=_starts_key_line,
         keywords=_SECRET_WORDS),
    Rule("secret-json", SCAN, r"{k}\"\s*:\s*\"(?P<v>[^\"\s]{8,})\"",
         "detect-secrets KeywordDetector (JSON)",
         _KV_HINTS, lower=True, word_start=False, credible=_assigned_secret, context=_in_json_key,
         keywords=_SECRET_WORDS),
    Rule("named-secret", SCAN, r"{k}[a-z0-9]*(?:[\"'\]]|\\\")*(?:[ \t]*(?:=>|:{1,3}=|\?=|=|:|\|)[ \t]*|[ \t]+|-)"
         r"(?:[\"'`]|\\\")?"
         r"(?P<v>[a-z0-9_+/=.~\-]{16,})(?=[\"'`\s,;)}\]&#<|\\]|$)",
         "gitleaks generic-api-key, noseyparker np.generic.1-2 (a key, secret or token value named anywhere on a line)",
         _NAMED_HINTS, lower=True, word_start=False, credible=named_value, context=_named_here, keywords=_NAMED_WORDS),
)  # fmt: skip
