"""A closure's frame as PHP prints an uncaught exception: its arguments are no part of its name
(`{closure}(3, 0)` is `{closure}`), and PHP 8.4's names, which add the function a closure is written in and
the line it starts on (`{closure:App\\Stats::average():8}`, at a file's top level the file:
`{closure:/app/routes/web.php:3}`), are read as PHP 8.3 names the closure (`App\\{closure}`, `{closure}`):
the line moves whenever the code above it does, and the file is the frame's own. So are they as
OpenTelemetry's PHP SDK writes them, with dots (`App.Stats.{closure:App.Stats::average():8}`). A signature an
earlier release made with the arguments in the name, or from the SDK's lines as it read them, keeps receiving
the trace."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from known_states import engine_knowing

from rounds_bot.grouping.engine import GroupingEngine
from rounds_bot.grouping.stacktrace import as_read_before, parse_stacktrace
from rounds_bot.models import ErrorEvent

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def _uncaught(call: str) -> str:
    """A division by zero in a closure `array_map` calls, as PHP prints it uncaught."""
    return (
        "PHP Fatal error:  Uncaught DivisionByZeroError: Division by zero in /app/src/Stats.php:9\n"
        "Stack trace:\n"
        f"#0 [internal function]: {call}\n"
        "#1 /app/src/Stats.php(12): array_map(Object(Closure), Array)\n"
        "#2 /app/public/index.php(5): App\\Stats->average(Array)\n"
        "#3 {main}\n"
        "  thrown in /app/src/Stats.php on line 9"
    )


BARE = _uncaught("{closure}(3, 0)")
#: the hashes the previous release stored for a signature it made from `BARE` (its `GroupingEngine` assigned
#: `_event(1, BARE)`, and its `state` of the signature held these)
PREVIOUS_RELEASE_HASHES = (
    "2f867b6140ecf2d96c2489516cc6f70b580f8c2e5c9d7c92cc9fdd210c089505",
    "e8c61446c6cc02113fbd819d68ecb33dbfec00bd334ad44630bebbef0324a09a",
    "bd978e27409a87a52a8b4a6ad80fc548cae7ad6a8bd2bb15a42afad5ff861f30",
)


def _event(n: int, stacktrace: str) -> ErrorEvent:
    return ErrorEvent(
        event_id=f"e{n}",
        timestamp=T0,
        service="shop",
        error_type="DivisionByZeroError",
        message="Division by zero",
        stacktrace=stacktrace,
    )


def _signatures(texts: list[str]) -> list[str]:
    found = GroupingEngine().assign_all([_event(n, text) for n, text in enumerate(texts)])
    return [assignment.signature_id for assignment in found]


def _closure_frame(call: str) -> tuple[str | None, str | None]:
    trace = parse_stacktrace(_uncaught(call))
    assert trace is not None and trace.runtime == "php"
    frame = trace.exceptions[0].frames[0]
    return frame.module, frame.function


@pytest.mark.parametrize(
    ("call", "read"),
    [
        ("{closure}(3, 0)", (None, "{closure}")),
        ("{closure}('abc', Object(App\\Order))", (None, "{closure}")),
        ("{closure}()", (None, "{closure}")),
        # PHP 8.4: the function it is written in and its line; at a file's top level, the file
        ("{closure:/app/src/Stats.php:7}(3, 0)", (None, "{closure}")),
        ("{closure:App\\Stats::average():8}(3, 0)", ("App", "{closure}")),
        ("App\\Stats->{closure:App\\Stats::average():8}(3)", ("App.Stats", "App\\{closure}")),
        ("{closure:App\\Util\\fmt():30}(3)", ("App.Util", "{closure}")),
        ("{closure:fmt():30}(3)", (None, "{closure}")),
        # PHP 8.4: a closure written in a closure names that closure's own 8.4 name, to any depth
        ("{closure:{closure:App\\Stats::average():8}:9}(3, 0)", ("App", "{closure}")),
        ("{closure:{closure:{closure:App\\Util\\fmt():1}:2}:3}()", ("App.Util", "{closure}")),
        ("{closure:{closure:/app/routes/web.php:3}:4}(1)", (None, "{closure}")),
        ("App\\Stats->{closure:{closure:App\\Stats::average():8}:9}(3)", ("App.Stats", "App\\{closure}")),
        # as PHP 8.3 and earlier print them, read as before
        ("App\\Stats->App\\{closure}(3)", ("App.Stats", "App\\{closure}")),
        ("App\\{closure}(3, 0)", ("App", "{closure}")),
        ("App\\Stats->average(Array)", ("App.Stats", "average")),
        ("Illuminate\\Pipeline\\Pipeline->then(Object(Closure))", ("Illuminate.Pipeline.Pipeline", "then")),
    ],
)
def test_a_closures_frame_is_named_without_its_arguments_or_line(
    call: str, read: tuple[str | None, str | None]
) -> None:
    assert _closure_frame(call) == read


def test_a_php_84_closure_is_named_as_php_83_names_it() -> None:
    assert _closure_frame("App\\Stats->{closure:App\\Stats::average():8}(3)") == _closure_frame(
        "App\\Stats->App\\{closure}(3)"
    )


def _pipeline(call: str) -> str:
    """Laravel's middleware pipeline, whose `carry()` returns a closure that returns the closure each
    middleware calls next: PHP 8.3 prints that frame `Pipeline->Illuminate\\Pipeline\\{closure}(...)`."""
    return (
        "PHP Fatal error:  Uncaught RuntimeException: no tenant in /app/app/Http/Middleware/Tenant.php:14\n"
        "Stack trace:\n"
        "#0 /app/vendor/laravel/framework/src/Illuminate/Pipeline/Pipeline.php(209): "
        "App\\Http\\Middleware\\Tenant->handle(Object(Illuminate\\Http\\Request), Object(Closure))\n"
        f"#1 /app/app/Http/Middleware/Audit.php(20): Illuminate\\Pipeline\\Pipeline->{call}\n"
        "#2 /app/vendor/laravel/framework/src/Illuminate/Pipeline/Pipeline.php(209): "
        "App\\Http\\Middleware\\Audit->handle(Object(Illuminate\\Http\\Request), Object(Closure))\n"
        "#3 {main}\n"
        "  thrown in /app/app/Http/Middleware/Tenant.php on line 14"
    )


def _pipeline_84(carry: int) -> str:
    return _pipeline(
        f"{{closure:{{closure:Illuminate\\Pipeline\\Pipeline::carry():{carry}}}:{carry + 1}}}"
        "(Object(Illuminate\\Http\\Request))"
    )


def test_laravels_pipeline_closure_is_named_as_php_83_names_it() -> None:
    php_83 = parse_stacktrace(_pipeline("Illuminate\\Pipeline\\{closure}(Object(Illuminate\\Http\\Request))"))
    php_84 = parse_stacktrace(_pipeline_84(194))
    assert php_83 is not None and php_84 is not None
    frame = php_84.exceptions[0].frames[1]
    assert (frame.module, frame.function) == (
        "Illuminate.Pipeline.Pipeline",
        "Illuminate\\Pipeline\\{closure}",
    )
    assert php_84.exceptions == php_83.exceptions


def test_a_nested_closures_bug_is_one_signature_whatever_its_arguments_or_lines() -> None:
    texts = [
        _uncaught("{closure:{closure:App\\Stats::average():8}:9}(3, 0)"),
        _uncaught("{closure:{closure:App\\Stats::average():8}:9}(7, 0)"),
        _uncaught("{closure:{closure:App\\Stats::average():11}:12}(3, 0)"),  # lines added above both
        _uncaught("App\\{closure}(3, 0)"),  # as PHP 8.3 prints it
    ]
    assert len(set(_signatures(texts))) == 1


def test_one_closures_bug_is_one_signature_whatever_its_arguments_or_line() -> None:
    texts = [
        BARE,
        _uncaught("{closure}(7, 0)"),
        _uncaught("{closure:/app/src/Stats.php:7}(3, 0)"),
        _uncaught("{closure:/app/src/Stats.php:11}(5, 0)"),  # lines added above it
    ]
    first, other_values, php_84, moved = _signatures(texts)
    assert first == other_values
    assert php_84 == moved


def test_the_previous_reading_keeps_the_arguments_in_the_name() -> None:
    trace = parse_stacktrace(BARE)
    assert trace is not None
    before = as_read_before(trace)
    assert before is not None and not before.notes
    assert before.exceptions[0].frames[0].function == "{closure}(3, 0)"
    assert before.exceptions[0].frames[1:] == trace.exceptions[0].frames[1:]
    unchanged = parse_stacktrace(_uncaught("App\\Stats->App\\{closure}(3)"))
    assert unchanged is not None and as_read_before(unchanged) is None


NESTED = _uncaught("{closure:{closure:App\\Stats::average():8}:9}(3, 0)")
#: the hashes the previous release stored for a signature it made from `NESTED`, as `PREVIOUS_RELEASE_HASHES`
NESTED_PREVIOUS_RELEASE_HASHES = (
    "fe06472f32d3760b4ac461f35e442a4d30f33b9bd6c608059e7014f620c37252",
    "a508ec3887d6530aa4a0aa692327e1a971506db8827be085428bcb3090607eff",
    "7997bb84aa5515db013b1b7644b52db0915c7ecc191087862314cd59241fce52",
)


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_signature_the_previous_release_made_keeps_receiving_the_nested_closures_bug(how: str) -> None:
    engine = engine_knowing(
        "sig_before",
        service="shop",
        title="DivisionByZeroError",
        hashes=NESTED_PREVIOUS_RELEASE_HASHES,
        how=how,
    )
    found = engine.assign_all([_event(1, NESTED)])
    assert {(a.signature_id, a.tier) for a in found} == {("sig_before", "fingerprint")}


@pytest.mark.parametrize("how", ["given", "looked up"])
def test_a_signature_the_previous_release_made_keeps_receiving_the_closures_bug(how: str) -> None:
    engine = engine_knowing(
        "sig_before", service="shop", title="DivisionByZeroError", hashes=PREVIOUS_RELEASE_HASHES, how=how
    )
    found = engine.assign_all([_event(1, BARE)])
    assert {(a.signature_id, a.tier) for a in found} == {("sig_before", "fingerprint")}
    # registered under this version's hashes too: other arguments find it by them
    later = engine.assign_all([_event(2, _uncaught("{closure}(9, 0)"))])
    assert later[0].signature_id == "sig_before"


def _sdk(closure: str, line: int = 9) -> str:
    """The same division by zero as OpenTelemetry's PHP SDK writes it (`StackTraceFormatter::format`: Java's
    layout, namespaces with dots, the class before the function's name)."""
    return (
        "DivisionByZeroError: Division by zero\n"
        f"\tat {closure}(Stats.php:{line})\n"
        "\tat array_map(Stats.php:12)\n"
        "\tat App.Stats.average(index.php:5)\n"
        "\tat {main}(index.php:5)"
    )


