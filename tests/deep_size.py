"""The bytes an object keeps alive, counted deep: itself and everything it refers to through containers,
`__dict__` and `__slots__`, each object once (`sys.getsizeof` of each). What weak references point to
is not kept alive by them, and classes, modules, functions and enum members are shared by the whole
program: neither is counted. Used to check that estimates of memory (the memos' entry sizes) bound it."""

from __future__ import annotations

import enum
import sys
import types
import weakref

_SHARED_BY_THE_PROGRAM = (
    type,
    types.ModuleType,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    enum.Enum,
)
_LEAVES = (str, bytes, int, float, complex, weakref.ref)


def deep_size(obj: object) -> int:
    seen: set[int] = set()
    total = 0
    pending = [obj]
    while pending:
        found = pending.pop()
        if found is None or found is True or found is False or isinstance(found, _SHARED_BY_THE_PROGRAM):
            continue
        if id(found) in seen:
            continue
        seen.add(id(found))
        total += sys.getsizeof(found)
        if isinstance(found, _LEAVES):
            continue
        if isinstance(found, dict):
            pending.extend(found.keys())
            pending.extend(found.values())
        elif isinstance(found, (tuple, list, set, frozenset)):
            pending.extend(found)
        else:
            pending.extend(_attributes(found))
    return total


def _attributes(found: object) -> list[object]:
    attributes: list[object] = []
    if hasattr(found, "__dict__"):
        attributes.append(vars(found))
    for cls in type(found).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if name not in ("__dict__", "__weakref__") and hasattr(found, name):
                attributes.append(getattr(found, name))
    return attributes
