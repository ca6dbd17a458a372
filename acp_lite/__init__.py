"""acp_lite: a sync-first Agent Client Protocol (ACP) v2 client."""

from acp_lite import errors

__all__ = ["errors"]
