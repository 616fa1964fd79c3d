"""The `/rounds` commands people write in issue comments.

grammar.py   reading a comment: which lines are commands, what they mean, who may give them
runner.py    handling one comment: receipt, authorisation, effects, record, reply; catching up
context.py   what handling works with: the comment as read, the run's context, the outcome
effects.py   what each command does to the event log (and to the issue, for merge and split)
replies.py   the bot's answer: posted once, marked with the comment it answers
"""
