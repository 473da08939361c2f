"""Local messages for provider failures no model can explain (the model is what failed)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from .._core.errors import classify_error
from .._core.model import ErrorClass

__all__ = ["FALLBACK_MESSAGES", "ProviderFailure", "fallback_message", "provider_failure"]

_RETRY_EN = "Please try again."
_RETRY_ES = "Inténtalo de nuevo."
_ADMIN_EN = "Please contact the administrator."
_ADMIN_ES = "Avisa al administrador."

#: error class -> language -> message shown to the user in place of the assistant's answer.
FALLBACK_MESSAGES: Final[Mapping[str, Mapping[str, str]]] = MappingProxyType(
    {
        "timeout": {
            "en": f"The assistant took too long to answer. {_RETRY_EN}",
            "es": f"El asistente ha tardado demasiado en responder. {_RETRY_ES}",
        },
        "rate_limited": {
            "en": "The assistant is receiving too many requests. Please wait a moment and "
            "try again.",
            "es": "El asistente está recibiendo demasiadas peticiones. Espera un momento y "
            "vuelve a intentarlo.",
        },
        "insufficient_balance": {
            "en": f"The assistant is unavailable: the service has run out of credit. {_ADMIN_EN}",
            "es": "El asistente no está disponible: el servicio se ha quedado sin saldo. "
            f"{_ADMIN_ES}",
        },
        "auth_error": {
            "en": f"The assistant is not set up correctly (authentication failed). {_ADMIN_EN}",
            "es": f"El asistente no está bien configurado (falló la autenticación). {_ADMIN_ES}",
        },
        "permission_denied": {
            "en": f"The assistant is not allowed to use this model or service. {_ADMIN_EN}",
            "es": f"El asistente no tiene permiso para usar este modelo o servicio. {_ADMIN_ES}",
        },
        "bad_request": {
            "en": f"The assistant's service rejected the request. {_ADMIN_EN}",
            "es": f"El servicio del asistente ha rechazado la petición. {_ADMIN_ES}",
        },
        "content_filter": {
            "en": "The assistant's service blocked this request or its answer. "
            "Please rephrase the request and try again.",
            "es": "El servicio del asistente ha bloqueado esta petición o su respuesta. "
            "Reformula la petición e inténtalo de nuevo.",
        },
        "not_found": {
            "en": "The assistant is not set up correctly (model or address not found). "
            f"{_ADMIN_EN}",
            "es": "El asistente no está bien configurado (no se encuentra el modelo o la "
            f"dirección). {_ADMIN_ES}",
        },
        "server_error": {
            "en": f"The assistant's service had an internal error. {_RETRY_EN}",
            "es": f"El servicio del asistente ha tenido un error interno. {_RETRY_ES}",
        },
        "overloaded": {
            "en": "The assistant's service is overloaded. Please try again in a few minutes.",
            "es": "El servicio del asistente está saturado. Inténtalo de nuevo en unos minutos.",
        },
        "connection_error": {
            "en": "Could not reach the assistant's service. Check the connection and try again.",
            "es": "No se ha podido conectar con el servicio del asistente. Comprueba la conexión "
            "e inténtalo de nuevo.",
        },
        "truncated_stream": {
            "en": f"The answer was cut off before it finished. {_RETRY_EN}",
            "es": f"La respuesta se ha cortado antes de terminar. {_RETRY_ES}",
        },
        "stream_error_event": {
            "en": f"The assistant's service reported an error while answering. {_RETRY_EN}",
            "es": f"El servicio del asistente ha informado de un error al responder. {_RETRY_ES}",
        },
        "default": {
            "en": f"I couldn't get a response. {_RETRY_EN}",
            "es": f"No he podido obtener una respuesta. {_RETRY_ES}",
        },
    }
)


def fallback_message(
    error: ErrorClass | str,
    lang: str = "en",
    *,
    catalogue: Mapping[str, Mapping[str, str]] | None = None,
) -> str:
    """The local message for an error class; unknown classes get ``default``.

    ``lang`` is ``"en"`` or ``"es"`` (a region such as ``"es-ES"`` is ignored; other
    languages get English). ``catalogue`` overrides or extends the built-in one.
    """
    error_type = error.error_type if isinstance(error, ErrorClass) else error
    messages = {**FALLBACK_MESSAGES, **(catalogue or {})}
    by_lang = messages.get(error_type) or messages["default"]
    code = lang.replace("_", "-").split("-", 1)[0].lower()
    return by_lang.get(code) or by_lang.get("en") or next(iter(by_lang.values()))


@dataclass(frozen=True, slots=True)
class ProviderFailure:
    """A provider failure as the user sees it and as a developer diagnoses it.

    Show ``user_message``; log ``diagnostics`` (never shown as the assistant's words).
    """

    error_type: str
    retryable: bool
    user_message: str
    diagnostics: dict[str, Any] = field(hash=False)

    def __str__(self) -> str:
        return self.user_message


def provider_failure(
    error: BaseException | ErrorClass | str,
    *,
    lang: str = "en",
    catalogue: Mapping[str, Mapping[str, str]] | None = None,
) -> ProviderFailure:
    """Class an SDK exception (or take a class) and pair its local message with the details."""
    diagnostics: dict[str, Any] = {}
    if isinstance(error, BaseException):
        diagnostics["exception"] = f"{type(error).__module__}.{type(error).__qualname__}"
        diagnostics["message"] = str(error)[:2000]
        error = classify_error(None, {}, None, error)  # total: never raises
    if isinstance(error, str):
        error = ErrorClass(error, retryable=False)
    diagnostics.update(
        error_type=error.error_type,
        status=error.status,
        retry_after=error.retry_after,
        hint=error.hint,
    )
    return ProviderFailure(
        error_type=error.error_type,
        retryable=error.retryable,
        user_message=fallback_message(error, lang, catalogue=catalogue),
        diagnostics=diagnostics,
    )
