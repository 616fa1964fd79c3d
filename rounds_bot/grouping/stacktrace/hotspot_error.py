"""The JVM's fatal error log (HotSpot's `hs_err_pid<pid>.log`, also printed to the standard output), read as a
JVM trace.

    #
    # A fatal error has been detected by the Java Runtime Environment:
    #
    #  SIGSEGV (0xb) at pc=0x00007f1a2b3c4d5e, pid=12345, tid=12346
    ...
    # Problematic frame:
    # C  [libfoo.so+0x1234]  foo_parse+0x14
    ...
    Native frames: (J=compiled Java code, A=aot compiled Java code, j=interpreted, Vv=VM code, C=native code)
    C  [libfoo.so+0x1234]  foo_parse+0x14
    j  com.example.Native.parse(Ljava/lang/String;)I+0
    J 1234 c2 com.example.shop.Cart.total()I (42 bytes) @ 0x00007f1a2b3c4d5e [0x00007f1a2b3c4d00+0x5e]
    v  ~StubRoutines::call_stub
    V  [libjvm.so+0x8a1b2c]  JavaCalls::call_helper(JavaValue*, methodHandle const&, ...)+0x3cc

The layout is OpenJDK's (src/hotspot/share/utilities/vmError.cpp, `VMError::report`: the header's error line
`#  <signal or exception> (<code>) at pc=..., pid=..., tid=...`, or `#  Internal Error (<file>:<line>)`, the
`Problematic frame:` and the thread's `Native frames:` then `Java frames:`; src/hotspot/share/runtime/
frame.cpp, `frame::print_on_error`: a frame's kind letter, `C` native code, `V`/`v` the VM's code and stubs,
`j` an interpreted Java method with its signature and bytecode index, `J` a compiled one after its compile
id and compiler, `A` an ahead-of-time compiled one; a native frame names its image and offset and, when the
image has symbols, the function and its offset).

The thread's mixed stack (`Native frames:`) is the trace, the crash site first, with the `Java frames:` below
it when the native walk never reached a Java frame; when it is missing, the problematic frame and the Java
frames. Addresses (a stub's, a hidden class's), offsets, a Java method's signature and bytecode index, the
compile id, the pid and tid never reach a frame; a native frame's source file and line (JDK 20 and later)
do. The type is the signal's or exception's name the JVM prints (`SIGSEGV`, `EXCEPTION_ACCESS_VIOLATION`),
its value that name and its code (`SIGSEGV (0xb)`); the VM's own assertion is typed `Internal Error`, its
value naming the VM's source file without folder or line (`Internal Error (g1RemSet.cpp)`).

Whose code a frame is: the VM's (`V`, `v`) and a native frame of the system's libraries, of the JDK's own or
of the C runtimes it bundles (`hotspot_images`) are marked as a library's; any other native frame is code the
application loaded (`System.loadLibrary`) and is marked as the app's, as the JVM tells it apart from its
own (`C` against `V`) and the JVM's owner rule
(`inapp`) cannot read an image's name as a package; a Java frame is judged by its class, as in any JVM
trace.

No release before this one read these logs: their events went to their message's template, and the signature
made so keeps receiving them (`NEWLY_READ`).
"""

from __future__ import annotations

import re

from rounds_bot.grouping.stacktrace.hotspot_images import is_library_image
from rounds_bot.grouping.stacktrace.java import normalize_generated
from rounds_bot.grouping.stacktrace.model import NEWLY_READ, Frame, ParsedException, ParsedTrace

#: the header's second line (`VMError::report`), where a log (or its copy on the standard output) starts
HEADER = "# A fatal error has been detected by the Java Runtime Environment:"
#: the lines the header is looked for in: a logger's prefix line or two may come first
_HEAD_LINES = 8
#: the error line: a signal's or an exception's name and code, or the VM's own `Internal Error (file:line)`
_ERROR = re.compile(
    r"^#\s{1,4}(?:(?P<internal>Internal Error) \((?P<where>[^)]{1,256})\)|(?P<name>[A-Z][A-Z_]{2,64}) \("
    r"(?P<code>0x[0-9a-fA-F]{1,16}|[^)]{1,64})\)(?: at pc=0x[0-9a-fA-F]{1,16})?)"
)
_SECTIONS = ("Native frames:", "Java frames:")
_PROBLEMATIC = "# Problematic frame:"
#: a native or VM frame: the image and offset, then the function and offset when the image names it
_NATIVE = re.compile(
    r"^(?P<kind>[CV])\s{1,4}\[(?P<image>[^\]+]{1,512})\+0x[0-9a-fA-F]{1,16}\](?:\s{1,4}(?P<symbol>.{1,2048}))?$"
)
#: a Java frame: interpreted (`j  <method>(<signature>)+<bci>`), compiled (`J <id>[%] <compiler>
#: <method>(...`) or ahead-of-time compiled (`A <id> ...`); JDK 9 and later may print the class's module
#: after it; a native method's compiled wrapper has no compiler, its name printed empty (`J 4321  com...`:
#: `frame::print_on_error` prints ` %s` of `compiler_name()`, "" for `compiler_none`)
_JAVA = re.compile(
    r"^(?:j\s{1,4}|[JA]\s{1,4}\d{1,10}%?\s{1,4}(?:\S{1,16}\s{1,4}){0,2}?)"
    r"(?P<symbol>[\w$/.<>\[\]+-]{1,1024})\("
)
#: a hidden class's address in its name (JDK 15 and later, JEP 371: `Foo$$Lambda+0x0000007410d1a458`, a
#: lambda's class as JDK 21 prints it), which changes from run to run
_HIDDEN = re.compile(r"[+/]0x[0-9a-fA-F]{1,16}")
#: a path's folders, `/` or Windows' `\\`
_FOLDER = re.compile(r"[/\\]")
_OFFSET = re.compile(r"\+0x[0-9a-fA-F]{1,16}$")
#: a native symbol's source file and line, after it when the image has debug information (JDK 20 and later,
#: `os::print_function_and_library_name` printing `  (foo.c:42)`)
_SOURCE = re.compile(r"\s{1,4}\((?P<file>[^()\s:]{1,512}):(?P<line>\d{1,9})\)$")
#: a VM stub's address after its name (JDK 17 and later: `~StubRoutines::call_stub 0x00000001125cc154`)
_STUB_ADDRESS = re.compile(r"\s{1,4}0x[0-9a-fA-F]{1,16}$")


