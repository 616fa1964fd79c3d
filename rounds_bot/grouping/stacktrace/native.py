"""Native backtraces: C, C++, Objective-C and Swift code as sanitizers, debuggers and crash reporters print
it.

    ==4242==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010 at pc ...   (sanitizers)
        #0 0x4c0e3b in Parser::next() /src/parser.cc:142:12
        #1 0x7f3a1b2c in __libc_start_main (/lib/x86_64-linux-gnu/libc.so.6+0x21b96) (BuildId: 1f2e)
    Program received signal SIGSEGV, Segmentation fault.                                      (gdb's `bt`)
    #0  0x000055555555513d in parse_header (buf=0x0) at src/http.c:88
    #1  handle_request (conn=0x5555555592a0) at src/server.c:142
    #2  0x00007ffff7a05b97 in __libc_start_main () from /lib/x86_64-linux-gnu/libc.so.6
     0# parse_header(char const*) at /src/http.cpp:88                                     (Boost.Stacktrace)
    ./server(parse_header+0x1c) [0x400a3c]                                    (glibc's `backtrace_symbols`)
    1   Shop   0x0000000100a1b2c4 CartView.total() + 120 (CartView.swift:42)     (Apple's crash reports)
    signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0                           (Android's tombstones)
          #00 pc 00000000000a1b2c  /data/app/~~Xy==/com.shop-Qw==/lib/arm64/libshop.so (Mesh::upload()+44)

The sanitizers' layout is their default `stack_trace_format` (`#%n %p %F %L`: the frame's number, its address,
`in` and the function, then `file:line:column` or `(module+offset)`). Only the stack that crashed is read: the
first one, or the one after Apple's `Thread N Crashed:`. The stacks a report adds after it (a sanitizer's
`freed by thread T0 here:` and `previously allocated by`, the other threads of gdb's `thread apply all bt`)
say where memory came from, not where the program failed; a frame numbered 0 again starts one, and ends
the reading. A function is named without its arguments, return type or a compiler's clone suffixes
(`.isra.0`, `.constprop.1`, `.part.0`, `.cold`), so the same code compiled again names the same frames.
Addresses and offsets are never read: they change with each build and each run. A frame a report names by
an address alone (Boost.Stacktrace's `0# 0x000055D4C11A2B in ./server`, Apple's unsymbolicated `0x100a18000 +
39620`, the image's load address) names no function, only its image: the address moves with every launch.
Android's debuggerd prints a frame's `pc` as an offset in its image, then the image's path (an app's holds
per-install random directories; a library inside the APK is `base.apk!libshop.so`, `(offset 0x...)` after
it), the function with its offset, and the build's id, `(BuildId: 9f1e...)` (AOSP's debuggerd,
`libdebuggerd/tombstone_proto_to_text.cpp`, and the NDK's "Diagnosing native crashes"): the image's name and
the function are read, and the image's path as the frame's file (it says whose the image is: the system's
under `/system/` or `/apex/`, the app's under `/data/app/`). The image's path is the mapping's name as
`/proc/<pid>/maps` gives it (libunwindstack's `Unwinder::FormatFrame`, `#%02zu pc %016lx  <map name>` then
` (offset 0x%lx)`, ` (<function>+<offset>)`): the kernel ends the name of a file deleted since it was mapped
with ` (deleted)` (proc(5)), as an APK an update replaced under the running app
(`base.apk (deleted) (offset 0x1000) (Java_com_example_Native_run+88)`), and names ART's JIT code cache
`/memfd:jit-cache (deleted)` (an anonymous `[anon:dalvik-jit-code-cache]` before Android 10): the mark is no
part of the image's name. A Java method ART compiled, just in time (a JIT cache's frame) or ahead of time (an
`.odex` or `.oat` image's), is read as a JVM frame is, its class the module and its method the function
(`com.example.shop.CartActivity.onCreate` -> `com.example.shop.CartActivity`, `onCreate`): the method is what
ran, whether and where ART compiled it changes from run to run, so one crash is one whichever compiled it,
and its package says whose it is (`inapp`). A JIT frame that names no method is the runtime's, with no
function (`native_libraries.is_android_jit`). Releases before read ` (deleted)` into the function's name, a
compiled method as a function of its image, and no frame of a deleted mapping that names no function (the
trace's notes keep what they read: `as_read_before`).
"""

