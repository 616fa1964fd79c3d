"""Where each runtime's libraries live: installed-package paths, the standard libraries, frameworks, test
runners and telemetry SDKs by module prefix, and the runtimes' own sources (`inapp` step 4)."""

from __future__ import annotations

import re

# Path fragments of code that was installed, not written here.
LIBRARY_PATHS = (
    "site-packages/",
    "dist-packages/",
    "node_modules/",
    "/vendor/",
    "vendor/bundle/",
    "/pkg/mod/",
    "/gems/",
    "/bundle/ruby/",
    "/lib/ruby/",
    "/lib/python",
    "<frozen ",
    "node:",
    "webpack/bootstrap",
    "/_opam/",
    "/.opam/",
    "/usr/local/go/src/",
    "/usr/lib/go",
    "/go/src/runtime/",
    "/rustc/",
    "/.cargo/registry/",
    "/.cargo/git/",
)

#: per runtime, a pattern of its standard library's and installed modules' directories, in paths written
#: with `/` as the in-app rules read them. Perl's core and CPAN modules (perlvar `@INC`): Debian's
#: `/usr/share/perl/`, `/usr/share/perl5/`, `/usr/local/share/perl/` and the architecture's
#: `/usr/lib/<triplet>/perl` and `/usr/local/lib/<triplet>/perl`;
#: Red Hat's `site_perl`/`vendor_perl`; macOS's `/System/Library/Perl/`;
#: Strawberry Perl's `Strawberry/perl/`; local::lib's `perl5/` as a whole directory. PowerShell's own and
#: installed modules (about_PSModulePath: `$PSHOME` under `Program Files/PowerShell/` or
#: `/opt/microsoft/powershell/`, Windows PowerShell's `System32/WindowsPowerShell/v1.0/`, the user's and all
#: users' `WindowsPowerShell/Modules`, `.local/share/powershell/Modules`,
#: `/usr/local/share/powershell/Modules`), Windows paths in any case.
#: Julia's Base as its stack traces print it, relative to its source (`./array.jl`, base/errorshow.jl; the
#: REPL's input, `./REPL[1]`, is the app's), the standard library and installed packages under `share/julia/`
#: and a depot's `.julia/packages/`, or any depot's (`JULIA_DEPOT_PATH=/opt/julia`) `packages/<Name>/<slug>/`,
#: its slug of 4 or 5 characters (Pkg's depot layout, `DEPOT_PATH`, `Base.version_slug`); a package being
#: developed, under `dev/`, is the app's. Lua's modules on its default paths (luaconf.h's `LUA_PATH_DEFAULT`:
#: `/usr/local/share/lua/5.x/`, `/usr/local/lib/lua/5.x/`), Debian's `/usr/share/lua/` and
#: `/usr/lib/<triplet>/lua/`, any prefix's `share/lua/5.x/` and `lib/lua/5.x/` (Homebrew's
#: `/opt/homebrew/share/lua/`, a LuaRocks tree's), LuaRocks' trees (`lua_modules/`, `.luarocks/`), OpenResty's
#: bundled and site libraries (`/usr/local/openresty/lualib/`, `.../site/lualib/`, its LuaJIT's); and a path
#: Lua shortened to its last 60 characters (lobject.c's `luaO_chunkid`, LUA_IDSIZE:
#: `...rocks/share/lua/5.1/lapis/db.lua`) when what is left names one of those directories
RUNTIME_LIBRARY_PATHS: dict[str, re.Pattern[str]] = {
    "perl": re.compile(
        r"/usr/(?:local/)?share/perl5?/|/usr/(?:local/)?lib/[\w.-]{1,64}-linux-gnu/perl|(?:^|/)perl5/"
        r"|(?:site|vendor)_perl/|/System/Library/Perl/|Strawberry/perl/",
        re.IGNORECASE,
    ),
    "powershell": re.compile(
        r"/Program Files/PowerShell/|/opt/microsoft/powershell/|/WindowsPowerShell/(?:v1\.0/|Modules/)"
        r"|/\.local/share/powershell/Modules/|/usr/local/share/powershell/Modules/|/PowerShell/Modules/",
        re.IGNORECASE,
    ),
    "julia": re.compile(
        r"^\./(?!REPL\[)|/share/julia/|(?:^|/)\.julia/packages/|/packages/[A-Za-z_]\w*/\w{4,5}/"
    ),
    "lua": re.compile(
        r"/usr/(?:local/)?(?:share|lib)/lua/|/usr/lib/[\w.-]{1,64}-linux-gnu/lua/|(?:^|/)lua_modules/"
        r"|/\.luarocks/|/openresty/(?:site/)?(?:lualib|luajit)/|(?:^|/)(?:share|lib)/lua/5\.\d/"
        r"|^\.\.\.\S{0,2048}?(?:lua/5\.\d/|lualib/|lua_modules/|\.luarocks/|luarocks/)"
    ),
}


