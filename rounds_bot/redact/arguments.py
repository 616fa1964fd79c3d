"""Passwords a command takes by the place of an argument, not by a name: what each tool's own manual says
its arguments are.

    htpasswd -b <file> <user> <password>        Apache's `htpasswd` (and `-n`: no file), `mosquitto_passwd -b`
    rabbitmqctl add_user <user> <password>      RabbitMQ's `add_user`, `change_password`, `authenticate_user`
    net use \\\\host\\share <password> /user:<u>  Windows' `net use`, the password before `/user:` or after it
    net user <user> <password>                  Windows' `net user` (a new account's, `/add`)
    mongosh -u <user> -p <password>             MongoDB's shells and database tools (their port is `--port`)
    mosquitto_pub -P <password>                 Mosquitto's clients (their `-p` is a port)
    echo <password> | sudo -S                   a password written to a command that reads it on its input
    requirepass <password>                      Redis' directives: `redis.conf`, a command line, `CONFIG SET`

A variable's reference (`$REGISTRY_PASSWORD`) and a prompt's `*` are no password. `pairs.py` reads the
passwords a command takes by a flag of its own (`mysql -p`, `docker login -p`).
"""

from __future__ import annotations

import re

from rounds_bot.redact.pair_values import _placeholder
from rounds_bot.redact.rule import Rule, rule

#: a value on its own, quoted or bare: what a command line or a connection string gives a password as
ARGUMENT = r"""('[^'\n]{1,200}'|"[^"\n]{1,200}"|[^\s"';]{1,200})"""
#: the rest of one command, up to a flag of its own: a shell's `&&`, `||`, `;`, `|`, `&` or a line break
#: begins another command, whose `-p` is not the login's (`docker login ... && docker run -p 8080:80`);
#: a quoted argument (`-Q "SELECT 1; SELECT 2"`) is read whole, and an `&` inside a word is a URL's
#: (`?a=1&b=2`). An apostrophe inside a word (`-u o'brien`, as a program that logs its command line writes
#: it) and a quote nothing closes on its line open nothing: they are characters. No character may be read
#: two ways (what is around a quote says which it is): a line of many quotes and no flag would take
#: exponential time
SAME_COMMAND = (
    r"""(?:[^\n;|&"']|&(?![&\s])"""
    r"""|"[^"\n]{0,200}"|"(?![^"\n]{0,200}")"""
    r"""|(?<!\w)'[^'\n]{0,200}'|(?<!\w)'(?![^'\n]{0,200}')|(?<=\w)'){0,300}?"""
)

#: one argument that ends where the command's words do: before a space, a quote (a logged command line's
#: own, `Command '... pw' returned ...`), a shell's separator or the text's end; not a redirection
#: (`2>/dev/null`), so an argument list one short is not read one place on
_POSITIONAL = r"""("[^"\n]{1,200}"|[^\s"'`;|&<>]{1,200})(?![^\s"'`;|&])"""
#: a word before it (a file, a user name), not an option
_WORD = r"""(?!-)[^\s"'`;|&<>]{1,200}"""
#: no argument after it (a redirection, `2>/dev/null`, may follow)
_LAST = r"""(?![ \t]{1,10}[^\s;|&<>'"`0-9])"""
#: after the last argument, a switch (`/add`, `/domain`, as Windows' `net` help writes them) or the
#: command's end (a logged command line's closing quote: `Command 'net user ...' returned ...`)
_SWITCH_OR_END = r"""(?=[ \t]+/|[ \t]*(?:[;|&\n"'`]|\Z))"""
#: where a command's own word begins: the text's or a line's start, a shell's separator, a prompt (`$`, `>`),
#: a quote or an argument list's `[` (`["mongosh", "-p", ...]`), maybe blanks, and maybe its path
_COMMAND_WORD = r"""(?<![^\n;|&(`'"\[$>])[ \t]{0,10}(?:[\w.~-]{0,100}/){0,10}"""
#: a command run by another, its word after it: `sudo`, `docker exec -it NAME`, `kubectl exec ... --`
_RUN_BY = (
    r"(?:\bsudo|\bexec(?:[ \t]+-{1,2}[\w-]{1,30}){0,10}[ \t]+(?!-)[\w.-]{1,100}|[ \t]--)[ \t]+"
    r"(?:[\w.~-]{0,100}/){0,10}"
)
#: an option with or without its value (`-C 12`, `-H sha512`, `-n rabbit@mq1`)
_OPTION = r"""[ \t]+-{1,2}[\w-]{1,30}(?:[ \t]+[\w@.-]{1,64})?"""


#: a shell's reference to a variable, of any name (`$T`, `"${pw}"`), or to a command's output (`$(cat f)`):
#: on a command line, what a `$` starts is expanded by the shell, not written by hand
_EXPANDED = re.compile(r"\$(?:\w{1,64}|\{\w{1,64}\}|\(.{1,200}\))", re.ASCII)

#: what a password file's tool takes after its flags: a file (none with `-n`), a user, the password last
_FILE_USER_PASSWORD = r"(?:[ \t]+" + _WORD + r")?[ \t]+" + _WORD + r"[ \t]+" + _POSITIONAL + _LAST


#: a `cmd` variable's reference (`%PASS%`, and its batch file's arguments `%1`)
_BATCH_VARIABLE = re.compile(r"%\w{1,64}%|%\d")


def _not_a_reference(match: re.Match[str]) -> bool:
    """A password written out, not a variable's reference (`$HTPASSWD`, `"$REGISTRY_PASSWORD"`)."""
    value = match.group(1).strip("\"'")
    return not _placeholder(value) and _EXPANDED.fullmatch(value) is None


