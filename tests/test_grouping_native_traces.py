"""Native backtraces (C, C++, Objective-C, Swift): the sanitizers' reports, gdb's `bt`, Boost.Stacktrace,
glibc's `backtrace_symbols` and Apple's crash reports. One crash site is one signature whatever the run's
addresses and process id; two crash sites behind one message are two; and a signature an earlier release made
from the message alone (it could not read these frames) keeps receiving its events."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from known_states import KnownStates

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.stacktrace import Frame, detect_runtime, parse_stacktrace, runtime_of_line
from rounds_bot.grouping.stacktrace.model import trace_lines
from rounds_bot.grouping.stacktrace.native import bare_function
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)

ASAN = """==12345==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000000010 at pc 0x55d4c1a2b3c4
READ of size 4 at 0x602000000010 thread T0
    #0 0x55d4c1a2b3c4 in Parser::next() /src/proj/src/parser.cc:142:12
    #1 0x55d4c1a2b5d6 in Parser::parse(std::string const&) /src/proj/src/parser.cc:88:5
    #2 0x55d4c1a2c7e8 in main /src/proj/src/main.cc:31:3
    #3 0x7f1234567890 in __libc_start_main (/lib/x86_64-linux-gnu/libc.so.6+0x21bf6) (BuildId: 1f2e3d)

freed by thread T0 here:
    #0 0x7f12345abcde in operator delete(void*) (/usr/lib/x86_64-linux-gnu/libasan.so.5+0xf1abc)
    #1 0x55d4c1a2b400 in Parser::reset() /src/proj/src/parser.cc:60:3
SUMMARY: AddressSanitizer: heap-use-after-free /src/proj/src/parser.cc:142:12 in Parser::next()"""

GDB = """Program received signal SIGSEGV, Segmentation fault.
#0  0x000055555555513d in parse_header (buf=0x0) at src/http.c:88
#1  handle_request (conn=0x5555555592a0) at src/server.c:142
#2  <signal handler called>
#3  0x00007ffff7a05b97 in __libc_start_main () from /lib/x86_64-linux-gnu/libc.so.6"""

TSAN = """WARNING: ThreadSanitizer: data race (pid=9262)
  Write of size 4 at 0x7fe3c3075190 by thread T1:
    #0 Thread1 /tmp/race.c:5:3 (race+0x0000004a9e5b)
    #1 <null> <null> (libtsan.so.0+0x2b6a3)

  Previous write of size 4 at 0x7fe3c3075190 by main thread:
    #0 main /tmp/race.c:12:3 (race+0x0000004a9f1a)"""

BOOST = """ 0# parse_header(char const*) at /src/http.cpp:88
 1# handle(Request&) at /src/server.cpp:142
 2# main in ./server"""

GLIBC = """./server(parse_header+0x1c) [0x400a3c]
./server(handle_request+0x45) [0x400b81]
/lib/x86_64-linux-gnu/libc.so.6(__libc_start_main+0xe7) [0x7f1a2b3c4b97]"""

APPLE = """Exception Type:  EXC_BAD_ACCESS (SIGSEGV)
Thread 0:
0   libsystem_kernel.dylib        0x00000001a1b2c3d4 mach_msg_trap + 8
Thread 1 Crashed:
0   libswiftCore.dylib  0x00000001a1b2c3d4 $ss17_assertionFailure + 300
1   Shop                0x0000000100a1b2c4 CartViewController.total() + 120 (CartViewController.swift:42)
2   UIKitCore           0x00000001a5b6c7d8 -[UIViewController loadViewIfRequired] + 1000"""