from __future__ import annotations

import re
from dataclasses import replace

from rounds_bot.grouping.native_libraries import is_android_jit
from rounds_bot.grouping.stacktrace.java import normalize_generated
from rounds_bot.grouping.stacktrace.model import NEWLY_READ, Frame, ParsedException, ParsedTrace
from rounds_bot.grouping.stacktrace.reading import named_before, renamed_note

#: a frame's number, its address, and the rest (sanitizers, gdb; gdb leaves the address out of frames it has
#: the source of, `#1  handle_request (...) at src/server.c:142`)
_NUMBERED = re.compile(r"^\s*#(?P<n>\d{1,5})\s+(?:0x[0-9a-fA-F]{1,16}\s+(?:in\s+)?)?(?P<rest>\S.{0,2047})$")
_BUILD_ID = re.compile(r"\s+\(BuildId: [0-9a-fA-F]{1,128}\)$")
#: `(module+0xoffset)`, where a sanitizer has no source for the frame
_IMAGE = re.compile(r"^(?P<before>.*?)\s*\((?P<image>[^()]{1,1024}?)\+0x[0-9a-fA-F]{1,16}\)$")
_GDB_SOURCE = re.compile(r"^(?P<before>.*?) at (?P<file>\S{1,1024}):(?P<line>\d{1,9})$")
_GDB_LIBRARY = re.compile(r"^(?P<before>.*?) from (?P<image>\S{1,1024})$")
_SANITIZER_SOURCE = re.compile(r"^(?P<before>.*?)\s+(?P<file>[^\s:]{1,1024}):(?P<line>\d{1,9})(?::\d{1,9})?$")
#: Boost.Stacktrace's `N# function at file:line` or `N# function in module`
_BOOST = re.compile(
    r"^\s*(?P<n>\d{1,5})# (?P<fn>.{1,2048}?)"
    r"(?: at (?P<file>\S{1,1024}):(?P<line>\d{1,9})| in (?P<image>\S{1,1024}))?$"
)
#: glibc's `backtrace_symbols`: `module(function+0xoffset) [0xaddress]`
_GLIBC = re.compile(
    r"^\s*(?P<image>[^\s()\[\]]{1,1024})\((?P<fn>[^()+\s]{0,1024})(?:\+0x[0-9a-fA-F]{1,16})?\)\s?\[0x[0-9a-fA-F]{1,16}\]$"
)
#: Apple's crash reports: `N   image   0xaddress   symbol + offset (file:line)`
_APPLE = re.compile(
    r"^(?P<n>\d{1,5})\s+(?P<image>\S{1,256})\s+0x[0-9a-fA-F]{1,16}\s+(?P<fn>.{1,2048}?)(?: \+ \d{1,12})?"
    r"(?: \((?P<file>[^():\s]{1,1024}):(?P<line>\d{1,9})\))?$"
)
#: Android's debuggerd: `#00 pc <offset>  <image> (offset 0x...) (<function>+<offset>) (BuildId: <id>)`, each
#: part after the image optional (the function's offset always printed with it)
_ANDROID = re.compile(
    r"^\s*#(?P<n>\d{1,5}) pc [0-9a-f]{8,16}\s+(?P<image>[^\s(][^()]{0,1023}?)(?P<deleted> \(deleted\))?"
    r"(?: \(offset 0x[0-9a-f]{1,16}\))?(?: \((?P<fn>.{1,2048}?)\+\d{1,12}\))?"
    r"(?: \(BuildId: [0-9a-f]{1,128}\))?$"
)
#: how releases before read that layout: a deleted mapping's ` (deleted)` not read as its name's end
_ANDROID_BEFORE = re.compile(
    r"^\s*#(?P<n>\d{1,5}) pc [0-9a-f]{8,16}\s+(?P<image>[^\s(][^()]{0,1023}?)"
    r"(?: \(offset 0x[0-9a-f]{1,16}\))?(?: \((?P<fn>.{1,2048}?)\+\d{1,12}\))?"
    r"(?: \(BuildId: [0-9a-f]{1,128}\))?$"
)
#: a Java method as ART names it in a tombstone, `<package>.<Class>.<method>` (module docstring)
_JAVA_METHOD = re.compile(r"^[\w$]{1,256}(?:\.[\w$]{1,256}){1,64}$")
#: the images of ART's ahead-of-time compiled Java code: an app's `oat/<isa>/base.odex`, the boot image's
#: `boot.oat`, `boot-framework.oat` (AOSP's dexopt output)
_COMPILED_JAVA = (".odex", ".oat")
#: the note of a frame releases before named otherwise (`reading.renamed_note`; module docstring)
RENAMED = "a tombstone's frame read otherwise before: "
#: an address in an image's name (an anonymous mapping's, `<anonymous:79b5a3f000>`): it changes with every run
_MAPPING_ADDRESS = re.compile(r":[0-9a-f]{1,16}>$")
#: a function named by its address alone (module docstring)
_ADDRESS = re.compile(r"^0x[0-9a-fA-F]{1,16}$")
_APPLE_CRASHED = re.compile(r"^Thread \d{1,5}(?: name: .*)? Crashed")
#: the header lines that say what failed: a sanitizer's report, a signal gdb caught, Apple's exception type,
#: Android's signal line, Swift's fatal error
_SANITIZER = re.compile(
    r"^(?:==\d{1,10}==)?(?:ERROR|WARNING): (?P<tool>\w{1,40}Sanitizer): (?P<kind>[^(]{1,200}?)"
    r"(?: on (?:unknown )?address\b.*| \(pid=\d+\).*|:.*)?$"
)
_UBSAN = re.compile(r"^\S.{0,1024}?:\d{1,9}(?::\d{1,9})?: runtime error: (?P<value>.{1,2048})$")
_SIGNAL = re.compile(
    r"^(?:Program|Thread \d{1,5}(?: \".{0,64}\")?) received signal "
    r"(?P<signal>SIG\w{1,20}), (?P<value>.*?)\.?$"
)
_APPLE_TYPE = re.compile(r"^Exception Type:\s+(?P<type>\w{1,64})(?: \((?P<value>[^)]{1,128})\))?")
_ANDROID_SIGNAL = re.compile(r"^signal \d{1,3} \((?P<signal>SIG\w{1,20})\), (?P<value>.{0,2048})$")
_SWIFT_FATAL = re.compile(r"^(?P<type>Fatal error): (?P<value>.{0,2048})$")
#: a compiler's clones of a function (GCC's `.isra.0`, `.constprop.1`, `.part.0`, `.cold`; LLVM's `.llvm.123`)
_CLONE = re.compile(r"(?:\.(?:isra|constprop|part|cold|lto_priv|llvm)(?:\.\d+)?)+$")
_ABI_TAG = re.compile(r"\[abi:\w+\]")
#: gdb's frames that run no function of anyone's
_NOT_A_FUNCTION = ("<signal handler called>", "??", "<unknown>")
#: a type for the crash when the report names none
CRASH = "crash"


