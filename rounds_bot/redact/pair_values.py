"""Whether a value a rule of `pairs.py` found is the secret: the tests each rule passes its match to.

A value that stands for none (`null`, `***`, `${TOKEN}`) or is already redacted is kept, and so are an
authentication scheme, a status code or a version. After a name and a colon and a space, a value is only
taken when it looks like a credential, not prose (a digit, a symbol, mixed case or length): `invalid token:
signature has expired` keeps its words. `maybe_credential` also decides a value under a name that only may
be secret (`event.py`). The patterns are in `pairs.py`; these read the values they find.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import math
import re
from collections import Counter

from rounds_bot.redact.keys import maybe_credential_name, secret_category
from rounds_bot.redact.measures import measured

_PLACEHOLDERS = {
    "",
    "null",
    "none",
    "nil",
    "true",
    "false",
    "undefined",
    "***",
    "****",
    "redacted",
    "[redacted]",
    "[filtered]",
    "<redacted>",
    "xxx",
    "required",
    "missing",
    "invalid",
    "expired",
    "empty",
    # a feature switched on or off (`token_exchange=enabled`)
    "enabled",
    "disabled",
    # MySQL's own message says whether one was given: `Access denied for user ... (using password: YES)`
    "yes",
    "no",
}

_SCHEMES = {"basic", "bearer", "token", "digest", "negotiate", "ntlm", "apikey", "sharedaccesssignature"}
# authentication methods a log names after `auth:` (Hadoop's `auth:SIMPLE`, `auth:KERBEROS`): what tells two
# errors apart, not a credential
_SCHEMES |= {"simple", "kerberos", "oauth", "oauth2", "sasl", "plain", "ldap", "saml", "oidc"}
_SCHEMES |= {"anonymous", "cert"}
#: what follows a label once the secret it labels went: a scheme (RFC 9110 11.1: Okta's `SSWS`), PHP's type
#: or FCM's legacy header's `key=` before the server key the rules before took (`Authorization: key=[...]`)
_LABEL_BEFORE = re.compile(
    r"[ \t]+\[REDACTED:authorization\]|\(\d{1,9}\)[ \t]\"\[REDACTED:"
    r"|(?i:(?<=authorization: key=)|(?<=authorization:key=))\[REDACTED:"
)
#: a status code or a version under a secret's name (sendmail's `dsn=4.0.0`) is not the secret
_DOTTED_NUMBER = re.compile(r"\d{1,4}(?:\.\d{1,4}){1,3}")


_IDENTIFIER = re.compile(r"(?:[A-Z][a-z]+){2,6}")


def _prose_like(value: str) -> bool:
    """A lowercase word, or a class's name (`TokenExpiredError`), not a credential."""
    return (value.isalpha() and value.islower() and len(value) < 24) or bool(_IDENTIFIER.fullmatch(value))


#: what a generated credential is made of: letters, digits and the symbols of base64, URL-safe tokens and
#: percent-encoded cookie values
_CREDENTIAL = re.compile(r"[A-Za-z0-9_\-+/=%]{16,500}")


_HEX_RUN = re.compile(r"[0-9a-fA-F]+")


def _entropy(value: str) -> float:
    """Shannon entropy in bits a character, as gitleaks measures a match."""
    return -sum(n / len(value) * math.log2(n / len(value)) for n in Counter(value).values())


