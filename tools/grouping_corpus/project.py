"""A small Python service whose bugs raise real exceptions, for the grouping corpus.

Each module is compiled under the path it would have in a deployed service (`/app/shop/...` for a
service run from its source tree, `site-packages/shop/...` for one installed as a package), and its
source is registered with `linecache`, so `traceback` prints exactly what a deployed service
prints: the real frames, source lines, carets and cause chains (`raise ... from`, "During
handling of the above exception").
"""

from __future__ import annotations

import linecache
import types
from collections.abc import Callable
from typing import Any

#: path -> source of every module of the service; functions call across modules through `mods`
SOURCES: dict[str, str] = {
    # --- one bug reached through different callers ------------------------------------------------
    "/app/shop/pricing.py": """
RATES = {"WELCOME": 0.1, "VIP": 0.2}


def apply_coupon(total, code):
    rate = RATES[code]
    return total * (1 - rate)


def tax_for(region):
    table = {"EU": 0.2, "UK": 0.2}
    return table[region]
""",
    "/app/shop/api/checkout.py": """
def post(mods, code):
    cart_total = 120.0
    return mods["/app/shop/pricing.py"].apply_coupon(cart_total, code)


def quote(mods, region):
    return mods["/app/shop/pricing.py"].tax_for(region)
""",
    "/app/shop/api/cart.py": """
def update(mods, code):
    subtotal = 35.5
    discounted = mods["/app/shop/pricing.py"].apply_coupon(subtotal, code)
    return round(discounted, 2)
""",
    "/app/shop/jobs/renew.py": """
def run(mods, code):
    for total in (10.0, 20.0):
        mods["/app/shop/pricing.py"].apply_coupon(total, code)
""",
    # --- frames identified by path: two modules with the same file name -------------------------
    "/app/shop/api/v1/orders.py": """
def create(mods, quantity):
    if quantity <= 0:
        raise ValueError(f"quantity must be positive, got {quantity}")
    return {"quantity": quantity}
""",
    "/app/shop/api/v2/orders.py": """
def create(mods, quantity):
    lines = [{"sku": "A", "quantity": quantity}]
    for line in lines:
        if line["quantity"] <= 0:
            raise ValueError(f"quantity must be positive, got {quantity}")
    return lines
""",
    "/app/shop/router.py": """
def dispatch(mods, version, quantity):
    handler = mods[f"/app/shop/api/{version}/orders.py"].create
    return handler(mods, quantity)
""",
    # --- chained exceptions: one wrapper, different root causes ---------------------------------
    "/app/shop/errors.py": """
class StorageError(Exception):
    pass
""",
    "/app/shop/db/pool.py": """
def connect(port):
    raise ConnectionRefusedError(111, f"Connection refused (port {port})")
""",
    "/app/shop/db/codec.py": """
import json


def decode(raw):
    return json.loads(raw)
""",
    "/app/shop/repo.py": """
def save(mods, how, value):
    try:
        if how == "connect":
            mods["/app/shop/db/pool.py"].connect(value)
        else:
            mods["/app/shop/db/codec.py"].decode(value)
    except Exception as exc:
        raise mods["/app/shop/errors.py"].StorageError("could not save the order") from exc


def load(mods, key, cache):
    try:
        return cache[key]
    except KeyError:
        return mods["/app/shop/db/codec.py"].decode(cache.get("fallback", "{"))
""",
    # --- recursion: the error surfaces at a different place of the cycle each time --------------
    "/app/shop/catalog/tree.py": """
def walk(node, depth, limit):
    if depth == limit:
        raise ValueError(f"category tree has a cycle at {node}")
    return visit(node, depth + 1, limit)


def visit(node, depth, limit):
    if depth == limit:
        raise ValueError(f"category tree has a cycle at {node}")
    return walk(node, depth + 1, limit)
""",
    # --- a service installed as a package: its own code lives under site-packages --------------
    "/usr/local/lib/python3.12/site-packages/shop/text.py": """
def slugify(title):
    words = title.split()
    return words[0].lower() + "-" + "-".join(w.lower() for w in words[1:])
""",
    "/usr/local/lib/python3.12/site-packages/shop/catalog.py": """
def product_url(mods, title):
    slug = mods["/usr/local/lib/python3.12/site-packages/shop/text.py"].slugify(title)
    return "/p/" + slug
""",
    "/usr/local/lib/python3.12/site-packages/shop/blog.py": """
def post_url(mods, title):
    return "/blog/" + mods["/usr/local/lib/python3.12/site-packages/shop/text.py"].slugify(title)
""",
    "/usr/local/lib/python3.12/site-packages/gunicorn/workers/sync.py": """
def handle_request(mods, handler, *args):
    return handler(mods, *args)
""",
}


def load_modules() -> dict[str, types.SimpleNamespace]:
    """Every module compiled under its deployed path, its source visible to `traceback`."""
    modules: dict[str, types.SimpleNamespace] = {}
    for path, source in SOURCES.items():
        lines = source.splitlines(keepends=True)
        linecache.cache[path] = (len(source), None, lines, path)
        namespace: dict[str, Any] = {"__name__": path.rsplit("/", 1)[-1].removesuffix(".py")}
        exec(compile(source, path, "exec"), namespace)
        modules[path] = types.SimpleNamespace(**namespace)
    return modules


def raised(call: Callable[[], object]) -> BaseException:
    """The exception `call` raises (every corpus call raises one)."""
    try:
        call()
    except BaseException as exc:
        # The frames of the generator itself are not the service's: the trace starts at the
        # service's first frame, as it does in the deployed service.
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename not in SOURCES:
            tb = tb.tb_next
        return exc.with_traceback(tb)
    raise AssertionError("the corpus call did not raise")
