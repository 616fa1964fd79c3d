"""Secrets in the shapes programs print their objects and configurations in, where no `name=value` pair of
`pairs.py` reads them:

    password: Some("...")            a value in a wrapper a runtime prints around it: Rust's `Option` Debug
                                     output (`Some(...)`), the `secrecy` crate's and pydantic's secret types
                                     (pydantic prints `SecretStr('**********')`: a mask, kept); run
                                     before `pairs.py`, which then takes the wrapper's name as ever
    {"value": "...", "name": "DB_PASSWORD"}  an environment entry with its value first (ECS task
                                     definitions and Kubernetes' API keep no order of a JSON object's members;
                                     HTML's `<input value=... name=...>`, not an `<option>`)
    MessageEncryptor.new(['...'].pack('H*'))  Rails' `ActiveSupport::MessageEncryptor` / `MessageVerifier`
                                     secret, its first argument (the Rails API reference)
    base64:<44 characters>           Laravel's `APP_KEY` as `php artisan key:generate` writes it: `base64:`
                                     and a 32-byte key in base64, recognisable without its name
    Client('AC...', '<32 hex>')      Twilio's auth token, the second argument after the account SID (Twilio's
                                     helper libraries' `Client(account_sid, auth_token)`)
    host:port:db:user:password       a PostgreSQL password file's line, the whole line (libpq's "The
                                     Password File": `*` for any field, `\\:` an escaped colon); a host
                                     as it names one, no file's name (`app.log:120:...` is grep's)
    password = decrypt('...')        a literal argument of a call under a secret's name
                                     (`config.get('db', '...')`: the last one), when it looks generated
                                     and names no variable, path, UUID or message key
"""

from __future__ import annotations

import re

from rounds_bot.redact.keys import secret_category, words
from rounds_bot.redact.measures import measured
from rounds_bot.redact.pair_values import _placeholder, password_shaped
from rounds_bot.redact.rule import Rule, is_redacted, rule

