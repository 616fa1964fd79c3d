"""Valgrind's Memcheck errors, as its manual lays them out ("Explanation of error messages from Memcheck"):
the error's first stack is the crash site, one site is one signature whatever the process id, addresses and
depth, and two sites behind one kind of error are two."""

from __future__ import annotations

import pytest
from crash_texts import crash_event, signatures_of

from rounds_bot.grouping.stacktrace import Frame, parse_stacktrace
from rounds_bot.models import ErrorEvent

PRELOAD = "/usr/lib/x86_64-linux-gnu/valgrind/vgpreload_memcheck-amd64-linux.so"


def _memcheck(site: str, line: int, pid: int, address: int, depth: int = 1) -> str:
    lines = [
        f"=={pid}== Invalid read of size 4",
        f"=={pid}==    at 0x{0x10916C + line:X}: {site} (parser.c:{line})",
    ]
    lines += [f"=={pid}==    by 0x{0x1091A2 + i:X}: handle (server.c:{88 + i})" for i in range(depth)]
    lines += [
        f"=={pid}==    by 0x1091F0: ??? (in /app/shop)",
        f"=={pid}==  Address 0x{address:x} is 4 bytes inside a block of size 10 free'd",
        f"=={pid}==    at 0x483CA3F: free (in {PRELOAD})",
        f"=={pid}==    by 0x109160: reset (parser.c:40)",
        f"=={pid}==  Block was alloc'd at",
        f"=={pid}==    at 0x483B7F3: malloc (in {PRELOAD})",
    ]
    return f"=={pid}== Memcheck, a memory error detector\n=={pid}== Command: ./shop\n=={pid}==\n" + "\n".join(
        lines
    )


def test_a_memcheck_error_is_read_to_its_first_stack() -> None:
    trace = parse_stacktrace(_memcheck("parse", 42, 1234, 0x4A4B044))
    assert trace is not None and trace.runtime == "native"
    error = trace.exceptions[0]
    assert (error.type, error.value) == ("Memcheck: Invalid read of size N", "Invalid read of size 4")
    assert error.frames == (
        Frame("parse", filename="parser.c", lineno=42),
        Frame("handle", filename="server.c", lineno=88),
        Frame(None, module="shop"),
    )


def _event(n: int, stacktrace: str) -> ErrorEvent:
    return crash_event(n, stacktrace, error_type="Invalid read", message="Invalid read of size 4")


def test_one_memcheck_error_site_is_one_signature_and_two_are_two() -> None:
    ids = signatures_of(
        [
            _memcheck("parse", 42, 1234, 0x4A4B044),
            _memcheck("parse", 42, 5678, 0x4A5C088, depth=3),
            _memcheck("lex", 17, 1234, 0x4A4B044),
        ],
        _event,
    )
    assert ids[0] == ids[1] != ids[2]


def _report(pid: int, *lines: str) -> str:
    return "\n".join(
        [f"=={pid}== Memcheck, a memory error detector", f"=={pid}== Command: ./shop", f"=={pid}=="]
    ) + (
        "\n"
        + "\n".join(
            line
            if line.startswith(("==", "thread", "index", "stack", " ", "note", "./", "/", "Caught"))
            else f"=={pid}== {line}"
            for line in lines
        )
    )


def test_a_rust_panic_run_under_valgrind_reads_as_the_panic_as_before() -> None:
    """The panic's frames are what the text is; the leak records Valgrind adds at exit are not the crash."""
    text = _report(
        88,
        "thread 'main' panicked at src/main.rs:5:5:",
        "index out of bounds: the len is 3 but the index is 7",
        "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
        "==88== 24 bytes in 1 blocks are possibly lost in loss record 1 of 2",
        f"==88==    at 0x4848899: malloc (in {PRELOAD})",
        "==88==    by 0x11C2A1: alloc::alloc::alloc (alloc.rs:98)",
        "==88==    by 0x1234AB: std::thread::Thread::new (mod.rs:1234)",
        "==88==    by 0x1234CD: std::rt::init (rt.rs:98)",
    )
    trace = parse_stacktrace(text)
    assert trace is not None and trace.runtime == "rust"
    assert trace.exceptions[0].type == "panic"
    assert trace.exceptions[0].frames[0].filename == "src/main.rs"


