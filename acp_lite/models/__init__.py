"""A scripted model provider for running real agents without keys (issue 23).

Layers: the provider APIs and the script are plain Python (this package, no trio,
no IO): a request in, a response or an event stream out, see :mod:`.http`. The
HTTP server that carries them (:mod:`acp_lite.models.server`, trio and h11, the
``acp-lite[models]`` extra) only moves bytes and sleeps.

:class:`ModelScript` (:mod:`.script`) is what the model answers, as data;
:class:`ScriptedModel` (:mod:`.scripted`) the handler that answers from one and
records every request; :mod:`.providers` the four APIs' wire shapes;
:mod:`.profiles` how to point each known agent at the server (:class:`AgentProfile`).
:class:`ModelCassette` (:mod:`.cassette`) is provider traffic recorded from a real
upstream (by :mod:`acp_lite.models.upstream`, trio and h11), redacted;
:class:`ReplayModel` (:mod:`.replay`) the handler that answers from one.
"""

from acp_lite.models.cassette import (
    Body,
    CassetteRequest,
    CassetteResponse,
    Interaction,
    ModelCassette,
    Redaction,
    SseParser,
)
from acp_lite.models.http import (
    Answer,
    AnyHandler,
    AsyncEventStream,
    AsyncHandler,
    EventStream,
    Handler,
    Hang,
    HttpRequest,
    HttpResponse,
    Pause,
    SseEvent,
)
from acp_lite.models.profiles import (
    GENERIC,
    PROFILES,
    AgentProfile,
    AgentSetup,
    profile_named,
    recognise,
)
from acp_lite.models.replay import ReplayModel
from acp_lite.models.script import (
    ErrorReply,
    HangReply,
    ModelScript,
    ModelStep,
    Refusal,
    Reply,
    ToolCall,
    ToolCalls,
    When,
    load_model_script,
)
from acp_lite.models.scripted import CheckedModel, RecordedRequest, ScriptedModel

__all__ = [
    "GENERIC",
    "PROFILES",
    "AgentProfile",
    "AgentSetup",
    "Answer",
    "AnyHandler",
    "AsyncEventStream",
    "AsyncHandler",
    "Body",
    "CassetteRequest",
    "CassetteResponse",
    "CheckedModel",
    "ErrorReply",
    "EventStream",
    "Handler",
    "Hang",
    "HangReply",
    "HttpRequest",
    "HttpResponse",
    "Interaction",
    "ModelCassette",
    "ModelScript",
    "ModelStep",
    "Pause",
    "RecordedRequest",
    "Redaction",
    "Refusal",
    "ReplayModel",
    "Reply",
    "ScriptedModel",
    "SseEvent",
    "SseParser",
    "ToolCall",
    "ToolCalls",
    "When",
    "load_model_script",
    "profile_named",
    "recognise",
]
