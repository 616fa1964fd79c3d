"""Keep rules for the numbers a message gives to tell one failure from another, added in `rounds-fp:8`.

A number in a message is a value (`user 42 not found`), masked whatever its digits, and the shape memo
(`shapes`) relies on that. Two kinds of number are no value but the failure's own:
- an HTTP status code (RFC 9110 section 15: three digits, 1xx to 5xx) in a client's wording of a failed
  request: a 404 and a 500 are two problems. The wordings: axios' `Request failed with status code %d`
  (lib/core/settle.js), got's `Response code %d (%s)` (source/core/errors.ts, `HTTPError`), Python
  requests' `%d Client Error: %s for url: %s` and `%d Server Error: ...` (requests/models.py,
  `raise_for_status`). Three digits before an upper-case word (Spring's `404 NOT_FOUND`) are not kept: as
  often a size, an id or an amount (`Allocated 256 MB`, `Job 123 FAILED`, `charged 250 EUR`);
- the remote port of a connection a client opened: it names the dependency (5432 PostgreSQL, 6379
  Redis), while the address before it is a pod's, varying between occurrences. Go's `net.OpError.Error()`
  writes `op net [source->]addr: err`: only `dial` is the client's side by definition (`dial tcp
  10.0.3.7:5432: connect: connection refused`); a `read` or `write` on a connection may be a server's on
  one it accepted, whose remote end is the client, on an ephemeral port (`write tcp
  172.17.0.2:8080->172.17.0.1:46854: write: broken pipe`), so every port there stays masked. Node's
  `exceptionWithHostPort` (lib/internal/errors.js) writes `syscall code address:port` (`connect
  ECONNREFUSED 10.0.3.7:5432`). The address is masked (`MaskRule.masked`), the port kept.
The digits these rules keep are part of a message's shape (`normalize.shape_of`, through `KEPT_DIGITS`):
messages that differ in them are read apart, each with its own digits.
"""

from __future__ import annotations

import re

from rounds_bot.grouping.mask_rule import MaskRule

# the status code as the rule keeps it (RFC 9110: 1xx to 5xx), and as the shape finds it (any 3 digits:
# a superset, so the shape never merges what the rule keeps apart)
_CODE, _CODE_FOUND = r"[1-5]\d\d", r"(\d{3})"
_STATUS = (
    r"(?:(?<=Request failed with status code )|(?<=Response code )){code}(?![\w.])"
    r"|(?<![\w.-]){code}(?= (?:Client|Server) Error: )"
)
# an IPv4 address, Go's bracketed IPv6 one (with a zone), or Node's bare IPv6 one, whose last `:` sets
# the port apart
_ADDRESS = r"(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-fA-F:.]{2,45}+(?:%[\w.-]{1,32}+)?\]|[0-9a-fA-F:.]{2,45}?)"
_GO_DIAL = "|".join(f"(?<=dial {net} )" for net in ("tcp", "tcp4", "tcp6", "udp", "udp4", "udp6"))
# the error codes a failed connect reports (libuv's, as Node names them)
_NODE_CODES = ("ECONNREFUSED", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ECONNRESET", "EADDRNOTAVAIL")
_NODE_CONNECT = "|".join(f"(?<=connect {code} )" for code in _NODE_CODES)
_REMOTE = (
    # Go: after `dial <net> `, then `: ` and the cause
    r"(?:" + _GO_DIAL + r")" + _ADDRESS + r":{port}(?=: )"
    r"|(?:" + _NODE_CONNECT + r")" + _ADDRESS + r":{port}(?![\w.:])"
)
_PORT, _PORT_FOUND = r"\d{1,5}+", r"(\d{1,5}+)"

STATUS_CODE = MaskRule(
    "status_code",
    "D",
    None,
    _STATUS.replace("{code}", _CODE),
    "the HTTP status code of a client's failed request (axios' `Request failed with status code 404`, "
    "got's `Response code 429 (Too Many Requests)`, requests' `404 Client Error: ...`) is the failure's: "
    "a 404 and a 500 are two problems",
)

REMOTE_PORT = MaskRule(
    "remote_port",
    "DBC",
    "ip",
    _REMOTE.replace("{port}", _PORT),
    "the remote port of a connection error (Go's `dial tcp 10.0.3.7:5432: connect: connection refused`, "
    "Node's `connect ECONNREFUSED 10.0.3.7:5432`) names the dependency; the address is a pod's",
    masked=r"\S{1,64}?(?=:\d{1,5}$)",
)

#: the keep rules of numbers, in the order `mask_rules.RULES` lists them
NUMBER_RULES = (STATUS_CODE, REMOTE_PORT)

#: a literal part of every wording above: a message that holds none has no digit these rules keep, and is
#: looked at no further (most messages are so, and a search of `KEPT_DIGITS`, with its lookbehinds, is slow)
NUMBER_WORDS = ("status code", "Response code", " Error: ", "dial ", "connect E")

#: where a message holds digits these rules may keep, each in its group: `normalize.shape_of` keeps them
KEPT_DIGITS = re.compile(
    "|".join(
        f"(?:{pattern})"
        for pattern in (_STATUS.replace("{code}", _CODE_FOUND), _REMOTE.replace("{port}", _PORT_FOUND))
    )
)
