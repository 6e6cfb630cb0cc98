"""`make deploy-org` from the management account or a delegated administrator (docs/deploy-organisation.md).

CloudFormation's CallAs defaults to SELF (the management account); a delegated administrator must pass
DELEGATED_ADMIN on the StackSet and on its stack instances (docs/aws-assumptions.md SS1, SS2). What make
would run is read with `make -n`: nothing is called in AWS.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ORG = [
    "ORG_BUCKET=mlreaper-artifacts",
    "ORG_REGIONS=us-east-1 eu-west-1",
    "ORG_OUS=ou-abcd-11112222",
    "CENTRAL_BUS_ARN=arn:aws:events:us-east-1:111122223333:event-bus/mlreaper-central-org",
    "CENTRAL_ACCOUNT=111122223333",
]


def make_deploy_org(*extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["make", "-n", "deploy-org", *ORG, *extra], cwd=ROOT, capture_output=True, text=True, timeout=60)


def stackset_calls(recipe: str) -> list[str]:
    """Each `aws cloudformation ...stack-set...|...stack-instances...` command, continuation lines joined."""
    joined = recipe.replace("\\\n", " ")
    return [line for line in joined.splitlines() if re.search(r"aws cloudformation \S*stack-(set|instances)", line)]


@pytest.mark.parametrize(
    ("given", "expected"), [((), "SELF"), (("ORG_CALL_AS=SELF",), "SELF"), (("ORG_CALL_AS=DELEGATED_ADMIN",), "DELEGATED_ADMIN")]
)
def test_every_stackset_call_carries_the_call_as_the_admin_chose(given, expected):
    # Given the organisation's variables and ORG_CALL_AS (or none: the management account)
    # When make says what deploy-org would run
    done = make_deploy_org(*given)
    # Then both StackSet calls are there, and each says who calls, once
    assert done.returncode == 0, done.stderr
    calls = stackset_calls(done.stdout)
    assert [c.split()[2] for c in calls] == ["create-stack-set", "create-stack-instances"]
    for call in calls:
        assert re.findall(r"--call-as (\S+)", call) == [expected], call


@pytest.mark.parametrize("bad", ["ORG_CALL_AS=delegated", "ORG_CALL_AS=", "ORG_CALL_AS=SELF DELEGATED_ADMIN"])
def test_an_unknown_call_as_is_refused_before_anything_runs(bad):
    # When ORG_CALL_AS is neither value
    done = make_deploy_org(bad)
    # Then make stops with exit 2 and says which values it takes, having run nothing
    assert done.returncode == 2
    assert "ORG_CALL_AS must be SELF" in done.stderr and "DELEGATED_ADMIN" in done.stderr
    assert "aws " not in done.stdout and "sam " not in done.stdout
