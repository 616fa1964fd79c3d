"""glibc's frames in a Memcheck report made where the C library's debug information is installed (Debian's
and Ubuntu's valgrind package pulls libc6-dbg): Valgrind names their sources by base name, `raise.c`,
`abort.c`, and their versioned symbols whole, `pthread_kill@@GLIBC_2.34`. They are the C library's, so an
abort() is grouped by the app's frame that called it."""

from __future__ import annotations

from datetime import UTC, datetime

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.stacktrace import Frame, parse_stacktrace
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)
LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"
PRELOAD = "/usr/lib/x86_64-linux-gnu/valgrind/vgpreload_memcheck-amd64-linux.so"


def _report(pid: int, *lines: str) -> str:
    head = [f"=={pid}== Memcheck, a memory error detector", f"=={pid}== Command: ./shop", f"=={pid}== "]
    return "\n".join([*head, *(f"=={pid}== {line}" for line in lines)])


def _abort(site: str, pid: int, debug_info: bool = True) -> str:
    """An assertion failing in `site`: glibc's `__assert_fail` aborts, the signal ends the process."""

    def libc(function: str, source: str) -> str:
        return f"   by 0x48A0A7C: {function} ({source if debug_info else 'in ' + LIBC})"

    return _report(
        pid,
        "Process terminating with default action of signal 6 (SIGABRT)",
        libc("__pthread_kill_implementation", "pthread_kill.c:44").replace("by", "at"),
        libc("__pthread_kill_internal", "pthread_kill.c:78"),
        libc("pthread_kill@@GLIBC_2.34", "pthread_kill.c:89"),
        libc("raise", "raise.c:26"),
        libc("abort", "abort.c:79"),
        libc("__assert_fail_base.cold", "assert.c:92"),
        libc("__assert_fail", "assert.c:101"),
        f"   by 0x109199: {site} (cart.c:12)",
        "   by 0x1091C5: main (main.c:20)",
    )


def _printf_segv(site: str, pid: int) -> str:
    """A null string printed with `%s`: Valgrind's `strlen`, then glibc's formatting, then the app."""
    return _report(
        pid,
        "Invalid read of size 1",
        "   at 0x484ED16: strlen (vg_replace_strmem.c:503)",
        "   by 0x48E2D14: __vfprintf_internal (vfprintf-internal.c:1517)",
        "   by 0x48CC79E: printf (printf.c:33)",
        f"   by 0x109199: {site} (log.c:12)",
        "   by 0x1091C5: main (main.c:20)",
        " Address 0x0 is not stack'd, malloc'd or (recently) free'd",
    )


def _event(n: int, stacktrace: str) -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service="shop",
        error_type="crash",
        message="Process terminating",
        stacktrace=stacktrace,
    )


def test_glibcs_frames_named_by_their_sources_base_names_are_the_c_librarys() -> None:
    trace = parse_stacktrace(_abort("check_cart", 11))
    assert trace is not None
    frames = trace.exceptions[0].frames
    assert [frame.in_app for frame in frames[:7]] == [False] * 7
    assert frames[7] == Frame("check_cart", filename="cart.c", lineno=12)


def test_a_versioned_glibc_symbol_is_named_without_its_version() -> None:
    trace = parse_stacktrace(_abort("check_cart", 11))
    assert trace is not None
    assert trace.exceptions[0].frames[2] == Frame(
        "pthread_kill", filename="pthread_kill.c", lineno=89, in_app=False
    )


def test_aborts_at_two_sites_under_glibcs_debug_info_are_two_signatures() -> None:
    placed = GroupingEngine().assign_all(
        [_event(1, _abort("check_cart", 11)), _event(2, _abort("check_user", 12))]
    )
    assert placed[0].signature_id != placed[1].signature_id


def test_an_abort_is_one_signature_with_or_without_glibcs_debug_info() -> None:
    """Whether libc6-dbg is installed changes how glibc's frames print, not the site."""
    placed = GroupingEngine().assign_all(
        [
            _event(1, _abort("check_cart", 11)),
            _event(2, _abort("check_cart", 12, debug_info=False)),
            _event(3, _abort("check_cart", 13)),
        ]
    )
    assert placed[0].signature_id == placed[2].signature_id
    assert placed[1].signature_id == placed[0].signature_id


def test_a_crash_in_glibcs_printf_is_grouped_by_the_apps_caller() -> None:
    placed = GroupingEngine().assign_all(
        [_event(1, _printf_segv("log_user", 11)), _event(2, _printf_segv("log_cart", 12))]
    )
    assert placed[0].signature_id != placed[1].signature_id


def test_an_apps_own_source_named_as_no_glibc_file_stays_the_apps() -> None:
    trace = parse_stacktrace(_abort("check_cart", 11))
    assert trace is not None
    assert trace.exceptions[0].frames[8] == Frame("main", filename="main.c", lineno=20)