SDK_83 = _sdk("App.Stats.App.{closure}")


@pytest.mark.parametrize(
    "closure",
    [
        "App.Stats.{closure:App.Stats::average():8}",
        "App.Stats.{closure:App.Stats::average():21}",  # lines added above it
        "App.Stats.{closure:{closure:App.Stats::average():8}:9}",
    ],
)
def test_the_sdks_php_84_closure_is_read_as_its_php_83_name(closure: str) -> None:
    php_83 = parse_stacktrace(SDK_83)
    php_84 = parse_stacktrace(_sdk(closure))
    assert php_83 is not None and php_84 is not None and php_84.runtime == "php"
    assert [(f.module, f.function) for f in php_84.exceptions[0].frames] == [
        (f.module, f.function) for f in php_83.exceptions[0].frames
    ]
    assert php_84.exceptions[0].value == "Division by zero"


def test_the_sdks_closure_at_a_files_top_level_is_named_without_its_line() -> None:
    trace = parse_stacktrace(_sdk("{closure:/app/routes/web.php:3}"))
    assert trace is not None
    frame = trace.exceptions[0].frames[0]
    assert (frame.module, frame.function, frame.lineno) == (None, "{closure}", 9)


@pytest.mark.parametrize(
    "closures",
    [
        ["App.Stats.{closure:App.Stats::average():8}", "App.Stats.{closure:App.Stats::average():15}"],
        ["{closure:/app/routes/web.php:3}", "{closure:/app/routes/web.php:11}"],
    ],
)
def test_the_sdks_closure_moved_by_an_edit_above_it_is_one_signature(closures: list[str]) -> None:
    first, moved = (_sdk(closure, line) for closure, line in zip(closures, (9, 16), strict=True))
    assert len(set(_signatures([first, moved]))) == 1