#: a quoted value, its quotes kept by the replacement
_QUOTED = r"""(?P<value>"[^"\n]{1,500}"|'[^'\n]{1,500}')"""
#: Rust's `Option`/`Result`, `secrecy`'s `Secret`/`SecretString`, pydantic's `SecretStr`/`SecretBytes`; the
#: literal maybe turned into an owned string (`SecretString::new("...".into())`, Rust's `Into`/`ToOwned`)
_WRAPPER = (
    r"""(?<![\w.-])["']?(?P<key>[A-Za-z_][\w.-]{0,60}+)["']?[ \t]{0,3}(?::|=|=>)[ \t]{0,3}"""
    r"""(?:Some|Ok|SecretStr|SecretBytes|Secret(?:String|Box)?(?:::new|::from)|String::from)"""
    r"""\([ \t]{0,3}b?""" + _QUOTED + r"""(?:\.(?:into|to_string|to_owned)\(\))?[ \t]{0,3}\)"""
)
#: an environment entry's `value` before its `name`: `value` a whole word (`defaultValue` is another field)
_VALUE_FIRST = (
    r"""(?i)(?<![\w-])["']?value["']?[ \t]{0,3}[:=][ \t]{0,3}""" + _QUOTED + r"""[ \t]{0,3},?\s{0,40}"""
    r"""["']?name["']?[ \t]{0,3}[:=][ \t]{0,3}["']?(?P<key>[A-Za-z_][\w.-]{0,60}+)"""
)
_RAILS = r"""Message(?:Encryptor|Verifier)\.new\([ \t]{0,3}\[?[ \t]{0,3}("[^"\n]{16,500}"|'[^'\n]{16,500}')"""
#: AES-256-CBC's 32-byte key, Laravel's default cipher (`config/app.php`); a 16-byte one would be any MD5 in
#: base64 (`content-md5: base64:...==`)
_LARAVEL = r"""(?<![\w+/])base64:([A-Za-z0-9+/]{43}=)(?![\w+/=])"""
_TWILIO = r"""(["'])AC[0-9a-f]{32}\1[ \t]{0,3},[ \t]{0,3}(["'])([0-9a-f]{32})\2"""
#: a field of a password file: any character but a colon, a backslash or a blank, or an escaped one
_FIELD = r"""(?:[^\s:\\]|\\[:\\]){1,200}"""
#: a password file's host (libpq's "The Password File": a host name or `*`): `*`, `localhost`, an IPv4
#: address, or a name with a dot or a hyphen (`db.internal`, `pg-primary`); a bare word (`node1`) is too often
#: a log's field
_HOST = r"""(?:\*|localhost|\d{1,3}(?:\.\d{1,3}){3}|[A-Za-z0-9_]{1,63}(?:[.-][A-Za-z0-9_]{1,63}){1,20})"""
#: the whole line is the entry: grep's `file:line:` prefix and a longer line of colon-separated fields are not
_PGPASS = r"""(?m)^(""" + _HOST + r"""):(\d{1,5}|\*):""" + _FIELD + ":(" + _FIELD + "):(" + _FIELD + ")$"
#: a file name's extension of a log, a text or a source file: `grep -n`'s `app.log:120:...`, no host
_FILE_EXTENSION = re.compile(
    r"\.(?:log|txt|out|err|csv|tsv|json|ya?ml|xml|html?|md|rst|ini|conf|cfg|toml|env|sql|sh|py|pyi|js|jsx|ts"
    r"|tsx|go|rs|java|kt|rb|php|cs|c|h|cc|cpp|hpp|swift|scala|ex|exs|erl|lua|pl|tf)",
    re.IGNORECASE,
)
#: a hash or an id in hex (`app.cache:3600:user:42:9f8e7d6c5b4a`), no password someone chose
_HEX = re.compile(r"[0-9A-Fa-f]{1,200}")
#: lower-case words joined by underscores (`blocked_k8s_node7`): a cache's or a limiter's key, no password
_SNAKE_CASE = re.compile(r"[a-z][a-z0-9]{0,40}(?:_[a-z0-9]{1,40}){1,10}")
#: an environment variable's name (`DB_PASSWORD_V2`)
_VARIABLE_NAME = re.compile(r"[A-Z_][A-Z0-9_]{0,200}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
#: lower-case words joined by dots, three or more (`auth.password.label2`)
_MESSAGE_KEY = re.compile(r"[a-z][a-z0-9_-]{0,60}(?:\.[a-z][a-z0-9_-]{0,60}){2,10}")
#: a path's segments (`/api/v1/users/42/password`, `keys/prod-2024.pem`): one with a leading slash or a
#: file's extension is a path; other slashed runs may be base64 (`+`, `=` are never in one)
_PATH = re.compile(r"(?:\.{0,2}/)?[\w.-]{1,100}(?:/[\w.-]{1,100}){1,20}/?")
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,5}\Z")
#: an entry's name's last word that says its value is a structure's (`secretKeyRef`, `valueFrom`)
_STRUCTURES = frozenset({"ref", "from"})
#: an entry's name's last word that says its number is a size or a limit (`TOKEN_MAX_BYTES`)
_SIZES = frozenset({"bytes", "size", "length", "len", "max", "min", "limit", "count"})
#: an HTML `<input>` tag's opening
_INPUT_TAG = re.compile(r"<input\b", re.IGNORECASE)
#: an argument before the last literal of a call: a quoted string, a name or a number
_ARGUMENT = r"""(?:"[^"\n]{0,200}"|'[^'\n]{0,200}'|[\w.]{1,100}+)[ \t]{0,3},[ \t]{0,3}"""
#: `password = decrypt('...')`: a call under a secret's name (its name already redacted by `pairs.py` when
#: it was no getter) and its last quoted argument
_CALL_LITERAL = (
    r"""(?<![\w.-])["']?(?P<key>[A-Za-z_][\w.-]{0,60}+)["']?[ \t]{0,3}(?::=|=>|=|:)[ \t]{0,3}"""
    r"""(?:[A-Za-z_][\w.:]{0,120}+|\[REDACTED:[a-z_]{1,40}\])\([ \t]{0,3}"""
    r"""(?:""" + _ARGUMENT + r"""){0,4}""" + _QUOTED + r"""(?=[ \t]{0,3}[,)])"""
)


