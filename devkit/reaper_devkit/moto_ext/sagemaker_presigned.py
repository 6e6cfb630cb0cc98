"""CreatePresignedNotebookInstanceUrl, which moto 5.2.5 lacks, as the notebook kind meets it on AWS.

https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreatePresignedNotebookInstanceUrl.html
- SessionExpirationDurationInSeconds: "Valid Range: Minimum value of 1800. Maximum value of 43200"
  (ValidationException outside it); the notebook must exist (ValidationException, as DescribeNotebookInstance).
- The answer is `AuthorizedUrl`, "valid only for 5 minutes": on AWS
  `https://NAME.notebook.REGION.sagemaker.aws?authToken=TOKEN`; here, for a notebook a test has given a
  stand-in for the hop (`reaper_devkit.jupyter_hop`), `HOP/NAME?authToken=TOKEN`, the token recorded
  with its notebook and expiry so the stand-in can check it as SageMaker does.
- An account that restricts the API ("Use the NotIpAddress condition operator and the aws:SourceIP
  condition context key") refuses the call with AccessDeniedException: `refuse(name)` makes it so.
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
from moto.sagemaker.exceptions import ValidationError

URL_LIFETIME = timedelta(minutes=5)


@dataclass
class Issued:
    notebook: str
    expires: datetime
    session_seconds: int


@dataclass
class PresignStore:
    hops: dict[str, str] = field(default_factory=dict)  # notebook -> the stand-in hop's base URL
    refused: set[str] = field(default_factory=set)  # notebooks whose URL the account refuses
    tokens: dict[str, Issued] = field(default_factory=dict)  # issued and not yet used
    issued: list[str] = field(default_factory=list)  # every token issued (tests: none may leak)
    calls: list[str] = field(default_factory=list)  # the notebooks asked for


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


def apply() -> None:
    responses.SageMakerResponse.create_presigned_notebook_instance_url = create_presigned_notebook_instance_url
