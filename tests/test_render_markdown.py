"""The one escaping rule: untrusted text reaches Markdown fenced or escaped, and renders nothing active."""

from __future__ import annotations

import csv
import re

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from security_corpus import corpus

from rounds_bot.redact import sanitize
from rounds_bot.render import markdown as md

ZW = md.BREAK


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("@octocat and @acme/security", f"@{ZW}octocat and @{ZW}acme/security"),
        ("see #12, acme/shop#7 and GH-3", f"see #{ZW}12, acme/shop#{ZW}7 and GH-{ZW}3"),
        ("![](//host/x)", "!\\[\\](//host/x)"),
        ("<img src=//host/x>", "\\<img src=//host/x\\>"),
        ("<!-- the rest is hidden", "\\<!-- the rest is hidden"),
        ("<details><h1>big</h1>", "\\<details\\>\\<h1\\>big\\</h1\\>"),
        (
            "https://evil.example/x and www.evil.example",
            f"https:{ZW}//evil.example/x and www{ZW}.evil.example",
        ),
        ("[link](x) [ref]: y", "\\[link\\](x) \\[ref\\]: y"),
        ("a | b", "a \\| b"),
        ("$x^2$ costs $5", "\\$x^2\\$ costs \\$5"),
        ("&lt; &#64;", f"\\&lt; \\&#{ZW}64;"),
        ("*bold* _em_ ~strike~", "\\*bold\\* \\_em\\_ \\~strike\\~"),
        ("user_id stays", "user_id stays"),
        ("two\nlines", "two lines"),
    ],
)
def test_escape_neutralises_every_active_construct(text, expected):
    assert md.escape(text) == expected


SHA = "a5c3785ed8d6a35868bc169f07e40e889087fd2e"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # GitHub links a commit's SHA, `user@SHA` and `user/repo@SHA` (GitHub docs, "Autolinked references
        # and URLs"), and resolves a SHA across the repository's forks: shown as code, nothing links it
        (f"broke in {SHA} today", f"broke in `{SHA}` today"),
        ("see a5c3785.", "see `a5c3785.`"),
        (f"acme/shop@{SHA}", f"acme/shop@`{SHA}`"),
        ("octocat@a5c3785 (x)", "octocat@`a5c3785` (x)"),
        ("took 1234567 ms", "took `1234567` ms"),
        ("DEADBEEF1 and deadbeef", "`DEADBEEF1` and `deadbeef`"),
        (
            "trace 4bf92f35-77b3-4da6-a3ce-929d0e0e4736 failed",
            "trace `4bf92f35-77b3-4da6-a3ce-929d0e0e4736` failed",
        ),
        ("https://evil.example/a5c3785ed8", "`https://evil.example/a5c3785ed8`"),
        ("/rounds/a5c3785", "`/rounds/a5c3785`"),
        # not a SHA: shorter than seven, inside a word, or other letters
        ("abc123 x_a5c3785ed 1a2b3c4g 123456", "abc123 x_a5c3785ed 1a2b3c4g 123456"),
    ],
)
def test_a_commit_sha_shows_as_code_and_links_nothing(text, expected):
    assert md.escape(text) == expected
    assert _live_html(str(md.escape(text))) == []


@pytest.mark.parametrize(
    ("text", "html"),
    [
        ("at `pricing.py`:1234567", "<p>at <code>pricing.py:1234567</code></p>"),
        ("a`b`abc1234", "<p>a<code>babc1234</code></p>"),
        ("abc1234:`x` ok", "<p><code>abc1234:x</code> ok</p>"),
        ("`x`abc1234`y`", "<p><code>xabc1234y</code></p>"),
    ],
)
def test_a_sha_touching_a_code_span_shows_with_it_as_one_span_and_no_backtick(text, html):
    """Two backtick runs side by side are one run to CommonMark, so a SHA's span touching a quoted one would
    close neither and show their backticks: the SHA's word joins the quoted span, the same characters."""
    assert _escaped_html(text) == html


@pytest.mark.parametrize(
    ("text", "html"),
    [
        # MySQL doubles a backtick inside a quoted identifier: two quoted parts side by side stay as they were
        ("`foo``bar`", "<p><code>foo``bar</code></p>"),
        ("`my``col` = 1", "<p><code>my``col</code> = 1</p>"),
    ],
)
def test_quoted_parts_side_by_side_keep_the_backticks_between_them(text, html):
    assert _escaped_html(text) == html


def _escaped_html(text: str) -> str:
    """What GitHub's renderer (cmark-gfm, raw HTML on) makes of `text` escaped."""
    html = cmarkgfm.github_flavored_markdown_to_html(str(md.escape(text)), options=Options.CMARK_OPT_UNSAFE)
    return str(html).strip()


