"""Whose code each frame is: the application's ("app"), its tests ("test"), or someone else's ("library").

Per frame, first answer wins:
1. the frame says so itself (a runtime marker the parser read);
2. a configured include prefix (module or path) makes it the app's;
3. a configured exclude prefix makes it a library's;
4. installed-package locations (site-packages, node_modules, vendor, go/pkg/mod, gems ...; a Go module's
   `module@version/` path, as a `-trimpath` build names it),
   the runtime's standard library, frameworks, test runners and telemetry SDKs are libraries,
   and so is Android's code: its platform's, Jetpack's and Google's Android libraries' packages on the JVM
   (`android.`, `androidx.`, `com.android.`, `dalvik.` ...), and in a native crash the system's images (a
   tombstone's `/system/`, `/apex/`, `/vendor/` ... paths; `libart.so`, `libhwui.so` by name) and the
   kernel's vDSO, while the app's own libraries (`/data/app/.../base.apk!libshop.so`) are the app's,
   and ART's JIT code cache (`/memfd:jit-cache`, `[anon:dalvik-jit-code-cache]`), code the runtime compiled,
   and Next.js's own files in a build (its webpack runtime `.next/server/webpack-runtime.js`, its chunks
   of installed packages `.next/server/vendor-chunks/`, and `next/dist/`; a page's `.next/server/app/`
   module and a numbered chunk `.next/server/chunks/<id>.js`, which holds any module two routes share, are
   the app's; a tombstone's JIT-compiled Java method is whose its package says, as a JVM frame),
   and so is a frame with neither file nor module: the runtime's own builtin (Node's
   `at Array.map (<anonymous>)`), which no one's checkout holds, and a frame of a browser
   extension (its URL's scheme says so: `chrome-extension://`, `moz-extension://` ...), code the
   user installed in their browser, which wraps the app's handlers and calls into it;
5. test code, by the naming conventions the runtimes' test runners use to find tests
   (`*Test.java`, `test_*.py`, `*.spec.ts`, `*_test.go`, `*_spec.rb` ...), is the app's tests;
6. everything else is application code, except on the JVM and .NET (below).

On the JVM and .NET an unknown package is not taken for the app's own: package names start with
their owner (Java's reverse domain name, `com.acme`; .NET's company name, `Acme`). The app is the
code its runtime, framework or test runner calls into, so the *entry* of a trace (its outermost
frame that is not a library's) names the app's owner, and a package of another owner found on
the way (`org.postgresql`, `com.zaxxer.hikari` called by `com.acme`) is a library the app uses.
A trace cut before its entry (by a logging library's depth limit, say: its outermost frame is
neither a runtime's, framework's or test runner's nor a program's entry function) does not show
who calls into the app, so the rule is not applied to it.
The rule is read from each trace alone: the same trace always gets the same answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from rounds_bot.grouping.browser_extensions import is_browser_extension
from rounds_bot.grouping.library_paths import (
    ANDROID_MODULES,
    DART_LIBRARIES,
    GO_STDLIB,
    LIBRARY_MODULES,
    LIBRARY_PATHS,
    NEXTJS_FILES,
    NODE_INTERNAL_FILES,
    runtime_library_marker,
)
from rounds_bot.grouping.memo import shared_dict
from rounds_bot.grouping.native_libraries import (
    NATIVE_TEST_FILES,
    is_android_jit,
    is_android_library,
    is_android_system_image,
    is_native_library,
)
from rounds_bot.grouping.stacktrace import Frame, ParsedTrace, Runtime

Role = Literal["app", "test", "library"]

# How each runtime's test runners recognise test code (their default discovery patterns): a
# failing check in a test is where the failure was *noticed*, and a test is a caller, like the
# runner that started it.
_CLASS_TEST_NAME = re.compile(r"^(?:Test\w*|\w*Tests?|\w*TestCase)$")  # Maven Surefire, .NET
_TEST_FILES: dict[str, re.Pattern[str]] = {
    "python": re.compile(r"(?:^|/)(?:test_[^/]*|[^/]*_test|conftest)\.py$"),  # pytest
    "node": re.compile(r"(?:^|/)__tests__/|\.(?:test|spec)\.[cm]?[jt]sx?$"),  # Jest, Mocha, Vitest
    "go": re.compile(r"_test\.go$"),  # go test
    "ruby": re.compile(r"(?:^|/)spec/|_spec\.rb$|(?:^|/)test_[^/]*\.rb$|_test\.rb$"),  # RSpec, Minitest
    "rust": re.compile(r"(?:^|/)tests/[^/]*\.rs$"),  # cargo test's integration tests
    "php": re.compile(r"(?:^|/)tests?/.*\.php$|Test\.php$"),  # PHPUnit, Pest
    "elixir": re.compile(r"(?:^|/)test/.*\.exs$|_test\.exs$"),  # ExUnit
    "native": NATIVE_TEST_FILES,  # GoogleTest, Catch2, XCTest
    "dart": re.compile(r"_test\.dart$"),  # package:test, flutter_test
}
#: how many leading package components name a package's owner, where names follow that convention
_OWNER_COMPONENTS: dict[str, int] = {"java": 2, "dotnet": 1, "php": 1}

_MEMO_LIMIT = 50_000
#: traces' roles kept before that memo is cleared
_TRACE_MEMO_LIMIT = 4096
_APPLICATION = "application code"
_BUILTIN = "the runtime's builtin (no file, no module)"
#: the reason a browser extension's frame is a library's (`extension_errors` reads it)
EXTENSION = "a browser extension's code"
#: the reason a frame of a Go module the app depends on is a library's, by the `module@version` its path has
#: when built with `-trimpath` (`go.opentelemetry.io/otel/sdk@v1.24.0/trace/span.go`); without it, the
#: module cache's `/pkg/mod/` says so
GO_MODULE = "a Go module's code (its path names module@version)"
_GO_MODULE_VERSION = re.compile(r"@v\d+\.\d+\.\d+[^/]*/")
#: the reason Android's code is a library's (`library_paths.ANDROID_MODULES`, `native_libraries`)
ANDROID = (
    "Android's code (its platform, Jetpack, Google's Android libraries, the system's images) or the kernel's"
)
_NATIVE_SYSTEM = "the system's libraries, the C and C++ runtimes or a sanitizer's"
#: the reason a native frame of ART's JIT code cache is a library's (`native_libraries.is_android_jit`): code
#: the runtime compiled this run, not an image of the app's
ANDROID_JIT = "the Android runtime's JIT-compiled code"
#: the reason Next.js's own files in a build are a library's (`library_paths.NEXTJS_FILES`)
NEXTJS = "Next.js's code (a build's webpack runtime and vendored packages' chunks, its package)"
#: the library rules this fingerprint version gained after it was first released, by their reasons, oldest
#: first: a release before one read the frames it names as code of no known owner (the app's, or its tests'
#: by their names), so a trace with such a frame also gives the hashes those releases gave it (`candidates`)
ADDED_LIBRARY_RULES = (_BUILTIN, EXTENSION, ANDROID, NEXTJS, ANDROID_JIT)
#: every added rule: how `rounds-fp:2`, before them all, read a trace (`without_rules`)
EVERY_ADDED_RULE = frozenset(ADDED_LIBRARY_RULES)
#: the owner rule's answers per (module, owner), cleared whole when full, and with the engines' shared memos
#: (`memo.shared_dict`). A trace's roles are remembered whole (`_TRACE_MEMO_LIMIT`), so a pair is asked about
#: about twice a round (as grouping reads a distinct trace, and as the code locator reads a representative's):
#: 4,843 pairs for 9,686 questions at 100k records / 2k bugs, 47,164 for 94,328 at 20k bugs, where remembering
#: them all held 12 MB with the module names they are keyed on to the round's end; an answer costs a split and
#: a compare, so a small memo loses a few milliseconds a round
_OWNED_LIMIT = 4_096
_OWNED: dict[tuple[str | None, str], FrameRole] = shared_dict({})


@dataclass(frozen=True, slots=True)
class FrameRole:
    """Whose code a frame is, and why, in a few words."""

    role: Role
    reason: str

    @property
    def in_app(self) -> bool:
        return self.role == "app"


@dataclass(frozen=True)
class TraceRoles:
    """The role of every frame of a trace (`frames[i][j]`: exception i, frame j), and the owner
    whose code counts as the app's when the runtime's package names say (None otherwise)."""

    frames: tuple[tuple[FrameRole, ...], ...]
    owner: str | None = None
    #: the trace is cut before its entry, so the owner rule was not applied to it
    cut: bool = False


@dataclass(frozen=True)
class InAppRules:
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    _memo: dict[tuple[Runtime, str | None, str | None], FrameRole] = field(
        default_factory=dict, compare=False, repr=False
    )
    #: a trace's roles by what they are read from: runtime, each exception's relation and frames,
    #: and the ways of reading (a problem's trace recurs with every occurrence)
    _traces: dict[
        tuple[Runtime, tuple[tuple[str, tuple[Frame, ...]], ...], bool, frozenset[str]], TraceRoles
    ] = field(default_factory=dict, compare=False, repr=False)

    def decide(self, frame: Frame, runtime: Runtime) -> tuple[bool, str]:
        """Whether a frame is the project's own code (the app's or its tests'), from the frame
        alone, and the reason in a few words. `roles` gives the grouping's fuller answer."""
        role = self.frame_role(frame, runtime)
        return role.role != "library", role.reason

    def frame_role(self, frame: Frame, runtime: Runtime) -> FrameRole:
        """The role of a frame judged alone (steps 1-6 of the module docstring)."""
        if frame.in_app is not None:
            return FrameRole("app" if frame.in_app else "library", "marked by the runtime")
        key = (runtime, frame.module, frame.filename)
        role = self._memo.get(key)
        if role is None:
            if len(self._memo) >= _MEMO_LIMIT:
                self._memo.clear()
            role = self._memo[key] = self._decide(frame.module or "", frame.filename or "", runtime)
        return role

    def roles(
        self,
        trace: ParsedTrace,
        *,
        cut_traces: bool = True,
        without_rules: frozenset[str] = frozenset(),
        remember: bool = True,
    ) -> TraceRoles:
        """The role of every frame of a trace, with the owner rule applied where it holds
        (`cut_traces=False`: also to a cut trace, as `rounds-fp:2` did; `without_rules`: the frames the
        added library rules of these reasons name read as the releases before those rules read them,
        see `ADDED_LIBRARY_RULES`). `remember=False`: the same roles, not kept in the trace memo, for a
        caller that asks about each trace once (its key hashes every frame, and would hold them all)."""
        if not remember:
            return self._roles(trace, cut_traces, without_rules)
        key = (
            trace.runtime,
            tuple((e.relation, e.frames) for e in trace.exceptions),
            cut_traces,
            without_rules,
        )
        found = self._traces.get(key)
        if found is None:
            if len(self._traces) >= _TRACE_MEMO_LIMIT:
                self._traces.clear()
            found = self._traces[key] = self._roles(trace, cut_traces, without_rules)
        return found

    def _roles(self, trace: ParsedTrace, cut_traces: bool, without_rules: frozenset[str]) -> TraceRoles:
        alone = tuple(tuple(self.frame_role(f, trace.runtime) for f in e.frames) for e in trace.exceptions)
        if without_rules:
            alone = tuple(
                tuple(
                    _before_added_rules(f, trace.runtime) if r.reason in without_rules else r
                    for f, r in zip(e.frames, roles, strict=True)
                )
                for e, roles in zip(trace.exceptions, alone, strict=True)
            )
        components = _OWNER_COMPONENTS.get(trace.runtime)
        if components is None:
            return TraceRoles(alone)
        if cut_traces and _is_cut(trace, alone):
            return TraceRoles(alone, cut=True)
        owner = _entry_owner(trace, alone, components)
        if owner is None:
            return TraceRoles(alone)
        return TraceRoles(
            tuple(
                tuple(_owned(role, f.module, owner) for f, role in zip(e.frames, roles, strict=True))
                for e, roles in zip(trace.exceptions, alone, strict=True)
            ),
            owner,
        )

    def _decide(self, module: str, filename: str, runtime: Runtime) -> FrameRole:
        path = filename.replace("\\", "/")
        for prefix in self.include:
            if _matches(prefix, module, path):
                return FrameRole("app", f"in-app prefix {prefix!r}")
        for prefix in self.exclude:
            if _matches(prefix, module, path):
                return FrameRole("library", f"excluded prefix {prefix!r}")
        library = _library_reason(module, path, runtime)
        if library is not None:
            return FrameRole("library", library)
        if is_test_code(module, path, runtime):
            return FrameRole("test", "test code")
        return FrameRole("app", _APPLICATION)


