"""`rounds group`: being written (grouping engine)."""

import click


@click.command("group")
def group_command() -> None:
    """Group JSON Lines error events (not written yet)."""
    raise click.ClickException("not implemented yet")
