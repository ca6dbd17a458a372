"""The one exception the wire layer raises, :class:`~acp_lite.errors.WireError`.

It lives with the library's other exceptions in :mod:`acp_lite.errors`; this
module keeps the wire layer's own name for it.
"""

from __future__ import annotations

from acp_lite.errors import WireError

__all__ = ["WireError"]
