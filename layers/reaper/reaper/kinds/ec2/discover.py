"""Every running accelerated instance in the region, with its tags (DescribeInstances returns them).

One DescribeInstances page per 1,000 instances, filtered on state running and on the accelerated
types (in chunks of 100 values per filter), so a region with thousands of CPU instances pages
only through its GPU ones. Spot requests are read in one call per 100 Spot instances.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime

from reaper.aws import pricing
from reaper.aws.clients import Clients
from reaper.aws.pricing import Pricer
from reaper.core.model import Resource
from reaper.core.settings import Settings
from reaper.core.timeutil import as_utc
from reaper.kinds.ec2.catalog import AcceleratedType, accelerated_types
from reaper.kinds.ec2.managed import managed_by, spot_stop_problem
from reaper.kinds.ec2.model import KIND, Ec2Facts
from reaper.kinds.ec2.shapes import HibernationOptions, Instance, InstanceState, SpotInstanceRequest, reservations, spot_requests

TYPE_FILTER_CHUNK = 100  # values per DescribeInstances filter, kept well inside the API's limit


def discover(clients: Clients, settings: Settings, now: datetime) -> list[Resource]:
    catalog = accelerated_types(clients)
    instances = list(running_instances(clients, sorted(catalog)))
    spot_requests = read_spot_requests(clients, [i["SpotInstanceRequestId"] for _, i in instances if i.get("SpotInstanceRequestId")])
    return [
        to_resource(clients.region, owner, inst, catalog[inst["InstanceType"]], spot_requests, clients.pricer)
        for owner, inst in instances
        if inst.get("InstanceType") in catalog
    ]


def running_instances(clients: Clients, types: list[str]) -> Iterator[tuple[str, Instance]]:
    """(owner account, instance) for every running instance of the given types."""
    paginator = clients("ec2").get_paginator("describe_instances")
    for i in range(0, len(types), TYPE_FILTER_CHUNK):
        filters = [
            {"Name": "instance-state-name", "Values": ["running"]},
            {"Name": "instance-type", "Values": types[i : i + TYPE_FILTER_CHUNK]},
        ]
        for page in paginator.paginate(Filters=filters, PaginationConfig={"PageSize": 1000}):
            for reservation in reservations(page):
                for inst in reservation.get("Instances", []):
                    yield str(reservation.get("OwnerId", "")), inst


def read_spot_requests(clients: Clients, request_ids: Iterable[str]) -> dict[str, SpotInstanceRequest]:
    ids = sorted(set(request_ids))
    out: dict[str, SpotInstanceRequest] = {}
    ec2 = clients("ec2")
    for i in range(0, len(ids), 100):
        page = ec2.describe_spot_instance_requests(Filters=[{"Name": "spot-instance-request-id", "Values": ids[i : i + 100]}])
        for req in spot_requests(page):
            out[req["SpotInstanceRequestId"]] = req
    return out


def partition(region: str) -> str:
    if region.startswith("cn-"):
        return "aws-cn"
    if region.startswith("us-gov-"):
        return "aws-us-gov"
    return "aws"


def to_resource(
    region: str, owner: str, inst: Instance, kind: AcceleratedType, spot_requests: dict[str, SpotInstanceRequest], pricer: Pricer
) -> Resource:
    iid = inst["InstanceId"]
    tags = {t["Key"]: t.get("Value", "") for t in inst.get("Tags", [])}
    lifecycle = str(inst.get("InstanceLifecycle") or "on-demand")
    spot_stop = None
    if lifecycle == "spot":
        spot_stop = spot_stop_problem(spot_requests.get(str(inst.get("SpotInstanceRequestId") or "")))
    launched = inst.get("LaunchTime")
    itype = inst.get("InstanceType")
    return Resource(
        kind=KIND,
        id=iid,
        arn=f"arn:{partition(region)}:ec2:{region}:{owner}:instance/{iid}",
        region=region,
        state=str(inst.get("State", InstanceState()).get("Name", "unknown")),
        tags=tags,
        instance_type=itype,
        # list price is On-Demand: a Spot instance costs less, so no estimate rather than a wrong one
        price=pricer.hourly(pricing.EC2, region, itype) if lifecycle == "on-demand" else None,
        created_at=as_utc(launched) if isinstance(launched, datetime) else None,
        changed_at=as_utc(launched) if isinstance(launched, datetime) else None,
        facts=Ec2Facts(
            accelerator=kind.accelerator,
            accelerator_detail=kind.detail,
            root_device_type=str(inst.get("RootDeviceType", "ebs")),
            instance_store_gib=kind.instance_store_gib,
            lifecycle=lifecycle,
            managed_by=managed_by(tags),
            spot_stop=spot_stop,
            hibernation_configured=bool((inst.get("HibernationOptions") or HibernationOptions()).get("Configured")),
            launched_at=as_utc(launched) if isinstance(launched, datetime) else None,
        ),
    )
