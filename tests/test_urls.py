"""The canonical key and the URL rules, without I/O."""

from __future__ import annotations

import pytest

from linkhound.urls import Scope, canonical_key, host_of, hostname_of, looks_like_asset, resolve, split_fragment


@pytest.mark.parametrize(
    ("written", "key"),
    [
        ("HTTP://Example.COM/a", "http://example.com/a"),
        ("http://example.com:80/a", "http://example.com/a"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("https://example.com:8443/a", "https://example.com:8443/a"),
        ("http://example.com", "http://example.com/"),
        ("http://example.com/a/./b/../c", "http://example.com/a/c"),
        ("http://example.com/a#frag", "http://example.com/a"),
        ("http://example.com/%7euser/%41", "http://example.com/~user/A"),
        ("http://example.com/a%2fb%3f", "http://example.com/a%2Fb%3F"),
        ("http://example.com/?b=2&a=1", "http://example.com/?b=2&a=1"),
        ("http://example.com/?q=%7e", "http://example.com/?q=~"),
        ("http://example.com/caf\u00e9", "http://example.com/caf%C3%A9"),
    ],
)
def test_canonical_key(written: str, key: str) -> None:
    url = resolve(written, "")
    assert url is not None
    assert canonical_key(url) == key


def test_query_order_is_kept_so_different_orders_are_different_keys() -> None:
    assert canonical_key("http://h/?a=1&b=2") != canonical_key("http://h/?b=2&a=1")


def test_resolve_relative_and_invalid() -> None:
    assert resolve("../x?y#z", "http://h/a/b/c") == "http://h/a/x?y#z"
    assert resolve("//other/p", "https://h/") == "https://other/p"
    assert resolve("http://exa mple.com/", "") is None


def test_split_fragment() -> None:
    assert split_fragment("http://h/p#f") == ("http://h/p", "f")
    assert split_fragment("http://h/p#") == ("http://h/p", "")
    assert split_fragment("http://h/p") == ("http://h/p", None)


def test_hosts() -> None:
    assert host_of("http://user:pw@Example.com:8080/x") == "Example.com:8080"
    assert hostname_of("http://example.com:8080/x") == "example.com"
    assert hostname_of("http://[::1]:8080/x") == "[::1]"
    assert hostname_of("http://[::1]/x") == "[::1]"


def test_scope_is_origin_and_seed_folder() -> None:
    scope = Scope.from_seeds(["https://h.test/docs/index.html"])
    assert scope.contains("https://h.test/docs/a/b.html")
    assert not scope.contains("https://h.test/blog/")
    assert not scope.contains("http://h.test/docs/")  # another scheme is another origin
    assert not scope.contains("https://h.test:8443/docs/")


def test_scope_domains_include_subdomains() -> None:
    scope = Scope.from_seeds(["https://h.test/"], domains=["example.org"])
    assert scope.contains("https://www.example.org/x")
    assert scope.contains("http://example.org:8080/x")
    assert not scope.contains("https://badexample.org/")


def test_assets_are_recognised() -> None:
    assert looks_like_asset("https://h/img/logo.PNG?v=3")
    assert not looks_like_asset("https://h/page.html")
    assert not looks_like_asset("https://h/v1.2/")
