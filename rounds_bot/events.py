"""The kinds of fact the event log holds: one enum, so every writer and reader spells them the same.

The log is append-only; a signature's status is derived from the last status-changing fact about it
(`STATUS_AFTER`). Values are the strings stored in the `events.kind` column, so they never change.
"""

from __future__ import annotations

from enum import StrEnum


class Fact(StrEnum):
    """One kind of fact in the event log."""

    # a signature's life
    INCIDENT_DETECTED = "IncidentDetected"
    ISSUE_FILED = "IssueFiled"
    UPDATED = "Updated"
    REGRESSED = "Regressed"
    INCIDENT_RESOLVED = "IncidentResolved"
    # diagnosis
    CONTEXT_BUILT = "ContextBuilt"
    ROOT_CAUSE_PROPOSED = "RootCauseProposed"
    REDIAGNOSE_REQUESTED = "RediagnoseRequested"
    # fix proposals and what became of them (fixing/)
    FIX_REQUESTED = "FixRequested"  # `/rounds fix`, or chosen automatically
    FIX_FAILED = "FixFailed"  # an attempt that opened no pull request, and why
    FIX_PROPOSED = "FixProposed"  # a draft pull request opened, or its branch updated
    FIX_OFFERED = "FixOffered"  # its branch pushed, its pull request left to a person (Actions may not)
    FIX_BLOCKED = "FixBlocked"  # an automatic request that could not start (setup, failing base): it waits
    FIX_APPLIED = "FixApplied"  # the pull request was merged (observed from GitHub)
    FIX_ABANDONED = "FixAbandoned"  # the pull request was closed without merging
    FIX_RELEASED = "FixReleased"  # the first occurrence of a newer service.version after the merge
    RECURRENCE_NOTED = "RecurrenceNoted"  # it occurred again, but on a version older than the fix
    # what people asked with /rounds commands
    INCIDENT_SUPPRESSED = "IncidentSuppressed"
    INCIDENT_UNSUPPRESSED = "IncidentUnsuppressed"
    SIGNATURE_MERGED = "SignatureMerged"
    SIGNATURE_SPLIT = "SignatureSplit"
    ROUNDS_PAUSED = "RoundsPaused"
    ROUNDS_RESUMED = "RoundsResumed"
    COMMAND_HANDLED = "CommandHandled"
    COMMAND_REPLIED = "CommandReplied"
    # notifications
    ROUND_NOTIFIED = "RoundNotified"


# Status-changing facts, and the status each one leaves a signature in.
STATUS_AFTER: dict[Fact, str] = {
    Fact.INCIDENT_DETECTED: "open",
    Fact.REGRESSED: "open",
    Fact.INCIDENT_RESOLVED: "resolved",
    Fact.INCIDENT_SUPPRESSED: "muted",
    Fact.INCIDENT_UNSUPPRESSED: "open",
    Fact.SIGNATURE_MERGED: "merged",  # `/rounds merge`: its occurrences are counted under another signature
    Fact.SIGNATURE_SPLIT: "open",
}
