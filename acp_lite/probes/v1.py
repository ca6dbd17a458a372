"""Probes: v1 (see :mod:`acp_lite.probes`)."""

from __future__ import annotations
