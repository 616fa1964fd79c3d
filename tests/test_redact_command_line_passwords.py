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
    # an apostrophe inside a name is a character of it, as a program logging its command line writes it,
    # even when a quoted argument follows
    "docker login -u o'brien -p {v} registry.example.com",
    "mysql -u o'brien -p{v} -e 'select 1'",
    # a quote that nothing closes on its line opens nothing
    'docker login -u "bob -p {v} registry.example.com',
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
    # a password a command takes by its place among its arguments: Apache's and Mosquitto's password file
    # tools in batch mode, RabbitMQ's user commands, Windows' `net use` (before or after `/user:`)
    "htpasswd -b /etc/nginx/.htpasswd admin {v}",
    "htpasswd -cbB -C 12 /etc/nginx/.htpasswd admin {v}",
    "htpasswd -nb admin {v}",
    "mosquitto_passwd -b /etc/mosquitto/passwd iot {v}",
    "rabbitmqctl add_user deploy {v}",
    # OpenSSL's pre-shared key (s_client and s_server's `-psk`, hex; `-psk_identity` names it)
    "openssl s_client -connect db:4433 -psk_identity device-42 -psk {v}",
    "rabbitmqctl -n rabbit@mq1 change_password guest {v}",
    "net use Z: \\\\fileserver\\share {v} /user:ACME\\bob",
    "net use \\\\fileserver\\share /user:ACME\\bob {v} /persistent:no",
    # Mosquitto's clients' `-P` (their `-p` is a port)
    "mosquitto_pub -h broker -p 1883 -u iot -P {v} -t a -m b",
    "mosquitto_sub -h broker --pw {v} -t a",
    # a password written to a command that reads it on its standard input
    "echo '{v}' | sudo -S systemctl restart app",
    'echo "{v}" | docker login -u bob --password-stdin ghcr.io',
    "printf '%s' '{v}' | docker login --username bob --password-stdin",
    "echo 'bob:{v}' | chpasswd",
    "echo -n {v} | passwd --stdin bob",
    # MongoDB's shells and database tools: `-p` is the password (`--port` is the port)
    'mongosh "mongodb://db:27017/admin" -u admin -p {v}',
    "mongo --host db -u admin -p '{v}' --authenticationDatabase admin",
    "mongodump --uri mongodb://db -u backup -p {v} --out /backup",
    # run by another command: `docker exec`, `kubectl exec ... --`, `sudo`
    "docker exec -it mongo mongosh -u root -p {v}",
    "docker exec -it -u 0 mongo mongosh -p {v}",
    "kubectl exec -it mongo-0 -- mongosh -u root -p {v}",
    "sudo mongodump -u admin -p {v}",
    # Windows' `net user <user> <password>` (a new account's, `/add`; or a changed one)
    "net user deploy {v} /add",
    "net user ACME\\svc {v} /domain",
    'net user "John Smith" {v} /add',
    "net user deploy {v}",
    "C:\\> net user deploy {v} && echo done",
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
    "docker login -u o'brien --password-stdin ghcr.io; docker run -p 8080:80 nginx",
    # the same commands with no password on their line: it is asked for, read from a variable or a file
    "htpasswd -D /etc/nginx/.htpasswd admin",
    "htpasswd -c /etc/nginx/.htpasswd admin",
    "htpasswd -bD /etc/nginx/.htpasswd admin",
    "htpasswd -nb admin $HTPASSWD 2>/dev/null",
    "rabbitmqctl list_users",
    "rabbitmqctl delete_user deploy",
    "mosquitto_sub -h broker -p 1883 -t 'sensors/#' -v",
    "net use Z: \\\\fileserver\\share /persistent:yes",
    "net use Z: \\\\fileserver\\share * /user:ACME\\bob",
    'echo "$REGISTRY_PASSWORD" | docker login -u bob --password-stdin ghcr.io',
    "echo $SUDO_PASSWORD | sudo -S true",
    "echo hello | grep -S x",
    "echo done | tee -a deploy.log",
    "mongosh --host db --port 27017 -u admin -p",
    "docker exec -it mongo ls -p /data",
    "mongodump --db app --out /backup; ssh -p 2222 backup@host",
    "net user deploy * /add",
    "net user deploy /active:no",
    "net user",
    # `mongo` elsewhere in the command (a container's name or image, a file) is not the command itself
    "docker run --name mongo -p 27017:27017 -d mongo:7",
    "docker run -d --name my-mongo -p 27017:27017 mongo",
    "kubectl run mongo --image=mongo -p 27017",
    "docker-compose -f mongo.yml -p myproject up -d",
    "cp -r /var/lib/mongo -p /backup",
    'Error: failed to start container "mongo": port is already allocated (docker run mongo -p 27017:27017)',
    # `net user` in prose, or given a variable: no password written out
    "The command net user admin failed: System error 5 has occurred.",
    "Run net user administrator to check the account",
    "net user %USER% %PASS% /add",
)


@pytest.mark.parametrize("text", KEPT)
def test_another_option_of_the_same_letter_stays(text: str) -> None:
    assert redact(text) == text


