"""A frame of a browser extension (its URL's scheme: Chrome's `chrome-extension://`, Firefox's `moz-extension://`,
Safari's `safari-web-extension://` and its masked `webkit-masked-url://hidden/`) is code the user installed in
their browser, not the app's: it is no crash site, and one app bug reached through two extensions that wrap
the app's calls is one signature. Signatures made while grouping took an extension's frames for the app's (and
before that, a builtin's too) keep receiving their events."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest
from test_grouping_browser_traces import ONE_BUG, OTHER_BUG
from test_grouping_builtins import OTHER_CALLER as BUILTIN_OTHER_CALLER
from test_grouping_builtins import OTHER_LIBRARY as BUILTIN_OTHER_LIBRARY
from test_grouping_builtins import TRACE as BUILTIN_TRACE
from test_grouping_builtins import assert_found_by_an_earlier_version, assert_one_new_signature
from test_grouping_builtins import event as builtin_event
from test_grouping_corpus import corpus_events

from rounds_bot.grouping.candidates import CandidateReader
from rounds_bot.grouping.crash_site import site_of, site_of_text
from rounds_bot.grouping.engine import GroupingEngine, SignatureState
from rounds_bot.grouping.inapp import ADDED_LIBRARY_RULES, EVERY_ADDED_RULE, InAppRules, readings_before
from rounds_bot.grouping.shapes import ShapeCache
from rounds_bot.grouping.stacktrace import parse_stacktrace
from rounds_bot.grouping.templates import TemplateMiner
from rounds_bot.models import ErrorEvent

T0 = datetime(2024, 1, 1, tzinfo=UTC)
MESSAGE = "Failed to execute 'fetch' on 'Window': Invalid value"
BUILTIN, EXTENSION = ADDED_LIBRARY_RULES[:2]  # (the rules added before Android's)
CART = "https://shop.example.com/assets/cart.js"
REACT = "https://shop.example.com/node_modules/.vite/deps/react-dom.js"
#: the app calls `fetch` with a bad argument; an extension that wraps `window.fetch` raises (Chrome)
TRACE = f"""TypeError: {MESSAGE}
    at window.fetch (chrome-extension://gighmmpiobklfepjocnamgkkbiglidom/inject.js:1:2231)
    at loadCart ({CART}:12:5)
    at onMount ({CART}:40:3)
    at commitHookEffectListMount ({REACT}:16915:34)"""
#: the same bug through another extension's wrapper, two frames deep
OTHER_EXTENSION = f"""TypeError: {MESSAGE}
    at r.fetch (chrome-extension://nngceckbapebfimnlniiiahkandclblb/content/hook.js:2:50)
    at Object.apply (chrome-extension://nngceckbapebfimnlniiiahkandclblb/content/hook.js:1:90)
    at loadCart ({CART}:12:5)
    at onMount ({CART}:40:3)
    at commitHookEffectListMount ({REACT}:16915:34)"""
#: the same bug where no extension wraps `fetch`: the browser's own function prints no frame
NO_EXTENSION = f"""TypeError: {MESSAGE}
    at loadCart ({CART}:12:5)
    at onMount ({CART}:40:3)
    at commitHookEffectListMount ({REACT}:16915:34)"""
#: Firefox's and Safari's `fn@url:line:col` frames carry no `Type: message` line
FIREFOX = f"""fetch@moz-extension://4b2d5c1e-8f3a-4e2b-9c6d-1a2b3c4d5e6f/inject.js:1:2231
loadCart@{CART}:12:5
onMount@{CART}:40:3
commitHookEffectListMount@{REACT}:16915:34"""
SAFARI = FIREFOX.replace("moz-extension://", "safari-web-extension://")
SAFARI_LEGACY = FIREFOX.replace("moz-extension://", "safari-extension://")
SAFARI_MASKED = FIREFOX.replace(
    "moz-extension://4b2d5c1e-8f3a-4e2b-9c6d-1a2b3c4d5e6f/inject.js", "webkit-masked-url://hidden/"
)
CHROME_PAGE = TRACE.replace("chrome-extension://gighmmpiobklfepjocnamgkkbiglidom/", "chrome://new-tab-page/")
UPPER_CASE = TRACE.replace("chrome-extension://", "Chrome-Extension://")
SCHEMES = {
    "chrome-extension": TRACE,
    "chrome": CHROME_PAGE,
    "chrome, upper case": UPPER_CASE,
    "moz-extension": FIREFOX,
    "safari-web-extension": SAFARI,
    "safari-extension": SAFARI_LEGACY,
    "webkit-masked-url": SAFARI_MASKED,
}
#: TRACE reached through other library frames, and from another caller (the same crash site as the release
#: before read it: the extension's frame)
OTHER_LIBRARY = TRACE.replace("commitHookEffectListMount", "invokePassiveEffectMountInDEV")
OTHER_CALLER = TRACE.replace(f"at onMount ({CART}:40:3)", f"at refresh ({CART}:71:9)")
#: a builtin the extension's wrapper called raises (it logs each request's options, a circular body here)
CIRCULAR = "Converting circular structure to JSON"
BOTH = TRACE.replace(
    f"TypeError: {MESSAGE}\n", f"TypeError: {CIRCULAR}\n    at JSON.stringify (<anonymous>)\n"
)
BOTH_OTHER_LIBRARY = BOTH.replace("commitHookEffectListMount", "invokePassiveEffectMountInDEV")


def event(stacktrace: str) -> ErrorEvent:
    message = CIRCULAR if CIRCULAR in stacktrace else MESSAGE
    return builtin_event(stacktrace, service="shop-web", error_type="TypeError", message=message)


def _roles(text: str, rules: InAppRules | None = None) -> list[tuple[str | None, str, str]]:
    trace = parse_stacktrace(text)
    assert trace is not None
    roles = (rules or InAppRules()).roles(trace)
    return [
        (frame.filename, role.role, role.reason)
        for frame, role in zip(trace.exceptions[0].frames, roles.frames[0], strict=True)
    ]


@pytest.mark.parametrize("name", sorted(SCHEMES))
def test_a_frame_of_a_browser_extensions_url_is_a_librarys_with_its_own_reason(name: str) -> None:
    (extension, *rest) = _roles(SCHEMES[name])
    assert extension[1:] == ("library", EXTENSION)
    assert [role for _, role, _ in rest] == ["app", "app", "library"]


@pytest.mark.parametrize(
    "url",
    [
        "https://shop.example.com/chrome-extension/inject.js",
        "https://shop.example.com/assets/moz-extension.js",
        "webpack:///./src/chrome-extension/inject.js",
    ],
)
def test_a_url_that_only_names_an_extension_scheme_inside_it_is_the_apps(url: str) -> None:
    text = TRACE.replace("chrome-extension://gighmmpiobklfepjocnamgkkbiglidom/inject.js", url)
    assert _roles(text)[0][1:] == ("app", "application code")


def test_an_include_prefix_still_makes_an_extensions_frame_the_apps() -> None:
    """A team that builds the extension says so with `ROUNDS_IN_APP_INCLUDE`."""
    rules = InAppRules(include=("chrome-extension://gighmmpiobklfepjocnamgkkbiglidom/",))
    assert _roles(TRACE, rules)[0][1] == "app"
    assert _roles(OTHER_EXTENSION, rules)[0][1:] == ("library", EXTENSION)


def test_the_crash_site_is_the_apps_frame_that_called_the_extension() -> None:
    for text in (TRACE, OTHER_EXTENSION, FIREFOX, SAFARI, SAFARI_MASKED, BOTH):
        site = site_of_text(text)
        assert site is not None and site.crash_site == "assets/cart.js:loadCart"


def test_the_crash_site_is_the_apps_frame_an_extensions_wrapper_called() -> None:
    """An extension that wraps the app's event listeners is the outermost frame, or between the app's."""
    text = f"""TypeError: Cannot read properties of undefined (reading 'id')
    at renderTotal ({CART}:88:21)
    at listener (chrome-extension://gighmmpiobklfepjocnamgkkbiglidom/content.js:4:2231)
    at HTMLButtonElement.onCheckout ({CART}:80:9)
    at HTMLButtonElement.wrapped (moz-extension://4b2d5c1e-8f3a-4e2b-9c6d-1a2b3c4d5e6f/content.js:1:90)"""
    site = site_of_text(text)
    assert site is not None and site.crash_site == "assets/cart.js:renderTotal"
    only_extension = text.replace(f"at renderTotal ({CART}:88:21)\n    ", "")
    site = site_of_text(only_extension)
    assert site is not None and site.crash_site == "assets/cart.js:HTMLButtonElement.onCheckout"


def test_one_app_bug_through_any_extension_or_none_is_one_signature() -> None:
    engine = GroupingEngine()
    texts = (TRACE, OTHER_EXTENSION, NO_EXTENSION, FIREFOX, SAFARI, SAFARI_MASKED, UPPER_CASE)
    assert len({engine.assign(event(text)).signature_id for text in texts}) == 1


def test_why_grouped_says_an_extensions_frame_does_not_contribute() -> None:
    assignment = GroupingEngine().assign(event(TRACE))
    line = next(line for line in assignment.explanation.splitlines() if "inject.js" in line)
    assert line.lstrip().startswith("-") and EXTENSION in line


def test_each_release_that_read_a_trace_otherwise_gives_one_reading() -> None:
    """Newest first: the release before took extensions for the app's; the one before it builtins too."""
    readings = {}
    for name, text in {"extension": TRACE, "both": BOTH, "neither": NO_EXTENSION}.items():
        trace = parse_stacktrace(text)
        assert trace is not None
        readings[name] = readings_before(InAppRules().roles(trace))
    assert readings == {
        "extension": (frozenset({EXTENSION}),),
        "both": (frozenset({EXTENSION}), frozenset({BUILTIN, EXTENSION})),
        "neither": (),
    }


def test_an_extensions_test_file_was_read_as_test_code_before() -> None:
    text = TRACE.replace("inject.js", "inject.test.js")
    trace = parse_stacktrace(text)
    assert trace is not None
    before = InAppRules().roles(trace, without_rules=EVERY_ADDED_RULE)
    assert before.frames[0][0].role == "test"


#: what the release before (extensions the app's, builtins the runtime's) saved of TRACE and of BOTH, and what
#: the release before builtins were the runtime's saved of BOTH (worked out as `test_grouping_builtins` does):
#: its hashes (frames, site; all frames when they differ) and crash site, pinned
BEFORE_EXTENSIONS = {
    "TRACE": (
        [
            "952e6d297ad11bbf949490701b7ca378c6a502f36277f200ff5d43828b30d163",
            "5760421c43a43084f208496a1f21bca75c3435f66d3ae0c8f0f2fcfd5d27271e",
            "1889ac11adc3da9e58ff5cf5e0d59b5d550cdb220cc6ab345edf7f1fb755a053",
        ],
        "inject.js:window.fetch",
    ),
    "BOTH": (
        [
            "952e6d297ad11bbf949490701b7ca378c6a502f36277f200ff5d43828b30d163",
            "931fb81ad23c85a57732c74a2fd837f542a07384fbc8b8fa7d89e52bef70046a",
            "1889ac11adc3da9e58ff5cf5e0d59b5d550cdb220cc6ab345edf7f1fb755a053",
        ],
        "inject.js:window.fetch",
    ),
}
BEFORE_BUILTINS = (
    [
        "f5effff31e55e8ada80da29e8f7772b5c32be90820f36491f077cea36210c96a",
        "931fb81ad23c85a57732c74a2fd837f542a07384fbc8b8fa7d89e52bef70046a",
        "78bbae6e43ec3b8c3cceb63ba2610b35c07181cc3fd3ca3eaed63a61956fc80f",
    ],
    "?:JSON.stringify",
)


def _state(hashes: list[str], crash_site: str) -> SignatureState:
    return SignatureState(
        signature_id="sig_earlier", service="shop-web", seq=0, hashes=hashes, crash_site=crash_site
    )


@pytest.mark.parametrize(
    ("saved", "texts"),
    [
        (BEFORE_EXTENSIONS["TRACE"], (TRACE, OTHER_LIBRARY, OTHER_CALLER)),
        (BEFORE_EXTENSIONS["BOTH"], (BOTH, BOTH_OTHER_LIBRARY)),
        (BEFORE_BUILTINS, (BOTH, BOTH_OTHER_LIBRARY)),
    ],
    ids=["extensions the app's", "both, extensions the app's", "both, builtins and extensions the app's"],
)
def test_a_signature_made_when_extensions_were_the_apps_keeps_receiving_its_events(
    saved: tuple[list[str], str], texts: tuple[str, ...]
) -> None:
    assert_found_by_an_earlier_version(_state(*saved), [event(text) for text in texts])


def test_without_an_earlier_signature_the_variants_are_one_new_signature() -> None:
    assert_one_new_signature([event(text) for text in (TRACE, OTHER_LIBRARY, OTHER_CALLER)])


def test_the_earlier_readings_crash_sites_are_the_ones_those_releases_saved() -> None:
    trace = parse_stacktrace(BOTH)
    assert trace is not None
    rules = InAppRules()
    sites = [
        site_of(trace, rules.roles(trace, without_rules=lacked)).key
        for lacked in readings_before(rules.roles(trace))
    ]
    assert sites == [BEFORE_EXTENSIONS["BOTH"][1], BEFORE_BUILTINS[1]]


BUILTIN_TRACES = (BUILTIN_TRACE, BUILTIN_OTHER_LIBRARY, BUILTIN_OTHER_CALLER)


def _extension_frame(rng: random.Random) -> str:
    scheme = rng.choice(("chrome-extension", "moz-extension", "safari-web-extension", "Chrome-Extension"))
    extension = "".join(rng.choice("abcdefghijklmnop") for _ in range(32))
    return f"    at wrapped ({scheme}://{extension}/content.js:1:{rng.randint(1, 99_999)})"


def test_an_extensions_frame_anywhere_in_the_corpus_traces_changes_neither_app_frames_nor_site() -> None:
    """The labelled corpus's JavaScript traces (written by the OpenTelemetry SDK), each with extension frames
    put in at random places: the same app hash and crash site as without them."""
    rng = random.Random(31)
    reader = CandidateReader(InAppRules(), ShapeCache(), TemplateMiner())
    compared = 0
    for event in corpus_events():
        trace = parse_stacktrace(event.stacktrace)
        if trace is None or trace.runtime != "node":
            continue
        plain = reader.candidate(event, None)
        assert plain.fingerprint.variant == "app"
        lines = (event.stacktrace or "").split("\n")
        frames = [index for index, line in enumerate(lines) if line.lstrip().startswith("at ")]
        for _ in range(5):
            at = rng.choice([*frames, frames[-1] + 1])
            text = "\n".join([*lines[:at], _extension_frame(rng), *lines[at:]])
            wrapped = reader.candidate(event.model_copy(update={"stacktrace": text}), None)
            assert (wrapped.fingerprint.hash, wrapped.site_key) == (plain.fingerprint.hash, plain.site_key)
            compared += 1
    assert compared >= 50


def test_without_an_extensions_frame_every_earlier_reading_is_the_one_builtins_gave() -> None:
    """On every corpus trace and the builtins' and browsers' tests' traces (no extension frame), the earlier
    readings are what they were before extensions were known: one, builtins taken for the app's, when the
    trace has a builtin, else none."""
    rules = InAppRules()
    texts = [event.stacktrace for event in corpus_events()]
    texts += [*BUILTIN_TRACES, *ONE_BUG, OTHER_BUG, NO_EXTENSION]
    builtins = 0
    for text in texts:
        trace = parse_stacktrace(text)
        if trace is None:
            continue
        roles = rules.roles(trace)
        builtin = any(role.reason == BUILTIN for exception in roles.frames for role in exception)
        builtins += builtin
        assert readings_before(roles) == ((frozenset({BUILTIN}),) if builtin else ())
        assert rules.roles(trace, without_rules=EVERY_ADDED_RULE) == rules.roles(
            trace, without_rules=frozenset({BUILTIN})
        )
    assert builtins == len(BUILTIN_TRACES)
