"""The flight recorder under a disk that fails: the app never notices, the record is counted.

A full disk (a process whose files may not grow, ``RLIMIT_FSIZE``), a directory nobody
may create, a path that is a file, and a disk that stalls (its rename blocks): the app's
request returns as it would without tooltap, without waiting for the disk, and every
record that could not be written is dropped and counted in
``tooltap.internal_errors{tooltap.component="flight_recorder"}``. The directory is a
ring: it never keeps more records, or more bytes, than its bounds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

import tooltap
from tests.reliability.support import Recorder
from tooltap._core.flight import Chunk, FlightRecord, Reported
from tooltap._telemetry import flight_writer
from tooltap._telemetry.config import ConfigError
from tooltap._telemetry.flight_writer import FlightWriter
from tooltap._telemetry.telemetry import get_telemetry
from tooltap.simulator import Fault, Simulator

REQUEST = {
    "model": "gpt-4o-mini",
    "messages": [{"role": "user", "content": "hi"}],
    "tools": [{"type": "function", "function": {"name": "lookup_demo_value"}}],
    "stream": True,
}


def _names(client: openai.OpenAI) -> list[str]:
    return [
        call.function.name
        for chunk in client.chat.completions.create(**REQUEST)  # type: ignore[call-overload]
        for call in chunk.choices[0].delta.tool_calls or []
        if call.function and call.function.name
    ]


def _dropped_count(recorder: Recorder) -> float:
    return sum(
        value
        for attributes, value in recorder.points("tooltap.internal_errors")
        if attributes.get("tooltap.component") == "flight_recorder"
    )


def test_a_full_disk_drops_the_record_and_counts_it(tmp_path: Path) -> None:
    app = Path(__file__).with_name("flight_app.py")
    done = subprocess.run(
        [sys.executable, str(app), str(tmp_path / "flight")],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).parents[2],
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["names"] == ["lookup_demo_value", "lookup_demo_value"]  # the app saw it all
    assert seen["drained"] and seen["written"] == 0
    assert seen["dropped"] == 1 and seen["counted"] == 1
    assert seen["files"] == []  # no partial record left behind


def _unwritable(tmp_path: Path, kind: str) -> Path:
    if kind == "under a file":
        (tmp_path / "file").write_text("")
        return tmp_path / "file" / "flight"
    if os.geteuid() == 0:  # root writes through permission bits: sysfs refuses it anyway
        return Path("/sys/tooltap-flight-test")
    directory = tmp_path / "read-only"
    directory.mkdir(mode=0o500)
    return directory


@pytest.mark.parametrize("kind", ["read-only", "under a file"])
def test_an_unwritable_directory_never_reaches_the_app(
    recorder: Recorder, sim: Simulator, tmp_path: Path, kind: str
) -> None:
    directory = _unwritable(tmp_path, kind)
    recorder.instrument(flight_recorder=directory)
    client = openai.OpenAI(base_url=sim.openai_base_url, api_key="sk-test", max_retries=0)
    sim.inject(Fault("invalid_json_args"))
    assert _names(client) == ["lookup_demo_value", "lookup_demo_value"]
    tel = get_telemetry()
    assert tel is not None and tel.flight is not None and tel.flight.writer.drain(10)
    assert (tel.flight.writer.written, tel.flight.writer.dropped) == (0, 1)
    assert _dropped_count(recorder) == 1
    (span,) = [s for s in recorder.spans() if s.name.startswith("chat")]
    assert "tooltap.flight_record" in (span.attributes or {})  # named before the write failed


@pytest.fixture
def stalled_disk(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Renames into the flight directory block until the event is set (a stalled disk)."""
    release = threading.Event()
    rename = os.replace

    def stalled(source: object, target: object) -> None:
        release.wait(30)
        rename(source, target)  # type: ignore[arg-type]

    monkeypatch.setattr(flight_writer.os, "replace", stalled)
    try:
        yield release
    finally:
        release.set()


def test_a_stalled_disk_never_slows_the_app(
    recorder: Recorder, sim: Simulator, tmp_path: Path, stalled_disk: threading.Event
) -> None:
    """Bad responses keep coming while the writer is stuck: the queue fills, later records
    are dropped and counted, and each request takes no longer than without a recorder."""
    recorder.instrument(flight_recorder=tmp_path, flight_recorder_all=True)
    client = openai.OpenAI(base_url=sim.openai_base_url, api_key="sk-test", max_retries=0)
    tel = get_telemetry()
    assert tel is not None and tel.flight is not None
    writer = tel.flight.writer
    slowest = 0.0
    for _ in range(80):  # more than the queue holds (64), plus the one being written
        start = time.monotonic()
        _names(client)
        slowest = max(slowest, time.monotonic() - start)
    assert writer.written == 0
    assert writer.dropped >= 80 - 65
    assert _dropped_count(recorder) == writer.dropped
    assert slowest < 5  # the writer blocks for 30 s: no request waited for it
    stalled_disk.set()
    assert writer.drain(20)
    assert writer.written == 80 - writer.dropped