def _library_reason(module: str, path: str, runtime: Runtime) -> str | None:
    if runtime == "native" and is_android_system_image(path):
        return _android_image(module)
    for marker in LIBRARY_PATHS:
        if marker in path:
            return f"installed code ({marker.strip('/')})"
    if (directory := runtime_library_marker(path, runtime)) is not None:
        return f"installed code ({directory.strip('/')})"
    if module.startswith(LIBRARY_MODULES.get(runtime, ())):
        return "runtime, framework or SDK code"
    if runtime == "java" and module.startswith(ANDROID_MODULES):
        return ANDROID
    if runtime == "go" and module.split("/", 1)[0] in GO_STDLIB:
        return "Go standard library"
    if runtime == "go" and "@v" in path and _GO_MODULE_VERSION.search(path):
        return GO_MODULE
    if runtime == "rust" and not module:
        return "the C runtime or the panic machinery (a symbol outside any crate)"
    if runtime == "node" and path.startswith(NODE_INTERNAL_FILES):
        return "Node.js internals"
    if runtime == "node" and ("next" in path and NEXTJS_FILES.search(path)):
        return NEXTJS
    if runtime == "native" and is_native_library(module, path):
        return _NATIVE_SYSTEM
    if runtime == "native" and is_android_library(module):
        return ANDROID
    if runtime == "native" and is_android_jit(module):
        return ANDROID_JIT
    if runtime == "native" and is_android_jit(path.rsplit("/", 1)[-1]):
        return _jit_java_reason(module)
    if runtime == "dart" and path.startswith(DART_LIBRARIES):
        return "Dart's core libraries, Flutter's or the test runner's"
    if not module and not path:
        return _BUILTIN
    if is_browser_extension(path):
        return EXTENSION
    return None


