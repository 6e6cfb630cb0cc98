"""How old a running training job's newest checkpoint is: one ListObjectsV2 listing per job, of the
prefix its CheckpointConfig.S3Uri names, never of the whole bucket.

ListObjectsV2 returns keys "in ascending order based on the key name" (UTF-8 binary order), not by
date (https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectsV2.html), so the newest object
needs the whole prefix listed: pages of MaxKeys 1000, at most MAX_PAGES of them. A listing cut short
still gives the newest object seen, which is at least as old as the real newest: it is said as an
upper bound and never raises a "checkpoint too old" warning.

Read only for jobs running longer than their threshold (`reaper:checkpoint-minutes`, default 30):
a younger job cannot be late. A failed read leaves the age unknown.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime, timedelta
from urllib.parse import urlparse

from reaper.aws.clients import Clients
from reaper.aws.faults import AwsError, short
from reaper.core.model import Resource
from reaper.core.policy import read_tags
from reaper.core.settings import Settings
from reaper.core.timeutil import as_utc
from reaper.kinds.training_job.model import RUNNING, CheckpointAge, JobFacts

log = logging.getLogger("reaper")

DEFAULT_MINUTES = 30  # the playbook's "checkpoint every 15-30 minutes"
PAGE = 1000
MAX_PAGES = 10  # 10,000 objects under one job's checkpoint prefix


def threshold(resource: Resource, settings: Settings) -> int:
    return read_tags(resource.tags, settings).checkpoint_minutes or DEFAULT_MINUTES


def read_checkpoints(clients: Clients, resources: Iterable[Resource], settings: Settings, now: datetime) -> dict[str, CheckpointAge]:
    """The newest checkpoint of every running training job with a checkpoint location, keyed by ARN."""
    out: dict[str, CheckpointAge] = {}
    for r in resources:
        facts = r.facts_as(JobFacts)
        if r.state != RUNNING or facts.job_type != "training" or not facts.checkpoint_s3 or facts.started_at is None:
            continue
        if as_utc(now) - as_utc(facts.started_at) < timedelta(minutes=threshold(r, settings)):
            continue
        out[r.arn] = newest(clients, facts.checkpoint_s3)
    return out


def newest(clients: Clients, uri: str) -> CheckpointAge:
    parsed = urlparse(uri)
    bucket, prefix = parsed.netloc, parsed.path.lstrip("/")
    if parsed.scheme != "s3" or not bucket:
        return CheckpointAge(uri, error=f"not an S3 URI: {uri!r}")
    request = {"Bucket": bucket, "Prefix": prefix.rstrip("/") + "/" if prefix else "", "MaxKeys": PAGE}
    latest: datetime | None = None
    objects = 0
    try:
        s3 = clients("s3")
        for _ in range(MAX_PAGES):
            page = s3.list_objects_v2(**request)
            for item in page.get("Contents", []):
                objects += 1
                at = as_utc(item["LastModified"])
                latest = at if latest is None or at > latest else latest
            if not page.get("IsTruncated"):
                return CheckpointAge(uri, latest, objects, complete=True)
            request["ContinuationToken"] = page["NextContinuationToken"]
        log.info("checkpoint listing of %s cut after %d pages", uri, MAX_PAGES)
        return CheckpointAge(uri, latest, objects, complete=False)
    except AwsError as exc:
        return CheckpointAge(uri, latest, objects, error=short(exc))