def _named_literal(match: re.Match[str]) -> bool:
    """Under a secret's name, a literal that is no placeholder (a mask, `SecretStr('**********')`, stays)."""
    return secret_category(match["key"]) is not None and not _placeholder(match["value"][1:-1].strip())


def _value_before_name(match: re.Match[str]) -> bool:
    """An entry's value before its secret's name, but not a duration's or a size's (`TOKEN_TTL_SECONDS`), a
    structure's (Kubernetes' `secretKeyRef`), or an attribute of an HTML tag but `<input>` (a `<select>`'s
    `<option value=...>` is a choice offered, an `<input>`'s `value` what was typed in)."""
    name, value = match["key"], match["value"][1:-1].strip()
    parts = words(name)
    if not parts or parts[-1] in _STRUCTURES or (parts[-1] in _SIZES and value.isdigit()):
        return False
    if measured(name, value) and not password_shaped(value):
        return False
    line = match.string[match.string.rfind("\n", 0, match.start()) + 1 : match.start()]
    tag = line.rfind("<")
    if tag >= 0 and ">" not in line[tag:] and _INPUT_TAG.match(line, tag) is None:
        return False
    return _named_literal(match)


def _names_something(literal: str) -> bool:
    """A getter's argument that names where the secret is rather than being it: an environment variable's
    name (POSIX's portable names are upper-case letters, digits and underscores), a URL's or a file's path,
    a UUID (RFC 9562), a dotted message key (`auth.password.label2`, as i18next and Rails' I18n write
    them) or a configuration option's snake-case name (`openweathermap_api_key2`)."""
    shapes = (_VARIABLE_NAME, _UUID, _MESSAGE_KEY, _SNAKE_CASE)
    return any(shape.fullmatch(literal) for shape in shapes) or (
        _PATH.fullmatch(literal) is not None and (literal[0] == "/" or _EXTENSION.search(literal) is not None)
    )


def _generated_literal(match: re.Match[str]) -> bool:
    """Under a secret's name, a call's literal argument that looks generated (`decrypt('...')`); a word
    (`config.get('db', 'password')`), a mask or what names the secret's place stays."""
    literal = match["value"][1:-1]
    if is_redacted(literal) or secret_category(match["key"]) is None or _names_something(literal):
        return False
    return not _placeholder(literal.strip()) and password_shaped(literal)


def _port(field: str) -> bool:
    return field == "*" or 0 < int(field) < 65536


def _password_field(match: re.Match[str]) -> bool:
    """Five colon-separated fields are common in telemetry (`127.0.0.1:5432:app:user:connected`, an address,
    a clock, a cache's key `cache:3600:user:42:profile_v2x9k`): the line is a password file's only when its
    port is one, its user is no number and its last field looks chosen or generated."""
    host, port, user, value = match.group(1, 2, 3, 4)
    if _FILE_EXTENSION.fullmatch(host[host.rfind(".") :]) or not _port(port) or user.isdigit():
        return False
    return password_shaped(value) and _HEX.fullmatch(value) is None and _SNAKE_CASE.fullmatch(value) is None


#: run before `pairs.py`, which would take the wrapper's name for the value (`password: Some`) and leave the
#: literal inside it
WRAPPED_VALUES: tuple[Rule, ...] = (
    rule(
        "key_value_secret",
        _WRAPPER,
        *("some(", "ok(", "secretstr(", "secretbytes(", "::new(", "::from("),
        group=2,
        accept=_named_literal,
    ),
)

PRINTED: tuple[Rule, ...] = (
    rule("key_value_secret", _VALUE_FIRST, "name", group=1, accept=_value_before_name),
    rule("key_value_secret", _RAILS, "encryptor.new(", "verifier.new(", group=1),
    rule("laravel_app_key", _LARAVEL, "base64:", group=1),
    rule("twilio", _TWILIO, "ac", group=3),
    rule("password", _PGPASS, ":", group=4, accept=_password_field),
    rule("key_value_secret", _CALL_LITERAL, "(", group=2, accept=_generated_literal),
)
