"""Tests of GitHub heading slugs and their duplicate suffixes."""

from __future__ import annotations

import pytest

from linkhound.extract import Slugger, github_slug


@pytest.mark.parametrize(
    ("heading", "slug"),
    [
        ("Hello, World!", "hello-world"),
        ("API v2.0 (beta)", "api-v20-beta"),
        ("Ünïcödé Heading", "ünïcödé-heading"),
        ("foo  bar", "foo--bar"),
        ("`code` and *em*", "code-and-em"),
        ("snake_case and kebab-case", "snake_case-and-kebab-case"),
        ("C++ & C#", "c--c"),
        ("日本語 の テスト", "日本語-の-テスト"),
        ("Ελληνικά Κεφαλαία", "ελληνικά-κεφαλαία"),
        ("Features ✨", "features-"),
        ("✨ Features", "-features"),
        ("e\u0301te\u0301", "e\u0301te\u0301"),  # combining marks are kept
        ("100% done.", "100-done"),
        ("Tab\there", "tabhere"),
        # as github-slugger: other numbers go (² ① ½), alphabetic symbols and letter numbers stay (Ⓐ 🅰 Ⅳ)
        ("① Install", "-install"),
        ("Area in m²", "area-in-m"),
        ("½ half", "-half"),
        ("Ⓐ circled", "ⓐ-circled"),
        ("🅰 squared", "🅰-squared"),
        ("Chapter Ⅳ", "chapter-ⅳ"),
        ("", ""),
    ],
)
def test_github_slug(heading: str, slug: str) -> None:
    assert github_slug(heading) == slug


def test_slugger_numbers_repeats_from_one() -> None:
    slugger = Slugger()
    assert [slugger.slug("Usage") for _ in range(3)] == ["usage", "usage-1", "usage-2"]


def test_slugger_skips_a_suffix_already_taken_by_a_heading() -> None:
    slugger = Slugger()
    assert [slugger.slug(text) for text in ("Foo", "Foo-1", "Foo", "Foo")] == [
        "foo",
        "foo-1",
        "foo-2",
        "foo-3",
    ]
    slugger = Slugger()
    assert [slugger.slug(text) for text in ("Foo", "Foo", "Foo-1")] == ["foo", "foo-1", "foo-1-1"]


def test_sluggers_are_independent() -> None:
    first, second = Slugger(), Slugger()
    assert first.slug("Intro") == second.slug("Intro") == "intro"


def test_a_reserved_name_makes_a_later_slug_take_a_suffix() -> None:
    slugger = Slugger()
    slugger.reserve("install")
    slugger.reserve("install")  # reserving twice changes nothing
    assert [slugger.slug("Install"), slugger.slug("Install")] == ["install-1", "install-2"]
