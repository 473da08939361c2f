"""examples/agent_loop.py: a complete agent loop under 60 lines, against the simulator."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import openai
import pytest

from tooltap.harness import fallback_message
from tooltap.simulator import Fault, Simulator

EXAMPLE = Path(__file__).parents[2] / "examples" / "agent_loop.py"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("agent_loop_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_is_short_and_answers_from_the_simulator() -> None:
    assert len(EXAMPLE.read_text().splitlines()) < 60
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "You are 170 cm tall and weigh 70 kg.\n"


@pytest.mark.parametrize("lang", ["en", "es"])
def test_example_shows_the_local_message_when_the_provider_fails(
    lang: str, capsys: pytest.CaptureFixture[str]
) -> None:
    example = load()
    with Simulator() as sim:
        sim.inject(Fault("insufficient_balance"))
        client = openai.OpenAI(base_url=sim.openai_base_url, api_key="sk-x", max_retries=0)
        answer = example.agent(client, "How tall am I?", "gpt-4o-mini", lang)
    assert answer == fallback_message("insufficient_balance", lang)
    assert "'status': 429" in capsys.readouterr().err  # details kept apart, for diagnosis
