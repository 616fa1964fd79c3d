"""Measuring diagnosis quality: cases with a known answer, run through the real diagnosis path, scored.

cases.py       the case folder format and its loader (a broken case is reported, never dropped)
request.py     a case's telemetry as the round would hand it to a diagnoser
baseline.py    the floor: blame the crash site
recordings.py  answers kept from earlier runs (live, scripted or the baseline's), with their origin
runner.py      each case through the diagnoser or a recording, and the same checks
scoring.py     one case's scores against its ground truth
table.py       the table per model, the baseline in it
"""
