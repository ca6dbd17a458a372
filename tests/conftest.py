"""Suite-wide set-up: the Hypothesis profiles (see ``tests/hypothesis_budget.py``)."""

from __future__ import annotations

import hypothesis_budget

hypothesis_budget.load_profile_from_env()
