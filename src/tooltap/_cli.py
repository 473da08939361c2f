"""The ``tooltap`` command."""

from __future__ import annotations

import argparse
import sys
from typing import Final

_DEMO_NEEDS: Final = ("opentelemetry", "openai", "anthropic", "google", "httpx", "aiohttp")
_DEMO_INSTALL: Final = 'pip install ".[demo]" (in a checkout of tooltap), or run scripts/demo'


def main(argv: list[str] | None = None) -> int:
    """``tooltap demo [--serve] [--port N]``; ``tooltap replay FILE...``; ``tooltap --version``."""
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
    replay = commands.add_parser(
        "replay", help="parse flight records again with this tooltap, or serve one to a client"
    )
    replay.add_argument("files", nargs="+", metavar="FILE", help="flight record(s)")
    replay.add_argument("--json", action="store_true", help="one JSON object per line")
    replay.add_argument(
        "--check", action="store_true", help="exit 1 when a result differs from the recorded one"
    )
    replay.add_argument(
        "--serve", action="store_true", help="serve FILE's response on 127.0.0.1 to a real client"
    )
    replay.add_argument(
        "--port", type=int, default=0, help="port for --serve (default: a free one)"
    )
    replay.add_argument(
        "--no-timing", action="store_true", help="--serve without the recorded waits"
    )
    args = parser.parse_args(argv)
    if args.command == "replay":
        from ._replay import replay_files, serve_file

        if not args.serve:
            return replay_files(args.files, as_json=args.json, check=args.check)
        if len(args.files) != 1:
            parser.error("--serve takes one FILE")
        return serve_file(args.files[0], port=args.port, timing=not args.no_timing)
    try:
        from ._demo import run_demo

        return run_demo(serve=args.serve, port=args.port, otlp=args.otlp)
    except ModuleNotFoundError as exc:
        if exc.name is None or not exc.name.startswith(_DEMO_NEEDS):
            raise
        parser.exit(1, f"tooltap demo needs {exc.name}: {_DEMO_INSTALL}\n")


if __name__ == "__main__":
    sys.exit(main())