def credential_shaped(value: str) -> bool:
    """A value that looks generated rather than written: 16 characters or more of letters and digits (and
    base64's symbols), both present, above gitleaks' entropy bar for its generic rule (3.5 bits a char)."""
    if not _CREDENTIAL.fullmatch(value) or value.isdigit():
        return False
    entropy = _entropy(value)
    if any(ch.isdigit() for ch in value):
        # 16 hex digits carry 4 bits a character at most: a random 32-hex key falls under 3.5 one time in
        # twenty, so hex of that length has gitleaks' lower bar for hex keys (3 bits)
        return entropy >= (3.0 if len(value) >= 32 and _HEX_RUN.fullmatch(value) else 3.5)
    # letters alone: random case, not CamelCase words (`InvalidArgumentException`)
    changes = sum(
        a.isupper() != b.isupper() for a, b in itertools.pairwise(value) if a.isalpha() and b.isalpha()
    )
    return entropy >= 3.5 and changes * 5 >= len(value) * 2  # random case changes about every other letter


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
#: a short generated key: letters and digits only (a name written by hand has a `-` or `_` between words)
_SHORT_KEY = re.compile(r"[A-Za-z0-9]{12,500}")
#: a token of parts joined by dots (Mapbox's `pk.`, Dropbox's `sl.`, Yandex's `t1.`)
_DOTTED = re.compile(r"[A-Za-z0-9_-]{1,500}(?:\.[A-Za-z0-9_-]{1,500}){1,3}")


def service_shaped(value: str, *, client_id: bool = False) -> bool:
    """A value a service issues as a credential in a plainer format than `credential_shaped` takes, so only
    after the service's name (gitleaks' semi-generic rules): a UUID (Heroku, HubSpot, Sendbird), a short key
    of letters and digits (Dropbox's 15, LinkedIn's 14), hex under 32 digits (Plaid's 24 and 30), a dotted
    token, a generated `user:password` (Sidekiq's); a client id may be all digits (Asana's 16, Discord's
    18). The bar is gitleaks' lower one for hex (3 bits a character), so a placeholder (`00000000-...`)
    stays."""
    if credential_shaped(value):
        return True
    if _UUID.fullmatch(value):
        return _entropy(value.replace("-", "")) >= 3.0
    if value.isdigit():
        return client_id and 12 <= len(value) <= 20 and _entropy(value) >= 2.0
    if _SHORT_KEY.fullmatch(value):
        # a client id's bar is lower still: random ids of 14 to 24 characters fall under 3 bits often enough
        if _IDENTIFIER.fullmatch(value) or _entropy(value) < (2.5 if client_id else 3.0):
            return False
        digits = sum(ch.isdigit() for ch in value)
        mixed = sum(ch.isupper() for ch in value) >= 2 and sum(ch.islower() for ch in value) >= 2
        # letters and digits, or random case: a lowercase word (`photosbackup`) is not a key
        return client_id or 0 < digits <= len(value) - 3 or mixed
    user, colon, password = value.partition(":")
    if colon and min(len(user), len(password)) >= 8 and _SHORT_KEY.fullmatch(user + password):
        # `user:password`, both generated (Sidekiq's gem server's pair of 8 hex digits: 2.5 bits, not 3)
        return _entropy(user + password) >= 2.5
    if _DOTTED.fullmatch(value) and len(value) >= 40:
        return any(credential_shaped(part) for part in value.split("."))
    return False


def maybe_credential(name: str, value: str) -> bool:
    """Whether `value`, under a name `secret_category` does not take, is a credential: under a name that only
    may be one (`maybe_secret`) when it looks generated, under a service's name or its client credential's
    also in the plainer formats services issue (`service_shaped`)."""
    kind = maybe_credential_name(name)
    if kind is None:
        return False
    if kind == "weak":
        return credential_shaped(value)
    # `service_shaped` takes every value `credential_shaped` takes, and asks it first
    return service_shaped(value, client_id=kind == "client")


#: the length of a content digest's hex by its algorithm, after an image's name
#: (`ghcr.io/acme/api@sha256:<hex>`: the OCI image spec's descriptor.md, "Digests")
_DIGEST_HEX = {"@sha256": 64, "@sha512": 128}


def _image_digest(name: str, sep: str, value: str) -> bool:
    """`name@sha256:<hex>`: an image pinned by its digest, a public hash of its content that the pattern reads
    as a name (`api@sha256`, which holds `api`) and its value."""
    at = name.rfind("@")
    length = _DIGEST_HEX.get(name[at:].lower()) if at > 0 and sep == ":" else None
    return length == len(value) and _HEX_RUN.fullmatch(value) is not None