def is_report(lines: list[str]) -> bool:
    """Whether the text is a JVM's fatal error log (its header among its first lines)."""
    return any(line.strip() == HEADER for line in lines[:_HEAD_LINES])


def parse(lines: list[str]) -> ParsedTrace | None:
    """The crashed thread's stack and what the JVM says failed; None without a frame."""
    error_type, value = "fatal error", ""
    problematic: Frame | None = None
    sections: dict[str, list[Frame]] = {}
    current: list[Frame] | None = None
    expect_problematic = False
    for line in lines:
        if not sections and (found := _ERROR.match(line)) is not None and not value:
            error_type, value = _error(found)
            continue
        if expect_problematic:
            problematic, expect_problematic = frame_of(line.removeprefix("#").strip()), False
            continue
        if line.strip() == _PROBLEMATIC:
            expect_problematic = True
            continue
        section = next((name for name in _SECTIONS if line.startswith(name)), None)
        if section is not None:
            current = None if section in sections else sections.setdefault(section, [])
            continue
        if current is not None:
            if not line.strip():
                current = None  # a section ends at its blank line
            elif (frame := frame_of(line)) is not None:
                current.append(frame)
    frames = _stack(sections.get(_SECTIONS[0], []), problematic, sections.get(_SECTIONS[1], []))
    if not frames:
        return None
    return ParsedTrace("java", (ParsedException(error_type, value, tuple(frames)),), notes=(NEWLY_READ,))


def _error(found: re.Match[str]) -> tuple[str, str]:
    """The error line's type and value: the signal's or exception's name and code without the pc, pid and tid
    (`SIGSEGV`, `SIGSEGV (0xb)`), or `Internal Error` and the VM's source file without its folder and line,
    which change from build to build (`Internal Error (g1RemSet.cpp)`)."""
    if found["internal"]:
        source = _FOLDER.split(found["where"].rsplit(":", 1)[0])[-1]
        return "Internal Error", f"Internal Error ({source})"
    return found["name"], f"{found['name']} ({found['code']})"


def _stack(native: list[Frame], problematic: Frame | None, java: list[Frame]) -> list[Frame]:
    """The crashed thread's stack: its mixed stack, with its Java frames below when the native walk never
    reached Java (a crash in a system library on Windows: `C  [ntdll.dll+0x...]`, `V  [jvm.dll+0x...]`, `C
    0x...`), so crashes under different Java call sites stay apart; without a mixed stack, the problematic
    frame and the Java frames."""
    if native:
        # a Java frame is the only kind a reading leaves unjudged (`in_app` None): the VM's and native
        # frames are judged by their image
        return native if any(frame.in_app is None for frame in native) else [*native, *java]
    return [*((problematic,) if problematic is not None else ()), *java]


def frame_of(line: str) -> Frame | None:
    """The frame a stack line prints (`frame::print_on_error`), None for any other line (a frame that names
    no image, `C  0x00007f...`, names nothing that stays from run to run)."""
    native = _NATIVE.match(line)
    if native is not None:
        image = native["image"].rsplit("/", 1)[-1]
        symbol = native["symbol"] or ""
        source = _SOURCE.search(symbol)
        return Frame(
            function=_function(symbol[: source.start()] if source else symbol),
            module=image,
            filename=source["file"] if source else None,
            lineno=int(source["line"]) if source else None,
            in_app=_in_app(native["kind"], image),
        )
    java = _JAVA.match(line)
    if java is not None:
        module, _, function = _HIDDEN.sub("", java["symbol"]).rpartition(".")
        return Frame(function=normalize_generated(function), module=normalize_generated(module) or None)
    if line.startswith("v  "):
        stub = _STUB_ADDRESS.sub("", line[3:].strip()).lstrip("~")
        return Frame(function=stub or None, in_app=False)  # a VM's stub
    return None


def _function(symbol: str) -> str | None:
    """A native symbol without its offset and, for C++, its parameters."""
    name = _OFFSET.sub("", symbol.strip())
    if name.endswith(")") and "(" in name:
        name = name[: name.index("(")]
    return name or None


def _in_app(kind: str, image: str) -> bool:
    """The VM's frames and the system's or the JDK's images are a library's; any other image the app's."""
    return kind == "C" and not is_library_image(image)
