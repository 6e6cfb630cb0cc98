"""SageMaker managed MLflow tracking servers as the mlflow kind meets them on AWS; moto 5.2.5 has none.

What is added (moto's SageMaker backend and response class, so in-process and server mode alike):
- CreateMlflowTrackingServer: a server `Creating`, then `Created` at the next read (AWS takes
  minutes), with its size (`Small` when none is given: "The default MLflow Tracking Server
  configuration size is "Small""), version, artifact store, role and tags. A name in use is refused
  with `ResourceInUse`; a size outside "Valid Values: Small | Medium | Large" and a name outside
  the pattern `^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,255}` with `ValidationException`.
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateMlflowTrackingServer.html
- DescribeMlflowTrackingServer: the response syntax's fields (`TrackingServerStatus`, `IsActive`
  `Active` or `Inactive`, `TrackingServerSize`, `TrackingServerUrl`, times); `ResourceNotFound`
  when there is no such server.
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DescribeMlflowTrackingServer.html
- ListMlflowTrackingServers: `TrackingServerSummaries` (ARN, name, times, status, IsActive,
  version: no size, no tags), `MaxResults` "Valid Range: Minimum value of 1. Maximum value of 100",
  `NextToken`, filter `TrackingServerStatus`.
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ListMlflowTrackingServers.html
- StopMlflowTrackingServer: a running server (`Created`, `Updated`, `Started`,
  `MaintenanceComplete`) goes `Stopping` (the first read after says so), then `Stopped`; any other
  status is refused with `ConflictException` (the operation's documented error: "There was a conflict
  when you attempted to modify a SageMaker entity such as an Experiment or Artifact"); no such server:
  `ResourceNotFound`. https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_StopMlflowTrackingServer.html
- StartMlflowTrackingServer: a `Stopped` server goes `Starting`, then `Started`; otherwise
  `ConflictException`; no such server: `ResourceNotFound`. Its experiments (`experiments`, the kit's
  record of what was logged to it) are the same before and after.
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_StartMlflowTrackingServer.html
- DeleteMlflowTrackingServer: gone (`ResourceNotFound` on the next read); no such server: `ResourceNotFound`.
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DeleteMlflowTrackingServer.html
- AddTags/ListTags/DeleteTags take `mlflow-tracking-server/` ARNs, and the Resource Groups Tagging API
  returns them as `sagemaker:mlflow-tracking-server`.
- `set_status()` puts a server in any status of `TrackingServerStatus` (Updating, StopFailed ...), as a
  test needs: the statuses are those of the reference's enumeration.
  https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_TrackingServerSummary.html
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

from moto.core.resource_tagging import TaggedResource
from moto.core.responses import ActionResult
from moto.core.utils import utcnow
from moto.sagemaker import models, responses
from moto.sagemaker.exceptions import ConflictException, ResourceInUseException, ResourceNotFound, ValidationError

SIZES = ("Small", "Medium", "Large")
STATUSES = (
    "Creating",
    "Created",
    "CreateFailed",
    "Updating",
    "Updated",
    "UpdateFailed",
    "Deleting",
    "DeleteFailed",
    "Stopping",
    "Stopped",
    "StopFailed",
    "Starting",
    "Started",
    "StartFailed",
    "MaintenanceInProgress",
    "MaintenanceComplete",
    "MaintenanceFailed",
)
RUNNING = frozenset({"Created", "Updated", "Started", "MaintenanceComplete"})
NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,255}$")
# a status AWS leaves on its own after a while: the next read finds the one it leads to
SETTLES = {"Creating": "Created", "Stopping": "Stopped", "Starting": "Started"}


@dataclass
class FakeTrackingServer:
    arn: str
    name: str
    size: str
    version: str
    artifact_store: str
    role_arn: str
    tags: list[dict[str, str]]
    status: str = "Creating"
    created: datetime = field(default_factory=utcnow)
    modified: datetime = field(default_factory=utcnow)
    experiments: list[str] = field(default_factory=list)  # what was logged to it (kept across a stop and a start)
    # what its MLflow REST API serves (reaper_devkit.mlflow_api): each experiment's last update, and its runs
    experiment_updated: dict[str, datetime] = field(default_factory=dict)
    runs: list[dict[str, Any]] = field(default_factory=list)  # {run_id, experiment, status, start_time, end_time}
    url: str | None = None  # a test's TrackingServerUrl in place of the usual one (an off-domain URL)
    seen: bool = False  # a transitional status is read once before it settles

    def _read(self) -> None:
        if self.status in SETTLES:
            if self.seen:
                self.status, self.seen, self.modified = SETTLES[self.status], False, utcnow()
            else:
                self.seen = True

    def summary(self) -> dict[str, Any]:
        self._read()
        return {
            "TrackingServerArn": self.arn,
            "TrackingServerName": self.name,
            "CreationTime": self.created,
            "LastModifiedTime": self.modified,
            "TrackingServerStatus": self.status,
            "IsActive": "Active" if self.status in RUNNING else "Inactive",
            "MlflowVersion": self.version,
        }

    @cached_property
    def host(self) -> str:
        """Its TrackingServerUrl's host: `t-<12 digits>.REGION.experiments.sagemaker.aws`, stable for its ARN."""
        digits = sum(ord(c) * 131**i for i, c in enumerate(self.arn)) % 10**12
        return f"t-{digits:012d}.{self.arn.split(':')[3]}.experiments.sagemaker.aws"

    def describe(self) -> dict[str, Any]:
        return {
            **self.summary(),
            "ArtifactStoreUri": self.artifact_store,
            "TrackingServerSize": self.size,
            "RoleArn": self.role_arn,
            "TrackingServerUrl": self.url or f"https://{self.host}",
            "AutomaticModelRegistration": False,
        }