def looks_like_frame(line: str) -> bool:
    """Whether a line prints a native frame in one of the layouts above (callers test substrings first)."""
    return _frame(line) is not None


#: a native frame is printed on one line, with no source line under it: the lines of frames are those
is_frame_line = looks_like_frame


def parse(lines: list[str]) -> ParsedTrace | None:
    error_type, value = CRASH, ""
    frames: list[Frame] = []
    renamed: list[str] = []
    read_header = False
    for line in lines:
        stripped = line.strip()
        if not stripped:
            continue
        if _APPLE_CRASHED.match(stripped):
            frames, renamed = [], []  # the threads before the crashed one did not crash
            continue
        found = _frame(line)
        if found is None:
            if not frames and not read_header and (header := _header(stripped)) is not None:
                (error_type, value), read_header = header, True
            continue
        number, frame = found
        if number == 0 and frames:
            break  # the next stack: where memory was freed or allocated, another thread
        if frame is not None:
            if frame.module is not None and " pc " in line and not frame.newly_read:
                renamed.extend(_renamed(line, frame, len(frames)))
            frames.append(frame)
    if not frames:
        return None
    exception = ParsedException(error_type, value, tuple(frames), "raised")
    return ParsedTrace("native", (exception,), notes=(NEWLY_READ, *renamed))


