"""``redacted`` and ``mask_secrets``: AWS credentials masked as the other providers' keys
are, in the forms an error message, a header or a body shows them; JSON stays JSON; look-
alikes that are not credentials are left alone."""

from __future__ import annotations

import json

import pytest

from tooltap._core.errors import MASK, mask_secrets, redacted
from tooltap._core.model import Problem

KEY_ID = "AKIAIOSFODNN7EXAMPLE"
TEMP_KEY_ID = "ASIAQ3EGUKXYZ7EXAMPL"
SECRET_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
TOKEN = "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD+abc=="
SIGNATURE = "fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024"
SIGV4 = (
    f"AWS4-HMAC-SHA256 Credential={KEY_ID}/20261202/us-east-1/bedrock/aws4_request, "
    f"SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, Signature={SIGNATURE}"
)

ECHOES = {
    "key id": f"The security token included in the request is invalid: {KEY_ID}.",
    "temporary key id": f"User {TEMP_KEY_ID} is not authorized",
    "sigv4 header": f"Authorization: {SIGV4}",
    "canonical request": f"Canonical string: ... Credential={KEY_ID}/20261202 ... {SIGV4}",
    "token header": f"X-Amz-Security-Token: {TOKEN}",
    "presigned query": (
        f"/model/m/invoke?X-Amz-Credential={KEY_ID}%2F20261202&X-Amz-Signature={SIGNATURE}"
        f"&x-amz-security-token={TOKEN}"
    ),
    "config": f"aws_secret_access_key = {SECRET_KEY}\naws_session_token={TOKEN}",
    "sdk arguments": f"AnthropicBedrock(aws_secret_key='{SECRET_KEY}')",
    "json": json.dumps({"SecretAccessKey": SECRET_KEY, "SessionToken": TOKEN}),
    "json in a json string": json.dumps(
        {"arguments": json.dumps({"aws_secret_access_key": SECRET_KEY, "session_token": TOKEN})}
    ),
}


@pytest.mark.parametrize("text", list(ECHOES.values()), ids=list(ECHOES))
def test_aws_credentials_are_masked(text: str) -> None:
    masked = mask_secrets(text)
    assert MASK in masked
    for secret in (KEY_ID, TEMP_KEY_ID, SECRET_KEY, TOKEN, SIGNATURE):
        assert secret not in masked
    assert "us-east-1/bedrock" not in masked  # the whole credential scope goes


def test_a_masked_json_body_is_still_json() -> None:
    body = json.dumps(
        {
            "headers": {"x-amz-security-token": TOKEN, "authorization": SIGV4},
            "config": {"aws_secret_access_key": SECRET_KEY, "region": "us-east-1"},
        }
    )
    decoded = json.loads(mask_secrets(body))
    assert decoded == {
        "headers": {"x-amz-security-token": MASK, "authorization": MASK},
        "config": {"aws_secret_access_key": MASK, "region": "us-east-1"},
    }


def test_a_masked_value_ends_before_a_quote_or_an_escape() -> None:
    inner = json.dumps({"session_token": f'{TOKEN}"quoted"', "auth": "Bearer abcdefgh"})
    body = json.dumps({"arguments": inner, "headers": {"authorization": "Bearer sk_live"}})
    decoded = json.loads(mask_secrets(body))
    assert decoded["headers"] == {"authorization": MASK}
    assert json.loads(decoded["arguments"]) == {
        "session_token": f'{MASK}"quoted"',
        "auth": MASK,
    }


@pytest.mark.parametrize(
    "text",
    [
        "akiaiosfodnn7example is lower case",  # key ids are upper case
        f"AKIA{'X' * 15} is one short",
        f"sha256 {SIGNATURE} of a file",  # a bare digest is no credential
        "session_token: short",  # a value this short is no token
        "Use secret_access_key from the environment.",
    ],
)
def test_lookalikes_are_left_alone(text: str) -> None:
    assert mask_secrets(text) == text


def test_redacted_masks_an_error_event_from_bedrock() -> None:
    problem = Problem(
        "error_event", detail=f"accessDeniedException {KEY_ID}", received=ECHOES["token header"]
    )
    clean = redacted(problem)
    assert KEY_ID not in (clean.detail or "") and TOKEN not in (clean.received or "")
    assert redacted(clean) is clean  # nothing left to mask
