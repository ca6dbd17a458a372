"""Probes: v2_session (see :mod:`acp_lite.probes`)."""

from __future__ import annotations
