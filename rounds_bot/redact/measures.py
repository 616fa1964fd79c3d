"""A setting named after a secret whose value measures or places it rather than being it, told by its name's
last word and its value together (a name alone keeps nothing: `TOKEN_DAYS=S3cr3tPw9x` is still a secret):

    PASSWORD_RESET_TOKEN_EXPIRY_HOURS=24   token_ttl=1h30m   a duration's unit and a number or a duration
                                                             (Go's `time.ParseDuration` units, and days and
                                                             weeks as `systemd.time` has them)
    auth.database=admin                    the database an authentication setting names (Bitnami's charts:
                                           `auth.database` beside `auth.password`; MongoDB's `authSource`), an
                                           identifier (PostgreSQL's and MySQL's up to 63/64 characters); not
                                           under a name that also says password or secret
"""

from __future__ import annotations

import re

from rounds_bot.redact.keys import words

#: a name's last word that is a duration's unit
_UNITS = frozenset(
    {"seconds", "secs", "sec", "minutes", "mins", "hours", "hrs", "days", "weeks", "ms", "millis"}
)
#: a number (`24`, `0.5`) or a duration (`15m`, `1h30m`, `500ms`, `7d`)
_DURATION = re.compile(r"\d{1,12}(?:\.\d{1,6})?|(?:\d{1,9}(?:ns|us|µs|ms|s|m|h|d|w)){1,6}")
#: a database's name: an identifier
_DATABASE = re.compile(r"[A-Za-z_][\w$-]{0,63}")
#: the words that keep a database's setting a secret's (`secret_database`, `password_database`)
_SECRET_STEMS = ("pass", "pwd", "secret")


def measured(name: str, value: str) -> bool:
    """True when `value` under `name` is what the name's last word measures or places: a duration under a
    unit of time, a database's name under `database`."""
    parts = words(name)
    if not parts:
        return False
    if parts[-1] in _UNITS:
        return _DURATION.fullmatch(value) is not None
    if parts[-1] != "database" or any(stem in part for part in parts for stem in _SECRET_STEMS):
        return False
    return _DATABASE.fullmatch(value) is not None
