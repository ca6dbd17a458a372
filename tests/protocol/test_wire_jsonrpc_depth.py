"""encode_message raises the documented ValueError for absurdly deep values."""

from __future__ import annotations

import pytest

from acp_lite.protocol import Notification, encode_message


def test_too_deep_value_is_a_value_error() -> None:
    deep: object = "leaf"
    for _ in range(5000):
        deep = [deep]
    msg = Notification(method="_x/deep", params={"v": deep})
    with pytest.raises(ValueError, match="too deeply nested"):
        encode_message(msg)
