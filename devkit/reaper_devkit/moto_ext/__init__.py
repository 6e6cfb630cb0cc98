"""moto extensions: the one place where moto is taught what these tests need and it lacks.

Each submodule patches one moto backend, small and documented, and works in-process and in
server mode (ThreadedMotoServer shares the backends). `apply()` is idempotent.
"""

from __future__ import annotations

_applied = False


def apply() -> None:
    global _applied
    if _applied:
        return
    from reaper_devkit.moto_ext import cloudwatch_index

    cloudwatch_index.apply()
    from reaper_devkit.moto_ext import cloudwatch_search

    cloudwatch_search.apply()  # after the index: its MetricStat queries take the indexed path
    from reaper_devkit.moto_ext import cloudwatch_list, sagemaker_jobs

    sagemaker_jobs.apply()
    cloudwatch_list.apply()
    from reaper_devkit.moto_ext import autoscaling_sagemaker, sagemaker_inference

    sagemaker_inference.apply()
    autoscaling_sagemaker.apply()
    from reaper_devkit.moto_ext import fsx

    fsx.apply()
    from reaper_devkit.moto_ext import sagemaker_studio

    sagemaker_studio.apply()
    from reaper_devkit.moto_ext import ec2, ec2_lookups

    ec2.apply()
    ec2_lookups.apply()
    from reaper_devkit.moto_ext import ebs

    ebs.apply()
    from reaper_devkit.moto_ext import aws_rules, sagemaker_shapes

    aws_rules.apply()
    sagemaker_shapes.apply()
    from reaper_devkit.moto_ext import logs_pages

    logs_pages.apply()
    from reaper_devkit.moto_ext import tagging_pages

    tagging_pages.apply()
    from reaper_devkit.moto_ext import capacity

    capacity.apply()
    from reaper_devkit.moto_ext import bedrock_pt

    bedrock_pt.apply()
    from reaper_devkit.moto_ext import mlflow

    mlflow.apply()  # after sagemaker_studio: its tag patch wraps the Studio one
    from reaper_devkit.moto_ext import cloudtrail_lookup

    cloudtrail_lookup.apply()
    from reaper_devkit.moto_ext import bedrock_imported

    bedrock_imported.apply()
    from reaper_devkit.moto_ext import budgets

    budgets.apply()
    from reaper_devkit.moto_ext import cost_explorer_coverage

    cost_explorer_coverage.apply()
    from reaper_devkit.moto_ext import cost_anomaly

    cost_anomaly.apply()
    from reaper_devkit.moto_ext import cost_optimization_hub

    cost_optimization_hub.apply()
    from reaper_devkit.moto_ext import sagemaker_presigned

    sagemaker_presigned.apply()
    from reaper_devkit.moto_ext import ssm_commands

    ssm_commands.apply()
    from reaper_devkit.moto_ext import events_cross_account

    events_cross_account.apply()
    from reaper_devkit.moto_ext import dynamodb_cross_account

    dynamodb_cross_account.apply()
    from reaper_devkit.moto_ext import cloudformation_outputs

    cloudformation_outputs.apply()
    from reaper_devkit.moto_ext import cloudformation_novalue

    cloudformation_novalue.apply()
    from reaper_devkit.moto_ext import cost_explorer_usage

    cost_explorer_usage.apply()

    from reaper_devkit.moto_ext import pricing

    pricing.apply()
    _applied = True
