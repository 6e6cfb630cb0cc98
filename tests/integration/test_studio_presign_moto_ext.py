"""CreatePresignedDomainUrl in the moto extension behaves as API_CreatePresignedDomainUrl documents it, refusals included."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from reaper_devkit import seed_studio as studio
from reaper_devkit.moto_ext.sagemaker_presigned import store


def code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return str(exc.value.response["Error"]["Code"])


@pytest.fixture
def raw(aws: Any) -> Any:
    """A client that leaves the ranges to the service (botocore would refuse some before sending)."""
    return aws.client("sagemaker", config=Config(parameter_validation=False))


def test_a_url_for_a_space_expires_and_is_recorded_with_what_it_opens(aws, sm):
    d = studio.domain(sm, "lab")
    studio.user(sm, d, "ana")
    studio.space(sm, d, "ana-lab", owner="ana")
    url = sm.create_presigned_domain_url(
        DomainId=d, UserProfileName="ana", SpaceName="ana-lab", LandingUri="app:JupyterLab:api/status", ExpiresInSeconds=60
    )["AuthorizedUrl"]
    assert url.startswith(f"https://{d}.studio.us-east-1.sagemaker.aws/auth?token=")
    s = store(aws_backend())
    [issued] = s.studio_tokens.values()
    assert (issued.domain, issued.user_profile, issued.space, issued.landing, issued.session_seconds) == (
        d,
        "ana",
        "ana-lab",
        "app:JupyterLab:api/status",
        43_200,  # "This value defaults to 43200"
    )


@pytest.mark.parametrize(
    "args, expected",
    [
        ({"SessionExpirationDurationInSeconds": 1_799}, "ValidationException"),
        ({"SessionExpirationDurationInSeconds": 43_201}, "ValidationException"),
        ({"ExpiresInSeconds": 4}, "ValidationException"),
        ({"ExpiresInSeconds": 301}, "ValidationException"),
        ({"UserProfileName": "nobody"}, "ResourceNotFound"),
        ({"SpaceName": "no-such-space"}, "ResourceNotFound"),
        ({"DomainId": "d-missing"}, "ResourceNotFound"),
    ],
)
def test_out_of_range_or_missing_is_refused(raw, sm, args, expected):
    d = studio.domain(sm, "lab")
    studio.user(sm, d, "ana")
    with pytest.raises(ClientError) as err:
        raw.create_presigned_domain_url(**{"DomainId": d, "UserProfileName": "ana", **args})
    assert code(err) == expected


def test_an_sso_domain_and_a_denied_space_are_refused(sm):
    sso = studio.domain(sm, "sso", auth_mode="SSO")
    studio.user(sm, sso, "ana")
    with pytest.raises(ClientError) as err:
        sm.create_presigned_domain_url(DomainId=sso, UserProfileName="ana")
    assert code(err) == "ValidationException" and "authentication mode equals IAM" in str(err.value)
    d = studio.domain(sm, "lab")
    studio.user(sm, d, "ana")
    studio.space(sm, d, "ana-lab", owner="ana")
    store(aws_backend()).refused_apps.add((d, "ana-lab"))
    with pytest.raises(ClientError) as err:
        sm.create_presigned_domain_url(DomainId=d, UserProfileName="ana", SpaceName="ana-lab")
    assert code(err) == "AccessDeniedException"
    assert store(aws_backend()).issued == []


def aws_backend() -> Any:
    from moto.sagemaker.models import sagemaker_backends

    return sagemaker_backends["123456789012"]["us-east-1"]
