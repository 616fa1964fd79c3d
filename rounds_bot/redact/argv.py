"""Passwords in a command's argument list as a program prints it, each argument a quoted item:

    ['mongosh', 'mongodb://db', '-u', 'admin', '-p', '...']     Python's `repr` of a list (what
                                                                `subprocess.CalledProcessError` prints:
                                                                `Command '[...]' returned non-zero ...`)
    ["mongodump","-u","admin","-p","..."]                       a JSON array
    syscall: 'spawn mongosh', ..., spawnargs: [ '-p', '...' ]   Node's spawn error (`spawnargs` without the
                                                                command: Node's `child_process` source), on
                                                                one line or, as `console.error` prints it,
                                                                one property (and one item) a line

Every flag of the list is read (`'-p', '6380', '-a', '...'`: redis-cli's port, then its password), each by the
command it is given to: a name is a command only where a command stands, first in the list (its base name) or
what a wrapper runs (`sudo`, `env`, `timeout`, `sshpass -p ... ssh host`, `docker [compose] exec ... mongosh`,
`kubectl exec ... -- redis-cli`: `commands.py`), and a command ends the reach of the one before it (`sshpass
-p <password> ssh -p 2222`: the second `-p` is ssh's port; `docker run --name mongo -p 27017:27017`:
docker's). The password is the item after the tool's own password flag, never a flag itself (a bare `-p`
prompts), as each tool's manual gives it: MongoDB's shells and tools `-p`, `sshpass -p`, `redis-cli -a`,
OpenLDAP's clients `-w` (`ldappasswd`'s `-s` and `-a` too), Mosquitto's clients `-P` and `--pw`, SQL Server's
`sqlcmd`, `bcp` and `osql` `-P`, and the registry logins' `-p` (`docker login`, Podman's, skopeo's, nerdctl's,
Cloud Foundry's `cf login`, Buildah's, ORAS', `helm registry login`, `az login`). Elsewhere `-p` is a port
(`ssh`, `docker run`) and stays. `pairs.py` reads the flags that name a password (`'--password', '...'`) and
MySQL's `-p...`, whose password is joined to it (an item after it is the database's name).
sshpass's own `-p` may hold its password joined (getopt's `'-pPASSWORD'`).
"""

from __future__ import annotations

import re

from rounds_bot.redact.arguments import _EXPANDED
from rounds_bot.redact.commands import base_name, command_of, subcommand
from rounds_bot.redact.pair_values import _placeholder
from rounds_bot.redact.rule import Rule, rule

#: a quoted item as Python's `repr`, JSON and Node print it: a quote inside it escaped (`'a\\'b"c'`, as
#: `repr` writes an item that holds both quotes), so an item ends at its first quote that is not escaped
_SINGLE = r"'(?:[^'\\\n]|\\.){0,200}'"
_DOUBLE = r'"(?:[^"\\\n]|\\.){0,200}"'
#: a flag's item, then (read ahead: a flag that is not the tool's may be followed by one that is) the next
#: item, the password's when the flag is the tool's
_FLAG_THEN_VALUE = (
    r"""(?P<fq>['"])(?P<flag>-[pawPs]|--pw)(?P=fq)[ \t]{0,3},\s{0,40}"""
    r"""(?=(?P<value>'(?:[^'\\\n]|\\.){1,200}'|"(?:[^"\\\n]|\\.){1,200}"))"""
)
#: a flag's item with its value joined to it (getopt's `-pPASSWORD`), the value up to the item's closing quote
_JOINED = r"""(?P<fq>['"])(?P<flag>-p)(?P<value>(?:(?!(?P=fq))[^\\\n]|\\.){1,200})(?P=fq)"""
#: the tools whose password flag getopt reads, so a value may be joined to it (sshpass(1))
_JOINED_TOOLS = frozenset({"sshpass"})
#: the items of a list from its opening to the flag: quoted, a comma between, maybe one a line (Node)
_ITEMS_BEFORE = re.compile(r"\s{0,40}(?:(?:" + _SINGLE + "|" + _DOUBLE + r")[ \t]{0,3},\s{0,40}){0,60}")
_ITEM = re.compile("(" + _SINGLE + ")|(" + _DOUBLE + ")")
#: how far back a list's opening is looked for, and how many openings are tried (an item may hold a `[`)
_REACH = 2000
_OPENINGS = 4
#: the tools whose password flag is one letter, as a command's base name (`/usr/bin/mongosh`)
_TOOL = re.compile(
    r"mongo|mongosh|mongo(?:dump|restore|export|import|stat|top|files)"
    r"|sshpass|redis-cli|ldap\w{0,12}|mosquitto_(?:pub|sub|rr)|sqlcmd|bcp|osql|docker|podman|buildah|oras"
    r"|helm|az|skopeo|nerdctl|cf"
)
#: Node's spawn error before its `spawnargs`: `syscall: 'spawn mongosh',` then `path: ...`, maybe a line each
_SPAWNED = re.compile(
    r"""\bspawn[ \t]+(?P<command>[^\s'"]{1,300})['"][^\[]{0,400}?\bspawnargs:[ \t]{0,3}\Z"""
)

