"""The tap proxies answer ``stream_observer`` themselves, in C (the hot path).

anthropic's ``Stream`` reads ``getattr(response.stream, "stream_observer", None)`` for
every event. Forwarded by the wrapt proxy, a missing attribute raised two formatted
AttributeErrors per event; the proxies now hold the wrapped stream's observer (or None)
as a plain attribute, and setting it still lands on the wrapped stream too.
"""

from __future__ import annotations

from typing import Any

import pytest

from tooltap._patch.tap_proxy import TapAsyncStream, TapSyncStream


class _State:
    def watch(self, proxy: object) -> None:
        pass


class _Body:
    def __iter__(self) -> Any:
        return iter((b"data: {}\n\n",))


class _ObservedBody(_Body):
    def __init__(self) -> None:
        self.stream_observer = object()


@pytest.mark.parametrize("proxy_type", [TapSyncStream, TapAsyncStream])
def test_stream_observer_is_the_wrapped_streams_or_none(proxy_type: Any) -> None:
    bare = proxy_type(_Body(), _State())
    assert getattr(bare, "stream_observer", None) is None
    observed_body = _ObservedBody()
    observed = proxy_type(observed_body, _State())
    assert observed.stream_observer is observed_body.stream_observer
    marker = object()
    bare.stream_observer = marker
    assert bare.__wrapped__.stream_observer is marker and bare.stream_observer is marker


def test_other_attributes_still_come_from_the_wrapped_stream() -> None:
    body = _ObservedBody()
    proxy = TapSyncStream(body, _State())
    assert list(proxy.__wrapped__) == [b"data: {}\n\n"]
    assert isinstance(proxy, _ObservedBody)  # wrapt keeps isinstance transparent
    with pytest.raises(AttributeError):
        _ = proxy.not_there
