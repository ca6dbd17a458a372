"""Resource limits and default timeouts of a connection.

Every wait in acp_lite is bounded by default (developer guide: "every timeout has a
default"), and everything that grows with what the agent sends can be bounded too.
"""

from __future__ import annotations

from acp_lite import _lazy_attrs as lazy_attrs

__all__ = ["Limits"]

_MiB = 1024 * 1024


@lazy_attrs.frozen(kw_only=True)
class Limits:
    """Limits and default timeouts; pass one to ``connect(..., limits=Limits(...))``.

    Use ``attrs.evolve(limits, field=value)`` to change a single setting. By default
    everything the agent sent is kept; :meth:`bounded` is the bounded mode for
    long-running sessions (flat memory), whose two model bounds,
    ``max_message_blocks`` and ``max_session_entities``, change what a session's
    model shows (chunk boundaries joined, finished entities let go: counted).
    """

    #: Longest line accepted from the agent. A longer line is skipped up to its
    #: newline and recorded as a protocol error; the connection survives.
    max_line_bytes: int = 32 * _MiB
    #: Most client -> agent requests awaiting a response at once.
    max_pending_requests: int = 1024
    #: Default timeout of every request and every wait (seconds).
    default_timeout: float = 60.0
    #: Timeout of the ``initialize`` handshake (seconds).
    connect_timeout: float = 30.0
    #: Shutdown ladder: after closing stdin, wait this long for the agent to exit...
    close_grace: float = 2.0
    #: ...then send SIGTERM and wait this long...
    terminate_grace: float = 2.0
    #: ...then SIGKILL and wait at most this long for the process to be reaped.
    kill_grace: float = 1.0
    #: Transcript entries kept (``None``: all of them).
    max_transcript_entries: int | None = None
    #: Entries kept in the client's event log (``client.events``; ``None``: all).
    max_events: int | None = None
    #: Of each kind of client event (protocol errors, updates for unknown
    #: sessions ...), keep the first this many, then one in this many: an agent
    #: printing garbage cannot make the client keep an object per line.
    #: ``client.event_counts`` still counts every one. ``None``: keep them all.
    max_events_per_kind: int | None = 1000
    #: Events kept in each session's event log (``session.updates`` /
    #: ``model.events``; ``None``: all). Older events are let go (reading one raises
    #: ``IndexError``; ``model.events.dropped`` counts them); the session model's
    #: picture (timeline, entities, state) stays whole.
    max_session_events: int | None = None
    #: Keep each update's raw JSON payload in the session event log: a reference to
    #: the received line (which the transcript holds anyway), decoded again when
    #: ``Event.raw`` is read. ``False``: once the transcript lets lines go
    #: (``max_transcript_entries``), the log keeps the typed update instead of the
    #: line and ``Event.raw`` is re-encoded from it (the wire layer round-trips
    #: exactly); while the transcript keeps every line, the log still refers to it,
    #: which costs less than the typed update, so ``False`` is never bigger or slower
    #: than the default. A streamed text chunk is kept as its text and its stream's
    #: shape either way, the smallest form, from which both are rebuilt.
    keep_raw_updates: bool = True
    #: Bounded mode (opt-in; see :meth:`bounded`): when a message's ``content`` (or a
    #: compaction's ``summary``) holds more than this many blocks, adjacent plain text
    #: blocks are joined into one text block (the joined ``text`` is unchanged; only
    #: the chunk boundaries are lost; ``entity.merged`` counts the blocks joined away).
    #: Other blocks (images, annotated text ...) are kept as received. ``None``: keep
    #: one block per chunk, as the spec's "chunks append" describes.
    max_message_blocks: int | None = None
    #: Bounded mode (opt-in): a session's model keeps at least the newest this many
    #: entities (trimmed in blocks, like the event log); older ones are let go when
    #: finished: untouched since the last end of foreground work, and not a live tool
    #: call, terminal, plan, compaction or subagent, nor in the background list.
    #: ``model.dropped_entities`` counts them; done submissions whose user message
    #: was let go follow (``model.dropped_submissions``). An update for an entity let
    #: go creates it afresh. ``None``: keep every entity.
    max_session_entities: int | None = None
    #: Lines of agent stderr kept for error messages and ``stderr_tail()``.
    stderr_lines: int = 200
    #: Longest single stderr line kept (longer lines are truncated).
    max_stderr_line_bytes: int = 64 * 1024
    #: After the agent closed stdout, wait at most this long for its exit status
    #: and the rest of stderr before failing every waiter.
    exit_status_wait: float = 0.5
    #: While a message streams (the last bytes read were all chunks of one stream),
    #: wait this long (seconds) before reading again, so that each read finds many
    #: chunks: an agent writing one line per chunk otherwise wakes the client once per
    #: few lines, and that wake-up costs more than the lines. What arrives next is
    #: seen at most this much later; ``0`` reads at once.
    stream_read_delay: float = 0.0005

    @classmethod
    def bounded(cls) -> Limits:
        """The bounded mode, for long-running sessions: memory stays flat however long
        the session runs (change a bound with ``attrs.evolve``).

        Keeps the newest 10,000 transcript lines, client events and session events,
        joins a message's plain text chunks past 1,000 blocks and keeps the newest
        1,000 entities of a session (older finished ones are let go); see each field.
        What is let go is counted (``transcript.dropped``, ``events.dropped``,
        ``model.dropped_entities``, ``entity.merged``).
        """
        return cls(
            max_transcript_entries=10_000,
            max_events=10_000,
            max_session_events=10_000,
            max_message_blocks=1_000,
            max_session_entities=1_000,
        )

    @property
    def shutdown_timeout(self) -> float:
        """Upper bound of the whole shutdown ladder (seconds)."""
        return self.close_grace + self.terminate_grace + self.kill_grace
