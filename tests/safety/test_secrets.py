"""Secrets by content: the detector's table, one row per credential format, and what it must leave alone.

Every credential below is assembled at run time from a prefix and random characters, so no file of this
repository holds a value in a real format (the false-mask benchmark scans the repository).
"""

from __future__ import annotations

import base64
import json
import random
import string
from pathlib import Path

import pytest

from swebash_ai.safety.secrets import (
    KEY_MARKER,
    RULES,
    holds_private_key,
    is_key_file,
    mask_secrets,
    remove_private_keys,
)

_RNG = random.Random(32)


def rand(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    """Random characters from ``alphabet``, with a digit and a letter where it has both (as real tokens have)."""
    letters = [c for c in alphabet if c.isalpha()]
    if not letters:
        return "".join(_RNG.choice(alphabet) for _ in range(n))
    return "".join(_RNG.choice(alphabet) for _ in range(n - 2)) + _RNG.choice(string.digits) + _RNG.choice(letters)


HEX = "0123456789abcdef"
B64 = string.ascii_letters + string.digits + "+/"


def pem(label: str, lines: int = 6, width: int = 64) -> str:
    body = "\n".join(rand(width, B64) for _ in range(lines))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----\n"


# (text holding a secret, the secret, the kind that masks it)
CASES: list[tuple[str, str, str]] = []


def case(template: str, secret: str, kind: str) -> None:
    CASES.append((template.format(secret), secret, kind))


case("export OPENAI_API_KEY={}", "sk-proj-" + rand(48), "openai-key")  # why: .bashrc line
case('ANTHROPIC_API_KEY="{}"', "sk-ant-api03-" + rand(80), "anthropic-key")  # why: Anthropic format
case("token: {}", "ghp_" + rand(36), "github-token")  # why: GitHub classic PAT
case("    oauth_token: {}", "gho_" + rand(36), "github-token")  # why: ~/.config/gh/hosts.yml
case("GH={}", "github_pat_" + rand(82, string.ascii_letters + string.digits + "_"), "github-token")  # why: fine-grained
case("-H 'PRIVATE-TOKEN: {}'", "glpat-" + rand(20), "gitlab-token")  # why: GitLab header
case("aws_access_key_id = {}", "AKIA" + rand(16, string.ascii_uppercase + string.digits), "aws-access-key")
case("aws_secret_access_key = {}", rand(40, B64), "aws-secret-key")  # why: ~/.aws/credentials under another name
case("key={}", "AIza" + rand(35), "gcp-api-key")  # why: Google API key
case('"client_secret": "{}"', "GOCSPX-" + rand(28), "google-oauth-secret")  # why: OAuth client
case('"access_token": "{}"', "ya29." + rand(60), "google-oauth-token")  # why: ~/.gemini/oauth_creds.json
case('"refresh_token": "{}"', "1//0" + rand(60), "google-refresh-token")  # why: Google refresh tokens
case("AccountName=x;AccountKey={};EndpointSuffix=core.windows.net", rand(86, B64) + "==", "azure-storage-key")
case("https://x.blob.core.windows.net/c?sv=2022&sig={}", rand(44, string.ascii_letters + string.digits + "%"),
     "azure-sas-signature")  # why: SAS URL
case("SLACK={}", "xoxb-" + rand(11, string.digits) + "-" + rand(24), "slack-token")  # why: Slack bot token
case("curl https://hooks.slack.com/services/{}", "T" + rand(8) + "/B" + rand(8) + "/" + rand(24), "slack-webhook")
case("https://discord.com/api/webhooks/{}", rand(18, string.digits) + "/" + rand(68), "discord-webhook")
case("stripe.api_key = '{}'", "sk_live_" + rand(24), "stripe-key")  # why: Stripe secret key
case("//registry.npmjs.org/:_authToken={}", "npm_" + rand(36), "npm-token")  # why: .npmrc under another name
case("password = {}", "pypi-AgEIcHlwaS5vcmc" + rand(60, string.ascii_letters + string.digits + "_-"), "pypi-token")
case("HF_TOKEN={}", "hf_" + rand(34), "huggingface-token")  # why: Hugging Face
case("VAULT_TOKEN={}", "hvs." + rand(90), "vault-token")  # why: Vault service token
case("DIGITALOCEAN_TOKEN={}", "dop_v1_" + rand(64, HEX), "digitalocean-token")
case("CIRCLE_TOKEN={}", "CCIPAT_" + rand(22) + "_" + rand(40, HEX), "circleci-token")  # why: CI token
case("buildkite: {}", "bkua_" + rand(40, HEX), "buildkite-token")  # why: CI token
case("TFE_TOKEN={}", rand(14, string.ascii_lowercase + string.digits) + ".atlasv1." + rand(64, string.ascii_lowercase),
     "terraform-token")
case("Authorization: Bearer {}", "eyJ" + rand(20) + ".eyJ" + rand(40) + "." + rand(43), "jwt")  # why: JWT
case('{{"token": "{}"}}', "eyJ" + rand(20) + ".eyJ" + rand(30) + "." + rand(43), "jwt")  # why: JWT in a token field
case("Authorization: Bearer {}", rand(40), "bearer-token")  # why: an opaque bearer token
case("Authorization: Basic {}", base64.b64encode(b"deploy:" + rand(12).encode()).decode(), "basic-auth")
case("DATABASE_URL=postgres://app:{}@db.internal:5432/app", rand(16), "url-password")  # why: password in a URL
case("git clone https://{}@github.com/o/r.git", rand(40, HEX), "url-token")  # why: token as a URL's user
case("SENTRY_DSN=https://{}@o1.ingest.sentry.io/1", rand(32, HEX), "url-token")  # why: a DSN's key
case("DB_PASSWORD={}", rand(14), "secret-env")  # why: NAME=value with a secret name
case("  12| password: {}", rand(12), "secret-field")  # why: a config line as read_file shows it
case('db_password = "{}"', rand(12), "secret-field")  # why: a hard-coded password in code
case('{{"apiKey": "{}", "name": "x"}}', rand(24), "secret-json")  # why: minified JSON
case("SENDGRID={}", "SG." + rand(22) + "." + rand(43), "sendgrid-key")
case("TWILIO={}", "SK" + rand(32, HEX), "twilio-key")
case("BITBUCKET={}", "ATBB" + rand(32), "bitbucket-token")
case("JIRA={}", "ATATT3" + rand(180), "atlassian-token")
case("DOPPLER_TOKEN={}", "dp.pt." + rand(43), "doppler-token")
case("GEM_HOST_API_KEY: {}", "rubygems_" + rand(48, HEX), "rubygems-token")
case("docker login -p {}", "dckr_pat_" + rand(27), "docker-hub-token")
case("bot = Bot('{}')", rand(10, string.digits) + ":AA" + rand(33), "telegram-bot-token")
case("MAILGUN={}", "key-" + rand(32, string.ascii_lowercase + string.digits), "mailgun-key")
case("SHOPIFY={}", "shpat_" + rand(32, HEX), "shopify-token")
case("GROQ={}", "gsk_" + rand(52), "ai-provider-key")
case("GRAFANA={}", "glsa_" + rand(32) + "_" + rand(8, HEX), "grafana-token")
case("NEW_RELIC={}", "NRAK-" + rand(27, string.ascii_uppercase + string.digits), "newrelic-key")
case("SENTRY_AUTH={}", "sntrys_" + rand(60), "sentry-token")
case("LINEAR={}", "lin_api_" + rand(40), "linear-key")
case("POSTMAN={}", "PMAK-" + rand(24, HEX) + "-" + rand(34, HEX), "postman-key")
case("DATABRICKS={}", "dapi" + rand(32, HEX), "databricks-token")
case("AZURE_CLIENT_SECRET is {}", rand(3) + "8Q~" + rand(34, string.ascii_letters + string.digits + "_~.-"),
     "azure-ad-secret")

# The formats added from the secret scanners' samples (issue 44; tests/safety/test_secret_samples.py measures them).
_AN = string.ascii_letters + string.digits
_B32 = string.ascii_uppercase + "234567"
case("{}", "AGE-SECRET-KEY-1" + rand(58, string.ascii_uppercase + string.digits), "age-secret-key")  # why: age key
case("recovery: {}", "hvr." + rand(40), "vault-token")  # why: Vault recovery token
case('VAULT_CLIENT_TOKEN="{}"', "s." + rand(24), "vault-token")  # why: Vault token before 1.10, named
case("OP_SERVICE_ACCOUNT={}", "ops_eyJ" + rand(200, B64), "onepassword-token")
case("emergency kit: {}", "A3-" + rand(6, _B32) + "-" + rand(11, _B32) + "-" + "-".join(rand(5, _B32) for _ in "abc"),
     "onepassword-secret-key")
case("pulumi: {}", "pul-" + rand(40, HEX), "pulumi-token")
case("prefect: {}", "pnu_" + rand(36), "prefect-token")
case("fly: FlyV1 {}", "fm2_" + rand(120), "fly-token")
case("harness: {}", "pat." + rand(22) + "." + rand(24, HEX) + "." + rand(20), "harness-token")
case("sonar: {}", "squ_" + rand(40), "sonar-token")
case("jfrog: {}", "AKCp" + rand(69), "artifactory-key")
case("nuget push x.nupkg {}", "oy2" + rand(43, string.ascii_lowercase + string.digits), "nuget-key")
case("octopus: {}", "API-" + rand(26, string.ascii_uppercase + string.digits), "octopus-key")
case("oc login --server x {}", "sha256~" + rand(43), "openshift-token")
case("sourcegraph: {}", "sgp_" + rand(16, HEX) + "_" + rand(40, HEX), "sourcegraph-token")
case("dtrack: {}", "odt_" + rand(32), "dependency-track-key")
case("readme: {}", "rdme_" + rand(70, string.ascii_lowercase + string.digits), "readme-key")
case("contentful: {}", "CFPAT-" + rand(43), "contentful-token")
case("pscale: {}", "pscale_tkn_" + rand(43), "planetscale-token")
case("typeform: {}", "tfp_" + rand(44), "typeform-token")
case("netlify: {}", "nfp_" + rand(36), "netlify-token")
case("snyk: {}", "snyk_uat." + rand(8, string.ascii_lowercase + string.digits) + "." + rand(43), "snyk-token")
case("bedrock: {}", "ABSK" + rand(120, B64), "aws-bedrock-key")
case("HostName=x.azure-devices.net;SharedAccessKeyName=r;SharedAccessKey={}", rand(43, B64) + "=",
     "azure-connection-key")
case("ado: {}", rand(52) + "JQQJ99" + rand(18) + "AZDO" + rand(4), "azure-devops-pat")
case("origin ca: {}", "v1.0-" + rand(24, HEX) + "-" + rand(146, HEX), "cloudflare-origin-ca-key")
case("supabase: {}", "sbp_" + rand(40, HEX), "supabase-token")
case("alibaba: {}", "LTAI" + rand(20), "alibaba-key")
case("dropbox: {}", "sl." + rand(140), "dropbox-token")
case("mapbox: {}", "sk.eyJ" + rand(40) + "." + rand(22), "mapbox-token")
case("grafana: {}", "eyJrIjoi" + rand(60, B64), "grafana-key")
case("client.run('{}')", "MTk4NjIyNDgzNDcxOTI1MjQ4." + rand(6) + "." + "Zn" + rand(25), "discord-bot-token")
case("square: {}", "sq0atp-" + rand(22), "square-token")
case("square: {}", "EAAA" + rand(60), "square-token")
case("facebook: {}", "EAAC" + rand(120), "facebook-token")
case("fb: {}", rand(15, string.digits) + "|" + rand(27), "facebook-token")
case("stripe: {}", "rk_prod_" + rand(24), "stripe-key")
case("shippo: {}", "shippo_live_" + rand(40, HEX), "shippo-token")
case("easypost: {}", "EZAK" + rand(54), "easypost-token")
case("lob: {}", "live_" + rand(35, HEX), "lob-key")
case("obs: {}", "live_" + rand(9, string.digits) + "_" + rand(30), "twitch-stream-key")
case("brevo: {}", "xkeysib-" + rand(64, HEX) + "-" + rand(16), "sendinblue-key")
case("mailchimp: {}", rand(32, HEX) + "-us13", "mailchimp-key")
case("hubspot: {}", "pat-na1-" + rand(8, HEX) + "-" + rand(4, HEX) + "-" + rand(4, HEX) + "-" + rand(4, HEX) + "-"
     + rand(12, HEX), "hubspot-token")
case("plaid: {}", "access-sandbox-" + rand(8, HEX) + "-" + rand(4, HEX) + "-" + rand(4, HEX) + "-" + rand(4, HEX) + "-"
     + rand(12, HEX), "plaid-token")
case("42: {}", "s-s4t2ud-" + rand(64, HEX), "intra42-secret")
case("insights: {}", "NRII-" + rand(32), "newrelic-key")
case("license: {}", rand(36, string.ascii_lowercase + string.digits) + "NRAL", "newrelic-key")
case("Authorization: SSWS {}", "00" + rand(40), "okta-token")
case("okta:\n  value: {}", "00" + rand(38) + "Ab", "okta-token")
case("bootstrapToken: {}", rand(6, string.ascii_lowercase + string.digits) + "." + rand(16, string.ascii_lowercase
     + string.digits), "kubernetes-bootstrap-token")
case("BUNDLE_GEMS__CONTRIBSYS__COM: {}", rand(8, HEX) + ":" + rand(8, HEX), "sidekiq-secret")
case("heroku: {}", "HRKU-AA" + rand(58), "heroku-key")
case("notion: {}", "ntn_" + rand(11, string.digits) + rand(35), "notion-token")
case("airtable: {}", "pat" + rand(14) + "." + rand(64, HEX), "airtable-token")
case("dynatrace: {}", "dt0c01." + rand(24, string.ascii_uppercase + string.digits) + "." + rand(64,
     string.ascii_uppercase + string.digits), "dynatrace-token")
case("Unseal Key 1: {}", rand(44, B64), "vault-unseal-key")
case("curl -u admin:{} https://x", rand(16), "curl-password")
case("curl -H 'Authorization: {}'", rand(8, HEX) + "-" + rand(4, HEX) + "-" + rand(4, HEX) + "-" + rand(4, HEX) + "-"
     + rand(12, HEX), "authorization-value")
case("var fbApiKey = '{}';", rand(32, HEX), "named-secret")  # why: a key named inside an identifier
case("nuget key {}", rand(46, string.ascii_lowercase + string.digits), "named-secret")  # why: named in prose


@pytest.mark.parametrize(("text", "secret", "kind"), CASES, ids=[k for _t, _s, k in CASES])
def test_credential_formats_are_masked(text: str, secret: str, kind: str) -> None:
    scan = mask_secrets(text)
    assert secret not in scan.text, scan.text
    assert scan.kinds == {kind: 1}, scan.kinds
    assert f"[masked:{kind}]" in scan.text and kind in scan.note()


KEPT = [
    'password = os.environ["DB_PASSWORD"]',  # why: code that reads a secret is not a secret
    "token = get_token(user)",  # why: a call
    "self.token = token_value",  # why: an identifier
    "SECRET_KEY = settings.SECRET_KEY",  # why: a dotted name
    "max_tokens = 1000",  # why: not a secret's name
    "api_key: str | None = None",  # why: a type annotation
    "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",  # why: AWS's documented example key (gitleaks allowlists it)
    "postgres://user:password@localhost:5432/db",  # why: the placeholder words of documentation
    "postgres://user:${DB_PASSWORD}@db/app",  # why: a template
    "token: ${{ secrets.GITHUB_TOKEN }}",  # why: a CI template
    "a basic configuration procedure",  # why: prose after 'basic'
    "credentials: Base64-encoded credentials (client_id:client_secret)",  # why: prose after a key name
    '"ClientRequestToken": "a8ca07e4-61ec-4399-99f4-19853801bcd5"',  # why: an idempotency token, not a credential
    "client_credentials = 'm2m-client-credentials'",  # why: a name
    'if line.startswith("-----BEGIN RSA PRIVATE KEY-----"):\n    return parse_pem(line)',  # why: a parser
    "https://example.com/a/b?page=2",  # why: an ordinary URL
    "sk-learn is spelled scikit-learn",  # why: short, and prose
]


@pytest.mark.parametrize("text", KEPT)
def test_ordinary_text_is_left_alone(text: str) -> None:
    scan = mask_secrets(text)
    assert scan.text == text and scan.masked == 0, scan.kinds


KEY_LABELS = ["RSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY", "PRIVATE KEY",
              "ENCRYPTED PRIVATE KEY", "PGP PRIVATE KEY BLOCK"]  # fmt: skip


@pytest.mark.parametrize("label", KEY_LABELS)
def test_private_key_blocks_are_removed_in_every_form(label: str) -> None:
    key = pem(label)
    body_line = key.splitlines()[2]
    scan = mask_secrets(f"before\n{key}after\n")
    assert body_line not in scan.text and KEY_MARKER in scan.text
    assert scan.text.startswith("before\n") and scan.text.endswith("after\n") and scan.private_keys == 1
    assert holds_private_key(key) and is_key_file(key)


def test_private_key_forms_beyond_pem() -> None:
    """An encrypted PEM's headers, a key in a JSON string (a service account), a truncated key, a PuTTY file."""
    encrypted = ("-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC," + rand(32, HEX)
                 + "\n\n" + "\n".join(rand(64, B64) for _ in range(4)) + "\n-----END RSA PRIVATE KEY-----\n")
    assert mask_secrets(encrypted).private_keys == 1
    sa_key = pem("PRIVATE KEY")
    sa = json.dumps({"type": "service_account", "private_key_id": rand(40, HEX), "private_key": sa_key,
                     "client_email": "x@p.iam.gserviceaccount.com"}, indent=1)
    scan = mask_secrets(sa)
    assert scan.private_keys == 1 and sa_key.splitlines()[1] not in scan.text and "client_email" in scan.text
    cut = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + rand(70, B64) + "\n" + rand(70, B64)  # output cut mid-key
    assert mask_secrets("x\n" + cut).text == "x\n" + KEY_MARKER + "\n\n"
    putty = ("PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nPublic-Lines: 1\n" + rand(60, B64)
             + "\nPrivate-Lines: 2\n" + rand(64, B64) + "\n" + rand(30, B64) + "\nPrivate-MAC: " + rand(64, HEX))
    assert holds_private_key(putty) and mask_secrets(putty).private_keys == 1


def test_key_file_versus_a_source_file_with_a_test_key() -> None:
    """A file that is a key is refused whole; a source file that embeds one is read with the block removed."""
    key = pem("EC PRIVATE KEY")
    assert is_key_file("# work laptop\n" + key)
    source = "import ssl\n\n" + "\n".join(f"def test_{i}():\n    assert load(KEY) is not None\n" for i in range(20))
    assert not is_key_file(source + f'KEY = """{key}"""\n')


def test_removing_keys_keeps_line_numbers() -> None:
    text = "a\n" + pem("PRIVATE KEY", lines=5) + "b\n"
    out, count = remove_private_keys(text)
    assert count == 1 and out.count("\n") == text.count("\n") and out.splitlines()[-1] == "b"


def test_every_rule_names_its_source_and_a_hint_and_has_a_case() -> None:
    # A kind may have several rules (Vault's current and legacy tokens); the kinds without a case here have
    # samples in tests/safety/data/secret_samples.jsonl (tests/safety/test_secret_samples.py checks them).
    kinds = [r.kind for r in RULES]
    assert {k for _t, _s, k in CASES} <= set(kinds)
    for rule in RULES:
        assert rule.source and rule.hints, rule.kind
        if rule.lower:
            assert all(h == h.lower() for h in rule.hints), rule.kind


def test_masking_is_idempotent_and_counts_each_value() -> None:
    text = "\n".join(f"GITHUB_TOKEN=ghp_{rand(36)}" for _ in range(3))
    once = mask_secrets(text)
    assert once.kinds == {"github-token": 3}
    again = mask_secrets(once.text)
    assert again.text == once.text and again.masked == 0


def test_a_megabyte_of_code_is_scanned_quickly() -> None:
    """It runs on every tool result: 1 MB of ordinary code well under a second (a loose bound for a busy host)."""
    import time

    chunk = 'def f(token, password=None):\n    url = "https://example.com/api"\n    return call(url, key=token)\n'
    text = chunk * (1_000_000 // len(chunk))
    start = time.perf_counter()
    assert mask_secrets(text).masked == 0
    assert time.perf_counter() - start < 3.0


def test_files_the_app_reads_by_itself_are_scanned_too(tmp_path: Path) -> None:
    """AGENTS.md goes into the system prompt without a tool call: a token in it is masked, a key refused."""
    from swebash_ai.safety.paths import PathPolicy
    from swebash_ai.safety.unasked import UnaskedRefusal, UnaskedText, read_unasked

    token = "glpat-" + rand(20)
    (tmp_path / "AGENTS.md").write_text(f"Deploy with the token {token}.\nRun the tests first.\n")
    (tmp_path / "NOTES.md").write_text(pem("OPENSSH PRIVATE KEY"))
    policy = PathPolicy(roots=[tmp_path], home=tmp_path / "home")
    got = read_unasked(tmp_path / "AGENTS.md", policy)
    assert isinstance(got, UnaskedText) and token not in got.text and "[masked:gitlab-token]" in got.text
    assert "Run the tests first." in got.text
    refused = read_unasked(tmp_path / "NOTES.md", policy)
    assert isinstance(refused, UnaskedRefusal) and "private key" in refused.reason


def test_every_rule_compiles_at_its_first_scan_one_pattern_per_keyword() -> None:
    # The patterns are compiled lazily (not at import): a broken one must still fail here, not in a user's scan.
    for rule in RULES:
        assert len(rule.parts) == max(1, len(rule.keywords)), rule.kind
        assert rule.compiled is rule.parts[0]
        if rule.keywords:
            assert all("(?P<k>" in part.pattern for part in rule.parts), rule.kind
