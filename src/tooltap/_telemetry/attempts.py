"""The attempts of one operation: retries, resends, the failure so far, time to first chunk."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from .._core.model import ErrorClass
from . import semconv as sc
from .inference_span import InferenceSpan
from .telemetry import Telemetry

__all__ = ["Attempts"]


class Attempts:
    """Counts an operation's HTTP attempts and records their failures.

    ``attributes``: the operation's metric attributes (updated in place as requests tell more).
    """

    def __init__(
        self,
        tel: Telemetry,
        attributes: Mapping[str, Any],
        out: InferenceSpan,
        retry_header: str | None,
    ) -> None:
        self._tel = tel
        self._retry_header = retry_header  # the dialect's attempt-number header
        self._attributes = attributes
        self._out = out
        self.started = time.monotonic()  # when the operation started
        self.attempt_started = self.started  # when the current attempt's request was sent
        self._count = 0
        self.resends = 0
        self._retry_error: ErrorClass | None = None  # failed attempt not yet followed by another
        self.failure: ErrorClass | None = None  # the outcome so far, None = success
        self._ttfc_recorded = False

    def begin(self, headers: Mapping[str, str]) -> None:
        """One attempt starts: the dialect's retry header gives its number when present;
        a new attempt after a failed one counts ``tooltap.retries`` with that failure's type."""
        self._count += 1
        self.attempt_started = time.monotonic()
        header = self._retry_header
        retry_count = headers.get(header) if header is not None else None
        resend = self._count - 1
        if retry_count is not None and retry_count.isdigit():
            resend = max(resend, int(retry_count))
        self.resends = max(self.resends, resend)
        if self._count > 1:
            error_type = self._retry_error.error_type if self._retry_error else sc.ERROR_OTHER
            self._tel.instruments.retry(error_type, self._attributes)
        self._retry_error = None

    def failed(self, error: ErrorClass) -> None:
        """The current attempt failed (status, exception, or an error inside the stream)."""
        event: dict[str, Any] = {
            sc.ERROR_TYPE: error.error_type,
            sc.TOOLTAP_RETRYABLE: error.retryable,
        }
        if error.status is not None:
            event[sc.HTTP_RESPONSE_STATUS_CODE] = error.status
        if error.retry_after is not None:
            event[sc.TOOLTAP_RETRY_AFTER] = error.retry_after
        self._out.event(sc.EVENT_ATTEMPT_FAILED, event)
        self._tel.instruments.provider_error(error.error_type, error.retryable, self._attributes)
        self._retry_error = error
        self.failure = error

    def first_chunk(self) -> None:
        """The first body chunk of a streamed response arrived (recorded once per operation)."""
        if not self._ttfc_recorded:
            self._ttfc_recorded = True
            self._tel.instruments.first_chunk(
                time.monotonic() - self.started, self._attributes, self._out.context()
            )
