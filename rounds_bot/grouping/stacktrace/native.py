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
under `/system/` or `/apex/`, the app's under `/data/app/`).
"""

from __future__ import annotations

import re

from rounds_bot.grouping.stacktrace.model import NEWLY_READ, Frame, ParsedException, ParsedTrace

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
    r"^\s*#(?P<n>\d{1,5}) pc [0-9a-f]{8,16}\s+(?P<image>[^\s(][^()]{0,1023}?)"
    r"(?: \(offset 0x[0-9a-f]{1,16}\))?(?: \((?P<fn>.{1,2048}?)\+\d{1,12}\))?"
    r"(?: \(BuildId: [0-9a-f]{1,128}\))?$"
)
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
    read_header = False
    for line in lines:
        stripped = line.strip()
        if not stripped:
            continue
        if _APPLE_CRASHED.match(stripped):
            frames = []  # the threads before the crashed one did not crash
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
            frames.append(frame)
    if not frames:
        return None
    exception = ParsedException(error_type, value, tuple(frames), "raised")
    return ParsedTrace("native", (exception,), notes=(NEWLY_READ,))


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
        return int(android["n"]), _made(android["fn"], path, None, path.rsplit("!", 1)[-1])
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
