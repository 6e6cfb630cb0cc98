"""Tag joins do not depend on an ARN's case: the ARNs the code builds and those AWS returns are
compared without case, so a resource keeps its protective tags however AWS spells its ARN."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from reaper import kinds as kind_registry
from reaper.aws.tagging import ArnIndex, fold
from reaper.core.settings import Settings
from reaper.sweep import pipeline
from reaper.wiring import build_runtime
from reaper_devkit import seed_studio as studio
from reaper_devkit.moto_ext import sagemaker_studio


def spell_in_lower_case(arn: str) -> str:
    """Store the app under `.../jupyterserver/default`, the spelling of AWS's IAM examples, so the
    tagging API returns it so (the app's listing still says AppType JupyterServer)."""
    lower = arn.replace("/JupyterServer/", "/jupyterserver/")
    for backend in sagemaker_studio._backends():
        apps = sagemaker_studio.store(backend).apps
        if arn in apps:
            app = apps.pop(arn)
            app.arn = lower
            apps[lower] = app
    return lower


def test_a_studio_app_tagged_prod_under_a_lower_case_arn_keeps_its_protection(aws, sm):
    # Given a classic JupyterServer app, idle for two days, tagged ml:stage=prod, whose tagging ARN is lower case
    now = datetime.now(UTC)
    domain = studio.domain(sm, "lab")
    studio.user(sm, domain, "ana", {"ml:owner": "ana@example.com"})
    old = now - timedelta(days=2)
    arn = studio.app(
        sm, domain, user_name="ana", app_type="JupyterServer", instance_type="ml.t3.medium", tags={"ml:stage": "prod"}, created=old
    )
    lower = spell_in_lower_case(arn)
    tagged = [m["ResourceARN"] for m in aws.client("resourcegroupstaggingapi").get_resources()["ResourceTagMappingList"]]
    assert lower in tagged and arn not in tagged
    # When the studio-app kind discovers and decides
    rt = build_runtime(Settings.validated({"mode": "enforce", "grace_minutes": 0}), session=aws, region="us-east-1")
    kind = kind_registry.get("studio-app")
    [app] = [r for r in kind.discover(rt.clients(), rt.settings, now) if r.arn == arn]
    decision, _ = pipeline.decide(kind, app, None, rt.settings, now)
    # Then it carries its tag and is exempt as production
    assert app.tags.get("ml:stage") == "prod"
    assert decision.verdict.value == "exempt"


def test_the_arn_index_finds_tags_whatever_the_case():
    index = ArnIndex()
    index.add("arn:aws:sagemaker:us-east-1:123456789012:app/d-1/ana/jupyterserver/default", {"ml:stage": "prod"})
    built = "arn:aws:sagemaker:us-east-1:123456789012:app/d-1/ana/JupyterServer/default"
    assert index.get(built) == {"ml:stage": "prod"} and built in index and len(index) == 1
    assert fold(built) == fold(built.upper().replace("ARN:AWS", "arn:aws"))
