"""The stack's default job ceilings are notify-only unless the admin opts in (the contract: an
account-wide default must not stop work the owner did not ask to be stopped). Foundation-model runs
last weeks; switching the stack to enforce must not stop every job older than a day."""

from __future__ import annotations

from reaper.core.model import Mode, Verdict
from reaper.core.policy import read_tags
from reaper.core.settings import Settings
from reaper.kinds.training_job.settings import TrainingJobSettings
from reaper.sweep.pipeline import decide as pipeline_decide
from tests.helpers.training_rules import KIND, NOW, job, sig

STACK_DEFAULTS = Settings()  # what a fresh deploy gets
OPTED_IN = Settings().with_kind(TrainingJobSettings(training_default_ceilings_act=True))


def decide(resource, settings):
    return KIND.decide(resource, sig(), read_tags(resource.tags, settings), settings, NOW)


def test_an_untagged_job_past_the_default_runtime_ceiling_is_only_reported():
    d = decide(job(hours_ago=30), STACK_DEFAULTS)
    assert d.verdict is Verdict.KEEP and d.action is None
    assert d.notify and d.notify_key == "default-ceiling"
    assert "past its 24 h runtime ceiling (the stack default)" in d.reason and "notify-only" in d.reason
    assert "reaper:max-hours" in d.reason  # says how to get it stopped


def test_an_untagged_job_past_the_default_cost_ceiling_is_only_reported():
    d = decide(job(hours_ago=20, count=8), STACK_DEFAULTS)  # 8 x ml.p3.2xlarge for 20 h: past $500
    assert d.verdict is Verdict.KEEP and d.evidence.get("default_ceiling") is True


def test_a_ceiling_the_job_carries_in_its_own_tags_still_acts():
    d = decide(job(hours_ago=3, tags={"reaper:max-hours": "2"}), STACK_DEFAULTS)
    assert d.verdict is Verdict.ACT and d.action == "stop"


def test_with_the_admin_opt_in_the_default_ceiling_acts():
    assert decide(job(hours_ago=30), OPTED_IN).verdict is Verdict.ACT


def test_in_enforce_the_default_ceiling_neither_warns_nor_stops():
    decision, _ = pipeline_decide(KIND, job(hours_ago=30), sig(), Settings(mode=Mode.ENFORCE), NOW)
    assert decision.verdict is Verdict.KEEP and decision.notify
