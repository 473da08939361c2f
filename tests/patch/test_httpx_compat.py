"""The httpx/httpx2 private details the tap relies on are checked once when patching: a
renamed one is one WARNING naming it and one internal-error count, never silence."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import httpx
import httpx2
import pytest

from tooltap._patch.httpx_compat import DETAILS, check

ROOT = Path(__file__).resolve().parents[2]
#: Run in a child: the library with one detail deleted, instrumented, one streamed call.
APP = """
import json, logging, sys
import {lib} as lib
from tests.telemetry.support import Recorder, first_body, post, url
from tooltap.simulator import Simulator

records = []
handler = logging.Handler()
handler.emit = lambda record: records.append((record.levelname, record.getMessage()))
logging.getLogger("tooltap").addHandler(handler)
{remove}
rec = Recorder()
rec.instrument()
with Simulator() as sim:
    post("{lib}", url(sim, "openai.chat", True), first_body("openai.chat", True), stream=True)
print(json.dumps({{
    "warnings": [m for level, m in records if level == "WARNING"],
    "internal_errors": rec.points("tooltap.internal_errors"),
    "tool_calls": rec.total("tooltap.tool_calls"),
}}))
"""


#: A rename as a new version would make it: the method and every caller in ``Response``.
RENAME = """
R = lib.Response
R._get_decoder = R.__dict__["_get_content_decoder"]
del R._get_content_decoder
for fn in list(vars(R).values()):
    code = getattr(fn, "__code__", None)
    if code is not None and "_get_content_decoder" in code.co_names:
        names = tuple("_get_decoder" if n == "_get_content_decoder" else n for n in code.co_names)
        fn.__code__ = code.replace(co_names=names)
"""


def _run(lib: str, remove: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TOOLTAP_"))}
    code = APP.format(lib=lib, remove=remove)
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=120, check=False)  # fmt: skip
    assert result.returncode == 0, result.stderr
    out: dict[str, object] = json.loads(result.stdout.splitlines()[-1])
    return out


@pytest.mark.parametrize("lib", ["httpx", "httpx2"])
def test_the_installed_versions_have_every_detail(lib: str) -> None:
    assert check({"httpx": httpx, "httpx2": httpx2}[lib]) == []


@pytest.mark.parametrize("lib", ["httpx", "httpx2"])
def test_a_renamed_decoder_accessor_warns_once_and_counts(lib: str) -> None:
    got = _run(lib, RENAME)
    (warning,) = got["warnings"]  # type: ignore[misc]
    assert f"{lib}.Response._get_content_decoder not found" in warning
    assert got["internal_errors"] == [[{"tooltap.component": "httpx_compat"}, 1]]
    assert got["tool_calls"] == 2  # a plain body is still parsed without it


@pytest.mark.parametrize("lib", ["httpx", "httpx2"])
def test_a_response_that_no_longer_builds_names_every_detail(
    lib: str, caplog: pytest.LogCaptureFixture
) -> None:
    base = {"httpx": httpx, "httpx2": httpx2}[lib]

    class Response(base.Response):  # type: ignore[misc, name-defined]
        def __init__(self, *args: object, **kwargs: object) -> None:
            raise TypeError("a new signature")

    module = types.ModuleType(lib)
    module.Response = Response  # type: ignore[attr-defined]
    assert check(module) == list(DETAILS)
    (record,) = [r for r in caplog.records if r.name == "tooltap"]
    assert record.levelname == "WARNING"
    assert all(f"{lib}.{detail}" in record.getMessage() for detail in DETAILS)


def test_untouched_libraries_warn_nothing() -> None:
    got = _run("httpx2", "")
    assert got["warnings"] == [] and got["internal_errors"] == []
    assert got["tool_calls"] == 2
