"""The SDK patches: lazy, removable, idempotent, and never a source of errors for the app."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from typing import Any

import anthropic
import openai
import pytest
import wrapt
from google.genai import _api_client
from opentelemetry.instrumentation.utils import suppress_instrumentation

import tooltap
from tests.sdk.drivers import DRIVERS
from tooltap import instrumentor
from tooltap._patch import (
    aiohttp_tap,
    httpx_tap,
    patchset,
    sdk_anthropic,
    sdk_google,
    sdk_openai,
)
from tooltap._patch.patchset import Patch, PatchSet
from tooltap._patch.sdk_call import Call, wrappers
from tooltap._telemetry.operation import Operation, current_operation
from tooltap.simulator import Simulator

#: anthropic's retry funnel: ``_request`` (2.x, late 1.x), ``request`` before it existed.
_ANTHROPIC = "_request" if hasattr(anthropic._base_client.SyncAPIClient, "_request") else "request"
#: Every (class, method) the SDK layer wraps in the installed versions.
TARGETS = [
    (openai._base_client.SyncAPIClient, "request"),
    (openai._base_client.AsyncAPIClient, "request"),
    (anthropic._base_client.SyncAPIClient, _ANTHROPIC),
    (anthropic._base_client.AsyncAPIClient, _ANTHROPIC),
    (_api_client.BaseApiClient, "_request"),
    (_api_client.BaseApiClient, "_async_request"),
    (openai._streaming.Stream, "__stream__"),
    (openai._streaming.AsyncStream, "__stream__"),
    (anthropic._streaming.Stream, "__stream__"),
    (anthropic._streaming.AsyncStream, "__stream__"),
    (_api_client.HttpResponse, "segments"),
    (_api_client.HttpResponse, "async_segments"),
]


def _wrappers_on(cls: type, name: str) -> int:
    """How many wrapt wrappers sit on ``cls.name`` (its own ``__dict__``)."""
    return len(list(wrapt.wrapper_chain(cls.__dict__[name]))) - 1


def test_importing_and_instrumenting_imports_no_sdk() -> None:
    script = textwrap.dedent(
        """
        import sys
        import tooltap
        tooltap.instrument()
        sdks = ("openai", "anthropic", "google.genai", "aiohttp", "httpx", "httpx2")
        assert not [m for m in sdks if m in sys.modules], [m for m in sdks if m in sys.modules]
        import openai, anthropic, aiohttp
        from google.genai import _api_client
        from tooltap._patch import aiohttp_tap, sdk_anthropic, sdk_google, sdk_openai
        applied = [m.PATCHES.applied for m in (sdk_openai, sdk_anthropic, sdk_google, aiohttp_tap)]
        print(sum(len(a) for a in applied))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    # 6 SDK calls, 2 google parsers, 6 stream readers, aiohttp _request
    assert done.stdout.split() == ["15"]


def test_uninstrument_restores_and_reinstrument_wraps_once(rec: Any) -> None:
    assert all(_wrappers_on(cls, name) == 1 for cls, name in TARGETS)
    tooltap.uninstrument()
    try:
        assert [_wrappers_on(cls, name) for cls, name in TARGETS] == [0] * len(TARGETS)
        assert sdk_openai.PATCHES.applied == ()
    finally:
        rec.instrument()
    assert [_wrappers_on(cls, name) for cls, name in TARGETS] == [1] * len(TARGETS)
    assert len(aiohttp_tap.PATCHES.applied) == 1


def test_missing_target_is_skipped_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="tooltap")
    patches = PatchSet([Patch("json", "JSONDecoder.no_such_method", lambda *a: None)])
    for _ in range(2):
        patches.install()
        try:
            assert patches.applied == () and not patches.any_applied
        finally:
            patches.uninstall()
    (warned,) = [r for r in caplog.records if "no_such_method not found" in r.getMessage()]
    assert warned.levelno == logging.WARNING  # once: a silently downgraded SDK is visible


