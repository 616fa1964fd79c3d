"""Which names hold secrets or personal data: attribute keys, header names, `name=value` pairs.

The list follows Sentry's default scrubbing (password, passwd, secret, api_key, apikey, auth, credentials,
mysql_pwd, privatekey, private_key, token, session, cookie, set-cookie, authorization, x-api-key, csrf and
xsrf tokens, session ids of the common frameworks) and the words of gitleaks' generic rule (access, auth, api,
credential, creds, key, password, secret, token), plus the personal data the OpenTelemetry conventions name
(`user.email`, `client.address`, ...). A name is split into words first (`http.request.header.x-api-key`,
`SecretAccessKey`, `db.password`), so `author`, `passenger_count` and `gen_ai.usage.input_tokens` are not
secrets, and a count, a type or a length of a secret (`token_count`, `password.length`) is not one either.
"""

from __future__ import annotations

import itertools
import re
from functools import lru_cache
from typing import Literal

#: the names whose answers each function below remembers: names come from telemetry (attribute keys, a
#: `name=` in a message), so a round of hostile records could hold millions of distinct ones; a bounded
#: memory keeps the common ones and lets the rest go
NAMES_REMEMBERED = 1 << 16


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SPLIT = re.compile(r"[^a-z0-9]+")

_SECRET_WORDS = {
    "password": "password",
    "passwd": "password",
    "passphrase": "password",
    "pwd": "password",
    "pw": "password",  # `pw='...'`, `db_pw`, `DB_PW`: the short form code often names one with
    "pass": "password",
    "secret": "secret",
    "secrets": "secret",
    "token": "token",
    "apikey": "api_key",
    "appkey": "api_key",  # `appkey=...`: an application's key, as `app_key` is (`_KEY_PREFIXES`)
    "accesskey": "api_key",
    "secretkey": "api_key",
    "privatekey": "private_key",
    "auth": "authorization",
    "authorization": "authorization",
    "credential": "credentials",
    "credentials": "credentials",
    "creds": "credentials",
    "cookie": "cookie",
    "cookies": "cookie",
    "session": "session",
    "sessionid": "session",
    "sid": "session",
    "jsessionid": "session",
    "phpsessid": "session",
    "csrf": "session",
    "csrftoken": "session",
    "xsrf": "session",
    "signature": "signature",
    "sig": "signature",
    "bearer": "token",
    "jwt": "token",
    "otp": "password",
    "pin": "password",
    "dsn": "credentials",
    "sas": "signature",
    "psk": "password",  # a pre-shared key: wpa_supplicant's `psk="..."`, an IPsec peer's
}
# Two words that make a secret together: api key, access key, client secret, ...
_KEY_PREFIXES = {
    "api",
    "access",
    "secret",
    "private",
    "signing",
    "encryption",
    "master",
    "license",
    "subscription",
    "account",
    "client",
    "app",
    "sas",
    "shared",
    "storage",
    "service",
    "consumer",
    "webhook",
    "deploy",
}
#: the extensions of source files, the last word of a frame's file name (`TokenService.java:88`)
_SOURCE_EXTENSIONS = (
    "java", "kt", "kts", "scala", "groovy", "py", "pyx", "js", "mjs", "cjs", "jsx", "ts", "tsx", "go", "rb",
    "rs", "php", "cs", "vb", "fs", "swift", "m", "mm", "c", "cc", "cpp", "cxx", "h", "hpp", "ex", "exs",
    "erl", "clj", "dart", "lua", "pl", "pm", "vue", "svelte", "erb", "jsp", "aspx", "cshtml",
)  # fmt: skip
_SUFFIXES = ("token", "secret", "password", "passwd", "pwd", "cookie", "sessid", "apikey")
# The last word that makes the name about a secret rather than the secret itself.
_ABOUT = {
    # a setting or a state of the thing a secret's word names, not its value (`session_state=active`,
    # `session_backend=memcached`, `token_timeout=30`, `password_status=expired`)
    "state",
    "status",
    "backend",
    "engine",
    "driver",
    "storage",
    "timeout",
    "lifetime",
    "duration",
    "interval",
    "age",
    "count",
    "type",
    "length",
    "len",
    "size",
    "limit",
    "expires",
    "expiry",
    "expiration",
    "ttl",
    "kind",
    "url",
    "uri",
    "endpoint",
    "path",
    "field",
    "format",
    "version",
    "provider",
    "issuer",
    "scope",
    "scopes",
    "algorithm",
    "alg",
    "name",
    "names",
    "policy",
    "required",
    "present",
    "valid",
    "enabled",
    "rotation",
    "used",
    "usage",
    "hint",
    "strategy",
    "mode",
    "method",
    "source",
    "manager",
    "store",
    "tokens",
    # where a secret is kept, not the secret: a file holding it (the `_FILE` variables of Docker's official
    # images, `POSTGRES_PASSWORD_FILE=/run/secrets/db`) and its ARN on AWS (a Secrets Manager secret's, a
    # KMS key's: `signing_key_arn=arn:aws:kms:...`)
    "file",
    "arn",
    # how many old passwords a policy remembers (`password_history=5`, as Active Directory and PAM name it)
    "history",
    # when something happened to it: a timestamp's column (`password_reset_sent_at`, `token_expires_at`, as
    # Rails' and Django's conventions name one)
    "at",
    # a class or module named after a secret is code, not a secret: `PasswordResetController: 404`,
    # `JwtDecoder: kid unknown`, and a file name in a stack frame keeps its line (`SessionImpl.java:42`)
    "controller",
    "client",
    "filter",
    "service",
    "impl",
    "decoder",
    "encoder",
    "repository",
    "factory",
    "handler",
    "loader",
    "converter",
    "validator",
    "verifier",
    "registry",
    "serializer",
    "deserializer",
    "parser",
    "exception",
    "error",
    "interceptor",
    "middleware",
    "helper",
    "util",
    "utils",
    "listener",
    "resolver",
    "generator",
    "module",
    "test",
    "tests",
    "spec",
    *_SOURCE_EXTENSIONS,
}
_PERSONAL_WORDS = {
    "email": "email",
    "phone": "phone",
    "telephone": "phone",
    "tel": "phone",
    "mobile": "phone",
    "msisdn": "phone",
    "ssn": "ssn",
    "iban": "iban",
    "cvv": "card_number",
    "cvc": "card_number",
    "pan": "card_number",
    "dob": "personal_data",
    "birthdate": "personal_data",
    "username": "personal_data",
    "fullname": "personal_data",
}
_IP_NAMES = {
    ("client", "address"),
    ("client", "ip"),
    ("client", "addr"),
    ("remote", "addr"),
    ("remote", "address"),
    ("remote", "ip"),
    ("forwarded", "for"),
    ("real", "ip"),
    ("user", "ip"),
    ("source", "address"),
    ("source", "ip"),
    ("peer", "ip"),
    ("peer", "address"),
    ("connecting", "ip"),
    ("ip", "address"),
    ("true", "client"),
}


