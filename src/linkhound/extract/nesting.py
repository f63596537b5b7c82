"""How deep an HTML tree builder would nest a document, told from its tags before any tree is built.

A tree builder walks its stack of open elements for many tags ("is a <p> open in button scope?"), so its
time grows with the depth of nesting times the number of tags: Lexbor took a minute over 80,000 nested
<div>s. This scan follows the HTML standard's stack closely enough to see that coming: optional end tags
(<p>, <li>, <td>, ...), misnested formatting, tables, foreign content. Where it can't follow, it errs deep
(it keeps an element open). Fuzzed against Lexbor on random tag soup, its depth stayed within one or two
elements of the parser's; a page crafted against this model in particular might still get further.
"""

from __future__ import annotations

from .html_tokens import RAW_TEXT, TOKEN, raw_text_end, self_closing


def _names(words: str) -> frozenset[str]:
    return frozenset(words.split())


MAX_NESTING = 512  # open elements; Chrome's tree builder stops nesting at 512 too
MAX_WORK = 32_000_000  # stack entries the builder may walk over the whole page, summed over tags: ~0.3-1 s
MAX_TAGS = 500_000  # a DOM costs 300-450 bytes per element: a tag-dense page would need 60x its size

_WINDOW = 64  # how far down a search for an element to close looks; past that it is kept open (errs deep)
_VOID = _names(
    "area base basefont bgsound br col embed frame hr image img input keygen link meta param source track wbr"
)
_NOT_PUSHED = _names("html head body frameset")  # merged into the implied ones, or ignored
_HEADINGS = _names("h1 h2 h3 h4 h5 h6")
_CLOSES_P = _HEADINGS | _names(
    "address article aside blockquote center details dialog dir div dl fieldset figcaption figure footer header "
    "hgroup main menu nav ol p search section summary ul pre listing form plaintext xmp hr li dd dt"
)
_FORMATTING = _names("a b big code em font i nobr s small strike strong tt u")
# Elements whose closing forgets the formatting opened inside them (Lexbor keeps it across a <template>);
# popped by something else, they don't.
_MARKERS = _names("applet caption marquee object td th")
# Foreign (SVG, MathML) elements are kept as "svg name" / "math name": a space is never in a tag name.
_HTML_INSIDE = frozenset(  # foreign elements whose children follow HTML rules again
    {"svg foreignobject", "svg desc", "svg title", "math mi", "math mo", "math mn", "math ms", "math mtext"}
)
_INTEGRATION = _HTML_INSIDE | {"math annotation-xml"}
# Lexbor parses <select> content as the 2025 standard does, in body mode: a select is a scope boundary.
_SCOPE = _INTEGRATION | _names("applet caption html table td th marquee object template select")
_BUTTON_SCOPE = _SCOPE | {"button"}
_LIST_SCOPE = _SCOPE | {"ol", "ul"}
_TABLE_SCOPE = _names("html table template")
_SPECIAL = _SCOPE | _names(
    "address area article aside base basefont bgsound blockquote body br button center col colgroup dd details "
    "dir div dl dt embed fieldset figcaption figure footer form frame frameset h1 h2 h3 h4 h5 h6 head header "
    "hgroup hr iframe img input keygen li link listing main menu meta nav noembed noframes noscript ol p param "
    "plaintext pre script search section select source style summary tbody textarea tfoot thead title tr "
    "track ul wbr xmp"
)
_BREAKOUT = _names(  # HTML start tags that end foreign content
    "b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr i img li listing menu "
    "meta nobr ol p pre ruby s small span strong strike sub sup table tt u ul var"
)
_TABLE_PARTS = frozenset({"caption", "col", "colgroup", "tbody", "td", "tfoot", "th", "thead", "tr"})
_SECTIONS = frozenset({"tbody", "thead", "tfoot"})
_CELLS = frozenset({"td", "th"})
_CELLS_AND_CAPTION = _CELLS | {"caption"}
_CONTEXTS = frozenset({"td", "th", "tr", "table", "caption", "colgroup", "template"}) | _SECTIONS
_END_SCOPES = {
    **dict.fromkeys(("td", "th", "tr", "table", "caption", *_SECTIONS), _TABLE_SCOPE),
    "p": _BUTTON_SCOPE,
    "li": _LIST_SCOPE,
    **dict.fromkeys(
        _names(
            "address article aside blockquote button center details dialog dir div dl fieldset figcaption figure "
            "footer header hgroup listing main menu nav ol pre search section summary ul applet marquee object "
            "dd dt select"
        ),
        _SCOPE,
    ),
}
_RUBY = frozenset({"rb", "rp", "rt", "rtc"})
_IMPLIED_END = frozenset({"dd", "dt", "li", "optgroup", "option", "p"}) | _RUBY  # "generate implied end tags"
_SIBLINGS = {"li": frozenset({"li"}), "dd": frozenset({"dd", "dt"}), "dt": frozenset({"dd", "dt"})}
_ENDS_LIST_ITEM_SEARCH = _SPECIAL - {"address", "div", "p"}
_ENDS_SELECT = frozenset({"input", "keygen"})
_ROW_CONTEXTS = frozenset({"tr", "table"}) | _SECTIONS
# Start tags that need nothing but opening (or nothing at all, if void) while none of the elements named
# here is open; those not named need more: _start_tag follows them.
_ALWAYS: frozenset[str] = frozenset()
_FAST_UNLESS_OPEN: dict[str, frozenset[str] | None] = {
    **dict.fromkeys(_VOID, _ALWAYS),
    **dict.fromkeys(_CLOSES_P, frozenset({"p"})),  # <hr> too
    **dict.fromkeys(_ENDS_SELECT, frozenset({"select"})),
    **dict.fromkeys(("dd", "dt"), frozenset({"dd", "dt", "p"})),
    "li": frozenset({"li", "p"}),
    "form": frozenset({"form", "p"}),
    **{name: frozenset({name}) for name in ("a", "nobr", "button", "select")},
    **dict.fromkeys(
        _TABLE_PARTS | _NOT_PUSHED | RAW_TEXT | _RUBY | _HEADINGS | _names("table svg math option optgroup"), None
    ),
    "template": _ALWAYS,
    "plaintext": None,
    "xmp": None,
}
# Start tags before which the parser doesn't reopen formatting elements (blocks, lists, head elements).
_NO_REOPEN = _CLOSES_P | _NOT_PUSHED | RAW_TEXT | _names("li dd dt plaintext")
_FEW_TAGS = 4096  # so few tags can't nest deep enough to cost the parser more than about 0.1 s