def store(backend: Any) -> dict[str, FakeTrackingServer]:
    """The backend's tracking servers by name."""
    found: dict[str, FakeTrackingServer] | None = getattr(backend, "_reaper_mlflow", None)
    if found is None:
        found = {}
        backend._reaper_mlflow = found
    return found


def _server(backend: Any, name: Any) -> FakeTrackingServer:
    server = store(backend).get(str(name))
    if server is None:
        raise ResourceNotFound(message=f"Tracking server {name} does not exist.")
    return server


def create_mlflow_tracking_server(self: Any) -> ActionResult:
    b, p = self.sagemaker_backend, self._get_param
    name, size = str(p("TrackingServerName") or ""), p("TrackingServerSize") or "Small"
    if not NAME.match(name):
        raise ValidationError(message=f"Value '{name}' at 'trackingServerName' failed to satisfy constraint: Member must match its pattern")
    if size not in SIZES:
        raise ValidationError(message=f"Value '{size}' at 'trackingServerSize' failed to satisfy constraint: Member must be one of {SIZES}")
    if name in store(b):
        raise ResourceInUseException(message=f"Tracking server {name} already exists.")
    arn = f"arn:aws:sagemaker:{b.region_name}:{b.account_id}:mlflow-tracking-server/{name}"
    store(b)[name] = FakeTrackingServer(
        arn, name, size, p("MlflowVersion") or "2.16.2", str(p("ArtifactStoreUri")), str(p("RoleArn")), list(p("Tags") or [])
    )
    return ActionResult({"TrackingServerArn": arn})


def describe_mlflow_tracking_server(self: Any) -> ActionResult:
    return ActionResult(_server(self.sagemaker_backend, self._get_param("TrackingServerName")).describe())


def list_mlflow_tracking_servers(self: Any) -> ActionResult:
    b, p = self.sagemaker_backend, self._get_param
    size = int(p("MaxResults") or 100)
    if not 1 <= size <= 100:
        raise ValidationError(message=f"Value '{size}' at 'maxResults' failed to satisfy constraint: Member must be between 1 and 100")
    rows = [s.summary() for s in store(b).values()]
    wanted = p("TrackingServerStatus")
    rows = [r for r in rows if wanted in (None, r["TrackingServerStatus"])]
    start = int(p("NextToken") or 0)
    out: dict[str, Any] = {"TrackingServerSummaries": rows[start : start + size]}
    if start + size < len(rows):
        out["NextToken"] = str(start + size)
    return ActionResult(out)


