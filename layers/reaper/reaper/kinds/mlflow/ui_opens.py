"""Who opened a tracking server's MLflow UI: CloudTrail's management events (MlflowReads=on).

The console's "Open MLflow" and `aws sagemaker create-presigned-mlflow-tracking-server-url` both call
CreatePresignedMlflowTrackingServerUrl, a SageMaker API call CloudTrail records as a management event.
One lookup per region of that event name over the idle window (reaper.aws.cloudtrail: paging, the 90 days
LookupEvents keeps, the page limit, a refused lookup) serves every server, matched by the event's
`requestParameters.trackingServerName`. When the window holds more events than the reader's page limit, the
servers none of the read events names are unknown, never idle (kinds/mlflow/signals.py). An event whose record
names no server (truncated, no `requestParameters`, no `trackingServerName`) could be any server's open: the read
is unreadable and every server unknown, as for the Studio spaces' app starts (docs/safety.md, *Attacks on this
round's new surfaces*).
https://docs.aws.amazon.com/awscloudtrail/latest/APIReference/API_LookupEvents.html
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from reaper.aws import cloudtrail
from reaper.core.timeutil import as_utc

EVENT = "CreatePresignedMlflowTrackingServerUrl"


def _server_of(event: cloudtrail.Event) -> str | None:
    params = cloudtrail.request_parameters(event)
    name = params.get("trackingServerName") if params is not None else None
    return name if isinstance(name, str) else None


def opens(trail: Any, names: Iterable[str], start: datetime, end: datetime) -> tuple[dict[str, list[datetime]], bool]:
    """({server: the times its UI URL was asked for}, whether the window was read whole); raises
    cloudtrail.TrailUnreadable when the lookup fails or is refused, or an event's record names no server."""
    wanted = set(names)
    found: dict[str, list[datetime]] = {n: [] for n in wanted}
    lookup = cloudtrail.Lookup(trail, EVENT, start, end)
    for event in lookup:
        name = _server_of(event)
        when = event.get("EventTime")
        if name is None or when is None:  # whose open it was cannot be read: it may be any server's
            raise cloudtrail.TrailUnreadable(f"a CloudTrail {EVENT} event could not be read")
        if name in wanted and when is not None:
            found[name].append(as_utc(when))
    return found, lookup.whole
