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


def test_ledger_keeps_every_fragment_reference_however_many_fragments_a_target_has() -> None:
    from linkhound.fragments import Anchors
    from linkhound.ledger import MemoryLedger
    from linkhound.status import Status
    from linkhound.types import Result

    ledger = MemoryLedger()
    key = url = "http://127.0.0.1:8000/page"
    asked = [f"f{i}" for i in range(7)] + ["f1", "f5", "f5"]  # past the few kept in a tuple; some asked again
    for n, fragment in enumerate(asked):
        ledger.refer(key, url, Reference(f"http://127.0.0.1:8000/from{n}", n, 1, "a", "href", f"/page#{fragment}"),
                     fragment)
    ledger.refer(key, url, Reference("http://127.0.0.1:8000/plain", 1, 1, "a", "href", "/page"))
    ledger.checked(key, Result(url, Status.OK, 200), Anchors(frozenset({"f0", "f2", "f3", "f4", "f6"}), False))
    results = {r.url: [ref.source.rsplit("/", 1)[1] for ref in r.references] for r in ledger.results()}
    assert results == {
        url: ["plain", "from0", "from2", "from3", "from4", "from6"],
        f"{url}#f1": ["from1", "from7"],
        f"{url}#f5": ["from5", "from8", "from9"],
    }


def test_results_made_ahead_are_made_again_when_a_reference_the_depth_or_the_result_changed() -> None:
    from linkhound.ledger import MemoryLedger
    from linkhound.status import Status
    from linkhound.types import Result

    ledger = MemoryLedger()
    urls = [f"http://127.0.0.1:8000/p{i}" for i in range(5)]
    for i, url in enumerate(urls):
        ledger.refer(url, url, Reference("list.txt", i + 1, 1, "text", "url", url))
        ledger.checked(url, Result(url, Status.OK, 200, depth=1))
    depths = dict.fromkeys(urls, 1)
    made = []
    while (more := ledger.prepare(depths.get, 2)) is not None:  # a few at a time, as a run waiting makes them
        made += more
    assert [r.url for r in made] == urls
    before = {r.url: r for r in ledger.results(depths.get)}
    ledger.refer(urls[0], urls[0], Reference("list.txt", 9, 1, "text", "url", urls[0]))  # a second reference
    depths[urls[1]] = 0  # found nearer the start
    ledger.checked(urls[2], Result(urls[2], Status.BROKEN, 404, depth=1))  # checked again
    after = {r.url: r for r in ledger.results(depths.get)}
    assert [ref.line for ref in after[urls[0]].references] == [1, 9]
    assert after[urls[1]].depth == 0 and before[urls[1]].depth == 1
    assert after[urls[2]].status is Status.BROKEN
    for url in urls[3:]:  # unchanged: the result made ahead is the one reported
        assert after[url] is before[url] is made[urls.index(url)]
        assert [ref.line for ref in after[url].references] == [urls.index(url) + 1]
    # no reference or depth changes any more (every input read): each is checked once, then taken as it is
    while ledger.settle(depths.get, 2):
        pass
    settled = {r.url: r for r in ledger.results(depths.get)}
    assert [ref.line for ref in settled[urls[0]].references] == [1, 9] and settled[urls[1]].depth == 0
    assert all(settled[url] is after[url] for url in urls[3:])
    ledger.checked(urls[3], Result(urls[3], Status.ERROR, None, "reset", depth=1))  # a result may still change
    assert {r.url: r.status for r in ledger.results(depths.get)}[urls[3]] is Status.ERROR
