"""Faults of the reference agent: v1 (see :mod:`acp_lite.testing.faults._base`)."""

from __future__ import annotations
