"""The masking rules of message normalisation: which values in a message are masked, and why.

Each rule (`mask_rule.MaskRule`) has a name, the kinds of character its matches can begin with, a
placeholder (None for a "keep" rule, which shields what it matches from the rules after it), a pattern,
the reason it exists and, rarely, a start of its match it keeps. The literals `rounds-fp:6` masks are
in `mask_literals`, the names of code `rounds-fp:7` keeps in `mask_names` (and `rounds-fp:8` in
`mask_code_names`), the numbers `rounds-fp:8` keeps in `mask_numbers`. Order matters: at any
position the earliest rule in RULES wins (`normalize` joins them into one expression, and says how).

Every pattern treats digits only through `\\d`, never a particular digit (the `0x` of hex literals
is written `\\d[xX]`), so whether and how a message is masked does not depend on digit values; but for
the digits `mask_numbers` keeps, which are part of a message's shape (`normalize.shape_of`).
Patterns use bounded or possessive repetition so no input can make them backtrack badly.
"""

from __future__ import annotations

from rounds_bot.grouping.mask_fragments import (
    CLOCK,
    DAY,
    HEX_WORD,
    IN_PARENTHESES,
    LONG_DAY,
    MONTH,
    MONTH_NAME,
    ORDINAL,
    SIZE_UNIT,
    SPELLED_TIME_UNIT,
    TLD,
    ZONE,
)
from rounds_bot.grouping.mask_literals import BYTES_LITERAL, QUERY_PATH, QUOTED_ESCAPED, RUBY_OBJECT
from rounds_bot.grouping.mask_names import NAME_RULES
from rounds_bot.grouping.mask_numbers import NUMBER_RULES
from rounds_bot.grouping.mask_rule import CHARACTER_KINDS, MaskRule

__all__ = ["CHARACTER_KINDS", "RULES", "MaskRule"]


