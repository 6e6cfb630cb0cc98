"""What the reaper could judge and what it could not, with the cost of the blind spots and their fixes.

A kind's rule that keeps a resource for want of evidence says why with a code
(`Decision(..., unknown="no-gpu-metric")`); this module names each code once: what it means to an
admin and the one command or stack parameter that fixes it. `reaper coverage`, the dashboard's
`MLReaper/Coverage` metrics and the daily digest all read the same tally.

Some fixes are an admin's opt-in (a reading that needs a power beyond metadata): with the opt-in
off, the tally says how many resources, and how many dollars an hour, turning it on would reach
at most (each still needs what the reading needs, e.g. an online SSM agent).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from reaper.core.model import Outcome, Verdict

NAMESPACE = "MLReaper/Coverage"  # dashboard metrics, dimension Kind
# the value of the setting a REAPER_* variable sets, shared or a kind's own (reaper.kinds.setting_of): an opt-in's
# state is read where its setting lives, never guessed from the shared model alone (docs/coverage.md)
SettingOf = Callable[[str], object]


@dataclass(frozen=True)
class Reason:
    code: str
    label: str  # what it means, in a few words
    fix: str  # the one command or parameter that lets the reaper judge it
    opt_in: str | None = None  # the stack parameter whose reading would reach it, when that is the fix
    setting: str | None = None  # the REAPER_* variable that parameter sets (read where it lives: SettingOf)
    covered: bool = False  # AWS itself reclaims it (e.g. Studio's idle shutdown): not a blind spot


REASONS: dict[str, Reason] = {
    r.code: r
    for r in (
        Reason(
            "no-agent",
            "notebook without the activity agent",
            "attach the agent's lifecycle configuration (AttachAgent does it when the notebook is stopped), or turn on JupyterReads",
            opt_in="JupyterReads",
            setting="REAPER_JUPYTER_READS",
        ),
        Reason(
            "url-refused",
            "presigned Jupyter URL refused (source IP or VPC endpoint condition)",
            "allow the reaper's function (aws:PrincipalArn) in the policy that restricts sagemaker:CreatePresignedNotebookInstanceUrl "
            "or sagemaker:CreatePresignedDomainUrl",
        ),
        Reason(
            "no-permission",
            "a read the reaper's role may not make",
            "redeploy the stack (`sam deploy`) so the role has the read, or lift the SCP that denies it",
        ),
        Reason(
            "no-activity-signal",
            "Studio app AWS records no user activity for, idle shutdown off in its domain (Code Editor, or JupyterLab in an "
            "IAM Identity Center domain)",
            "turn on Studio's built-in idle shutdown (AppLifecycleManagement.IdleSettings) for its domain "
            "(StudioEnforceIdleShutdownMinutes)",
        ),
        Reason(
            "jupyterlab-no-activity-signal",
            "JupyterLab app AWS records no user activity for, idle shutdown off in its domain; JupyterReads reads it",
            "turn on JupyterReads, or Studio's built-in idle shutdown for its domain (StudioEnforceIdleShutdownMinutes)",
            opt_in="JupyterReads",
            setting="REAPER_JUPYTER_READS",
        ),
        Reason(
            "profile-idle-shutdown-off",
            "Studio app whose user profile turned idle shutdown off (its domain has it on): SageMaker never stops it",
            "the profile's owner or an admin turns its idle shutdown back on (UserSettings …AppSettings.AppLifecycleManagement."
            "IdleSettings.LifecycleManagement ENABLED); the reaper never changes a user profile (docs/kinds/studio-app.md)",
        ),
        Reason(
            "jupyterlab-profile-idle-shutdown-off",
            "JupyterLab app whose user profile turned idle shutdown off (its domain has it on); JupyterReads reads it",
            "turn on JupyterReads, or the profile's owner or an admin turns its idle shutdown back on; the reaper never "
            "changes a user profile (docs/kinds/studio-app.md)",
            opt_in="JupyterReads",
            setting="REAPER_JUPYTER_READS",
        ),
        Reason(
            "no-gpu-metric",
            "GPU box without a GPU metric",
            "install the CloudWatch agent with its nvidia_gpu section (per-GPU series are enough), or turn on GpuSsmReads",
            opt_in="GpuSsmReads",
            setting="REAPER_GPU_SSM_READS",
        ),
        Reason(
            "no-ssm-agent",
            "GPU box without a GPU metric and without an online SSM agent",
            "install the CloudWatch agent's nvidia_gpu section, or start SSM Agent with AmazonSSMManagedInstanceCore on its instance "
            "profile",
        ),
        Reason(
            "gpu-sample-only",
            "one nvidia-smi sample, not enough alone",
            "install the CloudWatch agent's nvidia_gpu section for a reading over the whole idle window",
        ),
        Reason(
            "ssm-read-failed",
            "the nvidia-smi command through SSM failed or did not answer in time",
            "none if it passes (the next sweep reads again); otherwise run the command by hand on the box (docs/ssm-gpu-reads.md)",
        ),
        Reason(
            "metric-gap",
            "its metrics have gaps or are missing in the idle window",
            "none if it passes; otherwise check what publishes the metric (the CloudWatch agent, the activity agent)",
        ),
        Reason(
            "fsx-metric-gap",
            "AWS/FSx I/O data missing in its idle window (FSx emits it every minute, idle or not: a gap is missing data)",
            "none if it passes: it is judged once the gap is older than its idle window (FsxIdleMinutes, or its "
            "reaper:idle-minutes tag; the reason says when). Data missing for longer: look at the file system in the FSx console",
        ),
        Reason(
            "bedrock-series-never-seen",
            "Bedrock Provisioned Throughput with no invocations whose own AWS/Bedrock Invocations series (ModelId = its ARN) "
            "CloudWatch has never listed: AWS does not document which ModelId its traffic carries, so no data is not idleness",
            "none if it is used: one request with its ARN as modelId makes its series appear, and it is judged from then on; "
            "if it is not used, delete it, or tag its kill date (reaper:kill-after) and the reaper deletes it then "
            "(docs/kinds/bedrock-pt.md)",
        ),
        Reason(
            "mlflow-no-usage-signal",
            "running SageMaker MLflow tracking server: AWS documents no evidence of a tracking server's use (no CloudWatch "
            "metric, no record of the MLflow calls it serves; IsActive says only that it runs)",
            "turn on MlflowReads (its own MLflow API and CloudTrail's UI opens), or stop it when it is not used (its experiments "
            "are kept; `reaper restore NAME` starts it), or tag its kill date (reaper:kill-after) (docs/kinds/mlflow.md)",
            opt_in="MlflowReads",
            setting="REAPER_MLFLOW_READS",
        ),
        Reason(
            "mlflow-api-refused",
            "MLflow tracking server whose MLflow API refused the reaper (HTTP 401/403: an SCP, a VPC endpoint policy or an "
            "aws:SourceIp condition on sagemaker-mlflow:*)",
            "allow the mlflow function's role (aws:PrincipalArn) sagemaker-mlflow:SearchExperiments and SearchRuns on the server",
        ),
        Reason(
            "mlflow-api-unreachable",
            "MLflow tracking server whose MLflow API gave no whole answer (network failure, timeout, HTTP 5xx)",
            "none if it passes: the next sweep reads it again; if it lasts, look at the server in SageMaker Studio",
        ),
        Reason(
            "mlflow-api-unreadable",
            "MLflow tracking server whose MLflow API answered something that is not its REST API's models, or holds more "
            "experiments than the reaper reads (5,000)",
            "look at the server in SageMaker Studio; stop it by hand or tag its kill date if it is not used",
        ),
        Reason(
            "mlflow-api-off-host",
            "MLflow tracking server whose URL is not https on SageMaker's MLflow domain for its region, or whose API answered "
            "with a redirect: never followed",
            "none the reaper makes: look at the server's TrackingServerUrl (DescribeMlflowTrackingServer)",
        ),
        Reason(
            "mlflow-api-not-reached",
            "MLflow tracking server not read within the sweep's 90 s for MLflow reads",
            "none if it passes: the next sweep reads the others first; a shorter MlflowSchedule spreads them",
        ),
        Reason(
            "mlflow-cloudtrail-unreadable",
            "MLflow tracking server whose UI opens CloudTrail could not say (LookupEvents refused, failed, or more events "
            "in the window than the reaper reads)",
            "allow the mlflow function's role cloudtrail:LookupEvents (an SCP may deny it), or shorten MlflowIdleHours",
        ),
        Reason(
            "stop-time-unknown",
            "volume of a stopped GPU instance whose StateTransitionReason does not say when it stopped: how long its disks "
            "have sat unused is unknown",
            "none the reaper can make: look at the instance (stop and start it again writes the time; terminate it if it is "
            "done with) (docs/kinds/storage.md)",
        ),
        Reason(
            "space-last-use-unknown",
            "Studio space with no app running whose last app start CloudTrail could not say (LookupEvents refused, failed "
            "or unreadable, more CreateApp events than the reaper reads, or StorageIdleWeeks past CloudTrail's 90 days): "
            "reported, its last use unknown",
            "allow the storage function's role cloudtrail:LookupEvents (an SCP may deny it), or set StorageIdleWeeks to "
            "12 or less (docs/kinds/storage.md)",
        ),
        Reason(
            "jupyter-unreachable",
            "its Jupyter server did not answer (stopped, network, timeout)",
            "none if it passes; the next sweep reads again (docs/jupyter-reads.md)",
        ),
        Reason(
            "jupyter-unreadable",
            "its Jupyter server answered, but not as Jupyter's REST API documents (a sign-in page, another server)",
            "check the notebook's URL policy (docs/jupyter-reads.md)",
        ),
        Reason(
            "jupyter-off-host",
            "its URL redirected away from the notebook's or app's own host (an expired URL's sign-in page, "
            "or a redirect by what serves it): not followed",
            "none if it passes (an expired URL); otherwise look at what serves the notebook's (app's) Jupyter: "
            "AWS's hop stays on its host (docs/jupyter-reads.md)",
        ),
        Reason(
            "jupyter-not-reached",
            "the Jupyter readings ran out of their time budget this sweep",
            "none if it passes; the next sweep reads again",
        ),
        Reason(
            "agent-unreadable",
            "the activity agent's samples could not be read",
            "see the sweep's errors (`reaper plan`), then the next sweep reads again",
        ),
        Reason(
            "agent-no-data",
            "the activity agent sent no samples for part of the idle window",
            "none if it passes; otherwise check the notebook's lifecycle configuration log",
        ),
        Reason(
            "agent-silent",
            "the activity agent is installed but silent",
            "restart the notebook (the agent starts with it) and read its lifecycle configuration log",
        ),
        Reason(
            "classic-no-activity-signal",
            "classic Studio app (KernelGateway, or a JupyterServer app JupyterReads cannot open): AWS records no user activity",
            "move the user to JupyterLab in the new Studio, where idle shutdown can stop it",
        ),
        Reason(
            "classic-jupyterserver-no-activity-signal",
            "classic JupyterServer app on a billed instance: AWS records no user activity; JupyterReads reads it",
            "turn on JupyterReads, or move the user to JupyterLab in the new Studio, where idle shutdown can stop it",
            opt_in="JupyterReads",
            setting="REAPER_JUPYTER_READS",
        ),
        Reason(
            "idle-shutdown-unsupported-image",
            "Studio app on a custom image: idle shutdown runs on it only if it is built on SageMaker Distribution 2.0+ or carries "
            "jupyter-activity-monitor-extension 0.3.1+, which no API says",
            "use the SageMaker Distribution image 2.0 or newer, or an idle-shutdown lifecycle configuration (docs/kinds/studio-app.md)",
        ),
        Reason(
            "jupyterlab-unsupported-image",
            "JupyterLab app on a custom image (idle shutdown runs on it only if built on SageMaker Distribution 2.0+ or carrying "
            "jupyter-activity-monitor-extension 0.3.1+, which no API says); JupyterReads reads it",
            "turn on JupyterReads, or use the SageMaker Distribution image 2.0 or newer, or an idle-shutdown lifecycle configuration "
            "(docs/kinds/studio-app.md)",
            opt_in="JupyterReads",
            setting="REAPER_JUPYTER_READS",
        ),
        Reason(
            "idle-shutdown-old-image",
            "Studio app on SageMaker Distribution older than 2.0 (or a version the app does not say): idle shutdown needs 2.0+",
            "choose SageMaker Distribution 2.0 or newer for the space's image, then restart its app (docs/kinds/studio-app.md)",
        ),
        Reason(
            "jupyterlab-old-image",
            "JupyterLab app on SageMaker Distribution older than 2.0 (or a version the app does not say); JupyterReads reads it",
            "turn on JupyterReads, or choose SageMaker Distribution 2.0 or newer for the space's image (docs/kinds/studio-app.md)",
            opt_in="JupyterReads",
            setting="REAPER_JUPYTER_READS",
        ),
        Reason(
            "shared-space-idle-shutdown-off",
            "Studio app in a shared space: idle shutdown off in its domain's DefaultSpaceSettings (Code Editor: AWS documents no "
            "shared-space setting); its owner's profile does not apply",
            "JupyterLab: StudioEnforceIdleShutdownMinutes (turns it on in DefaultSpaceSettings too); Code Editor: an idle-shutdown "
            "lifecycle configuration, or a private space (docs/kinds/studio-app.md)",
        ),
        Reason(
            "jupyterlab-shared-space-idle-shutdown-off",
            "JupyterLab app in a shared space, idle shutdown off in its domain's DefaultSpaceSettings; JupyterReads reads it",
            "turn on JupyterReads, or StudioEnforceIdleShutdownMinutes (turns it on in DefaultSpaceSettings too)",
            opt_in="JupyterReads",
            setting="REAPER_JUPYTER_READS",
        ),
        Reason(
            "no-canvas-metric",
            "Canvas app with no TimeSinceLastActive data in the last hour",
            "none if it passes: Canvas publishes it while the app runs (docs/kinds/studio-app.md)",
        ),
        Reason(
            "idle-shutdown-on",
            "Studio app stopped by SageMaker's own idle shutdown when idle",
            "none needed",
            covered=True,
        ),
        Reason(
            "jupyterlab-idle-shutdown-unverified",
            "covered by AWS, unverified: a JupyterLab app SageMaker's idle shutdown should have stopped, still running past its "
            "timeout plus the margin; JupyterReads reads it",
            "turn on JupyterReads: an app idle past its timeout is then deleted (the shutdown did not fire), one in use is kept "
            "(docs/kinds/studio-app.md)",
            opt_in="JupyterReads",
            setting="REAPER_JUPYTER_READS",
        ),
        Reason(
            "idle-shutdown-unverified",
            "covered by AWS, unverified: a Studio app SageMaker's idle shutdown should have stopped, still running past its "
            "timeout plus the margin, that nothing the reaper may read can verify (Code Editor, or an IAM Identity Center domain)",
            "look at the space; an idle-shutdown lifecycle configuration, or JupyterLab in an IAM domain with JupyterReads "
            "(docs/kinds/studio-app.md)",
        ),
        Reason(
            "not-read",
            "a read failed this sweep",
            "see the sweep's errors or the resource's reason (`reaper plan`), then the next sweep reads again",
        ),
    )
}


def reason(code: str) -> Reason:
    """The registered reason; an unregistered code still shows, with a pointer to the docs."""
    return REASONS.get(code) or Reason(code, code, "see docs/coverage.md")


def is_unknown(outcome: Outcome) -> bool:
    code = outcome.decision.unknown
    return outcome.verdict is Verdict.KEEP and code is not None and not reason(code).covered


@dataclass
class ReasonTally:
    reason: Reason
    resources: int = 0
    hourly_usd: float = 0.0
    unpriced: int = 0  # resources without a list price (not in the dollars)
    since: str | None = None  # the earliest `unverified_since` of its resources (covered by AWS, unverified)

    def add(self, hourly: float | None, since: object = None) -> None:
        if isinstance(since, str) and (self.since is None or since < self.since):
            self.since = since
        self.resources += 1
        if hourly is None:
            self.unpriced += 1
        else:
            self.hourly_usd += hourly


@dataclass
class Coverage:
    """One kind in one region."""

    kind: str
    region: str
    resources: int = 0
    judged: int = 0  # act, warn, or keep on evidence
    unknown: int = 0  # kept because the evidence is missing
    exempt: int = 0
    errors: int = 0
    unknown_hourly_usd: float = 0.0
    unknown_unpriced: int = 0  # of the unknown, those without a list price: not in unknown_hourly_usd (docs/prices.md)
    price_sources: set[str] = field(default_factory=set)  # where unknown_hourly_usd's figures come from, and when
    reasons: dict[str, ReasonTally] = field(default_factory=dict)

    def add(self, o: Outcome) -> None:
        self.resources += 1
        if o.verdict is Verdict.EXEMPT:
            self.exempt += 1
        elif o.verdict is Verdict.ERROR:
            self.errors += 1
        elif is_unknown(o):
            code = o.decision.unknown or ""
            self.unknown += 1
            self.unknown_hourly_usd += o.resource.hourly_usd or 0.0
            self.unknown_unpriced += o.resource.hourly_usd is None
            if o.resource.price is not None and o.resource.hourly_usd is not None:
                self.price_sources.add(o.resource.price.label)
            self.reasons.setdefault(code, ReasonTally(reason(code))).add(o.resource.hourly_usd, o.decision.evidence.get("unverified_since"))
        else:
            self.judged += 1

    def ranked(self) -> list[ReasonTally]:
        """Most dollars first, then most resources."""
        return sorted(self.reasons.values(), key=lambda t: (-t.hourly_usd, -t.resources, t.reason.code))

    def as_entry(self) -> dict[str, Any]:
        """The action-log entry (type "coverage") the daily digest reads (reaper.record.coverage_metrics)."""
        reasons = ", ".join(f"{t.reason.code} {t.resources}" for t in self.ranked())
        said = (
            f"judged {self.judged} of {self.resources}; can't judge {self.unknown}"
            f" (${self.unknown_hourly_usd:,.2f}/h{': ' + reasons if reasons else ''})"
        )
        return {"type": "coverage", "id": "*", "arn": "", "reason": said, **self.to_json()}

    def to_json(self, setting: SettingOf | None = None) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "region": self.region,
            "resources": self.resources,
            "judged": self.judged,
            "unknown": self.unknown,
            "exempt": self.exempt,
            "errors": self.errors,
            "unknown_hourly_usd": round(self.unknown_hourly_usd, 4),
            "unknown_unpriced": self.unknown_unpriced,
            "price_sources": sorted(self.price_sources),
            "reasons": [
                {
                    "code": t.reason.code,
                    "label": t.reason.label,
                    "resources": t.resources,
                    "hourly_usd": round(t.hourly_usd, 4),
                    "unpriced": t.unpriced,
                    "fix": t.reason.fix,
                    "opt_in": t.reason.opt_in,
                    "opt_in_on": opt_in_on(t.reason, setting),
                    **({"unverified_since": t.since} if t.since else {}),
                }
                for t in self.ranked()
            ],
        }


def opt_in_on(r: Reason, setting: SettingOf | None) -> bool | None:
    """Whether the opt-in that would reach this reason is on (None: the reason has none; no settings: off)."""
    if r.setting is None:
        return None
    return bool(setting(r.setting)) if setting is not None else False


def tally(outcomes: Iterable[Outcome]) -> list[Coverage]:
    """Per kind and region, in that order."""
    out: dict[tuple[str, str], Coverage] = {}
    for o in outcomes:
        key = (o.resource.kind, o.resource.region)
        out.setdefault(key, Coverage(*key)).add(o)
    return [out[k] for k in sorted(out)]


@dataclass(frozen=True)
class Reach:
    """What turning one opt-in on would reach at most."""

    opt_in: str
    resources: int
    hourly_usd: float  # of the priced ones
    unpriced: int = 0  # resources without a list price: not in hourly_usd, never counted as $0 (docs/prices.md)


def opt_in_reach(lines: Iterable[Coverage], setting: SettingOf | None) -> list[Reach]:
    """For each opt-in that is off: the unknown resources whose fix it is."""
    found: dict[str, list[float]] = {}
    for line in lines:
        for t in line.reasons.values():
            if t.reason.opt_in and opt_in_on(t.reason, setting) is False:
                got = found.setdefault(t.reason.opt_in, [0, 0.0, 0])
                got[0] += t.resources
                got[1] += t.hourly_usd
                got[2] += t.unpriced
    return [Reach(name, int(n), round(usd, 4), int(unpriced)) for name, (n, usd, unpriced) in sorted(found.items())]


def headline(lines: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """The digest's line, from Coverage.to_json() rows (as the action log keeps them): how many cannot
    be judged, their cost an hour, the costliest reason and its fix. None when every one was judged."""
    total = 0
    hourly = 0.0
    unpriced = 0
    by_reason: dict[str, list[Any]] = {}  # code -> [resources, hourly, label, fix]
    for line in lines:
        total += int(line.get("unknown") or 0)
        hourly += float(line.get("unknown_hourly_usd") or 0.0)
        unpriced += int(line.get("unknown_unpriced") or 0)
        for r in line.get("reasons") or []:
            code = str(r.get("code"))
            known = reason(code)
            mine = by_reason.setdefault(code, [0, 0.0, known.label, known.fix])
            mine[0] += int(r.get("resources") or 0)
            mine[1] += float(r.get("hourly_usd") or 0.0)
    if not total:
        return None
    code, (n, usd, label, fix) = sorted(by_reason.items(), key=lambda kv: (-kv[1][1], -kv[1][0], kv[0]))[0]
    return {
        "unknown": total,
        "unknown_hourly_usd": round(hourly, 2),
        "unknown_unpriced": unpriced,  # not in unknown_hourly_usd (docs/prices.md)
        "top_code": code,
        "top_label": label,
        "top_resources": n,
        "top_hourly_usd": round(usd, 2),
        "fix": fix,
    }