#: a .NET assembly's public key token: the last eight bytes of the SHA-1 of its public key, in hex, printed in
#: every strong name (`Newtonsoft.Json, Version=13.0.0.0, Culture=neutral, PublicKeyToken=30ad4fe6b2a6aeed`)
_PUBLIC_KEY_TOKEN = re.compile(r"[0-9a-fA-F]{16}")


#: the states a log gives a session under its bare name (`session=active`, `session: closed`): a closed list,
#: since a session's secret may be any word (Express' `secret: 'keyboard cat'`) and its id any letters
_SESSION_STATES = frozenset({
    "active", "inactive", "idle", "open", "opened", "closed", "new", "created", "started", "ended", "valid",
    "expired", "invalid", "revoked", "terminated", "destroyed", "pending", "unknown", "none",
    "authenticated", "unauthenticated",
})  # fmt: skip


def _public(name: str, value: str) -> bool:
    """A value its name says is public though the name holds a secret's word: an assembly's public key
    token, a session's state (`session=active`, under the bare name only: `SESSION_SECRET`, `session_key`,
    `sessionid` name the secret whatever word it is), or a cookie header's one preference (`Cookie:
    locale=en-US`, which the cookie rule kept)."""
    if name.lower() == "publickeytoken":
        return _PUBLIC_KEY_TOKEN.fullmatch(value) is not None
    category = secret_category(name)
    if category == "cookie":
        return "=" in value and _preference(value)
    return name.strip("\"'`").lower() == "session" and value.lower() in _SESSION_STATES


def _accept_pair(match: re.Match[str]) -> bool:
    if _image_digest(match["key"], match["sep"], match["value"]):
        return False
    if secret_category(match["key"]) is None:
        return maybe_credential(match["key"], match["value"].strip("\\\"'`").rstrip(".:"))
    value = match["value"]
    quoted = value[:1] in "\"'`\\"
    bare = value.strip("\\\"'`").strip()
    if _placeholder(bare) or bare.lower() in _SCHEMES or _DOTTED_NUMBER.fullmatch(bare):
        return False
    if _LABEL_BEFORE.match(match.string, match.end("value")):  # `SSWS <token>`, `string(10) "<value>"`
        return False
    if _public(match["key"], bare) or (measured(match["key"], bare) and not password_shaped(bare)):
        return False  # a public value, or a setting's duration or database (`measures.py`)
    loose = match["sep"].strip() == ":" and match["sep"].endswith((" ", "\t"))
    return quoted or not loose or not _prose_like(bare)


#: the names after which prose may give a value with no separator at all (`using password X for ...`)
_PASSWORD_WORDS = frozenset({"password", "passwd", "passphrase", "pwd"})


def _accept_prose(match: re.Match[str]) -> bool:
    """A value a sentence gives a secret's name (`password is X`, `api key was X`, `set password to X`,
    `using password X`) only when it looks generated: a sentence goes on in words (`password is incorrect`,
    `password was changed`, `password for user`), and a word after `password` alone is one too."""
    if not match["verb"] and match["key"].lower() not in _PASSWORD_WORDS:
        return False
    value = match["value"].strip("\"'")
    name, inside, _ = value.partition("=")
    if inside and _PAIR_NAME.fullmatch(name):
        # the next pair after a path or a sentence that ends with the word (`PUT /account/password
        # user_id=42`, `reset password request_id=...`): its own value is its name's
        return False
    return password_shaped(value)


#: a version has letters and digits too (`v1.2.3-beta`), and so has a path (`/api/v2/login`)
_VERSION = re.compile(r"[vV]?\d{1,4}(?:\.\d{1,4}){1,3}(?:[-+.][\w.-]{1,40})?")
#: a name's number at its end (`V2`, `2024`)
_NUMBERED = re.compile(r"[Vv]?\d{1,8}\Z")
#: what a password someone chose is written in: printable ASCII, no space, 8 characters or more (NIST SP
#: 800-63B's least length for one; a shorter value, `hunter2`, reads as well as a word)
_CHOSEN = re.compile(r"[!-~]{8,200}")