#: Redis' password directives, as `redis.conf` writes them, a command line gives them and `CONFIG SET` (and
#: `MONITOR`'s quoted echo of it) sets them
REDIS_DIRECTIVES = (
    "requirepass {v}",
    "  masterauth {v}",
    "redis-server /etc/redis.conf --requirepass {v} --port 6380",
    'CONFIG SET requirepass "{v}"',
    '1700000000.123456 [0 10.0.0.5:51234] "CONFIG" "SET" "masterauth" "{v}"',
)
REDIS_KEPT = (
    "# requirepass foobared",
    "WARNING: no requirepass is set, protected mode is on",
    'CONFIG SET requirepass ""',
    "CONFIG GET requirepass",
)


@pytest.mark.parametrize("line", REDIS_DIRECTIVES)
def test_a_password_a_redis_directive_sets_is_redacted(line: str) -> None:
    out = redact(line.format(v=SECRET))
    assert SECRET not in out, out
    assert "[REDACTED:password]" in out


@pytest.mark.parametrize("line", REDIS_KEPT)
def test_a_redis_directive_that_sets_no_password_stays(line: str) -> None:
    assert redact(line) == line


@pytest.mark.parametrize(
    "arguments",
    ["'a' " * 40, "o'b " * 200, "' " * 300, "'" * 2000, "\"a\" o'b 'c' \" " * 60, "x'y' " * 100],
)
def test_a_login_with_many_quotes_and_no_password_flag_is_read_in_linear_time(arguments: str) -> None:
    # were a quote read two ways (opening a quoted argument, or a character on its own), each quote would
    # double the ways to read the line: this text would take hours
    text = f"docker login -u ci {arguments}--password-stdin ghcr.io"
    assert redact(text) == text


def test_every_engine_gives_the_reference_text_for_command_lines() -> None:
    texts = [command.format(v=SECRET) for command in COMMANDS + REDIS_DIRECTIVES] + list(KEPT + REDIS_KEPT)
    assert assert_same(_rules("all"), texts) == len(texts)


#: a secret after its flag, where the flag is not a lone `--password`: with a qualifier before the secret's
#: name and a space after it (the AWS CLI's `aws configure set --secret-access-key`, MinIO's `mc alias set ...
#: --secret-key`, Azure's `--account-key`, OAuth clients' `--client-secret`, `--refresh-token`,
#: `--api-secret`), or as an item of an argument list: Python's `subprocess.CalledProcessError` prints its
#: `cmd` list (`Command '['mysql', ...]' returned non-zero exit status 1.`), JSON gives `["...", "..."]`, Go's
#: `%q` of an `exec.Cmd`'s `Args` `["..." "..."]`, for a named flag and for a login's lone letter (`-p`, `-P`)
FLAGGED = (
    "aws configure set --secret-access-key {v} --profile prod",
    "mc alias set prod https://minio:9000 --access-key minioadmin --secret-key {v}",
    "az storage blob upload --account-name acme --account-key {v} -f x",
    "oauth2-proxy --client-id web --client-secret {v}",
    "tool login --refresh-token {v}",
    "tool deploy --api-secret '{v}'",
    "tool deploy --db_password {v}",
    "Command '['mysql', '--password', '{v}']' returned non-zero exit status 1.",
    "Command '['tool', '--token', '{v}', '--verbose']' returned non-zero exit status 2.",
    '{{"argv": ["tool", "--client-secret", "{v}"]}}',
    '["tool","--api-key","{v}"]',
    'exec: ["/bin/app" "--password" "{v}"]',
    "Command '['docker', 'login', '-u', 'bob', '-p', '{v}', 'ghcr.io']' returned non-zero exit status 1.",
    '["docker","login","-u","bob","-p","{v}"]',
    'exec: ["docker" "login" "-u" "bob" "-p" "{v}"]',
    "['sqlcmd', '-S', 'db', '-U', 'sa', '-P', '{v}']",
)
#: a flag that only names a secret (a switch, a file), another command's `-p` (a port), a list with no secret
FLAG_KEPT = (
    "psql --no-password --dbname orders",
    "llm run --max-tokens 4096 --model small",
    "tool login --token-file /run/secrets/token",
    "tool login --password-stdin --username bob",
    "ssh-keygen --private-key-format pem",
    # a switch that names a secret takes no value: the next argument is another
    "ansible-playbook --ask-vault-password site.yml",
    "ansible-playbook site.yml --ask-vault-password -i hosts",
    "mysqld --allow-empty-password mysql",
    "kubectl create ingress web --tls-secret my-tls-cert",
    "helm install app --image-pull-secret regcred",
    "Command '['git', 'push', '--force', 'origin']' returned non-zero exit status 1.",
    "Command '['docker', 'run', '-p', '8080:80', 'nginx']' returned non-zero exit status 125.",
)


@pytest.mark.parametrize("command", FLAGGED)
def test_a_secret_after_its_flag_is_redacted_however_the_command_is_written(command: str) -> None:
    out = redact(command.format(v=SECRET))
    assert SECRET not in out, out
    assert "[REDACTED:" in out


@pytest.mark.parametrize("command", FLAG_KEPT)
def test_a_flag_that_only_names_a_secret_keeps_what_follows_it(command: str) -> None:
    assert redact(command) == command