@lru_cache(maxsize=NAMES_REMEMBERED)
def words(name: str) -> tuple[str, ...]:
    """`name` as lowercase words: `http.request.header.x-api-key` → (http, request, header, x, api, key)."""
    return tuple(part for part in _SPLIT.split(_CAMEL.sub("_", name).lower()) if part)


# Words that make a name *maybe* secret (gitleaks' generic rule looks for them too): a value under such a name
# is a secret only when it has a credential's shape (`credential_shaped`), so `cache_key=user:42` stays.
_WEAK_SECRET_WORDS = {"key", "keys", "access", "api", "pat", "private", "priv"}
# Words of the session cookies and headers no standard names (`_gh_sess`, `.AspNetCore.Identity.Application`,
# `wordpress_logged_in_...`, `X-SSO-Ticket`): a credential-shaped value under them is a session's secret.
_WEAK_SECRET_WORDS |= {"sess", "ticket", "identity", "logged", "sso", "saml", "remember", "nonce", "hmac"}
#: last words of a name that make it an identifier (`datadog_trace_id`, `discord_guild_id`), not a credential
_IDENTIFIERS = {"id", "ids", "uuid", "guid"}
# The services gitleaks matches by name next to a value (its "semi-generic" rules): `DATADOG = ...`, `discord:
# ...`. Like the words above, a name holding one is secret only when the value has a credential's shape.
_SERVICE_WORDS = {
    "adafruit", "adobe", "airtable", "algolia", "alibaba", "artifactory", "asana", "atlassian",
    "beamer", "bintray", "bitbucket", "bittrex", "cloudflare", "codecov", "cohere", "coinbase",
    "confluence", "confluent", "contentful", "datadog", "discord", "droneci", "dropbox", "etsy",
    "facebook", "fastly", "finicity", "finnhub", "flickr", "freshbooks", "gitter", "gocardless",
    "heroku", "hubspot", "intercom", "jfrog", "jira", "kraken", "kucoin", "launchdarkly", "linkedin",
    "mailchimp", "mailgun", "mapbox", "mattermost", "meraki", "messagebird", "netlify", "newrelic",
    "nytimes", "okta", "rapidapi", "sendbird", "sentry", "snyk", "squarespace", "twitch", "twitter",
    "yandex", "zendesk",
    # the services of gitleaks' newer rules
    "dnkey", "intra", "intra42", "linear", "lob", "looker", "newyorktimes", "plaid", "privateai",
    "sonar", "sonarqube", "sourcegraph", "sumo", "sumologic", "telegram", "travis", "travisci", "xray",
    "contribsys",  # Sidekiq's gem server, in Bundler's `BUNDLE_ENTERPRISE__CONTRIBSYS__COM`
    # the services of gitleaks' proposed rules (Auth0, Azure DevOps, Razorpay, Zhipu AI)
    "auth0", "azdo", "razorpay", "zhipu", "bigmodel",
}  # fmt: skip
# Services whose name is often written as two words (`NEW_RELIC`, `message_bird`, `launch-darkly`).
_TWO_WORD_SERVICES = {
    ("new", "relic"), ("message", "bird"), ("linked", "in"), ("launch", "darkly"), ("private", "ai"),
}  # fmt: skip
# The last words of the name of a service's client credential, which gitleaks' semi-generic rules read as
# secrets too (`ASANA_CLIENT`, `asana_client_id`, `SENDBIRD_APP_ID`, `SUMO_ACCESS_ID`): taken only after a
# service's name, since `client` alone ends a class's name (`TokenClient`) and `id` an identifier's.
_CLIENT_ENDINGS = {("client",), ("client", "id"), ("app", "id"), ("access", "id"), ("api", "id")}


