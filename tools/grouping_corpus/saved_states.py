"""Save the signature states an engine makes of the grouping corpus: a database of an earlier version.

    PYTHONPATH=CHECKOUT_OF_AN_EARLIER_VERSION python -m tools.grouping_corpus.saved_states

Groups `corpus.otlp.jsonl` with whichever `rounds_bot` is imported and writes, next to it,
`saved_<version>.jsonl`: one line per signature, the `SignatureState` JSON the database stores,
then one line per event, `{"event": id, "signature": id}`. Tests load such a file into a fresh
database and check that the current engine sends every event to the signature the earlier
version gave it (old groups never re-split).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import click

from rounds_bot.grouping import GroupingEngine
from rounds_bot.grouping.fingerprint import FINGERPRINT_VERSION
from rounds_bot.sources.base import Window
from rounds_bot.sources.otlp_file import OtlpFileSource
from tools.grouping_corpus.generate import FIXTURES


@click.command()
@click.option("--corpus", type=click.Path(path_type=Path, file_okay=False), default=FIXTURES)
def main(corpus: Path) -> None:
    """Write the states and assignments of the imported engine's version."""
    window = Window(start=datetime(1970, 1, 1, tzinfo=UTC), end=datetime(9999, 1, 1, tzinfo=UTC))
    events = OtlpFileSource(corpus / "corpus.otlp.jsonl").poll(window, frozenset()).events
    engine = GroupingEngine()
    assigned = [(event.event_id, engine.assign(event).signature_id) for event in events]
    lines = [engine.state(signature).model_dump_json() for signature in engine.signature_ids()]
    lines += [json.dumps({"event": event, "signature": signature}) for event, signature in assigned]
    output = corpus / f"saved_{FINGERPRINT_VERSION.replace(':', '')}.jsonl"
    output.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    click.echo(f"wrote {output} ({len(engine.signature_ids())} signatures, {len(assigned)} events)")


if __name__ == "__main__":
    main()
