"""Rules AWS applies to every request of the services the kit touches, which moto does not.

Tags (SageMaker and FSx, every operation whose input has `Tags`: Create*, AddTags, TagResource):
  * a key that starts with `aws:` (any case) is refused: that prefix is AWS's own, no caller may
    set it — "Tag keys and values can't start with aws:" in the tagging rules every service
    shares (https://docs.aws.amazon.com/general/latest/gr/aws_tagging.html, linked from
    https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_Tag.html; the same rule is
    spelled out in e.g. https://docs.aws.amazon.com/personalize/latest/dg/personalize-managing-tags.html).
    This is what makes restoring an endpoint with its recorded `aws:cloudformation:*` tags fail.
  * key and value must match the service's Tag shape: length and pattern. FSx's TagValue pattern
    `^([\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]*)$` has no comma
    (https://docs.aws.amazon.com/fsx/latest/APIReference/API_Tag.html, and botocore's fsx model),
    so a value like "sg-1,sg-2" is refused; SageMaker's Tag has the same character set
    (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_Tag.html).
The answer is AWS's usual one for a constraint: ValidationException "1 validation error detected".

It wraps the response classes' `call_action`, so it holds in-process and in server mode alike.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import regex
from botocore.model import StructureShape
from moto.core.exceptions import JsonRESTError

SERVICES = ("sagemaker", "fsx")


@cache
def _tag_rules(service: str, operation: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(key rules, value rules) of the operation's `Tags` member, or None when it has none."""
    from moto.core.responses import get_service_model

    try:
        shape = get_service_model(service).operation_model(operation).input_shape
    except Exception:  # noqa: BLE001 - an operation botocore does not know: moto answers it
        return None
    if not isinstance(shape, StructureShape) or "Tags" not in shape.members:
        return None
    tag = getattr(shape.members["Tags"], "member", None)
    if not isinstance(tag, StructureShape):
        return None
    key, value = tag.members.get("Key"), tag.members.get("Value")
    return (dict(key.metadata) if key else {}), (dict(value.metadata) if value else {})


def _broken(what: str, text: str, rules: dict[str, Any]) -> str | None:
    if len(text) < rules.get("min", 0) or len(text) > rules.get("max", 1 << 30):
        return (
            f"Value '{text}' at '{what}' failed to satisfy constraint: Member must have length between {rules.get('min', 0)} and "
            f"{rules.get('max')}"
        )
    pattern = rules.get("pattern")
    if pattern and regex.fullmatch(pattern, text) is None:  # AWS matches the whole value
        return f"Value '{text}' at '{what}' failed to satisfy constraint: Member must satisfy regular expression pattern: {pattern}"
    return None


def tag_problem(service: str, operation: str, body: str | bytes | None) -> str | None:
    """Why AWS would refuse this request's tags, or None."""
    rules = _tag_rules(service, operation)
    if rules is None or not body:
        return None
    try:
        tags = json.loads(body).get("Tags")
    except (ValueError, AttributeError):
        return None
    for i, tag in enumerate(tags or [], start=1):
        key, value = str(tag.get("Key", "")), str(tag.get("Value", ""))
        if key.lower().startswith("aws:"):
            return f"Value '{key}' at 'tags.{i}.member.key' failed to satisfy constraint: the aws: prefix is reserved for AWS use"
        problem = _broken(f"tags.{i}.member.key", key, rules[0]) or _broken(f"tags.{i}.member.value", value, rules[1])
        if problem:
            return problem
    return None


def _call_action(service: str, original: Any) -> Any:
    def call_action(self: Any) -> Any:
        problem = tag_problem(service, self._get_action(), self.body)
        if problem:
            err = JsonRESTError("ValidationException", f"1 validation error detected: {problem}")
            return err.code, dict(err.get_headers() or []), err.description
        return original(self)

    return call_action


def apply() -> None:
    from moto.fsx.responses import FSxResponse
    from moto.sagemaker.responses import SageMakerResponse

    for service, cls in (("sagemaker", SageMakerResponse), ("fsx", FSxResponse)):
        if not getattr(cls, "_reaper_rules", False):
            cls.call_action = _call_action(service, cls.call_action)  # type: ignore[method-assign]
            cls._reaper_rules = True  # type: ignore[attr-defined]
