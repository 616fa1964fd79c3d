"""`rounds eval CASES --out DIR`: diagnosis quality on cases with a known answer (docs/diagnosis.md).

The crash-site baseline always; recorded answers when `--recordings` names a folder of them; a live model
with `--live` when diagnosis is configured (ANTHROPIC_API_KEY), within ROUNDS_EVAL_MAX_COST_USD. Prints the
table and writes it, with one JSON line per case and row, under `--out`, and nowhere else.
"""

from __future__ import annotations

from pathlib import Path

import click

from rounds_bot.cli.options import env_file_option, friendly_errors, settings_from
from rounds_bot.errors import ConfigError


@click.command("eval")
@click.argument("cases", type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "--out",
    "output",
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="Folder for the table, the per-case results and new recordings; nothing is written elsewhere.",
)
@click.option(
    "--recordings",
    type=click.Path(path_type=Path, file_okay=False),
    help="Folder of recorded answers to replay, one sub-folder per model or origin.",
)
@click.option(
    "--sources",
    type=click.Path(path_type=Path, file_okay=False),
    help="Folder with each case's repository files as <case-id>/, for cases that do not carry them.",
)
@click.option("--live", is_flag=True, help="Also ask the configured model about every case with sources.")
@click.option(
    "--max-cost-usd",
    type=float,
    default=None,
    help="Cap on the live run's spend (default ROUNDS_EVAL_MAX_COST_USD).",
)
@click.option(
    "--fix",
    is_flag=True,
    help="Apply each recorded fix in a scratch copy under --out and run the bug's tests, where they can run; "
    "with --live, the model also proposes a fix there (the fix editor), within the same cost cap.",
)
@click.option("--label", default=None, help="Row name of the live run (default: the diagnoser and model).")
@env_file_option
@friendly_errors
def eval_command(
    cases: Path,
    output: Path,
    recordings: Path | None,
    sources: Path | None,
    live: bool,
    max_cost_usd: float | None,
    fix: bool,
    label: str | None,
    env_file: Path | None,
) -> None:
    """Score diagnoses on cases with a known answer: crash-site baseline, recordings, a live model."""
    from rounds_bot.eval.cases import load_cases
    from rounds_bot.eval.report import run_eval

    if not cases.is_dir():
        raise ConfigError(
            f"no case folder at {cases}", hint="give the folder that holds one sub-folder per case"
        )
    if output.resolve().is_relative_to(cases.resolve()):
        raise ConfigError(
            f"--out {output} is inside the case folder {cases}",
            hint="write the results to a folder of their own",
        )
    if recordings is not None and not recordings.is_dir():
        raise ConfigError(
            f"no recordings folder at {recordings}", hint="leave --recordings out to skip replays"
        )
    loaded = load_cases(cases, sources)
    diagnoser = None
    fixer = None
    if live:
        from rounds_bot.diagnosis.configured import build_diagnoser

        settings = settings_from(env_file)
        diagnoser, reason = build_diagnoser(settings)
        if diagnoser is None:
            raise ConfigError(
                f"--live needs a model: {reason}", hint="set ANTHROPIC_API_KEY, or leave --live out"
            )
        cap = settings.eval_max_cost_usd if max_cost_usd is None else max_cost_usd
        label = label or f"{diagnoser.name} {settings.claude_model}"
        if fix:
            from rounds_bot.fixing.setup import fix_editor

            fixer = fix_editor(settings)
    else:
        cap = 0.0
    table = run_eval(
        loaded,
        output,
        recordings=recordings,
        diagnoser=diagnoser,
        live_label=label,
        max_cost_usd=cap,
        fix=fix,
        fixer=fixer,
    )
    click.echo(table, nl=False)
