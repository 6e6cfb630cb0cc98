"""SageMaker answers shaped as AWS shapes them: an optional structure that was never set is left out.

moto 5.2.5 sends `"DataCaptureConfig": {}`, `"VpcConfig": {}`, `"CheckpointConfig": {}` ... for
what the caller never configured. AWS omits them: the output shapes make their members required
(DataCaptureConfigSummary needs EnableCapture, CaptureStatus, CurrentSamplingPercentage,
DestinationS3Uri, KmsKeyId; VpcConfig needs SecurityGroupIds and Subnets; CheckpointConfig needs
S3Uri), so an empty one is an answer AWS cannot give
(https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DescribeEndpoint.html,
https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DescribeTrainingJob.html,
https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DescribeModel.html).

The answer is trimmed on its way out (the response class's `call_action`), guided by the
operation's output shape in botocore's model: an empty object is dropped only where the shape is a
structure with required members. moto's own state is untouched (it reads those dicts itself).
In-process and server mode alike.
"""

from __future__ import annotations

import json
from typing import Any

from botocore.model import ListShape, MapShape, Shape, StructureShape


def trim(value: Any, shape: Shape) -> Any:
    """`value` without the empty objects that stand for structures with required members."""
    if isinstance(shape, StructureShape) and isinstance(value, dict):
        out = {}
        for k, v in value.items():
            member = shape.members.get(k)
            if member is None:
                out[k] = v
            elif v == {} and isinstance(member, StructureShape) and member.required_members:
                continue
            else:
                out[k] = trim(v, member)
        return out
    if isinstance(shape, ListShape) and isinstance(value, list):
        return [trim(v, shape.member) for v in value]
    if isinstance(shape, MapShape) and isinstance(value, dict):
        return {k: trim(v, shape.value) for k, v in value.items()}
    return value


def _call_action(original: Any) -> Any:
    def call_action(self: Any) -> Any:
        status, headers, body = original(self)
        if not isinstance(body, str | bytes) or int(status) >= 300 or "{}" not in (body if isinstance(body, str) else body.decode()):
            return status, headers, body
        from moto.core.responses import get_service_model

        try:
            shape = get_service_model("sagemaker").operation_model(self._get_action()).output_shape
            data = json.loads(body)
        except Exception:  # noqa: BLE001 - not JSON, or an operation botocore does not know: as moto said it
            return status, headers, body
        if shape is None:
            return status, headers, body
        return status, headers, json.dumps(trim(data, shape))

    return call_action


def apply() -> None:
    from moto.sagemaker.responses import SageMakerResponse

    if getattr(SageMakerResponse, "_reaper_shapes", False):
        return
    SageMakerResponse.call_action = _call_action(SageMakerResponse.call_action)  # type: ignore[method-assign]
    SageMakerResponse._reaper_shapes = True  # type: ignore[attr-defined]
