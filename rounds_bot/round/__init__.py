"""One round, as a short sequence of steps that take values and return values (`run.py` reads top to bottom).

window.py       where the round reads from, and where the next one starts
occurrences.py  redact, fingerprint and tally every occurrence not counted before
tally.py        what one round saw of one signature
planning.py     what each signature needs: its issue looked up, then a pure decision
diagnosis_step  triage, cache and budget around the diagnoser
filing.py       create, update or reopen one issue per signature; returns what it filed
commit.py       everything the round learned, in one transaction
summary.py      the round report's content; report.py renders it
"""