def password_shaped(value: str) -> bool:
    """A value that looks generated or chosen as a password rather than written in a sentence: letters and
    digits both, spread enough to carry 3 bits a character, or a long run in random case
    (`credential_shaped`); a word (with its full stop), a number, a date, a version, a path, a numbered
    CamelCase name or a placeholder is not one."""
    if _IDENTIFIER.fullmatch(_NUMBERED.sub("", value)):
        return False  # a class or a policy named in CamelCase and numbered (`PasswordPolicyV2`)
    if credential_shaped(value):
        return True
    if not _CHOSEN.fullmatch(value) or _placeholder(value) or _VERSION.fullmatch(value) or value[0] == "/":
        return False
    digits = any(ch.isdigit() for ch in value)
    letters = any(ch.isalpha() for ch in value)
    return digits and letters and _entropy(value) >= 3.0


def _accept_named(match: re.Match[str]) -> bool:
    """A value under a secret's name that is not a placeholder (the shapes below name it otherwise)."""
    if secret_category(match["key"]) is None:
        return False
    return not _placeholder(match["value"].strip("\"'").strip())


#: what a bare value reads of a template whose braces or parentheses end it (`${...}`, `%(...)s`)
_TEMPLATE_OPENINGS = frozenset({"$", "%", "#"})


#: Kubernetes' reference to another variable of the container's environment (`value: $(DB_PASSWORD)`). A
#: shell's `$NAME`, Windows' `%NAME%` or PowerShell's `$env:NAME` are not taken for references: in telemetry
#: the shell has expanded them already, and a password may be written so (`$UPERSECRET2024`)
_VARIABLE = re.compile(r"\$\([A-Za-z_]\w{1,63}\)", re.ASCII)


def _placeholder(bare: str) -> bool:
    """A value that stands for none (`null`, `***`), a template's (`${TOKEN}`), a variable's (`$(TOKEN)`), or
    one already redacted. A mask is asterisks of any length (`********`); a bare value stops at a brace or a
    parenthesis, so a template's opening alone (`$` of `${API_KEY}`, `%` of `%(token)s`) is all of the value
    that is read."""
    lowered = bare.lower()
    return (
        lowered in _PLACEHOLDERS
        or bare.startswith(("${", "{{", "%s", "<"))
        or "[redacted:" in lowered
        or bare in _TEMPLATE_OPENINGS
        or not bare.strip("*")
        or (bare[:2] == "$(" and _VARIABLE.fullmatch(bare) is not None)
    )


def _accept_listed(match: re.Match[str]) -> bool:
    """A bare value after a secret's name and a comma (CSV) only when it looks like a credential."""
    value = match["value"]
    mixed = any(ch.isupper() for ch in value) and any(ch.islower() for ch in value) and len(value) >= 16
    credential = mixed or (any(ch.isdigit() for ch in value) and any(ch.isalpha() for ch in value))
    if not credential:
        return False
    key = _named_behind(match, spaced=False)
    return key is not None and secret_category(key) is not None and not _placeholder(value)


#: the name right before a match that starts at its separator (`_LISTED`, `_BLOCK`)
_KEY_BEHIND = re.compile(r"""(?<![\w.$@-])([A-Za-z_][\w.-]{0,60})[ \t]{0,3}\Z""")


def _named_behind(match: re.Match[str], spaced: bool) -> str | None:
    """The secret's name right before `match` (a space allowed before a colon, none before a comma)."""
    found = _KEY_BEHIND.search(match.string, max(match.start() - 64, 0), match.start())
    if found is None or (not spaced and found.end(1) != match.start()):
        return None
    return found.group(1)


def _accept_block(match: re.Match[str]) -> bool:
    key = _named_behind(match, spaced=True)
    return (
        key is not None and secret_category(key) is not None and not _placeholder(match["value"].strip("\"'"))
    )


