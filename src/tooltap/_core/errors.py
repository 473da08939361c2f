"""Class provider and stream failures into a low-cardinality ``error_type`` and retry advice.

Pure: an exception is classed by the NAMES of its classes (walking the MRO) and by
the attributes SDK errors carry (``status_code``/``code``, ``response.headers``,
``body``/``details``), so no SDK or HTTP library is imported here. Nothing is
read from a response object (that could be I/O), and no provider message, key or
URL is copied into the result: ``hint`` is always one of our own sentences.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any, Final

from ._json import loads_str
from .dialects import TABLE
from .model import ErrorClass, Problem
from .problems import ERROR_KINDS

__all__ = [
    "ERROR_TYPES",
    "MASK",
    "classify_error",
    "classify_problem",
    "mask_secrets",
    "redacted",
    "secret_spans",
]

#: Names whose value is an AWS credential: presigned-URL query parameters and the session
#: token header, and the keys' names in configuration and SDK arguments.
_AWS_NAMES: Final = (
    r"x-amz-(?:security-token|credential|signature)"
    r"|(?:aws_?)?secret_?(?:access_?)?key|(?:aws_?)?session_?token"
)
#: Credentials a provider's error message may echo: OpenAI/Anthropic-style keys, Google API
#: keys, bearer tokens; AWS access key ids (``AKIA``/``ASIA``), a SigV4 ``Authorization``
#: value (credential scope, signed headers, signature), and the value of an AWS credential
#: name (``X-Amz-Security-Token=…``, ``"aws_secret_access_key": "…"``, also escaped in a
#: JSON string). For a name, only its value is masked (group ``value``); no value masked
#: runs past a quote or a backslash, so JSON around it, or holding it, stays JSON.
_SECRET: Final = re.compile(
    r"\b(?:sk|rk|pk|key)-[\w*.-]{6,}|\bAIza[\w-]{30,}|\bBearer\s+[^\s\"'\\]+"
    r"|(?-i:\b(?:AKIA|ASIA)[A-Z0-9]{16}\b)"
    r"|\bAWS4-HMAC-SHA256\s+Credential=[^\s,\"'\\]+"
    r"(?:,\s*SignedHeaders=[^\s,\"'\\]+)?(?:,\s*Signature=[0-9a-f]+)?"
    rf"|\b(?:{_AWS_NAMES})(?:\\?[\"'])?\s*[:=]\s*(?:\\?[\"'])?"
    r"(?P<value>[^\s&\"',;\\]{8,})",
    re.IGNORECASE,
)
MASK: Final = "[redacted]"


def secret_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` holds a credential ``redacted`` would mask: (start, end), in order."""
    return [m.span("value") if m["value"] else m.span() for m in _SECRET.finditer(text)]


def mask_secrets(text: str) -> str:
    """``text`` with every credential ``redacted`` would mask replaced by ``[redacted]``."""
    return _SECRET.sub(_mask, text)


def _mask(match: re.Match[str]) -> str:
    # a name's value ends the match: the name and its separator stay
    return match[0][: match.start("value") - match.start()] + MASK if match["value"] else MASK


def redacted(problem: Problem) -> Problem:
    """``problem`` with credentials masked in its detail (and, for a provider's error
    event, in the message it carries); the same object when there is nothing to mask."""
    detail = mask_secrets(problem.detail) if problem.detail else problem.detail
    received = problem.received
    if received and problem.kind == "error_event":
        received = mask_secrets(received)
    if detail == problem.detail and received == problem.received:
        return problem
    return dataclasses.replace(problem, detail=detail, received=received)


#: Every ``error_type`` and whether a retry may succeed.
ERROR_TYPES: Final[dict[str, bool]] = {
    "timeout": True,
    "connection_error": True,
    "rate_limited": True,
    "server_error": True,
    "overloaded": True,
    "truncated_stream": True,
    "insufficient_balance": False,
    "auth_error": False,
    "permission_denied": False,
    "not_found": False,
    "bad_request": False,
    "content_filter": False,
    "stream_error_event": False,
    "_OTHER": False,
}

#: Provider error ``type`` / ``code`` / ``status`` strings (lowercased) -> error_type: each
#: dialect's own (``Dialect.error_tokens``) and those OpenAI-compatible gateways send.
_TOKENS: Final[dict[str, str]] = {
    "insufficient_balance": "insufficient_balance",
    "internal_error": "server_error",
    **{token: kind for entry in TABLE.values() for token, kind in entry.error_tokens.items()},
}

