"""Maintainer scripts, run from the root of a source checkout; not part of the installed package."""
