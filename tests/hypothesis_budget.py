"""How many examples the property tests run: one knob, the Hypothesis profile.

``tests/conftest.py`` imports this module, which registers the profiles:

* ``default``: the everyday budget, small enough for a fast serial suite;
* ``ci``: the same budget, derandomized like Hypothesis's own ``ci`` profile
  (Hypothesis selects it when ``CI`` is set);
* ``thorough``: ten times as many examples, for a deep run
  (``HYPOTHESIS_PROFILE=thorough`` or ``pytest --hypothesis-profile=thorough``).

A test never passes a fixed ``max_examples``, which would silently ignore the
profile: ``@settings(max_examples=examples(weight))`` scales its weight by the
loaded profile's ``max_examples``. Weights say how much a test deserves
relative to the others (cheap tests get more); ``examples(1)`` is the profile's
own budget.
"""

from __future__ import annotations

import os

from hypothesis import settings

#: ``max_examples`` of the everyday profiles; ``thorough`` has ten times as many.
#: 15, not 25: the serial suite's budget (~4 s of its time); a deep run is
#: ``HYPOTHESIS_PROFILE=thorough`` (150).
BASE_EXAMPLES = 15

# No deadline anywhere: two cores shared with other jobs make per-example timing
# meaningless, and a slow example is not a failure.
settings.register_profile("default", max_examples=BASE_EXAMPLES, deadline=None)
settings.register_profile(
    "ci", settings.get_profile("ci"), max_examples=BASE_EXAMPLES, deadline=None
)
settings.register_profile("thorough", max_examples=10 * BASE_EXAMPLES, deadline=None)


def load_profile_from_env() -> None:
    """Load ``HYPOTHESIS_PROFILE`` if set (``--hypothesis-profile`` still wins: the
    Hypothesis plugin applies it later, in ``pytest_configure``)."""
    name = os.environ.get("HYPOTHESIS_PROFILE")
    if name:
        settings.load_profile(name)


def examples(weight: float) -> int:
    """``max_examples`` for a test of this weight under the loaded profile."""
    loaded = settings.get_profile(settings.get_current_profile_name())
    return max(1, round(weight * loaded.max_examples))