def stop_mlflow_tracking_server(self: Any) -> ActionResult:
    server = _server(self.sagemaker_backend, self._get_param("TrackingServerName"))
    server._read()
    if server.status not in RUNNING:
        raise ConflictException(message=f"Tracking server {server.name} is {server.status}: it can be stopped only when running.")
    server.status, server.seen, server.modified = "Stopping", False, utcnow()
    return ActionResult({"TrackingServerArn": server.arn})


def start_mlflow_tracking_server(self: Any) -> ActionResult:
    server = _server(self.sagemaker_backend, self._get_param("TrackingServerName"))
    server._read()
    if server.status != "Stopped":
        raise ConflictException(message=f"Tracking server {server.name} is {server.status}: it can be started only when Stopped.")
    server.status, server.seen, server.modified = "Starting", False, utcnow()
    return ActionResult({"TrackingServerArn": server.arn})


def delete_mlflow_tracking_server(self: Any) -> ActionResult:
    b = self.sagemaker_backend
    server = _server(b, self._get_param("TrackingServerName"))
    del store(b)[server.name]
    return ActionResult({"TrackingServerArn": server.arn})


def _by_arn(backend: Any, arn: str) -> FakeTrackingServer | None:
    return next((s for s in store(backend).values() if s.arn == arn), None)


def _patch_tags() -> None:
    backend = models.SageMakerModelBackend
    original_get = backend._get_resource_from_arn
    original_iter = backend.iter_tagged_resources

    def _get_resource_from_arn(self: Any, arn: str) -> Any:
        if ":mlflow-tracking-server/" in arn:
            found = _by_arn(self, arn)
            if found is None:
                raise ValidationError(message=f"Could not find resource {arn}")
            return found
        return original_get(self, arn)

    def iter_tagged_resources(self: Any) -> Iterator[TaggedResource]:
        yield from original_iter(self)
        for s in store(self).values():
            yield TaggedResource(arn=s.arn, tags={t["Key"]: t["Value"] for t in s.tags}, resource_type="sagemaker:mlflow-tracking-server")

    backend._get_resource_from_arn = _get_resource_from_arn  # type: ignore[method-assign]
    backend.iter_tagged_resources = iter_tagged_resources  # type: ignore[method-assign]


# -- test support ----------------------------------------------------------------------------------
def _backends() -> Iterator[Any]:
    for account in models.sagemaker_backends.values():
        yield from account.values()


def server_for(name: str, region: str | None = None) -> FakeTrackingServer:
    for b in _backends():
        if region in (None, b.region_name) and name in store(b):
            return store(b)[name]
    raise KeyError(name)


def set_status(name: str, status: str, region: str | None = None) -> None:
    """Put a server in one of the reference's TrackingServerStatus values (a test's Updating, StopFailed ...)."""
    if status not in STATUSES:
        raise ValueError(f"{status!r} is not a TrackingServerStatus")
    server = server_for(name, region)
    server.status, server.seen = status, False


def set_created(name: str, created: datetime, region: str | None = None) -> None:
    server = server_for(name, region)
    naive = created.astimezone(UTC).replace(tzinfo=None) if created.tzinfo else created
    server.created = server.modified = naive


def apply() -> None:
    if getattr(responses.SageMakerResponse, "_reaper_mlflow", False):
        return
    for fn in (
        create_mlflow_tracking_server,
        describe_mlflow_tracking_server,
        list_mlflow_tracking_servers,
        stop_mlflow_tracking_server,
        start_mlflow_tracking_server,
        delete_mlflow_tracking_server,
    ):
        setattr(responses.SageMakerResponse, fn.__name__, fn)
    responses.SageMakerResponse._reaper_mlflow = True  # type: ignore[attr-defined]
    _patch_tags()
