"""Which command a printed argument list runs, and where its own arguments start: the first item's base name,
or what a wrapper in it runs, each wrapper read by its manual's options:

    sudo -iu mongodb mongodump ...            sudo(8): its flags, a flag's value, then the command
    env -i LANG=C redis-cli ...               env(1): its flags and `NAME=value` settings, then the command
    timeout -s KILL 30 mongodump ...          timeout(1): its flags, the duration, then the command
    nice -n 10 ... / runuser -u x -- ...      nice(1), runuser(1): their flags, then the command
    sshpass -p ... ssh -p 2222 db1 cmd ...    sshpass(1), then ssh(1): its flags, the host, the remote command
    docker [-H h] [compose|container] exec [flags] <container> cmd ...
                                              the Docker CLI's global flags, `exec`'s flags, the container
                                              (Compose's service); Podman's `--latest` names none
    kubectl [-n ns] exec ... -- cmd ...       kubectl's and OpenShift's `oc exec`: the command after `--`

A command ends the reach of the one before it, so `sshpass -p <password> ssh -p 2222` gives ssh the second
`-p`. A Windows path's base name drops its directory (`C:\\...\\bin\\mongodump.exe`) and its `.exe`.
"""

from __future__ import annotations

#: the wrappers that run a command after their own flags, and those flags that take a value
_WRAPPER_FLAGS = {
    "sudo": frozenset(
        {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "-R", "--user", "--group", "--host"}
        | {"--prompt", "--role", "--type", "--other-user", "--close-from", "--chdir", "--chroot"}
    ),
    "sshpass": frozenset({"-p", "-f", "-d", "-P"}),
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "runuser": frozenset({"-u", "--user", "-g", "--group", "-G", "--supp-group", "-c", "--command"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    # ssh(1)'s options that take an argument
    "ssh": frozenset({f"-{c}" for c in "BbcDEeFIiJLlmOoPpQRSWw"}),
}
#: the wrappers whose command follows one more argument after their flags: timeout's duration, ssh's host
_ONE_MORE = frozenset({"timeout", "ssh"})
#: the container clients, their global flags that take a value (the Docker CLI's, Podman's, kubectl's)
_CLIENTS = frozenset({"docker", "podman", "nerdctl", "docker-compose", "kubectl", "oc"})
_GLOBAL_FLAGS = frozenset(
    {"-H", "--host", "--config", "-c", "--context", "-l", "--log-level", "--tlscacert", "--tlscert"}
    | {"--tlskey", "-n", "--namespace", "--kubeconfig", "--cluster", "--user", "-s", "--server", "--root"}
    | {"--url", "--connection", "--identity", "--runroot", "--storage-driver", "--address", "--namespace"}
)
#: Compose's flags before its subcommand, and `exec`'s that take a value (Docker's, Compose's, Podman's)
_COMPOSE_FLAGS = frozenset({"-f", "--file", "-p", "--project-name", "--env-file", "--profile"})
_EXEC_FLAGS = frozenset(
    {"-e", "--env", "-u", "--user", "-w", "--workdir", "--env-file", "--detach-keys", "--index"}
)
#: Podman's `exec --latest` runs in the latest container: no container's name follows
_NO_CONTAINER = frozenset({"-l", "--latest"})


def base_name(item: str) -> str:
    """A command item's base name: `/usr/bin/mongosh` and `C:\\...\\mongodump.exe` (a printed list doubles
    the backslash) give `mongosh` and `mongodump`."""
    name = item.replace("\\", "/").rpartition("/")[2]
    return name[:-4] if name.lower().endswith(".exe") else name


def _flag_width(item: str, valued: frozenset[str]) -> int:
    """How many items a flag spans: two when it takes the next as its value (`-u x`, `--user x`, `-iu x`: a
    cluster of short flags whose last takes a value), one when its value is joined (`-umongodb`) or none."""
    if item in valued:
        return 2
    short = len(item) > 2 and item[1] != "-"
    return 2 if short and f"-{item[1]}" not in valued and f"-{item[-1]}" in valued else 1


def after_flags(args: list[str], valued: frozenset[str], settings: bool = False) -> int:
    """Where the first item that is no flag (nor a flag's value, nor, with `settings`, env's `NAME=value`)
    stands in `args`."""
    place = 0
    while place < len(args) and (
        args[place].startswith("-") or (settings and "=" in args[place] and not args[place].startswith("="))
    ):
        place += _flag_width(args[place], valued) if args[place].startswith("-") else 1
    return place


def subcommand(args: list[str]) -> int:
    """Where a container client's subcommand stands in `args`, after its global flags."""
    return after_flags(args, _GLOBAL_FLAGS)


def _exec_command(tool: str, args: list[str]) -> int | None:
    """Where a container client's `exec` runs its command in `args`, if it runs one."""
    if tool in ("kubectl", "oc"):  # `kubectl exec <pod> [flags] -- <command>`
        return args.index("--") + 1 if "exec" in args and "--" in args else None
    place = 0 if tool == "docker-compose" else subcommand(args)
    if args[place : place + 1] == ["compose"]:
        place += 1 + after_flags(args[place + 1 :], _COMPOSE_FLAGS)
        tool = "docker-compose"
    elif args[place : place + 1] == ["container"]:
        place += 1
    if args[place : place + 1] != ["exec"]:
        return None
    flags = after_flags(args[place + 1 :], _EXEC_FLAGS)
    latest = any(flag in _NO_CONTAINER for flag in args[place + 1 : place + 1 + flags])
    return place + 1 + flags + (0 if latest and tool == "podman" else 1)


def runs(tool: str, args: list[str]) -> int | None:
    """Where in `args` (the items after `tool`) the command `tool` runs stands, if `tool` is a wrapper."""
    if tool in _WRAPPER_FLAGS:
        place = after_flags(args, _WRAPPER_FLAGS[tool], settings=tool == "env")
        return place + (1 if tool in _ONE_MORE else 0)
    if tool in _CLIENTS:
        return _exec_command(tool, args)
    return None


def command_of(tool: str, args: list[str]) -> tuple[str, list[str]]:
    """The command a list whose first command is `tool` (its items after it `args`) finally runs, and its
    items: each wrapper's command in turn, until one is no wrapper (or runs nothing)."""
    place = runs(tool, args)
    while place is not None and place < len(args):
        tool, args = base_name(args[place]), args[place + 1 :]
        place = runs(tool, args)
    return tool, args