#: Every name `secret_category` or `maybe_secret` takes holds one of these words, lowercased: each takes a
#: name only for a word of it (a whole word, or one a word ends with) that is in one of the lists above. A
#: search for names that may be secrets looks for these (`Rule.key_words`).
SECRET_NAME_WORDS = frozenset(
    {*_SECRET_WORDS, "key", *_SUFFIXES, *_WEAK_SECRET_WORDS, *_SERVICE_WORDS}
    # a two-word service's name holds the word that is not common on its own
    | {"relic", "bird", "linked", "darkly"}
)


#: The ASCII characters a name in a `name=value` pair holds (`pairs.py`: `[\w.$@-]`).
_NAME_ASCII = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.$@-"
#: Endings of names that neither `secret_category` nor `maybe_secret` takes: both refuse a name whose last
#: word is one of `_ABOUT`, and a name that ends with one of these ends with such a word whatever precedes
#: it. A source file's extension after a dot (`token.js`, `TokenService.java`; lowercase, so no capital
#: splits it), and `Error` or `Exception` after any ASCII character of a name (`KeyError:`, `AUTHError`: a
#: capital after a lowercase letter or a digit starts a word, and so does one after a capital when a
#: lowercase letter follows it). A search for names that may be secrets passes over these
#: (`Rule.key_refused_endings`); a test checks each against the two functions.
REFUSED_NAME_ENDINGS = frozenset(
    {f".{extension}" for extension in _SOURCE_EXTENSIONS}
    | {before + word for word in ("Error", "Exception") for before in _NAME_ASCII}
)


