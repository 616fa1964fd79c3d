"""A password in a command's argument list as a program prints it: Python's `repr` of a list (what
`subprocess.CalledProcessError` says: `Command '[...]' returned non-zero exit status 1`), JSON's array,
Node's `spawnargs: [ ... ]`. The flag and its value are two items of the list, so the password is the item
after the tool's own password flag (`mongosh ... '-p', '...'`); a port's `-p` of another tool stays."""

from __future__ import annotations

import pytest

from rounds_bot.redact import redact
from rounds_bot.redact.text import _rules
from tests.test_redact_engine import assert_same

SECRET = "S3cr3t!x"
LISTS = (
    "['mongosh', 'mongodb://db:27017', '-u', 'admin', '-p', '{v}']",
    '["mongodump","--uri","mongodb://db","-u","admin","-p","{v}"]',
    "subprocess.CalledProcessError: Command '['mongo', 'admin', '-u', 'root', '-p', '{v}', '--eval', "
    "'db.stats()']' returned non-zero exit status 1.",
    "['/usr/bin/mongosh', '--host', 'db', '-p', '{v}']",
    "Error: spawn mongosh ENOENT {{ errno: -2, code: 'ENOENT', syscall: 'spawn mongosh', path: 'mongosh', "
    "spawnargs: [ '--host', 'db', '-u', 'admin', '-p', '{v}' ] }}",
    "['sshpass', '-p', '{v}', 'ssh', 'deploy@web1']",
    "['redis-cli', '-h', 'cache', '-a', '{v}', 'PING']",
    "['ldapsearch', '-x', '-D', 'cn=admin,dc=acme,dc=com', '-w', '{v}']",
    "['mosquitto_pub', '-h', 'mq', '-u', 'svc', '-P', '{v}', '-t', 'x']",
    "['sqlcmd', '-S', 'db', '-U', 'sa', '-P', '{v}']",
    "['docker', 'login', '-u', 'ci', '-p', '{v}', 'registry.acme.io']",
    "Command '['psql', '-h', 'db', '-U', 'app', '--password={v}']' returned non-zero exit status 2.",
    '["mysql","-h","db","-u","root","-p{v}"]',
    # another flag before the password's: every flag of the list is read, not only the first
    "['redis-cli','-h','cache','-p','6380','-a','{v}']",
    "['ldapsearch','-x','-h','h','-p','389','-D','cn=admin','-w','{v}']",
    "['mosquitto_pub','-h','mq','-p','1883','-u','dev','-P','{v}']",
    "['mongo','-a','x','-p','{v}']",
    "Error: spawn redis-cli ENOENT {{ syscall: 'spawn redis-cli', path: 'redis-cli', "
    "spawnargs: [ '-h', 'cache', '-p', '6380', '-a', '{v}' ] }}",
    # Node's spawn error as `console.error` prints it, one property a line
    "Error: spawn mongosh ENOENT\n"
    "    at ChildProcess._handle.onexit (node:internal/child_process:284:19) {{\n"
    "  errno: -2,\n  code: 'ENOENT',\n  syscall: 'spawn mongosh',\n  path: 'mongosh',\n"
    "  spawnargs: [ '--host', 'db', '-u', 'admin', '-p', '{v}' ]\n}}",
    "Error: spawn mongosh ENOENT\n  syscall: 'spawn mongosh',\n  path: 'mongosh',\n  spawnargs: [\n"
    "    '--host',\n    'db',\n    '-p',\n    '{v}'\n  ]",
    # a wrapper before the tool
    "['sudo','mongodump','-u','a','-p','{v}']",
    "['sudo', '-u', 'mongodb', '/usr/bin/mongodump', '-p', '{v}']",
    "['docker','exec','-it','mongo','mongosh','-p','{v}']",
    "['kubectl', 'exec', 'redis-0', '--', 'redis-cli', '-a', '{v}']",
    # MySQL's `-p` joined to a quoted password that starts with a comma
    "mysql -u root -p',{v}' appdb",
    # sshpass' own `-p`, before its command; the command's `-p` after it is a port
    "['sshpass', '-p', '{v}', 'ssh', '-p', '2222', 'u@h']",
    "Error: spawn /usr/bin/sshpass ENOENT\n  syscall: 'spawn /usr/bin/sshpass',\n"
    "  path: '/usr/bin/sshpass',\n  spawnargs: [ '-p', '{v}', 'ssh', '-p', '2222', 'u@h' ]\n}}",
    # Python's repr escapes a quote inside an item that holds both kinds: the item ends at its unescaped quote
    "['mongosh', '-p', 'a\\'b\"{v}']",
    # Compose's and the container group's `exec`, a service or container then the command
    "['docker', 'compose', 'exec', 'mongo', 'mongosh', '-p', '{v}']",
    "['docker', 'compose', '-f', 'prod.yml', 'exec', '-T', 'cache', 'redis-cli', '-a', '{v}']",
    "['docker-compose', 'exec', 'mongo', 'mongosh', '-p', '{v}']",
    "['docker', 'container', 'exec', '-it', 'mongo', 'mongosh', '-p', '{v}']",
    # the client's global flags before `exec`
    "['docker', '-H', 'ssh://ops@db1', 'exec', 'mongo', 'mongosh', '-p', '{v}']",
    "['docker', '--context', 'prod', 'exec', 'mongo', 'mongosh', '-p', '{v}']",
    "['kubectl', '-n', 'db', 'exec', '-it', 'redis-0', '--', 'redis-cli', '-a', '{v}']",
    "['oc', 'exec', 'redis-0', '--', 'redis-cli', '-a', '{v}']",
    # Podman's `--latest` names no container: the command follows it
    "['podman', 'exec', '-l', 'mongosh', '-p', '{v}']",
    "['podman', 'exec', '--latest', 'redis-cli', '-a', '{v}']",
    # sudo's long flags and joined short ones
    "['sudo', '--user', 'mongodb', 'mongodump', '-p', '{v}']",
    "['sudo', '-iu', 'mongodb', 'mongodump', '-p', '{v}']",
    # the wrappers that run a command after their own flags and values
    "['env', 'LANG=C', 'mongodump', '-p', '{v}']",
    "['env', '-i', 'HOME=/root', 'redis-cli', '-a', '{v}']",
    "['timeout', '30', 'mongodump', '-p', '{v}']",
    "['timeout', '-s', 'KILL', '30', 'redis-cli', '-a', '{v}']",
    "['nice', '-n', '10', 'mongodump', '-p', '{v}']",
    "['runuser', '-u', 'mongodb', '--', 'mongodump', '-p', '{v}']",
    # the remote command after ssh's host
    "['ssh', 'db1', 'mongodump', '-p', '{v}']",
    "['ssh', '-p', '2222', '-i', 'k.pem', 'ops@db1', 'redis-cli', '-a', '{v}']",
    "['sshpass', '-p', 'x', 'ssh', 'db1', 'mongodump', '-p', '{v}']",
    # sshpass' password joined to its flag (getopt's `-pPASSWORD`)
    "['sshpass', '-p{v}', 'ssh', 'db1']",
    # registry logins: `login` after the client's global flags, and more clients
    "['docker', '--config', '/tmp/c', 'login', '-u', 'ci', '-p', '{v}', 'reg.acme.io']",
    "['skopeo', 'login', '-u', 'ci', '-p', '{v}', 'reg.acme.io']",
    "['nerdctl', 'login', '-u', 'ci', '-p', '{v}', 'reg.acme.io']",
    "['cf', 'login', '-a', 'https://api.sys.acme.io', '-u', 'ci', '-p', '{v}']",
    # Windows: the base name after a backslash, `.exe` dropped
    "['mongodump.exe', '-u', 'admin', '-p', '{v}']",
    "['C:\\\\Program Files\\\\MongoDB\\\\bin\\\\mongodump.exe', '-p', '{v}']",
    # ldappasswd's new and old passwords
    "['ldappasswd', '-x', '-D', 'cn=admin', '-s', '{v}', 'uid=jo']",
    "['ldappasswd', '-x', '-a', '{v}', '-s', 'other', 'uid=jo']",
    # MySQL's password joined to `-p` in Node's spawnargs, the command in the error
    "Error: spawn mysql ENOENT {{ syscall: 'spawn mysql', path: 'mysql', "
    "spawnargs: ['-u','root','-p{v}','db'] }}",
)
KEPT = (
    "['ssh', '-p', '2222', 'deploy@web1']",
    "['docker', 'run', '-p', '8080:80', 'nginx']",
    "['scp', '-P', '2222', 'f.txt', 'web1:/tmp']",
    "['mongosh', '--port', '27017', '--eval', 'db.stats()']",
    "['mongosh', '-u', 'admin', '-p']",
    "['mongosh', '-u', 'admin', '-p', '$MONGO_PASSWORD']",
    # MySQL's `-p` takes its password joined to it: an item after it is the database's name (MySQL's manual,
    # "Specifying a Password"), and the list's quotes and comma are no password
    "['mysql', '-u', 'root', '-p', 'appdb']",
    '["mysql", "-u", "root", "-p", "appdb"]',
    "['sudo', 'ssh', '-p', '2222', 'web1']",
    "['docker', 'exec', '-it', 'web', 'ls', '-p', '/tmp']",
    "['docker', 'run', '-p', '8080:80', 'mongo']",
    # a tool's name is the tool only where a command stands: first, or what a wrapper runs; another command
    # ends the tool's reach
    "Command '['docker', 'run', '-d', '--name', 'mongo', '-p', '27017:27017', 'mongo:6']' returned non-zero "
    "exit status 125.",
    "['docker', 'run', '--rm', '--network', 'mongo', '-p', '8081:8081', 'mongo-express']",
    "['sshpass', '-e', 'ssh', '-p', '2222', 'deploy@web1', 'uptime']",
    "['sshpass', '-f', '/run/pw', 'ssh', '-o', 'StrictHostKeyChecking=no', '-p', '2222', 'u@h']",
    "Error: spawn sshpass ENOENT\n  syscall: 'spawn sshpass',\n  path: 'sshpass',\n"
    "  spawnargs: [ '-e', 'ssh', '-p', '2222', 'u@h' ]\n}",
    "['rsync', '-av', '/data/mongo', 'backup:/x', '-p', 'x']",
    "['tar', '-czf', 'mongo', '-p', 'x']",
    # a bare `-p` makes the tool prompt: the flag after it is no password
    "['mongosh', '-u', 'admin', '-p', '--authenticationDatabase', 'admin']",
    # ports of the commands these wrappers run
    "['docker', '-H', 'ssh://ops@db1', 'run', '-p', '8080:80', 'nginx']",
    "['docker', 'compose', 'exec', 'web', 'ssh', '-p', '2222', 'h']",
    "['env', 'LANG=C', 'ssh', '-p', '2222', 'h']",
    "['ssh', '-p', '2222', 'db1', 'uptime']",
    "['sshpass', '-e', 'ssh', '-p2222', 'db1']",
    "['timeout', '30', 'ssh', '-p', '2222', 'h']",
    "['ldapsearch', '-x', '-s', 'sub', '-b', 'dc=acme']",
    "['cf', 'push', 'app', '-p', './build']",
)


@pytest.mark.parametrize("text", LISTS)
def test_a_password_in_a_printed_argument_list_is_redacted(text: str) -> None:
    out = redact(text.format(v=SECRET))
    assert SECRET not in out, out
    assert "[REDACTED:" in out


@pytest.mark.parametrize("text", KEPT)
def test_an_argument_list_with_no_password_stays(text: str) -> None:
    assert redact(text) == text


def test_every_engine_gives_the_reference_text_for_argument_lists() -> None:
    texts = [text.format(v=SECRET) for text in LISTS] + list(KEPT)
    assert assert_same(_rules("all"), texts) == len(texts)


def test_sshpass_password_goes_and_the_port_of_the_command_it_runs_stays() -> None:
    text = f"['sshpass', '-p', '{SECRET}', 'ssh', '-p', '2222', 'u@h']"
    assert redact(text) == "['sshpass', '-p', '[REDACTED:password]', 'ssh', '-p', '2222', 'u@h']"