def test_a_memcheck_report_then_the_programs_own_backtrace_reads_as_before() -> None:
    """Releases before read the program's `backtrace_symbols` lines: those stay its reading."""
    text = _report(
        77,
        "==77== Invalid read of size 4",
        "==77==    at 0x10916C: parse (parser.c:42)",
        "==77==    by 0x1091A2: main (main.c:5)",
        "Caught SIGSEGV, backtrace:",
        "./server(parse+0x1c) [0x40123c]",
        "./server(main+0x2a) [0x40127a]",
    )
    trace = parse_stacktrace(text)
    assert trace is not None
    assert (trace.exceptions[0].type, trace.exceptions[0].value) == ("crash", "")
    assert trace.exceptions[0].frames == (Frame("parse", module="server"), Frame("main", module="server"))


def test_a_helgrind_report_is_left_to_its_message() -> None:
    """Only Memcheck's errors are read; a thread checker's first stack is where a thread was created."""
    text = "\n".join(
        [
            "==11== Helgrind, a thread error detector",
            "==11== Thread #3 was created",
            "==11==    at 0x49A7A1F: clone (clone.S:100)",
            "==11==    by 0x1092A1: start_workers (pool.c:20)",
            "==11== Possible data race during write of size 4 at 0x10C014 by thread #3",
            "==11==    at 0x1091C6: worker_a (pool.c:11)",
        ]
    )
    assert parse_stacktrace(text) is None


_INTERCEPTED = {
    "leak": ("24 bytes in 3 blocks are definitely lost in loss record 3 of 7", f"malloc (in {PRELOAD})"),
    "free": ("Invalid free() / delete / delete[] / realloc()", "free (vg_replace_malloc.c:872)"),
    "strlen": ("Invalid read of size 1", "strlen (vg_replace_strmem.c:494)"),
    "overlap": (
        "Source and destination overlap in memcpy(0x4a4b040, 0x4a4b044, 16)",
        "memcpy (vg_replace_strmem.c:1123)",
    ),
}


@pytest.mark.parametrize("kind", sorted(_INTERCEPTED))
def test_valgrinds_own_interceptor_frames_are_not_the_site(kind: str) -> None:
    """Valgrind replaces malloc, free and the string functions with its own (`vgpreload_*`,
    `vg_replace_*.c`): the site is the program's first frame below them."""
    error, top = _INTERCEPTED[kind]

    def text(site: str) -> str:
        return _report(
            11,
            f"==11== {error}",
            f"==11==    at 0x4848899: {top}",
            f"==11==    by 0x1091A2: {site} (cache.c:55)",
            "==11==    by 0x109245: main (main.c:30)",
        )

    trace = parse_stacktrace(text("cache_put"))
    assert trace is not None and trace.exceptions[0].frames[0] == Frame(
        "cache_put", filename="cache.c", lineno=55
    )
    ids = signatures_of([text("cache_put"), text("cache_get")], _event)
    assert ids[0] != ids[1]


def test_a_memcheck_type_masks_addresses_and_a_leaks_direct_and_indirect_split() -> None:
    overlap = parse_stacktrace(
        _report(
            1,
            "==1== Source and destination overlap in memcpy(0x4a4b040, 0x4a4b044, 16)",
            "==1==    at 0x1091E9: copy (buf.c:17)",
        )
    )
    assert overlap is not None
    assert overlap.exceptions[0].type == "Memcheck: Source and destination overlap in memcpy(0x..., 0x..., N)"
    types = set()
    for amount in ("24", "40 (32 direct, 8 indirect)"):
        leak = parse_stacktrace(
            _report(
                1,
                f"==1== {amount} bytes in 3 blocks are definitely lost in loss record 3 of 7",
                "==1==    at 0x1091E9: put (c.c:5)",
            )
        )
        assert leak is not None
        types.add(leak.exceptions[0].type)
    assert types == {"Memcheck: N bytes in N blocks are definitely lost in loss record N of N"}


def test_a_memcheck_frame_of_a_compilers_clone_is_named_without_the_clone() -> None:
    """GCC's demangler prints a clone as `[clone .isra.0]` behind the arguments."""
    trace = parse_stacktrace(
        _report(
            1,
            "==1== Invalid write of size 8",
            "==1==    at 0x10A1B2: Buffer::append(Buffer*, unsigned long) [clone .isra.0] [clone .cold]"
            " (buffer.cc:42)",
        )
    )
    assert trace is not None and trace.exceptions[0].frames[0].function == "Buffer::append"