# Wording of "the account has no money left" (never bare "quota": Google says
# "quota" for per-minute rate limits too, and OpenAI's insufficient_quota has a code).
_BALANCE: Final = re.compile(
    r"insufficient[ _](?:balance|funds|credits?)|credit balance is too low"
    r"|credits? (?:are|is|have been|has been) (?:depleted|exhausted)|more credits"
    r"|out of credits|spend(?:ing)? limit|billing hard limit|api usage limits",
    re.IGNORECASE,
)
#: AWS error codes (AWS names each ``...Exception``) among the dialects' tokens: given
#: by ``x-amzn-errortype``, ``__type``, botocore's ``Error.Code`` or a stream's exception
#: event, they outrank the HTTP status.
_AWS_CODES: Final[dict[str, str]] = {
    token: kind for token, kind in _TOKENS.items() if token.endswith("exception")
}
_CODE_WORD: Final = re.compile(r"\b(?:[a-z]+(?:_[a-z]+)+|[A-Z]+(?:_[A-Z]+)*)\b")

_TIMEOUT_NAMES: Final = frozenset({"TimeoutError", "DeadlineExceeded"})
_CONNECTION_NAMES: Final = frozenset(
    {
        "ConnectError",
        "ConnectionError",
        "RemoteProtocolError",
        "ReadError",
        "WriteError",
        "CloseError",
        "NetworkError",
        "ServerDisconnectedError",
        "ClientPayloadError",
        "IncompleteRead",
        "IncompleteReadError",
        "ChunkedEncodingError",
    }
)

_HINTS: Final[dict[str, str]] = {
    "insufficient_balance": (
        "account balance, credit or spending limit exhausted: top up, do not retry"
    ),
    "auth_error": "API key missing, wrong, or sent in the wrong header",
    "permission_denied": "the key is valid but may not use this model or resource",
    "content_filter": "the provider's content policy blocked the request or the answer",
}


def classify_error(
    status: int | None,
    headers: Mapping[str, str],
    body: bytes | str | Mapping[str, Any] | None,
    exc: BaseException | None = None,
    *,
    url: str | None = None,
) -> ErrorClass:
    """Class one failed request from its HTTP status, headers, body and/or exception.

    Total: any input yields an ``ErrorClass`` (``_OTHER`` when nothing is recognised).
    """
    try:
        return _classify(status, headers, body, exc, url)
    except Exception:  # noqa: BLE001 - classification must never raise
        return ErrorClass("_OTHER", False, status=status if isinstance(status, int) else None)


def classify_problem(problem: Problem) -> ErrorClass | None:
    """The error class of a stream problem, or None for problems that are not failures.

    ``error_event`` becomes the provider's own class when its type is a retry-relevant
    one (``overloaded_error`` -> ``overloaded``...), else ``stream_error_event``;
    ``truncated_stream`` keeps its name.
    """
    if problem.kind not in ERROR_KINDS:
        return None
    if problem.kind == "truncated_stream":
        return _make("truncated_stream")
    aws = _AWS_CODES.get(problem.detail.lower()) if problem.kind == "error_event" else None
    if aws is not None:
        return _make(aws)
    text = " ".join(t for t in (problem.detail, problem.received) if t)
    if _BALANCE.search(text):
        return _make("insufficient_balance")
    # Only code-like words (snake_case or UPPER_CASE): prose such as "unavailable" is not a type.
    for word in _CODE_WORD.findall(text):
        kind = _TOKENS.get(word.lower())
        if kind in ("overloaded", "rate_limited", "content_filter", "server_error", "timeout"):
            return _make(kind)
    return _make("stream_error_event")


def _classify(
    status: int | None,
    headers: Mapping[str, str],
    body: bytes | str | Mapping[str, Any] | None,
    exc: BaseException | None,
    url: str | None,
) -> ErrorClass:
    if exc is not None:
        status, headers, body = _from_exception(exc, status, headers, body)
    low = _lower_headers(headers)
    info = _ErrorBody(body)
    aws = _aws_code(low.get("x-amzn-errortype")) or info.aws_code
    if aws is not None:
        retry_after = _retry_after(low)
        return _make(aws, retry_after=retry_after, status=status)
    retry_after = _retry_after(low)
    if retry_after is None:
        retry_after = info.retry_delay
    kind = _kind(status, info, exc)
    hint = _url_hint(url) if kind == "not_found" else None
    model_named = kind == "not_found" and re.search(r"\bmodel\b", info.message, re.IGNORECASE)
    if hint is None and ("model_not_found" in info.tokens or model_named):
        hint = "the model name is unknown to this endpoint"
    return _make(kind, retry_after=retry_after, status=status, hint=hint)


