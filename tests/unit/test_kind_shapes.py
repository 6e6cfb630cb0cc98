"""The AWS answers the endpoint, training-job, studio-app and ec2 kinds read are typed (each kind's shapes.py,
TypedDicts named after AWS's shapes): mypy checks every member the code reads, so a misspelt or unknown member
is refused where a `dict[str, Any]` let it through (issue 35)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
import typing_extensions

from tests.helpers.shapes import required_members

LAYER = Path(__file__).resolve().parents[2] / "layers" / "reaper"
PACKAGES = ("endpoint", "training_job", "studio_app", "ec2")
# The shapes modules: each kind's own, and the SageMaker shapes several read (typed once, reaper/aws/sagemaker_shapes.py)
MODULES = {**{p: f"reaper.kinds.{p}.shapes" for p in PACKAGES}, "sagemaker": "reaper.aws.sagemaker_shapes"}
# What is left on purpose: studio_app/created.py returns reaper.kinds.creation.notice's value, whose type is not the kind's.
LEFT = 5

MISREAD = """
from typing import Any

from reaper.aws.clients import Clients
from reaper.core.model import Resource
from reaper.kinds.ec2.discover import running_instances
from reaper.kinds.endpoint.actions import current_read
from reaper.kinds.studio_app.shapes import describe_domain
from reaper.kinds.training_job.shapes import describe_training_job


def misread(clients: Clients, r: Resource, sm: Any) -> None:
    _, desc = current_read(clients, r)
    if desc is not None:
        print(desc["EndpointStatus"])  # fine
        print(desc["EndpointStatuss"])  # misread
    for _owner, inst in running_instances(clients, ["p5.48xlarge"]):
        print(inst["InstanceType"], inst["InstanceTypo"])  # misread
    print(describe_training_job(sm, "j")["TrainingJobStatus"], describe_training_job(sm, "j")["TrainingJobState"])  # misread
    settings = describe_domain(sm, "d-1")["DefaultUserSettings"]
    print(settings["JupyterLabAppSettings"], settings["JupyterLabAppSetting"])  # misread
