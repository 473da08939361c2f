"""google-genai parses a whole response after the HTTP call: its failure fails the inference.

The SDK's response model is made to reject what the simulator sent (a 2xx body tooltap
parsed fine): the inference span ends in ERROR and the duration point carries the
same ``error.type``; the app gets the SDK's exception unchanged.
"""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types
from opentelemetry.trace import StatusCode

from tests.sdk.drivers import DRIVERS, USER, resolve
from tooltap.core import classify_error
from tooltap.simulator import Simulator

SYNC = [pytest.param(s, id="sync" if s else "async") for s in (True, False)]


class Unparsable(ValueError):
    """What the SDK's response model raised."""


@pytest.mark.parametrize("sync", SYNC)
async def test_a_response_the_sdk_cannot_parse_fails_the_span(
    rec: Any, sim: Simulator, sync: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    def reject(*args: Any, **kwargs: Any) -> Any:
        raise Unparsable("response did not validate")

    monkeypatch.setattr(types.GenerateContentResponse, "_from_response", reject)
    driver = DRIVERS["google"]
    client = driver.client(sim, sync=sync)
    with pytest.raises(Unparsable):
        await resolve(client.generate_content(model=driver.model, contents=USER))
    (span,) = rec.inference()
    assert span.status.status_code is StatusCode.ERROR
    error_type = span.attributes["error.type"]
    assert error_type == classify_error(None, {}, None, Unparsable()).error_type
    (point,) = rec.points("gen_ai.client.operation.duration")
    assert point[0]["error.type"] == error_type


@pytest.mark.parametrize("sync", SYNC)
async def test_a_parsed_response_still_ends_ok(rec: Any, sim: Simulator, sync: bool) -> None:
    driver = DRIVERS["google"]
    client = driver.client(sim, sync=sync)
    await resolve(client.generate_content(model=driver.model, contents=USER))
    (span,) = rec.inference()
    assert span.status.status_code is StatusCode.UNSET
    (point,) = rec.points("gen_ai.client.operation.duration")
    assert "error.type" not in point[0]