@pytest.mark.parametrize(
    ("start", "expected"),
    [
        ("# heading", "\\# heading"),
        ("- item", "\\- item"),
        ("+ item", "\\+ item"),
        ("1. item", "1\\. item"),
        ("2) item", "2\\) item"),
        ("> quote", "\\> quote"),
        ("---", "\\---"),
        ("===", "\\==="),
        # a table's delimiter row of one column, which makes the line above it a table's header
        (":-:", "\\:-:"),
        ("-:", "\\-:"),
        (":---", "\\:---"),
        (": not a row", ": not a row"),
        # CommonMark's list marker is ASCII digits only: other scripts' digits start no list
        ("\u0661. item", "\u0661. item"),
        ("\uff11) item", "\uff11) item"),
    ],
)
def test_escape_keeps_a_line_start_from_becoming_a_block(start, expected):
    assert md.escape(start) == expected


def test_control_bidi_and_invisible_characters_are_removed():
    assert md.escape("a\u202eb\u2066c\u200bd\x00e\x1bf\ufeffg\U000e0041h") == "abcdefgh"
    assert md.title_text("a\u202eb\nc", 50) == "ab c"


def test_backtick_quoted_words_stay_code_and_cannot_break_out():
    assert md.escape("read `user_id` first") == "read `user_id` first"
    assert md.escape("lone ` tick") == "lone \\` tick"
    assert md.code("a``b") == "```a``b```"
    assert md.code("`x") == "`` `x ``"
    assert md.code("a|b", in_table=True) == "`a\\|b`"


def test_a_fence_cannot_be_closed_from_inside():
    block = md.fenced("x\n```\n<!-- rounds:marker v1 -->\n````")
    lines = block.splitlines()
    assert lines[0] == "```" and lines[-1] == "```"
    assert not any(line.startswith("```") for line in lines[1:-1])
    assert md.unfence(md.fence_safe("a\n```\nb")) == "a\n```\nb"


def test_escape_block_keeps_lines_and_paragraphs():
    assert md.escape_block("one\n- two\n\n\n\n    three") == "one\n\\- two\n\nthree"


def test_titles_ping_reference_and_link_nothing():
    title = md.title_text("[svc] @alice #12 `code` https://x.example", 120)
    assert title == f"[svc] @{ZW}alice #{ZW}12 'code' x.example"


def test_titles_keep_urls_and_words_free_of_invisible_characters():
    text = 'Post "https://www.api.example/v2/labels?x=1": a@b.example, file:///etc/z.yaml'
    title = md.title_text(text, 120)
    assert title == 'Post "api.example/v2/labels?x=1": a@b.example, /etc/z.yaml'
    assert ZW not in md.title_text("timed out after 2006ms at www.shop.example", 120)
    assert len(md.title_text("x" * 300, 120)) == 120


def test_label_values_keep_only_plain_characters():
    assert md.label_text("checkout-api") == "checkout-api"
    assert md.label_text("a,b <img> \u202e") == "a-b-img"
    assert md.label_text("\u202e") == "unknown"


def test_links_only_for_plain_http_urls():
    assert md.link("Trace", "https://signoz.example/trace/1") == "[Trace](https://signoz.example/trace/1)"
    assert md.link("Trace", "javascript:alert(1)") == "Trace: `javascript:alert(1)`"
    assert md.link("Trace", "https://x.example/a) [b](c") == "Trace: `https://x.example/a) [b](c`"


def test_templates_escape_every_interpolation_unless_built_as_markdown():
    template = md.environment().from_string("{{ raw }} {{ built }} {{ n }}")
    out = template.render(raw="@team <b>", built=md.code("@team"), n=3)
    assert out == f"@{ZW}team \\<b\\> `@team` 3"


def test_issue_references_of_the_tracker_stay_links():
    assert md.issue_ref("#12") == "#12"
    assert md.issue_ref("sig_1.md") == "sig_1.md"
    assert md.issue_ref("#12 @x") == f"\\#{ZW}12 @{ZW}x"


# Cross-site scripting payloads of the kinds public cheat sheets list (filter bypasses, polyglots, encoded
# schemes, SVG and event handlers, Markdown links and images), beside the security tests' hostile corpus.
XSS = (
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<svg/onload=alert(1)>",
    "<iframe src=javascript:alert(1)>",
    '<a href="javascript:alert(1)">x</a>',
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "![x](https://evil.example/x.png)",
    "[x]: https://evil.example/ref",
    "<details open ontoggle=alert(1)>",
    "<body onload=alert(1)>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    "jaVasCript:/*-/*`/*\\`/*'/*\"/**/(/* */oNcliCk=alert() )//%0D%0A%0d%0a//</stYle/</titLe/"
    "</teXtarEa/</scRipt/--!>\\x3csVg/<sVg/oNloAd=alert()//>\\x3e",
    "&#x3C;img src=x onerror=alert(1)&#x3E;",
    "%3Cscript%3Ealert(1)%3C/script%3E",
    "<<script>script>alert(1)<</script>/script>",
    "http://evil.example/?<script>",
    "www.evil.example",
    "<https://evil.example>",
    "@octocat please",
    "# heading\n> quote\n- item\n| a | b |\n|---|---|\n---",
)


