"""AWS credentials never reach telemetry: real boto3 calls, signed with canary credentials
(access key id, secret key, session token), against a server whose answers echo them, as
an AWS signature error does (the key id, the SigV4 ``Authorization`` value, the token).

No canary, nor the signature boto3 sent, may appear in any exported span, listener event
or flight record (every response recorded, its body decoded), in any content mode.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import string
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, EventStreamError

from tests.recorder import Recorder
from tests.reliability.support import Canned, ReplayServer
from tooltap._core.flight import decode
from tooltap._telemetry.telemetry import get_telemetry
from tooltap.simulator._eventstream import exception_message

MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"
MESSAGES = [{"role": "user", "content": [{"text": "How tall am I?"}]}]


def _canaries() -> dict[str, str]:
    upper = string.ascii_uppercase + string.digits
    return {
        "aws_access_key_id": "AKIA" + "".join(secrets.choice(upper) for _ in range(16)),
        "aws_secret_access_key": secrets.token_urlsafe(30)[:40],
        "aws_session_token": "IQoJb3JpZ2luX2Vj" + secrets.token_hex(40),
    }


def _echo(creds: dict[str, str]) -> str:
    """What an AWS signature error says: the canonical request and the string to sign."""
    key, token = creds["aws_access_key_id"], creds["aws_session_token"]
    return (
        "The request signature we calculated does not match the signature you provided. "
        f"Authorization: AWS4-HMAC-SHA256 Credential={key}/20261202/us-east-1/bedrock/"
        f"aws4_request, SignedHeaders=host;x-amz-date, Signature={'ab' * 32}; "
        f"X-Amz-Security-Token: {token}; access key {key}"
    )


def _client(url: str, creds: dict[str, str]) -> Any:
    config = Config(retries={"total_max_attempts": 1, "mode": "standard"})
    return boto3.client(
        "bedrock-runtime", endpoint_url=url, region_name="us-east-1", config=config, **creds
    )


def _recorded(directory: Path) -> str:
    """Every flight record, header and decoded body, as text."""
    tel = get_telemetry()
    assert tel is not None and tel.flight is not None and tel.flight.writer.drain(10)
    records = [decode(p.read_bytes()) for p in sorted(directory.glob("tooltap-flight-*"))]
    assert records
    parts = [repr(r) + r.body.decode("latin-1") for r in records]
    return "\n".join(parts)


@pytest.mark.parametrize("mode", ["NO_CONTENT", "SPAN_AND_EVENT"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_no_aws_credential_in_telemetry(
    replay: ReplayServer, recorder: Recorder, tmp_path: Path, mode: str, stream: bool
) -> None:
    creds = _canaries()
    echo = _echo(creds)
    if stream:  # the stream ends at once with an exception message that echoes them
        body = exception_message("accessDeniedException", echo)
        replay.canned = Canned(
            200, [("content-type", "application/vnd.amazon.eventstream")], [body]
        )
    else:
        error = json.dumps({"message": echo}).encode()
        headers = [("content-type", "application/json"), ("x-amzn-errortype", "AccessDenied")]
        replay.canned = Canned(403, headers, [error])
    recorder.instrument(capture_content=mode, flight_recorder=tmp_path, flight_recorder_all=True)
    replay.seen.clear()
    bedrock = _client(replay.url, creds)
    with contextlib.suppress(ClientError, EventStreamError):
        if stream:
            list(bedrock.converse_stream(modelId=MODEL, messages=MESSAGES)["stream"])
        else:
            bedrock.converse(modelId=MODEL, messages=MESSAGES)

    (sent,) = replay.seen
    assert creds["aws_access_key_id"] in sent.headers["authorization"]  # they were sent
    assert sent.headers["x-amz-security-token"] == creds["aws_session_token"]
    signature = sent.headers["authorization"].rpartition("Signature=")[2]
    (span,) = recorder.inference()
    assert span.attributes is not None and span.attributes["error.type"]
    emitted = "\n".join(
        [str(s.to_json(indent=None)) for s in recorder.spans()]
        + [repr(e) for e in recorder.events]
        + [_recorded(tmp_path)]
    )
    assert "[redacted]" in emitted  # the echo was recorded, masked
    for secret in (*creds.values(), signature, "ab" * 32):
        assert secret not in emitted
