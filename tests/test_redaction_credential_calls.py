"""A password written as a literal argument of a call whose documented signature takes it by its place
(`smtplib.SMTP.login(user, password)`, Go's `Request.SetBasicAuth(username, password)`,
`DriverManager.getConnection(url, user, password)`, `new PDO(dsn, username, password)`), or by a setter
named after it (`setPassword("...")`, `withApiKey("...")`): a traceback prints the line that failed. A
variable passed in the password's place, and another argument of the call, stay."""

from __future__ import annotations

import pytest

from rounds_bot.redact import redact
from rounds_bot.redact.text import _rules
from tests.test_redact_engine import assert_same

SECRET = "Zq9vK2mLp8Rw"
CALLS = (
    "    server.login('noreply@acme.com', '{v}')",
    'imaplib.IMAP4.error: b"[AUTHENTICATIONFAILED]" in mail.login("me@acme.com", "{v}")',
    'ftp.login("backup", "{v}")',
    'db.auth("admin", "{v}")',
    'superagent.get(url).auth("admin", "{v}")',
    'req.SetBasicAuth("admin", "{v}")',
    "requests.get(url, auth=HTTPBasicAuth('admin', '{v}'))",
    "HTTPDigestAuth('admin', '{v}')",
    "aiohttp.BasicAuth('admin', '{v}')",
    "requests.get(url, auth=('admin', '{v}'))",
    "session.auth  = ('user', '{v}')",
    'Elasticsearch(url, basic_auth=("elastic", "{v}"))',
    "Elasticsearch(hosts, http_auth=('elastic', '{v}'))",
    "pika.PlainCredentials('guest', '{v}')",
    "conn.simple_bind_s('cn=admin,dc=acme,dc=com', '{v}')",
    'ldap_bind($ds, "cn=admin,dc=acme,dc=com", "{v}")',
    'new UsernamePasswordCredentials("admin", "{v}")',
    'new PasswordAuthentication("admin", "{v}".toCharArray())',
    'DriverManager.getConnection("jdbc:mysql://db/app", "root", "{v}")',
    'DriverManager.getConnection(url, user, "{v}")',
    '$db = mysqli_connect("localhost", "root", "{v}", "app");',
    '$db = new mysqli($host, "root", "{v}", "app");',
    '$pdo = new PDO("mysql:host=db;dbname=app", "root", "{v}");',
    'const sequelize = new Sequelize("app", "root", "{v}", {{ host: "db" }});',
    'factory.setPassword("{v}");',
    "config.setApiKey('{v}')",
    'builder.withClientSecret("{v}").build()',
    "requests.get(url, auth = ('admin', '{v}'))",
    "session.auth = ('user', '{v}')",
)
KEPT = (
    "server.login(user, password)",
    "server.login('noreply', os.environ['SMTP_PASSWORD'])",
    'DriverManager.getConnection("jdbc:mysql://db/app", "root", password)',
    'req.SetBasicAuth("admin", "")',
    'factory.setPassword("${RABBIT_PASSWORD}")',
    'factory.setHost("rabbitmq.internal")',
    'config.setTimeout("3600s")',
    'page.title("Welcome back", "Sign in")',
    # a setter of a setting about a secret (its header, its id, its visibility) sets no secret
    'setApiKeyHeader("X-Api-Key")',
    'client.setTokenHeader("Authorization")',
    'filter.setPasswordParameter("password")',
    'request.withSecretId("my-secret")',
    'config.withApiKeyPrefix("Bearer")',
    'field.setPasswordVisibility("hidden")',
    'meter.setPasswordStrength("strong")',
    # a login or an auth that takes a backend's name or a strategy's, not a password
    "django.contrib.auth.login(request, 'x')",
    "LoginManager.login(self, 'default')",
    "app.auth(strategy, 'google')",
)


@pytest.mark.parametrize("call", CALLS)
def test_a_password_given_a_call_by_its_place_is_redacted(call: str) -> None:
    out = redact(call.format(v=SECRET))
    assert SECRET not in out, out
    assert "[REDACTED:" in out


@pytest.mark.parametrize("text", KEPT)
def test_a_call_with_no_literal_password_stays(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    "text",
    (
        ".login(" + "'a' " * 25_000,
        "getConnection(" + "a," * 50_000,
        ".setPassword(" + '"' * 100_000,
        "auth=(" + "'" * 100_000,
    ),
)
def test_an_adversarial_call_is_read_in_linear_time(text: str) -> None:
    # were a quote, a comma or a blank read two ways, each repeat would double the ways to read the text:
    # about 100 KB that holds no password
    assert redact(text) == text


def test_every_engine_gives_the_reference_text_for_calls() -> None:
    texts = [call.format(v=SECRET) for call in CALLS] + list(KEPT)
    assert assert_same(_rules("all"), texts) == len(texts)
