"""The grouping rules of `rounds-fp:3`, one convention each: module paths, crash site and root cause,
recursion, cut traces, whole-trace reading, failed spans' targets, quoted and structured values."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from rounds_bot.grouping.crash_site import Site, same_site, site_of, site_of_text
from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.frames import collapse_leading_cycle, module_path
from rounds_bot.grouping.inapp import InAppRules
from rounds_bot.grouping.operations import operation_target
from rounds_bot.grouping.stacktrace import Frame, parse_stacktrace
from rounds_bot.models import Assignment, ErrorEvent

EPOCH = datetime(2026, 11, 1, tzinfo=UTC)


def assign(engine: GroupingEngine, **fields: object) -> Assignment:
    return engine.assign(ErrorEvent(event_id="e", timestamp=EPOCH, **fields))  # type: ignore[arg-type]


def python_trace(path: str, function: str = "create", cause: str | None = None) -> str:
    text = ""
    if cause is not None:
        text = (
            "Traceback (most recent call last):\n"
            f'  File "{cause}", line 3, in connect\n'
            "ConnectionRefusedError: [Errno 111] Connection refused\n\n"
            "The above exception was the direct cause of the following exception:\n\n"
        )
    return text + (
        "Traceback (most recent call last):\n"
        '  File "/app/shop/router.py", line 4, in dispatch\n'
        f'  File "{path}", line 4, in {function}\n'
        "ValueError: quantity must be positive\n"
    )


def test_module_paths_are_relative_to_the_project_root_and_keep_their_directories() -> None:
    assert module_path("/app/shop/api/v1/orders.py") == "shop/api/v1/orders.py"
    assert module_path("/usr/src/app/api/v2/orders.py") == "api/v2/orders.py"
    assert module_path("/usr/local/lib/python3.12/site-packages/shop/text.py") == "shop/text.py"
    assert module_path("/srv/releases/20261101120000/shop/cart.py") == "releases/shop/cart.py"
    assert module_path("C:\\inetpub\\App\\Orders.cs") == "orders.cs"
    assert module_path("/home/dev/projects/shop/api/orders.py") == "shop/api/orders.py"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        # a short commit hash (`git rev-parse --short`) whatever its first character, alone or after a name
        ("https://cdn.example.com/shop/e4f1a2b/assets/app.js", "assets/app.js"),
        ("https://cdn.example.com/shop/3c9d0e1/assets/app.js", "assets/app.js"),
        ("/opt/deploy/ab12cd3/shop/orders.py", "shop/orders.py"),
        ("/opt/deploy/shop-e4f1a2b/shop/orders.py", "shop/orders.py"),
        # a run's own directories: Spark's files of a job, YARN's application and container
        (
            "/tmp/spark-3f1a2b4c-1111-2222-3333-444455556666/userFiles-9c2b0000-1111-2222-3333-444455556666/x.py",
            "x.py",
        ),
        (
            "/yarn/appcache/application_1700000000000_0001/container_1700000000000_0001_01_000002/job.py",
            "job.py",
        ),
        # words of hexadecimal letters alone, or too short for a commit, stay the code's directories
        ("/app/facade/deadbeef/x.py", "facade/deadbeef/x.py"),
        ("/app/decade/x.py", "decade/x.py"),
        ("/app/api/v2/x.py", "api/v2/x.py"),
        ("/app/md5/sha256/x.py", "md5/sha256/x.py"),
    ],
)
def test_a_directory_named_by_a_deployment_or_a_run_is_left_out_of_the_module_path(
    path: str, expected: str
) -> None:
    assert module_path(path) == expected


def test_two_modules_with_one_file_name_are_two_crash_sites() -> None:
    engine = GroupingEngine()
    v1 = assign(engine, service="shop", stacktrace=python_trace("/app/shop/api/v1/orders.py"))
    v2 = assign(engine, service="shop", stacktrace=python_trace("/app/shop/api/v2/orders.py"))
    assert v1.signature_id != v2.signature_id
    assert "shop/api/v2/orders.py:create is not its shop/api/v1/orders.py:create" in v2.explanation


def test_one_wrapper_over_two_root_causes_is_two_problems() -> None:
    engine = GroupingEngine()
    path = "/app/shop/api/v1/orders.py"
    refused = assign(engine, service="shop", stacktrace=python_trace(path, cause="/app/shop/db/pool.py"))
    decoded = assign(engine, service="shop", stacktrace=python_trace(path, cause="/app/shop/db/codec.py"))
    again = assign(engine, service="shop", stacktrace=python_trace(path, cause="/app/shop/db/pool.py"))
    assert refused.signature_id != decoded.signature_id
    assert again.signature_id == refused.signature_id


def test_the_site_names_the_root_cause_and_a_site_stored_before_still_compares() -> None:
    trace = parse_stacktrace(python_trace("/app/shop/api/v1/orders.py", cause="/app/shop/db/pool.py"))
    assert trace is not None
    site = site_of(trace, InAppRules().roles(trace))
    assert site == Site("shop/api/v1/orders.py:create", "shop/db/pool.py:connect")
    assert site.key == "shop/api/v1/orders.py:create <- root cause shop/db/pool.py:connect"
    assert site_of_text(python_trace("/app/shop/api/v1/orders.py", cause="/app/shop/db/pool.py")) == site
    assert Site.from_key(site.key) == site and Site.from_key(None) == Site(None)
    assert same_site("orders.py:create", "shop/api/v1/orders.py:create")  # stored by rounds-fp:2
    assert not same_site("orders.py:create", "shop/api/v1/orders.py:update")
    assert not same_site("a.py:f <- root cause b.py:g", "a.py:f <- root cause c.py:g")


def test_a_recursion_cycle_keeps_its_outermost_pass_at_any_depth() -> None:
    walk, visit, main = (
        Frame("walk", filename="/app/t.py"),
        Frame("visit", filename="/app/t.py"),
        Frame("main"),
    )
    odd = (walk, visit, walk, visit, walk, main)  # crash site first
    even = (visit, walk, visit, walk, main)
    assert collapse_leading_cycle(odd) == collapse_leading_cycle(even) == (visit, walk, main)
    assert collapse_leading_cycle((walk, visit, main)) == (walk, visit, main)


def test_a_cut_jvm_trace_keeps_the_apps_frames_as_the_apps() -> None:
    text = (
        "java.lang.NullPointerException: cart is null\n"
        "\tat com.acme.shop.web.CartView.total(CartView.java:31)\n"
        "\tat java.base/java.lang.reflect.Method.invoke(Method.java:580)\n"
        "\tat org.apache.velocity.runtime.parser.node.ASTMethod.execute(ASTMethod.java:225)\n"
    )
    trace = parse_stacktrace(text)
    assert trace is not None
    roles = InAppRules().roles(trace)
    assert roles.owner is None
    assert site_of(trace, roles).crash_site == "com.acme.shop.web.CartView:total"
    assert InAppRules().roles(trace, cut_traces=False).owner == "org.apache"  # as rounds-fp:2 read it


def test_roles_worked_out_without_the_memo_are_the_remembered_ones_and_leave_it_empty() -> None:
    """A caller that asks about each trace once (the code locator) gets the roles the memo would give, in
    every way of reading, and the memo keeps nothing of its traces."""
    texts = (
        python_trace("/app/shop/api/v1/orders.py", cause="/app/shop/db/pool.py"),
        "java.lang.IllegalStateException: closed\n"
        "\tat com.acme.shop.Cart.total(Cart.java:31)\n"
        "\tat org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:897)\n"
        "\tat com.acme.shop.Main.main(Main.java:9)\n",
    )
    for text in texts:
        trace = parse_stacktrace(text)
        assert trace is not None
        for cut_traces in (True, False):
            for without in (frozenset(), frozenset({"runtime, framework or SDK code"})):
                fresh = InAppRules()
                once = fresh.roles(trace, cut_traces=cut_traces, without_rules=without, remember=False)
                assert fresh._traces == {}
                assert once == InAppRules().roles(trace, cut_traces=cut_traces, without_rules=without)


def test_a_trace_whose_first_frame_comes_after_a_long_dump_is_read_as_a_trace() -> None:
    dump = "\n".join(f'  {{"id":{n}}},' for n in range(80))
    text = (
        f"org.opentest4j.AssertionFailedError: expected: <[\n{dump}\n]>\n"
        "\tat com.acme.Check.verify(Check.java:4)\n"
    )
    trace = parse_stacktrace(text)
    assert trace is not None and trace.runtime == "java"
    assert trace.exceptions[0].frames[0].function == "verify"


def test_failed_spans_are_told_apart_by_what_they_called() -> None:
    engine = GroupingEngine()

    def span(**attributes: object) -> Assignment:
        return assign(engine, service="shop", kind="span_error", message="GET", attributes=attributes)

    inventory = span(**{"server.address": "inventory.internal", "url.template": "/items/{id}"})
    payments = span(**{"server.address": "payments.internal", "url.template": "/items/{id}"})
    again = span(**{"server.address": "inventory.internal", "url.template": "/items/{id}", "url.full": "x"})
    assert inventory.signature_id != payments.signature_id
    assert again.signature_id == inventory.signature_id
    assert operation_target({"server.port": 443, "http.route": "/a"}) == "http.route=/a"
    assert operation_target({"http.request.method": "GET"}) is None


def test_quoted_free_text_and_printed_structures_are_values() -> None:
    engine = GroupingEngine()
    first = assign(engine, service="shop", message='search failed for query "red shoes size 9"')
    second = assign(engine, service="shop", message='search failed for query "what\'s new"')
    prefs = assign(engine, service="shop", message="could not apply preferences {'theme': 'dark'}")
    more = assign(engine, service="shop", message="could not apply preferences {'a': {'b': True}}")
    assert second.signature_id == first.signature_id
    assert more.signature_id == prefs.signature_id != first.signature_id


def test_why_grouped_names_the_rule_for_merges_and_splits() -> None:
    engine = GroupingEngine()
    first = assign(engine, service="shop", stacktrace=python_trace("/app/shop/api/v1/orders.py"))
    assert "rule: no known signature" in first.explanation
    rerouted = python_trace("/app/shop/api/v1/orders.py").replace("router.py", "jobs.py")
    second = assign(engine, service="shop", stacktrace=rerouted)
    assert second.signature_id == first.signature_id
    assert "rule: the same crash site (shop/api/v1/orders.py:create)" in second.explanation
