"""ACP v2 wire layer (sans-IO): typed messages and the JSON-RPC envelope codec.

* ``converter`` structures JSON values into the generated attrs classes and back.
* ``SessionUpdate`` is the union of every ``session/update`` payload, with
  ``UnrecognizedSessionUpdate`` for unknown (or malformed known) variants.
* ``UNSET`` marks an omitted field; ``None`` is an explicit ``null``.

See docs/architecture.md ("Wire layer").
"""

from acp_lite.protocol._converter import converter, structure_update, unstructure
from acp_lite.protocol._errors import WireError
from acp_lite.protocol._generated import *  # noqa: F403
from acp_lite.protocol._generated import __all__ as _generated_all
from acp_lite.protocol._unset import UNSET, Unset

__all__ = [
    "UNSET",
    "Unset",
    "WireError",
    "converter",
    "structure_update",
    "unstructure",
    *_generated_all,
]