def _live_html(markdown: str) -> list[str]:
    import re

    import cmarkgfm
    from cmarkgfm.cmark import Options

    html = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    outside = re.sub(r"<code>.*?</code>", "", html, flags=re.S)
    checks = {
        "link": r"<a\b",
        "image": r"<img\b",
        "raw html": r"<(?!/?(?:p|code|pre|br|em|strong|del)\b)[A-Za-z!/]",
        "block": r"<(?:h[1-6]|blockquote|ul|ol|table|hr)\b",
        "mention": r"(?<![\w`])@[A-Za-z0-9]",
    }
    return [name for name, pattern in checks.items() if re.search(pattern, outside)]


@pytest.mark.parametrize("payload", XSS)
def test_github_renders_nothing_active_from_escaped_or_fenced_text(payload):
    from security_corpus import injections

    for text in (payload, *injections()):
        for rendered in (md.escape(text), md.escape_block(text), md.fenced(text), md.code(text)):
            assert _live_html(str(rendered)) == [], (text, str(rendered))


@pytest.mark.parametrize("rows", ["abc\n:-:", "a\n-:", "a\n :--: ", "a\n---:"])
def test_escaped_prose_renders_no_table_of_one_column(rows):
    """GFM's tables extension needs no pipe for one column: a delimiter row alone makes a header."""
    assert "block" in _live_html(rows)  # (what the escaping prevents: a table)
    assert _live_html(str(md.escape_block(rows))) == []


def _texts(shared_data) -> list[str]:
    """Text as telemetry and the model bring it: the labelled log lines, the security corpus's carriers,
    and hand-made lines that start, end or are made of each construct the escaping rule neutralises."""
    texts = [planted.carrier for planted in corpus()]
    for system in ("HDFS", "OpenStack", "Spark", "Thunderbird"):
        with open(shared_data / "loghub_2k" / system / f"{system}_2k.log_structured.csv", newline="") as rows:
            texts += [row["Content"] for row in csv.DictReader(rows)]
    made = [
        "",
        " ",
        "plain words",
        "1. item",
        "12) x",
        "- a",
        "+",
        "==",
        "# h",
        "gh-12",
        "Gh-3",
        "WWW.x",
        "a//b",
    ]
    made += [
        "x:" + "//y",
        "tab\there",
        "line\r\nbreak",
        "cr\ronly\r\r\n\n\tend\x0bvt\x00nul\x1besc",
        "\u2028sep",
        "zero\u200bwidth",
        "é accent",
        "\x7fdel",
    ]
    made += [f"{a}{b}" for a in "\\`*[]<>|~$_&@#/-+=0gwW." for b in ("", "1", " x", "-1", "ww.", "/")]
    return texts + made


def test_text_with_nothing_to_escape_is_passed_through_as_the_full_rule_leaves_it(shared_data, monkeypatch):
    """The fast paths (`visible` of printable ASCII, `_escape_plain` of a line without any construct's
    first character) give what running every rule gives."""
    texts = _texts(shared_data)
    for text in texts:
        assert md.visible(text) == sanitize(text.replace("\r\n", "\n").translate(md._SPACES_TABLE))
    lines = [md._SPACES.sub(" ", md.visible(text).replace("\n", " ")).strip() for text in texts]
    fast = [md._escape_plain(line) for line in lines]
    monkeypatch.setattr(md, "_ANY_CONSTRUCT", re.compile(""))  # found everywhere: every rule runs
    assert fast == [md._escape_plain(line) for line in lines]
    assert sum(a == b for a, b in zip(fast, lines, strict=True)) > len(lines) // 4  # the fast path is taken


def _every_rule(text: str) -> str:
    """`_escape_plain` with every rule run, wherever it can match or not."""
    text = md._ALWAYS.sub(lambda m: "\\" + m.group(0), text)
    text = md._UNDERSCORE.sub(r"\\_", text)
    text = md._ENTITY.sub(r"\\&", text)
    text = md._MENTION.sub("@" + md.BREAK, text)
    text = md._REFERENCE.sub(lambda m: f"{m.group(1)}-{md.BREAK}" if m.group(1) else "#" + md.BREAK, text)
    text = md._AUTOLINK.sub(lambda m: f"{m.group(1)}{md.BREAK}." if m.group(1) else md.BREAK + "//", text)
    text = md._HEADING.sub(r"\\#", text)
    if md._DELIMITER_ROW.fullmatch(text):
        return "\\" + text
    return md._LINE_START.sub(
        lambda m: f"\\{m.group(1)}" if m.group(1) else f"{m.group(2)}\\{m.group(3)}", text
    )


