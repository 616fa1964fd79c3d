"""The kernel's line for a process it killed with SIGSEGV, as `dmesg` and the journal show it.

    app[1234]: segfault at 0 ip 000055d5c0a01234 sp 00007ffc1a2b3c40 error 4 in app[55d5c0a00000+2000]
    [ 812.123456] app[1234]: segfault at 8 ip 00007f3a1b2c3d4e sp 00007ffd1e2f3a40 error 4
        in libc.so.6[7f3a1b200000+195000] likely on CPU 3 (core 3, socket 0)          (one line)

Linux's `show_signal_msg` (arch/x86/mm/fault.c) prints the command, pid, fault address, instruction pointer,
stack pointer and error code, then `print_vma_addr` (mm/memory.c) the mapping the instruction was in: its
file's base name, start and size (`%s%s[%lx+%lx]`), and in current kernels the instruction's offset in that
file first (`%pD[%lx,%lx+%lx]`: `libc-2.31.so[8c4f6,7f3a1b200000+195000]`). The pid, addresses and the
mapping's start change with every run (ASLR); the instruction's offset does not: the image and that offset are
the site, one frame (a rebuilt binary moves it). The offset is the one the kernel printed in the file, else
the one in the mapping (`ip` less its start; a mapping starts at a fixed offset of its file, so it too names
one instruction of one build). An `ip` before the mapping printed is no line the kernel wrote. No release
before read such a line (`NEWLY_READ`).
"""

from __future__ import annotations

import re

from rounds_bot.grouping.stacktrace.model import NEWLY_READ, Frame, ParsedException, ParsedTrace

_SEGFAULT = re.compile(
    r"(?:^|\s)(?P<comm>\S[^\[]{0,15}?)\[\d{1,10}\]: segfault at (?P<address>[0-9a-f]{1,16}) "
    r"ip (?P<ip>[0-9a-f]{1,16}) sp [0-9a-f]{1,16} error (?P<error>[0-9a-f]{1,8})"
    r" in (?P<image>[^\s\[]{1,256})\[(?:(?P<file_offset>[0-9a-f]{1,16}),)?(?P<start>[0-9a-f]{1,16})"
    r"\+[0-9a-f]{1,16}\]"
)


def parse(lines: list[str]) -> ParsedTrace | None:
    """The first segfault line's site, or None when no line is one."""
    for line in lines:
        segfault = _SEGFAULT.search(line) if ": segfault at " in line else None
        offset = _offset(segfault) if segfault is not None else None
        if segfault is not None and offset is not None:
            site = Frame(function=f"+0x{offset:x}", module=segfault["image"])
            error = ParsedException("SIGSEGV", f"segfault at {segfault['address']}", (site,))
            return ParsedTrace("native", (error,), notes=(NEWLY_READ,))
    return None


def _offset(segfault: re.Match[str]) -> int | None:
    """The instruction's offset in its file, as the kernel printed it, else in its mapping (module docstring);
    None when `ip` is before the mapping."""
    if segfault["file_offset"]:
        return int(segfault["file_offset"], 16)
    in_mapping = int(segfault["ip"], 16) - int(segfault["start"], 16)
    return in_mapping if in_mapping >= 0 else None
