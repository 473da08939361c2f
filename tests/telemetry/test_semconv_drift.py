"""tooltap's names against the installed ``opentelemetry-semantic-conventions``.

Every name ``semconv.py`` defines that the package knows must be spelt as the package
spells it (a constant of the same identifier holds the same name); every other one is
tooltap's own (``tooltap.*``) or listed below as a draft of the GenAI conventions that the
package does not carry yet. A package upgrade that renames or adds one of them fails here.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import opentelemetry.semconv
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as upstream_gen_ai

from tooltap._core.dialects import TABLE
from tooltap._telemetry import semconv as sc

#: GenAI names of the ``semantic-conventions-genai`` drafts the Python package lacks.
DRAFT: frozenset[str] = frozenset(
    {
        "gen_ai.client.attempt.failed",  # event: one failed attempt of a retried operation
        "gen_ai.client.inference.operation.details",  # event: the content of one inference
        "gen_ai.execute_tool.duration",  # histogram: the harness running one tool
    }
)
#: ``gen_ai.provider.name`` values of providers the package does not list (the conventions
#: allow a custom value then): Ollama.
CUSTOM_PROVIDERS: frozenset[str] = frozenset({"ollama"})
#: A sample of the hosts each dialect tells its ``gen_ai.provider.name`` from.
HOSTS = (
    None,
    "api.openai.com",
    "api.anthropic.com",
    "bedrock-runtime.us-east-1.amazonaws.com",
    "us-east5-aiplatform.googleapis.com",
    "generativelanguage.googleapis.com",
)


def _upstream() -> dict[str, dict[str, str]]:
    """Every constant of the package's modules: identifier -> {module: name}."""
    root = Path(opentelemetry.semconv.__file__).parent
    found: dict[str, dict[str, str]] = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            continue
        module = importlib.import_module(".".join(("opentelemetry.semconv", *parts)))
        for key, value in vars(module).items():
            if key.isupper() and isinstance(value, str):
                found.setdefault(key, {})[module.__name__] = value
    return found


UPSTREAM = _upstream()
UPSTREAM_NAMES = frozenset(v for by_module in UPSTREAM.values() for v in by_module.values())
#: tooltap's attribute, event and metric names: identifier -> name.
OURS = {
    key: value
    for key, value in vars(sc).items()
    if key.isupper() and isinstance(value, str) and "." in value and not value.endswith(".")
    and "://" not in value
}  # fmt: skip


def test_the_package_has_the_genai_names() -> None:
    assert len(UPSTREAM_NAMES) > 1000
    assert "gen_ai.tool.call.id" in UPSTREAM_NAMES
    assert sc.OPERATION_DURATION in OURS.values()


def test_a_name_the_package_knows_is_spelt_as_it_spells_it() -> None:
    drift = {
        key: (value, by_module)
        for key, value in OURS.items()
        if (by_module := UPSTREAM.get(key)) and value not in by_module.values()
    }
    assert drift == {}


def test_every_other_name_is_tooltaps_own_or_a_draft() -> None:
    unknown = {
        v for v in OURS.values() if v not in UPSTREAM_NAMES and not v.startswith(sc.TOOLTAP_PREFIX)
    }
    assert unknown == DRAFT
    assert not DRAFT & UPSTREAM_NAMES  # a draft the package now carries: take it off the list


def test_the_draft_renames_are_not_in_the_package_yet() -> None:
    assert not set(sc.DRAFT_RENAMES.values()) & UPSTREAM_NAMES
    assert set(sc.DRAFT_RENAMES) <= UPSTREAM_NAMES


def test_the_values_tooltap_writes_are_the_packages() -> None:
    operations = {v.value for v in upstream_gen_ai.GenAiOperationNameValues}
    assert {sc.OPERATION_CHAT, sc.OPERATION_GENERATE_CONTENT, sc.OPERATION_EXECUTE_TOOL} <= (
        operations
    )
    assert {e.operation_name for e in TABLE.values()} <= operations
    providers = {v.value for v in upstream_gen_ai.GenAiProviderNameValues}
    ours = {e.provider_name(host, None) for e in TABLE.values() for host in HOSTS}
    assert ours <= providers | CUSTOM_PROVIDERS
    assert {sc.provider_of_family(e.provider) for e in TABLE.values()} <= (
        providers | CUSTOM_PROVIDERS
    )
    assert not CUSTOM_PROVIDERS & providers  # the package now lists it: take it off the list
    assert {v.value for v in upstream_gen_ai.GenAiTokenTypeValues} >= {"input", "output"}
