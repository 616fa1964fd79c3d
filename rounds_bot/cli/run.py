"""`rounds run`: one round (poll, group, file one issue per problem), its report on stdout and in the job
summary; the source and the tracker the settings choose."""

from __future__ import annotations

from pathlib import Path

import click

from rounds_bot.cli.ending import done_with_everything
from rounds_bot.cli.options import env_file_option, friendly_errors, settings_from
from rounds_bot.diagnosis.configured import build_diagnoser
from rounds_bot.errors import ConfigError
from rounds_bot.round.report import RoundReport, report_pieces, step_summary_pieces
from rounds_bot.round.run import run_round
from rounds_bot.settings import Settings
from rounds_bot.sources.base import Source
from rounds_bot.sources.factory import source_from_spec
from rounds_bot.store import Store, remove_database
from rounds_bot.tracker.base import Tracker
from rounds_bot.tracker.dryrun import DryRunTracker


@click.command("run")
@click.option(
    "--demo", is_flag=True, help="Read the demo telemetry bundled with rounds (no accounts needed)."
)
@env_file_option
@friendly_errors
def run_command(demo: bool, env_file: Path | None) -> None:
    """Run one round: poll, group, file one issue per problem, report."""
    settings = settings_from(env_file)
    if demo and settings.tracker != "dry-run":
        # the demo's bugs are made up: they never become issues of a real repository
        ignored = f"ROUNDS_TRACKER={settings.tracker}"
        click.echo(f"the demo writes drafts only: {ignored} is not used for it", err=True)
        settings = settings.model_copy(update={"tracker": "dry-run"})
    source, whole_history = build_source(settings, demo)
    diagnoser, diagnosis_mode = build_diagnoser(settings)
    database = Path(settings.signatures_db_path)
    existed = database.exists()
    # the store first: it creates a new database (the GitHub tracker's journal adds its tables to that file)
    store = Store.open(database)
    try:
        tracker = build_tracker(settings)
        report = run_round(
            settings,
            source,
            tracker,
            store,
            reads_whole_history=whole_history,
            diagnoser=diagnoser,
            diagnosis_mode=diagnosis_mode,
        )
    except BaseException:
        if not existed and store.is_empty():
            store.close()
            remove_database(database)  # a first round that failed leaves no empty database behind
        raise
    finally:
        store.close()
    show_report(report)
    # the store is closed and the round's temporary files are anonymous: nothing is left for the
    # interpreter's teardown to finish but freeing the round's memory (`cli/ending.py`)
    done_with_everything(database)


def show_report(report: RoundReport) -> None:
    """The report on stdout and, in Actions, in the job summary, each piece written to both as it is rendered:
    a first round's report can be megabytes, and it is never held whole (`report_pieces`)."""
    with step_summary_pieces() as to_summary:
        for piece in report_pieces(report):
            click.echo(piece, nl=False)
            to_summary(piece)
        click.echo()  # the line end `click.echo` gave the report when it was written whole
        to_summary("\n")


def build_source(settings: Settings, demo: bool) -> tuple[Source, bool]:
    """The configured source, and whether its whole history should be read on the first round."""
    if demo:
        from rounds_bot.demo import demo_data_path
        from rounds_bot.sources.otlp_file import OtlpFileSource

        return OtlpFileSource(demo_data_path(), name="otlp-file:demo"), True
    spec = settings.effective_source()
    if spec is None:
        raise ConfigError(
            "no telemetry source configured: set SIGNOZ_API_URL and SIGNOZ_API_KEY, "
            "or ROUNDS_SOURCE=otlp-file:PATH",
            hint="or try `rounds run --demo` for the bundled demo data",
        )
    source = source_from_spec(spec, settings)
    return source, spec.startswith("otlp-file:")


def build_tracker(settings: Settings) -> Tracker:
    """The GitHub tracker (ROUNDS_TRACKER=github), or drafts written to the output folder."""
    if settings.tracker == "github":
        from rounds_bot.github.tracker import github_tracker_from_settings

        return github_tracker_from_settings(settings)
    return DryRunTracker(settings.output_dir)