def _accept_basic(match: re.Match[str]) -> bool:
    """Basic credentials decode to `user:password`; a word after "basic" does not."""
    encoded = match.group(1)
    try:
        decoded = base64.b64decode(encoded + "=" * (-len(encoded) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    return ":" in decoded and decoded.isprintable()


#: the attributes `Set-Cookie` gives a cookie after its value (RFC 6265 4.1.1, and `Priority`, `Partitioned`)
_COOKIE_ATTRIBUTES = frozenset(
    {"path", "domain", "expires", "max-age", "samesite", "secure", "httponly", "priority", "partitioned"}
)
#: a preference's value: a word (`dark`, `true`) or a language tag (BCP 47: `en-US`, `pt-BR`, `zh-Hant`)
_PREFERENCE = re.compile(r"[a-z]{1,23}|[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8}){1,2}")


def _has_pair(match: re.Match[str]) -> bool:
    """A cookie header's value is `name=value` pairs (`Cookie: parse error in CookieSerializer` is prose),
    and one holds a secret unless every cookie in it is a preference: a word or a language tag under a name
    that says no secret (`theme=dark`, `locale=en-US`), which a server sets to read back, not to trust."""
    header = match.group(1)
    return "=" in header and not all(_preference(item) for item in header.split(";"))


def _preference(item: str) -> bool:
    """One cookie that is a preference, or an attribute. A cookie under a session's name (`sid`,
    `sessionid`, `csrftoken`) is none whatever its value: a session id may be letters alone."""
    name, _, value = item.strip().partition("=")
    if name.lower() in _COOKIE_ATTRIBUTES or not name:
        return True
    return secret_category(name) is None and _PREFERENCE.fullmatch(value.strip('"')) is not None


#: a pair's name as code writes it, in words (`expires_in`, `max-age`, `expiresIn`), never a generated run
_PAIR_NAME = re.compile(r"[a-z]+(?:[_-][a-z]+)*|[a-z]+(?:[A-Z][a-z]+)+")


#: the words of eight letters or more a sentence puts after `Bearer` (`Bearer authentication is required`):
#: a fixed list, as a token of lower-case letters alone (`Bearer thisisaverysecretkey`) is still a token
_BEARER_PROSE = {"authentication", "authorization", "authorisation", "credential", "credentials", "required"}
_BEARER_PROSE |= {"provided", "expected", "supported", "unsupported", "mechanism", "challenge", "security"}


def _accept_bearer(match: re.Match[str]) -> bool:
    """A bearer token is RFC 6750's `b64token`, `=` only as its padding; a token with an `=` inside is still
    sent as one (and goes whole), but a pair's name before the `=` is OAuth's token type followed by the
    next pair (`token_type=Bearer expires_in=3600`)."""
    token = match.group(1).rstrip("=")
    name, inside, _ = token.partition("=")
    if len(token) < 8 or token.lower() in _BEARER_PROSE:
        return False  # too short for a b64token, or a word a sentence puts after it (`Bearer authentication`)
    return not inside or _PAIR_NAME.fullmatch(name) is None


def _code_like(match: re.Match[str]) -> bool:
    """An authorization code or a link's token: generated (letters and digits, or long), not a word."""
    value = match.group(1)
    return len(value) >= 24 or (any(ch.isdigit() for ch in value) and any(ch.isalpha() for ch in value))


def _reset_token(match: re.Match[str]) -> bool:
    return credential_shaped(match.group(1)) or (len(match.group(1)) >= 32 and _code_like(match))


_NAME_BEHIND = re.compile(r"""["']?([A-Za-z_][\w.-]{0,60})["']?[ \t]{0,3}\Z""")


def _next_line_value(match: re.Match[str]) -> bool:
    """`password:` at the end of a line and the value alone on the next one."""
    if match.group(0)[0] in "wi" and match.string[match.start() - 1 : match.start()] not in (" ", "\t"):
        return False  # `was` and `is` after a name and a space, not inside a word
    name = _NAME_BEHIND.search(match.string, max(match.start() - 70, 0), match.start())
    if name is None or secret_category(name.group(1)) is None:
        return False
    bare = match["value"].strip("\\\"'`")
    return not _placeholder(bare) and not _prose_like(bare) and len(bare) >= 6


def _token_like(match: re.Match[str]) -> bool:
    value = match.group(1)
    return any(ch.isdigit() for ch in value) and any(ch.isalpha() for ch in value)
