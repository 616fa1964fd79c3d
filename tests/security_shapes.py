"""The proof suite's second corpus: secrets and personal data in the shapes and places an attacker would try.

Each family is made fresh from a fixed seed, in the published format its reference gives:

    encoded            a secret inside JSON inside a JSON string, percent-encoded (once and twice), base64,
                       hex (RFC 8259 string escapes, RFC 3986 percent-encoding, RFC 4648)
    split              the value on the line after its name; a PEM key (RFC 7468) logged one record per line;
                       a name in one log record and its value in the next
    places             `process.command_line` (OpenTelemetry process conventions) with `-D...password=`,
                       an OAuth 2.0 `code=` (RFC 6749 section 4.1.2), cookie and header names no standard
                       gives, secrets in span names, service names and resource attributes
    connection-string  client command lines and connection strings of each engine's documentation (MySQL
                       `-p`, ODBC `Pwd={...}`, JDBC, ADO.NET, libpq, MongoDB, Redis, AMQP, Oracle, curl)
    private-key        real keys made here: PEM bodies without their BEGIN/END lines, JWK private members
                       (RFC 7517/7518 `d`, `p`, `q`, `k`), a percent-encoded PEM, a base64 PEM, BIP-39 seed
                       phrases (the BIP's English word list, as the `mnemonic` package ships it)
    personal-intl      phone numbers of many countries in E.164, international and national format (made
                       valid with `phonenumbers`, Google's libphonenumber metadata), UK National Insurance
                       numbers (HMRC's NIM39110 prefixes), Aadhaar (UIDAI, Verhoeff check digit), CPF (Receita
                       Federal's two check digits), IBANs of every country of SWIFT's IBAN registry (ISO
                       13616 mod-97, the registry's BBAN structure as `python-stdnum` ships it)
    vendor-current     token formats of gitleaks' current default rules that the first corpus did not plant

A `Planted` value's `secret` is what must never appear in an output; `kind="records"` plants each line of the
carrier as its own log record of one stream, in order; `place` pins where the carrier goes.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
from collections.abc import Callable
from functools import cache
from urllib.parse import quote

import phonenumbers
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from mnemonic import Mnemonic
from security_corpus import Planted
from stdnum import numdb

_RNG = random.Random(20261125)
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
URLSAFE = ALNUM + "-_"
UPPER = string.ascii_uppercase + string.digits
LOWER = string.ascii_lowercase + string.digits


def _r(alphabet: str, n: int) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def _password() -> str:
    """A password as people make them: letters, digits and a symbol, 12 to 18 characters."""
    return (
        _r(string.ascii_uppercase, 1) + _r(ALNUM, _RNG.randrange(9, 15)) + _RNG.choice("!#%*") + _r(ALNUM, 2)
    )


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


# --- encoded ---------------------------------------------------------------------------------------------


def _encoded() -> list[Planted]:
    found = []

    def add(family: str, secret: str, carrier: str) -> None:
        found.append(Planted("encoded", family, secret, carrier))

    for n in range(3):
        pw, tok = _password(), _r(ALNUM, 32)
        inner = json.dumps({"user": f"svc{n}", "password": pw})
        add("json-in-json-string", pw, json.dumps({"request": inner, "status": 500}))
        add("json-unicode-escaped", tok, "{\\u0022api_token\\u0022:\\u0022" + tok + "\\u0022}")
        add("percent-encoded-body", pw, "POST body=" + quote(f"user=svc{n}&password={pw}", safe=""))
        add(
            "percent-encoded-json", tok, "GET /cb?state=" + quote(json.dumps({"client_secret": tok}), safe="")
        )
        add(
            "double-percent-encoded",
            pw,
            "redirect " + quote(quote(f"/login?password={pw}", safe=""), safe=""),
        )
        b64 = _b64(f"password={pw}&user=svc{n}".encode())
        add("base64-pair", b64, f"job args: {b64}")
        gh = "ghp_" + _r(ALNUM, 36)
        add("base64-token", _b64(f"token {gh}".encode()), f"payload {_b64(f'token {gh}'.encode())} rejected")
        hx = json.dumps({"secret": tok}).encode().hex()
        add("hex-json", hx, f"frame dump {hx}")
    return found


# --- split -----------------------------------------------------------------------------------------------


def _pem_lines(key: bytes) -> list[str]:
    return key.decode().strip().splitlines()


def _rsa_pem() -> bytes:
    key = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _ec_pem() -> bytes:
    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )


def _split() -> list[Planted]:
    found = []
    for _ in range(3):
        pw, tok = _password(), _r(ALNUM, 40)
        found += [
            Planted("split", "value-on-next-line", pw, f"login failed; password:\n  {pw}\nretrying"),
            Planted("split", "value-on-next-line", tok, f'config {{\n  "api_token":\n    "{tok}"\n}}'),
            Planted("split", "value-on-next-line", pw + "x", f"DB_PASSWORD=\n{pw}x\nconnect refused"),
            Planted(
                "split",
                "name-and-value-in-two-records",
                tok + "y",
                f"auth failed, secret was\n{tok}y",
                "records",
            ),
        ]
    for make in (_rsa_pem, _ec_pem, _rsa_pem):
        lines = _pem_lines(make())
        found.append(Planted("split", "pem-one-record-per-line", lines[2], "\n".join(lines), "records"))
        found.append(Planted("split", "pem-one-record-per-line", lines[-2], "\n".join(lines), "records"))
    return found


# --- places ----------------------------------------------------------------------------------------------


def _places() -> list[Planted]:
    found = []
    for n in range(3):
        pw = _password()
        found += [
            Planted(
                "places",
                "command-line-system-property",
                pw,
                f"java -Xmx512m -Dspring.datasource.password={pw} -jar /app/shop-{n}.jar",
                place="resource:process.command_line",
            ),
            Planted(
                "places",
                "command-line-system-property",
                pw + "k",
                f"java -Djavax.net.ssl.keyStorePassword={pw}k -cp app.jar Main",
                place="resource:process.command_line",
            ),
            Planted(
                "places",
                "command-args-array",
                pw + "a",
                json.dumps(["mysql", "-u", "root", f"-p{pw}a", "-h", "db"]),
                kind="array",
                place="resource:process.command_args",
            ),
            Planted(
                "places",
                "oauth-code-in-url",
                c := _r(URLSAFE, 30),
                f"GET https://shop.example/oauth/callback?code={c}&state=af0ifjsldkj failed",
            ),
            Planted(
                "places",
                "oauth-code-in-url",
                c := "4/0A" + _r(URLSAFE, 40),
                f"token exchange failed for /auth/google/callback?state=x{n}&code={c}&scope=email",
                place="span.attribute:url.full",
            ),
            Planted(
                "places",
                "nonstandard-cookie",
                v := _r(ALNUM + "%", 48),
                f"request rejected; _gh_sess={v}; logged_in=yes",
            ),
            Planted(
                "places",
                "nonstandard-cookie",
                v := _r(URLSAFE, 60),
                f"upstream sent .AspNetCore.Identity.Application={v}; path=/",
            ),
            Planted(
                "places",
                "nonstandard-cookie",
                v := _r(ALNUM, 40),
                f"wordpress_logged_in_{_r(HEX, 32)}={v}",
                place="span.attribute:http.response.header.set_cookie_value",
            ),
            Planted(
                "places",
                "nonstandard-header",
                v := _r(ALNUM, 36),
                v,
                kind="opaque",
                place="span.attribute:http.request.header.x-sso-ticket",
            ),
            Planted("places", "nonstandard-header", v := _r(ALNUM, 32), f"X-Upstream-Sess: {v} rejected"),
            Planted("places", "secret-in-span-name", pw + "r", f"AUTH default {pw}r", place="span.name"),
            Planted(
                "places",
                "secret-in-span-name",
                v := _r(URLSAFE, 43),
                f"GET /password/reset/{v}",
                place="span.name",
            ),
            Planted(
                "places",
                "secret-in-service-name",
                v := "sk_live_" + _r(ALNUM, 24),
                f"payments-{v}",
                place="service.name",
            ),
            Planted(
                "places",
                "secret-in-resource-attribute",
                v := _r(ALNUM, 40),
                f"--vault-token={v}",
                place="resource:k8s.container.args",
            ),
        ]
    return found


# --- connection strings ----------------------------------------------------------------------------------


def _connections() -> list[Planted]:
    shapes: list[tuple[str, Callable[[str], str]]] = [
        ("mysql-client", lambda p: f"mysql -u root -p{p} -h db.internal shop"),
        ("mysql-client", lambda p: f"mysqldump -uroot -p'{p}' --all-databases"),
        (
            "odbc",
            lambda p: f"Driver={{ODBC Driver 18 for SQL Server}};Server=tcp:db,1433;Uid=sa;Pwd={{{p};x}};",
        ),
        ("ado-net", lambda p: f"Data Source=db;Initial Catalog=shop;User ID=sa;Pwd={p};Encrypt=true"),
        ("ado-net", lambda p: f"Server=db;Database=shop;User Id=sa;Password={p};"),
        ("jdbc-oracle", lambda p: f"jdbc:oracle:thin:scott/{p}@db.internal:1521/ORCL"),
        ("jdbc-sqlserver", lambda p: f"jdbc:sqlserver://db:1433;databaseName=shop;user=sa;password={p};"),
        ("jdbc-mysql", lambda p: f"jdbc:mysql://db:3306/shop?user=app&password={p}&useSSL=true"),
        ("sqlplus", lambda p: f"sqlplus scott/{p}@orcl @migrate.sql"),
        ("libpq", lambda p: f'psql "host=db port=5432 user=app password={p} dbname=shop"'),
        ("libpq", lambda p: f"PGPASSWORD={p} psql -h db -U app shop"),
        ("mongodb", lambda p: f"mongodb+srv://app:{p}@cluster0.ab1cd.mongodb.net/shop?retryWrites=true"),
        ("redis", lambda p: f"redis://:{p}@cache.internal:6379/0"),
        ("redis", lambda p: f"redis-cli -h cache -a {p} ping"),
        ("amqp", lambda p: f"amqps://shop:{p}@mq.internal:5671/vhost"),
        ("curl", lambda p: f"curl -u admin:{p} https://api.internal/health"),
        ("curl", lambda p: f"curl --user deploy:{p} -X POST https://ci.internal/hook"),
        ("ldap", lambda p: f"ldapsearch -x -D cn=admin,dc=shop -w {p} -H ldap://ldap"),
        ("sshpass", lambda p: f"sshpass -p {p} ssh deploy@10.0.0.5"),
        ("snowflake", lambda p: f"snowflake://etl:{p}@acme-xy12345/analytics"),
    ]
    found = []
    for family, make in shapes:
        p = _password().replace("!", "9")  # a shell would read `!`; the rest is what people type
        found.append(Planted("connection-string", family, p, make(p)))
    return found


# --- private keys ----------------------------------------------------------------------------------------


def _jwk_members() -> dict[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    numbers = key.private_numbers()

    def enc(value: int) -> str:
        return _b64url(value.to_bytes((value.bit_length() + 7) // 8, "big"))

    return {
        "kty": "RSA",
        "n": enc(numbers.public_numbers.n),
        "e": "AQAB",
        "d": enc(numbers.d),
        "p": enc(numbers.p),
        "q": enc(numbers.q),
    }


def _private_keys() -> list[Planted]:
    found = []
    words = Mnemonic("english")
    for _ in range(2):
        body = _pem_lines(_rsa_pem())[1:-1]
        found.append(
            Planted("private-key", "pem-body-without-armour", body[3], "key material:\n" + "\n".join(body))
        )
        found.append(Planted("private-key", "pem-body-one-line", "".join(body)[100:180], "".join(body)))
        jwk = _jwk_members()
        found.append(Planted("private-key", "jwk-rsa-d", jwk["d"], f"jwks load failed: {json.dumps(jwk)}"))
        found.append(Planted("private-key", "jwk-rsa-p", jwk["p"], f"key {json.dumps(jwk)}"))
        d = _b64url(
            ec.generate_private_key(ec.SECP256R1()).private_numbers().private_value.to_bytes(32, "big")
        )
        found.append(
            Planted(
                "private-key",
                "jwk-ec-d",
                d,
                json.dumps(
                    {"kty": "EC", "crv": "P-256", "x": _b64url(bytes(32)), "y": _b64url(bytes(32)), "d": d}
                ),
            )
        )
        raw = ed25519.Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
        )
        found.append(
            Planted(
                "private-key",
                "jwk-okp-d",
                _b64url(raw),
                json.dumps({"kty": "OKP", "crv": "Ed25519", "d": _b64url(raw)}),
            )
        )
        k = _b64url(bytes(_RNG.randrange(256) for _ in range(32)))
        found.append(
            Planted("private-key", "jwk-oct-k", k, json.dumps({"kty": "oct", "alg": "HS256", "k": k}))
        )
        pem = _rsa_pem().decode()
        found.append(
            Planted("private-key", "percent-encoded-pem", pem.splitlines()[4], "key=" + quote(pem, safe=""))
        )
        found.append(
            Planted(
                "private-key", "base64-pem", _b64(pem.encode())[120:200], f"tls.key: {_b64(pem.encode())}"
            )
        )
        for strength in (128, 256):
            phrase = words.to_mnemonic(bytes(_RNG.randrange(256) for _ in range(strength // 8)))
            found.append(
                Planted(
                    "private-key", f"bip39-seed-{len(phrase.split())}", phrase, f"restore failed for {phrase}"
                )
            )
    return found


# --- personal data outside US formats -------------------------------------------------------------------

PHONE_REGIONS = (
    "GB",
    "DE",
    "FR",
    "IN",
    "BR",
    "JP",
    "AU",
    "ES",
    "IT",
    "NL",
    "MX",
    "ZA",
    "NG",
    "PL",
    "SE",
    "KR",
)


def _phone(region: str) -> phonenumbers.PhoneNumber:
    example = phonenumbers.example_number_for_type(region, phonenumbers.PhoneNumberType.MOBILE)
    assert example is not None
    digits = str(example.national_number)
    while True:
        candidate = digits[:2] + _r(string.digits, len(digits) - 2)
        number = phonenumbers.parse("+" + str(example.country_code) + candidate)
        if phonenumbers.is_valid_number(number):
            return number


def _uk_nino() -> str:
    first = _RNG.choice([c for c in string.ascii_uppercase if c not in "DFIQUV"])
    second = _RNG.choice([c for c in string.ascii_uppercase if c not in "DFIQUVO"])
    if first + second in ("BG", "GB", "KN", "NK", "NT", "TN", "ZZ"):
        return _uk_nino()
    return first + second + _r(string.digits, 6) + _RNG.choice("ABCD")


def _aadhaar() -> str:
    from stdnum import verhoeff

    body = _RNG.choice("23456789") + _r(string.digits, 10)
    return body + verhoeff.calc_check_digit(body)


def _cpf() -> str:
    from stdnum.br import cpf

    body = _r(string.digits, 9)
    if len(set(body)) == 1:
        return _cpf()
    return body + cpf._calc_check_digits(body)


_BBAN_PART = re.compile(r"(\d+)!([nac])")


def _iban_of(country: str, structure: str) -> str:
    alphabets = {"n": string.digits, "a": string.ascii_uppercase, "c": string.ascii_uppercase + string.digits}
    bban = "".join(_r(alphabets[kind], int(count)) for count, kind in _BBAN_PART.findall(structure))
    numeric = "".join(str(int(ch, 36)) for ch in bban + country + "00")
    return f"{country}{98 - int(numeric) % 97:02d}{bban}"


def iban_registry() -> list[tuple[str, str]]:
    """(country, BBAN structure) of every country in SWIFT's IBAN registry."""
    import stdnum

    path = stdnum.__path__[0] + "/iban.dat"
    entries = []
    with open(path, encoding="utf-8") as registry:
        for line in registry:
            found = re.match(r'([A-Z]{2}) .*bban="([^"]+)"', line)
            if found:
                entries.append((found[1], found[2]))
    numdb.get("iban")  # the same registry rounds reads
    return entries


