"""JVM stack traces (Java, Kotlin, Scala, Groovy) as `Throwable.printStackTrace` prints them.

    java.lang.IllegalStateException: cart is empty
        at com.shop.Checkout.total(Checkout.java:42)
        at java.base/java.util.ArrayList.forEach(ArrayList.java:1541)
        ... 12 more
    Caused by: java.io.IOException: disk full
        at com.shop.Store.write(Store.kt:7)
        Suppressed: java.lang.Exception: close failed
            at com.shop.Store.close(Store.kt:9)

`... N more` stands for frames shared with the enclosing trace; they are not repeated, so they
do not contribute twice. Generated class and method names (CGLIB, Javassist, Guice, Hibernate
proxies, reflection accessors, lambdas) are normalised so a rebuild does not re-split a group.

A Scala closure (2.12 and later) is a method named `$anonfun$<method>$<n>` (its boxing bridge
`$anonfun$<method>$<n>$adapted`), numbered in the method's source order, so the number shifts when a
closure is added before it: it is left out, as a lambda's is (`lambda$validate$<n>`). Releases before
kept it (the trace's notes keep the names as printed: `as_read_before`). An anonymous class's number
(`Parser$1.run`) is kept: its frames name no enclosing method, so two anonymous classes of one class
that implement the same method would differ by nothing else.
"""

from __future__ import annotations

import re
from dataclasses import replace

from rounds_bot.grouping.stacktrace.model import Frame, ParsedException, ParsedTrace, Relation
from rounds_bot.grouping.stacktrace.reading import (
    OpenException,
    finish_trace,
    memoised_by_line,
    named_before,
    renamed_note,
)

_FRAME = re.compile(
    r"^\s*at (?:(?P<loader>[\w.-]{1,128}(?:@[\w.-]{1,64})?)?/{1,2})?(?P<symbol>[^\s()]{1,1024})"
    r"\((?P<location>[^()]{0,512})\)\s*(?:~?\[[^\]]{0,512}\])?$"
)
#: a frame line of the Java layout (other runtimes' SDKs print it too: PHP's, see `php`)
FRAME = _FRAME
_LOCATION = re.compile(r"^(?P<file>[^:]{1,512}?)(?::(?P<line>\d{1,9}))?$")
_HEADER = re.compile(
    r"^(?P<indent>\s*)(?:(?P<link>Caused by|Suppressed|Wrapped by):\s+)?"
    r"(?P<type>[A-Za-z_$][\w$]*(?:[.$][\w$]+){0,64})(?::\s?(?P<value>.*))?$"
)
_THREAD_PREFIX = re.compile(r'^Exception in thread "[^"]{0,256}" ')
_MORE = re.compile(r"^\s*\.\.\. \d+ (?:more|common frames omitted)$")
_JVM_FILE = re.compile(
    r"\.(?:java|kt|kts|scala|groovy|clj|cljc)(?::\d+)?$|^(?:Native Method|Unknown Source)$"
)

# Generated names: the part that changes from build to build (or run to run) is replaced.
_GENERATED_BEFORE = (
    (re.compile(r"\$\$(EnhancerBy\w*?|FastClassBy\w*?|SpringCGLIB|Lambda)\$\$?[\w$/.]*"), r"$$\1"),
    (re.compile(r"\$\$Lambda(?:\$\d+)?/0x[0-9a-f]+"), "$$Lambda"),
    (re.compile(r"\$\$Lambda\$\d+(?:/\d+)?"), "$$Lambda"),
    (re.compile(r"_\$\$_jvst[\w$]*"), "_$$_jvst"),
    (re.compile(r"\$HibernateProxy\$\w+"), "$HibernateProxy"),
    (re.compile(r"\$Proxy\d+"), "$Proxy"),
    (re.compile(r"GeneratedMethodAccessor\d+"), "GeneratedMethodAccessor"),
    (re.compile(r"GeneratedConstructorAccessor\d+"), "GeneratedConstructorAccessor"),
    (
        re.compile(r"GeneratedSerializationConstructorAccessor\d+"),
        "GeneratedSerializationConstructorAccessor",
    ),
    (re.compile(r"^(lambda\$[\w$]*?\$)\d+$"), r"\1<n>"),
    (re.compile(r"^access\$\d+$"), "access$<n>"),
)
#: a Scala closure's number (see the module docstring), with the suffix of its bridge or specialised variant
_SCALA_CLOSURE = re.compile(r"^(\$anonfun\$[\w$]*?\$)\d+((?:\$adapted|\$mc[A-Z]{1,8}\$sp)?)$")
_GENERATED = (*_GENERATED_BEFORE, (_SCALA_CLOSURE, r"\1<n>\2"))
#: the note of a frame whose name lost a Scala closure's number, `RENAMED + "<exception> <frame> <name>"`
#: (their indexes in the trace, the name as releases before read it): they kept the number
RENAMED = "a frame's name printed a Scala closure's number: "


