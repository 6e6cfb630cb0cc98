"""Tags: read in bulk through the Resource Groups Tagging API, written per service.

Reads are one call per 100 resources, never one per resource. Writes happen only for
the few resources a sweep warns or acts on.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TypedDict

from reaper.aws.clients import Clients


class Tag(TypedDict):
    """https://docs.aws.amazon.com/resourcegroupstagging/latest/APIReference/API_Tag.html (both members required)."""

    Key: str
    Value: str


class ResourceTagMapping(TypedDict, total=False):
    """https://docs.aws.amazon.com/resourcegroupstagging/latest/APIReference/API_ResourceTagMapping.html"""

    ResourceARN: str
    Tags: list[Tag]


class GetResourcesOutput(TypedDict, total=False):
    """https://docs.aws.amazon.com/resourcegroupstagging/latest/APIReference/API_GetResources.html#API_GetResources_ResponseSyntax"""

    ResourceTagMappingList: list[ResourceTagMapping]
    PaginationToken: str


def fold(arn: str) -> str:
    """An ARN as the tag joins compare it: without case.

    The code builds some ARNs itself (a Studio app's, from ListApps: `.../JupyterServer/default`)
    and joins them with those the tagging API returns, which SageMaker spells in lower case
    (`.../jupyterserver/default`, as AWS's own IAM examples do). A join that misses drops the
    resource's `ml:stage=prod` or exempt tag, so it must not depend on case. Two resources of one
    account and region whose ARNs differ only in case do not exist for the kinds read this way
    (SageMaker names are unique whatever their case; EC2 and FSx ids are lower case)."""
    return arn.strip().lower()


class ArnIndex(Mapping[str, dict[str, str]]):
    """{arn: {key: value}}, looked up by ARN whatever its case (see fold)."""

    def __init__(self) -> None:
        self._by: dict[str, dict[str, str]] = {}

    def add(self, arn: str, tags: dict[str, str]) -> None:
        self._by.setdefault(fold(arn), {}).update(tags)

    def add_mappings(self, items: list[ResourceTagMapping]) -> None:
        """Items of a GetResources ResourceTagMappingList."""
        for item in items:
            self.add(item["ResourceARN"], {t["Key"]: t["Value"] for t in item.get("Tags", [])})

    def __getitem__(self, arn: str) -> dict[str, str]:
        return self._by[fold(arn)]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by)

    def __len__(self) -> int:
        return len(self._by)


def tags_by_arn(clients: Clients, resource_types: list[str]) -> ArnIndex:
    """{arn: {key: value}} for every tagged resource of the given types (e.g. 'sagemaker:notebook-instance'),
    looked up whatever the ARN's case."""
    out = ArnIndex()
    paginator = clients("resourcegroupstaggingapi").get_paginator("get_resources")
    for page in paginator.paginate(ResourceTypeFilters=resource_types, ResourcesPerPage=100):
        out.add_mappings(page.get("ResourceTagMappingList", []))
    return out


def current_tags(clients: Clients, arn: str) -> dict[str, str]:
    """The resource's tags now, from its own service (strongly consistent, unlike the tagging API).

    Read just before a change, for the few resources a sweep is about to change.
    """
    service = service_of(arn)
    pairs: list[dict[str, str]] = []
    if service == "sagemaker":
        for page in clients("sagemaker").get_paginator("list_tags").paginate(ResourceArn=arn):
            pairs.extend(page.get("Tags", []))
    elif service == "fsx":
        for page in clients("fsx").get_paginator("list_tags_for_resource").paginate(ResourceARN=arn):
            pairs.extend(page.get("Tags", []))
    elif service == "ec2":
        instance_id = arn.rsplit("/", 1)[-1]
        for page in clients("ec2").get_paginator("describe_tags").paginate(Filters=[{"Name": "resource-id", "Values": [instance_id]}]):
            pairs.extend(page.get("Tags", []))
    elif service == "bedrock":
        tags = clients("bedrock").list_tags_for_resource(resourceARN=arn).get("tags", [])
        pairs.extend({"Key": t["key"], "Value": t.get("value", "")} for t in tags)
    else:
        raise ValueError(f"no tag reader for {arn}")
    return {t["Key"]: t.get("Value", "") for t in pairs}


def service_of(arn: str) -> str:
    parts = arn.split(":")
    return parts[2] if len(parts) > 2 else ""


def write_tags(clients: Clients, arn: str, tags: dict[str, str]) -> None:
    service = service_of(arn)
    if service == "sagemaker":
        clients("sagemaker").add_tags(ResourceArn=arn, Tags=[{"Key": k, "Value": v} for k, v in tags.items()])
    elif service == "fsx":
        clients("fsx").tag_resource(ResourceARN=arn, Tags=[{"Key": k, "Value": v} for k, v in tags.items()])
    elif service == "ec2":
        clients("ec2").create_tags(Resources=[arn.rsplit("/", 1)[-1]], Tags=[{"Key": k, "Value": v} for k, v in tags.items()])
    elif service == "bedrock":
        clients("bedrock").tag_resource(resourceARN=arn, tags=[{"key": k, "value": v} for k, v in tags.items()])
    else:
        raise ValueError(f"no tag writer for {arn}")


def remove_tags(clients: Clients, arn: str, keys: list[str]) -> None:
    service = service_of(arn)
    if service == "sagemaker":
        clients("sagemaker").delete_tags(ResourceArn=arn, TagKeys=keys)
    elif service == "fsx":
        clients("fsx").untag_resource(ResourceARN=arn, TagKeys=keys)
    elif service == "ec2":
        clients("ec2").delete_tags(Resources=[arn.rsplit("/", 1)[-1]], Tags=[{"Key": k} for k in keys])
    elif service == "bedrock":
        clients("bedrock").untag_resource(resourceARN=arn, tagKeys=keys)
    else:
        raise ValueError(f"no tag writer for {arn}")


TAG_READ_PERMISSIONS: dict[str, tuple[str, ...]] = {
    "sagemaker": ("sagemaker:ListTags",),
    "fsx": ("fsx:ListTagsForResource",),
    "ec2": ("ec2:DescribeTags",),
    "bedrock": ("bedrock:ListTagsForResource",),
}

TAG_WRITE_PERMISSIONS: dict[str, tuple[str, ...]] = {
    "sagemaker": ("sagemaker:AddTags", "sagemaker:DeleteTags"),
    "fsx": ("fsx:TagResource", "fsx:UntagResource"),
    "ec2": ("ec2:CreateTags", "ec2:DeleteTags"),
    "bedrock": ("bedrock:TagResource", "bedrock:UntagResource"),
}
