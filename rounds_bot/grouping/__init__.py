"""Fingerprinting and three-tier deduplication: one engine for the round and `rounds group`."""