#: glibc's thread-local storage of a thread `pthread_create` made, which Memcheck reports as possibly lost at
#: exit in every threaded program: the smallest record, printed first
_GLIBC_TLS_RECORD = (
    "HEAP SUMMARY:",
    "    in use at exit: 1,312 bytes in 3 blocks",
    "288 bytes in 1 blocks are possibly lost in loss record 1 of 2",
    "   at 0x484DA83: calloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)",
    "   by 0x40147D9: allocate_dtv (dl-tls.c:375)",
    "   by 0x4C0E7B4: pthread_create@@GLIBC_2.34 (pthread_create.c:647)",
    "   by 0x109245: start_workers (pool.c:30)",
    "   by 0x109300: main (main.c:12)",
)


def _lines(pid: int, *lines: str) -> str:
    """A Memcheck report of these lines, each behind the process id as Valgrind prints it."""
    return _report(pid, *(f"=={pid}== {line}" for line in lines))


def _jump(site: str, pid: int) -> str:
    """A call through a null function pointer: memcheck's `Err_Jump`, then the signal that ends the process
    (coregrind's `m_signals.c`), then the leak records of the exit."""
    return _lines(
        pid,
        "Jump to the invalid address stated on the next line",
        "   at 0x0: ???",
        f"   by 0x1091E9: {site} (handler.c:17)",
        "   by 0x109245: main (main.c:30)",
        " Address 0x0 is not stack'd, malloc'd or (recently) free'd",
        "Process terminating with default action of signal 11 (SIGSEGV)",
        " Bad permissions for mapped region at address 0x0",
        "   at 0x0: ???",
        f"   by 0x1091E9: {site} (handler.c:17)",
        *_GLIBC_TLS_RECORD,
    )


def _stack_overflow(site: str, pid: int, depth: int) -> str:
    return _lines(
        pid,
        f"Stack overflow in thread #1: can't grow stack to 0x{0x1FFE801000 + pid:x}",
        "Process terminating with default action of signal 11 (SIGSEGV)",
        f" Access not within mapped region at address 0x{0x1FFE801FF8 + pid:X}",
        f"Stack overflow in thread #1: can't grow stack to 0x{0x1FFE801000 + pid:x}",
        *(
            f"   {'at' if i == 0 else 'by'} 0x{0x109139 + i:X}: {site} (rec.c:{3 + min(i, 1)})"
            for i in range(depth)
        ),
        *_GLIBC_TLS_RECORD,
    )


def test_a_crash_is_read_to_the_terminating_signals_stack_not_a_leak_record() -> None:
    """Whatever error came first, the stack of the signal that ended the process is where it crashed."""
    trace = parse_stacktrace(_jump("on_request", 11))
    assert trace is not None
    error = trace.exceptions[0]
    assert error.type == "Memcheck: Process terminating with default action of signal N (SIGSEGV)"
    assert error.frames == (Frame(None), Frame("on_request", filename="handler.c", lineno=17))
    overflow = parse_stacktrace(_stack_overflow("walk", 11, 2))
    assert overflow is not None
    assert overflow.exceptions[0].frames[0] == Frame("walk", filename="rec.c", lineno=3)


def test_crashes_memcheck_does_not_list_are_one_signature_per_site() -> None:
    ids = signatures_of(
        [
            _jump("on_request", 11),
            _jump("on_request", 12),
            _jump("on_close", 11),
            _stack_overflow("walk", 11, 2),
            _stack_overflow("walk", 12, 9),
            _stack_overflow("parse_expr", 11, 2),
        ],
        _event,
    )
    assert ids[0] == ids[1] != ids[2]
    assert ids[3] == ids[4] != ids[5]
    assert len({ids[0], ids[2], ids[3], ids[5]}) == 4