def _personal() -> list[Planted]:
    found = []
    for region in PHONE_REGIONS:
        number = _phone(region)
        for style in (
            phonenumbers.PhoneNumberFormat.E164,
            phonenumbers.PhoneNumberFormat.INTERNATIONAL,
            phonenumbers.PhoneNumberFormat.NATIONAL,
        ):
            shown = phonenumbers.format_number(number, style)
            found.append(Planted("personal-intl", f"phone-{region}", shown, f"sms to {shown} bounced"))
    for _ in range(4):
        nino = _uk_nino()
        spaced = f"{nino[:2]} {nino[2:4]} {nino[4:6]} {nino[6:8]} {nino[8]}"
        found.append(Planted("personal-intl", "uk-nino", nino, f"payroll rejected NI number {nino}"))
        found.append(Planted("personal-intl", "uk-nino", spaced, f"hmrc lookup {spaced} failed"))
        aadhaar = _aadhaar()
        grouped = f"{aadhaar[:4]} {aadhaar[4:8]} {aadhaar[8:]}"
        found.append(Planted("personal-intl", "aadhaar", grouped, f"ekyc failed for {grouped}"))
        found.append(Planted("personal-intl", "aadhaar", aadhaar, f"aadhaar={aadhaar} not verified"))
        cpf = _cpf()
        shown = f"{cpf[:3]}.{cpf[3:6]}.{cpf[6:9]}-{cpf[9:]}"
        found.append(Planted("personal-intl", "cpf", shown, f"cliente {shown} bloqueado"))
        found.append(Planted("personal-intl", "cpf", cpf, f"cpf: {cpf} invalido"))
    for country, structure in iban_registry():
        iban = _iban_of(country, structure)
        spaced = " ".join(iban[i : i + 4] for i in range(0, len(iban), 4))
        shown = spaced if _RNG.random() < 0.5 else iban
        found.append(Planted("personal-intl", f"iban-{country}", shown, f"transfer to {shown} rejected"))
    return found


