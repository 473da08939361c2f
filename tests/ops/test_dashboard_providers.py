"""The dashboard and the alerts name no provider: every provider a dialect reports
(``aws.bedrock``, ``cohere``, ``ollama`` too) is charted and alerted on without a change."""

from __future__ import annotations

import re

from tests.ops.support import DASHBOARDS
from tooltap._core.dialects import TABLE

#: A path per dialect family that tells its provider (the Bedrock and Vertex forms too).
_PATHS = (
    None,
    "/model/anthropic.claude-x/invoke",
    "/v1/projects/p/locations/l/publishers/anthropic/models/c:rawPredict",
    "/v1beta/models/g:generateContent",
    "/v1/projects/p/locations/l/publishers/google/models/g:generateContent",
)


def providers() -> set[str]:
    return {entry.provider_name(None, path) for entry in TABLE.values() for path in _PATHS}


def test_every_provider_matcher_is_the_dashboard_variable() -> None:
    dashboard = (DASHBOARDS / "tooltap.json").read_text()
    matchers = re.findall(r'gen_ai_provider_name\s*(=~|!~|!=|=)\s*\\"([^"\\]*)', dashboard)
    assert matchers and set(matchers) == {("=~", "$provider")}


def test_no_query_or_rule_spells_a_provider() -> None:
    assert {"aws.bedrock", "cohere", "ollama", "gcp.vertex_ai"} <= providers()
    for name in ("tooltap.json", "alerts.yml"):
        text = (DASHBOARDS / name).read_text()
        for provider in providers():
            quoted = re.escape(provider)
            assert not re.search(rf'gen_ai_provider_name\s*[=!~]+\s*\\?"{quoted}\\?"', text), (
                name,
                provider,
            )
