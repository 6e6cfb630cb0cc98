"""Losing sweep runs, pure: the median stopping rule for a tuning job's training jobs.

With `reaper:early-stop=median` on a tuning job, a running child whose objective at its latest
evaluation is worse than the median of its siblings' objective at that same evaluation (once at
least MIN_SIBLINGS siblings reached it) is stopped. This is the rule SageMaker applies itself
when early stopping is Auto ("If the value of the objective metric for the current training job
is worse ... than the median value of running averages of the objective metric for previous
training jobs up to the same epoch, SageMaker stops the current training job",
https://docs.aws.amazon.com/sagemaker/latest/dg/automatic-model-tuning-early-stopping.html);
the reaper compares the values themselves, as the job reports them.

An evaluation is one reported value of the objective metric, in time order since the child started
(CloudWatch keeps one value a minute for training metrics; two evaluations in the same minute count
as their average). Every child's history is read whole, from the tuning job's creation, so the
evaluation index means the same thing for every child (signals.py); a child whose history is not
whole is neither judged nor a sibling.

The tuning job's current best child is never losing: SageMaker's `BestTrainingJob` ("the training job
that completed with the best current HyperParameterTuningJobObjective",
https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DescribeHyperParameterTuningJob.html),
or the child whose best objective so far is at least as good as every sibling's.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from reaper.kinds.training_job.model import MedianCheck

MIN_SIBLINGS = 3
MINIMIZE, MAXIMIZE = "Minimize", "Maximize"


def median_check(
    tuning_job: str,
    metric: str,
    direction: str,
    own: Sequence[float],
    siblings: Mapping[str, Sequence[float]],
    *,
    child: str | None = None,
    best_child: str | None = None,
) -> MedianCheck | None:
    """None when the child has reported nothing yet, or the direction is unknown."""
    if not own or direction not in (MINIMIZE, MAXIMIZE):
        return None
    k = len(own)
    value = own[-1]
    reached = tuple(sorted((name, float(vals[k - 1])) for name, vals in siblings.items() if len(vals) >= k))
    leading = (child is not None and child == best_child) or _best_so_far(own, siblings, direction)
    if len(reached) < MIN_SIBLINGS:
        return MedianCheck(tuning_job, metric, direction, k, value, reached, None, False, leading)
    median = statistics.median(v for _, v in reached)
    worse = value > median if direction == MINIMIZE else value < median
    return MedianCheck(tuning_job, metric, direction, k, value, reached, median, worse and not leading, leading)


def _best_so_far(own: Sequence[float], siblings: Mapping[str, Sequence[float]], direction: str) -> bool:
    """The child's best objective so far is at least as good as every sibling's best."""
    others = [v for vals in siblings.values() for v in vals]
    if not others:
        return False
    if direction == MINIMIZE:
        return min(own) <= min(others)
    return max(own) >= max(others)
