"""PHP's fatal errors that carry no stack: a memory limit or time limit hit, a parse error.

    PHP Fatal error:  Allowed memory size of 134217728 bytes exhausted (tried to allocate 20480 bytes)
        in /app/src/Cart.php on line 12                                                          (one line)
    [01-Mar-2026 12:00:01 UTC] PHP Fatal error:  Maximum execution time of 30 seconds exceeded
        in /app/src/Report.php on line 40                                                        (one line)

php-src's `php_error_cb` writes an error as `%s: %s in %s on line %d` (its kind, message, file, line) and logs
it behind `PHP ` (`php_log_err_with_severity`, the error log's time before it: `php`'s `_ERROR_LOG_TIME`). No
stack follows: the file and line are the site. A frame's key reads no line number (`grouping.frames`), so the
frame is named by its line (`<line 12>`): two lines that exhaust memory are two problems, one line asking
for another size is one (the message's sizes are left to the message). An uncaught exception's line
(`Uncaught ...`) is `php`'s, which reads its stack. A message may say ` in ` itself (`Cannot redeclare foo()
(previously declared in /app/a.php:3) in /app/b.php on line 5`): the file is after the last ` in ` before
` on line N` at the line's end, found from the end, so a long line is read in one pass. The file is PHP's
(`.php`, `.inc`, `.phtml`, or an absolute path: `/app/src/Cart.php(45) : eval()'d code`), so a tool's
`Parse error: ... in settings.yaml on line 3` is left to its message. nginx logs what PHP-FPM wrote to its
stderr (`FastCGI sent in stderr: "PHP message: PHP Fatal error:  ... on line 12" while reading response header
from upstream`, ngx_http_fastcgi_module's message, each of PHP's lines behind `PHP message: `): each is read
as PHP's. No release before read such a text (`NEWLY_READ`).
"""

from __future__ import annotations

import re

from rounds_bot.grouping.stacktrace.model import NEWLY_READ, Frame, ParsedException, ParsedTrace

#: the kinds of error that stop the script (php-src's `E_ERROR`, `E_PARSE`, `E_CORE_ERROR`, `E_COMPILE_ERROR`
#: and `E_RECOVERABLE_ERROR` as `php_error_cb` names them), after the error log's time and `PHP `
_HEAD = re.compile(
    r"^(?:\[[^\]]{1,64}\] )?(?:PHP )?(?P<kind>Fatal error|Parse error|Recoverable fatal error)"
    r":\s{1,2}(?!Uncaught )"
)
_ON_LINE = " on line "
#: nginx's line for what a FastCGI server wrote to stderr, and PHP-FPM's mark before each line of PHP's
_NGINX_STDERR = 'FastCGI sent in stderr: "'
_RELAYED = "PHP message: "
_PHP_FILE_ENDS = (".php", ".inc", ".phtml")
_MAX_FILE_CHARS = 1024


def parse(lines: list[str]) -> ParsedTrace | None:
    """The first fatal error line's site, or None when no line is one."""
    for line in lines:
        for message in _messages(line) if _ON_LINE in line else ():
            error = _fatal(message)
            if error is not None:
                return ParsedTrace("php", (error,), notes=(NEWLY_READ,))
    return None


def _messages(line: str) -> list[str]:
    """PHP's lines in a log line: the line itself, or each one nginx relayed from PHP-FPM."""
    at = line.find(_NGINX_STDERR)
    if at < 0:
        return [line.strip()]
    relayed = line[at + len(_NGINX_STDERR) :].split(_RELAYED)[1:]
    # the quoted text ends at nginx's closing quote (before its ` while ...` context), or where it cut the
    # line
    return [message.split('" while ', 1)[0].rstrip().rstrip('";').rstrip() for message in relayed]


def _fatal(text: str) -> ParsedException | None:
    """The error of one of PHP's fatal error lines (`kind: message in file on line N`), or None."""
    head = _HEAD.match(text)
    on_line = text.rfind(_ON_LINE)
    number = text[on_line + len(_ON_LINE) :]
    if head is None or on_line < 0 or not (number.isascii() and number.isdigit()) or len(number) > 9:
        return None
    file_at = text.rfind(" in ", head.end(), on_line)
    value, filename = text[head.end() : file_at], text[file_at + 4 : on_line]
    if file_at < 0 or not value.strip() or not _is_php_file(filename):
        return None
    site = Frame(function=f"<line {number}>", filename=filename, lineno=int(number))
    return ParsedException(head["kind"], value, (site,))


def _is_php_file(filename: str) -> bool:
    """Whether PHP names the file so: a script's path (absolute, or ending as PHP's files do)."""
    if not filename or len(filename) > _MAX_FILE_CHARS or filename[0].isspace():
        return False
    absolute = filename.startswith("/") or (filename[1:3] == ":\\" and filename[0].isalpha())
    return absolute or filename.lower().endswith(_PHP_FILE_ENDS)
