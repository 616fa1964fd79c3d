"""An OTLP/JSON file as it is found on disk, not as it was meant to be written: a line the exporter is still
writing, a gzip copy cut short, the NUL bytes a truncated copy or a crash leaves, a file written in a
format rounds does not read. No whole line is lost, and what cannot be read is named by file and line."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import textwrap
import tracemalloc
import zlib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from rounds_bot.errors import SourceError
from rounds_bot.sources.base import PollResult, Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from rounds_bot.sources.otlp_file_lines import MAX_LINE, RawLines

EVERYTHING = Window(start=datetime(2000, 1, 1, tzinfo=UTC), end=datetime(2100, 1, 1, tzinfo=UTC))
T0 = 1_773_480_000_000_000_000  # nanoseconds, 2026-03-14


def error_line(message: str, *, second: int = 0) -> bytes:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "orders"}}]}
    record = {
        "timeUnixNano": str(T0 + second * 10**9),
        "severityNumber": 17,
        "body": {"stringValue": message},
    }
    scope_logs = [{"scope": {"name": "app"}, "logRecords": [record]}]
    return json.dumps({"resourceLogs": [{"resource": resource, "scopeLogs": scope_logs}]}).encode()


def poll(path: Path) -> PollResult:
    return OtlpFileSource(path).poll(EVERYTHING, frozenset())


def messages(result: PollResult) -> list[str]:
    return [event.message for event in result.events]


# --- a line still being written -----------------------------------------------------------------


def test_the_last_line_still_being_written_is_left_for_the_next_round(tmp_path: Path) -> None:
    # the exporter writes through a buffer flushed every second: a reader often finds half a line at the end
    path = tmp_path / "otlp.jsonl"
    whole = error_line("charge failed") + b"\n"
    path.write_bytes(whole + error_line("refund failed")[:90])
    result = poll(path)
    assert messages(result) == ["charge failed"]
    assert result.skipped == []  # not malformed: unfinished
    assert any(f"{path}:2" in note and "not complete" in note for note in result.notes)
    path.write_bytes(whole + error_line("refund failed") + b"\n")
    assert messages(poll(path)) == ["charge failed", "refund failed"]


def test_a_new_file_holding_half_its_first_line_is_not_refused(tmp_path: Path) -> None:
    # just after the exporter began the file (a rotation, a restart)
    path = tmp_path / "otlp.jsonl"
    path.write_bytes(error_line("charge failed")[:100])
    result = poll(path)
    assert result.events == [] and result.skipped == []
    assert len(result.notes) == 1


def test_a_last_line_without_its_line_end_that_no_more_text_can_mend_is_skipped(tmp_path: Path) -> None:
    # not the beginning of a JSON text: more bytes will not make it one
    path = tmp_path / "otlp.jsonl"
    path.write_bytes(error_line("charge failed") + b"\n" + b"{not json}")
    result = poll(path)
    assert messages(result) == ["charge failed"]
    assert [record.where for record in result.skipped] == [f"{path}:2"]
    assert result.notes == []


def test_a_complete_last_line_without_its_line_end_is_read(tmp_path: Path) -> None:
    # the exporter writes a request and its line end in two writes
    path = tmp_path / "otlp.jsonl"
    path.write_bytes(error_line("charge failed"))
    result = poll(path)
    assert messages(result) == ["charge failed"]
    assert result.notes == []


def test_a_line_cut_short_inside_the_file_is_skipped_by_its_line(tmp_path: Path) -> None:
    path = tmp_path / "otlp.jsonl"
    path.write_bytes(error_line("one")[:70] + b"\n" + error_line("two") + b"\n")
    result = poll(path)
    assert messages(result) == ["two"]
    assert [record.where for record in result.skipped] == [f"{path}:1"]


# --- a gzip copy cut short ------------------------------------------------------------------------


def test_a_gzip_file_cut_short_gives_every_whole_line_and_names_where_it_stops(tmp_path: Path) -> None:
    path = tmp_path / "otlp.jsonl.gz"
    lines = [error_line(f"failure {n}", second=n) + b"\n" for n in range(300)]
    packed = gzip.compress(b"".join(lines))
    path.write_bytes(packed[: len(packed) * 2 // 3])
    result = poll(path)
    read = messages(result)
    assert read, "the lines before the cut are read"
    assert read == [f"failure {n}" for n in range(len(read))]
    assert len(result.skipped) == 1
    (cut,) = result.skipped
    assert cut.where == f"{path}:{len(read) + 1}"
    assert "gzip" in cut.reason and "ends before" in cut.reason


def test_gzip_members_written_one_after_another_are_all_read(tmp_path: Path) -> None:
    path = tmp_path / "otlp.jsonl.gz"
    path.write_bytes(gzip.compress(error_line("one") + b"\n") + gzip.compress(error_line("two") + b"\n"))
    result = poll(path)
    assert messages(result) == ["one", "two"]
    assert result.skipped == []


def test_damage_after_the_gzip_data_costs_no_line_before_it(tmp_path: Path) -> None:
    path = tmp_path / "otlp.jsonl.gz"
    path.write_bytes(gzip.compress(error_line("one") + b"\n") + b"not gzip at all")
    result = poll(path)
    assert messages(result) == ["one"]
    assert [record.where for record in result.skipped] == [f"{path}:2"]
    assert "damaged gzip" in result.skipped[0].reason


# --- NUL bytes: the hole a truncated copy or a crash leaves -----------------------------------------


def test_the_nul_bytes_a_copytruncate_leaves_before_the_next_line_cost_no_record(tmp_path: Path) -> None:
    # logrotate's copytruncate empties the file while the writer keeps its offset: the next write lands
    # past a hole that reads as NUL bytes, more of them than the first block the file is probed in
    path = tmp_path / "otlp.jsonl"
    path.write_bytes(
        b"\x00" * 200_000 + error_line("after the rotation") + b"\n" + error_line("next") + b"\n"
    )
    result = poll(path)
    assert messages(result) == ["after the rotation", "next"]
    assert result.skipped == []


def test_a_line_a_crash_left_unfinished_before_nul_bytes_is_skipped_and_the_next_is_read(
    tmp_path: Path,
) -> None:
    path = tmp_path / "otlp.jsonl"
    content = (
        error_line("one") + b"\n" + error_line("lost")[:80] + b"\x00" * 4096 + error_line("three") + b"\n"
    )
    path.write_bytes(content)
    result = poll(path)
    assert messages(result) == ["one", "three"]
    assert [record.where for record in result.skipped] == [f"{path}:2"]


def test_nul_bytes_at_the_end_of_the_file_are_not_a_line(tmp_path: Path) -> None:
    path = tmp_path / "otlp.jsonl"
    path.write_bytes(error_line("one") + b"\n" + b"\x00" * 8192)
    result = poll(path)
    assert messages(result) == ["one"]
    assert result.skipped == [] and result.notes == []


# --- what the file exporter writes in the formats rounds does not read ---------------------------------

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


@pytest.mark.parametrize(
    ("content", "said"),
    [
        # `compression: zstd`: each request is a zstd frame after its length, 4 bytes big-endian
        ((1234).to_bytes(4, "big") + ZSTD_MAGIC + bytes(range(128, 256)) * 20, "compression: zstd"),
        # `format: proto`: each request's protobuf bytes after their length; field 1 (resource_*) first
        (
            (300).to_bytes(4, "big") + b"\x0a\xa9\x02\x0a\x8f\x01" + bytes(range(128, 256)) * 3,
            "format: proto",
        ),
        # a file compressed with zstd as a whole (a rotated file, by logrotate's compresscmd)
        (ZSTD_MAGIC + bytes(range(128, 256)) * 20, "zstd-compressed"),
    ],
)
def test_a_file_the_exporter_wrote_in_another_format_is_refused_naming_it(
    tmp_path: Path, content: bytes, said: str
) -> None:
    path = tmp_path / "otlp.bin"
    path.write_bytes(content)
    with pytest.raises(SourceError, match="is not OTLP/JSON") as raised:
        poll(path)
    assert said in str(raised.value)


# --- what no line end bounds: a hole, a gzip of NUL bytes, a line longer than any request ------------------

ADDRESS_SPACE = 1 << 30  # for the whole reading process: a hole read as one line takes several times its size


def poll_in_a_gibibyte(path: Path) -> str:
    """The messages read from `path` by a process limited to `ADDRESS_SPACE` bytes, or why it was refused."""
    code = textwrap.dedent(f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, ({ADDRESS_SPACE}, {ADDRESS_SPACE}))
        from datetime import UTC, datetime
        from rounds_bot.errors import SourceError
        from rounds_bot.sources.base import Window
        from rounds_bot.sources.otlp_file import OtlpFileSource
        window = Window(start=datetime(2000, 1, 1, tzinfo=UTC), end=datetime(2100, 1, 1, tzinfo=UTC))
        try:
            result = OtlpFileSource({str(path)!r}).poll(window, frozenset())
        except SourceError as error:
            print("refused:", error)
        else:
            print([event.message for event in result.events], [r.where for r in result.skipped])
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-400:]
    return done.stdout.strip()


def test_a_copytruncate_hole_larger_than_memory_allows_is_passed_over(tmp_path: Path) -> None:
    path = tmp_path / "otlp.jsonl"
    with path.open("wb") as file:  # sparse: the offset the writer kept, 512 MiB, then what it wrote next
        file.seek(512 << 20)
        file.write(error_line("charge failed") + b"\n" + error_line("refund failed", second=1) + b"\n")
    assert poll_in_a_gibibyte(path) == "['charge failed', 'refund failed'] []"


def test_a_gzip_that_inflates_to_nothing_but_nul_bytes_reads_as_empty(tmp_path: Path) -> None:
    path = tmp_path / "otlp.jsonl.gz"
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    with path.open("wb") as file:  # 1 MiB on disk, 512 MiB of NUL bytes inflated
        for _ in range(512):
            file.write(deflate.compress(bytes(1 << 20)))
        file.write(deflate.flush())
    assert poll_in_a_gibibyte(path) == "[] []"


def test_a_line_longer_than_any_export_request_is_skipped_by_its_number_without_being_held(
    tmp_path: Path,
) -> None:
    # a file without line ends (not the exporter's, or damaged): 256 MiB of text in one line, then a request
    path = tmp_path / "otlp.jsonl.gz"
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    with path.open("wb") as file:
        for _ in range(256):
            file.write(deflate.compress(b"x" * (1 << 20)))
        file.write(deflate.compress(b"\n" + error_line("charge failed") + b"\n") + deflate.flush())
    tracemalloc.start()
    try:
        result = poll(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert messages(result) == ["charge failed"]
    assert [record.where for record in result.skipped] == [f"{path}:1"]
    assert "longer than 64 MiB" in result.skipped[0].reason
    assert peak < MAX_LINE + (16 << 20)  # at most one line's worth, and the chunks read around it


def test_lines_and_holes_across_the_chunks_the_text_is_read_in_keep_their_places(tmp_path: Path) -> None:
    # a line, then a hole, each across the boundary of the 1 MiB chunks the text is read in
    path = tmp_path / "otlp.jsonl"
    filler = b'{"resourceLogs": []}' + b" " * ((1 << 20) - 100) + b"\n"
    content = filler + error_line("across") + b"\n" + b"\x00" * (3 << 20) + error_line("after") + b"\n"
    path.write_bytes(content)
    lines = list(RawLines(path).lines())
    assert [line.number for line in lines] == [1, 2, 3]
    assert all(content[line.offset : line.offset + len(line.raw)] == line.raw for line in lines)
    assert messages(poll(path)) == ["across", "after"]
