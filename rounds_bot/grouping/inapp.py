"""Which frames are the application's own code ("in-app"), and which belong to someone else.

Order of decision, first answer wins:
1. the frame says so itself (a runtime marker the parser read);
2. a configured include prefix (module or path) makes it in-app;
3. a configured exclude prefix makes it not in-app;
4. installed-package locations (site-packages, node_modules, vendor, go/pkg/mod, gems ...),
   the runtime's standard library, frameworks, test runners and telemetry SDKs are not in-app;
5. everything else is in-app.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rounds_bot.grouping.stacktrace import Frame, Runtime

# Path fragments of code that was installed, not written here.
_LIBRARY_PATHS = (
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
)

# Module prefixes of runtimes, frameworks, test runners and telemetry SDKs, per runtime.
# fmt: off
_LIBRARY_MODULES: dict[str, tuple[str, ...]] = {
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
    "node": (),
    "ruby": (),
    "go": (),
}
# fmt: on
_NODE_INTERNAL_FILES = ("internal/", "events.js", "timers.js", "_stream_", "net.js")
# Standard-library packages of Go (first path element); user code lives under a module path.
# fmt: off
_GO_STDLIB = frozenset((
    "archive", "bufio", "bytes", "cmp", "compress", "container", "context", "crypto", "database",
    "debug", "embed", "encoding", "errors", "expvar", "flag", "fmt", "go", "hash", "html", "image",
    "index", "internal", "io", "iter", "log", "maps", "math", "mime", "net", "os", "path",
    "plugin", "reflect", "regexp", "runtime", "slices", "sort", "strconv", "strings", "sync",
    "syscall", "testing", "text", "time", "unicode", "unique", "unsafe", "weak",
))
# fmt: on


_MEMO_LIMIT = 50_000


@dataclass(frozen=True)
class InAppRules:
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    _memo: dict[tuple[Runtime, str | None, str | None], tuple[bool, str]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def decide(self, frame: Frame, runtime: Runtime) -> tuple[bool, str]:
        """Whether a frame is in-app, and the reason in a few words."""
        if frame.in_app is not None:
            return frame.in_app, "marked by the runtime"
        key = (runtime, frame.module, frame.filename)
        decision = self._memo.get(key)
        if decision is None:
            if len(self._memo) >= _MEMO_LIMIT:
                self._memo.clear()
            decision = self._memo[key] = self._decide(frame.module or "", frame.filename or "", runtime)
        return decision

    def _decide(self, module: str, filename: str, runtime: Runtime) -> tuple[bool, str]:
        path = filename.replace("\\", "/")
        for prefix in self.include:
            if _matches(prefix, module, path):
                return True, f"in-app prefix {prefix!r}"
        for prefix in self.exclude:
            if _matches(prefix, module, path):
                return False, f"excluded prefix {prefix!r}"
        for marker in _LIBRARY_PATHS:
            if marker in path:
                return False, f"installed code ({marker.strip('/')})"
        if module.startswith(_LIBRARY_MODULES.get(runtime, ())):
            return False, "runtime, framework or SDK code"
        if runtime == "go" and module.split("/", 1)[0] in _GO_STDLIB:
            return False, "Go standard library"
        if runtime == "node" and path.startswith(_NODE_INTERNAL_FILES):
            return False, "Node.js internals"
        return True, "application code"


def _matches(prefix: str, module: str, path: str) -> bool:
    if module.startswith(prefix) or path.startswith(prefix):
        return True
    return "/" in prefix and ("/" + prefix.lstrip("/")) in path