def _kind(status: int | None, info: _ErrorBody, exc: BaseException | None) -> str:
    named = info.kinds()
    if "content_filter" in named:
        return "content_filter"
    if status in (None, 200, 400, 402, 403, 429) and info.out_of_balance():
        return "insufficient_balance"
    if status == 402:
        return "insufficient_balance"
    if status == 529 or ("overloaded" in named and status in (None, 200, 503)):
        return "overloaded"
    if status == 503 and any(w in info.message.lower() for w in ("overloaded", "server busy")):
        return "overloaded"
    if status == 400 and "auth_error" in named:  # Google: a bad key is a 400
        return "auth_error"
    by_status = _by_status(status)
    if by_status is not None:
        return by_status
    if named:
        return named[0]
    if exc is not None:
        return _by_exception_name(exc)
    return "_OTHER"


def _aws_code(value: Any) -> str | None:
    """The error_type of an AWS error code (``ThrottlingException:http://...``,
    ``com.amazon.coral#ThrottlingException``); None for any other value."""
    if not isinstance(value, str) or not value:
        return None
    code = value.split(":", 1)[0].rsplit("#", 1)[-1]
    return _AWS_CODES.get(code.lower())


def _by_status(status: int | None) -> str | None:
    if status is None or status < 400:
        return None
    if status >= 500:
        return "server_error"
    return {
        401: "auth_error",
        403: "permission_denied",
        404: "not_found",
        408: "timeout",
        400: "bad_request",
        413: "bad_request",
        422: "bad_request",
        429: "rate_limited",
    }.get(status, "_OTHER")


def _by_exception_name(exc: BaseException) -> str:
    for klass in type(exc).__mro__:
        name = klass.__name__
        if "Timeout" in name or name in _TIMEOUT_NAMES:
            return "timeout"
        if name in _CONNECTION_NAMES or name.endswith("ConnectionError"):
            return "connection_error"
    return "_OTHER"


def _from_exception(
    exc: BaseException,
    status: int | None,
    headers: Mapping[str, str],
    body: Any,
) -> tuple[int | None, Mapping[str, str], Any]:
    """Fill what the caller did not pass from SDK error attributes (no I/O)."""
    if status is None:
        for attr in ("status_code", "code"):  # openai/anthropic; google-genai
            value = getattr(exc, attr, None)
            if isinstance(value, int) and not isinstance(value, bool) and 100 <= value < 600:
                status = value
                break
    if not headers:
        found = getattr(getattr(exc, "response", None), "headers", None)
        if isinstance(found, Mapping):
            headers = found
    if body is None:
        for attr in ("body", "details"):  # openai/anthropic; google-genai
            value = getattr(exc, attr, None)
            if isinstance(value, (Mapping, list, str, bytes)):
                body = value
                break
    response = getattr(exc, "response", None)
    error = response.get("Error") if isinstance(response, Mapping) else None
    if isinstance(error, Mapping):  # botocore's ClientError: the parsed error response
        meta = response.get("ResponseMetadata") if isinstance(response, Mapping) else None
        meta = meta if isinstance(meta, Mapping) else {}
        code = meta.get("HTTPStatusCode")
        if status is None and isinstance(code, int) and not isinstance(code, bool):
            status = code
        found = meta.get("HTTPHeaders")
        if not headers and isinstance(found, Mapping):
            headers = found
        if body is None:
            body = {"__type": error.get("Code"), "message": error.get("Message")}
    return status, headers, body