def test_fallback_target_of_an_older_major() -> None:
    import json

    original = json.JSONDecoder.__dict__["decode"]
    seen: list[str] = []

    def spy(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        seen.append(args[0])
        return wrapped(*args, **kwargs)

    patches = PatchSet([Patch("json", "JSONDecoder.no_such_method", spy, "JSONDecoder.decode")])
    patches.install()
    try:
        assert patches.applied == ("json:JSONDecoder.decode",) and patches.any_applied
        assert json.JSONDecoder().decode("[1]") == [1] and seen == ["[1]"]
    finally:
        patches.uninstall()
    assert json.JSONDecoder.__dict__["decode"] is original and not patches.any_applied


def _call() -> Call:
    return Call("openai.chat", "m", "127.0.0.1", 1, stream=False)


async def test_app_exception_leaves_as_the_same_object(rec: Any) -> None:
    sync_wrapper, async_wrapper = wrappers(lambda instance, args, kwargs: _call())
    boom = ValueError("the app's own")

    def fails() -> None:
        assert current_operation.get() is not None  # the call runs inside its operation
        raise boom

    async def fails_async() -> None:
        fails()

    with pytest.raises(ValueError) as caught:
        sync_wrapper(fails, None, (), {})
    assert caught.value is boom
    with pytest.raises(ValueError) as caught:
        await async_wrapper(fails_async, None, (), {})
    assert caught.value is boom
    assert current_operation.get() is None
    spans = rec.inference()
    assert [s.status.status_code.name for s in spans] == ["ERROR", "ERROR"]
    assert all(s.attributes["error.type"] for s in spans)


def _boom(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("tooltap bug")


@pytest.mark.parametrize("target", ["open", "end"])
@pytest.mark.parametrize(
    "name", [n for n in ("openai.chat", "anthropic.traced", "google") if n in DRIVERS]
)
async def test_internal_failure_never_reaches_the_app(
    rec: Any, sim: Simulator, monkeypatch: pytest.MonkeyPatch, name: str, target: str
) -> None:
    if target == "open":
        monkeypatch.setattr(Operation, "__init__", _boom)
    else:
        monkeypatch.setattr(Operation, "end", _boom)
    driver = DRIVERS[name]
    client = driver.client(sim, sync=True, tracer_provider=rec.tracer_provider)

    turn = await driver.turn1(client, False)

    assert [args["key"] for _, _, args in turn.calls] == ["height", "weight"]
    components = {a["tooltap.component"] for a, _ in rec.points("tooltap.internal_errors")}
    assert components  # contained and counted
    if target == "open":
        assert "sdk_call" in components
    if name == "anthropic.traced":  # anthropic's own span still ends
        assert [s.instrumentation_scope.name for s in rec.spans()] == ["com.anthropic.sdk.python"]


async def test_suppressed_calls_are_not_observed(rec: Any, sim: Simulator) -> None:
    driver = DRIVERS["openai.chat"]
    with suppress_instrumentation():
        await driver.turn1(driver.client(sim, sync=True), False)
    assert rec.spans() == []
    assert rec.events == []


def test_every_patch_module_is_in_the_registry() -> None:
    for module in (httpx_tap, sdk_openai, sdk_anthropic, sdk_google, aiohttp_tap):
        assert isinstance(module.PATCHES, patchset.PatchSet)
        assert module.PATCHES in instrumentor.PATCH_SETS
    assert (
        tuple(m.PATCHES.requirement for m in (sdk_openai, sdk_anthropic, sdk_google))
        == instrumentor.SUPPORTED_SDKS
    )


def test_registry_is_imported_statically() -> None:
    from tests.test_architecture import GRAPH

    imported = GRAPH.find_modules_directly_imported_by("tooltap.instrumentor")
    for name in ("httpx_tap", "sdk_openai", "sdk_anthropic", "sdk_google", "aiohttp_tap"):
        assert f"tooltap._patch.{name}" in imported


def test_a_target_reached_through_an_alias_is_wrapped_once() -> None:
    import json
    import types

    alias = types.ModuleType("tooltap_test_alias")
    alias.JSONDecoder = json.JSONDecoder  # type: ignore[attr-defined]
    sys.modules[alias.__name__] = alias
    original = json.JSONDecoder.__dict__["decode"]

    def spy(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        return wrapped(*args, **kwargs)

    patches = PatchSet(
        [Patch("json", "JSONDecoder.decode", spy), Patch(alias.__name__, "JSONDecoder.decode", spy)]
    )
    try:
        patches.install()
        assert patches.applied == ("json:JSONDecoder.decode",)
        assert _wrappers_on(json.JSONDecoder, "decode") == 1
        patches.uninstall()
        assert json.JSONDecoder.__dict__["decode"] is original
    finally:
        patches.uninstall()
        del sys.modules[alias.__name__]