"""


def test_mypy_refuses_a_misread_member_of_an_aws_answer(tmp_path, monkeypatch):
    # Given code reading members of what the kinds' own reads return, one right and four misspelt
    api = pytest.importorskip("mypy.api")
    bad = tmp_path / "misread.py"
    bad.write_text(textwrap.dedent(MISREAD))
    monkeypatch.setenv("MYPYPATH", str(LAYER))
    # When mypy --strict reads it
    out, _err, status = api.run(["--strict", "--follow-imports=silent", "--cache-dir", str(tmp_path / ".mypy"), str(bad)])
    # Then each misspelt member is refused on its line, by the shape it is not in, and nothing else is
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert status == 1, out
    misread = [n for n, line in enumerate(bad.read_text().splitlines(), start=1) if line.endswith("# misread")]
    refused = {int(line.split(":")[1]): line for line in errors}
    assert sorted(refused) == misread, out
    endpoint, ec2, job, domain = misread
    assert '"DescribeEndpointOutput" has no key "EndpointStatuss"' in refused[endpoint]
    assert '"Instance" has no key "InstanceTypo"' in refused[ec2]
    assert '"TrainingJob" has no key "TrainingJobState"' in refused[job]
    assert '"UserSettings" has no key "JupyterLabAppSetting"' in refused[domain]


@pytest.mark.parametrize("package", MODULES)
def test_each_kind_names_the_aws_pages_its_shapes_follow(package):
    # Given the kind's shapes module (or the shared SageMaker one): its docstring cites the API reference it follows
    text = (LAYER / (MODULES[package].replace(".", "/") + ".py")).read_text()
    assert re.search(r"https://docs\.aws\.amazon\.com/\S+/APIReference/", text)
    # And an answer enters typed only through annotated helpers: no cast sprinkled in the module
    assert "cast(" not in text


def test_dict_str_any_is_nearly_gone_from_these_kinds():
    # Given the four kinds' modules: the issue's count (`grep "dict\[str, Any\]"`), which was 104 lines
    lines = [
        f"{path.name}:{n}"
        for package in PACKAGES
        for path in sorted((LAYER / "reaper" / "kinds" / package).glob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), start=1)
        if "dict[str, Any]" in line
    ]
    assert len(lines) <= LEFT, lines


# Each TypedDict of a kind's shapes.py: (botocore service, the botocore shapes it follows; the first decides Required)
BOTOCORE = {
    "endpoint": {
        "ProductionVariant": ("sagemaker", "ProductionVariant"),
        "DescribeEndpointConfigOutput": ("sagemaker", "DescribeEndpointConfigOutput"),
        "ModelSummary": ("sagemaker", "ModelSummary"),
        "ListModelsOutput": ("sagemaker", "ListModelsOutput"),
        "InferenceComponentRuntimeConfigSummary": ("sagemaker", "InferenceComponentRuntimeConfigSummary"),
        "DescribeInferenceComponentOutput": ("sagemaker", "DescribeInferenceComponentOutput"),
        "InferenceComponentSummary": ("sagemaker", "InferenceComponentSummary"),
        "SuspendedState": ("application-autoscaling", "SuspendedState"),
        "ScalableTarget": ("application-autoscaling", "ScalableTarget"),
        "StepAdjustment": ("application-autoscaling", "StepAdjustment"),
        "StepScalingPolicyConfiguration": ("application-autoscaling", "StepScalingPolicyConfiguration"),
        "TargetTrackingScalingPolicyConfiguration": ("application-autoscaling", "TargetTrackingScalingPolicyConfiguration"),
        "Alarm": ("application-autoscaling", "Alarm"),
        "ScalingPolicy": ("application-autoscaling", "ScalingPolicy"),
        "MetricAlarm": ("cloudwatch", "MetricAlarm"),
    },
    "training_job": {
        "ProcessingClusterConfig": ("sagemaker", "ProcessingClusterConfig"),
        "ProcessingResources": ("sagemaker", "ProcessingResources"),
        "ProcessingJob": ("sagemaker", "DescribeProcessingJobResponse"),
        "HyperParameterTuningInstanceConfig": ("sagemaker", "HyperParameterTuningInstanceConfig"),
        "HyperParameterTuningResourceConfig": ("sagemaker", "HyperParameterTuningResourceConfig"),
        "HyperParameterTrainingJobDefinition": ("sagemaker", "HyperParameterTrainingJobDefinition"),
        "HyperParameterTuningJobObjective": ("sagemaker", "HyperParameterTuningJobObjective"),
        "HyperParameterTuningJobConfig": ("sagemaker", "HyperParameterTuningJobConfig"),
        "BestTrainingJob": ("sagemaker", "HyperParameterTrainingJobSummary"),
        "HyperParameterTuningJob": ("sagemaker", "DescribeHyperParameterTuningJobResponse"),
        "TransformResources": ("sagemaker", "TransformResources"),
        "TransformJob": ("sagemaker", "DescribeTransformJobResponse"),
        "AutoMLJob": ("sagemaker", "DescribeAutoMLJobV2Response"),
    },
    "studio_app": {
        "IdleSettings": ("sagemaker", "IdleSettings"),
        "AppLifecycleManagement": ("sagemaker", "AppLifecycleManagement"),
        "AppSettings": ("sagemaker", "JupyterLabAppSettings", "CodeEditorAppSettings"),
        "UserSettings": ("sagemaker", "UserSettings"),
        "DefaultSpaceSettings": ("sagemaker", "DefaultSpaceSettings"),
        "Domain": ("sagemaker", "DescribeDomainResponse"),
        "DomainDetails": ("sagemaker", "DomainDetails"),
        "OwnershipSettingsSummary": ("sagemaker", "OwnershipSettingsSummary"),
        "SpaceSharingSettingsSummary": ("sagemaker", "SpaceSharingSettingsSummary"),
        "SpaceDetails": ("sagemaker", "SpaceDetails"),
    },
    # reaper/aws/sagemaker_shapes.py: the SageMaker shapes more than one kind (and the unit costs) read
    "sagemaker": {
        "Tag": ("sagemaker", "Tag"),
        "InstanceGroup": ("sagemaker", "InstanceGroup"),
        "ResourceConfig": ("sagemaker", "ResourceConfig"),
        "StoppingCondition": ("sagemaker", "StoppingCondition"),
        "CheckpointConfig": ("sagemaker", "CheckpointConfig"),
        "WarmPoolStatus": ("sagemaker", "WarmPoolStatus"),
        "AlgorithmSpecification": ("sagemaker", "AlgorithmSpecification"),
        "FileSystemDataSource": ("sagemaker", "FileSystemDataSource"),
        "S3DataSource": ("sagemaker", "S3DataSource"),
        "DataSource": ("sagemaker", "DataSource"),
        "Channel": ("sagemaker", "Channel"),
        "TrainingJob": ("sagemaker", "DescribeTrainingJobResponse", "TrainingJob"),
        "ManagedInstanceScaling": ("sagemaker", "ProductionVariantManagedInstanceScaling"),
        "ProductionVariantSummary": ("sagemaker", "ProductionVariantSummary"),
        "DescribeEndpointOutput": ("sagemaker", "DescribeEndpointOutput"),
        "Endpoint": ("sagemaker", "Endpoint"),
    },
    "ec2": {
        "Tag": ("ec2", "Tag"),
        "InstanceState": ("ec2", "InstanceState"),
        "HibernationOptions": ("ec2", "HibernationOptions"),
        "Instance": ("ec2", "Instance"),
        "Reservation": ("ec2", "Reservation"),
        "SpotInstanceRequest": ("ec2", "SpotInstanceRequest"),
        "DeviceInfo": ("ec2", "GpuDeviceInfo", "NeuronDeviceInfo", "InferenceDeviceInfo"),
        "GpuInfo": ("ec2", "GpuInfo"),
        "NeuronInfo": ("ec2", "NeuronInfo"),
        "InferenceAcceleratorInfo": ("ec2", "InferenceAcceleratorInfo"),
        "InstanceStorageInfo": ("ec2", "InstanceStorageInfo"),
        "InstanceTypeInfo": ("ec2", "InstanceTypeInfo"),
    },
}


@pytest.mark.parametrize("package", MODULES)
def test_each_shape_holds_only_aws_members_and_requires_only_what_aws_does(package):
    # Given a kind's shapes and botocore's model of the AWS shapes each follows
    import importlib

    import botocore.session

    session = botocore.session.get_session()
    module = importlib.import_module(MODULES[package])
    shapes = {n: v for n, v in vars(module).items() if typing_extensions.is_typeddict(v) and v.__module__ == module.__name__}
    # Then every shape is mapped (so a new one is checked too) ...
    assert sorted(shapes) == sorted(BOTOCORE[package])
    wrong = []
    for name, typed in shapes.items():
        service, *aws_names = BOTOCORE[package][name]
        model = session.get_service_model(service)
        aws = [model.shape_for(n) for n in aws_names]
        members = set().union(*(a.members for a in aws))
        # ... each member is one AWS's shape has, and a member is Required only where AWS requires it
        wrong += [f"{name}.{m}: not in {aws_names}" for m in typed.__annotations__ if m not in members]
        wrong += [f"{name}.{m}: Required, AWS says not" for m in required_members(typed) if m not in aws[0].required_members]
    assert not wrong, wrong


def test_a_sagemaker_shape_several_read_is_typed_once_in_the_aws_shapes_module():
    # Given every TypedDict class the layer defines, by name (Tag aside: FSx, EC2 and the tagging API have their own;
    # a kind's own dataclass may share a name, training_job.model.Channel: only TypedDicts count)
    import ast

    shared = set(BOTOCORE["sagemaker"]) - {"Tag"}

    def typed_dict(node: ast.ClassDef) -> bool:
        return any(ast.unparse(b).split(".")[-1] in {"TypedDict", *shared} for b in node.bases)

    home = LAYER / (MODULES["sagemaker"].replace(".", "/") + ".py")
    defined = [
        (node.name, path.relative_to(LAYER).as_posix())
        for path in sorted((LAYER / "reaper").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ClassDef) and node.name in shared and typed_dict(node) and path != home
    ]
    # Then none of the shared SageMaker shapes is defined again anywhere else
    assert defined == []
