"""Every AWS request the code sends, and every answer the mock gives, held to botocore's model.

botocore checks a request's types, required members and minimum lengths, but not `pattern`,
`max` or enums: AWS does ("1 validation error detected: ... failed to satisfy constraint"). This
plugin checks them on every request (a pattern must match the whole value, as AWS's Java-side
check does: "bad_name" breaks `^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}` although that has no `$`, see
https://github.com/Kenza-AI/sagify/issues/57) (after botocore's own handlers have built the parameters),
and checks every parsed answer against the operation's output shape: each value of the type the
model says, each `required` member present. Violations are gathered during a test and fail it,
naming the operation and the field. On by default (tests/conftest.py lists it in
`pytest_plugins`); `pytest -p no:tests.plugins.aws_shapes` would switch it off.

The checks cover in-process moto and ThreadedMotoServer alike (the client is in this process).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest
import regex
from botocore.client import BaseClient
from botocore.model import ListShape, MapShape, OperationModel, Shape, StructureShape
from botocore.validate import ParamValidationDecorator

_violations: list[str] = []

# Python types the botocore parser gives for each model type
_OUTPUT_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "long": (int,),
    "float": (float, int),
    "double": (float, int),
    "boolean": (bool,),
    "timestamp": (dt.datetime,),
    "blob": (bytes, bytearray),
}


# Java (UTF-16) spellings in botocore's patterns, and what they mean in Python
_JAVA = {r"\uD800\uDC00-\uDBFF\uDFFF": r"\U00010000-\U0010FFFF"}  # a surrogate pair range: the supplementary planes


@cache
def _compiled(pattern: str) -> Any:
    for java, python in _JAVA.items():
        pattern = pattern.replace(java, python)
    return regex.compile(pattern)


def _op(model: OperationModel) -> str:
    return f"{model.service_model.service_name}.{model.name}"


# -- requests ------------------------------------------------------------------------------


def request_problems(value: Any, shape: Shape, path: str) -> Iterator[str]:
    """What AWS would refuse in a request value that botocore lets through."""
    meta = shape.metadata
    kind = shape.type_name
    if isinstance(shape, StructureShape) and isinstance(value, dict):
        for name, member in shape.members.items():
            if name in value and value[name] is not None:
                yield from request_problems(value[name], member, f"{path}.{name}" if path else name)
        return
    if isinstance(shape, ListShape) and isinstance(value, list | tuple):
        yield from _length(len(value), meta, path, "items")
        for i, item in enumerate(value):
            yield from request_problems(item, shape.member, f"{path}[{i}]")
        return
    if isinstance(shape, MapShape) and isinstance(value, dict):
        yield from _length(len(value), meta, path, "entries")
        for k, v in value.items():
            yield from request_problems(k, shape.key, f"{path} key")
            yield from request_problems(v, shape.value, f"{path}[{k!r}]")
        return
    if kind == "string" and isinstance(value, str):
        yield from _length(len(value), meta, path, "characters")
        pattern = meta.get("pattern")
        if pattern and _compiled(pattern).fullmatch(value) is None:
            yield f"{path}={value!r} does not match pattern {pattern}"
        if shape.enum and value not in shape.enum:
            yield f"{path}={value!r} is not one of {sorted(shape.enum)}"
        return
    if kind == "blob" and isinstance(value, bytes | bytearray | str):
        yield from _length(len(value), meta, path, "bytes")
        return
    if kind in ("integer", "long", "float", "double") and isinstance(value, int | float) and not isinstance(value, bool):
        if "min" in meta and value < meta["min"]:
            yield f"{path}={value} is below the minimum {meta['min']}"
        if "max" in meta and value > meta["max"]:
            yield f"{path}={value} is above the maximum {meta['max']}"


def _length(n: int, meta: dict[str, Any], path: str, unit: str) -> Iterator[str]:
    if "min" in meta and n < meta["min"]:
        yield f"{path} has {n} {unit}, fewer than the minimum {meta['min']}"
    if "max" in meta and n > meta["max"]:
        yield f"{path} has {n} {unit}, more than the maximum {meta['max']}"


# -- responses -----------------------------------------------------------------------------


def response_problems(value: Any, shape: Shape, path: str) -> Iterator[str]:
    """Where a parsed answer is not what the output shape says AWS returns."""
    if isinstance(shape, StructureShape):
        if not isinstance(value, dict):
            yield f"{path or '<response>'} is {type(value).__name__}, not a structure"
            return
        for name in shape.required_members:
            if value.get(name) is None:
                yield f"{path + '.' if path else ''}{name} is required and missing"
        for name, member in shape.members.items():
            if value.get(name) is not None:
                yield from response_problems(value[name], member, f"{path}.{name}" if path else name)
        return
    if isinstance(shape, ListShape):
        if not isinstance(value, list):
            yield f"{path} is {type(value).__name__}, not a list"
            return
        for i, item in enumerate(value):
            yield from response_problems(item, shape.member, f"{path}[{i}]")
        return
    if isinstance(shape, MapShape):
        if not isinstance(value, dict):
            yield f"{path} is {type(value).__name__}, not a map"
            return
        for k, v in value.items():
            yield from response_problems(v, shape.value, f"{path}[{k!r}]")
        return
    if shape.name == "policyDocumentType" and isinstance(value, dict):
        return  # botocore's own handler (handlers.json_decode_policies) hands IAM's policy documents over decoded
    wanted = _OUTPUT_TYPES.get(shape.type_name)
    if wanted and (not isinstance(value, wanted) or (shape.type_name != "boolean" and isinstance(value, bool))):
        yield f"{path}={value!r} is {type(value).__name__}, not {shape.type_name}"


# -- hooks into botocore ---------------------------------------------------------------------

_original_serialize = ParamValidationDecorator.serialize_to_request
_original_call = BaseClient._make_api_call


def _serialize_to_request(self: Any, parameters: dict[str, Any], operation_model: OperationModel) -> Any:
    if operation_model.input_shape is not None:
        _violations.extend(f"{_op(operation_model)} request: {p}" for p in request_problems(parameters, operation_model.input_shape, ""))
    return _original_serialize(self, parameters, operation_model)


def _make_api_call(self: BaseClient, operation_name: str, api_params: dict[str, Any]) -> Any:
    result = _original_call(self, operation_name, api_params)
    model = self.meta.service_model.operation_model(operation_name)
    if model.output_shape is not None and isinstance(result, dict):
        body = {k: v for k, v in result.items() if k != "ResponseMetadata"}
        _violations.extend(f"{_op(model)} response: {p}" for p in response_problems(body, model.output_shape, ""))
    return result


def install() -> None:
    ParamValidationDecorator.serialize_to_request = _serialize_to_request  # type: ignore[method-assign]
    BaseClient._make_api_call = _make_api_call  # type: ignore[method-assign]


def take() -> list[str]:
    """The violations gathered since the last call (and forget them)."""
    out = list(dict.fromkeys(_violations))
    _violations.clear()
    return out


# -- pytest hooks ----------------------------------------------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    install()


def _fail_on_violations(when: str) -> None:
    found = take()
    if found:
        shown = "\n  ".join(found[:20]) + (f"\n  ... and {len(found) - 20} more" if len(found) > 20 else "")
        pytest.fail(f"AWS shape violations ({when}):\n  {shown}", pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Any:
    take()  # nothing from an earlier test is blamed on this one
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    result = yield
    _fail_on_violations("setup and call")
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    result = yield
    _fail_on_violations("teardown")
    return result
