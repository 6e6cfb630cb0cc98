"""moto's EC2, taught two things it lacks for the ec2 kind, and a way to shape seeded instances.

1. A Spot instance launched by a Spot request reports its request (SpotInstanceRequestId in
   DescribeInstances), as in EC2; moto leaves it out, so no Spot instance could be judged stoppable.
2. `shape()` sets what RunInstances cannot in moto: an earlier LaunchTime (moto stamps "now", so a
   seeded instance would always be "just started") and an instance-store root device (moto makes
   every root EBS). It edits the in-process backend, which a ThreadedMotoServer shares.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from moto.ec2.exceptions import InvalidInstanceIdError
from moto.ec2.models import ec2_backends
from moto.ec2.models.spot_requests import SpotInstanceRequest


def apply() -> None:
    if getattr(SpotInstanceRequest, "_reaper_links_instance", False):
        return
    original = SpotInstanceRequest.launch_instance

    def launch_instance(self: Any) -> Any:
        instance = original(self)
        instance.spot_instance_request_id = self.id
        return instance

    SpotInstanceRequest.launch_instance = launch_instance  # type: ignore[method-assign]
    SpotInstanceRequest._reaper_links_instance = True  # type: ignore[attr-defined]

    # Monitoring.Enabled is required in a spot request's LaunchSpecification and defaults to false
    # (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_RunInstancesMonitoringEnabled.html);
    # moto leaves it out when the request did not set it.
    from moto.ec2.models.spot_requests import LaunchSpecification

    LaunchSpecification.monitoring = property(lambda self: {"Enabled": bool(self.monitored)})  # type: ignore[method-assign,assignment]


def _instance(instance_id: str) -> Any:
    """The backend's instance of that id (moto's get_instance: indexed by moto_ext.ec2_lookups)."""
    for account in list(ec2_backends):
        for region in list(ec2_backends[account]):
            backend = ec2_backends[account][region]
            if not backend.reservations:
                continue
            try:
                return backend.get_instance(instance_id)
            except InvalidInstanceIdError:
                continue
    raise KeyError(f"no moto instance {instance_id}")


def shape(instance_id: str, *, launched_at: datetime | None = None, root_device_type: str | None = None) -> None:
    inst = _instance(instance_id)
    if launched_at is not None:
        inst.launch_time = launched_at.astimezone(UTC).replace(tzinfo=None) if launched_at.tzinfo else launched_at  # moto keeps naive UTC
    if root_device_type is not None:
        inst.root_device_type = root_device_type