#: each tool's password flag, as its manual gives it
_FLAGS = {
    "sshpass": "-p",
    "redis-cli": "-a",
    "sqlcmd": "-P",
    "bcp": "-P",
    "osql": "-P",
}
#: the registry logins: their `-p` is the password only after `login` (`docker run -p` publishes a port)
_LOGINS = frozenset({"docker", "podman", "buildah", "oras", "helm", "az", "skopeo", "nerdctl", "cf"})


def _tool_flag(tool: str) -> frozenset[str]:
    """The password flags of `tool`."""
    if tool.startswith("mongo") or tool in _LOGINS:
        return frozenset({"-p"})
    if tool == "ldappasswd":  # its bind password, and the new (`-s`) and old (`-a`) passwords it sets
        return frozenset({"-w", "-s", "-a"})
    if tool.startswith("ldap"):
        return frozenset({"-w"})
    if tool.startswith("mosquitto_"):
        return frozenset({"-P", "--pw"})
    flag = _FLAGS.get(tool)
    return frozenset({flag}) if flag else frozenset()


def _items_before(match: re.Match[str]) -> tuple[int, list[str]] | None:
    """Where the flag's list opens and its items before the flag: the nearest `[` (within reach) from which
    only quoted items come to the flag."""
    text, start = match.string, match.start()
    reach, opening = max(0, start - _REACH), start
    for _ in range(_OPENINGS):
        opening = text.rfind("[", reach, opening)
        if opening < 0:
            return None
        items = _ITEMS_BEFORE.fullmatch(text, opening + 1, start)
        if items is not None:
            return opening, [(a or b)[1:-1] for a, b in _ITEM.findall(items.group(0))]
    return None


def _tool_of(match: re.Match[str]) -> tuple[str, list[str]] | None:
    """The command the flag is given to and its items before the flag. A name is a command only where a
    command stands: first in the list (or what Node's error says it spawned, its list holding the
    arguments alone), or what a wrapper runs; each command ends the reach of the one before it, so
    `sshpass -p <password> ssh -p 2222` gives ssh the second `-p`, and `docker run --name mongo -p` is
    docker's."""
    found = _items_before(match)
    if found is None:
        return None
    opening, items = found
    spawned = _SPAWNED.search(match.string, max(0, opening - 500), opening)
    if spawned is not None:
        tool, args = base_name(spawned.group("command")), items
    elif items:
        tool, args = base_name(items[0]), items[1:]
    else:
        return None
    return command_of(tool, args)


def _password_item(match: re.Match[str]) -> bool:
    """The item after the tool's own password flag (after `login` for a registry's), written out: not a
    shell's reference (`$MONGO_PASSWORD`), nor a placeholder."""
    found = _tool_of(match)
    if found is None:
        return False
    tool, after = found
    if _TOOL.fullmatch(tool) is None or match.group("flag") not in _tool_flag(tool):
        return False
    # `docker login` (maybe after the client's global flags), `helm registry login`, `az acr login`
    if tool in _LOGINS and "login" not in after[subcommand(after) :][:2]:
        return False
    value = match.group("value")[1:-1]
    # a value that is a flag is the next option: the bare `-p` before it makes the tool prompt for one
    return not value.startswith("-") and not _placeholder(value) and _EXPANDED.fullmatch(value) is None


def _joined_password(match: re.Match[str]) -> bool:
    """The value joined to the password flag of a tool that reads its flags with getopt (`'-pS3cr3t'`)."""
    found = _tool_of(match)
    value = match.group("value")
    return (
        found is not None
        and found[0] in _JOINED_TOOLS
        and not _placeholder(value)
        and _EXPANDED.fullmatch(value) is None
    )


ARGUMENT_LISTS: tuple[Rule, ...] = (
    rule(
        "password",
        _FLAG_THEN_VALUE,
        *("mongo", "sshpass", "redis-cli", "ldap", "mosquitto_", "sqlcmd", "bcp", "osql", "login"),
        group=3,
        accept=_password_item,
    ),
    rule("password", _JOINED, "sshpass", group=3, accept=_joined_password),
)
