"""Optional notifications about rounds, off unless configured: a Zulip stream (`zulip.py`)."""
