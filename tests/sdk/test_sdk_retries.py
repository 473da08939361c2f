"""A 429 then a success: one inference span for the call, the retry counted once.

openai and anthropic retry with ``x-stainless-retry-count`` on each attempt;
google-genai retries with tenacity (``HttpRetryOptions``), repeated sends inside
one ``_request`` call, over httpx2 (sync) or aiohttp (async).
"""

from __future__ import annotations

from typing import Any

import pytest
from google.genai import types

from tests.sdk.drivers import DRIVERS
from tooltap.simulator import Fault, Simulator

MODES = [pytest.param(s, id="sync" if s else "async") for s in (True, False)]

GOOGLE_RETRY = types.HttpRetryOptions(attempts=3, initial_delay=0.01, max_delay=0.05, jitter=0.0)


def _retrying(name: str) -> dict[str, Any]:
    """Client options that make each SDK retry once, quickly."""
    if DRIVERS[name].dialect == "google.genai":
        return {"retry_options": GOOGLE_RETRY}
    return {"max_retries": 2}


@pytest.mark.parametrize("name", list(DRIVERS))
@pytest.mark.parametrize("sync", MODES)
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
async def test_rate_limited_then_ok_is_one_span_one_retry(
    rec: Any, sim: Simulator, name: str, sync: bool, stream: bool
) -> None:
    driver = DRIVERS[name]
    client = driver.client(sim, sync=sync, tracer_provider=rec.tracer_provider, **_retrying(name))
    sim.inject(Fault("rate_limit", retry_after=0.05), dialect=driver.dialect, times=1)

    turn = await driver.turn1(client, stream)

    assert [str(r.fault).split(";")[0] for r in sim.requests] == ["rate_limit", "None"]
    (span,) = rec.inference()
    attrs = dict(span.attributes or {})
    assert attrs["http.request.resend_count"] == 1
    assert "error.type" not in attrs  # the call succeeded
    failed = [e for e in span.events if e.name == "gen_ai.client.attempt.failed"]
    assert len(failed) == 1
    assert failed[0].attributes["http.response.status_code"] == 429
    error_type = failed[0].attributes["error.type"]
    assert rec.points("tooltap.retries") == [({**_common(attrs), "error.type": error_type}, 1.0)]
    assert rec.total("tooltap.provider.errors") == 1
    assert rec.calls() == turn.calls  # the retried attempt's calls, once


def _common(span_attributes: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "gen_ai.operation.name",
        "gen_ai.provider.name",
        "gen_ai.request.model",
        "server.address",
        "server.port",
    )
    return {k: span_attributes[k] for k in keys if k in span_attributes}
