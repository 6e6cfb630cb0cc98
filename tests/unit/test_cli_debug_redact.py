"""`--debug` prints botocore's lines with every credential taken out (reaper.cli.debug.redact), whatever the
signature's first character: a hex signature beginning with `b` was once read as a bytes repr's prefix, and the
line kept `Signature=b***` (a fresh clone's run found it: 1 request in 16)."""

from __future__ import annotations

import pytest

from reaper.cli.debug import REDACTED, redact

SIGNATURES = ["b3f0c2a9e1d4", "0a1b2c3d4e5f", "bbbbbbbbbbbb", "fedcba987654"]


@pytest.mark.parametrize("signature", SIGNATURES)
def test_a_signed_headers_line_keeps_no_character_of_the_signature(signature):
    # Given botocore's debug line of a signed request's headers (the Authorization value a bytes repr)
    line = (
        "Sending http request: <AWSPreparedRequest headers={'Authorization': b'AWS4-HMAC-SHA256 "
        "Credential=AKIDEXAMPLE/20261205/us-east-1/sts/aws4_request, SignedHeaders=host;x-amz-date, "
        f"Signature={signature}', 'X-Amz-Date': b'20261205T212214Z'}}>"
    )
    # When it is redacted
    out = redact(line)
    # Then the signature is gone whole
    assert f"Signature={REDACTED}'" in out and signature not in out
    assert "'Authorization': b'" + REDACTED in out


@pytest.mark.parametrize("signature", SIGNATURES)
def test_a_presigned_query_keeps_no_character_of_the_signature(signature):
    out = redact(f"GET https://example.com/x?X-Amz-Date=20261205T212214Z&X-Amz-Signature={signature}&X-Amz-Expires=60")
    assert f"X-Amz-Signature={REDACTED}&" in out and signature not in out
