"""Maintainer scripts."""
