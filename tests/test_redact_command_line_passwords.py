"""Passwords given on a command line by a flag of the client's own: keytool's `-storepass` and `-keypass`
(and their `src`/`dest` forms), `docker login -p` (and the registry logins that copy it), `az login -p`, and
SQL Server's `sqlcmd -P`, `bcp -P`. Elsewhere `-p` is a port or a path and stays."""

from __future__ import annotations

import pytest

from rounds_bot.redact import redact
from rounds_bot.redact.text import _rules
from tests.test_redact_engine import assert_same

SECRET = "s3cr3tP4ssw0rd2024"
COMMANDS = (
    "keytool -importkeystore -srckeystore a.p12 -srcstorepass {v} -destkeystore b.jks",
    "keytool -genkeypair -alias app -keystore app.jks -storepass {v} -keypass {v}",
    "keytool -importkeystore -deststorepass {v} -destkeypass {v} -srckeystore a.p12",
    "jarsigner -keystore app.jks -storepass '{v}' app.jar app",
    "docker login -u ci -p {v} registry.example.com",
    "podman login --username ci -p {v} quay.io",
    "helm registry login ghcr.io -u bot -p {v}",
    "az login --service-principal -u 3f2a1b4c-0000-4000-8000-123456789abc -p {v} --tenant acme",
    'sqlcmd -S db.internal -U sa -P {v} -Q "SELECT 1"',
    "bcp dbo.orders out orders.dat -S db -U sa -P {v} -c",
    # a quoted argument holding a separator is the same command's
    'sqlcmd -S db -Q "SELECT 1; SELECT 2" -P {v}',
    # the other clients' flags: the same command's, up to a shell's separator
    "mysql -u root -p{v} orders",
    '["mysql", "-u", "root", "-p{v}"]',
    "mysql -e 'select 1; select 2' -p{v}",
    "redis-cli -h cache -a {v} ping",
    "ldapsearch -x -D cn=admin,dc=shop -w {v} -b dc=shop",
    "curl -u admin:{v} https://api.internal/health",
    "curl https://api.internal/search?a=1&b=2 -u admin:{v}",
    'curl "https://api.internal/search?a=1&b=2" -u admin:{v}',
    "smbclient //files/share -U bob%{v}",
)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_password_a_client_takes_by_its_own_flag_is_redacted(command: str) -> None:
    called = command.format(v=SECRET)
    text = f"subprocess.CalledProcessError: Command '{called}' returned non-zero exit status 1."
    out = redact(text)
    assert SECRET not in out, out
    assert "[REDACTED:password]" in out


KEPT = (
    "docker run -p 8080:80 nginx",
    "ssh -p 2222 deploy@host",
    "sqlcmd -S db -p -Q 'SELECT 1'",
    "mkdir -p /var/lib/app",
    "keytool -list -keystore app.jks",
    # another command on the login's line: the login's flags end at the shell's separator
    "docker login -u bob --password-stdin ghcr.io && docker run -p 8080:80 nginx",
    "docker login -u bob --password-stdin ghcr.io; docker run -p 8080:80 nginx",
    "echo $T | docker login -u bob --password-stdin ghcr.io | tee log; ssh -p 2222 deploy@host",
    # a flag of the same letter in the next command is that command's (`ls -a`, `grep -w`, `echo -p`)
    "mysql -u root orders; echo -p done",
    "redis-cli -h cache ping; ls -a /tmp",
    "ldapsearch -x -D cn=admin && grep -w token access.log",
    "curl https://api.internal/health | grep -u admin:x",
)


@pytest.mark.parametrize("text", KEPT)
def test_another_option_of_the_same_letter_stays(text: str) -> None:
    assert redact(text) == text


def test_every_engine_gives_the_reference_text_for_command_lines() -> None:
    texts = [command.format(v=SECRET) for command in COMMANDS] + list(KEPT)
    assert assert_same(_rules("all"), texts) == len(texts)
