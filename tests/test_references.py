"""The reference store gives back every reference as it was added, however it keeps the link text."""

from __future__ import annotations

from linkhound.references import RefStore, ids
from linkhound.types import Reference

BASE = "http://127.0.0.1:8000/docs/page.html"


def test_reference_store_reads_back_texts_kept_as_the_end_of_their_base() -> None:
    texts = [
        "/docs/page.html",  # the end of the base
        "page.html",
        "/docs/page.html#intro",  # the end of the base, then a fragment
        "page.html#intro",
        "#intro",  # the base's own page
        "",
        "../other/page.html",  # not the end of the base: kept whole
        "../other/page.html#x",
        "HTTP://127.0.0.1:8000/docs/page.html",  # (differs in case)
        "x" * 5000 + "/docs/page.html",  # longer than the base
        "/" + "p" * 5000 + "#frag",
        "#a#b",
    ]
    store = RefStore()
    added = [Reference(f"http://127.0.0.1:8000/{i % 3}", i, i + 1, "a", "href", text) for i, text in enumerate(texts)]
    refs = ids(store.add_ref(ref, BASE) for ref in added)
    assert list(store.view(refs, BASE)) == added
    assert [store.get(i, BASE) for i in refs] == added


def test_reference_store_keeps_a_source_met_again_later() -> None:
    store = RefStore()
    first = store.add("a.html", 1, 1, "a", "href", "x.html", "")
    store.add("b.html", 1, 1, "a", "href", "x.html", "")
    again = store.add("a.html", 2, 1, "img", "src", "y.png", "")
    assert [r.source for r in store.view(ids([first, again]), "")] == ["a.html", "a.html"]
