"""CloudFormation templates with outputs on resource types moto cannot model (moto 5.2.5).

moto checks each output's Fn::GetAtt against its own class for the resource type, and a type it has
no class for (AWS::Lambda::Url, say) ends in AttributeError: the stack set's instances cannot be
created at all. AWS validates the attribute against the resource type's schema ("Fn::GetAtt returns
the value of an attribute from a resource in the template",
https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/intrinsic-function-reference-getatt.html);
here cfn-lint holds the template to that schema (E1010) and moto skips only the outputs it cannot
judge. Patched on moto's ResourceMap, so it works in-process and in server mode.
"""

from __future__ import annotations

from typing import Any

from moto.cloudformation import parsing

_original = parsing.ResourceMap.validate_outputs


def _unmodelled(resource_map: Any, output: Any) -> bool:
    value = output.get("Value") if isinstance(output, dict) else None
    if not isinstance(value, dict) or "Fn::GetAtt" not in value:
        return False
    resource = resource_map._resource_json_map.get(value["Fn::GetAtt"][0]) or {}
    return parsing.resource_class_from_type(resource.get("Type", "")) is None


def validate_outputs(self: Any) -> None:
    outputs = self._template.get("Outputs")
    if not outputs:
        return _original(self)
    self._template["Outputs"] = {k: v for k, v in outputs.items() if not _unmodelled(self, v)}
    try:
        _original(self)
    finally:
        self._template["Outputs"] = outputs


def apply() -> None:
    parsing.ResourceMap.validate_outputs = validate_outputs  # type: ignore[method-assign]
