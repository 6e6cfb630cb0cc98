"""Every notebook instance in the region, its tags read in bulk (one call per 100)."""

from __future__ import annotations

from datetime import datetime

from reaper.aws import pricing
from reaper.aws.clients import Clients
from reaper.aws.tagging import tags_by_arn
from reaper.core.model import Resource
from reaper.core.settings import Settings
from reaper.kinds.notebook import DECLARATION
from reaper.kinds.notebook.model import KIND, NotebookFacts


def discover(clients: Clients, settings: Settings, now: datetime) -> list[Resource]:
    tags = tags_by_arn(clients, list(DECLARATION.tag_resource_types))
    out: list[Resource] = []
    paginator = clients("sagemaker").get_paginator("list_notebook_instances")
    for page in paginator.paginate(PaginationConfig={"PageSize": 100}):
        for nb in page.get("NotebookInstances", []):
            arn = nb["NotebookInstanceArn"]
            itype = nb.get("InstanceType")
            status = nb.get("NotebookInstanceStatus", "Unknown")
            out.append(
                Resource(
                    kind=KIND,
                    id=nb["NotebookInstanceName"],
                    arn=arn,
                    region=clients.region,
                    state=status,
                    tags=tags.get(arn, {}),
                    instance_type=itype,
                    price=clients.pricer.hourly(pricing.NOTEBOOK, clients.region, itype),
                    created_at=nb.get("CreationTime"),
                    changed_at=nb.get("LastModifiedTime"),
                    facts=NotebookFacts(
                        lifecycle_config=nb.get("NotebookInstanceLifecycleConfigName"),
                        in_service_since=nb.get("LastModifiedTime") if status == "InService" else None,
                    ),
                )
            )
    return out
