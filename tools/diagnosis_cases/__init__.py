"""Builds the diagnosis eval's cases from public data (see README.md beside this file)."""
