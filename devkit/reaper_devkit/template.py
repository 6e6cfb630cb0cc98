"""Read template.yaml with CloudFormation's short tags (!Ref, !Sub, !GetAtt …) as plain data."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]


class _Loader(yaml.SafeLoader):
    pass


def _tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
    return {suffix: value}


_Loader.add_multi_constructor("!", _tag)


@cache
def load(path: Path = ROOT / "template.yaml") -> dict[str, Any]:
    data: dict[str, Any] = yaml.load(path.read_text(), Loader=_Loader)  # noqa: S506 - our own loader, safe base
    return data


def function_actions(logical_id: str) -> set[str]:
    """Every IAM action granted in a function's inline policy statements."""
    props = load()["Resources"][logical_id]["Properties"]
    actions: set[str] = set()
    for policy in props.get("Policies", []):
        for stmt in policy.get("Statement", []) if isinstance(policy, dict) else []:
            if stmt.get("Effect") != "Allow":
                continue
            granted = stmt.get("Action", [])
            actions |= {granted} if isinstance(granted, str) else set(granted)
    return actions


def sweep_functions() -> dict[str, str]:
    """{kind: logical id} for every function whose environment or code names a kind."""
    out: dict[str, str] = {}
    for logical_id, res in load()["Resources"].items():
        if res.get("Type") != "AWS::Serverless::Function":
            continue
        kind = res.get("Metadata", {}).get("ReaperKind")
        if kind:
            out[kind] = logical_id
    return out
