"""A saved database's signature: an HMAC-SHA256 only a job that holds ROUNDS_STATE_KEY can make.

    sign(database, key, run_id)                  writes `<database>.sig` beside the file to upload
    verify(database, signature, key, run_id)     None when the signature is the key's for those bytes and run

Why: the fix-test job runs code the model wrote and can reach the run's artifact token, so it can save a
`rounds-db` of its own that a later round would restore (SECURITY.md; docs/fixes.md, "The boundary"). The key
is given only to the steps that save and restore the database, in jobs that hold secrets already; the fix-test
job never has it, so it can upload bytes but not a signature for them.

The MAC covers the run that saved the artifact as well as the file: the restoring side compares it with the
run GitHub says the artifact came from, so a database rounds signed in an earlier run cannot be uploaded again
as a newer artifact (a rollback to older state), only restored as the artifact it was saved as.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from pathlib import Path

SIGNATURE_SUFFIX = ".sig"
# a signature is a few dozen bytes of JSON; anything larger is not one of ours
MAX_SIGNATURE_BYTES = 4096
FORMAT = "rounds-db-signature/1"
_HEX_MAC = re.compile(r"[0-9a-f]{64}")


def signature_path(database: Path) -> Path:
    return database.with_name(database.name + SIGNATURE_SUFFIX)


def _mac(database: Path, key: str, run_id: int | None) -> str:
    mac = hmac.new(key.encode("utf-8"), digestmod=hashlib.sha256)
    # the format and the run first, NUL-separated, so no database bytes can pose as another run's
    mac.update(f"{FORMAT}\0{run_id if run_id is not None else ''}\0".encode())
    with database.open("rb") as source:
        while chunk := source.read(1 << 20):
            mac.update(chunk)
    return mac.hexdigest()


def sign(database: Path, key: str, run_id: int | None) -> Path:
    """Write the signature of `database`, saved by run `run_id`, beside it; returns its path."""
    target = signature_path(database)
    body = {"format": FORMAT, "run_id": run_id, "hmac_sha256": _mac(database, key, run_id)}
    target.write_text(json.dumps(body, sort_keys=True) + "\n", encoding="utf-8")
    return target


def verify(database: Path, signature: bytes | None, key: str, run_id: int | None) -> str | None:
    """Why `signature` does not vouch for `database` as saved by run `run_id`, or None when it does."""
    if signature is None:
        return "carries no signature"
    if len(signature) > MAX_SIGNATURE_BYTES:
        return "carries a signature too big to be one"
    try:
        body = json.loads(signature)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return "carries a signature that is not one"
    if (
        not isinstance(body, dict)
        or body.get("format") != FORMAT
        or not _HEX_MAC.fullmatch(str(body.get("hmac_sha256")))
    ):
        return "carries a signature that is not one"
    if body.get("run_id") != run_id:
        return "carries a signature made for another run"
    if not hmac.compare_digest(body["hmac_sha256"], _mac(database, key, run_id)):
        return "carries a signature that does not match its database under ROUNDS_STATE_KEY"
    return None
