"""Probes: v2_prompt (see :mod:`acp_lite.probes`)."""

from __future__ import annotations
