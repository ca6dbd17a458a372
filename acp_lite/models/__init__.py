"""A scripted model provider for running real agents without keys (issue 23).

Layers: the provider APIs and the script are plain Python (this package, no trio,
no IO): a request in, a response or an event stream out, see :mod:`.http`. The
HTTP server that carries them (:mod:`acp_lite.models.server`, trio and h11, the
``acp-lite[models]`` extra) only moves bytes and sleeps.

:class:`ModelScript` (:mod:`.script`) is what the model answers, as data;
:class:`ScriptedModel` (:mod:`.scripted`) the handler that answers from one and
records every request; :mod:`.providers` the four APIs' wire shapes;
:mod:`.profiles` how to point each known agent at the server (:class:`AgentProfile`).
"""

from acp_lite.models.http import (
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
from acp_lite.models.scripted import RecordedRequest, ScriptedModel

__all__ = [
    "GENERIC",
    "PROFILES",
    "AgentProfile",
    "AgentSetup",
    "ErrorReply",
    "EventStream",
    "Handler",
    "Hang",
    "HangReply",
    "HttpRequest",
    "HttpResponse",
    "ModelScript",
    "ModelStep",
    "Pause",
    "RecordedRequest",
    "Refusal",
    "Reply",
    "ScriptedModel",
    "SseEvent",
    "ToolCall",
    "ToolCalls",
    "When",
    "load_model_script",
    "profile_named",
    "recognise",
]
