"""The training-job decision as a pure function: ceilings, the 80 % warning, divergence, GPU advice,
and the shared rules (exempt, snooze, production, bad tags, grace) on top of it."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from reaper.aws import pricing
from reaper.core.model import Decision, Mode, Resource, Verdict
from reaper.core.price import LIVE, Price
from reaper.core.settings import Settings
from reaper.kinds.training_job.cost import cluster
from reaper.kinds.training_job.model import Channel, Cluster, JobFacts, LogHit, Progress, Span
from reaper.kinds.training_job.settings import TrainingJobSettings
from reaper.kinds.training_job.starved import channels
from reaper.sweep.pipeline import decide as pipeline_decide
from tests.helpers.training_rules import DEFAULTS, KIND, NOW, REGION, decide, job, sig


# -- runtime ceiling ----------------------------------------------------------------------------
def test_under_the_runtime_ceiling_is_kept_with_its_figures():
    d = decide(job(hours_ago=2, spot=True), sig())  # spot: no spot advice to give
    assert d.verdict is Verdict.KEEP and not d.notify
    assert d.reason.startswith("within its ceilings: 2 h 00 m of 24 h, est. $7.65 of $500.00")


def test_past_the_default_runtime_ceiling_is_stopped():
    d = decide(job(hours_ago=24.5), sig())
    assert d.verdict is Verdict.ACT and d.action == "stop"
    assert d.reason.startswith("ran 24 h 30 m, past its 24 h runtime ceiling (the stack default)")
    assert d.evidence["elapsed_hours"] == 24.5 and d.evidence["max_hours"] == 24.0


def test_a_max_hours_tag_raises_or_lowers_the_runtime_ceiling():
    assert decide(job(30, {"reaper:max-hours": "48"}), sig()).verdict is Verdict.KEEP
    lowered = decide(job(3, {"reaper:max-hours": "2.5"}), sig())
    assert lowered.verdict is Verdict.ACT and "past its 2.5 h runtime ceiling (tag reaper:max-hours)" in lowered.reason


def test_a_job_not_started_yet_has_run_for_nothing():
    r = job(1)
    r.facts = replace(r.facts_as(JobFacts), started_at=None, spans=(Span(None, None, r.hourly_usd),))
    d = decide(r, sig())
    assert d.verdict is Verdict.KEEP and "0 m of 24 h" in d.reason and "$0.00" in d.reason


# -- cost ceiling -------------------------------------------------------------------------------
def test_past_the_cost_ceiling_is_stopped_with_the_price_basis():
    # Given 2 x ml.p3.2xlarge ($3.825/h each) for 7 h = $53.55 against a $50 tag
    d = decide(job(7, {"reaper:max-usd": "50"}, count=2), sig())
    assert d.verdict is Verdict.ACT
    dated = pricing.row(pricing.TRAINING, REGION, "ml.p3.2xlarge")["as_of"]
    assert d.reason == (
        "estimated cost $53.55 is past its $50.00 cost ceiling (tag reaper:max-usd; 2 x ml.p3.2xlarge at $7.65/h list price, "
        f"shipped copy of AWS's price list (dated {dated}))"
    )
    assert d.evidence["estimated_usd"] == 53.55 and d.evidence["estimate_is_upper_bound"] is False


def test_the_ceilings_reason_names_the_live_price_list_and_its_date():
    # Given the job's price came from the AWS Price List API (the figure is the shipped copy's, the source the API's)
    r = job(7, {"reaper:max-usd": "50"}, count=2)
    facts = r.facts_as(JobFacts)
    live = Price(facts.cluster.hourly_usd or 0.0, LIVE, "2026-12-05", "ABC123")
    r.facts = replace(facts, cluster=replace(facts.cluster, price=live))
    # Then the reason says where the figure comes from and when
    assert decide(r, sig()).reason.endswith("at $7.65/h list price, AWS Price List API 2026-12-05)")


def test_managed_spot_past_the_ceiling_on_the_on_demand_estimate_alone_is_told_not_stopped():
    # Given a spot job whose on-demand x wall-time estimate ($53.55) passes its $50 tag, billable time not yet reported
    d = decide(job(7, {"reaper:max-usd": "50"}, count=2, spot=True), sig())
    # Then it is an upper bound: the owner is told, the job is not stopped
    assert d.verdict is Verdict.KEEP and d.notify is True and d.notify_key == "spot-upper-bound"
    assert "managed spot" in d.reason and "upper bound" in d.reason and "not stopped" in d.reason
    assert d.evidence["estimate_is_upper_bound"] is True


def test_managed_spot_is_judged_on_billable_time_when_sagemaker_reports_it():
    # 7 h wall time, but only 3 h billable (interruptions): 3 h x $7.65 = $22.95 < $50: kept
    kept = decide(job(7, {"reaper:max-usd": "50"}, count=2, spot=True, billable_s=3 * 3600), sig())
    assert kept.verdict is Verdict.KEEP and kept.evidence["estimated_usd_billable"] == 22.95
    # 7 h billable: $53.55 >= $50: stopped, and the reason says what it was judged on
    stopped = decide(job(7, {"reaper:max-usd": "50"}, count=2, spot=True, billable_s=7 * 3600), sig())
    assert stopped.verdict is Verdict.ACT and "$53.55" in stopped.reason and "25,200 billable seconds" in stopped.reason


def test_managed_spot_still_stops_at_its_runtime_ceiling():
    d = decide(job(30, {"reaper:max-usd": "50"}, spot=True), sig())
    assert d.verdict is Verdict.ACT and "runtime ceiling" in d.reason and "cost ceiling" not in d.reason


def test_managed_spot_near_its_ceiling_is_not_promised_a_stop():
    d = decide(job(6, {"reaper:max-usd": "50"}, count=2, spot=True), sig())  # $45.90: 92 %
    assert d.verdict is Verdict.KEEP and "not stopped on this upper bound" in d.reason and "will be stopped" not in d.reason


def test_both_ceilings_passed_are_both_said():
    d = decide(job(30, {"reaper:max-usd": "50"}), sig())
    assert d.verdict is Verdict.ACT and "runtime ceiling" in d.reason and "cost ceiling" in d.reason


def test_an_unknown_price_is_never_guessed():
    # Given an instance type with no list price in the table
    d = decide(job(5, instance_type="ml.c5.9xlarge", spot=True), sig())
    assert d.verdict is Verdict.KEEP and not d.notify
    assert "cost not judged (no list price)" in d.reason
    assert d.evidence["estimated_usd"] is None


def test_an_unknown_price_with_a_cost_tag_tells_the_owner_once_and_the_runtime_ceiling_still_holds():
    d = decide(job(5, {"reaper:max-usd": "10"}, instance_type="ml.c5.9xlarge"), sig())
    assert d.verdict is Verdict.KEEP and d.notify and d.notify_key == "no-price"
    assert "cannot be judged: no list price for ml.c5.9xlarge in us-east-1" in d.reason
    assert decide(job(25, {"reaper:max-usd": "10"}, instance_type="ml.c5.9xlarge"), sig()).verdict is Verdict.ACT


# -- the 80 % warning ---------------------------------------------------------------------------
def test_past_80_percent_of_the_runtime_ceiling_warns_once_per_ceiling():
    d = decide(job(20), sig())
    assert d.verdict is Verdict.KEEP and d.notify and d.notify_key == "ceiling-80:hours"
    assert d.reason.startswith("at 83% of its 24 h runtime ceiling after 20 h 00 m: it will be stopped at 24 h unless reaper:max-hours")


def test_both_ceilings_past_80_percent_make_a_new_key_so_the_second_is_told_too():
    # Given 7 x $7.65... : 2 x p3.2xlarge for 20 h = $153 of a $180 tag, and 20 h of 24 h
    d = decide(job(20, {"reaper:max-usd": "180"}, count=2), sig())
    assert d.notify_key == "ceiling-80:hours+ceiling-80:usd"
    assert "runtime ceiling" in d.reason and "cost ceiling" in d.reason


def test_the_warning_share_is_a_setting():
    assert not decide(
        job(20, spot=True), sig(), Settings().with_kind(TrainingJobSettings(ceiling_warn_percent=90, training_default_ceilings_act=True))
    ).notify
    assert (
        decide(
            job(22), sig(), Settings().with_kind(TrainingJobSettings(ceiling_warn_percent=90, training_default_ceilings_act=True))
        ).notify_key
        == "ceiling-80:hours"
    )


# -- divergence ---------------------------------------------------------------------------------
def test_a_diverged_loss_is_stopped_and_a_healthy_noisy_one_kept():
    healthy = [3.1, 2.4, 2.6, 2.1, 2.3, 1.9, 2.0, 1.7, 1.9, 1.6]
    bad = [3.0, 2.0, 1.5, 1.2, 1.0, 1.3, 1.7, 2.2, 3.1, 4.5]
    kept = decide(job(2), sig({"train:loss": healthy}))
    assert kept.verdict is Verdict.KEEP and "no divergence in train:loss (falling)" in kept.reason
    stopped = decide(job(2), sig({"train:loss": bad, "validation:accuracy": [0.5, 0.6]}))
    assert stopped.verdict is Verdict.ACT and stopped.reason == "train:loss rose 5 points in a row to 4.5 (4.5x its minimum 1)"
    assert stopped.evidence["diverged"][0]["metric"] == "train:loss"


def test_rising_accuracy_is_kept_and_falling_accuracy_stopped():
    assert decide(job(2), sig({"validation:accuracy": [0.2, 0.4, 0.5, 0.55, 0.6, 0.62, 0.7]})).verdict is Verdict.KEEP
    d = decide(job(2), sig({"validation:accuracy": [0.3, 0.6, 0.8, 0.9, 0.7, 0.55, 0.4, 0.3, 0.2]}))
    assert d.verdict is Verdict.ACT and "validation:accuracy fell 5 points in a row to 0.2" in d.reason


def test_a_nan_loss_in_the_log_is_stopped():
    hit = LogHit("j/algo-1-1764662400", NOW - timedelta(minutes=3), "loss: nan")
    d = decide(job(2), sig(nan_lines=(hit,)))
    assert d.verdict is Verdict.ACT
    assert d.reason == "nan/inf loss in its log: 'loss: nan' (stream j/algo-1-1764662400, 2026-12-02T14:04:00Z)"


def test_the_watch_metric_tag_names_the_metric_and_its_direction():
    # Given a custom metric the name rule would not know, and a loss that rises on purpose
    metrics = {"reward": [10.0, 20.0, 30.0, 40.0, 20.0, 15.0, 10.0, 8.0, 6.0, 4.0], "train:loss": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]}
    d = decide(job(2, {"reaper:watch-metric": "Reward:max"}), sig(metrics))
    assert d.verdict is Verdict.ACT and d.reason == "reward fell 6 points in a row to 4 (its maximum was 40)"  # the loss is not watched
    missing = decide(job(2, {"reaper:watch-metric": "bleu:max"}), sig(metrics))
    assert missing.verdict is Verdict.KEEP and "watched metric bleu not reported yet" in missing.reason


def test_no_metrics_means_divergence_is_not_judged_but_ceilings_still_are():
    assert "no loss or accuracy metric in CloudWatch: divergence not judged" in decide(job(2), sig()).reason
    unreadable = sig(metrics_error="ThrottlingException: Rate exceeded")
    assert "training metrics unreadable (ThrottlingException: Rate exceeded)" in decide(job(2), unreadable).reason
    assert decide(job(25), unreadable).verdict is Verdict.ACT


# -- GPU advice ---------------------------------------------------------------------------------
def test_gpus_below_70_percent_for_30_minutes_get_one_advisory_and_no_action():
    d = decide(job(2, instance_type="ml.g4dn.xlarge"), sig(gpu={"j/algo-1": [35, 40, 30, 38, 36, 33]}))
    assert d.verdict is Verdict.KEEP and d.notify and d.notify_key == "gpu-idle"
    assert "GPUs averaged 35% over the last 30 min" in d.reason and "data loader" in d.reason
    assert d.evidence["gpu"] == {"mean_percent": 35.3, "highest_percent": 40.0, "hosts": 1}


def test_gpu_utilisation_is_divided_by_the_number_of_gpus():
    # ml.p3.8xlarge has 4 GPUs: 240 published is 60 % each (advice), 320 is 80 % (none)
    assert decide(job(2, instance_type="ml.p3.8xlarge"), sig(gpu={"j/algo-1": [240] * 6})).notify_key == "gpu-idle"
    assert not decide(job(2, instance_type="ml.p3.8xlarge", spot=True), sig(gpu={"j/algo-1": [320] * 6})).notify


def test_busy_gpus_a_gap_or_one_busy_host_give_no_advice():
    g4 = "ml.g4dn.xlarge"
    assert not decide(job(2, instance_type=g4, spot=True), sig(gpu={"j/algo-1": [95, 92, 97, 90, 99, 94]})).notify
    assert not decide(job(2, instance_type=g4, spot=True), sig(gpu={"j/algo-1": [35, 40, 30, 38, 36]})).notify  # 25 min only
    both = {"j/algo-1": [35] * 6, "j/algo-2": [35, 35, 80, 35, 35, 35]}
    assert not decide(job(2, instance_type=g4, count=2, spot=True), sig(gpu=both)).notify


def test_gpu_advice_and_a_ceiling_warning_together_are_one_message_with_both():
    d = decide(job(20, instance_type="ml.g4dn.xlarge"), sig(gpu={"j/algo-1": [35] * 6}))
    assert d.notify_key == "ceiling-80:hours+gpu-idle"


# -- processing and tuning jobs -----------------------------------------------------------------
def test_processing_jobs_get_the_ceilings_and_no_divergence():
    d = decide(job(25, job_type="processing", instance_type="ml.m5.4xlarge"), None)
    assert d.verdict is Verdict.ACT and d.reason.startswith("ran 25 h 00 m, past its 24 h runtime ceiling")
    kept = decide(job(2, job_type="processing", instance_type="ml.m5.4xlarge"), None)
    assert kept.verdict is Verdict.KEEP and "divergence" not in kept.reason


def test_a_tuning_jobs_cost_is_the_sum_of_its_training_jobs():
    # Given three g4dn.xlarge training jobs ($0.7364/h): 1 h + 2 h finished, 2 h running = 5 h = $3.68
    hourly = 0.7364
    spans = [
        Span(NOW - timedelta(hours=5), NOW - timedelta(hours=4), hourly),
        Span(NOW - timedelta(hours=4), NOW - timedelta(hours=2), hourly),
        Span(NOW - timedelta(hours=2), None, hourly),
    ]
    r = job(5, {"reaper:max-usd": "3"}, instance_type="ml.g4dn.xlarge", job_type="tuning", spans=spans)
    r.facts = replace(r.facts_as(JobFacts), training_jobs=3)
    d = decide(r, None)
    assert d.verdict is Verdict.ACT and d.evidence["estimated_usd"] == 3.68
    assert "3 training jobs on ml.g4dn.xlarge" in d.reason


def test_a_job_that_is_no_longer_running_is_kept():
    r = job(30)
    r.state = "Stopping"
    assert decide(r, sig()).verdict is Verdict.KEEP


# -- the shared rules on top ----------------------------------------------------------------------
def full(resource: Resource, settings: Settings) -> Verdict:
    decision, _ = pipeline_decide(KIND, resource, sig(), settings, NOW)
    return decision.verdict


def test_exempt_snoozed_production_and_bad_tags_are_never_stopped_past_a_ceiling():
    enforce = Settings(mode=Mode.ENFORCE).with_kind(TrainingJobSettings(training_default_ceilings_act=True))
    later = (NOW + timedelta(days=1)).strftime("%Y-%m-%d")
    for tags in ({"reaper:exempt": "true"}, {"reaper:snooze-until": later}, {"ml:stage": "prod"}, {"reaper:max-hours": "soon"}):
        assert full(job(30, tags), enforce) is Verdict.EXEMPT, tags
    assert full(job(30, {"reaper:snooze-until": "2026-01-01"}), enforce) is Verdict.ACT


def test_grace_for_jobs_defaults_to_zero_and_a_longer_grace_warns_first():
    assert full(job(30), Settings(mode=Mode.ENFORCE).with_kind(TrainingJobSettings(training_default_ceilings_act=True))) is Verdict.ACT
    assert (
        full(
            job(30),
            Settings(mode=Mode.ENFORCE, kind_grace_minutes={"training-job": 15}).with_kind(
                TrainingJobSettings(training_default_ceilings_act=True)
            ),
        )
        is Verdict.WARN
    )


def test_clusters_price_instance_groups_and_refuse_unknown_types():
    mixed = cluster(
        REGION,
        {"InstanceGroups": [{"InstanceType": "ml.p3.2xlarge", "InstanceCount": 2}, {"InstanceType": "ml.c5.xlarge", "InstanceCount": 1}]},
    )
    assert mixed == Cluster("ml.p3.2xlarge+ml.c5.xlarge", 3, round(2 * 3.825 + 0.204, 4))
    unknown = cluster(
        REGION,
        {"InstanceGroups": [{"InstanceType": "ml.p3.2xlarge", "InstanceCount": 1}, {"InstanceType": "ml.x9.huge", "InstanceCount": 1}]},
    )
    assert unknown.hourly_usd is None and unknown.unpriced == ("ml.x9.huge",)
    assert cluster("ap-south-2", {"InstanceType": "ml.p3.2xlarge", "InstanceCount": 1}).hourly_usd is None


# -- converged and flat runs; advice that agrees with the verdict (issue 37) ------------------------
def falling_then_flat(falling: int, flat: int, floor: float = 0.3) -> list[float]:
    return [floor * (4 - 3 * t / falling) for t in range(falling)] + [floor] * flat


def test_a_stalled_job_is_not_told_its_data_loader_is_the_bottleneck():
    stalled = Progress(60, True, NOW - timedelta(hours=2), 1, 0.0, 1)
    d = decide(job(3, instance_type="ml.g4dn.xlarge"), sig(gpu={"j/algo-1": [0] * 6}, progress=stalled))
    assert d.verdict is Verdict.KEEP and d.notify and d.notify_key == "stalled"
    assert "looks stalled" in d.reason and "data loader" not in d.reason and "gpu" not in d.evidence


def test_the_patience_and_min_improvement_tags_judge_a_run_differently_and_bad_values_exempt_it():
    curve = {"validation:loss": falling_then_flat(20, 24)}  # 24 values on its floor: 20 evaluations past the smoothing
    assert decide(job(1), sig(curve)).notify_key != "converged"  # the default patience (30) has not run out
    told = decide(job(1, tags={"reaper:patience": "15"}), sig(curve))
    assert told.notify_key == "converged" and "converged and still billing: validation:loss went from" in told.reason
    assert told.evidence["plateau"]["patience"] == 15 and told.evidence["plateau"]["flat"] is False
    # 1 % a value is improvement by default; when 50 % is asked, 50 values that fall 40 % in all are flat
    steady = {"validation:loss": [2.0 * 0.99**t for t in range(50)]}
    assert decide(job(1), sig(steady)).notify_key != "flat"
    assert decide(job(1, tags={"reaper:min-improvement": "0.5"}), sig(steady)).notify_key == "flat"
    for key, value in (
        ("patience", "0"),
        ("patience", "1.5"),
        ("min-improvement", "0.9"),
        ("min-improvement", "-0.1"),
        ("early-stop", "now"),
    ):
        screened, _ = pipeline_decide(KIND, job(1, tags={f"reaper:{key}": value}), sig(curve), DEFAULTS, NOW)
        assert screened.verdict is Verdict.EXEMPT and f"reaper:{key}" in screened.reason, (key, value)


def test_a_converged_run_on_an_unpriced_instance_says_the_dollars_are_not_judged():
    r = job(1, instance_type="ml.unknown.xlarge", tags={"reaper:patience": "10"})
    d = decide(r, sig({"train:loss": falling_then_flat(20, 24)}))
    assert d.notify_key == "converged" and "cost since then not judged (no list price" in d.reason
    assert d.evidence["plateau"]["usd_since"] is None


def starved(instance_type: str, inputs: tuple[Channel, ...], percent: float, gpus: int = 1) -> Decision:
    r = job(2, instance_type=instance_type)
    r = replace(r, facts=replace(r.facts_as(JobFacts), inputs=inputs))
    return decide(r, sig(gpu={"j/algo-1": [percent * gpus] * 6}))


def test_a_gpu_starved_job_reading_s3_in_file_mode_is_named_fastfile_and_fsx_and_one_on_fsx_is_not():
    train = {"ChannelName": "train", "DataSource": {"S3DataSource": {"S3Uri": "s3://d/train"}}}
    val = {"ChannelName": "val", "InputMode": "FastFile", "DataSource": {"S3DataSource": {"S3Uri": "s3://d/v"}}}
    s3 = channels({"AlgorithmSpecification": {"TrainingInputMode": "File"}, "InputDataConfig": [train, val]})
    told = starved("ml.g5.xlarge", s3, 50)
    assert told.notify_key == "gpu-idle" and "it reads train (File mode) from S3: FastFile mode" in told.reason
    assert "FSx for Lustre" in told.reason and "val" not in told.reason
    fsx = channels({"InputDataConfig": [{"ChannelName": "train", "DataSource": {"FileSystemDataSource": {"FileSystemType": "FSxLustre"}}}]})
    on_fsx = starved("ml.g5.xlarge", fsx, 50)
    assert "its input is already on FSxLustre" in on_fsx.reason and "FastFile mode streams" not in on_fsx.reason


def test_gpus_under_a_quarter_busy_are_told_a_smaller_family_with_the_dollar_difference_from_list_prices():
    told = starved("ml.p3.2xlarge", (), 10)
    assert "1 x ml.g5.xlarge at $1.41/h instead of $3.83/h list price, $2.42/h less ($58.01 a day)" in told.reason
    assert "smaller GPU family" not in starved("ml.p3.2xlarge", (), 40).reason  # a third busy: not said
    unpriced = starved("ml.g6.xlarge", (), 10)  # no price for ml.g6.xlarge in the table
    assert "(1 x ml.g4dn.xlarge at $0.74/h); no list price for ml.g6.xlarge in us-east-1, so the difference is not given" in unpriced.reason