@pytest.mark.parametrize(
    ("text", "error_type", "frames"),
    [
        (
            ASAN,
            "AddressSanitizer: heap-use-after-free",
            [
                Frame("Parser::next", filename="/src/proj/src/parser.cc", lineno=142),
                Frame("Parser::parse", filename="/src/proj/src/parser.cc", lineno=88),
                Frame("main", filename="/src/proj/src/main.cc", lineno=31),
                Frame("__libc_start_main", module="libc.so.6"),
            ],
        ),
        (
            GDB,
            "SIGSEGV",
            [
                Frame("parse_header", filename="src/http.c", lineno=88),
                Frame("handle_request", filename="src/server.c", lineno=142),
                Frame("__libc_start_main", module="libc.so.6"),
            ],
        ),
        (
            TSAN,
            "ThreadSanitizer: data race",
            [
                Frame("Thread1", module="race", filename="/tmp/race.c", lineno=5),
                Frame(None, module="libtsan.so.0"),
            ],
        ),
        (
            BOOST,
            "crash",
            [
                Frame("parse_header", filename="/src/http.cpp", lineno=88),
                Frame("handle", filename="/src/server.cpp", lineno=142),
                Frame("main", module="server"),
            ],
        ),
        (
            GLIBC,
            "crash",
            [
                Frame("parse_header", module="server"),
                Frame("handle_request", module="server"),
                Frame("__libc_start_main", module="libc.so.6"),
            ],
        ),
        (
            APPLE,
            "EXC_BAD_ACCESS",
            [
                Frame("$ss17_assertionFailure", module="libswiftCore.dylib"),
                Frame(
                    "CartViewController.total", module="Shop", filename="CartViewController.swift", lineno=42
                ),
                Frame("-[UIViewController loadViewIfRequired]", module="UIKitCore"),
            ],
        ),
    ],
    ids=["asan", "gdb", "tsan", "boost", "glibc", "apple"],
)
def test_a_native_backtrace_is_read_to_the_frames_of_the_stack_that_crashed(
    text: str, error_type: str, frames: list[Frame]
) -> None:
    trace = parse_stacktrace(text)
    assert trace is not None and trace.runtime == "native"
    assert [e.type for e in trace.exceptions] == [error_type]  # the stacks after the first are not read
    assert list(trace.exceptions[0].frames) == frames


@pytest.mark.parametrize(
    ("printed", "bare"),
    [
        ("Parser::parse(std::string const&)", "Parser::parse"),
        (
            "std::vector<int, std::allocator<int> >::at(unsigned long) const",
            "std::vector<int, std::allocator<int> >::at",
        ),
        ("parse_header.isra.0", "parse_header"),
        ("compress.constprop.1.cold", "compress"),
        ("int main(int, char**)", "main"),
        ("void ns::Cache::evict[abi:cxx11](unsigned long)", "ns::Cache::evict"),
        ("Handler::operator()(Request&) const", "Handler::operator()"),
        ("-[UIViewController loadViewIfRequired]", "-[UIViewController loadViewIfRequired]"),
    ],
)
def test_a_native_function_is_named_without_what_changes_between_builds(printed: str, bare: str) -> None:
    assert bare_function(printed) == bare


@pytest.mark.parametrize(
    "line",
    [
        "#0 /var/www/src/Checkout.php(88): App\\Billing\\Charge->capture(Object(App\\Order), 1999)",
        "#1 {main}",
        "#0      ListMixin.first (dart:collection/list.dart:167:5)",
        "# retries exhausted after 3 attempts",
        "3 workers at 0x10 load",
        "order 42 failed [0x1f]",
    ],
)
def test_a_line_of_another_layout_is_not_read_as_a_native_frame(line: str) -> None:
    assert runtime_of_line(line) != "native"


def test_the_other_runtimes_traces_are_recognised_as_before() -> None:
    php = (
        "PHP Fatal error:  Uncaught RuntimeException: card expired in /var/www/src/Charge.php:42\n"
        "Stack trace:\n#0 /var/www/src/Checkout.php(88): App\\Charge->capture()\n#1 {main}"
    )
    rust = (
        "thread 'main' panicked at src/main.rs:4:5:\nboom\nstack backtrace:\n"
        "   0: app::run\n             at ./src/main.rs:4:5"
    )
    assert detect_runtime(trace_lines(php)) == "php"
    assert detect_runtime(trace_lines(rust)) == "rust"