def _jit_java_reason(module: str) -> str | None:
    """Why a Java method ART compiled just in time (a tombstone's JIT frame, read by its class:
    `stacktrace.native`) is a library's, by its package as a JVM frame's (None: the app's)."""
    if module.startswith(LIBRARY_MODULES["java"]):
        return "runtime, framework or SDK code"
    return ANDROID if module.startswith(ANDROID_MODULES) else None


def _android_image(image: str) -> str:
    """Why an image in Android's system partitions (a tombstone's path) is a library's, asked before the
    installed-package paths (a partition's `/vendor/` is no package manager's folder): the C and C++ runtimes'
    reason where the image's name gave it before the path was read, else Android's (an added rule)."""
    return _NATIVE_SYSTEM if is_native_library(image, "") else ANDROID


def _before_added_rules(frame: Frame, runtime: Runtime) -> FrameRole:
    """How a frame an added library rule names was read before that rule: no rule before it (steps 1-4)
    named it, so it was test code by its name, else of no known owner (step 6; the owner rule applies)."""
    if is_test_code(frame.module or "", (frame.filename or "").replace("\\", "/"), runtime):
        return FrameRole("test", "test code")
    return FrameRole("app", _APPLICATION)


def readings_before(roles: TraceRoles) -> tuple[frozenset[str], ...]:
    """How each earlier release of this fingerprint version read the trace otherwise, newest first: the
    added library rules it lacked that name a frame of the trace (`without_rules` of `InAppRules.roles`).
    Empty when no added rule names one: every release read it alike."""
    named = {
        role.reason for exception in roles.frames for role in exception if role.reason in EVERY_ADDED_RULE
    }
    readings: list[frozenset[str]] = []
    for release in range(len(ADDED_LIBRARY_RULES) - 1, -1, -1):
        lacked = named.intersection(ADDED_LIBRARY_RULES[release:])
        if lacked and lacked not in readings:
            readings.append(frozenset(lacked))
    return tuple(readings)