def test_the_sdks_closures_of_two_namespaces_functions_are_two_signatures() -> None:
    texts = [_sdk("{closure:App.Util.fmt():30}"), _sdk("{closure:App.Report.render():30}")]
    assert len(set(_signatures(texts))) == 2


def test_the_previous_reading_of_the_sdks_php_84_closures() -> None:
    # a closure written in a function: its line was no frame; at a file's top level: named by the file
    in_function = parse_stacktrace(_sdk("App.Stats.{closure:App.Stats::average():8}"))
    assert in_function is not None
    before = as_read_before(in_function)
    assert before is not None
    assert before.exceptions[0].frames == in_function.exceptions[0].frames[1:]
    at_top = parse_stacktrace(_sdk("{closure:/app/routes/web.php:3}"))
    assert at_top is not None
    before = as_read_before(at_top)
    assert before is not None and not before.notes
    read = before.exceptions[0].frames[0]
    assert (read.module, read.function) == ("{closure:/app/routes/web", "php:3}")
    assert as_read_before(parse_stacktrace(SDK_83) or at_top) is None


SDK_84 = _sdk("App.Stats.{closure:App.Stats::average():8}")
SDK_84_AT_TOP = _sdk("{closure:/app/routes/web.php:3}")
#: the hashes the previous release stored for signatures it made from `SDK_84` and `SDK_84_AT_TOP`, as
#: `PREVIOUS_RELEASE_HASHES`
SDK_PREVIOUS_RELEASE_HASHES = {
    SDK_84: (
        "aeea0052ac63be52da79a036a8dbf9995def7464df57baef43bcc0362bbda60d",
        "271d1272be64de99d413a6f84221175a662359e85f3e783e771c7111dd0c940f",
    ),
    SDK_84_AT_TOP: (
        "ee20070a49e884e5c2c88fc9d4764e31306b5c3f7d0fd95920c6b07bd0a321db",
        "3d183fd8df33ec3702d65a6b0525559b26a83f211bdb76837ebd6022a2c4557e",
    ),
}


@pytest.mark.parametrize("how", ["given", "looked up"])
@pytest.mark.parametrize("text", [SDK_84, SDK_84_AT_TOP])
def test_a_signature_the_previous_release_made_keeps_receiving_the_sdks_closure(how: str, text: str) -> None:
    engine = engine_knowing(
        "sig_before",
        service="shop",
        title="DivisionByZeroError",
        hashes=SDK_PREVIOUS_RELEASE_HASHES[text],
        how=how,
    )
    found = engine.assign_all([_event(1, text)])
    assert {(a.signature_id, a.tier) for a in found} == {("sig_before", "fingerprint")}
