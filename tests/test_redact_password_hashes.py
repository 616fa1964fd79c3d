"""A password's hash is a secret in a public issue (it can be cracked offline): redacted by its format, with
no name before it, while the names of the algorithms and their parameters alone stay.

The formats, each from its public reference: bcrypt (`$2a$`, `$2b$`, `$2y$`, two digits of cost, 22
characters of salt and 31 of checksum in bcrypt's `./A-Za-z0-9`: passlib's bcrypt); the PHC string format of
Argon2 (`$argon2id$v=19$m=65536,t=3,p=4$<salt>$<hash>`, base64 without padding) and passlib's scrypt and
pbkdf2; crypt(3)'s SHA-crypt (`$5$`, `$6$`, an optional `rounds=N$`, up to 16 characters of salt, 43 or 86
of checksum), MD5-crypt (`$1$`, `$apr1$`: 22) and yescrypt (`$y$`, libxcrypt's default in /etc/shadow);
Django's `<algorithm>$<iterations>$<salt>$<hash>` (`pbkdf2_sha256`, `pbkdf2_sha1`, `argon2$argon2id...`,
`bcrypt_sha256$$2b$...`, `scrypt$<n>$<salt>$<r>$<p>$<hash>`).
"""

from __future__ import annotations

import base64
import random
import string

import pytest

from rounds_bot.models import ErrorEvent
from rounds_bot.redact import Redactor, redact, redact_poll, redact_with_report
from rounds_bot.redact.text import _rules
from rounds_bot.sources.base import PollResult
from tests.redact_reference import reference_redact
from tests.test_redact_engine import assert_same

_CRYPT = "./" + string.ascii_letters + string.digits  # crypt(3)'s and bcrypt's base64 alphabet
_RANDOM = random.Random(1128)


def _crypt64(length: int) -> str:
    return "".join(_RANDOM.choice(_CRYPT) for _ in range(length))


def _b64(count: int) -> str:
    """Base64 of `count` random bytes, without padding (the PHC string format's)."""
    return base64.b64encode(_RANDOM.randbytes(count)).decode().rstrip("=")


def _padded(count: int) -> str:
    return base64.b64encode(_RANDOM.randbytes(count)).decode()


