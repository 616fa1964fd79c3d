"""The service's tests run without its database, cache and HTTP client libraries installed: a stand-in for
each one that is missing, whose every attribute is a placeholder class (the tests never reach them)."""

import sys
import types


class _StandIn(types.ModuleType):
    def __getattr__(self, name: str) -> type:
        return type(name, (Exception,), {})


for name in ("httpx", "psycopg", "redis"):
    try:
        __import__(name)
    except ImportError:
        sys.modules[name] = _StandIn(name)
