"""`rounds group`: JSON Lines in, one JSON object per line out, bad lines reported not fatal."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from rounds_bot.cli.app import main
from rounds_bot.grouping.fingerprint import FINGERPRINT_VERSION

TRACES = Path(__file__).parent / "golden" / "grouping" / "traces"


def run(stdin: bytes | str, *args: str) -> list[dict]:
    result = CliRunner().invoke(main, ["group", *args], input=stdin)
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.output.splitlines()]


def lines(*events: object) -> str:
    return "\n".join(json.dumps(e) if not isinstance(e, str) else e for e in events) + "\n"


def test_one_output_object_per_input_line_in_order() -> None:
    out = run(
        lines(
            {"message": "user 123 not found in shard 7"},
            {"message": "user 9 not found in shard 12"},
            {"message": "disk full"},
        )
    )
    assert [o["line"] for o in out] == [1, 2, 3]
    assert [o["tier"] for o in out] == ["new", "fingerprint", "new"]
    assert out[0]["signature"] == out[1]["signature"] != out[2]["signature"]


def test_all_optional_fields_are_read() -> None:
    event = {
        "service": "pay",
        "error_type": "PaymentError",
        "message": "declined",
        "stacktrace": (TRACES / "python_chained_cause.txt").read_text(),
        "error_code": None,
        "attributes": {"error.code": "card_declined", "retry": 2, "nested": {"a": [1]}},
    }
    first, second = run(lines(event, {**event, "message": "other"}))
    assert (first["tier"], second["tier"]) == ("new", "error_code")


def test_explain_adds_the_fingerprint_explanation() -> None:
    (plain,) = run(lines({"message": "disk full"}))
    (explained,) = run(lines({"message": "disk full"}), "--explain")
    assert "explanation" not in plain
    assert explained["explanation"].startswith(f"+ fingerprint: {FINGERPRINT_VERSION}")


def test_bad_lines_get_an_error_object_and_the_run_goes_on() -> None:
    out = run(
        lines(
            {"message": "first"},
            "",
            "{not json",
            "[1, 2]",
            {"message": {"nested": True}},
            {"message": "ok", "attributes": [1]},
            "[" * 100_000,
            {"message": "last"},
        )
    )
    assert [o["line"] for o in out] == list(range(1, 9))
    assert [("error" in o) for o in out] == [False, True, True, True, True, True, True, False]
    assert out[2]["error"].startswith("invalid JSON")
    assert out[4]["error"] == "field 'message' must be a string, got an object"


def test_binary_junk_and_huge_messages_are_grouped_not_fatal() -> None:
    junk = b'{"message": "caf\xc3\xa9 \xff\xfe bytes"}\n' + b"\xff\xfe\x00 not json\n"
    huge = (json.dumps({"message": "x" * 1_000_000}) + "\n").encode()
    out = run(junk + huge)
    assert "signature" in out[0] and "error" in out[1] and "signature" in out[2]


def test_lone_surrogates_in_json_are_handled() -> None:
    (out,) = run(lines('{"message": "half a pair \\udc80 here"}'))
    assert out["signature"].startswith("sig_")


def test_reads_a_file_or_standard_input(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(lines({"message": "disk full"}))
    from_file = CliRunner().invoke(main, ["group", str(path)])
    from_stdin = CliRunner().invoke(main, ["group", "-"], input=path.read_text())
    assert from_file.exit_code == from_stdin.exit_code == 0
    assert from_file.output == from_stdin.output


def test_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["group", str(tmp_path / "absent.jsonl")])
    assert result.exit_code == 2


def test_the_output_is_the_engines_answers_for_the_same_events() -> None:
    from datetime import UTC, datetime

    from rounds_bot.grouping.engine import GroupingEngine
    from rounds_bot.models import ErrorEvent

    events = [
        {"service": "auth", "message": f"user {n % 7} not found in shard {n % 3}"} for n in range(30)
    ] + [
        {"service": "auth", "message": "disk full", "error_type": "OSError"},
        {"message": "error code E42 in payment"},
        {"service": "shop", "message": "boom", "stacktrace": (TRACES / "java_caused_by.txt").read_text()},
        {"service": "auth", "message": "user 9 not found in shard 2", "attributes": {"retry": 1}},
    ]
    out = run(lines(*events))
    engine = GroupingEngine()
    expected = [
        engine.assign(
            ErrorEvent(
                event_id="x",
                timestamp=datetime(1970, 1, 1, tzinfo=UTC),
                kind="exception" if "stacktrace" in e or "error_type" in e else "log",
                **e,
            )
        )
        for e in events
    ]
    assert [(o["signature"], o["tier"]) for o in out] == [(a.signature_id, a.tier) for a in expected]


def test_lines_orjson_refuses_are_read_by_the_standard_library() -> None:
    out = run(
        lines(
            '{"message": "disk full", "count": 123456789012345678901234567890}',
            '{"message": "disk full", "ratio": NaN}',
            '{"message": "disk full"}',
        )
    )
    assert len({o["signature"] for o in out}) == 1
    assert [o["tier"] for o in out] == ["new", "fingerprint", "fingerprint"]


def test_a_message_alone_and_the_same_message_with_empty_or_extra_fields_get_one_answer() -> None:
    """Lines of `message`, `service` and `error_type` alone take a short way through the engine;
    any other line goes the whole way. Both must give the same answer for the same event."""
    base = {"service": "auth", "message": "user 7 not found in shard 3", "error_type": "KeyError"}
    out = run(
        lines(
            base,
            {**base, "stacktrace": ""},
            {**base, "error_code": None, "attributes": {}},
            {**base, "host": "web-1"},  # a field `rounds group` does not read
            {**base, "message": "user 8 not found in shard 1", "attributes": {"retry": None}},
            {**base, "service": ["auth"]},  # a wrong type is that line's error, whichever way it went
        )
    )
    assert len({o.get("signature") for o in out[:5]}) == 1
    assert [o.get("tier") for o in out[:5]] == ["new"] + ["fingerprint"] * 4
    assert out[5] == {"line": 6, "error": "field 'service' must be a string, got an array"}


def test_the_grouping_settings_apply(clean_env) -> None:
    similar = lines(
        {"message": "payment failed for customer alice: card declined by issuer after retry"},
        {"message": "payment failed for customer robert: card declined by issuer after retry"},
    )
    assert run(similar)[1]["related"] == [run(similar)[0]["signature"]]
    clean_env.setenv("ROUNDS_MERGE_THRESHOLD", "1")
    clean_env.setenv("ROUNDS_RELATED_THRESHOLD", "0.99")
    assert run(similar)[1]["related"] == []


def test_an_invalid_grouping_setting_stops_it_with_the_variable_named(clean_env) -> None:
    clean_env.setenv("ROUNDS_MERGE_THRESHOLD", "2")
    result = CliRunner().invoke(main, ["group"], input=lines({"message": "x"}))
    assert result.exit_code == 2
    assert "ROUNDS_MERGE_THRESHOLD" in result.output


def test_a_line_with_nothing_to_group_by_but_unknown_fields_is_that_lines_error() -> None:
    out = run(
        lines('{"msg": "disk full"}', '{"service": "db", "level": "error"}', '{"message": "x", "host": "a"}')
    )
    assert out[0]["error"].startswith("nothing to group: no message, stacktrace, error_type or error_code")
    assert "unknown field 'msg' (did you mean 'message'?)" in out[0]["error"]
    assert "unknown field 'level'" in out[1]["error"]
    assert out[2]["title"] == "x"
