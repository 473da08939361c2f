"""The ``tooltap`` command."""

from __future__ import annotations

import argparse
import sys
from typing import Final

_DEMO_NEEDS: Final = ("opentelemetry", "openai", "anthropic", "google", "httpx", "aiohttp")
_DEMO_INSTALL: Final = 'pip install ".[demo]" (in a checkout of tooltap), or run scripts/demo'


def main(argv: list[str] | None = None) -> int:
    """``tooltap demo [--serve] [--port N]``; ``tooltap --version``."""
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="tooltap", description="tooltap: make the tool calls of LLM agents observable."
    )
    parser.add_argument("--version", action="version", version=f"tooltap {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser(
        "demo", help="run agents for every SDK, auto-instrumented, against the simulator"
    )
    demo.add_argument(
        "--serve",
        action="store_true",
        help="keep the Prometheus /metrics endpoint up after the run",
    )
    demo.add_argument(
        "--port",
        type=int,
        default=None,
        help="Prometheus port (default: $TOOLTAP_PROMETHEUS_PORT, or 9464 with --serve)",
    )
    demo.add_argument(
        "--otlp",
        metavar="URL",
        default=None,
        help="send the traces and metrics over OTLP to URL, e.g. http://127.0.0.1:6006 "
        "(Phoenix; add OTEL_METRICS_EXPORTER=none) or http://127.0.0.1:4318 (a collector); "
        "grpc on port 4317, else http/protobuf (default: $OTEL_EXPORTER_OTLP_ENDPOINT)",
    )
    args = parser.parse_args(argv)
    try:
        from ._demo import run_demo

        return run_demo(serve=args.serve, port=args.port, otlp=args.otlp)
    except ModuleNotFoundError as exc:
        if exc.name is None or not exc.name.startswith(_DEMO_NEEDS):
            raise
        parser.exit(1, f"tooltap demo needs {exc.name}: {_DEMO_INSTALL}\n")


if __name__ == "__main__":
    sys.exit(main())
