"""The `rounds` command: one click group, a module per command."""

from rounds_bot.cli.app import main

__all__ = ["main"]