def is_test_code(module: str, path: str, runtime: Runtime) -> bool:
    """Whether a frame's module or path is test code by its runtime's test runners' naming conventions
    (also what the fix checks call a test file)."""
    if runtime in ("java", "dotnet", "php"):
        simple = module.rsplit(".", 1)[-1].split("$", 1)[0].split("`", 1)[0]
        if _CLASS_TEST_NAME.match(simple):
            return True
        if runtime == "dotnet" and any(part in ("Tests", "Test") for part in module.split(".")[:-1]):
            return True
    if runtime == "rust" and "::tests" in module:  # unit tests: a `mod tests` beside the code
        return True
    pattern = _TEST_FILES.get(runtime)
    return bool(pattern and path and pattern.search(path))


def owner_of(module: str | None, components: int) -> str:
    """The owner a package name starts with: `com.acme.shop.Cart` -> `com.acme` (two components
    on the JVM), `Acme.Shop.Cart` -> `Acme` (one on .NET). A class in the default package has
    no owner ("")."""
    return ".".join(_package(module)[:components])


def _package(module: str | None) -> list[str]:
    return (module or "").split(".")[:-1]  # the last part names the class


def _entry_owner(trace: ParsedTrace, roles: tuple[tuple[FrameRole, ...], ...], components: int) -> str | None:
    """The owner of the trace's entry: the outermost frame judged application or test code of
    the first exception that has one (the raised exception carries the whole stack). A cut trace
    (see `_is_cut`) does not hold its entry: `roles` does not ask."""
    for exception, exception_roles in zip(trace.exceptions, roles, strict=True):
        for frame, role in zip(reversed(exception.frames), reversed(exception_roles), strict=True):
            if role.reason == _APPLICATION or role.role == "test":
                return owner_of(frame.module, components) or None
    return None


