"""Next.js's server frames. Its dev server (`next dev`) bundles each module with webpack's `eval` source maps,
so V8 prints an app frame's location as `webpack-internal:///(<layer>)/./<path>`, the layer being the bundle
the module was built into (Next.js's `WEBPACK_LAYERS_NAMES`: `rsc`, `ssr`, `app-pages-browser`, `middleware`,
`instrument`, `action-browser` ...): such a frame is read, by its path without that prefix, so one module is
one module whichever layer ran it and in a build with source maps. A build's webpack runtime
(`.next/server/webpack-runtime.js`), its chunks of installed packages
(`.next/server/vendor-chunks/<package>.js`) and Next.js itself (`next/dist/...`) are the framework's; a
page's compiled module (`.next/server/app/.../page.js`) and a numbered chunk (`.next/server/chunks/<id>.js`,
which holds any module two routes share, the app's own included; Turbopack's `.next/server/chunks/ssr/...`
holds all of the app's code) are the app's. Signatures made before keep receiving their events."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from test_grouping_builtins import assert_found_by_an_earlier_version, assert_one_new_signature

from rounds_bot.grouping.engine import GroupingEngine, SignatureState
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.stacktrace import Frame, parse_stacktrace
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)
MESSAGE = "order 17 not found"
_RENDER = (
    "at async renderToHTMLOrFlightImpl (/app/node_modules/next/dist/server/app-render/app-render.js:1133:24)"
)
#: Next.js 14's dev server: an App Router page's server component (the `rsc` layer) awaits a data function
RSC_DEV = f"""Error: {MESSAGE}
    at getOrder (webpack-internal:///(rsc)/./src/lib/orders.ts:12:11)
    at async OrderPage (webpack-internal:///(rsc)/./src/app/orders/[id]/page.tsx:14:19)
    at async Promise.all (index 0)
    {_RENDER}"""
#: the same modules run in the server-side rendering layer
SSR_DEV = RSC_DEV.replace("(rsc)", "(ssr)")
#: the same bug in a build run with source maps (`node --enable-source-maps`): the sources' own paths
PROD_SOURCE_MAPPED = f"""Error: {MESSAGE}
    at getOrder (/app/src/lib/orders.ts:12:11)
    at async OrderPage (/app/src/app/orders/[id]/page.tsx:14:19)
    at async Promise.all (index 0)
    {_RENDER}"""
#: another bug behind the same message and framework frames: the profile page's
OTHER_DEV = f"""Error: {MESSAGE}
    at getProfile (webpack-internal:///(rsc)/./src/lib/profiles.ts:30:9)
    at async ProfilePage (webpack-internal:///(rsc)/./src/app/profile/page.tsx:8:17)
    at async Promise.all (index 0)
    {_RENDER}"""
#: `next build` then `next start`: the data function in a server chunk named by its id, the page's module,
#: Next.js's compiled server and webpack's runtime
PROD_BUILD_1 = f"""Error: {MESSAGE}
    at getOrder (/app/.next/server/chunks/742.js:1:2345)
    at async OrderPage (/app/.next/server/app/orders/[id]/page.js:1:3456)
    at async Promise.all (index 0)
    at async /app/node_modules/next/dist/compiled/next-server/app-page.runtime.prod.js:16:4123
    at Object.__webpack_require__ (/app/.next/server/webpack-runtime.js:33:42)"""
#: another page's bug in the first build
OTHER_PROD = (
    PROD_BUILD_1.replace("getOrder", "getProfile")
    .replace("OrderPage", "ProfilePage")
    .replace("app/orders/[id]/page.js", "app/profile/page.js")
)
#: Firefox's stack of a client component's bug in the dev server (the `app-pages-browser` layer), and Chrome's
FIREFOX_DEV = """addToCart@webpack-internal:///(app-pages-browser)/./components/CartButton.tsx:14:11
onClick@webpack-internal:///(app-pages-browser)/./components/CartButton.tsx:22:7
callCallback@webpack-internal:///(app-pages-browser)/./node_modules/next/dist/compiled/react-dom/cjs/react-dom.development.js:20461:14"""
CHROME_DEV = f"""TypeError: {MESSAGE}
    at addToCart (webpack-internal:///(app-pages-browser)/./components/CartButton.tsx:14:11)
    at onClick (webpack-internal:///(app-pages-browser)/./components/CartButton.tsx:22:7)
    at callCallback (webpack-internal:///(app-pages-browser)/./node_modules/next/dist/compiled/react-dom/cjs/react-dom.development.js:20461:14)"""
#: what the release before this reading saved of RSC_DEV (no webpack-internal frame read) and of PROD_BUILD_1
#: (Next.js's runtime the app's): its hashes and crash site, pinned
BEFORE = {
    "dev": (["0702e344f69b729d020d7dbc188926a0634f5575d743764e56b681ccb074b501"], None),
    "build": (
        [
            "d2e47edb269bdf99fd070ed0d94a94833122e79793b1a4279fe91be7fb1d1b2d",
            "4a29c4a0d10a716cdb134a0164950fd2fd617834156897f86b1e8d92e1be5a64",
            "2802556b134ec22d7e77e1aa6d31cab04ad557788bee705b2c70caffdf119b5b",
        ],
        ".next/server/chunks/742.js:getOrder",
    ),
    # FIREFOX_DEV's frames read with the layer in their files
    "firefox": (
        [
            "83720ca28014e0ca7c010e237112d8bc6a45251bab857ac3a87cb6ea2463dd90",
            "e711e48d7e923bd35c366d54f1477c62f7bdf009ccbb1b3226739032f192f8cf",
            "96d0ea056736819b97bdd20c68b4bd9746ab73ddbf4e8748fe4c06f4c21c16d3",
        ],
        "(app-pages-browser)/components/cartbutton.tsx:addToCart",
    ),
}


def event(stacktrace: str) -> ErrorEvent:
    return ErrorEvent(
        event_id="e",
        timestamp=T0,
        service="shop-web",
        error_type="TypeError" if stacktrace in (FIREFOX_DEV, CHROME_DEV) else "Error",
        message=MESSAGE,
        stacktrace=stacktrace,
    )


def _frames(text: str) -> tuple[Frame, ...]:
    trace = parse_stacktrace(text)
    assert trace is not None
    return trace.exceptions[0].frames


@pytest.mark.parametrize(
    "layer", ["rsc", "ssr", "app-pages-browser", "middleware", "instrument", "action-browser"]
)
def test_a_dev_servers_frame_is_read_by_its_modules_path_whatever_its_layer(layer: str) -> None:
    text = f"""Error: {MESSAGE}
    at getOrder (webpack-internal:///({layer})/./src/lib/orders.ts:12:11)
    at eval (webpack-internal:///({layer})/./src/lib/db.ts:5:9)
    at webpack-internal:///({layer})/./src/app/page.tsx:7:3"""
    read = [(frame.function, frame.filename, frame.lineno) for frame in _frames(text)]
    assert read == [
        ("getOrder", "src/lib/orders.ts", 12),
        ("eval", "src/lib/db.ts", 5),
        (None, "src/app/page.tsx", 7),
    ]


@pytest.mark.parametrize(
    ("line", "read"),
    [
        (
            "at CartPage (webpack-internal:///(rsc)/./src/app/(shop)/cart/page.tsx:5:3)",
            ("CartPage", "src/app/(shop)/cart/page.tsx", 5),
        ),
        (
            "at CartPage (/app/src/app/(shop)/cart/page.tsx:5:3)",
            ("CartPage", "/app/src/app/(shop)/cart/page.tsx", 5),
        ),
        (
            "at async /app/.next/server/app/(shop)/cart/page.js:1:2",
            (None, "/app/.next/server/app/(shop)/cart/page.js", 1),
        ),
    ],
)
def test_a_frame_in_a_route_group_is_read(line: str, read: tuple[str | None, str, int]) -> None:
    """Next.js's route groups name a directory in parentheses, in the sources and in a build's output."""
    (frame,) = _frames(f"Error: {MESSAGE}\n    {line}")
    assert (frame.function, frame.filename, frame.lineno) == read


@pytest.mark.parametrize("environment", ["Server", "Prerender", "Cache"])
def test_a_replayed_server_frame_is_read_without_reacts_environment_prefix(environment: str) -> None:
    """Next.js strips any `rsc://React/<environment>/` (`webpack-module-path.ts`)."""
    line = f"getOrder@rsc://React/{environment}/webpack-internal:///(rsc)/./src/lib/orders.ts:12:11"
    read = [(frame.function, frame.filename, frame.lineno) for frame in _frames(line)]
    assert read == [("getOrder", "src/lib/orders.ts", 12)]


def test_a_browsers_frame_of_a_layer_is_read_as_v8s() -> None:
    firefox = "getOrder@webpack-internal:///(app-pages-browser)/./src/lib/orders.ts:12:11"
    chrome = f"Error: {MESSAGE}\n    at getOrder (webpack-internal:///(app-pages-browser)/./src/lib/orders.ts:12:11)"
    read = [(frame.function, frame.filename, frame.lineno) for frame in (*_frames(firefox), *_frames(chrome))]
    assert read == [("getOrder", "src/lib/orders.ts", 12)] * 2


@pytest.mark.parametrize(
    ("path", "role"),
    [
        ("/app/.next/server/webpack-runtime.js", "library"),
        ("/app/.next/server/webpack-api-runtime.js", "library"),
        ("/app/.next/server/edge-runtime-webpack.js", "library"),
        ("/app/.next/server/chunks/742.js", "app"),
        ("/app/.next/server/chunks/ssr/[root-of-the-server]__206e7846._.js", "app"),
        ("/app/.next/server/vendor-chunks/next.js", "library"),
        ("/app/node_modules/next/dist/compiled/next-server/app-page.runtime.prod.js", "library"),
        ("next/dist/server/app-render/app-render.js", "library"),
        ("/app/.next/server/app/orders/[id]/page.js", "app"),
        ("/app/src/lib/orders.ts", "app"),
    ],
)
def test_nextjss_own_files_are_the_frameworks_and_a_pages_module_the_apps(path: str, role: str) -> None:
    trace = parse_stacktrace(f"Error: {MESSAGE}\n    at handle ({path}:1:2)")
    assert trace is not None
    assert InAppRules().roles(trace).frames[0][0].role == role


def test_two_bugs_behind_one_message_and_nextjss_frames_are_two_problems() -> None:
    for one, other in ((RSC_DEV, OTHER_DEV), (PROD_BUILD_1, OTHER_PROD)):
        placed = GroupingEngine().assign_all([event(one), event(other)])
        assert placed[0].signature_id != placed[1].signature_id


@pytest.mark.parametrize(
    "texts",
    [(RSC_DEV, SSR_DEV, PROD_SOURCE_MAPPED), (FIREFOX_DEV, CHROME_DEV)],
    ids=["dev server's layers and a source-mapped build", "Firefox and Chrome"],
)
def test_one_bug_in_two_layers_or_two_builds_is_one_problem(texts: tuple[str, ...]) -> None:
    assert_one_new_signature([event(text) for text in texts])


def test_two_bugs_in_two_numbered_chunks_under_one_page_are_two_problems() -> None:
    """webpack's server build splits any module two routes share into `chunks/<id>.js` (Next.js's
    `webpack-config.ts`: `splitChunks` with `minChunks: 2` and no `node_modules` test), the app's own too."""
    other = PROD_BUILD_1.replace(
        "getOrder (/app/.next/server/chunks/742.js:1:2345)",
        "loadInventory (/app/.next/server/chunks/315.js:1:877)",
    )
    placed = GroupingEngine().assign_all([event(PROD_BUILD_1), event(other)])
    assert placed[0].signature_id != placed[1].signature_id


def test_two_bugs_in_turbopacks_server_chunks_are_two_problems_with_a_crash_site() -> None:
    """Turbopack puts the app's code in `.next/server/chunks/ssr/` (`[root-of-the-server]__<hash>._.js`)."""
    chunk = "/app/.next/server/chunks/ssr/[root-of-the-server]__9a8b7c._.js"
    one = f"""Error: {MESSAGE}
    at getOrder ({chunk}:1:2345)
    at async OrderPage ({chunk}:1:3456)
    at async /app/node_modules/next/dist/compiled/next-server/app-page-turbo.runtime.prod.js:16:4123"""
    other = one.replace("getOrder", "getProfile").replace("OrderPage", "ProfilePage")
    engine = GroupingEngine()
    placed = engine.assign_all([event(one), event(other)])
    assert placed[0].signature_id != placed[1].signature_id
    site = engine.state(placed[0].signature_id).crash_site
    assert site is not None and site.endswith(":getOrder")


def test_the_crash_site_of_a_build_is_the_apps_innermost_frame_in_its_chunk() -> None:
    engine = GroupingEngine()
    state = engine.state(engine.assign(event(PROD_BUILD_1)).signature_id)
    assert state.crash_site == ".next/server/chunks/742.js:getOrder"


@pytest.mark.parametrize(
    ("saved", "texts"),
    [
        (BEFORE["dev"], (RSC_DEV, SSR_DEV)),
        (BEFORE["build"], (PROD_BUILD_1,)),
        (BEFORE["firefox"], (FIREFOX_DEV,)),
    ],
    ids=["dev server", "build", "Firefox"],
)
def test_a_signature_made_before_nextjss_frames_were_read_so_keeps_receiving_its_events(
    saved: tuple[list[str], str | None], texts: tuple[str, ...]
) -> None:
    hashes, crash_site = saved
    state = SignatureState(
        signature_id="sig_earlier", service="shop-web", seq=0, hashes=hashes, crash_site=crash_site
    )
    assert_found_by_an_earlier_version(state, [event(text) for text in texts])
