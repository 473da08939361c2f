"""Local fallback messages for provider failures, English and Spanish."""

from __future__ import annotations

import pytest

from tooltap._core.errors import ERROR_TYPES
from tooltap._runner.fallback import FALLBACK_MESSAGES
from tooltap.core import ErrorClass
from tooltap.harness import ProviderFailure, fallback_message, provider_failure


@pytest.mark.parametrize("error_type", sorted(set(ERROR_TYPES) - {"_OTHER"}))
def test_every_error_class_has_its_own_message_in_both_languages(error_type: str) -> None:
    en = fallback_message(error_type, "en")
    es = fallback_message(error_type, "es")
    assert en != es
    assert en != fallback_message("default", "en")
    assert FALLBACK_MESSAGES[error_type] == {"en": en, "es": es}


def test_default_and_unknown_classes() -> None:
    assert (
        fallback_message("default", "es")
        == "No he podido obtener una respuesta. Inténtalo de nuevo."
    )
    assert fallback_message("_OTHER", "en") == "I couldn't get a response. Please try again."
    assert fallback_message("something_new", "es") == fallback_message("default", "es")


def test_language_tags_and_unknown_languages() -> None:
    assert fallback_message("timeout", "es-ES") == fallback_message("timeout", "es")
    assert fallback_message("timeout", "ES_mx") == fallback_message("timeout", "es")
    assert fallback_message("timeout", "fr") == fallback_message("timeout", "en")


def test_error_class_value_and_custom_catalogue() -> None:
    cls = ErrorClass("rate_limited", retryable=True, retry_after=3.0, status=429)
    assert fallback_message(cls, "es") == fallback_message("rate_limited", "es")
    custom = {"rate_limited": {"en": "Busy, retry soon.", "fr": "Occupé."}}
    assert fallback_message(cls, "fr", catalogue=custom) == "Occupé."
    assert fallback_message(cls, "es", catalogue=custom) == "Busy, retry soon."
    assert fallback_message("timeout", "en", catalogue=custom) == fallback_message("timeout")


def test_provider_failure_keeps_details_out_of_the_user_message() -> None:
    exc = TimeoutError("read timed out after 30s talking to 10.0.0.7")
    failure = provider_failure(exc, lang="es")
    assert isinstance(failure, ProviderFailure)
    assert failure.error_type == "timeout" and failure.retryable
    assert failure.user_message == fallback_message("timeout", "es")
    assert str(failure) == failure.user_message
    assert "10.0.0.7" not in failure.user_message
    assert failure.diagnostics["exception"] == "builtins.TimeoutError"
    assert "10.0.0.7" in failure.diagnostics["message"]
    assert failure.diagnostics["error_type"] == "timeout"


def test_provider_failure_from_a_class_and_from_a_name() -> None:
    cls = ErrorClass("insufficient_balance", False, status=402, hint="top up")
    failure = provider_failure(cls)
    assert failure.diagnostics == {
        "error_type": "insufficient_balance",
        "status": 402,
        "retry_after": None,
        "hint": "top up",
    }
    assert failure.user_message == fallback_message("insufficient_balance")
    assert provider_failure("overloaded", lang="es").user_message == fallback_message(
        "overloaded", "es"
    )


def test_unrecognised_exception_gets_the_default_message() -> None:
    failure = provider_failure(KeyError("boom"))
    assert failure.error_type == "_OTHER"
    assert failure.user_message == fallback_message("default")