@pytest.mark.parametrize(
    "kind",
    [
        "realloc() with size 0",
        "Argument 'size' of function malloc has a fishy (possibly negative) value: -1",
        "Mismatched free() / delete / delete []",
    ],
)
def test_a_listed_error_before_the_exit_leaks_is_read_not_a_leak(kind: str) -> None:
    def text(site: str) -> str:
        return _lines(
            11,
            kind,
            f"   at 0x4848899: free (in {PRELOAD})",
            f"   by 0x1091A2: {site} (cache.c:55)",
            *_GLIBC_TLS_RECORD,
        )

    trace = parse_stacktrace(text("cache_put"))
    assert trace is not None and trace.exceptions[0].value == kind
    assert trace.exceptions[0].frames[0] == Frame("cache_put", filename="cache.c", lineno=55)
    ids = signatures_of([text("cache_put"), text("cache_get")], _event)
    assert ids[0] != ids[1]


def test_an_error_of_an_unlisted_kind_leaves_the_report_to_its_message_not_to_a_leak() -> None:
    """Valgrind 3.22's `--track-fds=all` error is not a Memcheck kind read here: no record of the exit is the
    crash either."""
    text = _lines(
        11,
        "File descriptor 3: /tmp/x is already closed",
        "   at 0x4A2B1C7: close (close.c:27)",
        "   by 0x1091A2: shutdown_client (net.c:55)",
        *_GLIBC_TLS_RECORD,
    )
    assert parse_stacktrace(text) is None


def _uninitialised_then(pid: int, site: str) -> str:
    """A warning every run prints, then the error that crashed this run."""
    return _lines(
        pid,
        "Conditional jump or move depends on uninitialised value(s)",
        "   at 0x4A1B2C3: load_config (config.c:77)",
        "   by 0x109245: main (main.c:30)",
        "Syscall param write(buf) points to uninitialised byte(s)",
        "   at 0x4C2F1A7: write (write.c:26)",
        "   by 0x109266: flush_log (log.c:12)",
        "Invalid read of size 4",
        f"   at 0x10916C: {site} (parser.c:42)",
        "   by 0x109245: main (main.c:30)",
        *_GLIBC_TLS_RECORD,
    )


def test_an_invalid_access_is_read_before_the_uninitialised_value_warnings_of_every_run() -> None:
    ids = signatures_of(
        [
            _uninitialised_then(11, "parse"),
            _uninitialised_then(12, "parse"),
            _uninitialised_then(11, "lex"),
        ],
        _event,
    )
    assert ids[0] == ids[1] != ids[2]
    trace = parse_stacktrace(_uninitialised_then(11, "parse"))
    assert trace is not None and trace.exceptions[0].frames[0].function == "parse"


def test_an_uninitialised_value_is_read_before_the_leaks() -> None:
    text = _lines(
        11,
        "Use of uninitialised value of size 8",
        "   at 0x4A1B2C3: format_price (price.c:9)",
        *_GLIBC_TLS_RECORD,
    )
    trace = parse_stacktrace(text)
    assert trace is not None and trace.exceptions[0].frames[0].function == "format_price"


def _leaks(pid: int, *records: tuple[str, str]) -> str:
    lines: list[str] = list(_GLIBC_TLS_RECORD)
    for number, (amount, site) in enumerate(records, start=2):
        lines += [
            f"{amount} bytes in 1 blocks are definitely lost in loss record {number} of {len(records) + 1}",
            f"   at 0x4848899: malloc (in {PRELOAD})",
            f"   by 0x1091A2: {site} (cache.c:55)",
        ]
    return _lines(pid, *lines, "LEAK SUMMARY:", "   definitely lost: 1,064 bytes in 2 blocks")


def test_a_leak_only_report_is_read_to_its_largest_definite_leak() -> None:
    """Memcheck prints the records smallest first (`mc_leakcheck.c`): the largest definite leak is last."""
    trace = parse_stacktrace(_leaks(11, ("40", "session_new"), ("1,024", "cache_put")))
    assert trace is not None
    assert trace.exceptions[0].value == "1,024 bytes in 1 blocks are definitely lost in loss record 3 of 3"
    assert trace.exceptions[0].frames[0].function == "cache_put"
    ids = signatures_of([_leaks(11, ("1,024", "cache_put")), _leaks(12, ("2,048", "session_new"))], _event)
    assert ids[0] != ids[1]


def test_a_report_of_only_possible_leaks_is_left_to_its_message() -> None:
    assert parse_stacktrace(_lines(11, *_GLIBC_TLS_RECORD)) is None
