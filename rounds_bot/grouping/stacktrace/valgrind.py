"""Valgrind's Memcheck errors, read as a native stack.

    ==1234== Invalid read of size 4
    ==1234==    at 0x10916C: parse (parser.c:42)
    ==1234==    by 0x1091A2: handle (server.c:88)
    ==1234==  Address 0x4a4b044 is 4 bytes inside a block of size 10 free'd
    ==1234==    at 0x483CA3F: free (in /usr/lib/x86_64-linux-gnu/valgrind/vgpreload_memcheck-amd64-linux.so)

The layout is the Valgrind manual's (Memcheck, "Explanation of error messages from Memcheck"): every line
behind the process id, `==<pid>==`; an error's kind, then its stack, the first frame `at`, its callers `by`,
each an address, the function (`???` when Valgrind cannot name it) and `(file:line)` or `(in <image>)`. The
stacks after it (where the block was freed, `Block was alloc'd at`) start with `at` again: an error's first
stack is its site, as a sanitizer's. Memcheck keeps running after an error, so one report holds many: the
warnings a program prints on every run, the crash, the leak records of the exit. The crash is read
(`_chosen`): the stack of the signal that ended the program (coregrind's `m_signals.c`, `Process terminating
with default action of signal 11 (SIGSEGV)`), else the first invalid access (`mc_errors.c`'s invalid read,
write or free, jump, overlap, fishy argument), else the first uninitialised value; a leak record only in a
report of nothing but leaks, the largest definite one (`mc_leakcheck.c`), and nothing else: a report whose
error is of a kind none of these names is left to its message. Valgrind runs the program with its own
malloc, free and string functions (the `vgpreload_<tool>-<platform>.so` images, built from its
`vg_replace_malloc.c` and `vg_replace_strmem.c`): those frames are Valgrind's, and the site is the program's
first frame below them. glibc's frames are the C library's: where its debug information is installed Valgrind
names their sources by base name (`abort (abort.c:79)`, no `../sysdeps/` for the path rules to know) and a
versioned symbol whole (`pthread_kill@@GLIBC_2.34`, read as `pthread_kill`): both mark the frame a library's.
A GCC clone is named as its demangler prints it, `f(int) [clone .isra.0]`: the function is `f`.

The text is read so only when no other runtime's parser reads it (`stacktrace.parse_stacktrace`): a program
run under Valgrind prints its own crash too (a Rust panic, `backtrace_symbols`), which releases before read
and still read the same. Only Memcheck's errors are read: the thread checkers' (Helgrind's, DRD's, whose
banner names them) start with where threads were created, not with the race, and are left to the message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rounds_bot.grouping.stacktrace import native
from rounds_bot.grouping.stacktrace.model import NEWLY_READ, Frame, ParsedException, ParsedTrace

_FRAME = re.compile(
    r"^==\d{1,10}==\s+(?P<word>at|by) 0x[0-9A-Fa-f]{1,16}: (?P<fn>.{1,2048}?) "
    r"\((?:in (?P<image>[^()]{1,1024})|(?P<file>[^():\s]{1,1024}):(?P<line>\d{1,9}))\)$"
)
#: a frame Valgrind knows nothing of, not even its image, `at 0x0: ???` (the address a null pointer jumped to)
_UNKNOWN_FRAME = re.compile(r"^==\d{1,10}==\s+(?P<word>at|by) 0x[0-9A-Fa-f]{1,16}: \?\?\?$")
#: the errors that are the crash's cause, by the first words of memcheck's `mc_errors.c` (`MC_(pp_Error)`):
#: an invalid read, write, free, alignment or pool address, a mismatched free, a jump to an invalid address,
#: overlapping copies, a fishy argument, a `realloc` of size 0; and coregrind's `m_signals.c`'s stack overflow
_INVALID = (
    "Invalid ",
    "Mismatched free",
    "Jump to the invalid address",
    "Source and destination overlap",
    "Argument '",
    "realloc() with size 0",
    "Illegal memory pool address",
    "Stack overflow in thread ",
)
#: the uninitialised-value errors (`mc_errors.c`): a program that prints one prints it on every run, before
#: whatever crashes it, so they are read only when no invalid access is in the report
_UNINITIALISED = (
    "Conditional jump or move depends on uninitialised",
    "Use of uninitialised value",
    "Syscall param ",
    "Uninitialised byte(s) found",
)
#: a system call's argument pointing to memory not mapped is an invalid access, not an uninitialised value
_UNADDRESSABLE = "unaddressable"
#: coregrind's `m_signals.c`, when a signal ends the program: its stack follows, or the stack overflow's line
_TERMINATION = "Process terminating with default action of signal "
_STACK_OVERFLOW = "Stack overflow in thread "
_HEADER = re.compile(r"^==\d{1,10}== (?P<kind>\S.{0,2047})$")
#: a leak record, `24 bytes in 1 blocks are definitely lost in loss record 3 of 10`
_LEAK = re.compile(
    r"^[\d,]{1,20} (?:\([\d,]{1,20} direct, [\d,]{1,20} indirect\) )?bytes in [\d,]{1,20} blocks are "
)
#: the leaks memcheck is sure of; the others (possibly lost, still reachable) include the C library's own,
#: such as the thread-local storage of every thread `pthread_create` made
_DEFINITE = "are definitely lost in loss record"
#: a leak's split between the blocks lost and those they point to, printed only when some are pointed to
_LEAK_SPLIT = re.compile(r" \([\d,]{1,20} direct, [\d,]{1,20} indirect\)")
#: an address (masked as `0x...`), or a size or count (`N`): each changes from run to run
_VARYING = re.compile(r"0x[0-9A-Fa-f]{1,16}|\d[\d,]*")
#: a tool's banner, `==1234== Memcheck, a memory error detector`
_BANNER = re.compile(r"^==\d{1,10}== (?P<tool>[\w-]{1,40}), a ")
#: the name Valgrind gives a function it cannot name
_UNNAMED = "???"
#: GCC's demangler's clone suffixes, `[clone .isra.0]` (libiberty's `cp-demangle.c`)
_CLONE = re.compile(r"(?: \[clone [^\[\]]{1,64}\])+$")
#: Valgrind's replacement functions' images and sources (module docstring)
_PRELOAD_IMAGE = "vgpreload_"
_REPLACE_SOURCE = "vg_replace_"
#: a glibc symbol's version, as Valgrind names a versioned symbol whole (`pthread_kill@@GLIBC_2.34`, the
#: default version; `memcpy@GLIBC_2.2.5`, an older one): glibc's `Versions` files and the GNU linker's
#: symbol versioning
_GLIBC_VERSION = re.compile(r"@@?GLIBC_[\d.]{1,16}$")
#: glibc's own source files, by base name, as Valgrind names a frame's source (no directory, unless run with
#: `--fullpath-after`) when the C library's debug information is installed (Debian's and Ubuntu's valgrind
#: package pulls libc6-dbg): from glibc's source tree, the files of the paths a crash goes through (`assert/`,
#: `stdlib/` abort and exit, `signal/`, `nptl/`, `csu/` and `sysdeps/nptl/` start-up, `stdio-common/` and
#: `libio/` formatting and streams) and the kernel call stubs (`sysdeps/unix/sysv/linux/`)
_GLIBC_SOURCES = frozenset(
    {
        "assert.c", "abort.c", "raise.c", "exit.c", "cxa_atexit.c", "pthread_kill.c", "pthread_create.c",
        "pthread_mutex_lock.c", "pthread_cond_wait.c", "futex-internal.c", "lowlevellock.c",
        "libc-start.c", "libc_start_call_main.h", "libc-tls.c", "dl-init.c", "dl-fini.c", "dl-runtime.c",
        "vfprintf-internal.c", "vfprintf.c", "printf.c", "fprintf.c", "sprintf.c", "snprintf.c",
        "vsnprintf.c", "iovsprintf.c", "printf_fp.c", "printf-parse.h", "vfscanf-internal.c",
        "isoc99_sscanf.c", "ioputs.c", "iofwrite.c", "iofputs.c", "iofclose.c", "iofopen.c", "fileops.c",
        "genops.c", "qsort.c", "msort.c", "getenv.c", "strtol_l.c", "strtod_l.c", "clone.S", "clone3.S",
        "syscall-template.S", "killpg.c", "sigaction.c", "libc_fatal.c", "fortify_fail.c", "chk_fail.c",
        "stack_chk_fail.c",
    }
)  # fmt: skip
#: glibc's string and memory functions, written in assembly per processor (`sysdeps/x86_64/multiarch/`:
#: `strlen-avx2.S`, `memmove-vec-unaligned-erms.S`, `strcmp-sse2-unaligned.S`)
_GLIBC_STRING_SOURCE = re.compile(r"^(?:str|mem|stp|wcs|wmem|rawmem)[\w-]{0,64}\.S$")


@dataclass
class _Message:
    """One line of the report not indented behind the process id (an error's kind, a summary's title) and
    the first stack printed under it."""

    kind: str
    frames: list[Frame] = field(default_factory=list)
    #: whether a stack was printed under it (its frames may all be Valgrind's own)
    stacked: bool = False
    #: whether that stack has ended: what follows (where a block was freed) is not where the error was
    closed: bool = False


def is_frame_line(line: str) -> bool:
    return line.startswith("==") and (_FRAME.match(line) or _UNKNOWN_FRAME.match(line)) is not None


def parse(lines: list[str]) -> ParsedTrace | None:
    """Memcheck's report, read to the stack of its crash (`_chosen`); None when the text holds none, no rule
    reads it, or it is another tool's."""
    messages = _messages(lines)
    chosen = None if messages is None else _chosen(messages)
    if chosen is None:
        return None
    kind, frames = chosen
    masked = _VARYING.sub(_masked, _LEAK_SPLIT.sub("", kind))
    exception = ParsedException("Memcheck: " + masked, kind, tuple(frames), "raised")
    return ParsedTrace("native", (exception,), notes=(NEWLY_READ,))


