"""The bench's floor and bill arithmetic (bench/floor.py, bench/cost_model.py)."""

from __future__ import annotations

import pytest

from bench import cost_model
from bench.floor import ItemCounter


def test_floor_is_full_pages_and_full_metric_batches_and_per_resource_reads_as_recorded() -> None:
    # Given a sweep that read 250 search results in 10 pages, sent 1,200 metric queries in 5 calls,
    # and described 40 configurations
    c = ItemCounter()
    c.items["sagemaker:Search"] = 250
    c.queries["cloudwatch:GetMetricData"] = 1200
    calls = {"sagemaker:Search": 10, "cloudwatch:GetMetricData": 5, "sagemaker:DescribeEndpointConfig": 40, "sagemaker:ListModels": 1}
    # Then the floor is 3 pages, 3 batches, the 40 describes, and one call for an empty list
    assert c.floor(calls) == {
        "sagemaker:Search": 3,
        "cloudwatch:GetMetricData": 3,
        "sagemaker:DescribeEndpointConfig": 40,
        "sagemaker:ListModels": 1,
    }


def test_floor_never_exceeds_what_was_called() -> None:
    c = ItemCounter()
    c.items["sagemaker:Search"] = 1000  # 10 pages' worth, fetched in fewer calls cannot happen, but never claim more
    assert c.floor({"sagemaker:Search": 4}) == {"sagemaker:Search": 4}


def test_notebook_agent_bill_by_default_is_the_contracts_custom_metric() -> None:
    # Given 1,000 notebooks with the default AgentChannel=metric: one custom metric each ($0.30) and
    # a PutMetricData every 5 minutes (8,640 a month at $0.01 per 1,000)
    bill = cost_model.monthly_bill("notebook", 1000, {"sagemaker:ListNotebookInstances": 10, "cloudwatch:GetMetricData": 2}, 900, {})
    assert bill["agent_metric"] == pytest.approx(300.0) and bill["agent_puts"] == pytest.approx(86.4)
    assert "agent_logs_ingestion" not in bill and "agent_logs_storage" not in bill
    assert bill == cost_model.monthly_bill(
        "notebook", 1000, {"sagemaker:ListNotebookInstances": 10, "cloudwatch:GetMetricData": 2}, 900, {}, "metric"
    )


def test_notebook_agent_bill_with_logs_is_the_bytes_of_its_samples() -> None:
    # Given 1,000 notebooks with AgentChannel=logs, each sending a 120-byte sample every 5 minutes
    # (8,640 a month): about 0.97 GB ingested at $0.50 per GB, kept 14 days at $0.03 per GB-month; no custom metric
    bill = cost_model.monthly_bill(
        "notebook", 1000, {"sagemaker:ListNotebookInstances": 10, "logs:FilterLogEvents": 4}, 0, {}, agent_channel="logs"
    )
    assert bill["agent_logs_ingestion"] == pytest.approx(1000 * 8640 * 120 / 1024**3 * 0.50, abs=1e-4)
    assert bill["agent_logs_storage"] == pytest.approx(1000 * 8640 * 120 * 14 / 30 / 1024**3 * 0.03, abs=1e-4)
    assert "agent_metric" not in bill and "agent_puts" not in bill
    assert bill["getmetricdata"] == 0 and bill["cloudwatch_api"] == 0  # FilterLogEvents has no request price
    assert bill["total"] == pytest.approx(sum(v for k, v in bill.items() if k != "total"), abs=0.01)
    # what the same agents cost as the contract's custom metric
    assert cost_model.agent_metric_bill(1000) == {"agent_metric": pytest.approx(300.0), "agent_puts": pytest.approx(86.4)}


def test_filter_log_events_floor_is_full_pages_by_events_or_bytes() -> None:
    c = ItemCounter()
    c.items["logs:FilterLogEvents"] = 36_000
    c.bytes["logs:FilterLogEvents"] = 6_000_000  # about 167 bytes an event: the 1 MB cap binds first
    assert c.floor({"logs:FilterLogEvents": 9}) == {"logs:FilterLogEvents": 6}
    c.bytes["logs:FilterLogEvents"] = 1_000_000  # small events: 10,000 a page binds
    assert c.floor({"logs:FilterLogEvents": 9}) == {"logs:FilterLogEvents": 4}


