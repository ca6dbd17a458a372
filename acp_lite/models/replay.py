"""``ReplayModel``: a :data:`~acp_lite.models.http.Handler` that answers from a
:class:`~acp_lite.models.cassette.ModelCassette`, no network.

Matching, for each request (redacted as the recording was, so its key and the
environment's secrets never decide):

1. only interactions on the same **route** are candidates: method, path, and query
   (a redacted parameter, Gemini's ``key``, matches whatever its value);
2. among those not used yet, one whose **body is equal** is taken first (requests
   sent concurrently, such as an agent's title request beside its turn, may come
   in another order than they were recorded);
3. else the first not used yet, in **recorded order** (the body of an agent's
   request drifts between runs: dates, ids, paths in its system prompt);
4. else, when all are used, a used one with an equal body is **answered again**
   (a retried request, a model list asked twice);
5. else no match: a provider-style 400 naming the cassette and the request, and a
   failure remembered (:attr:`ReplayModel.failures`; :meth:`ReplayModel.check`
   raises at teardown with the request shown).

Streams are replayed event by event as recorded (no timing). Every request is
recorded for assertions, as :class:`~acp_lite.models.ScriptedModel` does.
"""

from __future__ import annotations

from acp_lite.models.cassette import (
    REDACTED,
    CassetteRequest,
    Interaction,
    ModelCassette,
    Redaction,
)
from acp_lite.models.http import EventStream, HttpRequest, HttpResponse
from acp_lite.models.scripted import RecordedRequest, RequestBook, provider_error, provider_of

__all__ = ["ReplayModel", "recorded_request"]


def recorded_request(
    stored: CassetteRequest, *, index: int, step: int | None, status: int
) -> RecordedRequest:
    """What the fixture's ``requests`` shows of a stored request."""
    provider = provider_of(
        HttpRequest(stored.method, stored.path, stored.query, stored.headers, b"")
    )
    body = stored.body
    return RecordedRequest(
        index=index,
        method=stored.method,
        path=stored.path,
        query=stored.query,
        headers=stored.headers,
        body=body.value if body.kind in ("json", "text") else None,
        api=provider.api if provider is not None else None,
        step=step,
        status=status,
    )


def _same_route(recorded: CassetteRequest, asked: CassetteRequest) -> bool:
    if (recorded.method, recorded.path) != (asked.method, asked.path):
        return False
    if recorded.query.keys() != asked.query.keys():
        return False
    return all(v == asked.query[k] or v == REDACTED for k, v in recorded.query.items())


class ReplayModel(RequestBook):
    """Answers requests from ``cassette`` (see the module docstring for the matching).

    Thread-safe, as :class:`~acp_lite.models.ScriptedModel` is: the server calls it
    from its thread while a test reads :attr:`requests`.
    """

    def __init__(
        self,
        cassette: ModelCassette,
        *,
        name: str = "model cassette",
        redaction: Redaction | None = None,
        hint: str = "Record it again.",
    ) -> None:
        super().__init__()
        self.cassette = cassette
        #: What messages call it (the file's path, under pytest).
        self.name = name
        #: What the answer to an unmatched request ends with (how to record again).
        self.hint = hint
        self.redaction = redaction if redaction is not None else Redaction()
        self._used = [False] * len(cassette.interactions)

    @property
    def unmatched(self) -> tuple[RecordedRequest, ...]:
        """The requests no interaction matched."""
        with self._lock:
            return tuple(r for _, r in self._failures)

    @property
    def unused(self) -> tuple[int, ...]:
        """The indexes of the interactions no request used."""
        with self._lock:
            return tuple(i for i, used in enumerate(self._used) if not used)

    def check(self, *, all_steps_used: bool = False) -> None:
        """Raise ``AssertionError`` listing the unmatched requests (and, with
        ``all_steps_used``, the interactions never replayed)."""
        problems = list(self.failures)
        if all_steps_used:
            problems.extend(
                f"interaction #{i} ({self.cassette.interactions[i].request.shown()}) "
                "was never replayed"
                for i in self.unused
            )
        if problems:
            head = f"{self.name}: {len(problems)} problem(s)"
            raise AssertionError("\n\n".join([head, *problems]))

    def __call__(self, request: HttpRequest) -> HttpResponse | EventStream:
        """Answer one request (the :data:`~acp_lite.models.http.Handler`)."""
        asked = self.redaction.request(request)
        with self._lock:
            index = self._pick(asked)
            n = len(self._requests)
            if index is None:
                return self._fail(request, asked, n)
            self._used[index] = True
            interaction = self.cassette.interactions[index]
            status = interaction.response.status
            self._requests.append(recorded_request(asked, index=n, step=index, status=status))
        return interaction.response.answer()

    def lookup(self, asked: CassetteRequest) -> tuple[int, Interaction] | None:
        """The interaction that answers ``asked`` (a redacted request), now used; or
        ``None``, recording nothing (a recorder replaying what it can)."""
        with self._lock:
            index = self._pick(asked)
            if index is None:
                return None
            self._used[index] = True
            return index, self.cassette.interactions[index]

    def _pick(self, asked: CassetteRequest) -> int | None:
        route = [
            (i, x)
            for i, x in enumerate(self.cassette.interactions)
            if _same_route(x.request, asked)
        ]
        fresh = [(i, x) for i, x in route if not self._used[i]]
        for i, x in fresh:
            if x.request.body == asked.body:
                return i
        if fresh:
            return fresh[0][0]
        again = [i for i, x in route if x.request.body == asked.body]
        return again[-1] if again else None

    def _fail(self, request: HttpRequest, asked: CassetteRequest, n: int) -> HttpResponse:
        routes = [x for x in self.cassette.interactions if _same_route(x.request, asked)]
        known = sorted({x.request.shown() for x in self.cassette.interactions})
        if routes:
            why = (
                f"no recorded interaction left for {asked.shown()} (request #{n}): "
                f"its {len(routes)} recorded one(s) are used and none has this body"
            )
        else:
            why = (
                f"no recorded interaction for {asked.shown()} (request #{n}); "
                f"it holds {', '.join(known) or 'none'}"
            )
        why = f"{why}. {self.hint}"
        answer = provider_error(request, 400, f"acp_lite {self.name}: {why}")
        record = recorded_request(asked, index=n, step=None, status=answer.status)
        self._failures.append((why, record))
        self._requests.append(record)
        return answer
