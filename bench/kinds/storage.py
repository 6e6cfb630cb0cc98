"""Bench seeder: n storage findings — 40 % FSx backups the reaper made of file systems since deleted (a
quarter of them tagged reaper:keep), 40 % ML volumes attached to nothing (a quarter in phase 1: a
snapshot started and tagged on the volume; a quarter made two days ago), 10 % the root volumes of GPU
boxes stopped six weeks ago, 5 % Bedrock imported models made ten weeks ago, and 5 % volumes without an
ml: key (never listed).

The sweep's calls (dry run, no retention set): one DescribeBackups listing (its answer holds the tags),
one DescribeFileSystems, one DescribeVolumes page per 500 ML volumes, one DescribeSnapshots per 200
snapshots of phase 1, one DescribeInstances page per 1,000 stopped instances, one DescribeInstanceTypes
per 100 types found stopped, one DescribeVolumes per 500 of their volumes, one GetCallerIdentity
(the CLI's account; the stack sets it), one ListImportedModels page per 1,000 and one ListTagsForResource
per imported model (Bedrock's own tag call: no batch form).
"""

from __future__ import annotations

from datetime import datetime, timedelta

import boto3

from reaper_devkit import seed_ec2, seed_fsx, seed_storage
from reaper_devkit.moto_ext import bedrock_imported
from reaper_devkit.moto_ext import ebs as ebs_ext

KIND = "storage"


def seed(session: boto3.session.Session, n: int, now: datetime) -> None:
    fsx, ec2 = session.client("fsx"), session.client("ec2")
    subnet, group = seed_fsx.network(ec2)
    ami = seed_ec2.image(ec2)
    old = now - timedelta(weeks=6)
    for i in range(n):
        case, owner = i % 10, {"ml:owner": f"user{i % 37}@example.com", "ml:project": f"p{i % 7}"}
        if case < 4:
            keep = {"reaper:keep": "true"} if case == 3 else {}
            seed_storage.reaper_backup(fsx, subnet, group, now - timedelta(days=40), tags={**owner, **keep})
        elif case < 8:
            vol = seed_storage.volume(ec2, now - timedelta(days=2) if case == 7 else old, tags=owner)
            if case == 4:
                # tagged with its volume at creation, as phase 1 makes it (kinds/storage/actions._snapshot_tags)
                mine = [{"ResourceType": "snapshot", "Tags": [{"Key": "reaper:source-volume", "Value": vol}]}]
                snap = ec2.create_snapshot(VolumeId=vol, TagSpecifications=mine)["SnapshotId"]
                ec2.create_tags(Resources=[vol], Tags=[{"Key": "reaper:snapshot-id", "Value": snap}])
        elif case == 8:
            iid = seed_ec2.instance(ec2, "g5.xlarge", owner, now=now, launched_ago=timedelta(weeks=7), ami=ami)
            ec2.stop_instances(InstanceIds=[iid])
            ebs_ext.stopped_at(iid, old)
        elif i % 20 == 9:
            bedrock_imported.imported_model(f"ft-{i:05d}", now - timedelta(weeks=10), owner)
        else:
            seed_storage.volume(ec2, old, tags={"team": "web"})