def test_getmetricdata_is_billed_by_metrics_requested_per_sweep() -> None:
    # 1,000 queries a sweep, every 15 minutes (2,880 sweeps a month), $0.01 per 1,000 metrics
    bill = cost_model.monthly_bill("endpoint", 1000, {"cloudwatch:GetMetricData": 2}, 1000, {})
    assert bill["getmetricdata"] == pytest.approx(28.8)


def test_projection_uses_the_stated_latencies() -> None:
    assert cost_model.projected_seconds({"sagemaker:Search": 10, "cloudwatch:GetMetricData": 2}) == pytest.approx(1.6)


def test_a_sweep_past_half_the_timeout_is_counted_in_parts_and_checked_against_its_interval() -> None:
    # Given a kind projected at 69.5 s for 1,000 resources (695 s for 10,000)
    plan = cost_model.parts(69.5, 1000)
    # Then 10,000 take five parts of at most 150 s, each a minute after the last
    assert plan["parts"] == 5 and plan["projected_s"] == pytest.approx(695)
    assert plan["last_part_starts_min"] == pytest.approx(4 * 210 / 60, abs=0.05)
    assert plan["chain_min"] == pytest.approx(14 + 95 / 60, abs=0.05)  # the last part has 95 s left to do
    assert cost_model.fits_interval("fsx", plan)  # done before the next hourly sweep
    assert not cost_model.fits_interval("studio-app", plan)  # outlasts 15 minutes: that sweep defers to the chain
    assert cost_model.parts(10.0, 1000)["parts"] == 1


def test_floor_of_reads_by_ids_is_the_ids_over_the_most_one_call_takes() -> None:
    # Given 500 backups read by id (BackupIds takes at most 50 a call) in 10 calls, and export tasks
    # both read by 120 ids in 3 calls and listed once (an empty page)
    c = ItemCounter()
    c.ids["fsx:DescribeBackups"], c.id_calls["fsx:DescribeBackups"] = 500, 10
    c.ids["fsx:DescribeDataRepositoryTasks"], c.id_calls["fsx:DescribeDataRepositoryTasks"] = 120, 3
    # Then the floor is 10 reads of 50 (not one page of a list), and 3 reads plus the one listing
    assert c.floor({"fsx:DescribeBackups": 10, "fsx:DescribeDataRepositoryTasks": 4}) == {
        "fsx:DescribeBackups": 10,
        "fsx:DescribeDataRepositoryTasks": 4,
    }
    # And reading them one id a call is 500 calls against that floor of 10
    c.id_calls["fsx:DescribeBackups"] = 500
    assert c.floor({"fsx:DescribeBackups": 500})["fsx:DescribeBackups"] == 10


def test_jupyter_reads_are_billed_as_a_reading_phase_bounded_by_the_budget_and_the_agent_only_where_it_runs() -> None:
    # Given one reading = 1 SageMaker call and 5 HTTP requests at the stated latencies (0.1 s each)
    reading = cost_model.jupyter_reading_seconds(1, 5)
    assert reading == pytest.approx(0.6)
    # Then 1,000 readings, 40 at a time, take 25 x 0.6 s; 10,000 would take more than the budget, which cuts the phase
    assert cost_model.JUPYTER_WORKERS == 40
    assert cost_model.jupyter_phase_seconds(1_000, reading) == pytest.approx(25 * reading)  # modelled: 25 rounds, no clock read
    assert cost_model.jupyter_phase_seconds(10_000, reading) == cost_model.JUPYTER_BUDGET_S
    assert cost_model.jupyter_phase_seconds(0, reading) == 0.0
    assert cost_model.jupyter_reach(reading) == 6_000  # 150 rounds of 0.6 s in the 90 s budget, 40 a round
    # And the presigned URLs are timed inside that phase, not one after another with the sweep's calls
    calls = {"sagemaker:ListNotebookInstances": 10, cost_model.PRESIGN: 1_000}
    assert cost_model.projected_seconds(calls) == pytest.approx(1.0)
    # And with no notebook running the agent, the bill has no custom metric, only the phase's GB-s
    bill = cost_model.monthly_bill("notebook", 1_000, calls, 1_000, {}, agents=0, jupyter_seconds=60.0)
    assert bill["agent_metric"] == 0 and bill["agent_puts"] == 0
    assert bill["jupyter_reads_lambda"] == pytest.approx(2_880 * 60.0 * 0.5 * cost_model.LAMBDA_GB_S, abs=1e-4)
    assert cost_model.monthly_bill("notebook", 1_000, calls, 1_000, {}, agents=900)["agent_metric"] == pytest.approx(270.0)