# --- vendor formats of gitleaks' current rules ----------------------------------------------------------

VENDOR_FAMILIES: list[tuple[str, Callable[[], str]]] = [
    ("anthropic-api-key-oat", lambda: "sk-ant-oat01-" + _r(URLSAFE, 93) + "AA"),
    (
        "1password-secret-key",
        lambda: "A3-" + _r(UPPER, 6) + "-" + _r(UPPER, 11) + "-" + "-".join(_r(UPPER, 5) for _ in range(3)),
    ),
    ("1password-service-account-token", lambda: "ops_eyJ" + _r(ALNUM, 250)),
    ("artifactory-reference-token", lambda: "cmVmd" + _r(ALNUM, 59)),
    ("aws-bedrock-api-key-long-lived", lambda: "ABSK" + _r(ALNUM + "+/", 132)),
    ("cloudflare-origin-ca-key", lambda: "v1.0-" + _r(HEX, 24) + "-" + _r(HEX, 146)),
    ("defined-networking-api-token", lambda: "dnkey=dnkey-" + _r(LOWER, 26) + "-" + _r(LOWER, 52)),
    ("digitalocean-refresh-token", lambda: "dor_v1_" + _r(HEX, 64)),
    ("dropbox-short-lived-api-token", lambda: "dropbox_token=sl." + _r(URLSAFE, 135)),
    ("github-app-user-token", lambda: "ghu_" + _r(ALNUM, 36)),
    ("gitlab-pat-routable", lambda: "glpat-" + _r(URLSAFE, 40) + "." + _r(LOWER, 9)),
    ("gitlab-runner-token-routable", lambda: "glrt-t1_" + _r(URLSAFE, 30) + "." + _r(LOWER, 9)),
    ("gitlab-feed-token", lambda: "glft-" + _r(URLSAFE, 20)),
    ("gitlab-cicd-job-token", lambda: "glcbt-" + _r(HEX, 5) + "_" + _r(URLSAFE, 20)),
    ("gitlab-kubernetes-agent-token", lambda: "glagent-" + _r(URLSAFE, 50)),
    ("gitlab-oauth-app-secret", lambda: "gloas-" + _r(URLSAFE, 64)),
    ("gitlab-incoming-mail-token", lambda: "glimt-" + _r(URLSAFE, 25)),
    ("gitlab-feature-flag-client-token", lambda: "glffct-" + _r(URLSAFE, 20)),
    ("gitlab-session-cookie", lambda: "_gitlab_session=" + _r(LOWER, 32)),
    ("openai-svcacct-key", lambda: "sk-svcacct-" + _r(URLSAFE, 74) + "T3BlbkFJ" + _r(URLSAFE, 74)),
    ("openai-admin-key", lambda: "sk-admin-" + _r(URLSAFE, 58) + "T3BlbkFJ" + _r(URLSAFE, 58)),
    ("cohere-api-token", lambda: "CO_API_KEY=" + _r(ALNUM, 40)),
    ("notion-api-token", lambda: "ntn_" + _r(string.digits, 11) + _r(ALNUM, 35)),
    ("heroku-api-key-v2", lambda: "HRKU-AA" + _r(URLSAFE, 58)),
    ("settlemint-application-access-token", lambda: "sm_aat_" + _r(ALNUM, 16)),
    ("sourcegraph-access-token", lambda: "sgp_" + _r(HEX, 16) + "_" + _r(HEX, 40)),
    ("sonar-api-token", lambda: "sonar.token=sqp_" + _r(LOWER, 40)),
    ("atlassian-api-token", lambda: "ATATT3" + _r(URLSAFE + "=", 186)),
    ("harness-api-key", lambda: "pat." + _r(URLSAFE, 22) + "." + _r(ALNUM, 24) + "." + _r(ALNUM, 20)),
    ("mapbox-secret-token", lambda: "sk.eyJ" + _r(URLSAFE, 60) + "." + _r(URLSAFE, 22)),
    ("duffel-api-token", lambda: "duffel_live_" + _r(URLSAFE, 43)),
    ("flyio-access-token", lambda: "fo1_" + _r(URLSAFE, 43)),
    ("new-relic-insert-key", lambda: "NRII-" + _r(URLSAFE, 32)),
    (
        "sentry-org-token",
        lambda: (
            "sntrys_eyJpYXQiO"
            + _r(ALNUM, 30)
            + "LCJyZWdpb25fdXJs"
            + _r(ALNUM, 30)
            + "_"
            + _r(ALNUM + "+/", 43)
        ),
    ),
    ("shopify-custom-access-token", lambda: "shpca_" + _r(HEX, 32)),
    ("slack-config-access-token", lambda: "xoxe.xoxp-1-" + _r(ALNUM, 163)),
    ("slack-config-refresh-token", lambda: "xoxe-1-" + _r(ALNUM, 146)),
    (
        "slack-legacy-token",
        lambda: "xoxs-" + "-".join(_r(string.digits, 10) for _ in range(3)) + "-" + _r(HEX, 64),
    ),
    (
        "microsoft-teams-webhook",
        lambda: (
            "https://acme.webhook.office.com/webhookb2/"
            + _uuid()
            + "@"
            + _uuid()
            + "/IncomingWebhook/"
            + _r(HEX, 32)
            + "/"
            + _uuid()
        ),
    ),
    ("sidekiq-sensitive-url", lambda: "https://" + _r(HEX, 8) + ":" + _r(HEX, 8) + "@gems.contribsys.com/"),
    ("square-secret", lambda: "sq0csp-" + _r(URLSAFE, 43)),
    ("stripe-prod-key", lambda: "sk_prod_" + _r(ALNUM, 99)),
    ("typeform-api-token", lambda: "tfp_" + _r(URLSAFE + ".", 59)),
    ("yandex-api-key", lambda: "YANDEX_API_KEY=AQVN" + _r(URLSAFE, 36)),
    ("yandex-aws-access-token", lambda: "yandex_access_key: YC" + _r(URLSAFE, 38)),
    ("twitter-bearer-token", lambda: "TWITTER_BEARER=" + "A" * 22 + _r(ALNUM + "%", 80)),
    ("plaid-api-token", lambda: "plaid_token=access-sandbox-" + _uuid()),
    ("jfrog-identity-token", lambda: "artifactory_identity: " + _r(LOWER, 64)),
    (
        "mailgun-signing-key",
        lambda: "MAILGUN_SIGNING_KEY=" + _r(HEX, 32) + "-" + _r(HEX, 8) + "-" + _r(HEX, 8),
    ),
    ("hashicorp-vault-batch-token", lambda: "hvb." + _r(URLSAFE, 138)),
    ("planetscale-oauth-token", lambda: "pscale_oauth_" + _r(URLSAFE + ".", 40)),
    ("huggingface-org-token", lambda: "api_org_" + _r(string.ascii_letters, 34)),
    ("azure-ad-client-secret-v2", lambda: _r(ALNUM, 3) + "7Q~" + _r(ALNUM + "_~.-", 34)),
    ("kubernetes-secret-yaml", lambda: "kind: Secret\ndata:\n  password: " + _b64(_r(ALNUM, 24).encode())),
    ("maxmind-license-key", lambda: _r(ALNUM, 6) + "_" + _r(ALNUM, 29) + "_mmk"),
    # the semi-generic rules: the service's name, a separator, the secret (no word like `key` beside it)
    ("sumologic-access-token", lambda: 'sumo = "' + _r(LOWER, 63) + '7"'),
    ("plaid-secret-key", lambda: "PLAID=" + _r(LOWER, 29) + "7"),
    ("looker-client-secret", lambda: "looker: " + _r(ALNUM, 23) + "7"),
    ("sourcegraph-access-token", lambda: 'sourcegraph = "' + _r(HEX, 39) + 'a"'),
    ("travisci-access-token", lambda: "TRAVIS=" + _r(LOWER, 21) + "7"),
    ("privateai-api-token", lambda: "privateai: " + _r(LOWER, 31) + "7"),
    ("linear-client-secret", lambda: 'linear = "' + _r(HEX, 31) + 'a"'),
    ("intra42-client-secret", lambda: "intra42=s-s4t2ud-" + _r(HEX, 64)),
]


