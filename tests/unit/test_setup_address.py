"""The server address typed at ``swebash-ai setup``'s prompt: a missing scheme is added, a non-address refused."""

from __future__ import annotations

import pytest

from swebash_ai.commands.setup_flow import complete_base
from swebash_ai.errors import ConfigError


@pytest.mark.parametrize(("typed", "url", "added"), [
    # a full URL is taken as it is (without its trailing slash)
    ("http://localhost:8000/v1/", "http://localhost:8000/v1", None),
    ("https://api.example.com/v1", "https://api.example.com/v1", None),
    # local servers rarely have TLS: http
    ("localhost:11434/v1", "http://localhost:11434/v1", "http:// added (a local address)"),
    ("127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1", "http:// added (a local address)"),
    ("[::1]:8080/v1", "http://[::1]:8080/v1", "http:// added (a local address)"),
    ("0.0.0.0:8000", "http://0.0.0.0:8000", "http:// added (a local address)"),  # what a local server prints
    # another machine: https, so a key does not go out in clear text unless the user says http://
    ("api.example.com/v1", "https://api.example.com/v1",
     "https:// added (another machine: use http:// explicitly for a server without TLS)"),
    ("gpu-box:8000/v1", "https://gpu-box:8000/v1",
     "https:// added (another machine: use http:// explicitly for a server without TLS)"),
])
def test_an_address_without_a_scheme_gets_one(typed: str, url: str, added: str | None) -> None:
    assert complete_base(typed) == (url, added)


@pytest.mark.parametrize("typed", [
    "",  # nothing
    "hello",  # a bare word: not clearly a host
    "not an address",  # spaces
    "localhost:port/v1",  # a port that is not a number
    "localhost:99999",  # a port out of range
    "ftp://example.com",  # a scheme that is not http(s)
    "/v1",  # no host
])
def test_what_is_not_an_address_is_refused(typed: str) -> None:
    with pytest.raises(ConfigError, match="is not an http:// or https:// URL"):
        complete_base(typed)
