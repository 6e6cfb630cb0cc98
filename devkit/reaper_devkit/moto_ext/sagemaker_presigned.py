"""CreatePresignedNotebookInstanceUrl and CreatePresignedDomainUrl, which moto 5.2.5 lacks, as the
notebook and studio-app kinds meet them on AWS.

https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreatePresignedNotebookInstanceUrl.html
- SessionExpirationDurationInSeconds: "Valid Range: Minimum value of 1800. Maximum value of 43200"
  (ValidationException outside it); the notebook must exist (ValidationException, as DescribeNotebookInstance).
- The answer is `AuthorizedUrl`, "valid only for 5 minutes": on AWS
  `https://NAME.notebook.REGION.sagemaker.aws?authToken=TOKEN`; here, for a notebook a test has given a
  stand-in for the hop (`reaper_devkit.jupyter_hop`), `HOP/NAME?authToken=TOKEN`, the token recorded
  with its notebook and expiry so the stand-in can check it as SageMaker does.
- An account that restricts the API ("Use the NotIpAddress condition operator and the aws:SourceIP
  condition context key") refuses the call with AccessDeniedException: `refuse(name)` makes it so.

https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreatePresignedDomainUrl.html
- "This operation can only be called when the authentication mode equals IAM": a domain in SSO mode
  is refused (ValidationException). The domain, the user profile (required) and the space (optional)
  must exist: the reference's one error is ResourceNotFound.
- SessionExpirationDurationInSeconds "Minimum value of 1800. Maximum value of 43200";
  ExpiresInSeconds "Minimum value of 5. Maximum value of 300" (ValidationException outside them).
- The answer is `AuthorizedUrl`; "If you try to use the URL after the timeout limit expires, you are
  directed to the AWS console sign-in page." On AWS `https://DOMAIN.studio.REGION.sagemaker.aws/auth?token=T`;
  here, for a domain a test has given a stand-in for the hop, `HOP/studio/DOMAIN/auth?token=T`, the token
  recorded with its user profile, space, LandingUri and expiry so the stand-in can check and route it.
- "You can restrict access to this API and to the URL that it returns to a list of IP addresses,
  Amazon VPCs or Amazon VPC Endpoints": `refused_apps` refuses the call (AccessDeniedException).
The state lives on moto's backend, so in-process and server mode (ThreadedMotoServer) alike.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from moto.core.exceptions import JsonRESTError
from moto.core.responses import ActionResult
from moto.sagemaker import responses
from moto.sagemaker.exceptions import ResourceNotFound, ValidationError

from reaper_devkit.moto_ext.sagemaker_studio import store as studio

URL_LIFETIME = timedelta(minutes=5)


@dataclass
class Issued:
    notebook: str
    expires: datetime
    session_seconds: int


@dataclass
class IssuedDomain:
    domain: str
    user_profile: str
    space: str | None
    landing: str | None
    expires: datetime
    session_seconds: int

    @property
    def owner(self) -> str:
        """What the URL opens: the space, or (no space) the user profile's own apps (Studio Classic)."""
        return self.space or self.user_profile


@dataclass
class PresignStore:
    hops: dict[str, str] = field(default_factory=dict)  # notebook -> the stand-in hop's base URL
    refused: set[str] = field(default_factory=set)  # notebooks whose URL the account refuses
    tokens: dict[str, Issued] = field(default_factory=dict)  # issued and not yet used
    issued: list[str] = field(default_factory=list)  # every token issued (tests: none may leak)
    calls: list[str] = field(default_factory=list)  # the notebooks asked for
    studio_hops: dict[str, str] = field(default_factory=dict)  # domain -> the stand-in hop's base URL
    refused_apps: set[tuple[str, str]] = field(default_factory=set)  # (domain, space or user profile) refused
    studio_tokens: dict[str, IssuedDomain] = field(default_factory=dict)  # issued and not yet used
    studio_calls: list[tuple[str, str, str | None, str | None]] = field(default_factory=list)  # (domain, user, space, landing)


def store(backend: Any) -> PresignStore:
    found: PresignStore | None = getattr(backend, "_reaper_presign", None)
    if found is None:
        found = PresignStore()
        backend._reaper_presign = found
    return found


