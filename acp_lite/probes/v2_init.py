"""Probes: v2_init (see :mod:`acp_lite.probes`)."""

from __future__ import annotations
