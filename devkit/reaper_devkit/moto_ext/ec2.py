"""moto's EC2, taught what it lacks for the ec2 kind, and a way to shape seeded instances.

1. A Spot instance launched by a Spot request reports its request (SpotInstanceRequestId in
   DescribeInstances), as in EC2; moto leaves it out, so no Spot instance could be judged stoppable.
   RunInstances with InstanceMarketOptions (MarketType spot) makes that request too, as EC2 does,
   with the SpotOptions' type and interruption behaviour (moto reads only the market type).
2. StopInstances refuses a Spot instance it may not stop, as EC2 does, with UnsupportedOperation:
   one whose request is one-time ("You can't stop the Spot Instance ... because it is associated
   with a one-time Spot Instance request. You can only stop Spot Instances associated with
   persistent Spot Instance requests.", EC2's own message), whose request is gone, or whose
   persistent request interrupts by terminate. The last is stricter than the sentence AWS documents
   (see docs/aws-assumptions.md): the reaper never stops such an instance either way.
   https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_StopInstances.html ;
   https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/interruption-behavior.html
3. `shape()` sets what RunInstances cannot in moto: an earlier LaunchTime (moto stamps "now", so a
   seeded instance would always be "just started") and an instance-store root device (moto makes
   every root EBS). It edits the in-process backend, which a ThreadedMotoServer shares.
4. StopInstances judges every id before it stops any, as EC2 does: one id EC2 refuses fails the
   whole call with that id's error, and nothing is stopped (docs/aws-assumptions.md E-1 to E-3).
   moto stopped the ids before a stop-protected one and then raised (with "may not be terminated"),
   and "stopped" a terminated instance; EC2 answers IncorrectInstanceState ("This instance '…' is
   not in a state from which it can be stopped.") for a terminated, shutting-down or pending one.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from moto.ec2.exceptions import EC2ClientError, InvalidInstanceIdError
from moto.ec2.models import ec2_backends
from moto.ec2.models.instances import InstanceBackend
from moto.ec2.models.spot_requests import SpotInstanceRequest
from moto.ec2.responses.instances import InstanceResponse
from moto.ec2.utils import random_spot_request_id


class UnsupportedOperation(EC2ClientError):
    def __init__(self, message: str) -> None:
        super().__init__("UnsupportedOperation", message)


class StopNotPermitted(EC2ClientError):
    def __init__(self, instance_id: str) -> None:
        super().__init__(
            "OperationNotPermitted",
            f"The instance '{instance_id}' may not be stopped. Modify its 'disableApiStop' instance attribute and try again.",
        )


class IncorrectInstanceState(EC2ClientError):
    def __init__(self, instance_id: str) -> None:
        super().__init__("IncorrectInstanceState", f"This instance '{instance_id}' is not in a state from which it can be stopped.")


# a stop is refused from these (stopping and stopped are answered with the state they are in)
UNSTOPPABLE_STATES = frozenset({"pending", "shutting-down", "terminated"})


class _LaunchedRequest(SpotInstanceRequest):
    """The Spot request RunInstances makes for a Spot launch, around the instance it already launched."""

    _given: Any = None

    def launch_instance(self) -> Any:
        return self._given


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
    _refuse_stops()
    _link_run_instances_spot()


def spot_stop_refusal(backend: Any, instance: Any) -> str | None:
    """Why EC2 refuses to stop this instance for being Spot, or None."""
    if getattr(instance, "lifecycle", None) != "spot":
        return None
    request = backend.spot_instance_requests.get(getattr(instance, "spot_instance_request_id", None) or "")
    if request is None:
        return f"You can't stop the Spot Instance '{instance.id}' because its Spot Instance request is not active."
    if str(request.type) != "persistent":
        return (
            f"You can't stop the Spot Instance '{instance.id}' because it is associated with a one-time Spot Instance request. "
            "You can only stop Spot Instances associated with persistent Spot Instance requests."
        )
    if str(request.instance_interruption_behaviour) not in ("stop", "hibernate"):
        return f"You can't stop the Spot Instance '{instance.id}' because its persistent Spot Instance request interrupts by terminate."
    return None


def _refuse_stops() -> None:
    original = InstanceBackend.stop_instances

    def stop_instances(self: Any, instance_ids: list[str]) -> Any:
        # every id is judged before any is stopped: one refused id fails the whole call (4.)
        for instance in self.get_multi_instances_by_id(instance_ids):
            problem = spot_stop_refusal(self, instance)
            if problem:
                raise UnsupportedOperation(problem)
            if instance.disable_api_stop is True:
                raise StopNotPermitted(instance.id)
            if instance.state in UNSTOPPABLE_STATES:
                raise IncorrectInstanceState(instance.id)
        return original(self, instance_ids)

    InstanceBackend.stop_instances = stop_instances  # type: ignore[method-assign]


def _link_run_instances_spot() -> None:
    original = InstanceResponse.run_instances

    def run_instances(self: Any) -> Any:
        answer = original(self)
        if str(self._get_param("InstanceMarketOptions.MarketType") or "") != "spot":
            return answer
        kind = str(self._get_param("InstanceMarketOptions.SpotOptions.SpotInstanceType") or "one-time")
        behaviour = self._get_param("InstanceMarketOptions.SpotOptions.InstanceInterruptionBehavior") or "terminate"
        for instance in answer.result.instances:
            _link(self.ec2_backend, instance, kind, str(behaviour))
        return answer

    InstanceResponse.run_instances = run_instances  # type: ignore[method-assign]


def _link(backend: Any, instance: Any, kind: str, behaviour: str) -> None:
    request = _LaunchedRequest.__new__(_LaunchedRequest)
    request._given = instance
    request_id = random_spot_request_id()
    request.__init__(  # type: ignore[misc]
        backend,
        request_id,
        None,
        instance.image_id,
        kind,
        None,
        None,
        None,
        None,
        instance.key_name,
        [],
        None,
        instance.instance_type,
        None,
        None,
        None,
        False,
        instance.subnet_id,
        {},
        None,
        behaviour,
    )
    backend.spot_instance_requests[request_id] = request
    instance.spot_instance_request_id = request_id


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
