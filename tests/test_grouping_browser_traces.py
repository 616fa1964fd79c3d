"""Browser JavaScript errors (OpenTelemetry's web SDK copies `err.stack` into `exception.stacktrace`):
Chrome's V8 frames, Firefox's and Safari's `fn@url:line:col` frames, bundles renamed by every deploy
and function names a minifier renames. One bug seen in two browsers and two deploys is one
signature; signatures made before bundles were known keep receiving their events."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from known_states import KnownStates
from test_round import ListSource

from rounds_bot.grouping.bundles import MINIFIED, is_bundle, is_minified_name, without_content_hash
from rounds_bot.grouping.crash_site import site_of
from rounds_bot.grouping.engine import GroupingEngine, SignatureState
from rounds_bot.grouping.frames import frame_key, frame_key_before_bundles, module_path, reads_a_bundle
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.stacktrace import Frame, detect_runtime, parse_stacktrace, runtime_of_line
from rounds_bot.grouping.stacktrace.model import trace_lines
from rounds_bot.models import ErrorEvent
from rounds_bot.round.run import run_round
from rounds_bot.settings import load_settings
from rounds_bot.tracker.dryrun import DryRunTracker

T0 = datetime(2024, 1, 1, tzinfo=UTC)
MESSAGE = "Order total missing"
CHROME_DEPLOY_1 = f"""Error: {MESSAGE}
    at t (https://shop.example.com/assets/index-DiwrgTda.js:1:20451)
    at Object.Xk (https://shop.example.com/assets/index-DiwrgTda.js:1:18032)
    at https://shop.example.com/assets/vendor-C8nq1mZa.js:2:331"""
FIREFOX_DEPLOY_1 = """t@https://shop.example.com/assets/index-DiwrgTda.js:1:20451
Xk@https://shop.example.com/assets/index-DiwrgTda.js:1:18032
@https://shop.example.com/assets/vendor-C8nq1mZa.js:2:331"""
#: the next deploy: every bundle renamed, the minifier's names and the columns changed
CHROME_DEPLOY_2 = f"""Error: {MESSAGE}
    at e (https://shop.example.com/assets/index-Bq7Xw9Lp.js:1:20502)
    at Object.Jn (https://shop.example.com/assets/index-Bq7Xw9Lp.js:1:18110)
    at https://shop.example.com/assets/vendor-D1k9aZzQ.js:2:331"""
FIREFOX_DEPLOY_2 = """async*e@https://shop.example.com/assets/index-Bq7Xw9Lp.js:1:20502
Jn@https://shop.example.com/assets/index-Bq7Xw9Lp.js:1:18110
@https://shop.example.com/assets/vendor-D1k9aZzQ.js:2:331"""
SAFARI_DEPLOY_2 = """e@https://shop.example.com/assets/index-Bq7Xw9Lp.js:1:20502
Jn@https://shop.example.com/assets/index-Bq7Xw9Lp.js:1:18110
global code@https://shop.example.com/assets/vendor-D1k9aZzQ.js:2:331"""
ONE_BUG = (CHROME_DEPLOY_1, FIREFOX_DEPLOY_1, CHROME_DEPLOY_2, FIREFOX_DEPLOY_2, SAFARI_DEPLOY_2)
#: another bug of the same bundle: a method whose name the minifier keeps
OTHER_BUG = """TypeError: can't access property "total", cart is undefined
    at Cart.checkout (https://shop.example.com/assets/index-DiwrgTda.js:1:7001)
    at Object.Xk (https://shop.example.com/assets/index-DiwrgTda.js:1:18032)
    at https://shop.example.com/assets/vendor-C8nq1mZa.js:2:331"""
#: what the release before this reading gave CHROME_DEPLOY_1 (its app, system and site hashes),
#: pinned: a signature it made is stored under them
BEFORE_HASHES = [
    "dd21fae469d0cb13379048ce830a3174ac80d34f1d6242676bd629235268f170",
    "ac6ebca9a13a086bea1ba0886206ad3b2e920ccd81caf40a319dd9dceee10c27",
]
BEFORE_SITE = "assets/index-diwrgtda.js:t"


def event(stacktrace: str | None, error_type: str = "Error", message: str = MESSAGE) -> ErrorEvent:
    return ErrorEvent(
        event_id="e",
        timestamp=T0,
        service="shop-web",
        error_type=error_type,
        message=message,
        stacktrace=stacktrace,
    )


def test_the_three_browsers_traces_of_one_error_read_the_same_frames() -> None:
    chrome, firefox = parse_stacktrace(CHROME_DEPLOY_1), parse_stacktrace(FIREFOX_DEPLOY_1)
    assert chrome is not None and firefox is not None
    assert chrome.runtime == firefox.runtime == "node"
    keys = [[frame_key(f) for f in trace.exceptions[0].frames] for trace in (chrome, firefox)]
    assert keys[0] == keys[1]
    assert [k.module for k in keys[0]] == ["assets/index.js", "assets/index.js", "assets/vendor.js"]


@pytest.mark.parametrize(
    ("line", "function", "filename", "lineno"),
    [
        (
            "handle@https://app.example.com/assets/index-DiwrgTda.js:1:2345",
            "handle",
            "https://app.example.com/assets/index-DiwrgTda.js",
            1,
        ),
        ("@https://app.example.com/a.js:1:99", None, "https://app.example.com/a.js", 1),
        ("async*handle@https://app.example.com/a.js:4:2", "handle", "https://app.example.com/a.js", 4),
        (
            "promise callback*handle@https://app.example.com/a.js:4:2",
            "handle",
            "https://app.example.com/a.js",
            4,
        ),
        ("fn/<@https://app.example.com/a.js:10:5", "fn/<", "https://app.example.com/a.js", 10),
        ("forEach@[native code]", "forEach", None, None),
        ("global code@https://app.example.com/a.js:3:1", None, "https://app.example.com/a.js", 3),
        ("eval code@https://app.example.com/a.js:3:1", None, "https://app.example.com/a.js", 3),
        ("fn@https://app.example.com/a.js line 2 > eval:1:5", "fn", "https://app.example.com/a.js", 2),
        (
            "fn@https://app.example.com/a.js line 2 > eval line 1 > eval:1:5",
            "fn",
            "https://app.example.com/a.js",
            2,
        ),
        ("load@webpack-internal:///./src/cart.ts:7:1", "load", "webpack-internal:///./src/cart.ts", 7),
        (
            "x@blob:https://app.example.com/5b1c0e6e-2f7a:1:2",
            "x",
            "blob:https://app.example.com/5b1c0e6e-2f7a",
            1,
        ),
        ("x@https://app.example.com/a.js?v=3:1:2", "x", "https://app.example.com/a.js", 1),
        ("x@/static/js/main.js:1:2", "x", "/static/js/main.js", 1),
    ],
)
def test_a_firefox_or_safari_frame_is_read(
    line: str, function: str | None, filename: str | None, lineno: int | None
) -> None:
    assert runtime_of_line(line) == "node"
    trace = parse_stacktrace(line)
    assert trace is not None
    assert trace.exceptions[0].frames == (Frame(function, filename=filename, lineno=lineno),)


@pytest.mark.parametrize(
    "line",
    [
        "Contact bob@example.com for access",
        "bob@example.com:1:2",
        "redis://user@cache:6379 refused the connection",
        "connect ECONNREFUSED postgres://app@db:5432",
        "npm ERR! @acme/widgets@2.1.0 build: `vite build`",
        "@app.route('/orders')",
        "Failed at step 3: upload@https://host/a.js",  # white space before the `@`: a message's words
    ],
)
def test_a_line_with_an_at_sign_that_prints_no_frame_is_no_browser_frame(line: str) -> None:
    assert runtime_of_line(line) is None
    assert parse_stacktrace(line) is None


def test_a_browser_stack_takes_the_events_type_as_chromes_header_names_it() -> None:
    engine = GroupingEngine()
    chrome = engine.assign(event(CHROME_DEPLOY_1.replace("Error:", "TypeError:", 1), "TypeError"))
    firefox = engine.assign(event(FIREFOX_DEPLOY_1, "TypeError"))
    assert firefox.signature_id == chrome.signature_id
    other = engine.assign(event(FIREFOX_DEPLOY_1, "RangeError", "Invalid array length"))
    assert other.signature_id != chrome.signature_id


@pytest.mark.parametrize(
    ("name", "stripped"),
    [
        ("main.3f2a1b9c.js", "main.js"),  # webpack `[name].[contenthash:8].js`
        ("main.3f2a1b9c4d5e6f708192.js", "main.js"),  # webpack's default 20 hex digits
        ("2.a1b2c3d4.chunk.js", "2.chunk.js"),  # Create React App
        ("index-DiwrgTda.js", "index.js"),  # Vite / Rollup 3+
        ("index-B-3xYz_a.js", "index.js"),  # a base64url hash holding `-`
        ("vendor-C8nq1mZa.mjs", "vendor.mjs"),
        ("index-5f1a2b3c4d5e6f70.js", "index.js"),  # Next.js
        ("framework-2c79e2a64abdb08b.js", "framework.js"),
        ("chunk-2d0c0c66.js", "chunk.js"),  # Vue CLI
        ("chunk-RLJ2RCJQ.js", "chunk.js"),  # esbuild (Vite's pre-bundled dependencies)
    ],
)
def test_a_bundles_content_hash_is_left_out_of_its_name(name: str, stripped: str) -> None:
    assert without_content_hash(name) == stripped
    assert is_bundle(name)


@pytest.mark.parametrize(
    "name",
    [
        "user-settings.js",
        "v2-api.js",
        "date-picker.js",
        "lazy-Checkout.js",
        "chunk-vendors.js",
        "x-defaced.js",
        "app.js",
        "main.bundle.js",
        "orders.py",
        "0001_a1b2c3d4e5.py",
        "i18n-en.js",
        "web-vitals.js",
        "react-dom.production.js",
        "polyfills-legacy.js",
        "feature-flags.js",
    ],
)
def test_a_name_a_human_wrote_is_kept(name: str) -> None:
    assert without_content_hash(name) == name
    assert not is_bundle(name)


def test_stripping_a_random_hash_gives_the_name_back() -> None:
    """Random hashes of each bundler's alphabet, on names humans write: the name comes back, save
    for the few hashes that read as a word (all lower case, no digit)."""
    rng = random.Random(7)
    base64url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    kept = 0
    for trial in range(2000):
        name = rng.choice(["index", "user-settings", "v2-api", "Checkout", "main"])
        if trial % 2:
            digest = "".join(rng.choice(base64url) for _ in range(8))
            hashed = f"{name}-{digest}.js"
        else:
            digest = "".join(rng.choice("0123456789abcdef") for _ in range(rng.choice((8, 16, 20))))
            hashed = f"{name}.{digest}.js"
        kept += without_content_hash(hashed) == f"{name}.js"
    assert kept >= 1990


@pytest.mark.parametrize(
    ("function", "minified"),
    [
        ("t", True),
        ("e.n", True),
        ("Xk", True),
        ("Object.t", True),
        ("t/<", True),
        ("$", True),
        ("Cart.add", False),
        ("handleSubmit", False),
        ("init/<", False),
        ("<anonymous>", False),
    ],
)
def test_a_minifiers_name_is_one_or_two_characters(function: str, minified: bool) -> None:
    assert is_minified_name(function) is minified


def test_a_bundles_minified_function_contributes_as_minified_and_others_keep_theirs() -> None:
    bundle = "https://shop.example.com/assets/index-DiwrgTda.js"
    assert frame_key(Frame("Object.t", filename=bundle)).function == MINIFIED
    assert frame_key(Frame("Cart.add", filename=bundle)).function == "Cart.add"
    assert frame_key(Frame("t", filename="https://shop.example.com/assets/app.min.js")).function == MINIFIED
    # outside a bundle a short name is the author's
    assert frame_key(Frame("go", filename="/app/src/router.js")).function == "go"
    assert not reads_a_bundle(Frame("go", filename="/app/src/router.js"))


def test_a_blob_urls_uuid_is_left_out() -> None:
    one = module_path("blob:https://shop.example.com/5b1c0e6e-2f7a-4d1b-9f52-8a8e1a2b3c4d")
    other = module_path("blob:https://shop.example.com/0e1f2a3b-9c8d-4e7f-8a6b-5c4d3e2f1a0b")
    assert one == other == "blob"


def test_a_frame_key_before_bundles_is_the_printed_module_path_and_function() -> None:
    frame = Frame("t", filename="https://shop.example.com/assets/index-DiwrgTda.js")
    before = frame_key_before_bundles(frame)
    assert (before.module, before.function) == ("assets/index-diwrgtda.js", "t")
    assert reads_a_bundle(frame)


def test_one_bug_in_two_browsers_and_two_deploys_is_one_signature() -> None:
    engine = GroupingEngine()
    assignments = [engine.assign(event(text)) for text in ONE_BUG]
    assert len({a.signature_id for a in assignments}) == 1
    assert [a.tier for a in assignments[1:]] == ["fingerprint"] * 4
    assert MINIFIED in assignments[0].explanation


def test_another_bug_in_the_same_bundle_is_another_signature() -> None:
    engine = GroupingEngine()
    first = engine.assign(event(CHROME_DEPLOY_1))
    other = engine.assign(event(OTHER_BUG, "TypeError", 'can\'t access property "total", cart is undefined'))
    assert other.signature_id != first.signature_id
    invalid_length = CHROME_DEPLOY_2.replace(f"Error: {MESSAGE}", "RangeError: Invalid array length")
    different_type = engine.assign(event(invalid_length, "RangeError", "Invalid array length"))
    assert different_type.signature_id != first.signature_id


def test_a_signature_made_before_bundles_were_known_keeps_receiving_its_events() -> None:
    before = SignatureState(
        signature_id="sig_before", service="shop-web", seq=0, hashes=BEFORE_HASHES, crash_site=BEFORE_SITE
    )
    engine = GroupingEngine(known=[before])
    for _ in range(2):
        found = engine.assign(event(CHROME_DEPLOY_1))
        assert (found.signature_id, found.tier) == ("sig_before", "fingerprint")
        assert "an earlier version" in found.explanation.splitlines()[-1]


def test_a_trace_without_bundles_gives_no_lookup_hash_of_its_own() -> None:
    text = "Error: x\n    at handler (/app/src/orders.js:10:15)\n    at /app/src/server.js:5:3"
    trace = parse_stacktrace(text)
    assert trace is not None
    assert detect_runtime(trace_lines(text)) == "node"
    assert not any(reads_a_bundle(f) for f in trace.exceptions[0].frames)


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_firefox_or_safari_stack_finds_the_message_signature_it_went_to_before(how: str) -> None:
    """No version read these frames before: their events went to their message's template, and
    that signature keeps receiving them (it is not re-split into a trace signature)."""
    before = GroupingEngine()
    made = before.assign(event(None))  # (what an unread stack gave: the message alone)
    assert made.tier == "new"
    saved = [before.state(made.signature_id)]

    def engine() -> GroupingEngine:
        return GroupingEngine(known=saved) if how == "given" else GroupingEngine(lookup=KnownStates(saved))

    # a Chrome stack was read before: it is never placed by its message this way
    assert engine().assign(event(CHROME_DEPLOY_1)).signature_id != made.signature_id
    found = engine().assign_all([event(FIREFOX_DEPLOY_1), event(SAFARI_DEPLOY_2)])
    assert {(a.signature_id, a.tier) for a in found} == {(made.signature_id, "fingerprint")}
    assert all("an earlier version" in a.explanation.splitlines()[-1] for a in found)


def test_two_deploys_in_three_browsers_over_two_rounds_file_one_issue(clean_env, fresh_db, tmp_path) -> None:
    now = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)

    def browser_event(n: int, text: str, minutes_ago: int) -> ErrorEvent:
        return event(text).model_copy(
            update={"event_id": f"b{n}", "timestamp": now - timedelta(minutes=minutes_ago)}
        )

    settings = load_settings()
    source = ListSource([browser_event(n, text, 10) for n, text in enumerate(ONE_BUG[:2])])
    first = run_round(settings, source, DryRunTracker(tmp_path), fresh_db, now=now)
    assert len(first.new) == 1
    later = now + timedelta(minutes=15)
    source.events += [browser_event(10 + n, text, -5) for n, text in enumerate(ONE_BUG[2:])]
    second = run_round(settings, source, DryRunTracker(tmp_path), fresh_db, now=later)
    assert not second.new and [line.round_count for line in second.updated] == [3]
    assert len(list(tmp_path.glob("*.md"))) == 1


def _random_paths(rng: random.Random, count: int) -> list[str]:
    parts = ["app", "src", "assets", "static", "js", "_next", "chunks", "node_modules", "v2", "1.4.2", "Shop"]
    names = ["index", "user-settings", "v2-api", "main", "orders", "Checkout", "t", "app.min", "2"]
    suffixes = [
        "",
        "-DiwrgTda",
        ".3f2a1b9c",
        "-5f1a2b3c4d5e6f70",
        ".a1b2c3d4.chunk",
        "-settings",
        "-Bq7Xw9Lp",
    ]
    exts = [".js", ".mjs", ".cjs", ".ts", ".py", ".rb", ".php", ".jsx", "", ".js?v=3", ".min.js#x"]
    exts += [".JS", ".min.JS"]
    prefixes = [
        "/",
        "https://shop.example.com/",
        "webpack-internal:///./",
        "blob:https://a.example/",
        "C:\\app\\",
        "",
    ]
    paths = []
    for _ in range(count):
        directories = "/".join(rng.choice(parts) for _ in range(rng.randrange(4)))
        name = rng.choice(names) + rng.choice(suffixes) + rng.choice(exts)
        paths.append(rng.choice(prefixes) + (f"{directories}/" if directories else "") + name)
    return paths


def test_reads_a_bundle_answers_as_comparing_both_keys() -> None:
    """The cheap test in front (a script's or a blob's file only) never hides a difference."""
    rng = random.Random(11)
    functions = ["t", "e.n", "Xk", "handle", "Cart.add", None, "init/<"]
    for path in _random_paths(rng, 4000):
        frame = Frame(rng.choice(functions), filename=path)
        assert reads_a_bundle(frame) == (frame_key(frame) != frame_key_before_bundles(frame)), path


def test_a_path_of_no_script_reads_as_before() -> None:
    """Python, Ruby, PHP, TypeScript sources and a Node server's unhashed files are named as before."""
    rng = random.Random(12)
    for path in _random_paths(rng, 4000):
        if (
            path.startswith("blob:")
            or without_content_hash(path.rsplit("/", 1)[-1]) != path.rsplit("/", 1)[-1]
        ):
            continue
        frame = Frame("handler", filename=path)
        assert frame_key(frame) == frame_key_before_bundles(frame), path


def test_a_minified_crash_site_is_this_builds_so_two_bugs_of_a_bundle_never_share_one() -> None:
    """As `index.js:<minified>` every bug of a bundle would share a site (its hash would merge them,
    and tier 3 would not be held apart): a minified site is named as the build printed it."""
    engine = GroupingEngine()
    first = engine.assign(event(CHROME_DEPLOY_1, "TypeError", "x is undefined"))
    elsewhere = """TypeError: y is null
    at n (https://shop.example.com/assets/index-DiwrgTda.js:1:501)
    at Object.Cart.render (https://shop.example.com/assets/index-DiwrgTda.js:1:9001)
    at https://shop.example.com/assets/vendor-C8nq1mZa.js:2:800"""
    second = engine.assign(event(elsewhere, "TypeError", "y is null"))
    assert second.signature_id != first.signature_id
    trace = parse_stacktrace(elsewhere)
    assert trace is not None
    assert site_of(trace, InAppRules().roles(trace)).key == "assets/index-diwrgtda.js:n"
