"""What redaction keeps of an id: the id itself when it has an id's shape and holds nothing to redact, else a
hash of it that still identifies the occurrence (`event.Redactor.identifier`).

    id_shaped(value) -> bool        an id's characters (`_ID_SHAPE`), at most `ID_CHARS` of them
    ids_shaped(values) -> values    those of many that are
    hashed_id(value) -> str         what an id not kept becomes (`HASHED_PREFIX` and 32 hex digits)
"""

from __future__ import annotations

import hashlib
import re

ID_CHARS = 128
#: an id kept as it is when redaction keeps it: at most `ID_CHARS` of these characters
_ID_SHAPE = re.compile(rf"[a-zA-Z0-9\-_.:/]{{0,{ID_CHARS}}}")


def id_shaped(value: str) -> bool:
    """Whether `value` has an id's shape (`_ID_SHAPE`): told at once for letters and digits alone."""
    if value.isascii() and value.isalnum():  # a subset of the shape's characters
        return len(value) <= ID_CHARS
    return _ID_SHAPE.fullmatch(value) is not None


def ids_shaped(values: list[str]) -> list[str]:
    """The values of an id's shape (`id_shaped`), told at once for many of ASCII letters and digits alone."""
    joined = "".join(values)
    if joined.isascii() and joined.encode("ascii").isalnum() and max(map(len, values), default=0) <= ID_CHARS:
        return values
    return list(filter(id_shaped, values))


#: what an id redaction replaced begins with (a raw id stored without it was stored unchanged)
HASHED_PREFIX = "sha256:"


def hashed_id(value: str) -> str:
    """What redaction makes of an id it does not keep as it is (`Redactor.identifier`)."""
    return HASHED_PREFIX + hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:32]