class AccessDenied(JsonRESTError):
    code = 400

    def __init__(self, message: str) -> None:
        super().__init__("AccessDeniedException", message)


def create_presigned_notebook_instance_url(self: Any) -> ActionResult:
    backend, name = self.sagemaker_backend, self._get_param("NotebookInstanceName")
    seconds = self._get_param("SessionExpirationDurationInSeconds", 43_200)
    if not 1_800 <= int(seconds) <= 43_200:
        raise ValidationError(message=f"SessionExpirationDurationInSeconds {seconds}: must be 1800 to 43200")
    backend.get_notebook_instance(name)  # ValidationException RecordNotFound, as AWS
    s = store(backend)
    s.calls.append(name)
    if name in s.refused:
        raise AccessDenied(
            f"User is not authorized to perform: sagemaker:CreatePresignedNotebookInstanceUrl on resource: notebook-instance/{name} "
            "with an explicit deny in an identity-based policy"
        )
    token = secrets.token_urlsafe(24)
    s.issued.append(token)
    s.tokens[token] = Issued(name, datetime.now(UTC) + URL_LIFETIME, int(seconds))
    base = s.hops.get(name, f"https://{name}.notebook.{backend.region_name}.sagemaker.aws")
    sep = "/" + name if name in s.hops else ""
    return ActionResult({"AuthorizedUrl": f"{base}{sep}?authToken={token}"})


def _domain_url_params(self: Any) -> tuple[str, str, str | None, str | None, int, int]:
    p = self._get_param
    session, expires = int(p("SessionExpirationDurationInSeconds", 43_200)), int(p("ExpiresInSeconds", 300))
    if not 1_800 <= session <= 43_200:
        raise ValidationError(message=f"SessionExpirationDurationInSeconds {session}: must be 1800 to 43200")
    if not 5 <= expires <= 300:
        raise ValidationError(message=f"ExpiresInSeconds {expires}: must be 5 to 300")
    return p("DomainId"), p("UserProfileName"), p("SpaceName"), p("LandingUri"), session, expires


def create_presigned_domain_url(self: Any) -> ActionResult:
    backend = self.sagemaker_backend
    domain_id, user, space, landing, session, expires = _domain_url_params(self)
    domain = backend.domains.get(domain_id)
    if domain is None:
        raise ResourceNotFound(message=f"Domain '{domain_id}' not found.")
    if str(domain.auth_mode).upper() != "IAM":
        raise ValidationError(message="This operation can only be called when the authentication mode equals IAM.")
    prefix = f"arn:aws:sagemaker:{backend.region_name}:{backend.account_id}"
    if f"{prefix}:user-profile/{domain_id}/{user}" not in studio(backend).profiles:
        raise ResourceNotFound(message=f"User profile '{user}' does not exist.")
    if space and f"{prefix}:space/{domain_id}/{space}" not in studio(backend).spaces:
        raise ResourceNotFound(message=f"Space '{space}' does not exist.")
    s = store(backend)
    s.studio_calls.append((domain_id, user, space, landing))
    issued = IssuedDomain(domain_id, user, space, landing, datetime.now(UTC) + timedelta(seconds=expires), session)
    if (domain_id, issued.owner) in s.refused_apps:
        raise AccessDenied(
            f"User is not authorized to perform: sagemaker:CreatePresignedDomainUrl on resource: user-profile/{domain_id}/{user} "
            "with an explicit deny in an identity-based policy"
        )
    token = secrets.token_urlsafe(24)
    s.issued.append(token)
    s.studio_tokens[token] = issued
    base = (
        f"{s.studio_hops[domain_id]}/studio/{domain_id}"
        if domain_id in s.studio_hops
        else f"https://{domain_id}.studio.{backend.region_name}.sagemaker.aws"
    )
    return ActionResult({"AuthorizedUrl": f"{base}/auth?token={token}"})


def apply() -> None:
    responses.SageMakerResponse.create_presigned_notebook_instance_url = create_presigned_notebook_instance_url
    responses.SageMakerResponse.create_presigned_domain_url = create_presigned_domain_url