def looks_like_jvm_frame(line: str) -> bool:
    match = _FRAME.match(line)
    return match is not None and bool(_JVM_FILE.search(match["location"].strip()))


def is_frame_line(line: str) -> bool:
    """A line that prints a frame, or stands for frames (`... 12 more`). Not memoised: what `_frame_of` gives
    is a frame exactly when `_FRAME` matches, so the pattern alone answers, and a line asked about once (the
    message line every occurrence's cut trace is checked with, `trace_cut.Cut.agrees`) is not kept in the
    memo of the frames read, where it would push out the lines that recur. (`stacktrace.frame_lines`, which
    reads whole traces, keeps its own memo of these answers.)"""
    return _FRAME.match(line) is not None or _MORE.match(line) is not None


def parse(lines: list[str]) -> ParsedTrace | None:
    exceptions: list[ParsedException] = []
    current: OpenException | None = None
    renamed: list[str] = []
    for line in lines:
        if not line.strip():
            continue
        frame = _frame_of(line)
        if frame is not None:
            if current is None:
                current = OpenException("java.lang.Throwable", "", "raised")
            if "$anonfun$" in line and (before := _function_read_before(line)) != frame.function:
                renamed.append(renamed_note(RENAMED, len(exceptions), len(current.frames), before))
            current.frames.append(frame)
            continue
        if _MORE.match(line):
            continue
        line = _THREAD_PREFIX.sub("", line)
        header = _HEADER.match(line.strip()) if _looks_like_header(line) else None
        if header:
            if current is not None:
                exceptions.append(current.close())
            link = header["link"]
            relation: Relation = (
                "raised" if not exceptions and not link else "suppressed" if link == "Suppressed" else "cause"
            )
            current = OpenException(header["type"], (header["value"] or "").strip(), relation)
            continue
        if current is not None and not current.frames:
            # A multi-line message: the lines before the first frame belong to it.
            current.value = (current.value + " " + line.strip()).strip()
    trace = finish_trace("java", exceptions, current)
    return replace(trace, notes=tuple(renamed)) if trace is not None and renamed else trace


def as_read_before(trace: ParsedTrace) -> ParsedTrace | None:
    """How releases before read the trace, when they read it otherwise (None for any other trace): each
    frame that lost a Scala closure's number (`RENAMED`) named as they named it, number and all."""
    return named_before(trace, RENAMED)


def _function_read_before(line: str) -> str | None:
    """The function of a frame line as releases before read it (`_GENERATED_BEFORE`)."""
    match = _FRAME.match(line)
    return normalize_generated(match["symbol"].rpartition(".")[2], _GENERATED_BEFORE) if match else None


def _looks_like_header(line: str) -> bool:
    stripped = line.strip()
    if stripped.startswith(("Caused by:", "Suppressed:", "Wrapped by:")):
        return True
    head = stripped.split(":", 1)[0]
    # `pkg.SomeException: message`, or a bare class name with an Exception/Error suffix
    return " " not in head and ("." in head or head.endswith(("Exception", "Error", "Throwable")))


@memoised_by_line
def _frame_of(line: str) -> Frame | None:
    match = _FRAME.match(line)
    return _frame(match) if match else None


def frame_of_line(line: str) -> Frame | None:
    """The frame a line of this layout prints, if it prints one (other runtimes' SDKs write it too: `php`)."""
    return _frame_of(line)


def _frame(match: re.Match[str]) -> Frame:
    symbol = match["symbol"]
    module, _, function = symbol.rpartition(".")
    location = _LOCATION.match(match["location"].strip())
    filename = location["file"] if location else None
    lineno = int(location["line"]) if location and location["line"] else None
    if filename in ("Native Method", "Unknown Source", ""):
        filename = None
    return Frame(
        function=normalize_generated(function),
        module=normalize_generated(module) or None,
        filename=filename,
        lineno=lineno,
    )


def normalize_generated(name: str, rules: tuple[tuple[re.Pattern[str], str], ...] = _GENERATED) -> str:
    if "$" not in name and "Generated" not in name:
        return name
    for pattern, replacement in rules:
        name = pattern.sub(replacement, name)
    return name
