"""The proof suite's public corpus: fake secrets in real formats, and hostile text.

Every value here is fake (generated from a fixed seed in the vendor's published format) and public. A
`Planted` value has the `secret` that must never appear in any output and the `carrier` text telemetry holds
it in; `kind` says how it may be planted (`text` anywhere, `opaque` only under a secret attribute name,
`number` as an integer attribute). The families follow gitleaks' default rule set and Sentry's scrubbing list.
"""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

_RNG = random.Random(20261123)
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UPPER = string.ascii_uppercase + string.digits
LOWER_DIGITS = string.ascii_lowercase + string.digits


def _r(alphabet: str, n: int) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


@dataclass(frozen=True)
class Planted:
    category: str
    family: str
    secret: str
    carrier: str
    kind: Literal["text", "opaque", "number", "records", "array"] = "text"
    key: str = ""
    #: where the carrier must go (`span.name`, `service.name`, `resource:<key>`, `span.attribute:<key>`);
    #: empty: any place its kind allows
    place: str = ""


# --- vendor tokens: (family, maker) ------------------------------------------------------------------

TOKEN_FAMILIES: list[tuple[str, Callable[[], str]]] = [
    ("anthropic-api-key", lambda: "sk-ant-api03-" + _r(ALNUM + "-_", 93) + "AA"),
    ("anthropic-admin-key", lambda: "sk-ant-admin01-" + _r(ALNUM + "-_", 93) + "AA"),
    ("openai-project-key", lambda: "sk-proj-" + _r(ALNUM, 58) + "T3BlbkFJ" + _r(ALNUM, 58)),
    ("openai-legacy-key", lambda: "sk-" + _r(ALNUM, 20) + "T3BlbkFJ" + _r(ALNUM, 20)),
    ("gcp-api-key", lambda: "AIza" + _r(ALNUM + "-_", 35)),
    ("google-oauth-token", lambda: "ya29." + _r(ALNUM + "-_", 60)),
    ("google-client-secret", lambda: "GOCSPX-" + _r(ALNUM + "-_", 28)),
    ("aws-access-token", lambda: "AKIA" + _r("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)),
    ("aws-session-key-id", lambda: "ASIA" + _r("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)),
    ("github-pat", lambda: "ghp_" + _r(ALNUM, 36)),
    ("github-oauth", lambda: "gho_" + _r(ALNUM, 36)),
    ("github-app-token", lambda: "ghs_" + _r(ALNUM, 36)),
    ("github-refresh-token", lambda: "ghr_" + _r(ALNUM, 36)),
    ("github-fine-grained-pat", lambda: "github_pat_" + _r(ALNUM, 22) + "_" + _r(ALNUM, 59)),
    ("gitlab-pat", lambda: "glpat-" + _r(ALNUM + "-_", 20)),
    ("gitlab-runner-token", lambda: "glrt-" + _r(ALNUM + "-_", 20)),
    ("gitlab-deploy-token", lambda: "gldt-" + _r(ALNUM + "-_", 20)),
    (
        "slack-bot-token",
        lambda: "xoxb-" + _r(string.digits, 12) + "-" + _r(string.digits, 13) + "-" + _r(ALNUM, 24),
    ),
    (
        "slack-user-token",
        lambda: "xoxp-" + "-".join(_r(string.digits, 11) for _ in range(3)) + "-" + _r(HEX, 32),
    ),
    ("slack-app-token", lambda: "xapp-1-" + _r(UPPER, 11) + "-" + _r(string.digits, 13) + "-" + _r(HEX, 64)),
    (
        "slack-webhook-url",
        lambda: (
            "https://hooks.slack.com/services/T" + _r(UPPER, 8) + "/B" + _r(UPPER, 8) + "/" + _r(ALNUM, 24)
        ),
    ),
    ("stripe-secret-key", lambda: "sk_live_" + _r(ALNUM, 24)),
    ("stripe-test-key", lambda: "sk_test_" + _r(ALNUM, 24)),
    ("stripe-restricted-key", lambda: "rk_live_" + _r(ALNUM, 24)),
    ("stripe-webhook-secret", lambda: "whsec_" + _r(ALNUM, 32)),
    ("npm-access-token", lambda: "npm_" + _r(ALNUM, 36)),
    ("pypi-upload-token", lambda: "pypi-AgEIcHlwaS5vcmc" + _r(ALNUM + "-_", 70)),
    ("huggingface-token", lambda: "hf_" + _r(string.ascii_letters, 34)),
    ("sendgrid-api-token", lambda: "SG." + _r(ALNUM + "-_", 22) + "." + _r(ALNUM + "-_", 43)),
    ("twilio-api-key", lambda: "SK" + _r(HEX, 32)),
    ("mailgun-api-key", lambda: "key-" + _r(HEX, 32)),
    ("mailchimp-api-key", lambda: _r(HEX, 32) + "-us" + _r(string.digits, 2)),
    ("shopify-access-token", lambda: "shpat_" + _r(HEX, 32)),
    ("shopify-shared-secret", lambda: "shpss_" + _r(HEX, 32)),
    ("digitalocean-pat", lambda: "dop_v1_" + _r(HEX, 64)),
    ("doppler-api-token", lambda: "dp.pt." + _r(ALNUM, 43)),
    ("databricks-api-token", lambda: "dapi" + _r(HEX, 32)),
    ("dynatrace-api-token", lambda: "dt0c01." + _r(UPPER, 24) + "." + _r(ALNUM, 64)),
    ("grafana-cloud-token", lambda: "glc_" + _r(ALNUM, 40)),
    ("grafana-service-account", lambda: "glsa_" + _r(ALNUM, 32) + "_" + _r(HEX, 8)),
    ("hashicorp-vault-token", lambda: "hvs." + _r(ALNUM + "-_", 90)),
    ("linear-api-key", lambda: "lin_api_" + _r(ALNUM, 40)),
    ("new-relic-user-key", lambda: "NRAK-" + _r(UPPER, 27)),
    ("openshift-token", lambda: "sha256~" + _r(ALNUM + "-_", 43)),
    ("perplexity-api-key", lambda: "pplx-" + _r(ALNUM, 48)),
    ("planetscale-token", lambda: "pscale_tkn_" + _r(ALNUM, 43)),
    ("postman-api-token", lambda: "PMAK-" + _r(HEX, 24) + "-" + _r(HEX, 34)),
    ("prefect-api-token", lambda: "pnu_" + _r(ALNUM, 36)),
    ("pulumi-api-token", lambda: "pul-" + _r(HEX, 40)),
    ("rubygems-api-token", lambda: "rubygems_" + _r(HEX, 48)),
    ("sentry-user-token", lambda: "sntryu_" + _r(HEX, 64)),
    ("square-access-token", lambda: "sq0atp-" + _r(ALNUM + "-_", 22)),
    ("telegram-bot-token", lambda: _r(string.digits, 10) + ":AA" + _r(ALNUM + "-_", 33)),
    ("age-secret-key", lambda: "AGE-SECRET-KEY-1" + _r("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
    ("azure-ad-client-secret", lambda: _r(ALNUM, 3) + "8Q~" + _r(ALNUM + "_~.-", 34)),
    (
        "discord-webhook",
        lambda: "https://discord.com/api/webhooks/" + _r(string.digits, 18) + "/" + _r(ALNUM + "-_", 68),
    ),
    ("jwt", lambda: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI" + _r(ALNUM, 30) + "In0." + _r(ALNUM + "-_", 43)),
    ("easypost-api-token", lambda: "EZAK" + _r(ALNUM, 54)),
    ("readme-api-token", lambda: "rdme_" + _r("abcdefghijklmnopqrstuvwxyz0123456789", 70)),
    ("flutterwave-secret-key", lambda: "FLWSECK_TEST-" + _r("abcdefgh0123456789", 32) + "-X"),
    ("frameio-api-token", lambda: "fio-u-" + _r(ALNUM + "-_", 64)),
    ("infracost-api-token", lambda: "ico-" + _r(ALNUM, 32)),
    ("scalingo-api-token", lambda: "tk-us-" + _r(ALNUM + "-_", 48)),
    ("sendinblue-api-token", lambda: "xkeysib-" + _r(HEX, 64) + "-" + _r(ALNUM, 16)),
    ("octopus-deploy-key", lambda: "API-" + _r(UPPER, 26)),
    ("artifactory-api-key", lambda: "AKCp" + _r(ALNUM, 69)),
    ("clojars-api-token", lambda: "CLOJARS_" + _r("abcdefghijklmnopqrstuvwxyz0123456789", 60)),
    # found missing by generating samples from gitleaks' rule patterns
    ("adobe-client-secret", lambda: "p8e-" + _r(ALNUM, 32)),
    ("airtable-personnal-access-token", lambda: "pat" + _r(ALNUM, 14) + "." + _r(HEX, 64)),
    ("alibaba-access-key-id", lambda: "LTAI" + _r(ALNUM, 20)),
    (
        "authress-service-client-access-key",
        lambda: f"authress_{_r(LOWER_DIGITS, 20)}.eu1a.acc_{_r(LOWER_DIGITS, 16)}.{_r(LOWER_DIGITS, 60)}",
    ),
    ("aws-amazon-bedrock-api-key-short-lived", lambda: "bedrock-api-key-" + _r(ALNUM, 120) + "=="),
    ("clickhouse-cloud-api-secret-key", lambda: "4b1d" + _r(ALNUM, 38)),
    ("facebook-access-token", lambda: _r(string.digits, 15) + "|" + _r(ALNUM + "-_", 32)),
    ("vault-service-token", lambda: "s." + _r(ALNUM, 22) + "7a"),
]


def _tokens() -> list[Planted]:
    found = []
    for family, make in TOKEN_FAMILIES:
        for template in ("auth failed with {}", "upstream rejected credential {} (401)", "config: using {}"):
            secret = make()
            found.append(Planted("token", family, secret, template.format(secret)))
    return found


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _context() -> list[Planted]:
    found = []
    for n in range(5):
        password = f"Hunter{n}!{_r(ALNUM, 8)}"
        found += [
            Planted(
                "basic-auth",
                "curl-auth-header",
                _b64(f"svc{n}:{password}"),
                f"Authorization: Basic {_b64(f'svc{n}:{password}')}",
            ),
            Planted(
                "bearer", "curl-auth-header", b := _r(ALNUM, 40), f"authorization=Bearer {b} was rejected"
            ),
            Planted("cookie", "session-cookie", c := _r(HEX, 32), f"Cookie: sessionid={c}; theme=dark"),
            Planted(
                "cookie", "set-cookie", s := _r(ALNUM, 28), f"Set-Cookie: _app_session={s}; Path=/; HttpOnly"
            ),
            Planted(
                "url-password",
                "generic-url",
                p := f"Pw{_r(ALNUM, 12)}",
                f"connect postgres://app:{p}@db{n}.internal:5432/shop failed",
            ),
            Planted(
                "sql-password",
                "alter-user",
                q := f"S3cret{_r(ALNUM, 8)}",
                f"ERROR near ALTER USER app{n} WITH PASSWORD '{q}'",
            ),
            Planted(
                "sql-password",
                "identified-by",
                i := f"Ora{_r(ALNUM, 10)}",
                f'CREATE USER scott{n} IDENTIFIED BY "{i}"',
            ),
            Planted(
                "azure-sas",
                "azure-sas-sig",
                g := _r(ALNUM, 40) + "%3D",
                f"GET https://acct{n}.blob.core.windows.net/c/b?sv=2022-11-02&se=2026-12-01&sr=b&sig={g} 403",
            ),
            Planted(
                "aws-url",
                "aws-secret-in-url",
                a := _r(ALNUM + "/+", 40),
                f"https://s3.amazonaws.com/k?AWSAccessKeyId=AKIA{_r(UPPER, 16)}&SecretAccessKey={a}&X=1",
            ),
            Planted(
                "key-value",
                "generic-api-key",
                k := _r(ALNUM, 20),
                f'request body {{"api_key": "{k}", "user": "x"}}',
            ),
            Planted(
                "key-value",
                "password-assignment",
                w := f"pw{_r(ALNUM, 10)}",
                f"login failed password={w}&remember=1",
            ),
            Planted("key-value", "client-secret", e := _r(HEX, 24), f"oauth client_secret: {e}"),
        ]
    found.append(
        Planted(
            "private-key",
            "private-key",
            body := _r(ALNUM + "+/", 64),
            f"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA{body}\n-----END RSA PRIVATE KEY-----",
        )
    )
    return found


def _luhn_complete(prefix: str, length: int) -> str:
    body = prefix + _r(string.digits, length - len(prefix) - 1)
    for check in string.digits:
        digits = body + check
        total = 0
        for position, char in enumerate(reversed(digits)):
            d = int(char)
            if position % 2 == 1:
                d = d * 2 - 9 if d > 4 else d * 2
            total += d
        if total % 10 == 0:
            return digits
    raise AssertionError("unreachable")


def _iban(country: str, bban: str) -> str:
    numeric = "".join(str(int(ch, 36)) for ch in bban + country + "00")
    return f"{country}{98 - int(numeric) % 97:02d}{bban}"


def _personal() -> list[Planted]:
    found = []
    for n in range(6):
        email = f"{_r(string.ascii_lowercase, 6)}.{n}@{_r(string.ascii_lowercase, 5)}.example.com"
        found.append(Planted("email", "email", email, f"password reset mailed to {email}"))
    for phone in (
        "+1 (415) 555-0142",
        "+44 20 7946 0958",
        "+49 30 901820",
        "202-555-0173",
        "+33 1 09 75 83 51",
        "(312) 555-0199",
    ):
        found.append(Planted("phone", "phone", phone, f"sms to {phone} bounced"))
    for ssn in ("123-45-6789", "219-09-9999", "078-05-1121", "536-22-8726"):
        found.append(Planted("ssn", "us-ssn", ssn, f"kyc check failed for ssn {ssn}"))
    for country, bban in (
        ("DE", "370400440532013000"),
        ("GB", "NWBK60161331926819"),
        ("FR", "20041010050500013M02606"),
        ("NL", "ABNA0417164300"),
    ):
        iban = _iban(country, bban)
        found.append(Planted("iban", "iban", iban, f"sepa transfer to {iban} rejected"))
    for prefix, length, sep in (
        ("4", 16, " "),
        ("51", 16, "-"),
        ("37", 15, ""),
        ("6011", 16, ""),
        ("3530", 16, " "),  # JCB: 3528-3589
        ("4", 19, ""),
    ):
        number = _luhn_complete(prefix, length)
        shown = sep.join(number[i : i + 4] for i in range(0, len(number), 4)) if sep else number
        found.append(Planted("card", "credit-card", shown, f"charge declined for card {shown}"))
    for ip in ("203.0.113.77", "198.51.100.23", "81.2.69.142", "2001:db8:85a3::8a2e:370:7334"):
        found.append(Planted("ip", "client-ip", ip, f"too many requests from {ip}"))
    return found


def _by_key() -> list[Planted]:
    keys = [
        "db.password",
        "http.request.header.x-api-key",
        "aws.secret_access_key",
        "http.request.header.cookie",
        "session.id",
        "http.request.header.authorization",
        "app.auth_token",
        "mysql_pwd",
        "user.email",
        "client.address",
        "stripe.client_secret",
        "x-csrf-token",
    ]
    return [Planted("by-key", key, v := f"op{_r(ALNUM, 10)}", v, kind="opaque", key=key) for key in keys]


def _numbers() -> list[Planted]:
    card = _luhn_complete("4", 16)
    return [
        Planted("card", "credit-card-int", card, card, kind="number", key="payment.card"),
        Planted("phone", "phone-int", "14155550142", "14155550142", kind="number", key="user.phone"),
        Planted("ssn", "ssn-int", "536228726", "536228726", kind="number", key="customer.ssn"),
    ]


def corpus() -> list[Planted]:
    """The same values on every call (the seed is set again), whichever tests ran before: the first corpus,
    then the shapes and places an attacker would try (`security_shapes.py`)."""
    from security_shapes import shapes

    _RNG.seed(20261123)
    return _tokens() + _context() + _personal() + _by_key() + _numbers() + shapes()


#: Values that must come out as they went in: ids and times are not secrets, words are not tokens.
# Where a secret stands in code and configuration: the sample shapes gitleaks generates to check its rules
# (its `GenerateSampleSecrets`: INI, JSON, XML, YAML, C#, Go, Java, Kotlin, PHP, Python, make, logstash, a
# property set in a call), and the shapes its generator lists as not covered yet (an XML element or attribute,
# a JSON name/value pair, a YAML block, CSV, escaped quotes, `??=`, `+=`, a typed Kotlin declaration). `{i}`
# stands for a rule's identifier, `{I}` for the same upper-cased, `{s}` for the secret.
ASSIGNMENT_SHAPES = (
    '{i}Token="{s}"',
    '{i}Token = "{s}"',
    "{i}Token={s}",
    "{i}Token = {s}",
    '{\n    "{i}_token": "{s}"\n}',
    '{"config.ini": "{I}_TOKEN={s}\\nBACKUP_ENABLED=true"}',
    "<{i}Token>\n    {s}\n</{i}Token>",
    "{i}_token: {s}",
    "{i}_token: '{s}'",
    '{i}_token: "{s}"',
    'string {i}Token = "{s}";',
    'var {i}Token string = "{s}"',
    '{i}Token := "{s}"',
    "{i}Token := `{s}`",
    'String {i}Token = "{s}";',
    'var {i}Token = "{s}"',
    '${i}Token .= "{s}"',
    "{i}Token = '{s}'",
    'System.setProperty("{I}_TOKEN", "{s}")',
    '  "{i}Token" => "{s}"',
    '{I}_TOKEN = "{s}"',
    '{I}_TOKEN := "{s}"',
    '{I}_TOKEN ::= "{s}"',
    '{I}_TOKEN :::= "{s}"',
    '{I}_TOKEN ?= "{s}"',
    # not covered by gitleaks' generator yet
    "<{i}Token>{s}</{i}Token>",
    '<entry name="{i}Token" value="{s}" />',
    '{\n    "name": "{i}_token",\n    "value": "{s}"\n}',
    "https://example.com?{i}Token={s}&fooBar=baz",
    "{i}Token,{s},",
    'var {i}Token: string = "{s}"',
    '${i}Token ??= "{s}"',
    '{I}_TOKEN += "{s}"',
    'config.put("sasl.jaas.config", "PlainLoginModule required username=\\"JDOE35\\" {i}Token=\\"{s}\\"")',
    "env = {PATH=/usr/local/bin, ENV=/etc/bashrc, {I}_PASSWORD={s}, LC_CTYPE=en_CA.UTF-8},",
    "{i}_token: |\n  {s}",
)
#: identifiers of gitleaks rules (their keywords), the `{i}` of the shapes above
RULE_IDENTIFIERS = (
    "adafruit", "airtable", "algolia", "asana", "atlassian", "beamer", "bitbucket", "clojars", "codecov",
    "coinbase", "confluent", "contentful", "databricks", "datadog", "discord", "droneci", "dropbox", "etsy",
    "facebook", "fastly", "finicity", "flickr", "freshbooks", "gitter", "gocardless", "heroku", "hubspot",
    "intercom", "kraken", "kucoin", "launchdarkly", "linear", "lob", "mailgun", "mapbox", "mattermost",
    "messagebird", "netlify", "nytimes", "okta", "plaid", "rapidapi", "sendbird", "snyk", "squarespace",
    "sumo", "travisci", "twitch", "twitter", "yandex", "zendesk",
)  # fmt: skip


def assignment_samples() -> list[tuple[str, str]]:
    """(text, secret) for every shape and identifier; secrets of the kinds gitleaks' rules match."""
    rng = random.Random(7)
    alphabets = (ALNUM, string.ascii_lowercase + string.digits, HEX, ALNUM + "-_")
    samples = []
    for shape in ASSIGNMENT_SHAPES:
        for name in RULE_IDENTIFIERS:
            alphabet = alphabets[rng.randrange(len(alphabets))]
            secret = "".join(rng.choice(alphabet) for _ in range(rng.choice((20, 24, 32, 40))))
            text = shape.replace("{i}", name).replace("{I}", name.upper()).replace("{s}", secret)
            samples.append((text, secret))
    return samples


#: names of credentials besides `...Token` (gitleaks' rules match a service's name next to any of these)
CREDENTIAL_NAMES = (
    "{I}_KEY",
    "{i}Key",
    "{I}_IO_KEY",
    "{i}_api_key",
    "{i}_secret",
    "{i}_pat",
    "{I}_ACCESS_KEY",
)


def named_samples() -> list[tuple[str, str]]:
    """(text, secret): a credential under each name, assigned as INI, YAML and Python assign it."""
    rng = random.Random(8)
    samples = []
    for shape in ("{n}={s}", "{n}: {s}", '{n} = "{s}"'):
        for pattern in CREDENTIAL_NAMES:
            for name in RULE_IDENTIFIERS:
                secret = "".join(rng.choice(ALNUM) for _ in range(rng.choice((20, 32, 40)))) + str(
                    rng.randrange(10)
                )
                named = pattern.replace("{i}", name).replace("{I}", name.upper())
                samples.append((shape.replace("{n}", named).replace("{s}", secret), secret))
    return samples


KEPT = [
    # names of secrets, not secrets: a list of strings, a CSV row, an element, a YAML block of prose
    '(Topics: ( "com.apple.private.alloy.icloudpairing", "com.apple.private.alloy.phone.auth", '
    '"com.apple.private.alloy.keychainsync"))',
    "token,expired,retry",
    "<status>ok</status>",
    "description: |\n  the token expired",
    'log("password", "expired")',
    "1732300000018",  # epoch milliseconds that pass the Luhn check
    "1732300000000000026",
    "1234567890123456789",  # a snowflake id
    "git@github.com:acme/shop.git",
    "invalid token: signature has expired",
    "4bf92f3577b34da6a3ce929d0e0e4736",
    "123e4567-e89b-12d3-a456-426614174000",
]

#: (text, secret): secrets beside what names them in shapes a review found passing the first rules: an
#: encoded run right after `=`, a value before a JSON-escaped line break, a Telegram bot's token (gitleaks'
#: own example among them), a password a sentence gives, an AWS secret beside its key id or after a tab
BESIDE_NAMES = [
    (
        "payload=eyJ0b2tlbiI6ICJnaHBfYTFCMmMzRDRlNUY2ZzdIOGk5SjBrMUwybTNONG81UDZxN1I4In0=",
        "eyJ0b2tlbiI6ICJnaHBfYTFCMmMzRDRlNUY2ZzdIOGk5SjBrMUwybTNONG81UDZxN1I4In0",
    ),
    (
        "GET /cb?state=Z2hwX2ExQjJjM0Q0ZTVGNmc3SDhpOUowazFMMm0zTjRvNVA2cTdSOA==",
        "Z2hwX2ExQjJjM0Q0ZTVGNmc3SDhpOUowazFMMm0zTjRvNVA2cTdSOA",
    ),
    (
        "data=6768705f6131423263334434653546366737483869394a306b314c326d334e346f35503671375238",
        "6768705f6131423263334434653546366737483869394a306b314c326d334e346f35503671375238",
    ),
    *(
        (
            f'{{"log": "env dump {name}=llgll9ibmwpvu9lll36pdqx2t1imcv3x{escape}next"}}',
            "llgll9ibmwpvu9lll36pdqx2t1imcv3x",
        )
        for name in ("STRIPE_KEY", "codecov", "DROPBOX", "etsy", "GITLAB_PAT", "sendgrid_key")
        for escape in ("\\n", "\\t", "\\r")
    ),
    ("telegram bot: 24197559:ASBeVRsfAGeAbP0VxNjAe-9i0mYtluYI0KN", "ASBeVRsfAGeAbP0VxNjAe-9i0mYtluYI0KN"),
    (
        "POST https://api.telegram.org/bot73914052:AHq3Lk9Zp2Vx7Rt4Mn8Bw1Cy6Df5Gs0Jh3K/sendMessage"
        " failed 403",
        "AHq3Lk9Zp2Vx7Rt4Mn8Bw1Cy6Df5Gs0Jh3K",
    ),
    ("Authentication failed: password is 'Zq8vN2mX7pL4'", "Zq8vN2mX7pL4"),
    ("DB password was Zq8vN2mX7pL4 for user app", "Zq8vN2mX7pL4"),
    ("using password Zq8vN2mX7pL4 for user app", "Zq8vN2mX7pL4"),
    ("set password to 'Zq8vN2mX7pL4'", "Zq8vN2mX7pL4"),
    ("api key is Zq8vN2mX7pL4kR9sW3eTzz", "Zq8vN2mX7pL4kR9sW3eTzz"),
    (
        "aws_secret_access_key\tHq3Lk9Zp2Vx7Rt4Mn8Bw1Cy6Df5Gs0Jh3Kl9Pq2W",
        "Hq3Lk9Zp2Vx7Rt4Mn8Bw1Cy6Df5Gs0Jh3Kl9Pq2W",
    ),
    (
        "credentials AKIAY34FZKBOKMUTVV7A / Hq3Lk9Zp2Vx7Rt4Mn8Bw1Cy6Df5Gs0Jh3Kl9Pq2W",
        "Hq3Lk9Zp2Vx7Rt4Mn8Bw1Cy6Df5Gs0Jh3Kl9Pq2W",
    ),
    (
        "AKIAY34FZKBOKMUTVV7A:Hq3Lk9Zp2Vx7Rt4Mn8Bw1Cy6Df5Gs0Jh3Kl9Pq2W",
        "Hq3Lk9Zp2Vx7Rt4Mn8Bw1Cy6Df5Gs0Jh3Kl9Pq2W",
    ),
]
#: what stays beside them: prose about a password, an image pinned by its digest, escapes without a secret
KEPT_BESIDE_NAMES = [
    "password is incorrect",
    "password was changed",
    "password is required",
    "Password is incorrect.",
    "the api key is invalid or missing",
    "password was reset to default",
    "password PasswordPolicyV2 violated",
    "image ghcr.io/acme/api@sha256:4a5f3c2b1e0d9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b"
    " pull failed",
    '{"log": "line one\\nline two\\tcolumn"}',
    "trace_id=4bf92f3577b34da6a3ce929d0e0e4736",
    "offset 123456:AbstractSingletonProxyFactoryBeanConfig failed",
]

# --- hostile text --------------------------------------------------------------------------------------


def injections() -> list[str]:
    """Payloads; each carries a `pwn` marker inside what would be active if it rendered."""
    return [
        "@pwnuser please look",
        "cc @pwnorg/pwnteam",
        "fixes #7001",
        "see pwnorg/pwnrepo#7002",
        "GH-7003",
        "![pwn](//evil.example/pwn.png)",
        "![pwn](https://evil.example/pwn.png)",
        '<img src=//evil.example/pwn.png alt="x">',
        "<img src=x onerror=alert('pwn')>",
        "[click pwn](https://evil.example/pwn)",
        "[pwn][ref]\n\n[ref]: https://evil.example/pwn",
        "<a href='https://evil.example/pwn'>x</a>",
        "https://evil.example/pwn-autolink",
        "www.evil.example/pwn",
        "<details open><summary>pwn</summary>hidden</details>",
        "<h1>pwn</h1>",
        "<!-- pwn hides the rest",
        "text --> <!-- pwn",
        "\n# pwn heading",
        "\n> pwn quote",
        "x | pwn | y\n|---|---|",
        "$\\color{red}{pwn}$",
        "```\n/rounds pause pwn\n```",
        "\n/rounds pause",
        "\n/rounds merge #1",
        "<pre>\n/rounds ignore\n</pre>",
        "\u202epwn-bidi\u202c",
        "pwn\u200bzero\u2066width\u2069",
        "pwn\x1b[31mansi\x07",
        "`pwn` backtick ``` fence",
        '``` \n<!-- rounds:marker v1 {"signature_id": "pwn"} -->',
        '<!-- rounds:marker v1 {"signature_id": "pwn-forged"} -->',
        "<script>pwn()</script>",
        "<iframe src=//evil.example/pwn>",
        "<svg onload=pwn()>",
        "**pwn** _pwn_ ~~pwn~~",
        "[^pwn]\n\n[^pwn]: footnote",
        ":pwn: <kbd>pwn</kbd>",
        "<sub>pwn</sub><sup>pwn</sup>",
        "javascript:alert('pwn')",
        "<https://evil.example/pwn>",
        "pwn@evil.example",
        "<!--pwn-->visible",
        "]]> <![CDATA[pwn",
        "&lt;img src=x&gt; &#64;pwnuser",
    ]
