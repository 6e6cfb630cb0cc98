"""A notebook instance as a test reads it back from SageMaker: its status and its tags."""

from __future__ import annotations

from typing import Any


def status(sm: Any, name: str) -> str:
    return str(sm.describe_notebook_instance(NotebookInstanceName=name)["NotebookInstanceStatus"])


def tags(sm: Any, name: str) -> dict[str, str]:
    arn = sm.describe_notebook_instance(NotebookInstanceName=name)["NotebookInstanceArn"]
    return {t["Key"]: t["Value"] for t in sm.list_tags(ResourceArn=arn)["Tags"]}