@lru_cache(maxsize=NAMES_REMEMBERED)
def maybe_secret(name: str) -> bool:
    """True when `name` holds one of the words that often name a credential (`STRIPE_KEY`, `MAILGUN_API`,
    `ADAFRUIT_IO_KEY`, `gitlab_pat`) or a service's name (`DATADOG`), and is not about one (`key_count`,
    `api_version`)."""
    parts = words(name)
    return (
        bool(parts)
        and parts[-1] not in _ABOUT
        and parts[-1] not in _IDENTIFIERS
        and (any(part in _WEAK_SECRET_WORDS for part in parts) or _names_service(parts))
    )


def _names_service(parts: tuple[str, ...]) -> bool:
    return any(part in _SERVICE_WORDS for part in parts) or any(
        pair in _TWO_WORD_SERVICES for pair in itertools.pairwise(parts)
    )


def names_client_credential(name: str) -> bool:
    """True when `name` is a service's client credential (`ASANA_CLIENT`, `discord_client_id`): a name
    neither `secret_category` nor `maybe_secret` takes, whose value gitleaks reads as a secret."""
    parts = words(name)
    return _names_service(parts) and (parts[-1:] in _CLIENT_ENDINGS or parts[-2:] in _CLIENT_ENDINGS)


#: what a name that may be a credential's is: one of the weak words (`STRIPE_KEY`), a service's
#: (`DROPBOX`, `plaid_sandbox`, `NEW_RELIC_USER`), or a service's client credential's (`ASANA_CLIENT`)
MaybeCredential = Literal["weak", "service", "client"]


@lru_cache(maxsize=NAMES_REMEMBERED)
def maybe_credential_name(name: str) -> MaybeCredential | None:
    """Which kind of name that may be a credential's `name` is (one cached look-up for every attribute),
    or None: a service's name lets a value in the plainer formats services issue through
    (`pair_values.service_shaped`), gitleaks' semi-generic rules."""
    if maybe_secret(name):
        return "service" if _names_service(words(name)) else "weak"
    return "client" if names_client_credential(name) else None


@lru_cache(maxsize=NAMES_REMEMBERED)
def secret_category(name: str) -> str | None:
    """The kind of secret a value under `name` is, or None when the name says nothing secret."""
    parts = words(name)
    if not parts or parts[-1] in _ABOUT:
        return None
    for index, part in enumerate(parts):
        if part in _SECRET_WORDS:
            return _SECRET_WORDS[part]
        # a key's identifier (`api_key_id`, `signing_key_id`: AWS' "access key ID", a JWK's `kid`) names the
        # key, not its secret; a private key's (a Google service account's `private_key_id`) goes with it
        if (
            part == "key"
            and index
            and parts[index - 1] in _KEY_PREFIXES
            and (parts[index + 1 :] != ("id",) or parts[index - 1] == "private")
        ):
            return "api_key"
        if part.endswith(_SUFFIXES) and part not in ("bypass",):
            return "token" if part.endswith("token") else "password" if "pass" in part else "secret"
    return None


@lru_cache(maxsize=NAMES_REMEMBERED)
def personal_category(name: str) -> str | None:
    """The kind of personal data a value under `name` is (e-mail, phone, client IP, ...), or None."""
    parts = words(name)
    if not parts or parts[-1] in _ABOUT - {"name"}:
        return None
    for index, part in enumerate(parts):
        if part in _PERSONAL_WORDS or part.endswith("email"):
            return _PERSONAL_WORDS.get(part, "email")
        if part == "ip" and len(parts) == 1:
            return "ip_address"
        if index and (parts[index - 1], part) in _IP_NAMES:
            return "ip_address"
        if part == "name" and index and parts[index - 1] in ("user", "full", "first", "last", "middle"):
            return "personal_data"
        if part in ("card", "cc") and index + 1 < len(parts) and parts[index + 1] in ("number", "num", "no"):
            return "card_number"
        if part == "social" and "security" in parts:
            return "ssn"
    return None
