"""Redaction of secrets in logged data and secret-looking environment variable names."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from swebash_ai.safety.redact import MASK, looks_secret_env, looks_secret_key, redact, redact_output, redact_text

KEY_CASES = [
    ("password", True),  # why: obvious secret
    ("db_passwd", True),  # why: passwd word part
    ("api_key", True),  # why: api key
    ("apikey", True),  # why: joined spelling
    ("OPENAI_API_KEY", True),  # why: upper-case env style
    ("x-api-key", True),  # why: HTTP header style
    ("Authorization", True),  # why: HTTP auth header
    ("clientSecret", True),  # why: camelCase word part
    ("accessToken", True),  # why: camelCase token
    ("github_token", True),  # why: token word part
    ("aws_credentials", True),  # why: credential word part
    ("private_key", True),  # why: private word part
    ("key", True),  # why: bare key
    ("keyboard", False),  # why: key only as part of a word
    ("monkey", False),  # why: key only as a suffix of a word
    ("tokenizer", False),  # why: token only as a prefix of a word
    ("prompt_tokens", False),  # why: usage counters must stay visible
    ("name", False),  # why: ordinary key
    ("author", False),  # why: not auth
]


@pytest.mark.parametrize(("name", "secret"), KEY_CASES)
def test_looks_secret_key(name: str, secret: bool) -> None:
    assert looks_secret_key(name) is secret


ENV_CASES = [
    ("OPENAI_API_KEY", True),  # why: provider key
    ("ANTHROPIC_API_KEY", True),  # why: provider key
    ("GITHUB_TOKEN", True),  # why: token
    ("AWS_SECRET_ACCESS_KEY", True),  # why: secret + key
    ("AWS_SESSION_TOKEN", True),  # why: token
    ("PGPASSWORD", True),  # why: PASSWORD counts inside a word
    ("SSH_AUTH_SOCK", True),  # why: AUTH word part; the agent socket grants key use
    ("DB_PASSWORD", True),  # why: password word part
    ("MYSQL_PWD", True),  # why: PWD as a word part of a longer name is a password
    ("OLDPWD", False),  # why: the previous working directory
    ("NPM_AUTH", True),  # why: auth word part
    ("GOOGLE_APPLICATION_CREDENTIALS", True),  # why: credentials word part
    ("SSH_PRIVATE_KEY", True),  # why: private key
    ("APIKEY", True),  # why: joined api key
    ("KEYBOARD_LAYOUT", False),  # why: KEYBOARD is not KEY
    ("MONKEY_PATCH", False),  # why: MONKEY is not KEY
    ("PATH", False),  # why: ordinary variable
    ("HOME", False),  # why: ordinary variable
    ("PWD", False),  # why: ordinary variable
    ("TOKENIZERS_PARALLELISM", False),  # why: TOKENIZERS is not TOKEN
    ("AUTHOR_NAME", False),  # why: AUTHOR is not AUTH
]


@pytest.mark.parametrize(("name", "secret"), ENV_CASES)
def test_looks_secret_env(name: str, secret: bool) -> None:
    assert looks_secret_env(name) is secret


TEXT_CASES = [
    ("key sk-proj-abcdefghijklmnopqrstuvwx end", "key *** end"),  # why: OpenAI project key
    ("sk-ant-api03-abcdefghijklmnop", "***"),  # why: Anthropic key
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123", "token ***"),  # why: GitHub classic token
    ("github_pat_11ABCDEFG0123456789_abcdefghij", "***"),  # why: GitHub fine-grained token
    ("aws AKIAABCDEFGHIJKLMNOP x", "aws *** x"),  # why: AWS access key id
    ("slack xoxb-1234567890-abcdef", "slack ***"),  # why: Slack token
    ("g AIza" + "B" * 35, "g ***"),  # why: Google API key
    ("glpat-abcdefghijklmnopqrst", "***"),  # why: GitLab token
    ("Authorization: Bearer abc.def-ghi_123", "Authorization: Bearer ***"),  # why: bearer token
    ("url?key=" + "a1" * 20 + "&x=1", "url?key=***&x=1"),  # why: long token after key=
    ("token=" + "Zm9v" * 10, "token=***"),  # why: long base64 after token=
    ("key=short", "key=short"),  # why: short values are not tokens
    ("the sky is blue", "the sky is blue"),  # why: ordinary text unchanged
    ("task-ant-eater", "task-ant-eater"),  # why: sk- must start a word
]


@pytest.mark.parametrize(("text", "expected"), TEXT_CASES)
def test_redact_text(text: str, expected: str) -> None:
    assert redact_text(text) == expected


def test_redact_nested_structure_and_no_mutation() -> None:
    # why: deep copy, keys by name, strings by pattern, other values untouched
    data: dict[str, Any] = {
        "name": "x",
        "api_key": "abc",
        "headers": {"Authorization": "Bearer zzzzzzzzzz", "x-api-key": "k", "Accept": "json"},
        "args": ["--token", "ghp_abcdefghijklmnopqrstuvwxyz0123", 3, None, True],
        "keyboard": "us",
        "nested": ({"password": 123},),
        "usage": {"prompt_tokens": 10},
    }
    before = copy.deepcopy(data)
    out = redact(data)
    assert data == before
    assert out == {
        "name": "x",
        "api_key": MASK,
        "headers": {"Authorization": MASK, "x-api-key": MASK, "Accept": "json"},
        "args": ["--token", MASK, 3, None, True],
        "keyboard": "us",
        "nested": ({"password": MASK},),
        "usage": {"prompt_tokens": 10},
    }


def test_redact_scalars() -> None:
    # why: non-container values pass through
    assert redact(5) == 5
    assert redact(None) is None
    assert redact("plain") == "plain"


@pytest.mark.parametrize(
    ("text", "masked", "kept"),
    [
        # why: a committed .env line in a diff (a short value the content scan alone would keep)
        ("+DB_PASSWORD=hunter22\n", "hunter22", "DB_PASSWORD=[masked:secret-env]"),
        # why: removed line with export; no digits, so only the name says it is a secret
        ("-export GITHUB_TOKEN=abcdefghijkl\n", "abcdefghijkl", "GITHUB_TOKEN=[masked:secret-env]"),
        ('password: "topsecret1"\n', "topsecret1", 'password: "[masked:secret-env]'),  # why: YAML style
        # why: a password in a git remote URL
        ("url = https://bob:s3cretpass@example.com/r.git", "s3cretpass", "https://bob:[masked:url-password]@"),
        # why: a token as a URL's user name
        ("https://0123456789abcdef0123456789@example.com/r", "0123456789abcdef", "https://[masked:url-token]@"),
        # why: the AWS secret's name, value cut short of the 40-character format
        (" AWS_SECRET_ACCESS_KEY = wJalrXUtnFEMI/K7MDENG\n", "wJalrXUtnFEMI", "AWS_SECRET_ACCESS_KEY = [masked:"),
    ],
)
def test_redact_output_masks_secret_values(text: str, masked: str, kept: str) -> None:
    scan = redact_output(text)
    assert masked not in scan.text and kept in scan.text and scan.masked == 1, scan.text


@pytest.mark.parametrize(
    "text",
    ["DEBUG=true\n", "keyboard = us\n", "see https://example.com/path:8080\n", "monkey=banana\n", "x = 1\n"],
)
def test_redact_output_leaves_ordinary_text(text: str) -> None:
    scan = redact_output(text)
    assert (scan.text, scan.masked) == (text, 0)


@pytest.mark.parametrize(
    "text",
    [
        "GITHUB_TOKEN=ghp_" + "aB3" * 12 + "\n",  # why: a credential format: the content scan's kind, once
        "DB_PASSWORD=hunter22\n",  # why: a value only the name betrays: the same marker style
        "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "aB3dE6" * 12 + "\n-----END OPENSSH PRIVATE KEY-----\n",  # key
    ],
)
def test_unapproved_output_uses_the_content_scan_markers_only(text: str) -> None:
    """One marker style: a model never sees ``***`` from one guard and ``[masked:KIND]`` from another."""
    scan = redact_output(text)
    assert MASK not in scan.text and scan.masked == 1
    assert "[masked:" in scan.text or "[private key removed]" in scan.text
    again = redact_output(scan.text)  # the loop scans the result again: nothing is masked twice
    assert again.text == scan.text and again.masked == 0