def _uuid() -> str:
    return "-".join(_r(HEX, n) for n in (8, 4, 4, 4, 12))


def _vendor() -> list[Planted]:
    found = []
    for family, make in VENDOR_FAMILIES:
        for template in ("request failed with {}", "config: {}"):
            secret = make()
            found.append(Planted("vendor-current", family, secret, template.format(secret)))
    return found


@cache
def shapes() -> list[Planted]:
    """The same values on every call in a run (the keys are generated once per run)."""
    _RNG.seed(20261125)
    return _encoded() + _split() + _places() + _connections() + _private_keys() + _personal() + _vendor()


# --- what must come out as it went in --------------------------------------------------------------------

#: class names that hold a secret's word and are not secrets (Spring Security, Hibernate, Express, ...)
KEPT_IDENTIFIERS = (
    "PasswordResetController", "CsrfFilter", "JwtDecoder", "TokenService", "SessionImpl", "CookieSerializer",
    "SecretManagerClient", "ApiKeyAuthFilter", "AuthenticationManager", "PasswordEncoder",
    "BCryptPasswordEncoder", "OAuth2TokenValidator", "SessionRegistry", "CsrfTokenRepository",
    "JwtAuthenticationConverter", "TokenStore", "CredentialsProvider", "SecretsManager", "KeyVaultClient",
    "SessionFactory", "CookieCsrfTokenRepository", "PrivateKeyLoader", "AccessTokenResponseClient",
    "SignatureVerifier", "PasswordPolicy", "ApiTokenController",
)  # fmt: skip
#: the lines each identifier is tried in
IDENTIFIER_SHAPES = (
    "{x}: 500",
    "{x}=enabled",
    "{x}:handle",
    "{x}: 401 Unauthorized",
    "{x}: request failed",
    "handler={x} status=500",
    "error in {x}",
    "{x}.validate failed",
    "bean '{x}' could not be created",
)
#: stack frames whose file name holds a secret's word: file and line must stay, in every language's form
KEPT_FRAMES = (
    "\tat org.hibernate.internal.SessionImpl.flush(SessionImpl.java:42)",
    "\tat com.shop.auth.TokenService.issue(TokenService.java:88)",
    "    at Session.save (/app/lib/session.js:10:15)",
    '  File "/app/auth/password_reset.py", line 12, in reset',
    "\t/app/internal/token_store.go:57 +0x1d",
    "\tat com.shop.web.CookieParser.parse(CookieParser.kt:19)",
    "  /app/lib/jwt.rb:33:in `decode'",
    "    at verify (/app/src/csrf.ts:7:3)",
    "   3: secret_manager::load at ./src/secret_manager.rs:120:9",
    "#0 /var/www/auth/PasswordController.php(45): reset()",
    "\tat com.shop.Secrets.get(Secrets.java:61)",
    "    at Object.<anonymous> (/srv/credentials.js:5:1)",
)  # fmt: skip
#: log-only errors that differ only in what is not secret; redaction must keep them different
DISTINCT_LOG_PAIRS = (
    ("login failed in PasswordResetController", "login failed in CsrfFilter"),
    ("PasswordResetController: 404 for /reset", "AccountController: 404 for /reset"),
    ("JwtDecoder: kid unknown", "JwtDecoder: alg unknown"),
    ("Cookie: parse error in CookieSerializer", "Cookie: parse error in HeaderSerializer"),
    ("Authorization: denied for role admin", "Authorization: denied for role viewer"),
    ("secret: vault unreachable (eu-west-1)", "secret: vault unreachable (us-east-1)"),
    ("SessionImpl.java:42 flush failed", "SessionImpl.java:97 flush failed"),
    ("TokenService.java:88 timeout", "TokenService.java:120 timeout"),
    ("session.js:10 store unavailable", "session.js:44 store unavailable"),
    ("csrf check failed for form CheckoutForm", "csrf check failed for form ProfileForm"),
    ("token: TokenExpiredError at TokenService", "token: TokenMalformedError at TokenService"),
    ("session: SessionTimeout in CartSession", "session: SessionTimeout in WishlistSession"),
    # from Loghub's Hadoop and Linux samples
    (
        "Auth successful for job_1445144423722_0020 (auth:SIMPLE)",
        "Auth successful for job_1445144423722_0020 (auth:KERBEROS)",
    ),
    ("relay=[127.0.0.1], dsn=4.0.0, stat=Deferred", "relay=[127.0.0.1], dsn=5.0.0, stat=Deferred"),
)