class _Stack:
    """The stack of open elements, as far as the standard's rules can be followed from tags alone."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.open: dict[str, int] = {}  # how many of each name are open, to skip searches for none
        self.opened: set[str] = set()  # the names of which at least one element is open
        self.reopen: list[str] = []  # formatting closed by something else, reopened before the next text

    def push(self, name: str) -> None:
        self.names.append(name)
        self.open[name] = self.open.get(name, 0) + 1
        self.opened.add(name)

    def _closed(self, name: str) -> None:
        count = self.open[name] = self.open[name] - 1
        if not count:
            self.opened.discard(name)

    def top(self) -> str:
        return self.names[-1] if self.names else "html"

    def find(self, wanted: frozenset[str] | str, stops: frozenset[str]) -> int:
        """Index of the topmost element in `wanted`, not looking past one in `stops`; -1 if there is none."""
        names = self.names
        for index in range(len(names) - 1, max(-1, len(names) - 1 - _WINDOW), -1):
            name = names[index]
            if name in wanted if isinstance(wanted, frozenset) else name == wanted:
                return index
            if name in stops:
                return -1
        return -1

    def pop_to(self, index: int, above: bool = False) -> None:
        """Pop the element at `index` and all above it (only those above it: `above`). Formatting elements
        above it are reopened before the next text or inline tag, unless the element popped is a cell,
        caption or object: closing one forgets the formatting opened inside it."""
        names = self.names
        if above or names[index] not in _MARKERS:
            for name in names[index + 1 :]:
                # the parser keeps at most three alike (Noah's Ark); alike here means the same name
                if name in _FORMATTING and self.reopen.count(name) < 3:
                    self.reopen.append(name)
        start = index + 1 if above else index
        for name in names[start:]:
            self._closed(name)
        del names[start:]

    def reopen_formatting(self) -> None:
        reopen, self.reopen = self.reopen, []
        for name in reopen:
            self.push(name)

    def pop_above(self, index: int) -> None:
        if index + 1 < len(self.names):
            self.pop_to(index, above=True)

    def pop(self) -> None:
        self._closed(self.names.pop())

    def remove(self, index: int) -> None:
        self._closed(self.names.pop(index))

    def close_p(self) -> None:
        if self.open.get("p") and (index := self.find("p", _BUTTON_SCOPE)) >= 0:
            self.pop_to(index)

    def close_formatting(self, name: str) -> None:
        """The adoption agency, erring deep: a formatting element closes with what is above it only when no
        special element is above it (with one, the standard moves nodes and the stack doesn't shrink)."""
        if self.open.get(name) and (index := self.find(name, _SPECIAL)) >= 0:
            self.pop_to(index)

    def in_scope(self, name: str, scope: frozenset[str] = _SCOPE) -> int:
        return self.find(name, scope) if self.open.get(name) else -1


def nesting_hazard(text: str) -> str:
    """Why building a tree of `text` would cost too much time or memory; "" when it won't."""
    tags = text.count("<")  # at least the number of tags
    if tags > MAX_TAGS:
        return f"more than {MAX_TAGS:,} tags"
    if tags <= _FEW_TAGS:
        return ""
    stack = _Stack()
    names, open_, opened = stack.names, stack.open, stack.opened
    work = seen = pos = 0
    fast_unless, void, always = _FAST_UNLESS_OPEN, _VOID, _ALWAYS
    while pos < len(text):
        restart = -1  # where the scan goes on after a raw-text element
        for match in TOKEN.finditer(text, pos):
            end, name, quick, close = match.group("end", "name", "quick", "close")
            if stack.reopen and match.start() > pos and not text[pos : match.start()].isspace():
                stack.reopen_formatting()  # text before this: formatting closed earlier opens again for it
            pos = match.end()
            if name is None:
                continue  # a comment, a doctype
            if quick is None and close is None:
                return ""  # the text ends inside the tag, which is dropped
            seen += 1
            work += len(names)
            name = name.lower()
            top = names[-1] if names else ""
            if end:
                if name == top:  # most end tags: the current node's own
                    names.pop()
                    if not (count := open_[name] - 1):
                        opened.discard(name)
                    open_[name] = count
                else:
                    _end_tag(stack, name)
            elif (
                (unless := fast_unless.get(name, always)) is not None
                and " " not in top
                and top != "colgroup"
                and not stack.reopen
                and unless.isdisjoint(opened)
            ):  # most start tags: the element just opens (a void one doesn't)
                if name not in void:
                    names.append(name)
                    open_[name] = open_.get(name, 0) + 1
                    opened.add(name)
            else:
                skip = _start_tag(stack, name, text, match.end("name"), pos)
                if skip == "plaintext":
                    return ""
                if skip:  # its text, then the end tag that closes it
                    restart = raw_text_end(text, skip, pos)
                    if (closing := TOKEN.match(text, restart)) is not None:
                        restart = closing.end()
            if len(names) > MAX_NESTING:
                return f"nesting deeper than {MAX_NESTING}"
            if work > MAX_WORK:
                return f"{seen:,} tags nested {work // seen} deep on average"
            if restart >= 0:
                pos = restart
                break
        else:
            return ""
    return ""


def _start_tag(stack: _Stack, name: str, text: str, start: int, end: int) -> str:
    """Follow one start tag (its attributes from `start`, ">" at end - 1); returns what the scan must skip:
    the name of a raw-text element, "plaintext" for the rest of the text, or "" for nothing."""
    top = stack.top()
    if " " in top and top not in _HTML_INSIDE:  # foreign content
        if name not in _BREAKOUT:
            if not self_closing(text, start, end):
                stack.push(top.split(" ", 1)[0] + " " + name)
            return ""
        while " " in stack.top() and stack.top() not in _INTEGRATION:
            stack.pop()
    if stack.top() == "colgroup" and name not in ("col", "template"):
        stack.pop()  # anything but a column ends a column group
    if name in _TABLE_PARTS or name == "table":
        _table_tag(stack, name)
        return ""
    # First what the tag closes,
    if name in _ENDS_SELECT and (index := stack.in_scope("select")) >= 0:
        stack.pop_to(index)
    if name in ("li", "dd", "dt"):
        index = stack.find(_SIBLINGS[name], _ENDS_LIST_ITEM_SEARCH)
        if index >= 0:
            stack.pop_to(index)
    elif name in ("a", "nobr"):
        stack.close_formatting(name)
    elif name == "button" and (index := stack.in_scope("button")) >= 0:
        stack.pop_to(index)
    elif name in ("option", "optgroup") and stack.top() == "option":
        stack.pop()
    elif name in _RUBY and stack.in_scope("ruby") >= 0:
        while stack.top() in _IMPLIED_END and (name in ("rb", "rtc") or stack.top() != "rtc"):
            stack.pop()
    elif name == "select" and (index := stack.in_scope("select")) >= 0:
        stack.pop_to(index)  # a <select> inside a select closes it
        return ""
    elif name == "form" and stack.open.get("form") and not stack.open.get("template"):
        return ""  # a form inside a form is dropped
    if name in _CLOSES_P:
        stack.close_p()
    if name in _HEADINGS and stack.top() in _HEADINGS:
        stack.pop()
    # then the formatting it reopens, then the element itself.
    if stack.reopen and name not in _NO_REOPEN:
        stack.reopen_formatting()
    if name in _VOID or name in _NOT_PUSHED:
        return ""
    if name in ("svg", "math"):
        if not self_closing(text, start, end):
            stack.push(f"{name} {name}")
        return ""
    if name in RAW_TEXT and name != "template":  # its end tag closes it again: nothing stays open
        return name
    stack.push(name)
    return "plaintext" if name == "plaintext" else ""


def _table_tag(stack: _Stack, name: str) -> None:
    """<table> or a table part: what it closes depends on the insertion mode, read from the nearest table
    context on the stack; where that isn't followed here (templates, selects), the element just opens."""
    if not (stack.open.get("table") or stack.open.get("template")):
        if name == "table":
            stack.push(name)  # in quirks mode it leaves a <p> open: erring deep, it never closes one
        return  # a table part outside any table is dropped
    index = stack.find(_CONTEXTS, _INTEGRATION)
    context = stack.names[index] if index >= 0 else ""
    if name == "table":
        if context in _ROW_CONTEXTS and (table := stack.find("table", _TABLE_SCOPE)) >= 0:
            stack.pop_to(table)  # a table where rows belong ends the open one first
        stack.push(name)  # else a table in a cell or caption
        return
    if context in _CELLS or context == "caption":  # a table part closes the cell or caption first
        stack.pop_to(index)
        index = stack.find(_CONTEXTS, _INTEGRATION)
        context = stack.names[index] if index >= 0 else ""
    if context not in _ROW_CONTEXTS:  # a mode not followed here: it just opens, erring deep
        if name != "col":
            stack.push(name)
        return
    if name in _CELLS or name == "tr":
        if context == "tr" and name == "tr":
            stack.pop_to(index)
        else:
            stack.pop_above(index)
            if context == "table":
                stack.push("tbody")
            if context != "tr" and name != "tr":
                stack.push("tr")
        stack.push(name)
        return
    table = stack.find("table", _TABLE_SCOPE)  # caption, colgroup, col, a row group: into the table itself
    if table >= 0:
        stack.pop_above(table)
        stack.push("colgroup" if name == "col" else name)
    elif name != "col":
        stack.push(name)


def _end_tag(stack: _Stack, name: str) -> None:
    names = stack.names
    if name in ("br", "p") and " " in stack.top() and stack.top() not in _INTEGRATION:
        while " " in stack.top() and stack.top() not in _INTEGRATION:
            stack.pop()  # they end foreign content, as the start tags that break out of it do
    elif " " in stack.top():  # foreign content: the nearest foreign element of that name closes
        for index in range(len(names) - 1, max(-1, len(names) - 1 - _WINDOW), -1):
            entry = names[index]
            if " " not in entry:
                break  # an HTML element: the HTML rules below decide
            if entry.endswith(" " + name):
                stack.pop_to(index)
                return
    if stack.top() == "colgroup" and name not in ("colgroup", "col", "template"):
        stack.pop()  # anything but a column ends a column group
    if name in _HEADINGS:
        index = stack.find(_HEADINGS, _SCOPE)
    elif not stack.open.get(name):
        return  # nothing of that name is open: the end tag is dropped (or opens and closes a <p>)
    elif name in _FORMATTING:
        stack.close_formatting(name)
        return
    elif name == "form":
        if (index := stack.find("form", _SCOPE)) >= 0:
            stack.remove(index)  # only the form itself leaves the stack
        return
    elif name == "template":
        index = stack.find("template", frozenset())
    elif name in _END_SCOPES:
        index = stack.find(name, _END_SCOPES[name])
        if index >= 0 and _END_SCOPES[name] is _TABLE_SCOPE and name not in _CELLS:
            cell = stack.find(_CELLS_AND_CAPTION, _TABLE_SCOPE)
            if cell > index:
                stack.pop_to(cell)  # the cell or caption closes first, forgetting its formatting
    else:  # any other end tag closes the nearest element of its name, unless a special element is above it
        index = stack.find(name, _SPECIAL)
    if index >= 0:
        stack.pop_to(index)