def _messages(lines: list[str]) -> list[_Message] | None:
    """The report's messages, each with its first stack; None for another tool's report."""
    messages: list[_Message] = []
    for line in lines:
        if not line.startswith("=="):
            continue
        banner = _BANNER.match(line)
        if banner is not None and banner["tool"] != "Memcheck":
            return None  # a thread checker's report (module docstring)
        found = _FRAME.match(line) or _UNKNOWN_FRAME.match(line)
        last = messages[-1] if messages else None
        if found is None:
            head = _HEADER.match(line)
            if head is not None:
                messages.append(_Message(head["kind"]))
            elif last is not None and last.stacked:
                last.closed = True  # an indented note ends the stack: `Address 0x... is ...`
            continue
        if last is None or last.closed or (last.stacked and found["word"] == "at"):
            if last is not None:
                last.closed = last.stacked
            continue
        last.stacked = True
        frame = _frame(found) if found.re is _FRAME else Frame(None)
        if frame is not None:
            last.frames.append(frame)
    return messages


def _chosen(messages: list[_Message]) -> tuple[str, list[Frame]] | None:
    """The crash's kind and stack: the stack of the signal that ended the program, else the first invalid
    access's, else the first uninitialised value's; only a report of nothing but leaks is read to a leak, its
    largest definite one (memcheck's `mc_leakcheck.c` prints the records smallest first, so the last). A
    report whose only error is of a kind none of these names reads no trace: a leak of the exit is not it."""
    for at, message in enumerate(messages):
        if message.kind.startswith(_TERMINATION):
            after = messages[at + 1] if at + 1 < len(messages) else None
            if message.frames:
                return message.kind, message.frames
            if after is not None and after.kind.startswith(_STACK_OVERFLOW) and after.frames:
                return message.kind, after.frames  # `m_signals.c` names the overflow above its stack
    for rank in (_is_invalid, _is_uninitialised):
        for message in messages:
            if rank(message.kind) and message.frames:
                return message.kind, message.frames
    if any(_is_error(message) for message in messages):
        return None
    definite = [m for m in messages if _LEAK.match(m.kind) and _DEFINITE in m.kind and m.frames]
    return (definite[-1].kind, definite[-1].frames) if definite else None


