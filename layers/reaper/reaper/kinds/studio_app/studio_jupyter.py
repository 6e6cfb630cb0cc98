"""A Studio app's own Jupyter server, for the JupyterLab and Studio Classic JupyterServer apps nothing else
judges (JupyterReads=on): the built-in idle shutdown is off (its domain's, or its user profile's), or the app runs a custom image, or
it is a classic JupyterServer app on a billed instance.

The door is CreatePresignedDomainUrl (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreatePresignedDomainUrl.html),
signed in as the space's owner (UserProfileName is required; a private space opens only for its owner)
with SpaceName for a JupyterLab space, or as the app's user profile without a space for Studio Classic;
the shortest session the API allows (SessionExpirationDurationInSeconds 1,800) and a URL that expires
in EXPIRES_SECONDS (ExpiresInSeconds 5 to 300); LandingUri `app:JupyterLab:api/status` ("Directs users to
the relative path in the JupyterLab application"), `app:JupyterServer:api/status` for Studio Classic, so
the hop lands on the Jupyter server's own read-only status, never on a Studio page. The reading itself is
the one every kind shares (reaper.aws.jupyter): the hop without JavaScript, three read-only GETs, the
URL never logged, a bound on concurrency and time.

Never starts an app: AWS does not document what opening the URL of an app that is not running does
(a browser's Studio may start it, which costs), so the app is described (DescribeApp) just before its
URL is asked for, and only an app InService at that moment is opened. A domain in IAM Identity Center
mode cannot be opened this way ("This operation can only be called when the authentication mode
equals IAM"): its apps are not read (rules say so).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from botocore.exceptions import ClientError

from reaper.aws import jupyter
from reaper.aws.faults import error_code
from reaper.core.jupyter_verdict import JupyterReading
from reaper.core.model import Resource
from reaper.kinds.studio_app.model import AppFacts

PERMISSION = "sagemaker:CreatePresignedDomainUrl"
SESSION_SECONDS = 1_800  # SessionExpirationDurationInSeconds: 1,800 to 43,200
EXPIRES_SECONDS = 60  # ExpiresInSeconds: 5 to 300; the URL is followed at once, by the thread that asked for it
LANDING = "api/status"

REFUSED_FIX = (
    "the account refuses the reaper the app's URL (CreatePresignedDomainUrl or the URL itself is denied, e.g. by an "
    "aws:SourceIp, aws:SourceVpc or aws:sourceVpce condition): exclude the studio-app function's role from that Deny "
    "(aws:PrincipalArn), or turn on the domain's built-in idle shutdown"
)
DOOR = jupyter.Door("CreatePresignedDomainUrl", "the app's presigned URL", REFUSED_FIX, landing=LANDING)


def landing_uri(facts: AppFacts) -> str:
    """LandingUri: the app's Jupyter server, at its status (JupyterLab in a space; JupyterServer in Studio Classic)."""
    return f"app:{facts.app_type}:{LANDING}"


def _owner(facts: AppFacts) -> dict[str, str]:
    return {"SpaceName": facts.space} if facts.space else {"UserProfileName": facts.user_profile or ""}


def _in_service_now(sagemaker: Any, facts: AppFacts) -> None:
    """Failed unless DescribeApp says InService at this moment: the URL of an app not running is never opened."""
    try:
        status = sagemaker.describe_app(DomainId=facts.domain_id, AppType=facts.app_type, AppName=facts.app_name, **_owner(facts))["Status"]
    except ClientError as exc:
        raise jupyter.Failed(jupyter.UNREACHABLE, f"DescribeApp failed ({error_code(exc)}): the app's URL was not asked for") from None
    if status != "InService":
        raise jupyter.Failed(jupyter.UNREACHABLE, f"the app is {status} now: its URL is not opened (opening it could start it)")


def _presign(sagemaker: Any, facts: AppFacts) -> str:
    _in_service_now(sagemaker, facts)
    args: dict[str, str | int] = {  # CreatePresignedDomainUrl's arguments
        "DomainId": facts.domain_id,
        "UserProfileName": facts.sign_in_as or "",
        "SessionExpirationDurationInSeconds": SESSION_SECONDS,
        "ExpiresInSeconds": EXPIRES_SECONDS,
        "LandingUri": landing_uri(facts),
    }
    if facts.space:
        args["SpaceName"] = facts.space
    return jupyter.presigned(DOOR, lambda: sagemaker.create_presigned_domain_url(**args))


def read_all(sagemaker: Any, apps: Sequence[Resource], turn: int = 0) -> dict[str, JupyterReading]:
    """{app id: its reading}, for every app (a reading that failed or was not reached says why); `turn`
    rotates which are read first (aws/jupyter.py reading_order)."""
    return jupyter.read_all(DOOR, {r.id: partial(_presign, sagemaker, r.facts_as(AppFacts)) for r in apps}, turn=turn)
