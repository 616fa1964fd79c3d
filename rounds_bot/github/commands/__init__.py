"""`/rounds` commands."""