def _not_a_variable(match: re.Match[str]) -> bool:
    """Not a shell's reference, nor a Windows batch file's (`%PASS%`, as `cmd` expands it)."""
    return _not_a_reference(match) and _BATCH_VARIABLE.fullmatch(match.group(1).strip('"')) is None


ARGUMENTS: tuple[Rule, ...] = (
    # Apache's `htpasswd -b[cmBdps] [-C cost] file user password` (`-nb user password`: no file), and
    # Mosquitto's `mosquitto_passwd -b [-c] [-H hash] file user password`: batch mode only (`-b`, in any of
    # the flags; not with `-D`, which deletes the user), the password its last argument
    rule(
        "password",
        r"\b(?:htpasswd|mosquitto_passwd)(?:" + _OPTION + r"){0,4}?[ \t]+-[A-CE-Za-z]{0,7}b[A-CE-Za-z]{0,7}"
        r"(?:" + _OPTION + r"){0,4}?" + _FILE_USER_PASSWORD,
        "htpasswd",
        "mosquitto_passwd",
        group=1,
        accept=_not_a_reference,
    ),
    # `rabbitmqctl [-n node] add_user <user> <password>` (and `change_password`, `authenticate_user`)
    rule(
        "password",
        r"\brabbitmqctl\b" + SAME_COMMAND + r"[ \t](?:add_user|change_password|authenticate_user)"
        r"[ \t]+" + _WORD + r"[ \t]+(?!--)" + _POSITIONAL,
        "rabbitmqctl",
        group=1,
        accept=_not_a_reference,
    ),
    # `net use [Z:] \\host\share [password | *] [/user:[domain\]user]`, and a password after `/user:`
    rule(
        "password",
        r"(?i)\bnet[ \t]+use\b(?:[ \t]+(?:[a-z]:|\*))?[ \t]+\\\\[^\s\"']{1,200}[ \t]+(?![/*])" + _POSITIONAL,
        "net",
        group=1,
        accept=_not_a_reference,
    ),
    rule(
        "password",
        r"(?i)\bnet[ \t]+use\b" + SAME_COMMAND + r"[ \t]/user:[^\s\"']{1,200}[ \t]+(?![/*])" + _POSITIONAL,
        "net",
        group=1,
        accept=_not_a_reference,
    ),
    # `net user <user> <password> [/add]` (Windows' `net user`; `*` asks for it, a `/option` follows a user;
    # a user name with a blank is quoted): only when a switch or the command's end follows the password, as
    # prose (`net user admin failed: ...`) goes on in words; a switch may come first (`net user /domain
    # jsmith`: the user's name, no password), never as the user's name
    rule(
        "password",
        r"(?i)\bnet[ \t]+user[ \t]+(?:/[\w:]{1,40}[ \t]+){0,5}(?!/)(?:\"[^\"\n]{1,200}\"|"
        + _WORD
        + r")[ \t]+(?![/*])"
        + _POSITIONAL
        + _SWITCH_OR_END,
        "net",
        group=1,
        accept=_not_a_variable,
    ),
    # MongoDB's shells and database tools: `-p password` (their port is `--port`), the tool the command itself
    # (`docker run --name mongo -p 27017:27017` publishes a port), its arguments after it (a quoted `"mongo":`
    # is a name)
    rule(
        "password",
        r"(?:"
        + _COMMAND_WORD
        + "|"
        + _RUN_BY
        + r")"
        + r"(?:mongo|mongosh|mongo(?:dump|restore|export|import|stat|top|files))(?=[ \t])"
        + SAME_COMMAND
        + r"[ \t]-p[ \t]+(?!-)"
        + ARGUMENT,
        "mongo",
        group=1,
        accept=_not_a_reference,
    ),
    # Mosquitto's clients: `-P password`, `--pw password`
    rule(
        "password",
        r"\bmosquitto_(?:pub|sub|rr)\b" + SAME_COMMAND + r"[ \t](?:-P|--pw)[ \t]+" + ARGUMENT,
        "mosquitto_",
        group=1,
        accept=_not_a_reference,
    ),
    # `echo pw | sudo -S ...` (sudo reads the password on its input), `... | docker login --password-stdin`
    # (and the registry logins that copy it), `| chpasswd` (`user:password` lines), `| passwd --stdin`
    rule(
        "password",
        r"\b(?:echo(?:[ \t]+-[neE]{1,3})?|printf(?:[ \t]+(?:'%s(?:\\n)?'|\"%s(?:\\n)?\"))?)[ \t]+"
        + ARGUMENT
        + r"[ \t]*\|[ \t]*(?:sudo\b[^\n;|&]{0,100}?[ \t]-[A-Za-z]{0,5}S\b"
        r"|(?:docker|podman|buildah|oras|helm[ \t]+registry)[ \t]+login\b"
        r"[^\n;|&]{0,200}?[ \t]--password-stdin"
        r"|chpasswd\b|passwd\b[^\n;|&]{0,100}?[ \t]--stdin)",
        "echo",
        "printf",
        group=1,
        accept=_not_a_reference,
    ),
    # Redis' `requirepass` and `masterauth`: a line of `redis.conf` (or a dump of it), `--requirepass` on
    # `redis-server`'s command line, `CONFIG SET requirepass ...` (`MONITOR` quotes each of its words)
    rule(
        "password",
        r"(?i)(?:(?<![^\n])[ \t]{0,8}|--|\bconfig\"?[ \t]+\"?set\"?[ \t]+\"?)(?:requirepass|masterauth)"
        r"\"?[ \t]+" + ARGUMENT,
        "requirepass",
        "masterauth",
        group=1,
        accept=_not_a_reference,
    ),
)