@pytest.mark.parametrize(
    ("frame", "in_app"),
    [
        (Frame("__libc_start_main", module="libc.so.6"), False),
        (Frame("__interceptor_free", module="libasan.so.8"), False),
        (Frame("__GI_raise", filename="../sysdeps/unix/sysv/linux/raise.c"), False),
        (Frame("std::__throw_out_of_range", filename="/usr/include/c++/12/bits/functexcept.h"), False),
        (Frame("__asan_report_load4", filename="/build/llvm/compiler-rt/lib/asan/asan_rtl.cpp"), False),
        (Frame("loadViewIfRequired", module="UIKitCore"), False),
        (Frame("parse_header", filename="/usr/src/app/http.c"), True),  # containers build apps in /usr/src
        (Frame("CartViewController.total", module="Shop", filename="CartViewController.swift"), True),
    ],
)
def test_the_systems_and_the_sanitizers_native_code_is_not_the_apps(frame: Frame, in_app: bool) -> None:
    assert InAppRules().frame_role(frame, "native").in_app is in_app


def _asan(site: str, file: str, line: int, pid: int, address: int) -> str:
    return f"""=={pid}==ERROR: AddressSanitizer: heap-use-after-free on address 0x{address:012x} at pc 0x55
READ of size 4 at 0x{address:012x} thread T0
    #0 0x55d4c1a2{address % 9999:04x} in {site} /src/proj/src/{file}:{line}:12
    #1 0x55d4c1a2b5d6 in Parser::parse(std::string const&) /src/proj/src/parser.cc:88:5
    #2 0x55d4c1a2c7e8 in main /src/proj/src/main.cc:31:3"""


def _event(n: int, stacktrace: str | None) -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service="parser",
        error_type="SIGSEGV",
        message="AddressSanitizer: heap-use-after-free",
        stacktrace=stacktrace,
    )


def test_one_crash_site_is_one_signature_and_two_behind_one_message_are_two() -> None:
    placed = GroupingEngine().assign_all(
        [
            _event(1, _asan("Parser::next()", "parser.cc", 142, 12345, 0x602000000010)),
            _event(2, _asan("Parser::next()", "parser.cc", 145, 23456, 0x602000000090)),  # rebuilt, run again
            _event(3, _asan("Lexer::peek()", "lexer.cc", 57, 34567, 0x602000000110)),
        ]
    )
    assert placed[0].signature_id == placed[1].signature_id != placed[2].signature_id
    assert "crash site proj/src/lexer.cc:Lexer::peek" in placed[2].explanation


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_signature_an_earlier_release_made_from_the_message_keeps_receiving_native_traces(how: str) -> None:
    """No release before read these frames: their events went to their message's template, and that
    signature keeps receiving them (it is not split into trace signatures, which would file duplicates)."""
    before = GroupingEngine()
    made = before.assign(_event(0, None))  # (what an unread backtrace gave: the message alone)
    saved = [before.state(made.signature_id)]
    engine = GroupingEngine(known=saved) if how == "given" else GroupingEngine(lookup=KnownStates(saved))
    found = engine.assign_all(
        [
            _event(1, _asan("Parser::next()", "parser.cc", 142, 12345, 0x602000000010)),
            _event(2, _asan("Parser::next()", "parser.cc", 142, 23456, 0x602000000090)),
        ]
    )
    assert {(a.signature_id, a.tier) for a in found} == {(made.signature_id, "fingerprint")}
    assert all("an earlier version" in a.explanation.splitlines()[-1] for a in found)


def _unsymbolicated(load: int, offset: int = 39620) -> str:
    """Apple's crash report of an app without its symbols (`image  address  load address + offset`), and a
    Boost.Stacktrace frame without a symbol (its address `in` the binary): the load address moves with every
    launch (ASLR)."""
    return (
        "Exception Type:  EXC_BAD_ACCESS (SIGSEGV)\n"
        "Thread 0 Crashed:\n"
        f"0   Shop                          {load + offset:#018x} {load:#x} + {offset}\n"
        f"1   Shop                          {load + 39896:#018x} {load:#x} + 39896\n"
        f"2   libdyld.dylib                 0x00000001a1b2c3d4 start + 4\n"
    )


def test_a_frame_named_by_its_address_alone_names_no_function() -> None:
    boost = f" 0# 0x000055D4C11A2B in ./server\n{BOOST.split(chr(10), 1)[1]}"
    trace = parse_stacktrace(boost)
    assert trace is not None
    assert trace.exceptions[0].frames[0] == Frame(None, module="server")
    trace = parse_stacktrace(_unsymbolicated(0x100A18000))
    assert trace is not None
    assert [(f.module, f.function) for f in trace.exceptions[0].frames] == [
        ("Shop", None),
        ("Shop", None),
        ("libdyld.dylib", "start"),
    ]


