"""Faults of the reference agent: v2_init (see :mod:`acp_lite.testing.faults._base`)."""

from __future__ import annotations
