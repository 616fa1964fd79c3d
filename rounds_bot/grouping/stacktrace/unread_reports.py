"""Reports no runtime's frames are found in, read only when nothing else reads a text: Apple's JSON crash
reports (`apple_ips`), the kernel's segfault line (`kernel_segfault`), PHP's fatal errors without a stack
(`php_fatal`). Asked last, so every text read before reads as before; each notes `NEWLY_READ`, so the
signature an earlier release made of the message keeps receiving them."""

from __future__ import annotations

from rounds_bot.grouping.stacktrace import apple_ips, kernel_segfault, php_fatal
from rounds_bot.grouping.stacktrace.model import ParsedTrace


def parse(text: str, lines: list[str]) -> ParsedTrace | None:
    return apple_ips.parse(text) or kernel_segfault.parse(lines) or php_fatal.parse(lines)
