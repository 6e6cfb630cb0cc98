"""Speed only: three lookups by id that moto's EC2 answers by scanning everything, so that each
RunInstances costs time in proportion to the instances already there (10,000 seeded instances took
nine minutes, most of it in these scans).

1. `get_instance(id)` (called by RunInstances itself, to attach the root volume) copies every
   reservation and walks all instances: here an id -> instance index, checked against the live
   reservation on every hit and rebuilt by moto's own scan on a miss, so an instance that moto
   dropped is not found, as before.
2. A resource's own tags (`get_tags`, read for every instance and volume a response shows) run
   DescribeTags over every tag in the region with a resource-id filter: here the resource's own
   entry in the tag store, in the same form and order. The filter was an exact match already
   (fnmatch.translate anchors it), and EC2 ids hold no wildcard characters.
3. A new instance reads its image with `describe_images(filters={"image-id": id})`, which filters
   every AMI moto loaded (about 1,300 by default): here, for one literal id and no other
   condition, the image of that id (the same answer: an id names one image).

What any API call returns is unchanged; only how moto finds it.
"""

from __future__ import annotations

import itertools
from typing import Any

from moto.ec2.models.amis import AmiBackend
from moto.ec2.models.core import TaggedEC2Resource
from moto.ec2.models.instances import InstanceBackend
from moto.ec2.utils import EC2_PREFIX_TO_RESOURCE, get_prefix

_WILDCARDS = ("*", "?", "[")


def _literal(value: Any) -> str | None:
    """The one literal id a filter value names, or None (several values, or a pattern)."""
    if isinstance(value, list):
        if len(value) != 1:
            return None
        value = value[0]
    if not isinstance(value, str) or any(c in value for c in _WILDCARDS):
        return None
    return value


def apply() -> None:
    if getattr(InstanceBackend, "_reaper_indexed", False):
        return
    scan_instance = InstanceBackend.get_instance

    def get_instance(self: Any, instance_id: str) -> Any:
        state = self.__dict__.setdefault("_reaper_instance_index", {"by_id": {}, "indexed": 0})
        index: dict[str, tuple[str, Any]] = state["by_id"]

        def live(hit: tuple[str, Any] | None) -> bool:
            reservation = self.reservations.get(hit[0]) if hit else None
            return reservation is not None and any(i is hit[1] for i in reservation.instances)  # type: ignore[index]

        def add(reservations: Any) -> None:
            for reservation in reservations:
                for inst in reservation.instances:
                    index[inst.id] = (reservation.id, inst)

        if live(index.get(instance_id)):
            return index[instance_id][1]
        if len(self.reservations) >= state["indexed"]:  # the reservations added since (dicts keep order)
            add(itertools.islice(list(self.reservations.values()), state["indexed"], None))
        state["indexed"] = len(self.reservations)
        if not live(index.get(instance_id)):
            index.clear()  # removed or grown reservations: index them all again
            add(list(self.reservations.values()))
        if live(index.get(instance_id)):
            return index[instance_id][1]
        return scan_instance(self, instance_id)  # moto's own answer (its error when absent)

    InstanceBackend.get_instance = get_instance  # type: ignore[method-assign]

    def get_tags(self: Any) -> list[dict[str, str]]:
        if not self.id:
            return []
        own = self.ec2_backend.tags.get(self.id) if self.id in self.ec2_backend.tags else None
        if not own:
            return []
        kind = EC2_PREFIX_TO_RESOURCE.get(get_prefix(self.id), "")
        return [{"resource_id": self.id, "key": k, "value": v, "resource_type": kind} for k, v in own.items()]

    TaggedEC2Resource.get_tags = get_tags  # type: ignore[method-assign]

    describe_images = AmiBackend.describe_images

    def describe_images_by_id(self: Any, ami_ids: Any = None, filters: Any = None, exec_users: Any = None, owners: Any = None) -> Any:
        if not ami_ids and not exec_users and not owners and filters and set(filters) == {"image-id"}:
            ami_id = _literal(filters["image-id"])
            if ami_id is not None:
                ami = self.amis.get(ami_id)
                return [ami] if ami is not None else []
        return describe_images(self, ami_ids=ami_ids, filters=filters, exec_users=exec_users, owners=owners)

    AmiBackend.describe_images = describe_images_by_id  # type: ignore[method-assign]
    InstanceBackend._reaper_indexed = True  # type: ignore[attr-defined]
