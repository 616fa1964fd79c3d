"""Nothing secret or personal gets past ingestion: one redaction boundary, applied once.

    boundary.py  the boundary: each event as the source builds it (`Boundary`), or `redact_poll` right
                 after a source's poll, before grouping, storage, prompts, issues, logs and reports
    event.py     one event made safe (`Redactor`): every field and attribute (keys and values, every
                 type), the resource, the ids; caps before any rule
    ids.py       what an id is kept as: itself when it has an id's shape and holds nothing, else its hash
    text.py      one text: cut, sanitised, redacted (`redact_text`)
    tokens.py    vendor tokens by format (gitleaks' rule families)
    vendors.py   vendor tokens by format that gitleaks does not know (trufflehog's detectors)
    nearby.py    vendor tokens in a plain format, after the vendor's name nearby (trufflehog's detectors)
    hashes.py    password hashes by format (bcrypt, Argon2, crypt's SHA and MD5, yescrypt, Django's)
    pairs.py     secrets by what names them: `password=`, `Authorization:`, `Cookie:`, URL credentials, SQL
    arguments.py passwords a command takes by an argument's place (`htpasswd -b`, `rabbitmqctl add_user`,
                 `net use`, `net user`), by a tool's own flag (`mongosh -p`), on its input (`echo ... |
                 sudo -S`), or by Redis' `requirepass`
    argv.py      a password in a printed argument list, after its tool's flag (`['mongosh', '-p', '...']`)
    commands.py  which command such a list runs: its first, or what a wrapper runs (`sudo`, `ssh`, `exec`)
    literals.py  a prefixed Python literal under a secret's name (`password=b'...'`), a client's credential
                 pair (`auth=('user', '...')`), a tuple or list of secrets (`SECRET_KEY_FALLBACKS = [...]`)
    described.py a secret property a framework's failure describes (Spring Boot's `Property ... with value`)
    measures.py  a setting named after a secret that measures it (`TOKEN_EXPIRY_HOURS=24`), kept
    queries.py   an API key a URL's query names by its service's parameter (OpenWeatherMap's `appid=`)
    calls.py     a password a call takes by its place (`smtp.login(user, "...")`, `SetBasicAuth`,
                 `getConnection`), or a setter named after it (`setPassword("...")`)
    printed.py   secrets in the shapes programs print objects in (`password: Some("...")`, a value before its
                 name, Rails' and Laravel's keys, Twilio's token after the SID, a `.pgpass` line)
    layouts.py   passwords in the layouts of credential files and strings: the Go MySQL DSN, XML
                 elements named by an attribute or a name element, PHP's `var_dump`
    wrapped.py   a secret's value a fixed-width wrap broke onto the next line
    pair_values.py  whether the value a name points at is the secret: not a placeholder, not prose
    foreign.py   a password named in another language (`Passwort:`, `senha=`, `пароль:`, `密码：`)
    keys.py      which names are secret or personal (Sentry's default scrubbing list and more)
    personal.py  e-mail, phone (E.164 and national formats), SSN, UK NI, Aadhaar, CPF, IBAN, card numbers,
                 client IPs, each confirmed before it is replaced
    versions.py  whether an address-shaped number is a version, by what stands before it
    phrases.py   BIP-39 seed phrases (the word list and the checksum)
    decode.py    what JSON escapes, percent-encoding, base64 and hex hide, judged decoded
    split.py     secrets split across the records of one log stream or trace (`redact_poll`)
    rule.py      how a rule is applied: keyword pre-filter, bounded patterns, counts
    translate.py each rule's regex as a Hyperscan pattern that matches a superset of it
    scan.py      which rules a text may match, and where: one Hyperscan scan for every rule
    scan_cache.py  the compiled scan databases, kept between processes in the user's cache directory
    engine.py    the rules applied after that scan (or, without Hyperscan, after their keywords)

Two other kinds of text enter rounds from outside and are redacted where they enter, once: the model's answer
(`Diagnosis.from_answer`, with `redact_json`) and what an incident look-up reads from SigNoz during a
diagnosis (`clean`). Text already past a boundary is never redacted again; the Markdown renderer escapes it
(`render/markdown.py`). `tests/security/` proves it on a public corpus through real rounds.
"""

from __future__ import annotations

from typing import Any

from rounds_bot.redact.boundary import redact_poll
from rounds_bot.redact.event import (
    ATTRIBUTE_CHARS,
    MESSAGE_CHARS,
    STACKTRACE_CHARS,
    Redactor,
    redact_event,
)
from rounds_bot.redact.personal import IpPolicy
from rounds_bot.redact.text import Redaction, cut, redact_text, sanitize

#: The cap on a text that enters outside a poll (a look-up's answer, the model's text).
TEXT_CHARS = 65_536


def clean(text: str, *, ips: IpPolicy = "all") -> str:
    """Text entering rounds outside a poll (a look-up's answer), capped, sanitised and redacted."""
    return redact_text(cut(text, TEXT_CHARS), ips=ips).text


def redact(text: str, *, ips: IpPolicy = "all") -> str:
    """`text` with secrets and personal data replaced by `[REDACTED:<category>]`."""
    return redact_text(text, ips=ips).text


def redact_with_report(text: str, *, ips: IpPolicy = "all") -> Redaction:
    return redact_text(text, ips=ips)


def redact_json(value: Any) -> Any:
    """A JSON value (the model's answer) with every string in it, keys too, redacted once."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, list):
        return [redact_json(item) for item in value]
    if isinstance(value, dict):
        return {clean(str(key)): redact_json(item) for key, item in value.items()}
    return value


__all__ = [
    "ATTRIBUTE_CHARS",
    "MESSAGE_CHARS",
    "STACKTRACE_CHARS",
    "IpPolicy",
    "Redaction",
    "Redactor",
    "clean",
    "cut",
    "redact",
    "redact_event",
    "redact_json",
    "redact_poll",
    "redact_text",
    "redact_with_report",
    "sanitize",
]
