"""Real Python programs whose exceptions tests read: each is compiled under an application path, with its
source known to `linecache`, so Python prints its traceback as it would a deployed service's."""

from __future__ import annotations

import linecache
from collections.abc import Callable

#: a task group whose tasks each fail `depth` calls deep (two functions in turn, so Python prints every call
#: rather than folding a repeated line), in the order their errors are given
TASK_GROUP = """\
import asyncio


def descend(depth, error):
    if depth:
        return climb(depth - 1, error)
    raise error


def climb(depth, error):
    return descend(depth, error)


async def fail(depth, error):
    descend(depth, error)


async def checkout(depth, errors):
    async with asyncio.TaskGroup() as group:
        for error in errors:
            group.create_task(fail(depth, error))


def main(depth, errors):
    asyncio.run(checkout(depth, errors))
"""

#: a plain exception whose message holds what a user typed
COUPON = """\
def redeem(user):
    raise ValueError(f"invalid coupon {user}")


def main(user):
    redeem(user)
"""


#: what prints a program's exception, run as part of it so that the traceback holds no frame but its own
_PRINTER = """

def printed(options, *args):
    import traceback

    try:
        main(*args)
    except BaseException as error:
        return "".join(traceback.TracebackException.from_exception(error, **options).format())
    raise AssertionError("the program raised nothing")
"""


def printed(program: str, path: str, *args: object, **options: int) -> str:
    """The traceback Python prints for what `main(*args)` raises (`options`: `TracebackException`'s)."""
    program += _PRINTER
    linecache.cache[path] = (len(program), None, program.splitlines(keepends=True), path)
    try:
        namespace: dict[str, object] = {}
        exec(compile(program, path, "exec"), namespace)
        printer = namespace["printed"]
        assert callable(printer)
        text = printer(options, *args)
    finally:
        linecache.cache.pop(path, None)
    assert isinstance(text, str)
    return text


def task_group_text(depth: int, errors: list[Callable[[], Exception]]) -> str:
    return printed(TASK_GROUP, "/app/shop/jobs.py", depth, [make() for make in errors])


def coupon_text(user: str) -> str:
    return printed(COUPON, "/app/shop/coupons.py", user)
