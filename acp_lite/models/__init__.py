"""A scripted model provider for running real agents without keys (issue 23).

Layers: the provider APIs and the script are plain Python (this package, no trio,
no IO): a request in, a response or an event stream out, see :mod:`.http`. The
HTTP server that carries them (:mod:`acp_lite.models.server`, trio and h11, the
``acp-lite[models]`` extra) only moves bytes and sleeps.
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

__all__ = ["EventStream", "Handler", "Hang", "HttpRequest", "HttpResponse", "Pause", "SseEvent"]