def test_a_rule_skipped_for_text_without_its_characters_leaves_what_running_it_leaves(shared_data):
    """`_escape_plain` runs a slow rule only where a character all its matches hold is in the text: the
    same escaping as running every rule, on the corpora and on texts made to hold each construct."""
    texts = _texts(shared_data)
    constructs = (
        "_",
        "#1",
        "gh-2",
        "GH-3",
        "//",
        "www.",
        "Www.",
        "&#1",
        "&x",
        "@a",
        "# h",
        "- a",
        "1. a",
        "=",
    )
    texts += ["2026-11-26T10:37:05.289092+00:00", "1.2.3-rc.1", "v1.0-gh-2", "a.www.b", "x-y.z"]
    texts += [f"{a}{b}{c}" for a in ("", "x", "x:", " ") for b in constructs for c in ("", "1", "a", " x")]
    lines = [md._SPACES.sub(" ", md.visible(text).replace("\n", " ")).strip() for text in texts]
    assert [md._escape_plain(line) for line in lines] == [_every_rule(line) for line in lines]


def _code_in_full(text: str, in_table: bool) -> str:
    """`code` by its general steps alone, whatever the text."""
    content = md.visible(text).replace("\n", " ")
    if in_table:
        content = content.replace("|", "\\|")
    longest = max((len(run) for run in md._TICKS.findall(content)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if content.startswith("`") or content.endswith("`") or not content.strip() else ""
    return f"{ticks}{pad}{content}{pad}{ticks}"


@pytest.mark.parametrize("in_table", [False, True])
def test_a_plain_code_span_is_the_one_the_general_steps_make(shared_data, in_table):
    """`code` of printable ASCII without a backtick (or, in a table, a pipe) skips the general steps: the
    same span as they make, on the corpora and on texts made to sit at each step's edge."""
    texts = [*_texts(shared_data), "a|b", "|", "  ", " x ", "`", "a`b", "x\n", "\t", "é", "path/to.py:12"]
    assert [str(md.code(text, in_table=in_table)) for text in texts] == [
        _code_in_full(text, in_table) for text in texts
    ]


@pytest.mark.parametrize("in_table", [False, True])
def test_a_span_made_without_the_memo_is_the_code_span(shared_data, in_table):
    """`span` (a text shown once, made without the memo) gives `code`'s span, on the corpora and on texts
    made to sit at each step's edge, plain or not."""
    texts = [*_texts(shared_data), "a|b", "|", "  ", " x ", "`", "a`b", "x\n", "\t", "é", "path/to.py:12"]
    spans = [md.span(text, in_table=in_table) for text in texts]
    assert all(type(span) is str for span in spans)
    assert spans == [str(md.code(text, in_table=in_table)) for text in texts]
    assert spans == [_code_in_full(text, in_table) for text in texts]


def _title_by_every_rule(text: str, limit: int) -> str:
    """`title_text` with each of its rules run, wherever it can match or not."""
    plain = md._SPACES.sub(" ", md.visible(text).replace("\n", " ")).strip().replace("`", "'")
    plain = md._TITLE_URL.sub("", plain)
    plain = md._TITLE_MENTION.sub("@" + md.BREAK, plain)
    plain = md._REFERENCE.sub(lambda m: f"{m.group(1)}-{md.BREAK}" if m.group(1) else "#" + md.BREAK, plain)
    return plain if len(plain) <= limit else plain[: limit - 1].rstrip() + "…"


def test_a_title_rule_skipped_for_text_without_its_characters_leaves_what_running_it_leaves(shared_data):
    """`title_text` runs a rule only where a text all its matches hold is in the title: the same title as
    running every rule, on the corpora and on texts made to hold each construct (any case)."""
    texts = _texts(shared_data)
    constructs = ("https://", "HTTP://www.", "x://", "www.", "WWW.", "Www.", "@a", "a@b", "#1", "gh-2")
    constructs += ("GH-3", "Gh-4")
    starts, ends = ("", "x", "[svc] ", " ", "-"), ("", "1", "a.b")
    texts += [f"{a}{b}{c}" for a in starts for b in constructs for c in ends]
    texts += ["2026-11-26T10:37:05.289092+00:00", "1.2.3-rc.1", "v1.0-gh-2", "a.www.b", "file:///etc/z"]
    for limit in (120, 12):
        assert [md.title_text(text, limit) for text in texts] == [
            _title_by_every_rule(text, limit) for text in texts
        ]
