"""EBS snapshots as the reaper meets them in AWS, where moto 5.2.5 falls short.

1. A snapshot made by CreateSnapshot is `pending` at first, as in EC2 ("Snapshots occur asynchronously
   ... the snapshot status is pending until the snapshot is complete", API_CreateSnapshot:
   https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CreateSnapshot.html), with `Progress`
   "0%"; moto makes every snapshot `completed` at once, so a kind could never be seen waiting for one.
   It stays pending until a test settles it (`settle_snapshots`) to `completed` or `error`. The
   snapshots an image registers (moto's own, `from_ami`) stay completed.
2. DeleteVolume refuses a volume that is attached with VolumeInUse, as EC2 does
   (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_DeleteVolume.html: "The volume must be in
   the available state (not attached to an instance)"): moto's own check, kept.
3. CreateVolume from a snapshot in `error` is refused with IncorrectState: an errored snapshot is no copy
   ("error" is a terminal State of API_Snapshot:
   https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_Snapshot.html).

4. A `tag-key` filter with several values matches a resource with a key matching any of them, each value
   may hold `*` and `?` wildcards ("You can use wildcards with the filter values", and several values of
   one filter are ORed: https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/Using_Filtering.html). moto
   reads wildcards only when one value is given, and with several asks for all of them at once.

5. DescribeSnapshots and DescribeVolumes refuse more than 200 filter values in one call (all its filters'
   values together) with `FilterLimitExceeded`, "The maximum number of filter values specified on a single call
   is 200", as EC2 answers (observed on DescribeInstances, DescribeTags, DescribeSpotInstanceRequests:
   https://github.com/apache/druid/pull/1954, https://github.com/ansible/ansible/pull/16184; the code is on
   https://docs.aws.amazon.com/AWSEC2/latest/APIReference/errors-overview.html, the figure on no AWS page found).
   moto takes any number.

Test controls (`settle_snapshots`, `set_snapshot`, `set_volume`, `stopped_at`) change the shared backends directly, so they work under
mock_aws and against a ThreadedMotoServer in the same process.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from moto.core import DEFAULT_ACCOUNT_ID as ACCOUNT
from moto.ec2 import utils as ec2_utils
from moto.ec2.exceptions import EC2ClientError
from moto.ec2.models import ec2_backends
from moto.ec2.models.elastic_block_store import EBSBackend, Snapshot
from moto.ec2.responses import EC2Response


class IncorrectState(EC2ClientError):
    def __init__(self, message: str) -> None:
        super().__init__("IncorrectState", message)


def _snapshot_init(original: Any) -> Any:
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self._reaper_progress = "100%"
        if not kwargs.get("from_ami"):
            self.status = "pending"
            self._reaper_progress = "0%"

    return __init__


def _progress(self: Any) -> str:
    return str(getattr(self, "_reaper_progress", "100%"))


def _create_volume(original: Any) -> Any:
    def create_volume(self: Any, *args: Any, **kwargs: Any) -> Any:
        snapshot_id = kwargs.get("snapshot_id")
        if snapshot_id:
            snap = self.get_snapshot(snapshot_id)
            if snap.status == "error":
                raise IncorrectState(f"Snapshot '{snapshot_id}' is in state 'error'.")
        return original(self, *args, **kwargs)

    return create_volume


def _is_filter_matching(original: Any) -> Any:
    def is_filter_matching(obj: Any, _filter: str, filter_value: Any) -> bool:
        if _filter == "tag-key" and isinstance(filter_value, list) and len(filter_value) > 1:
            keys = [str(k) for k in obj.get_filter_value(_filter) or []]
            return any(fnmatch.fnmatchcase(k, pattern) for k in keys for pattern in filter_value)
        return bool(original(obj, _filter, filter_value))

    return is_filter_matching


FILTER_VALUES_PER_CALL = 200


def _filter_limit(original: Any) -> Any:
    def describe(self: Any) -> Any:
        given = sum(len(values) for values in self._filters_from_querystring().values())
        if given > FILTER_VALUES_PER_CALL:
            raise EC2ClientError(
                "FilterLimitExceeded", f"The maximum number of filter values specified on a single call is {FILTER_VALUES_PER_CALL}"
            )
        return original(self)

    return describe


def _backends(region: str | None = None, account: str = ACCOUNT) -> Iterable[Any]:
    by_region = ec2_backends[account]
    return [by_region[region]] if region else [by_region[r] for r in list(by_region.keys())]


def settle_snapshots(state: str = "completed", snapshot_ids: Iterable[str] | None = None, region: str | None = None) -> list[str]:
    """End pending snapshots (all, or the ids given) as `completed` or `error`; returns their ids."""
    wanted = set(snapshot_ids) if snapshot_ids is not None else None
    done: list[str] = []
    for backend in _backends(region):
        for snap in backend.snapshots.values():
            if (wanted is None and snap.status == "pending") or (wanted and snap.id in wanted):
                snap.status = state
                snap._reaper_progress = "100%" if state == "completed" else snap._reaper_progress
                done.append(snap.id)
    return done


def set_snapshot(snapshot_id: str, started_at: datetime, region: str | None = None) -> None:
    """When a snapshot began (moto stamps the moment it was made)."""
    for backend in _backends(region):
        if snapshot_id in backend.snapshots:
            backend.snapshots[snapshot_id].start_time = started_at
            return
    raise KeyError(f"no snapshot {snapshot_id}")


def set_volume(volume_id: str, created_at: datetime, region: str | None = None) -> None:
    """When a volume was made (moto stamps the moment it was made)."""
    for backend in _backends(region):
        if volume_id in backend.volumes:
            backend.volumes[volume_id].create_time = created_at
            return
    raise KeyError(f"no volume {volume_id}")


def stopped_at(instance_id: str, when: datetime | None, region: str | None = None) -> None:
    """When a stopped instance stopped, written as EC2 writes it in StateTransitionReason: "User initiated
    (2026-11-01 10:00:00 GMT)" (moto writes the moment it stopped it, and "UTC"). None: an empty reason, which
    EC2 allows ("This might be an empty string": https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_Instance.html)."""
    for backend in _backends(region):
        for reservation in backend.reservations.values():
            for inst in reservation.instances:
                if inst.id == instance_id:
                    inst._reason = f"User initiated ({when.strftime('%Y-%m-%d %H:%M:%S')} GMT)" if when else ""
                    return
    raise KeyError(f"no instance {instance_id}")


def apply() -> None:
    if getattr(EBSBackend, "_reaper_ebs", False):
        return
    Snapshot.__init__ = _snapshot_init(Snapshot.__init__)  # type: ignore[method-assign]
    Snapshot.progress = property(_progress)  # type: ignore[assignment,method-assign]
    EBSBackend.create_volume = _create_volume(EBSBackend.create_volume)  # type: ignore[method-assign]
    ec2_utils.is_filter_matching = _is_filter_matching(ec2_utils.is_filter_matching)  # generic_filter looks it up when called
    for name in ("describe_snapshots", "describe_volumes"):
        setattr(EC2Response, name, _filter_limit(getattr(EC2Response, name)))
    EBSBackend._reaper_ebs = True  # type: ignore[attr-defined]
