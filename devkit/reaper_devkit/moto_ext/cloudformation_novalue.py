"""AWS::NoValue inside a list (moto 5.2.5 leaves a None there, and IAM then refuses the policy).

AWS: "AWS::NoValue: Removes the corresponding resource property when specified as a return value in
the Fn::If intrinsic function."
https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/pseudo-parameter-reference.html
A list item that resolves to it (`- !If [Cond, {...}, !Ref AWS::NoValue]` in a policy's statements)
is removed. Patched on moto's parsing module, so it works in-process and in server mode.
"""

from __future__ import annotations

from typing import Any

from moto.cloudformation import parsing

_original = parsing.clean_json


def _may_be_novalue(item: Any) -> bool:
    return isinstance(item, dict) and (item.get("Ref") == "AWS::NoValue" or "Fn::If" in item)


def clean_json(resource_json: Any, resources_map: Any) -> Any:
    if isinstance(resource_json, list):
        out = []
        for item in resource_json:
            value = _original(item, resources_map)
            if value is None and _may_be_novalue(item):
                continue  # the item was AWS::NoValue: gone, as in CloudFormation
            out.append(value)
        return out
    return _original(resource_json, resources_map)


def apply() -> None:
    parsing.clean_json = clean_json
