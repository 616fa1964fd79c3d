"""Markdown rendering."""
