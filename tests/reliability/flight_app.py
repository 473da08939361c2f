"""An app whose disk is full: files it writes may not grow past 256 bytes (``RLIMIT_FSIZE``).

It streams a broken response through the real openai SDK with the flight recorder on,
then prints what it saw as JSON: the calls the SDK assembled, what the writer wrote and
dropped, the ``flight_recorder`` internal errors counted, the files left behind.
"""

from __future__ import annotations

import json
import resource
import signal
import sys
from pathlib import Path

import openai
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

import tooltap
from tooltap._telemetry.telemetry import get_telemetry
from tooltap.simulator import Fault, Simulator


def main(directory: str) -> None:
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    tooltap.instrument(meter_provider=meters, flight_recorder=directory)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (256, 256))
    with Simulator() as sim:
        client = openai.OpenAI(base_url=sim.openai_base_url, api_key="sk-test", max_retries=0)
        sim.inject(Fault("invalid_json_args"))
        request = {
            "model": "gpt-4o-mini",
            "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "lookup_demo_value"}}],
            "stream": True,
        }
        names = [
            call.function.name
            for chunk in client.chat.completions.create(**request)
            for call in chunk.choices[0].delta.tool_calls or []
            if call.function and call.function.name
        ]
    tel = get_telemetry()
    assert tel is not None and tel.flight is not None
    drained = tel.flight.writer.drain(10)
    data = reader.get_metrics_data()
    errors = [
        point.value
        for resource_metrics in (data.resource_metrics if data else ())
        for scope in resource_metrics.scope_metrics
        for metric in scope.metrics
        if metric.name == "tooltap.internal_errors"
        for point in metric.data.data_points
        if point.attributes.get("tooltap.component") == "flight_recorder"
    ]
    print(
        json.dumps(
            {
                "names": names,
                "drained": drained,
                "written": tel.flight.writer.written,
                "dropped": tel.flight.writer.dropped,
                "counted": sum(errors),
                "files": sorted(p.name for p in Path(directory).iterdir()),
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1])
