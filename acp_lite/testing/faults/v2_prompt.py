"""Faults of the reference agent: v2_prompt (see :mod:`acp_lite.testing.faults._base`)."""

from __future__ import annotations