def test_an_unsymbolicated_crash_is_one_signature_wherever_its_image_was_loaded() -> None:
    placed = GroupingEngine().assign_all(
        [_event(n, _unsymbolicated(load)) for n, load in enumerate((0x100A18000, 0x104C3C000, 0x1028F4000))]
    )
    assert len({a.signature_id for a in placed}) == 1


def _tombstone(site: str, pid: int, build_id: str) -> str:
    """Android's debuggerd (a tombstone, as logcat shows it after its `DEBUG` tag): `#00 pc <offset in the
    image>  <image> (<function>+<offset>) (BuildId: <id>)`, a frame of another thread's stack after it."""
    app = "/data/app/~~Xy12AbC==/com.example.shop-Qw3Er==/lib/arm64/libshop.so"
    libc = "/apex/com.android.runtime/lib64/bionic/libc.so"
    apk = "/data/app/~~Xy12AbC==/com.example.shop-Qw3Er==/base.apk"
    return f"""*** *** *** *** *** *** *** *** *** *** *** *** *** *** *** ***
Build fingerprint: 'google/oriole/oriole:14/AP2A.240905.003/12231197:user/release-keys'
ABI: 'arm64'
pid: {pid}, tid: {pid + 31}, name: RenderThread  >>> com.example.shop <<<
signal 11 (SIGSEGV), code 1 (SEGV_MAPERR), fault addr 0x0000000000000000
Cause: null pointer dereference
    x0  0000000000000000  x1  0000007fc{pid:05x}a0  x2  0000000000000010  x3  0000000000000000
backtrace:
      #00 pc 00000000000a1b2c  {app} ({site}+44) (BuildId: {build_id})
      #01 pc 00000000000a0f10  {app} (Renderer::draw(Frame const&)+120) (BuildId: {build_id})
      #02 pc 0000000000012345  {apk}!libvendor.so (offset 0x1234000) (BuildId: 77aa)
      #03 pc 00000000000d1234  {libc} (__pthread_start(void*)+196) (BuildId: 0a1b2c3d4e5f60718293a4b5c6d7e8f9)

--- --- --- --- --- --- --- --- --- --- --- --- --- --- --- ---
pid: {pid}, tid: {pid}, name: com.example.shop  >>> com.example.shop <<<
backtrace:
      #00 pc 000000000009c0a8  {libc} (__epoll_pwait+8) (BuildId: 0a1b2c3d4e5f60718293a4b5c6d7e8f9)
"""


def test_an_android_tombstones_crashed_stack_is_read() -> None:
    trace = parse_stacktrace(_tombstone("Mesh::upload()", 12001, "aa11bb22cc33dd44"))
    assert trace is not None and trace.runtime == "native"
    (exception,) = trace.exceptions
    assert exception.type == "SIGSEGV"
    app = "/data/app/~~Xy12AbC==/com.example.shop-Qw3Er==/lib/arm64/libshop.so"
    assert list(exception.frames) == [  # each image's path is its file: it says whose the image is
        Frame("Mesh::upload", module="libshop.so", filename=app),
        Frame("Renderer::draw", module="libshop.so", filename=app),
        Frame(None, module="libvendor.so", filename=f"{app.rsplit('/', 3)[0]}/base.apk!libvendor.so"),
        Frame("__pthread_start", module="libc.so", filename="/apex/com.android.runtime/lib64/bionic/libc.so"),
    ]


def test_one_tombstones_crash_site_is_one_signature_and_two_are_two() -> None:
    placed = GroupingEngine().assign_all(
        [
            _event(1, _tombstone("Mesh::upload()", 12001, "aa11bb22cc33dd44")),
            _event(2, _tombstone("Mesh::upload()", 3170, "ee55ff6600778899")),  # another run of another build
            _event(3, _tombstone("Texture::bind(int)", 12001, "aa11bb22cc33dd44")),
        ]
    )
    assert placed[0].signature_id == placed[1].signature_id != placed[2].signature_id