def runtime_library_marker(path: str, runtime: str) -> str | None:
    """The directory of the runtime's own or installed modules the path is in (`RUNTIME_LIBRARY_PATHS`)."""
    pattern = RUNTIME_LIBRARY_PATHS.get(runtime)
    found = None if pattern is None else pattern.search(path)
    return None if found is None else found[0]


# Module prefixes of runtimes, frameworks, test runners and telemetry SDKs, per runtime.
# fmt: off
LIBRARY_MODULES: dict[str, tuple[str, ...]] = {
    "java": (
        "java.", "javax.", "jakarta.", "jdk.", "sun.", "com.sun.", "kotlin.", "kotlinx.", "scala.",
        "groovy.", "org.codehaus.groovy.", "junit.", "org.junit.", "org.testng.",
        "org.apache.tools.ant.", "org.apache.maven.", "org.gradle.", "org.springframework.",
        "io.netty.", "reactor.", "io.reactivex.", "org.eclipse.jetty.", "org.apache.catalina.",
        "org.apache.coyote.", "org.apache.tomcat.", "io.undertow.", "org.hibernate.",
        "io.opentelemetry.", "io.micrometer.", "net.bytebuddy.", "org.aspectj.", "io.sentry.",
        "worker.org.gradle.", "org.mockito.", "org.hamcrest.",
    ),
    "dotnet": (
        "System.", "Microsoft.", "Npgsql.", "Newtonsoft.", "OpenTelemetry.", "Xunit.", "NUnit.",
    ),
    "python": (
        "opentelemetry", "sentry_sdk", "ddtrace", "newrelic", "pytest", "_pytest", "pluggy",
        "unittest", "importlib", "runpy", "asyncio", "concurrent", "threading", "logging",
    ),
    "ocaml": (
        "Stdlib", "Base.", "Core.", "Core_kernel.", "Lwt", "Async_kernel", "Caml",
        "CamlinternalFormat",
    ),
    "rust": (
        "std::", "core::", "alloc::", "tokio::", "futures::", "futures_util::", "futures_core::",
        "hyper::", "axum::", "tower::", "actix_web::", "actix_rt::", "actix_server::", "rocket::",
        "warp::", "tracing::", "anyhow::", "backtrace::", "rayon::", "rayon_core::",
    ),
    "php": (
        "Symfony.", "Illuminate.", "Laravel.", "Doctrine.", "GuzzleHttp.", "Monolog.", "Psr.", "Laminas.",
        "OpenTelemetry.", "PHPUnit.", "Composer.", "Twig.", "Predis.", "Carbon.", "React.", "Slim.",
        "Sentry.", "Pest.",
    ),
    # GHC's own packages (`base`, `ghc-internal` since 9.10, `ghc-prim`, `ghc-bignum`), as a call stack names
    # a frame's unit (GHC.Stack's `prettyCallStack`, `PACKAGE:MODULE`)
    # and, for a unit Stack built, whose id does not tell a snapshot's package from the project's, GHC's boot
    # packages (GHC's user guide, "Packages": those its installation holds) and the most used of Hackage's
    # that check their arguments with `HasCallStack`
    "haskell": (
        "base:", "ghc-internal:", "ghc-prim:", "ghc-bignum:", "ghc:", "array:", "bytestring:", "containers:",
        "deepseq:", "directory:", "exceptions:", "filepath:", "mtl:", "parsec:", "process:", "stm:",
        "template-haskell:", "text:", "time:", "transformers:", "unix:", "binary:", "vector:",
        "vector-algorithms:", "primitive:", "unordered-containers:", "hashable:", "aeson:", "scientific:",
        "attoparsec:", "megaparsec:", "random:", "massiv:", "lens:", "microlens:", "async:", "unliftio:",
        "resourcet:", "conduit:", "http-client:", "warp:", "wai:", "servant-server:", "persistent:",
        "postgresql-simple:", "yaml:",
    ),
    "node": (),
    "ruby": (),
    "go": (),
}
# fmt: on
#: Android's code on the JVM: the platform's (`android.`, `dalvik.`, `libcore.`, its core library's internals,
#: and the platform's own packages under `com.android.`: `internal.`, the bundled OkHttp and Conscrypt),
#: Jetpack's (`androidx.`) and Google's libraries for Android (Material Components, Play services). Sentry's
#: Android SDK excludes `android.`, `com.android.`, `androidx.`, `kotlin.` and `dalvik.` from the app's
#: (`AndroidOptionsInitializer.setDefaultInApp`), after including the app's own package: rounds knows no
#: app's package, so it names the platform's packages under `com.android.` and `com.google.android.` alone,
#: and an AOSP app (`com.android.settings`) or one of Google's (`com.google.android.apps.maps`) stays the
#: app's. `java.`, `kotlin.` and `kotlinx.` are the runtime's above.
ANDROID_MODULES = (
    "android.",
    "androidx.",
    "dalvik.",
    "libcore.",
    "com.android.internal.",
    "com.android.okhttp.",
    "com.android.org.conscrypt.",
    "com.google.android.material.",
    "com.google.android.gms.",
)
NODE_INTERNAL_FILES = ("internal/", "events.js", "timers.js", "_stream_", "net.js")
#: Next.js's own code in a build's server output (`next build`'s `.next/server/`, a frame's path): webpack's
#: runtime (its constants' `DEFAULT_RUNTIME_WEBPACK`, `webpack-runtime.js`, the API routes'
#: `webpack-api-runtime.js` and `EDGE_RUNTIME_WEBPACK`, `edge-runtime-webpack.js`) and the chunks it splits
#: the installed packages into (`vendor-chunks/<package>.js`, whose modules are `node_modules`'); and
#: Next.js's package named from its own folder, `next/dist/...` (as its dev server's ignore-listed frames name
#: it). A numbered chunk (`chunks/742.js`) is no such file: the server build's `splitChunks`
#: (`webpack-config.ts`: `chunks: 'all'`, `minChunks: 2`, no `node_modules` test) puts there any module two
#: routes share, the app's own included, and Turbopack puts all of the app's code in `chunks/ssr/` (a hashed
#: name that says no package's). So a numbered chunk, like a page's own module
#: (`.next/server/app/.../page.js`), is the app's.
NEXTJS_FILES = re.compile(
    r"(?:^|/)\.next/server/(?:(?:webpack-runtime|webpack-api-runtime|edge-runtime-webpack)\.js$|vendor-chunks/)"
    r"|^next/dist/"
)
#: Flutter's framework and the packages that ship with it, and the test runner's packages
DART_PACKAGES = (
    "flutter",
    "flutter_test",
    "flutter_driver",
    "flutter_localizations",
    "flutter_web_plugins",
    "integration_test",
    "test",
    "test_api",
    "test_core",
    "matcher",
    "stack_trace",
)
#: Dart's core libraries (`dart:async/zone.dart`; `org-dartlang-sdk:` and the web compiler's `dart-sdk/lib/`
#: where a compiler names the SDK's sources) and those packages, as the VM names them (`package:flutter/`)
#: and as the web compiler does (`packages/flutter/`)
DART_LIBRARIES = (
    "dart:",
    "org-dartlang-sdk:",
    "dart-sdk/lib/",
    *(f"package:{name}/" for name in DART_PACKAGES),
    *(f"packages/{name}/" for name in DART_PACKAGES),
)
# Standard-library packages of Go (first path element); user code lives under a module path.
# fmt: off
GO_STDLIB = frozenset((
    "archive", "bufio", "bytes", "cmp", "compress", "container", "context", "crypto", "database",
    "debug", "embed", "encoding", "errors", "expvar", "flag", "fmt", "go", "hash", "html", "image",
    "index", "internal", "io", "iter", "log", "maps", "math", "mime", "net", "os", "path",
    "plugin", "reflect", "regexp", "runtime", "slices", "sort", "strconv", "strings", "sync",
    "syscall", "testing", "text", "time", "unicode", "unique", "unsafe", "weak",
))
# fmt: on