def as_read_before(trace: ParsedTrace) -> ParsedTrace | None:
    """How releases before read the trace, when they read it otherwise (None for any other trace): a
    tombstone's frame of a deleted mapping or of the JIT's named as they named it (`RENAMED`), and without the
    frames they read none of (`Frame.newly_read`). With no frame left, they read no trace: the message's
    template (`NEWLY_READ`) finds theirs."""
    named = named_before(trace, RENAMED)
    before = trace if named is None else named
    if any(frame.newly_read for frame in before.exceptions[0].frames):
        kept = tuple(frame for frame in before.exceptions[0].frames if not frame.newly_read)
        before = replace(before, exceptions=(replace(before.exceptions[0], frames=kept),))
    if before is trace or not before.frame_count:
        return None
    return before


def _renamed(line: str, frame: Frame, at: int) -> list[str]:
    """The note (`RENAMED`) of a tombstone's frame releases before named otherwise (module docstring), if it
    is one: they read a deleted mapping's mark into its function's name, a JIT frame's function as printed,
    and a compiled Java method as a function of its image."""
    image = (frame.filename or "").rsplit("!", 1)[-1]
    compiled = image.endswith(_COMPILED_JAVA) or is_android_jit(image.rsplit("/", 1)[-1])
    if " (deleted)" not in line and not compiled:
        return []
    before = _ANDROID_BEFORE.match(line)
    if before is None or not before["fn"]:
        return []  # (a frame they read with no function reads with none now)
    read = _made(
        before["fn"], None, None, _MAPPING_ADDRESS.sub(">", before["image"].strip()).rsplit("!", 1)[-1]
    )
    if read.function is None or (read.function, read.module) == (frame.function, frame.module):
        return []
    if read.module == frame.module:
        return [renamed_note(RENAMED, 0, at, read.function)]
    return [renamed_note(RENAMED, 0, at, read.function, read.module)]


def _header(line: str) -> tuple[str, str] | None:
    """The type and value of what failed, from a report's header line, or None when the line is none."""
    sanitizer = _SANITIZER.match(line)
    if sanitizer:
        return f"{sanitizer['tool']}: {sanitizer['kind'].strip()}", line.split(": ", 1)[1]
    ubsan = _UBSAN.match(line)
    if ubsan:
        return "UndefinedBehaviorSanitizer: runtime error", ubsan["value"]
    signal = _SIGNAL.match(line)
    if signal:
        return signal["signal"], signal["value"]
    apple = _APPLE_TYPE.match(line)
    if apple:
        return apple["type"], apple["value"] or ""
    android = _ANDROID_SIGNAL.match(line)
    if android:
        return android["signal"], android["value"]
    swift = _SWIFT_FATAL.match(line)
    if swift:
        return swift["type"], swift["value"]
    return None


def _frame(line: str) -> tuple[int, Frame | None] | None:
    """The frame's number and the frame a line prints (None for gdb's `<signal handler called>`), or None
    when the line prints no native frame."""
    android = _ANDROID.match(line) if " pc " in line else None
    if android is not None:
        # the image's path says whose it is (Android's system partitions, or the app's `/data/app/`): kept as
        # the frame's file, which its key does not read (the module, the image's name, identifies it)
        path = _MAPPING_ADDRESS.sub(">", android["image"].strip())
        image = path.rsplit("!", 1)[-1]
        jit = is_android_jit(image.rsplit("/", 1)[-1])
        read = _compiled_java(android["fn"], path, image, jit) or _made(
            None if jit else android["fn"], path, None, image
        )
        if (android["deleted"] or jit) and _ANDROID_BEFORE.match(line) is None:
            read = replace(read, newly_read=True)  # a deleted mapping with no function: read by none before
        return int(android["n"]), read
    numbered = _NUMBERED.match(line)
    if numbered is not None and (frame := _numbered_frame(numbered["rest"], line)) is not None:
        return int(numbered["n"]), frame if frame.function not in _NOT_A_FUNCTION or frame.filename else None
    boost = _BOOST.match(line)
    if boost is not None:
        return int(boost["n"]), _made(boost["fn"], boost["file"], boost["line"], boost["image"])
    glibc = _GLIBC.match(line)
    if glibc is not None:
        return -1, _made(glibc["fn"], None, None, glibc["image"])
    apple = _APPLE.match(line.strip())
    if apple is not None:
        return int(apple["n"]), _made(apple["fn"], apple["file"], apple["line"], apple["image"])
    return None


