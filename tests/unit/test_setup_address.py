"""A server address written without a scheme (the setup's prompt, ``--api-base``, the app's screen, the settings,
``OLLAMA_HOST``): one rule adds ``http://`` for this machine and ``https://`` for any other; a non-address is
refused."""

from __future__ import annotations

import pytest

from swebash_ai.config.address import complete_base, is_loopback_url
from swebash_ai.errors import ConfigError


@pytest.mark.parametrize(("typed", "url", "added"), [
    # a full URL is taken as it is (without its trailing slash)
    ("http://localhost:8000/v1/", "http://localhost:8000/v1", None),
    ("https://api.example.com/v1", "https://api.example.com/v1", None),
    # a scheme has no case (RFC 3986): a phone's capital or a pasted HTTP:// is the same URL
    ("HTTP://localhost:8000/v1", "http://localhost:8000/v1", None),
    ("Https://api.example.com/v1", "https://api.example.com/v1", None),
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
    # a *.localhost name stays on the machine only if the resolver says so: not a guess to send a key in clear
    ("api.localhost:8000/v1", "https://api.localhost:8000/v1",
     "https:// added (another machine: use http:// explicitly for a server without TLS)"),
    # names that only start like this machine are other machines
    ("localhost.example.com:8000", "https://localhost.example.com:8000",
     "https:// added (another machine: use http:// explicitly for a server without TLS)"),
    ("127.0.0.1.nip.io:8000", "https://127.0.0.1.nip.io:8000",
     "https:// added (another machine: use http:// explicitly for a server without TLS)"),
    ("LOCALHOST:8000", "http://LOCALHOST:8000", "http:// added (a local address)"),  # host names have no case
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


@pytest.mark.parametrize(("url", "local"), [
    ("http://127.0.0.1:11434", True),
    ("http://127.1.2.3:11434", True),  # all of 127/8 is loopback
    ("http://[::1]:11434", True),
    ("http://0.0.0.0:11434", True),  # connects to this machine
    ("http://localhost", True),
    ("http://127.evil.example:11434", False),  # a name, not an address
    ("http://localhost.evil.example", False),  # a prefix match would say yes
    ("http://api.localhost", False),  # up to the resolver
    ("http://10.0.0.5:11434", False),  # private, but another machine
    ("localhost:11434", False),  # no scheme: not a URL
    ("http://[::1", False),  # unparsable
])
def test_which_urls_point_at_this_machine(url: str, local: bool) -> None:
    assert is_loopback_url(url) is local
