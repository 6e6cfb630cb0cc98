"""The bench's fast seeders store what the API path stored: the same resources, tags and datapoints
(bench/kinds/ec2.py and fsx.py put their datapoints straight into moto's CloudWatch backend), and
moto_ext.ec2_lookups answers as moto's own scans do."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.cloudwatch.models import cloudwatch_backends
from moto.core.models import DEFAULT_ACCOUNT_ID
from moto.ec2.exceptions import InvalidInstanceIdError
from moto.ec2.models import ec2_backends
from moto.ec2.utils import generic_filter
from moto.fsx.models import fsx_backends

from bench.kinds import ec2 as bench_ec2
from bench.kinds import fsx as bench_fsx
from reaper_devkit import seed

REGION = "us-east-1"
NOW = datetime(2026, 12, 2, 21, 37, 12, 345678, tzinfo=UTC)


def through_the_api(namespace: str, data: list[dict[str, Any]], region: str = REGION) -> None:
    """What the seeders did before: PutMetricData calls of 1,000 datapoints."""
    cw = boto3.client("cloudwatch", region_name=region)
    for i in range(0, len(data), 1000):
        cw.put_metric_data(Namespace=namespace, MetricData=data[i : i + 1000])


def datapoints(ids: dict[str, int]) -> list[tuple[Any, ...]]:
    """Every stored datapoint, in order, with resource ids replaced by their seeding index."""
    return [
        (d.namespace, d.name, d.value, d.timestamp, d.unit, tuple((x.name, ids.get(x.value, x.value)) for x in d.dimensions))
        for d in cloudwatch_backends[DEFAULT_ACCOUNT_ID][REGION].metric_data
    ]


def ec2_snapshot() -> tuple[Any, ...]:
    backend = ec2_backends[DEFAULT_ACCOUNT_ID][REGION]
    instances = [i for r in backend.reservations.values() for i in r.instances]
    ids = {inst.id: k for k, inst in enumerate(instances)}
    shapes = [
        (
            len(r.instances),
            i.instance_type,
            i.launch_time,
            i.root_device_type,
            i._state.name,
            sorted((t["key"], t["value"]) for t in i.get_tags()),
        )
        for r in backend.reservations.values()
        for i in r.instances
    ]
    return shapes, datapoints(ids)


def fsx_snapshot() -> tuple[Any, ...]:
    backend = fsx_backends[DEFAULT_ACCOUNT_ID][REGION]
    systems = list(backend.file_systems.values())
    ids = {fs.file_system_id: k for k, fs in enumerate(systems)}
    random = (
        "FileSystemId",
        "ResourceARN",
        "DNSName",
        "NetworkInterfaceIds",
        "VpcId",
        "SubnetIds",
        "SecurityGroupIds",
        "Tags",
        "LustreConfiguration",
    )
    shapes = [
        (
            {k: v for k, v in fs.to_dict().items() if k not in random},
            {k: v for k, v in fs.to_dict()["LustreConfiguration"].items() if k not in ("MountName", "WeeklyMaintenanceStartTime")},
            sorted(
                (t["Key"], "backup-*" if t["Value"].startswith("backup-") else t["Value"])
                for t in backend.list_tags_for_resource(fs.resource_arn)
            ),
        )
        for fs in systems
    ]
    return shapes, datapoints(ids)


@pytest.mark.parametrize(("seeder", "snapshot"), [(bench_ec2, ec2_snapshot), (bench_fsx, fsx_snapshot)], ids=["ec2", "fsx"])
def test_fast_seeder_stores_the_same_resources_and_datapoints_as_the_api_path(
    seeder: Any, snapshot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the bench seeder at N = 50, once as it is and once putting its datapoints through the API
    with mock_aws():
        seeder.seed(boto3.session.Session(region_name=REGION), 50, NOW)
        fast = snapshot()
    monkeypatch.setattr(seeder, "put_metric_data_in_process", through_the_api)
    with mock_aws():
        seeder.seed(boto3.session.Session(region_name=REGION), 50, NOW)
        api = snapshot()
    # Then the resources (one reservation per instance), their tags and every datapoint are the same
    assert fast[0] == api[0] and len(fast[0]) == 50
    assert fast[1] == api[1] and len(fast[1]) > 50 * 13


def test_in_process_datapoints_are_stored_as_the_api_stores_them_whatever_the_timestamps_zone() -> None:
    # Given datapoints with a +02:00 timestamp and microseconds, a dimensionless one and a unit
    cest = timezone(timedelta(hours=2))
    data = [
        {
            "MetricName": "CPUUtilization",
            "Dimensions": [{"Name": "InstanceId", "Value": "i-1"}],
            "Timestamp": NOW.astimezone(cest),
            "Value": 1.5,
        },
        {"MetricName": "CPUUtilization", "Timestamp": NOW - timedelta(minutes=5), "Value": 0.0, "Unit": "Percent"},
    ]
    with mock_aws():
        through_the_api("AWS/EC2", data)
        api = datapoints({})
    with mock_aws():
        seed.put_metric_data_in_process("AWS/EC2", data)
        fast = datapoints({})
    # Then both store naive UTC to the second, the same values and dimensions
    assert fast == api and fast[0][3] == NOW.replace(tzinfo=None, microsecond=0)


def test_in_process_datapoints_are_refused_as_the_api_refuses_them() -> None:
    # Given a datapoint with a value CloudWatch refuses (not a number)
    bad = [{"MetricName": "m", "Timestamp": NOW, "Value": float("nan")}]
    with mock_aws():
        with pytest.raises(Exception) as refused:
            seed.put_metric_data_in_process("AWS/EC2", bad)
        # Then nothing is stored
        assert not cloudwatch_backends[DEFAULT_ACCOUNT_ID][REGION].metric_data
    assert "Value" in str(refused.value) or "NaN" in str(refused.value)


def test_ec2_lookups_answer_as_moto_scans_do_also_after_changes_behind_the_index() -> None:
    with mock_aws():
        ec2 = boto3.client("ec2", region_name=REGION)
        ami = ec2.register_image(
            Name="bench-lookups", RootDeviceName="/dev/xvda", BlockDeviceMappings=[{"DeviceName": "/dev/xvda", "Ebs": {"VolumeSize": 8}}]
        )["ImageId"]
        # Given single launches, a launch of three in one reservation, tags, and a terminated instance
        ids = [
            ec2.run_instances(
                ImageId=ami,
                MinCount=1,
                MaxCount=1,
                TagSpecifications=[{"ResourceType": "instance", "Tags": [{"Key": "k", "Value": str(n)}]}],
            )["Instances"][0]["InstanceId"]
            for n in range(4)
        ]
        ids += [i["InstanceId"] for i in ec2.run_instances(ImageId=ami, MinCount=3, MaxCount=3)["Instances"]]
        ec2.terminate_instances(InstanceIds=[ids[1]])
        ec2.create_tags(Resources=[ids[5]], Tags=[{"Key": "later", "Value": "yes"}])
        backend = ec2_backends[DEFAULT_ACCOUNT_ID][REGION]
        scanned = {i.id: i for r in backend.reservations.values() for i in r.instances}
        # Then every id finds moto's own instance object, and its tags are DescribeTags' answer for it
        for iid in ids:
            assert backend.get_instance(iid) is scanned[iid]
            assert backend.get_instance(iid).get_tags() == backend.describe_tags(filters={"resource-id": [iid]})
        assert backend.get_instance(ids[5]).get_tags()[0]["key"] == "later"
        # And an image by its id is the image generic filtering finds; a pattern still filters them all
        assert backend.describe_images(filters={"image-id": ami}) == generic_filter({"image-id": ami}, list(backend.amis.values()))
        assert backend.describe_images(filters={"image-id": "ami-00000000"}) == []
        assert backend.describe_images(filters={"image-id": "ami-*"}) == list(backend.amis.values())
        # And an instance whose reservation moto dropped is not found any more, and an unknown id is refused
        gone = next(r for r in backend.reservations.values() if ids[0] in [i.id for i in r.instances])
        backend.reservations.pop(gone.id)
        for iid in (ids[0], "i-0123456789abcdef0"):
            with pytest.raises(InvalidInstanceIdError):
                backend.get_instance(iid)
        # And one launched after the index was built is found
        late = ec2.run_instances(ImageId=ami, MinCount=1, MaxCount=1)["Instances"][0]["InstanceId"]
        assert backend.get_instance(late).id == late
