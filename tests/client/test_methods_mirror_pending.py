"""The blocking Client / Session mirror every typed method of the async layer.

Expected to FAIL until the blocking mirrors exist: ``NEEDS_BLOCKING_MIRROR``
(in ``test_methods_sync.py``) lists the methods the blocking classes lack and
``NEEDS_FORCE_PASSTHROUGH`` the mirrored ones that do not take ``force`` yet.
Once they do, empty both lists (the skipped cases in ``test_methods_sync.py``
then run) and this test passes.
"""

from __future__ import annotations

import inspect

import acp_lite

from .test_methods_sync import NEEDS_BLOCKING_MIRROR, NEEDS_FORCE_PASSTHROUGH

BLOCKING = {"Client": acp_lite.Client, "Session": acp_lite.Session}


def test_blocking_classes_mirror_the_typed_methods() -> None:
    missing = [
        name
        for name in NEEDS_BLOCKING_MIRROR
        if not hasattr(BLOCKING[name.split(".")[0]], name.split(".")[1])
    ]
    no_force = []
    for name in NEEDS_FORCE_PASSTHROUGH:
        cls_name, attr = name.split(".")
        params = inspect.signature(getattr(BLOCKING[cls_name], attr)).parameters
        if "force" not in params:
            no_force.append(name)
    assert not missing and not no_force, (
        f"blocking mirrors missing: {missing}; blocking methods without force: {no_force}"
    )
