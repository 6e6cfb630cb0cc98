"""The shape check itself: it finds what AWS would refuse and what AWS would never answer."""

from __future__ import annotations

import datetime as dt

import botocore.session

from tests.plugins.aws_shapes import request_problems, response_problems

MODELS = botocore.session.get_session()


def op(service: str, name: str):
    return MODELS.get_service_model(service).operation_model(name)


def test_requests_are_held_to_patterns_lengths_ranges_and_enums():
    shape = op("sagemaker", "ListTrainingJobs").input_shape
    assert list(request_problems({"MaxResults": 100, "StatusEquals": "InProgress"}, shape, "")) == []
    assert list(request_problems({"MaxResults": 101}, shape, "")) == ["MaxResults=101 is above the maximum 100"]
    assert list(request_problems({"StatusEquals": "Running"}, shape, ""))[0].startswith("StatusEquals='Running' is not one of")
    describe = op("sagemaker", "DescribeTrainingJob").input_shape
    assert "does not match pattern" in next(iter(request_problems({"TrainingJobName": "bad_name"}, describe, "")))
    assert "more than the maximum 63" in next(iter(request_problems({"TrainingJobName": "a" * 64}, describe, "")))
    tags = op("fsx", "TagResource").input_shape
    found = list(
        request_problems(
            {"ResourceARN": "arn:aws:fsx:us-east-1:123456789012:file-system/fs-0123456789abcdef0", "Tags": [{"Key": "k", "Value": "a,b"}]},
            tags,
            "",
        )
    )
    assert len(found) == 1 and found[0].startswith("Tags[0].Value='a,b' does not match pattern")


def test_patterns_written_for_java_utf16_are_understood():
    shape = op("application-autoscaling", "DescribeScalableTargets").input_shape
    ok = {"ServiceNamespace": "sagemaker", "ResourceIds": ["endpoint/e/variant/AllTraffic \U0001f600"]}
    assert list(request_problems(ok, shape, "")) == []


def test_answers_must_carry_required_members_of_the_right_type():
    shape = op("sagemaker", "DescribeEndpoint").output_shape
    good = {
        "EndpointName": "e",
        "EndpointArn": "arn:aws:sagemaker:us-east-1:123456789012:endpoint/e",
        "EndpointStatus": "InService",
        "CreationTime": dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
        "LastModifiedTime": dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    }
    assert list(response_problems(good, shape, "")) == []
    assert (
        list(response_problems({**good, "DataCaptureConfig": {}}, shape, ""))[0]
        == "DataCaptureConfig.EnableCapture is required and missing"
    )
    assert list(response_problems({k: v for k, v in good.items() if k != "EndpointStatus"}, shape, "")) == [
        "EndpointStatus is required and missing"
    ]
    assert list(response_problems({**good, "CreationTime": "2026-01-01"}, shape, "")) == ["CreationTime='2026-01-01' is str, not timestamp"]
    assert list(response_problems({**good, "ProductionVariants": [{"VariantName": "v", "CurrentWeight": True}]}, shape, "")) == [
        "ProductionVariants[0].CurrentWeight=True is bool, not float"
    ]
