"""``tooltap demo``: agents for every SDK, auto-instrumented, against the simulator."""

from .run import run_demo

__all__ = ["run_demo"]
