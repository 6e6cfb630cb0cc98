"""Spot advice, pure: who gets it, the figure, and what it says about checkpointing."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from reaper.kinds.training_job.model import Cluster, JobFacts
from reaper.kinds.training_job.spot import SPOT_DISCOUNT, spot_advice

START = datetime(2026, 12, 2, 8, tzinfo=UTC)
CLUSTER = Cluster("ml.p3.2xlarge", 1, 3.825)


def facts(**kw: object) -> JobFacts:
    base: dict[str, object] = {"job_type": "training", "started_at": START, "spans": (), "cluster": CLUSTER}
    return JobFacts(**{**base, **kw})  # type: ignore[arg-type]


def test_a_ten_hour_limit_gets_the_saving_over_its_limit_and_the_checkpoint_warning() -> None:
    advice = spot_advice(facts(max_runtime_s=36_000), 3.825, elapsed_hours=1.0)
    assert advice is not None
    assert advice.evidence == {"expected_hours": 10.0, "assumed_spot_discount": SPOT_DISCOUNT, "checkpointing": False,
                               "estimated_saving_usd": round(3.825 * 10 * SPOT_DISCOUNT, 2)}  # fmt: skip
    assert "$26.77" in advice.text and "70 %" in advice.text and "no CheckpointConfig: add checkpointing first" in advice.text
    assert "not stopped" in advice.text


def test_a_checkpointing_job_is_told_how_to_switch() -> None:
    advice = spot_advice(facts(max_runtime_s=36_000, checkpoint_s3="s3://b/ck"), 3.825, elapsed_hours=1.0)
    assert advice is not None and "checkpoints to s3://b/ck" in advice.text and advice.evidence["checkpointing"] is True


@pytest.mark.parametrize(
    ("kw", "elapsed"),
    [
        ({"max_runtime_s": 36_000, "spot": True}, 5.0),  # already on spot
        ({"max_runtime_s": 3_600}, 0.9),  # a one-hour job
        ({"max_runtime_s": 36_000}, 0.2),  # long limit, but just started
        ({"max_runtime_s": 86_400}, 1.5),  # the SDK's default limit says nothing about the length
        ({"max_runtime_s": 36_000, "job_type": "processing"}, 5.0),  # no managed spot for processing jobs
        ({"max_runtime_s": 36_000, "tuning_job_arn": "arn:aws:sagemaker:us-east-1:1:hyper-parameter-tuning-job/h"}, 5.0),
        ({"max_runtime_s": None}, 1.9),
    ],
)
def test_no_advice_where_spot_is_used_impossible_or_the_run_is_short(kw: dict[str, object], elapsed: float) -> None:
    assert spot_advice(facts(**kw), 3.825, elapsed) is None


def test_two_hours_in_is_advised_on_what_it_ran_so_far_and_an_unpriced_type_gets_no_figure() -> None:
    priced = spot_advice(facts(max_runtime_s=86_400), 3.825, elapsed_hours=2.5)
    assert priced is not None and priced.evidence["expected_hours"] == 2.5 and "2.5 h so far" in priced.text
    unpriced = spot_advice(facts(max_runtime_s=None), None, elapsed_hours=3.0)
    assert unpriced is not None and "estimated_saving_usd" not in unpriced.evidence and "no figure" in unpriced.text
