"""A Rails view's frame names the method Action View compiled the template into, with the template path's hash
and the template object's id (`_app_views_orders_show_html_erb__2841678936012345678_15548`): Ruby seeds
`String#hash` afresh in every process, so every worker of every deployment prints other numbers. They are
left out: one bug in a template is one signature in every process, and two templates are two. A signature an
earlier release made with the numbers keeps receiving the trace."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from known_states import engine_knowing

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.stacktrace import as_read_before, parse_stacktrace
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)
MESSAGE = "undefined method `name' for nil"


def _rails(numbers: str, template: str = "orders/show") -> str:
    """A Rails log's backtrace of an error raised in a view (`numbers`: the hash, a negative one's sign
    written `_` as Action View writes it, then the object's id)."""
    path = template.replace("/", "_")
    return (
        f"ActionView::Template::Error ({MESSAGE}):\n"
        f"app/views/{template}.html.erb:12:in `_app_views_{path}_html_erb__{numbers}'\n"
        "actionview (7.1.3) lib/action_view/template.rb:261:in `block in render'\n"
        "actionview (7.1.3) lib/action_view/template.rb:249:in `render'\n"
        "app/controllers/orders_controller.rb:8:in `show'\n"
        "actionpack (7.1.3) lib/action_controller/metal/basic_implicit_render.rb:6:in `send_action'"
    )


FIRST_WORKER = _rails("1234567890123456789_123840")
#: the hashes the previous release stored for a signature it made from `FIRST_WORKER` (its `GroupingEngine`
#: assigned `_event(1, FIRST_WORKER)`, and its `state` of the signature held these)
PREVIOUS_RELEASE_HASHES = (
    "35daffc8338af658ee336ca41f17513b4e8db9b8e5390050aaaa8317fe501d28",
    "a071886c09199d9664f3e1c72a1fe47507dbd1af53a8964150ad3f1cedbf52e2",
)


def _event(n: int, stacktrace: str) -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service="shop",
        error_type="ActionView::Template::Error",
        message=MESSAGE,
        stacktrace=stacktrace,
    )


def _signatures(texts: list[str]) -> list[str]:
    found = GroupingEngine().assign_all([_event(n, text) for n, text in enumerate(texts)])
    return [assignment.signature_id for assignment in found]


@pytest.mark.parametrize(
    "numbers",
    [
        "1234567890123456789_123840",
        "_987654321098765432_77760",  # a negative hash
        "2841678936_8",  # a small object id, as Ruby 2.7 and later number objects
    ],
)
def test_a_compiled_templates_frame_is_named_without_its_numbers(numbers: str) -> None:
    trace = parse_stacktrace(_rails(numbers))
    assert trace is not None and trace.runtime == "ruby"
    frame = trace.exceptions[0].frames[0]
    assert (frame.function, frame.filename) == (
        "_app_views_orders_show_html_erb",
        "app/views/orders/show.html.erb",
    )


def test_other_names_are_read_as_before() -> None:
    for name in ("_render_row", "_app_views_orders_show_html_erb", "__send__", "v2_42_1000"):
        trace = parse_stacktrace(f"app/models/order.rb:3:in `{name}'\napp/models/order.rb:9:in `total'")
        assert trace is not None and trace.exceptions[0].frames[0].function == name
        assert as_read_before(trace) is None


def test_one_templates_bug_is_one_signature_in_every_process_and_two_templates_are_two() -> None:
    texts = [
        FIRST_WORKER,
        _rails("_987654321098765432_77760"),  # another worker: another seed, another object
        _rails("5551234567890123_9921"),  # the next deployment
        _rails("1234567890123456789_123840", template="orders/edit"),
    ]
    first, second, third, other = _signatures(texts)
    assert first == second == third != other


def test_the_previous_reading_keeps_the_numbers() -> None:
    trace = parse_stacktrace(FIRST_WORKER)
    assert trace is not None
    before = as_read_before(trace)
    assert before is not None and not before.notes
    assert (
        before.exceptions[0].frames[0].function
        == "_app_views_orders_show_html_erb__1234567890123456789_123840"
    )
    assert before.exceptions[0].frames[1:] == trace.exceptions[0].frames[1:]


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_signature_the_previous_release_made_keeps_receiving_the_template_s_bug(how: str) -> None:
    engine = engine_knowing(
        "sig_before",
        service="shop",
        title="ActionView::Template::Error",
        hashes=PREVIOUS_RELEASE_HASHES,
        how=how,
    )
    found = engine.assign_all([_event(1, FIRST_WORKER)])
    assert {(a.signature_id, a.tier) for a in found} == {("sig_before", "fingerprint")}
    # registered under this version's hashes too: the next process's numbers find it by them
    assert found[0].fingerprint_hash in engine.state("sig_before").hashes
    later = engine.assign_all([_event(2, _rails("_987654321098765432_77760"))])
    assert later[0].signature_id == "sig_before"
