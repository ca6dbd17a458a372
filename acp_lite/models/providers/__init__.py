"""The provider APIs a scripted model speaks, one module each: a parsed request
and a script step in, an :class:`~acp_lite.models.http.HttpResponse` or
:class:`~acp_lite.models.http.EventStream` out (plain Python, no IO).

:mod:`.openai_chat` (Chat Completions), :mod:`.openai_responses` (Responses, what
Codex reads), :mod:`.anthropic` (Messages) and :mod:`.gemini` (generateContent);
:mod:`.base` holds what they share.
"""

from acp_lite.models.providers.base import Ids, ParsedRequest, Provider

__all__ = ["Ids", "ParsedRequest", "Provider"]