def _compiled_java(function: str | None, path: str, image: str, jit: bool) -> Frame | None:
    """A tombstone's frame of a Java method ART compiled, read as a JVM frame (its class and method, see the
    module docstring); None for any other frame, and for a JIT frame that names no method."""
    if not function or not (jit or image.endswith(_COMPILED_JAVA)) or _JAVA_METHOD.match(function) is None:
        return None
    module, _, method = function.rpartition(".")
    return Frame(function=normalize_generated(method), module=normalize_generated(module), filename=path)


def _numbered_frame(rest: str, line: str) -> Frame | None:
    """A sanitizer's or gdb's frame from what follows its number and address; None when it is neither's
    (a PHP frame, `#0 /app/x.php(12): f()`, and a Dart one, `#0  f (package:app/x.dart:3:5)`, are numbered
    too)."""
    rest = _BUILD_ID.sub("", rest)
    has_address = " 0x" in line.split("#", 1)[1][:24]
    image = _IMAGE.match(rest)
    if image is not None:
        # ThreadSanitizer prints both, and no address: `#0 Thread1 /tmp/race.c:5:3 (race+0x4a9e5b)`
        both = _SANITIZER_SOURCE.match(image["before"])
        if both is not None:
            return _made(_in(both["before"]), both["file"], both["line"], image["image"])
        return _made(_in(image["before"]), None, None, image["image"])
    gdb = _GDB_SOURCE.match(rest)
    if gdb is not None:
        return _made(_gdb_function(_in(gdb["before"])), gdb["file"], gdb["line"], None)
    library = _GDB_LIBRARY.match(rest)
    if library is not None:
        return _made(_gdb_function(_in(library["before"])), None, None, library["image"])
    if not has_address:
        return None  # a frame without an address names where it is (`at file:line`, `from lib`)
    source = _SANITIZER_SOURCE.match(rest)
    if source is not None:
        return _made(_in(source["before"]), source["file"], source["line"], None)
    return _made(_in(rest), None, None, None)


def _in(text: str) -> str:
    return text[3:] if text.startswith("in ") else text


def _gdb_function(text: str) -> str:
    """gdb prints a function and its arguments' values: `parse_header (buf=0x0)`."""
    return text.split(" (", 1)[0]


def _made(function: str | None, filename: str | None, line: str | None, image: str | None) -> Frame:
    return Frame(
        function=bare_function(function) if function else None,
        module=image.replace("\\", "/").rsplit("/", 1)[-1] if image else None,
        filename=filename,
        lineno=int(line) if line else None,
    )


def bare_function(name: str) -> str | None:
    """A function's name without its arguments, return type, ABI tags or clone suffixes:
    `std::vector<int>::at(unsigned long) const` -> `std::vector<int>::at`, `parse.isra.0` -> `parse`."""
    name = _ABI_TAG.sub("", name.replace("<null>", "").strip())  # ThreadSanitizer's unknown function
    if _ADDRESS.match(name):
        return None  # an address, not a name (module docstring)
    if name.startswith(("-[", "+[")) and name.endswith("]"):
        return name  # an Objective-C method, `-[UIViewController loadViewIfRequired]`, is named whole
    if name.endswith((")", ") const", ") volatile", ") &", ") &&")) and not name.endswith("operator()"):
        name = _without_arguments(name)
    name = _CLONE.sub("", name)
    # a return type before the name (`int main`, `void ns::f`): the name is the last word outside templates
    depth, start = 0, 0
    for index, char in enumerate(name):
        if char == "<":
            depth += 1
        elif char == ">":
            depth = max(depth - 1, 0)
        elif char == " " and depth == 0 and not name[index + 1 :].startswith(("(", "<")):
            start = index + 1
    name = name[start:].strip().lstrip("*&")
    return name or None


def _without_arguments(name: str) -> str:
    """The name before its argument list: the parentheses that close at the end, matched from the end."""
    end = name.rfind(")")
    depth = 0
    for index in range(end, -1, -1):
        if name[index] == ")":
            depth += 1
        elif name[index] == "(":
            depth -= 1
            if depth == 0:
                return name[:index].rstrip()
    return name