def _record(size: int) -> FlightRecord:
    return FlightRecord(
        dialect="openai.chat",
        method="POST",
        path="/v1/chat/completions",
        status=200,
        mode="sse",
        headers=(("content-type", "text/event-stream"),),
        end="exhausted",
        chunks=(Chunk(0.0, b"x" * size),),
        reported=Reported(),
    )


def _write(writer: FlightWriter, count: int, size: int) -> list[str]:
    names = [f"tooltap-flight-{i:04d}.jsonl" for i in range(count)]
    for name in names:
        assert writer.submit(name, lambda: _record(size))
        assert writer.drain(10)
    return names


def test_the_directory_keeps_the_newest_records_by_count(tmp_path: Path) -> None:
    writer = FlightWriter(tmp_path, files=3, total_bytes=10**9, on_drop=lambda: None)
    names = _write(writer, 10, 100)
    assert sorted(p.name for p in tmp_path.iterdir()) == names[-3:]
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in tmp_path.iterdir())


def test_the_directory_keeps_the_newest_records_by_bytes(tmp_path: Path) -> None:
    writer = FlightWriter(tmp_path, files=100, total_bytes=10**9, on_drop=lambda: None)
    _write(writer, 1, 1000)
    one = next(tmp_path.iterdir()).stat().st_size
    for path in tmp_path.iterdir():
        path.unlink()
    writer.total_bytes = int(one * 2.5)
    names = _write(writer, 6, 1000)
    assert sorted(p.name for p in tmp_path.iterdir()) == names[-2:]
    assert sum(p.stat().st_size for p in tmp_path.iterdir()) <= writer.total_bytes


def test_other_files_in_the_directory_are_left_alone(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    writer = FlightWriter(tmp_path, files=1, total_bytes=10**9, on_drop=lambda: None)
    names = _write(writer, 3, 10)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([names[-1], "notes.txt"])


def test_without_a_directory_the_recorder_is_off(recorder: Recorder) -> None:
    recorder.instrument()
    tel = get_telemetry()
    assert tel is not None and tel.flight is None


def test_the_environment_configures_it(
    recorder: Recorder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLTAP_FLIGHT_RECORDER", str(tmp_path))
    monkeypatch.setenv("TOOLTAP_FLIGHT_RECORDER_BYTES", "1000")
    monkeypatch.setenv("TOOLTAP_FLIGHT_RECORDER_ALL", "1")
    monkeypatch.setenv("TOOLTAP_FLIGHT_RECORDER_FILES", "7")
    recorder.instrument()
    tel = get_telemetry()
    assert tel is not None and tel.flight is not None
    settings = tel.flight.settings
    assert (settings.directory, settings.max_bytes, settings.every) == (tmp_path, 1000, True)
    assert (settings.files, settings.total_bytes) == (7, 256 * 1024 * 1024)
    tooltap.uninstrument()
    recorder.instrument(flight_recorder_bytes=5000, flight_recorder_all=False)  # options win
    tel = get_telemetry()
    assert tel is not None and tel.flight is not None
    assert (tel.flight.settings.max_bytes, tel.flight.settings.every) == (5000, False)


@pytest.mark.parametrize(
    "options",
    [{"flight_recorder": 42}, {"flight_recorder": ".", "flight_recorder_bytes": "lots"}],
    ids=["not-a-path", "not-a-size"],
)
def test_an_invalid_option_warns_or_strictly_raises(
    recorder: Recorder, monkeypatch: pytest.MonkeyPatch, options: dict[str, object]
) -> None:
    with pytest.raises(ConfigError):  # the suite is strict
        recorder.instrument(**options)
    tooltap.uninstrument()
    monkeypatch.setenv("TOOLTAP_STRICT_CONFIG", "0")
    with pytest.warns(UserWarning, match="flight_recorder"):
        recorder.instrument(**options)
    tel = get_telemetry()
    assert tel is not None
    if "flight_recorder_bytes" in options:
        assert tel.flight is not None and tel.flight.settings.max_bytes == 4 * 1024 * 1024
    else:
        assert tel.flight is None
