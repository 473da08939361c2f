"""``python -m tooltap.simulator [--port N]``: serve the simulator until Ctrl-C."""

from __future__ import annotations

import argparse
import signal
import threading

from . import FAULT_HEADER, FAULT_KINDS, Simulator

DESCRIPTION = """\
Serve the loopback provider simulator (OpenAI Chat Completions and Responses,
Anthropic Messages, Google Gemini) on 127.0.0.1 until Ctrl-C."""


def _faults_help() -> str:
    kinds = "\n".join(
        f"  {kind}" + (f" ({', '.join(f'{p}=' for p in params)})" if params else "")
        for kind, params in FAULT_KINDS.items()
    )
    return (
        f"fault kinds, picked per request with the header {FAULT_HEADER}:\n"
        f"kind[;param=value...][, kind...], e.g. rate_limit;retry_after=0.5\n{kinds}"
    )


def main(argv: list[str] | None = None) -> None:
    """Parse the command line, start the simulator and block until interrupted."""
    parser = argparse.ArgumentParser(
        prog="python -m tooltap.simulator",
        description=DESCRIPTION,
        epilog=_faults_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--port", type=int, default=8765, help="TCP port on 127.0.0.1, 0: any (default: 8765)"
    )
    parser.add_argument(
        "--fragment", type=int, default=8, help="argument characters per event (default: 8)"
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed for the generated ids (default: 0)"
    )
    options = parser.parse_args(argv)
    # Ctrl-C stops it even when started from a shell that ran it with SIGINT ignored (a
    # background job without job control): Python keeps an inherited SIG_IGN otherwise.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sim = Simulator(fragment=options.fragment, seed=options.seed, port=options.port)
    try:
        sim.start()
    except OSError as exc:
        parser.exit(1, f"cannot listen on 127.0.0.1:{options.port}: {exc.strerror or exc}; "
                       "choose another with --port N (0: any free port)\n")  # fmt: skip
    try:
        print(f"tooltap simulator listening on {sim.url}", flush=True)
        print(f"  OpenAI base_url:    {sim.openai_base_url}", flush=True)
        print(f"  Anthropic base_url: {sim.anthropic_base_url}", flush=True)
        print(f"  Google base_url:    {sim.google_base_url}", flush=True)
        forever = threading.Event()
        try:
            # Timed waits: the OS may hand SIGINT to a server thread, and Python runs its
            # handler in the main thread only once that thread wakes up.
            while not forever.wait(0.5):
                pass
        except KeyboardInterrupt:
            print("stopping", flush=True)
    finally:
        sim.stop()


if __name__ == "__main__":
    main()
