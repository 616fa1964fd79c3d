"""Optional notifications about rounds, off unless configured.

What a round tells a chat is worked out in `notices.py` (a notice per new issue, a summary once per
round); `zulip.py` posts it to a Zulip stream.
"""
