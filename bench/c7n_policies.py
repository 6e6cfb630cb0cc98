"""Cloud Custodian's nearest policies to the reaper's defaults, per kind (bench/c7n_side_by_side.py).

Written as a careful Custodian user would, with what Custodian 0.9.x offers:
- `ec2`: running, an accelerated type, no fleet tag, not production, and the `metrics` filter (one
  GetMetricStatistics per instance and metric) on CPU and on the GPU agent's metric (Neuron cores for
  inf/trn), Maximum under 5 % for the last 60 min; no `missing-value`, so no data is not idle.
- `sagemaker-notebook`: Custodian registers no `metrics` filter for it (the resource type declares no
  CloudWatch dimension; c7n/query.py registers `metrics` only when it does), so it cannot read an
  activity metric. Its idle tool is the `offhour` schedule (registered for notebooks): opt-out, every
  day, at the hour the bench runs it, so it fires now.
- `sagemaker-endpoint`: no `metrics` filter either; the nearest is an age filter: a dev-stage endpoint
  InService for longer than the reaper's 120-minute window is deleted, traffic unseen.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

HOUR_DAYS = 1 / 24  # Custodian's `days` is a number of days
NOT_PROD = {"not": [{"type": "value", "key": "tag:ml:stage", "op": "in", "value": ["prod", "production"], "value_type": "normalize"}]}
NOT_EXEMPT = {"tag:reaper:exempt": "absent"}


def _metric(name: str, namespace: str | None = None) -> dict[str, Any]:
    m: dict[str, Any] = {"type": "metrics", "name": name, "statistics": "Maximum", "days": HOUR_DAYS, "period": 300}
    m.update({"value": 5, "op": "less-than"})
    if namespace:
        m["namespace"] = namespace
    return m


def _ec2() -> dict[str, Any]:
    neuron = r"^(inf|trn)\d"
    return {
        "name": "stop-idle-gpu-boxes",
        "resource": "ec2",
        "filters": [
            {"State.Name": "running"},
            {"type": "value", "key": "InstanceType", "op": "regex", "value": r"^(g|p|inf|trn|dl)\d.*"},
            {"tag:aws:autoscaling:groupName": "absent"},
            {"tag:eks:cluster-name": "absent"},
            NOT_PROD,
            NOT_EXEMPT,
            _metric("CPUUtilization"),
            {
                "or": [
                    {
                        "and": [
                            {"type": "value", "key": "InstanceType", "op": "regex", "value": neuron + ".*"},
                            _metric("neuroncore_utilization", "CWAgent"),
                        ]
                    },
                    {
                        "and": [
                            {"not": [{"type": "value", "key": "InstanceType", "op": "regex", "value": neuron + ".*"}]},
                            _metric("nvidia_smi_utilization_gpu", "CWAgent"),
                        ]
                    },
                ]
            },
        ],
        "actions": ["stop"],
    }


def _notebook(now: datetime) -> dict[str, Any]:
    return {
        "name": "stop-notebooks-offhours",
        "resource": "sagemaker-notebook",
        "filters": [
            {"NotebookInstanceStatus": "InService"},
            NOT_PROD,
            NOT_EXEMPT,
            {"type": "offhour", "offhour": now.hour, "default_tz": "utc", "opt-out": True, "weekends": False},
        ],
        "actions": ["stop"],
    }


def _endpoint() -> dict[str, Any]:
    return {
        "name": "delete-old-dev-endpoints",
        "resource": "sagemaker-endpoint",
        "filters": [
            {"EndpointStatus": "InService"},
            {"type": "value", "key": "tag:ml:stage", "op": "in", "value": ["dev", "test", "sandbox", "staging"], "value_type": "normalize"},
            NOT_EXEMPT,
            {"type": "value", "key": "CreationTime", "value_type": "age", "op": "greater-than", "value": 2 * HOUR_DAYS},
        ],
        "actions": ["delete"],
    }


def policy(kind: str, now: datetime) -> dict[str, Any]:
    """The policy file (one policy) for `kind`; `now` (UTC) sets the notebook's off-hour."""
    one = {"notebook": lambda: _notebook(now), "ec2": _ec2, "endpoint": _endpoint}[kind]()
    return {"policies": [one]}