#: the functions a program starts in: a stack that ends in one of them is whole
_ENTRY_FUNCTIONS = frozenset(("main", "Main", "<clinit>", "run", "call"))


def _is_cut(trace: ParsedTrace, roles: tuple[tuple[FrameRole, ...], ...]) -> bool:
    """Whether the printed stack stops before its entry: its outermost frame is neither code the
    runtime, a framework or a test runner owns (which would have called into the app) nor a
    program's entry function. Logging libraries and agents cut long traces at a depth, so the
    bottom may be any library that is not known as one (a template engine, say); its owner is
    then not the app's."""
    for exception, exception_roles in zip(trace.exceptions, roles, strict=True):
        if exception.frames:
            outermost, role = exception.frames[-1], exception_roles[-1]
            return role.reason == _APPLICATION and (outermost.function or "") not in _ENTRY_FUNCTIONS
    return False


def _owned(role: FrameRole, module: str | None, owner: str) -> FrameRole:
    if role.reason != _APPLICATION:
        return role
    key = (module, owner)
    found = _OWNED.get(key)
    if found is None:
        if len(_OWNED) >= _OWNED_LIMIT:
            _OWNED.clear()
        owner_parts = owner.split(".")
        package = _package(module)
        if package[: len(owner_parts)] == owner_parts:
            found = FrameRole("app", f"the app's code: {owner} is where the trace enters")
        else:
            theirs = ".".join(package[: len(owner_parts)]) or "the default package"
            found = FrameRole("library", f"another owner's code ({theirs}), called by the app ({owner})")
        _OWNED[key] = found
    return found


def _matches(prefix: str, module: str, path: str) -> bool:
    if module.startswith(prefix) or path.startswith(prefix):
        return True
    return "/" in prefix and ("/" + prefix.lstrip("/")) in path