class _ErrorBody:
    """The parts of a provider error body that matter: type tokens, message, retry delay."""

    __slots__ = ("aws_code", "message", "retry_delay", "tokens")

    def __init__(self, body: Any) -> None:
        self.tokens: list[str] = []  # most specific first: code, type, status
        self.message = ""
        self.retry_delay: float | None = None
        self.aws_code: str | None = None  # the error_type of an AWS ``__type``
        if isinstance(body, (bytes, bytearray)):
            body = bytes(body).decode("utf-8", "replace")
        if isinstance(body, str):
            try:
                body = loads_str(body)
            except ValueError:
                self.message = body[:2000]
                return
        if isinstance(body, list) and body:  # Google streams errors as a one-item array
            body = body[0]
        if not isinstance(body, Mapping):
            return
        self.aws_code = _aws_code(body.get("__type"))
        err = body.get("error", body)
        if isinstance(err, str):
            self.message = err
            return
        if not isinstance(err, Mapping):
            return
        inner = err.get("innererror")
        for value in (
            err.get("code"),
            inner.get("code") if isinstance(inner, Mapping) else None,
            err.get("type"),
            err.get("status"),
            *_google_reasons(err.get("details")),
        ):
            if isinstance(value, str) and value:
                self.tokens.append(value.lower())
        if self.aws_code is None:  # an AWS code as the error's type (anthropic on Bedrock)
            self.aws_code = next((_AWS_CODES[t] for t in self.tokens if t in _AWS_CODES), None)
        meta = err.get("metadata")
        raw = meta.get("raw") if isinstance(meta, Mapping) else None
        self.message = " ".join(str(m) for m in (err.get("message"), raw) if m)
        self.retry_delay = _google_retry_delay(err.get("details"))

    def kinds(self) -> list[str]:
        """The error_types the body's tokens name, most specific first."""
        return [_TOKENS[t] for t in self.tokens if t in _TOKENS]

    def out_of_balance(self) -> bool:
        if any(_TOKENS.get(t) == "insufficient_balance" for t in self.tokens):
            return True
        return bool(_BALANCE.search(self.message))


def _google_reasons(details: Any) -> list[Any]:
    """``google.rpc.ErrorInfo.reason`` values (for example ``API_KEY_INVALID``)."""
    if not isinstance(details, list):
        return []
    return [d.get("reason") for d in details if isinstance(d, Mapping) and "reason" in d]


def _google_retry_delay(details: Any) -> float | None:
    """``google.rpc.RetryInfo.retryDelay`` (for example ``"37s"``) from ``error.details``."""
    if not isinstance(details, list):
        return None
    for item in details:
        if isinstance(item, Mapping) and str(item.get("@type", "")).endswith("RetryInfo"):
            delay = item.get("retryDelay")
            if isinstance(delay, str) and delay.endswith("s"):
                try:
                    return max(0.0, float(delay[:-1]))
                except ValueError:
                    return None
    return None


def _lower_headers(headers: Mapping[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in headers.items():
        k = key.decode("latin-1") if isinstance(key, bytes) else str(key)
        v = value.decode("latin-1") if isinstance(value, bytes) else str(value)
        out[k.lower()] = v
    return out


def _retry_after(headers: dict[str, str]) -> float | None:
    """Seconds to wait: ``retry-after-ms``, else ``Retry-After`` (seconds or an HTTP-date)."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    now = time.time()
    date = headers.get("date")  # measure against the server's clock when it says it
    if date is not None:
        with contextlib.suppress(TypeError, ValueError, IndexError, OverflowError):
            now = parsedate_to_datetime(date).timestamp()
    return max(0.0, when - now)


def _url_hint(url: str | None) -> str | None:
    """A hint for the usual 404 cause: a base URL with ``/v1`` doubled or missing."""
    if not url:
        return None
    after_scheme = url.split("://", 1)[-1]
    path, _, query = after_scheme.partition("?")
    path = "/" + path.partition("/")[2]
    if re.search(r"/(v\d+(?:beta\d*|alpha\d*)?)/\1(?:/|$)", path):
        return "the URL path repeats its version segment (e.g. /v1/v1): check the base URL"
    if not re.search(r"/v\d+(?:beta\d*|alpha\d*)?(?:/|$)", path) and "api-version=" not in query:
        return "the URL path has no version segment (e.g. /v1): check the base URL"
    return None


def _make(
    kind: str,
    *,
    retry_after: float | None = None,
    status: int | None = None,
    hint: str | None = None,
) -> ErrorClass:
    if hint is None:
        hint = _HINTS.get(kind)
    return ErrorClass(kind, ERROR_TYPES[kind], retry_after, status, hint)