RULES: tuple[MaskRule, ...] = (
    BYTES_LITERAL,  # before plain_word, which would keep its `b` as a word
    MaskRule(
        "plain_word",
        "HL",
        None,
        # A shortcut, like plain_number below: equivalent to trying every rule (a test checks
        # it), but most positions in a message are the start of such a word.
        r"(?<!=)(?!" + DAY + "|" + MONTH + r")[A-Za-z]{1,64}+(?=[,;:.!?)\]}>\"'|]{0,4}(?:\s|$))",
        "a word of letters before a space (not a day or month name, not after `=`) masks nothing",
    ),
    *NUMBER_RULES,  # before plain_number, which would mask a status code as any number
    MaskRule(
        "plain_number",
        "DM",
        "int",
        # Equivalent to the rules below for what it matches (a test checks it), but tried first
        # because most numbers in messages are like this.
        r"(?<![A-Za-z0-9.])-?\d{1,7}(?=[\s,;)\]}>\"'|]|$)"
        r"(?! ?(?:" + SIZE_UNIT + "|" + SPELLED_TIME_UNIT + r")\b| " + MONTH_NAME + ")",
        "a plain integer between spaces or closing punctuation: nothing else can start there",
    ),
    *NAME_RULES,  # before the quoted values and the host names that would mask a name
    MaskRule(
        "keep_encoding",
        "HL",
        None,
        r"(?i:\b(?:utf|ucs)-?\d{1,2}(?:-?[lb]e)?\b|\biso-?\d{4}-\d{1,2}\b|\bwindows-\d{4}\b"
        r"|\blatin-?\d\b|\bcp\d{3,4}\b)",
        "an encoding name carries a number that is part of the name: `utf-8` stays `utf-8`",
    ),
    MaskRule(
        "keep_name_with_number",
        "L",
        None,
        r"\bHTTP/\d(?:\.\d)?\b|\bx\d\d[_-]\d\d\b|\b(?:IPv|ipv)\d\b",
        "protocol and architecture names (`HTTP/1.1`, `x86_64`) are constants, not numbers",
    ),
    MaskRule(
        "keep_smtp_enhanced_status",
        "D",
        None,
        r"(?:(?<=\b\d{3} )|(?<=\b\d{3}-)|(?<=\b\d{3}, ')|(?<=\b\d{3}, b'))\d\.\d{1,3}\.\d{1,3}(?![\w.])",
        "an SMTP enhanced status code (RFC 3463 `class.subject.detail`, `4.7.0`) after its reply code "
        "(`421 4.7.0 ...`, smtplib's `(421, b'4.7.0 ...')`) names the kind of failure from a fixed "
        "registry: a constant, not a version",
    ),
    MaskRule(
        "email",
        "DHLUPAM",
        "email",
        r"(?<![\w.+-])[\w.+-]{1,64}+@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,8}",
        "addresses identify a person or mailbox, never a code path",
    ),
    MaskRule(
        "url",
        "HL",
        "url",
        r"\b[a-zA-Z][a-zA-Z0-9+.-]{0,15}+://[^\s\"'<>\]\[(){}]{1,2000}+",
        "a URL holds hosts, ids and query values",
    ),
    MaskRule(
        "path",
        "TPSHL",
        "path",
        r"(?<![\w/.~-])(?:~|\.{1,2})?(?:/[\w.@%+~,*=-]{1,255}+){2,64}+/?"
        r"|\b[A-Za-z]:\\(?:[^\\\s:*?\"<>|]{1,255}\\){0,64}[^\\\s:*?\"<>|]{0,255}",
        "file and request paths (two or more segments) name data, not the statement that logged",
    ),
    QUERY_PATH,
    MaskRule(
        "traceparent",
        "D",
        "traceparent",
        r"\b\d\d-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}\b",
        "W3C trace context: a trace id and a span id",
    ),
    MaskRule(
        "uuid",
        "DH",
        "uuid",
        r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b",
        "UUIDs: request ids, instance ids, trace ids in UUID form",
    ),
    MaskRule(
        "trace_id",
        "D",
        "trace_id",
        r"\b\d-[0-9a-f]{8}-[0-9a-f]{24}\b",
        "AWS X-Ray trace ids (`1-<time>-<random>`)",
    ),
    MaskRule(
        "hostname",
        "DHLM",
        "hostname",
        r"(?<![\w.@-])(?:[A-Za-z0-9-]{1,63}+\.){1,10}+" + TLD + r"(?![\w-]|\.\w)",
        "fully qualified host names (only known top-level domains, so `module.Class` is safe)",
    ),
    MaskRule(
        "mac",
        "DH",
        "mac",
        r"(?<![\w:-])(?:[0-9A-Fa-f]{2}[:-]){5,15}[0-9A-Fa-f]{2}(?![\w:-])",
        "MAC addresses and other colon-separated byte strings",
    ),
    MaskRule(
        "ipv6",
        "DHC",
        "ip",
        r"(?<![\w:.])(?=[0-9a-fA-F:]{0,45}\d)"
        r"(?:(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}"
        r"|(?:[0-9a-fA-F]{1,4}:){0,6}[0-9a-fA-F]{0,4}::(?:[0-9a-fA-F]{1,4}:){0,6}[0-9a-fA-F]{0,4})"
        r"(?![\w:])",
        "IPv6; a digit is required, so `Class::method` and `Cafe::Add` are not addresses",
    ),
    MaskRule(
        "ipv4",
        "D",
        "ip",
        r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?![\w]|\.\d)",
        "IPv4 addresses (a port after `:` is masked separately as a number)",
    ),
    MaskRule(
        "sha256",
        "DH",
        "sha256",
        r"\b[0-9a-fA-F]{64}\b",
        "64 hex characters: SHA-256 digests",
    ),
    MaskRule(
        "sha1",
        "DH",
        "sha1",
        r"\b[0-9a-fA-F]{40}\b",
        "40 hex characters: SHA-1 digests, full git commit ids",
    ),
    MaskRule(
        "md5",
        "DH",
        "md5",
        r"\b[0-9a-fA-F]{32}\b",
        "32 hex characters: MD5 digests, W3C trace ids, dashless UUIDs",
    ),
    MaskRule(
        "date_iso",
        "D",
        "date",
        r"(?<![\w.-])\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?"
        r"(?:Z|[+-]\d{2}(?::?\d{2})?)?)?(?!\d)",
        "ISO 8601 / RFC 3339 dates and date-times, with or without a zone",
    ),
    MaskRule(
        "date_rfc1123",
        "HL",
        "date",
        r"\b" + DAY + r", \d{1,2} " + MONTH + r" \d{4} " + CLOCK + " " + ZONE,
        "RFC 822 / 1123 dates (HTTP headers, e-mail)",
    ),
    MaskRule(
        "date_rfc850",
        "HL",
        "date",
        r"\b" + LONG_DAY + r", \d{2}-" + MONTH + r"-\d{2} " + CLOCK + " " + ZONE,
        "RFC 850 dates",
    ),
    MaskRule(
        "date_js",
        "HL",
        "date",
        r"\b" + DAY + " " + MONTH + r" \d{2} \d{4} " + CLOCK + r"(?: GMT[+-]\d{4})?(?: \([^()]{1,64}\))?",
        "JavaScript `Date.toString()`",
    ),
    MaskRule(
        "date_ctime",
        "HL",
        "date",
        r"\b" + DAY + " " + MONTH + r" {1,2}\d{1,2} " + CLOCK + r"(?: " + ZONE + r")?(?: \d{4})?",
        "ctime / date(1) output",
    ),
    MaskRule(
        "date_syslog",
        "HL",
        "date",
        r"\b" + MONTH + r" {1,2}\d{1,2} " + CLOCK,
        "syslog timestamps",
    ),
    MaskRule(
        "date_python",
        "H",
        "date",
        r"\bdatetime\.(?:datetime|date|time)\((?:\s{0,3}\d{1,9},){0,7}\s{0,3}\d{1,9}"
        r"(?:,\s{0,3}tzinfo=[\w.()]{1,64})?\)",
        "Python `datetime.datetime(...)` reprs",
    ),
    MaskRule(
        "date_month_name",
        "DHL",
        "date",
        r"\b(?:(?:" + LONG_DAY + "|" + DAY + r"),? )?(?:" + MONTH_NAME + r" \d{1,2}" + ORDINAL + r",? \d{4}"
        r"|\d{1,2}" + ORDINAL + " " + MONTH_NAME + r",? \d{4}|\d{1,2}-(?i:" + MONTH + r")-\d{2}(?:\d{2})?)\b",
        "dates with the month's name, as people and locales write them: `January 5, 2024`, `5 Jan 2024`, "
        "`Friday, January 5, 2024`, `05-JAN-24` (Oracle's and Java's `dd-MMM-yy`)",
    ),
    MaskRule(
        "date_numeric",
        "D",
        "date",
        r"(?<![\w/.:-])\d{1,4}/\d{1,2}/\d{2,4}(?![\w/])",
        "numeric dates such as 06/10/2013 or 17/06/09",
    ),
    MaskRule(
        "time_12h",
        "D",
        "date",
        r"(?<![\w:.])\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)? ?[AaPp]\.?[Mm]\.?(?![\w:])",
        "12-hour clock times with their AM or PM (.NET's and JavaScript's en-US `1/5/2024 3:01:02 PM`): "
        "half of the day is no part of the statement",
    ),
    MaskRule(
        "time",
        "D",
        "date",
        r"(?<![\w:.])\d{1,2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?![\w:])",
        "clock times",
    ),
    MaskRule(
        "duration",
        "D",
        "duration",
        r"(?<![\w.])(?:(?:\d{1,12}(?:\.\d{1,12})?(?:h|ms|us|µs|ns|m|s)){1,4}(?![\w.]|\.\d)"
        r"|\d{1,12}(?:\.\d{1,12})? ?" + SPELLED_TIME_UNIT + r"\b)",
        "durations: 250ms, 1.5s, Go's 1h2m3.5s, and spelled units (`0.57 seconds`, `<1 sec`)",
    ),
    MaskRule(
        "size",
        "D",
        "size",
        r"(?<![\w.])\d{1,15}(?:\.\d{1,15})? ?" + SIZE_UNIT + r"\b",
        "data sizes with their unit, so `93.0 B` and `5.4 KB` are one kind of value",
    ),
    MaskRule(
        "hex",
        "DH",
        "hex",
        r"\b\d[xX][0-9a-fA-F]{1,128}\b"
        rf"|(?<![\w-])(?=[0-9a-f]{{0,127}}\d)(?={HEX_WORD}{{0,127}}[a-f]){HEX_WORD}{{4,128}}(?![\w-])"
        r"|(?<![\w-])(?=[0-9A-F]{0,127}\d)(?=[0-9A-F]{0,127}[A-F])[0-9A-F]{4,128}(?![\w-])",
        "0x literals, and runs of 4-128 hex characters of one case mixing digits and letters",
    ),
    MaskRule(
        "version",
        "DL",
        "version",
        r"(?<![\w.])(?:v\d{1,6}(?:\.\d{1,6}){1,3}|\d{1,6}(?:\.\d{1,6}){2,3})"
        r"(?:[-+][0-9A-Za-z]{1,32}(?:\.[0-9A-Za-z]{1,32}){0,4})?(?![\w]|\.\d)",
        "version strings: v1.2, 1.2.3, 2.31.0-rc.1 (two plain parts are a float)",
    ),
    MaskRule(
        "float",
        "DMA",
        "float",
        r"(?<![A-Za-z0-9.])[-+]?\d{1,30}\.\d{1,30}(?:[eE][-+]?\d{1,3})?(?![A-Za-z0-9]|\.\d)",
        "decimal numbers",
    ),
    MaskRule(
        "id",
        "DM",
        "id",
        r"(?<![A-Za-z0-9])-?\d{8,}+(?![A-Za-z0-9])",
        "numbers longer than seven digits are ids (block ids, timestamps, account numbers)",
    ),
    MaskRule(
        "int",
        "DM",
        "int",
        r"(?<![A-Za-z0-9])-?\d{1,7}(?![A-Za-z0-9])",
        "integers not glued to letters: `node-12` masks, `eth0`, `sda1` and `ipv6` are names",
    ),
    MaskRule(
        "quoted_value",
        "Q",
        "str",
        r"(?<==)(?:\"[^\"\n]{0,512}\"|'[^'\n]{0,512}')",
        'quoted values after `=` (`name="bob"`): key=value literals',
    ),
    QUOTED_ESCAPED,
    MaskRule(
        "quoted_text",
        "Q",
        "str",
        r"(?<![A-Za-z0-9])(?<!panicked at )(?!\A(?:\"[^\"\n]{0,512}+\"|'[^'\n]{0,512}+')\Z)"
        r"(?:\"(?!(?:GET|HEAD|POST|PUT|DELETE|CONNECT|OPTIONS|TRACE|PATCH) )[^\"\n]{0,512}+\""
        r"|'(?!(?i:utf|ucs|latin|iso|cp|windows)-?\d[\w-]{0,8}')[^'\n]{0,512}+')(?![A-Za-z0-9])",
        "a quoted string is data the statement was given (a user's query, a key, a value a "
        "conversion refused: `could not convert string to float: 'abc'`), whatever its words; "
        'not a request line (`"GET /path HTTP/1.1"`, the Common Log Format\'s `%r`, whose '
        "method is part of the statement), an encoding name (`'utf-8' codec`), the message of "
        "a Rust panic (`panicked at '...'`) or a whole message (a `KeyError`'s is its key)",
    ),
    MaskRule(
        "parenthesised_value",
        "R",
        "data",
        r"(?<==)" + IN_PARENTHESES,
        "values in brackets after `=`: PostgreSQL's `Key (email)=(bob) already exists.` and `Key "
        "(user_id)=(42) is not present in table ...` print the row's values so",
    ),
    MaskRule(
        "failing_row",
        "R",
        "data",
        r"(?<=Failing row contains )" + IN_PARENTHESES,
        "the row PostgreSQL prints when a NOT NULL or CHECK constraint rejects it (`Failing row "
        "contains (42, null, bob).`) is one value, whatever its columns hold",
    ),
    RUBY_OBJECT,
    MaskRule(
        "structured_value",
        "B",
        "data",
        r"(?<![A-Za-z0-9])(?:\{(?:[^{}\n]|\{[^{}\n]{0,256}+\}){0,1024}+\}"
        r"|\[(?=[\"'{])(?:[^\[\]\n]|\[[^\[\]\n]{0,256}+\]){0,1024}+\])",
        "a dict, JSON object or list of strings printed into a message (`repr`, `json.dumps`) is "
        "one value, however many keys it shows",
    ),
    MaskRule(
        "bool_value",
        "HL",
        "bool",
        r"(?<==)(?:true|false|True|False|TRUE|FALSE)\b",
        "booleans after `=`",
    ),
)
