"""The test kit's capacity reservations refuse what AWS refuses (moto_ext/capacity.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from botocore.exceptions import ClientError

from reaper_devkit import seed_capacity, seed_ec2
from reaper_devkit.moto_ext import capacity


def test_a_capacity_block_cannot_be_cancelled(aws):
    ec2, now = aws.client("ec2"), datetime.now(UTC)
    block = capacity.capacity_block(ec2, "p5.48xlarge", 1, start=now - timedelta(days=1), end=now + timedelta(days=1))
    with pytest.raises(ClientError, match="UnsupportedOperation"):
        ec2.cancel_capacity_reservation(CapacityReservationId=block)


def test_a_committed_reservation_cannot_be_cancelled_before_its_commitment_ends(aws):
    ec2, now = aws.client("ec2"), datetime.now(UTC)
    cr = seed_capacity.odcr(ec2, now=now, committed_until=now + timedelta(days=3))
    with pytest.raises(ClientError, match="InvalidCapacityReservationState"):
        ec2.cancel_capacity_reservation(CapacityReservationId=cr)
    [row] = ec2.describe_capacity_reservations(CapacityReservationIds=[cr])["CapacityReservations"]
    assert row["State"] == "active" and row["CommitmentInfo"]["CommittedInstanceCount"] == 2


def test_counts_follow_the_instances_placed_in_it_and_a_cancel_keeps_it_listed(aws):
    ec2, now = aws.client("ec2"), datetime.now(UTC)
    cr = seed_capacity.odcr(ec2, "p4d.24xlarge", 2, now=now)
    capacity.place(seed_ec2.instance(ec2, "p4d.24xlarge", now=now), cr)
    [row] = ec2.describe_capacity_reservations(CapacityReservationIds=[cr])["CapacityReservations"]
    assert (row["TotalInstanceCount"], row["AvailableInstanceCount"]) == (2, 1)
    assert ec2.cancel_capacity_reservation(CapacityReservationId=cr)["Return"] is True
    with pytest.raises(ClientError, match="InvalidCapacityReservationState"):
        ec2.cancel_capacity_reservation(CapacityReservationId=cr)
    with pytest.raises(ClientError, match="InvalidCapacityReservationId.NotFound"):
        ec2.describe_capacity_reservations(CapacityReservationIds=["cr-0123456789abcdef0"])


@pytest.mark.parametrize("name", ["capacity-reservation-id", "reservation-type", "tag:ml:owner"])
def test_a_filter_the_call_does_not_list_is_refused_as_ec2_refuses_it(aws, name):
    # Given a reservation, When it is asked for by a filter DescribeCapacityReservations does not document
    ec2, now = aws.client("ec2"), datetime.now(UTC)
    cr = seed_capacity.odcr(ec2, now=now, tags={"ml:owner": "ana"})
    # Then EC2's answer to an unknown filter, not a silent match
    with pytest.raises(ClientError, match=f"InvalidParameterValue.*The filter '{name}' is invalid"):
        ec2.describe_capacity_reservations(Filters=[{"Name": name, "Values": [cr]}])


def test_the_documented_filters_select(aws):
    ec2, now = aws.client("ec2"), datetime.now(UTC)
    open_cr = seed_capacity.odcr(ec2, "p4d.24xlarge", now=now)
    targeted = seed_capacity.odcr(ec2, "p5.48xlarge", now=now, match="targeted")

    def ids(**filters: str) -> list[str]:
        asked = [{"Name": k.replace("_", "-"), "Values": [v]} for k, v in filters.items()]
        return [r["CapacityReservationId"] for r in ec2.describe_capacity_reservations(Filters=asked)["CapacityReservations"]]

    assert ids(instance_type="p5.48xlarge") == [targeted]
    assert ids(instance_match_criteria="open") == [open_cr]
    assert sorted(ids(state="active", availability_zone="us-east-1a", tenancy="default")) == sorted([open_cr, targeted])
    assert ids(outpost_arn="arn:aws:outposts:us-east-1:123456789012:outpost/op-0123456789abcdef0") == []
