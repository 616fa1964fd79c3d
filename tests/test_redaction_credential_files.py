"""Passwords in the layouts of the files and strings that hold them by place or by an element, not by a
`name=value` pair: the Go MySQL driver's DSN (`user:password@tcp(host:3306)/db`), an XML element named by
its `name` or `key` attribute (Hibernate's `<property name="...password">`, `java.util.Properties` in XML,
.NET's `<setting name=...><value>`; not Android's `<string name=...>`, the UI's text), a name element before
a value element (Hadoop's `<name>`/`<value>`, `web.xml`'s `<param-name>`/`<param-value>`), and PHP's
`var_dump` of an array or object."""

from __future__ import annotations

import pytest

from rounds_bot.redact import redact
from rounds_bot.redact.text import _rules
from tests.test_redact_engine import assert_same

SECRET = "Zq9vK2mLp8Rw"
LAYOUTS = (
    # https://github.com/go-sql-driver/mysql#dsn-data-source-name
    'sql.Open("mysql", "root:{v}@tcp(db:3306)/app?parseTime=true")',
    "dial tcp: lookup db: no such host dsn=app:{v}@tcp(127.0.0.1:3306)/app",
    "app:{v}@unix(/var/run/mysqld/mysqld.sock)/app",
    '<property name="hibernate.connection.password">{v}</property>',
    '<entry key="db.password">{v}</entry>',
    '<parameter name="password">\n  {v}\n</parameter>',
    '<setting name="ApiKey" serializeAs="String">\n  <value>{v}</value>\n</setting>',
    "<property>\n  <name>fs.s3a.secret.key</name>\n  <value>{v}</value>\n</property>",
    "<context-param>\n  <param-name>db.password</param-name>\n  <param-value>{v}</param-value>\n"
    "</context-param>",
    # https://www.php.net/manual/en/function.var-dump.php
    'array(2) {{\n  ["user"]=>\n  string(5) "admin"\n  ["password"]=>\n  string(12) "{v}"\n}}',
    'object(Db)#1 (1) {{\n  ["password":"Db":private]=>\n  string(12) "{v}"\n}}',
    'object(stdClass)#1 (1) {{ ["password"]=> string(12) "{v}" }}',
)
KEPT = (
    "12:30:45:123:456",
    "fe80:0:0:0:1",
    "main.go:42:12: undefined: dsn",
    "ERROR:root:app:failed to connect",
    "db.internal:5432:orders:app:*",
    "cache:3600:user:42:profile",
    '<property name="hibernate.connection.username">app</property>',
    '<string name="app_name">Shop</string>',
    "<property>\n  <name>fs.s3a.endpoint</name>\n  <value>s3.eu-west-1.amazonaws.com</value>\n</property>",
    '<entry key="db.password">${DB_PASSWORD}</entry>',
    'array(1) {\n  ["user"]=>\n  string(5) "admin"\n}',
    "connected to app@tcp(db:3306)/app",
    # five colon-separated fields in telemetry are no password file's line (`.pgpass` is not read)
    "127.0.0.1:5432:app:user:connected",
    "broker-1.kafka.svc:9092:orders:3:15234",
    "node-1.es.internal:9300:cluster:green:3",
    "api.example.com:443:GET:users:200",
    "app.cache:3600:user:42:9f8e7d6c5b4a",
    'msg="db.internal:5432:orders:app:x"',
    # Android's string resources are the UI's text; a resource's reference and a number are no secret
    '<string name="prompt_password">Password</string>',
    '<string name="api_secret">@string/placeholder_secret</string>',
    '<entry key="db.password">@string/db_password</entry>',
    '<entry key="password.expiry.days">90</entry>',
    '<add key="TokenLifetimeMinutes">60</add>',
    "<init-param>\n  <param-name>tokenExpirySeconds</param-name>\n  <param-value>3600</param-value>\n"
    "</init-param>",
)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_password_in_a_credential_files_layout_is_redacted(layout: str) -> None:
    out = redact(layout.format(v=SECRET))
    assert SECRET not in out, out
    assert "[REDACTED:" in out


@pytest.mark.parametrize("text", KEPT)
def test_a_line_of_the_same_shape_with_no_password_stays(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(
    "text",
    (
        "a:" * 50_000 + "@tcp(",
        "a.b:" * 25_000 + "\n",
        '<property name="password"' + " " * 100_000,
        "<name>password</name>" * 5_000,
        '["password"]=>' * 7_000,
    ),
)
def test_an_adversarial_text_is_read_in_linear_time(text: str) -> None:
    # were a quote, a comma or a blank read two ways, each repeat would double the ways to read the text:
    # about 100 KB that holds no password
    assert redact(text) == text


def test_a_var_dump_on_one_line_keeps_its_type() -> None:
    text = f'object(stdClass)#1 (1) {{ ["password"]=> string(12) "{SECRET}" }}'
    expected = 'object(stdClass)#1 (1) { ["password"]=> string(12) "[REDACTED:key_value_secret]" }'
    assert redact(text) == expected


def test_every_engine_gives_the_reference_text_for_credential_files() -> None:
    texts = [layout.format(v=SECRET) for layout in LAYOUTS] + list(KEPT)
    assert assert_same(_rules("all"), texts) == len(texts)
