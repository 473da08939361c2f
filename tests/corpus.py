"""Load the recorded provider-response corpus (tests/fixtures/corpus) as test cases."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).parent / "fixtures" / "corpus"

DIALECT_OF_FOLDER = {
    "openai-chat": "openai.chat",
    "openai-responses": "openai.responses",
    "anthropic": "anthropic.messages",
    "google": "google.genai",
}


@dataclass(frozen=True)
class Case:
    name: str
    dialect: str
    body: bytes
    meta: dict[str, Any]

    @property
    def stream(self) -> bool:
        return bool(self.meta["stream"])

    @property
    def status(self) -> int:
        return int(self.meta["http_status"])


def load_cases() -> list[Case]:
    cases = []
    for meta_path in sorted(CORPUS.glob("*/*.meta.json")):
        folder = meta_path.parent.name
        stem = meta_path.name.removesuffix(".meta.json")
        cases.append(
            Case(
                name=f"{folder}/{stem}",
                dialect=DIALECT_OF_FOLDER[folder],
                body=(meta_path.parent / f"{stem}.body").read_bytes(),
                meta=json.loads(meta_path.read_text()),
            )
        )
    return cases


CASES = load_cases()