#: (format, a fresh hash of it)
HASHES = [
    ("bcrypt $2a$", f"$2a$10${_crypt64(53)}"),
    ("bcrypt $2b$", f"$2b$12${_crypt64(53)}"),
    ("bcrypt $2y$", f"$2y$04${_crypt64(53)}"),
    ("argon2id", f"$argon2id$v=19$m=65536,t=3,p=4${_b64(16)}${_b64(32)}"),
    ("argon2i", f"$argon2i$v=19$m=4096,t=3,p=1${_b64(16)}${_b64(32)}"),
    ("argon2d without a version", f"$argon2d$m=512,t=2,p=2${_b64(12)}${_b64(24)}"),
    ("passlib scrypt", f"$scrypt$ln=16,r=8,p=1${_b64(16)}${_b64(32)}"),
    ("passlib pbkdf2", f"$pbkdf2-sha256$29000${_crypt64(22)}${_crypt64(43)}"),
    ("sha512-crypt", f"$6${_crypt64(16)}${_crypt64(86)}"),
    ("sha512-crypt with rounds", f"$6$rounds=656000${_crypt64(16)}${_crypt64(86)}"),
    ("sha256-crypt", f"$5${_crypt64(16)}${_crypt64(43)}"),
    ("sha256-crypt with rounds", f"$5$rounds=535000${_crypt64(12)}${_crypt64(43)}"),
    ("md5-crypt", f"$1${_crypt64(8)}${_crypt64(22)}"),
    ("apache md5", f"$apr1${_crypt64(8)}${_crypt64(22)}"),
    ("yescrypt", f"$y$j9T${_crypt64(22)}${_crypt64(43)}"),
    (
        "django pbkdf2_sha256",
        f"pbkdf2_sha256$870000${_crypt64(22).replace('.', 'a').replace('/', 'b')}${_padded(32)}",
    ),
    (
        "django pbkdf2_sha1",
        f"pbkdf2_sha1$600000${_crypt64(12).replace('.', 'x').replace('/', 'y')}${_padded(20)}",
    ),
    ("django argon2", f"argon2$argon2id$v=19$m=102400,t=2,p=8${_b64(16)}${_b64(32)}"),
    ("django bcrypt_sha256", f"bcrypt_sha256$$2b$12${_crypt64(53)}"),
    ("django scrypt", f"scrypt$16384${_crypt64(22).replace('.', 'q').replace('/', 'r')}$8$5${_padded(64)}"),
]
#: where telemetry carries a hash without a secret's name before it
CARRIERS = (
    "login check failed for uid 7: stored {} did not verify",
    "shadow entry root:{}:19700:0:99999:7:::",
    '{{"id": 7, "digest": "{}", "active": true}}',
    "INSERT INTO accounts (id, hashed) VALUES (7, '{}')",
    "verify failed against {}.",
)
KEPT = (
    "hashing with argon2id (m=65536, t=3, p=4)",
    "PASSWORD_HASHERS = ['django.contrib.auth.hashers.PBKDF2PasswordHasher'] pbkdf2_sha256 is the default",
    "argon2 parameters $argon2id$v=19$m=65536,t=3,p=4 are too weak",
    "bcrypt cost $2b$12 is below policy",
    "charged $5 then $6 then $2 for 3 items",
    "echo $1$2$3 failed",
    "plan costs $12$ per seat",
    # a JVM frame's names hold `$1$`, `$5$`, `$6$` too: a name, `$`, `(` or `.` follows the would-be checksum
    "\tat com.acme.Outer$1$Inner.lambda$handleIncomingRequestBody$0(Outer.java:42)",
    "\tat com.acme.Outer$1$Inner$processIncomingMessages1(Outer.java:42)",
    "\tat com.acme.Jobs$6$Worker$drainTheQueueOfPendingInvoicesBeforeShutdown1.run(Jobs.java:7)",
    "org.apache.spark.util.Utils$.$anonfun$tryLogNonFatalError$1$mcV$sp(Utils.scala:1)",
    "\tat akka.actor.Actor$5$applyOrElse$receiveAndDispatchIncomingMessagesOfTheQueueNow(Actor.scala:9)",
)


def _checksum(value: str) -> str:
    """The hash's last part: what must not come out."""
    return value.rsplit("$", 1)[1]


@pytest.mark.parametrize(("kind", "value"), HASHES, ids=[kind for kind, _ in HASHES])
def test_a_password_hash_is_redacted_with_no_name_before_it(kind: str, value: str) -> None:
    for carrier in CARRIERS:
        text = carrier.format(value)
        report = redact_with_report(text)
        assert report.counts["password_hash"] == 1, (kind, report.text)
        assert _checksum(value) not in report.text, (kind, report.text)


@pytest.mark.parametrize("text", KEPT)
def test_an_algorithms_name_and_parameters_alone_stay(text: str) -> None:
    assert redact(text) == text


def test_a_password_hash_is_gone_after_the_event_boundary() -> None:
    events = [
        ErrorEvent(
            event_id=f"e{n}",
            timestamp="2026-11-28T12:00:00Z",
            service="accounts",
            message="verify failed",
            attributes={"db.row": CARRIERS[2].format(value)},
        )
        for n, (_, value) in enumerate(HASHES)
    ]
    seen = redact_poll(Redactor(), PollResult(events=events))
    for (kind, value), event in zip(HASHES, seen.events, strict=True):
        assert _checksum(value) not in event.model_dump_json(), kind


def texts() -> list[str]:
    return [carrier.format(value) for _, value in HASHES for carrier in CARRIERS] + list(KEPT)


def test_the_engines_redact_password_hashes_as_the_reference_does() -> None:
    rules = _rules("all")
    assert assert_same(rules, texts()) == len(texts())
    for text in texts():
        assert redact_with_report(text) == reference_redact(rules, text)