def _is_invalid(kind: str) -> bool:
    if kind.startswith("Syscall param "):
        return _UNADDRESSABLE in kind
    return kind.startswith(_INVALID)


def _is_uninitialised(kind: str) -> bool:
    return kind.startswith(_UNINITIALISED) and _UNADDRESSABLE not in kind


def _is_error(message: _Message) -> bool:
    """Any error but a leak: a kind read here, a termination, or a message of another kind with a stack."""
    if _LEAK.match(message.kind):
        return False
    kind = message.kind
    return message.stacked or kind.startswith(_TERMINATION) or _is_invalid(kind) or _is_uninitialised(kind)


def _frame(found: re.Match[str]) -> Frame | None:
    """The frame, None for Valgrind's own replacement of a library function (module docstring)."""
    image = found["image"].rsplit("/", 1)[-1] if found["image"] else None
    if (image or "").startswith(_PRELOAD_IMAGE) or (found["file"] or "").startswith(_REPLACE_SOURCE):
        return None
    name = found["fn"]
    glibc = _GLIBC_VERSION.search(name) is not None or _is_glibc_source(found["file"] or "")
    function = (
        None if name == _UNNAMED else native.bare_function(_CLONE.sub("", _GLIBC_VERSION.sub("", name)))
    )
    return Frame(
        function,
        module=image,
        filename=found["file"],
        lineno=int(found["line"]) if found["line"] else None,
        # the path rules know glibc by its build's directories (`../sysdeps/`), which Valgrind leaves out
        in_app=False if glibc else None,
    )


def _is_glibc_source(filename: str) -> bool:
    """Whether a frame's source, named by base name as Valgrind prints it, is one of glibc's own files; a
    path with a directory is left to the path rules."""
    return "/" not in filename and (
        filename in _GLIBC_SOURCES or _GLIBC_STRING_SOURCE.match(filename) is not None
    )


def _masked(found: re.Match[str]) -> str:
    return "0x..." if found[0].startswith("0x") else "N"
