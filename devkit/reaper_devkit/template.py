"""Read template.yaml with CloudFormation's short tags (!Ref, !Sub, !GetAtt …) as plain data."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]


class _Loader(yaml.SafeLoader):  # type: ignore[misc, unused-ignore]  # Any without types-PyYAML
    pass


def _tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type, unused-ignore]  # typed only with types-PyYAML
    return {suffix: value}


_Loader.add_multi_constructor("!", _tag)


@cache
def load(path: Path = ROOT / "template.yaml") -> dict[str, Any]:
    data: dict[str, Any] = yaml.load(path.read_text(), Loader=_Loader)  # noqa: S506 - our own loader, safe base
    return data


def attached_policies(logical_id: str) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """{policy logical id: (document, its !Sub variables)} for each AWS::IAM::Policy on the function's role.

    The documents are JSON strings under !Sub (a tag key built from a parameter cannot be a YAML
    key): ${Param} references stay as text in the parsed document; the variables come back as
    written, for the caller to check.
    """
    out: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for name, res in load()["Resources"].items():
        if res.get("Type") != "AWS::IAM::Policy" or {"Ref": f"{logical_id}Role"} not in res["Properties"].get("Roles", []):
            continue
        doc = res["Properties"]["PolicyDocument"]
        text, variables = (doc["Sub"], {}) if isinstance(doc["Sub"], str) else doc["Sub"]
        out[name] = (json.loads(text), variables)
    return out


def condition_value(node: Any, params: Mapping[str, str]) -> Any:
    """A CloudFormation condition expression's value for these parameter values (Ref, Equals, Not,
    Or, And and Condition: what template.yaml uses); anything else is refused, never guessed."""
    if isinstance(node, dict) and "Ref" in node:
        return params[node["Ref"]]
    if isinstance(node, dict) and "Condition" in node:
        return condition_value(load()["Conditions"][node["Condition"]], params)
    if isinstance(node, dict) and "Equals" in node:
        a, b = node["Equals"]
        return str(condition_value(a, params)) == str(condition_value(b, params))
    if isinstance(node, dict) and "Not" in node:
        return not condition_value(node["Not"][0], params)
    if isinstance(node, dict) and "Or" in node:
        return any(condition_value(n, params) for n in node["Or"])
    if isinstance(node, dict) and "And" in node:
        return all(condition_value(n, params) for n in node["And"])
    if isinstance(node, dict):
        raise ValueError(f"condition function not modelled: {node}")
    return node


def default_conditions() -> frozenset[str]:
    """The template's Conditions that hold with every parameter at its default."""
    t = load()
    params = {name: str(p.get("Default", "")) for name, p in t.get("Parameters", {}).items()}
    return frozenset(name for name, node in t.get("Conditions", {}).items() if condition_value(node, params))


def resolve_ifs(statements: list[Any], conditions: Collection[str]) -> list[dict[str, Any]]:
    """The statements a deployment carries: each `!If [Condition, a, b]` taken as a or b, AWS::NoValue dropped."""
    out: list[dict[str, Any]] = []
    for stmt in statements:
        if isinstance(stmt, dict) and set(stmt) == {"If"}:
            condition, if_true, if_false = stmt["If"]
            stmt = if_true if condition in conditions else if_false
        if stmt != {"Ref": "AWS::NoValue"}:
            out.append(stmt)
    return out


def function_statements(logical_id: str, conditions: Collection[str] | None = None) -> list[dict[str, Any]]:
    """Every statement the function's role carries: its inline Policies and the policies attached to it,
    in a deployment where `conditions` hold (default: the template's defaults)."""
    held = default_conditions() if conditions is None else conditions
    props = load()["Resources"][logical_id]["Properties"]
    stmts = resolve_ifs([s for p in props.get("Policies", []) if isinstance(p, dict) for s in p.get("Statement", [])], held)
    resources = load()["Resources"]
    for name, (doc, _) in attached_policies(logical_id).items():
        condition = resources[name].get("Condition")  # a policy that exists only where its condition holds
        if condition is None or condition in held:
            stmts.extend(doc["Statement"])
    return stmts


def statement_actions(stmt: dict[str, Any]) -> set[str]:
    granted = stmt.get("Action", [])
    return {granted} if isinstance(granted, str) else set(granted)


def function_actions(logical_id: str, conditions: Collection[str] | None = None) -> set[str]:
    """Every IAM action the function's role allows (where `conditions` hold; default: the template's defaults)."""
    actions: set[str] = set()
    for stmt in function_statements(logical_id, conditions):
        if stmt.get("Effect") == "Allow":
            actions |= statement_actions(stmt)
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
