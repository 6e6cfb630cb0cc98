"""SageMaker hosting as the endpoint kind needs it, where moto 5.2.5 falls short.

What is patched (each mirrors the real API's shapes; nothing here is used by the reaper itself):

* Inference components: CreateInferenceComponent, DescribeInferenceComponent,
  ListInferenceComponents (EndpointNameEquals / VariantNameEquals / NameContains /
  StatusEquals, MaxResults + NextToken), UpdateInferenceComponentRuntimeConfig,
  DeleteInferenceComponent, and tags on their ARNs (AddTags, ListTags, DeleteTags).
  Copy counts change at once. A copy count of 0 is accepted only where the variant's
  managed instance scaling allows a minimum of 0 (the documented condition for scale to
  zero); when every component on such a variant is at 0, the variant reports 0 instances,
  and the first copy back brings its instances back.
* Tag calls on the ARN of a deleted resource answer ValidationException, as AWS does (moto
  failed with an AttributeError).
* Endpoint configurations for inference components: variants without ModelName are
  accepted (moto required one), ExecutionRoleArn is kept, and ManagedInstanceScaling and
  AsyncInferenceConfig show in DescribeEndpoint as they do in AWS.
* Search(Resource="Endpoint"): results carry EndpointArn (moto sent Arn, which the
  serializer dropped) and honour MaxResults / NextToken (moto returned everything at once).
* UpdateEndpointWeightsAndCapacities keeps a variant's weight when only the count changes.
* Endpoint lifecycle for tests (moto makes endpoints InService at once):
  `script_status(name, [...])` makes the next endpoint created with that name go through the
  given statuses, one per DescribeEndpoint; `set_times(name, created, modified)` ages an
  endpoint so "InService for the whole idle window" can be tested.

All patches are on moto's backend and response classes, so they hold in-process (mock_aws)
and in server mode (ThreadedMotoServer shares the backends); the two helpers reach the
backend directly, so they need the server in the same process.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from moto.core import DEFAULT_ACCOUNT_ID
from moto.core.responses import ActionResult, EmptyResult
from moto.core.utils import utcnow
from moto.sagemaker import models, responses
from moto.sagemaker.exceptions import ConflictException, ValidationError
from moto.sagemaker.utils import arn_formatter

IC_STORE = "reaper_inference_components"
SCRIPT_STORE = "reaper_status_scripts"


class FakeInferenceComponent:
    def __init__(
        self,
        backend: Any,
        name: str,
        endpoint: Any,
        variant_name: str,
        specification: dict[str, Any],
        copies: int,
        tags: list[dict[str, str]] | None,
    ) -> None:
        self.name = name
        self.arn = arn_formatter("inference-component", name, backend.account_id, backend.region_name)
        self.endpoint_name = endpoint.endpoint_name
        self.endpoint_arn = endpoint.arn
        self.variant_name = variant_name
        self.specification = specification
        self.desired_copies = self.current_copies = copies
        self.status = "InService"
        self.tags = list(tags or [])
        self.creation_time = self.last_modified_time = utcnow()

    def summary(self) -> dict[str, Any]:
        return {
            "CreationTime": self.creation_time,
            "InferenceComponentArn": self.arn,
            "InferenceComponentName": self.name,
            "EndpointArn": self.endpoint_arn,
            "EndpointName": self.endpoint_name,
            "VariantName": self.variant_name,
            "InferenceComponentStatus": self.status,
            "LastModifiedTime": self.last_modified_time,
        }

    def describe(self) -> dict[str, Any]:
        return {
            **self.summary(),
            "Specification": {k: v for k, v in self.specification.items() if k != "Container"},
            "RuntimeConfig": {"DesiredCopyCount": self.desired_copies, "CurrentCopyCount": self.current_copies},
        }


def _components(backend: Any) -> dict[str, FakeInferenceComponent]:
    store: dict[str, FakeInferenceComponent] = backend.__dict__.setdefault(IC_STORE, {})
    return store


def _component(backend: Any, name: str) -> FakeInferenceComponent:
    ic = _components(backend).get(name)
    if ic is None:
        arn = arn_formatter("inference-component", name, backend.account_id, backend.region_name)
        raise ValidationError(message=f"Could not find inference component '{arn}'.")
    return ic


def _endpoint(backend: Any, name: str) -> Any:
    endpoint = backend.endpoints.get(name)
    if endpoint is None:
        arn = arn_formatter("endpoint", name, backend.account_id, backend.region_name)
        raise ValidationError(message=f"Could not find endpoint '{arn}'.")
    return endpoint


def _config_variant(backend: Any, endpoint: Any, variant_name: str) -> dict[str, Any]:
    config = backend.endpoint_configs.get(endpoint.endpoint_config_name)
    for variant in config.production_variants if config else []:
        if variant.get("VariantName") == variant_name:
            return dict(variant)
    return {}


def _managed_min(variant: dict[str, Any]) -> int | None:
    scaling = variant.get("ManagedInstanceScaling") or {}
    if scaling.get("Status") != "ENABLED":
        return None
    return int(scaling.get("MinInstanceCount", 1))


def _settle_instances(backend: Any, endpoint: Any, variant_name: str) -> None:
    """Managed instance scaling: no copies on a min-0 variant means no instances, and back."""
    config_variant = _config_variant(backend, endpoint, variant_name)
    if _managed_min(config_variant) != 0:
        return
    on_variant = [
        ic for ic in _components(backend).values() if ic.endpoint_name == endpoint.endpoint_name and ic.variant_name == variant_name
    ]
    idle = all(ic.desired_copies == 0 for ic in on_variant)
    for variant in endpoint.production_variants:
        if variant.get("VariantName") != variant_name:
            continue
        if idle:
            variant["CurrentInstanceCount"] = variant["DesiredInstanceCount"] = 0
        elif not variant.get("CurrentInstanceCount"):
            count = int(config_variant.get("InitialInstanceCount") or 1)
            variant["CurrentInstanceCount"] = variant["DesiredInstanceCount"] = count


# -- responses: inference components ------------------------------------------------------


def create_inference_component(self: Any) -> ActionResult:
    backend = self.sagemaker_backend
    name = self._get_param("InferenceComponentName")
    if name in _components(backend):
        raise ConflictException(f"Inference component {name} already exists.")
    endpoint = _endpoint(backend, self._get_param("EndpointName"))
    variant_name = self._get_param("VariantName")
    if not any(v.get("VariantName") == variant_name for v in endpoint.production_variants):
        raise ValidationError(message=f"Variant {variant_name} is not part of endpoint {endpoint.endpoint_name}.")
    spec = self._get_param("Specification") or {}
    if spec.get("ModelName"):
        backend.describe_model(spec["ModelName"])  # raises when the model is missing
    copies = int((self._get_param("RuntimeConfig") or {}).get("CopyCount", 1))
    ic = FakeInferenceComponent(backend, name, endpoint, variant_name, spec, copies, self._get_param("Tags"))
    _components(backend)[name] = ic
    _settle_instances(backend, endpoint, variant_name)
    return ActionResult({"InferenceComponentArn": ic.arn})


def describe_inference_component(self: Any) -> ActionResult:
    return ActionResult(_component(self.sagemaker_backend, self._get_param("InferenceComponentName")).describe())


def list_inference_components(self: Any) -> ActionResult:
    items = sorted(_components(self.sagemaker_backend).values(), key=lambda ic: (ic.creation_time, ic.name))
    filters = {
        "EndpointNameEquals": lambda ic, v: ic.endpoint_name == v,
        "VariantNameEquals": lambda ic, v: ic.variant_name == v,
        "NameContains": lambda ic, v: v in ic.name,
        "StatusEquals": lambda ic, v: ic.status == v,
    }
    for param, keep in filters.items():
        value = self._get_param(param)
        if value:
            items = [ic for ic in items if keep(ic, value)]
    start = int(self._get_param("NextToken") or 0)
    size = int(self._get_param("MaxResults") or 10)
    page = items[start : start + size]
    result: dict[str, Any] = {"InferenceComponents": [ic.summary() for ic in page]}
    if start + size < len(items):
        result["NextToken"] = str(start + size)
    return ActionResult(result)


def update_inference_component_runtime_config(self: Any) -> ActionResult:
    backend = self.sagemaker_backend
    ic = _component(backend, self._get_param("InferenceComponentName"))
    copies = int((self._get_param("DesiredRuntimeConfig") or {}).get("CopyCount", ic.desired_copies))
    endpoint = _endpoint(backend, ic.endpoint_name)
    if copies == 0 and _managed_min(_config_variant(backend, endpoint, ic.variant_name)) != 0:
        raise ValidationError(message="CopyCount 0 needs the endpoint variant's managed instance scaling enabled with MinInstanceCount 0.")
    ic.desired_copies = ic.current_copies = copies
    ic.last_modified_time = utcnow()
    _settle_instances(backend, endpoint, ic.variant_name)
    return ActionResult({"InferenceComponentArn": ic.arn})


def delete_inference_component(self: Any) -> EmptyResult:
    backend = self.sagemaker_backend
    ic = _component(backend, self._get_param("InferenceComponentName"))
    del _components(backend)[ic.name]
    return EmptyResult()


# -- endpoint configs, endpoints and Search ------------------------------------------------


def _patch_backend(backend_cls: Any) -> None:
    original_from_arn = backend_cls._get_resource_from_arn

    def _get_resource_from_arn(self: Any, arn: str) -> Any:
        if ":inference-component/" in arn:
            return _component(self, arn.rsplit("/", 1)[-1])
        found = original_from_arn(self, arn)
        if found is None:  # moto went on to fail with AttributeError on tags of a deleted resource
            raise ValidationError(message=f"Could not find resource '{arn}'.")
        return found

    backend_cls._get_resource_from_arn = _get_resource_from_arn

    original_iter = backend_cls.iter_tagged_resources

    def iter_tagged_resources(self: Any) -> Any:
        yield from original_iter(self)
        for ic in _components(self).values():
            yield models.TaggedResource(
                arn=ic.arn, tags={t["Key"]: t["Value"] for t in ic.tags}, resource_type="sagemaker:inference-component"
            )

    backend_cls.iter_tagged_resources = iter_tagged_resources

    def validate_production_variants(self: Any, production_variants: list[dict[str, Any]]) -> None:
        for variant in production_variants:
            if variant.get("ModelName") and variant["ModelName"] not in self._models:
                arn = arn_formatter("model", variant["ModelName"], self.account_id, self.region_name)
                raise ValidationError(message=f"Could not find model '{arn}'.")

    backend_cls.validate_production_variants = validate_production_variants

    original_create_endpoint = backend_cls.create_endpoint

    def create_endpoint(self: Any, endpoint_name: str, endpoint_config_name: str, tags: list[dict[str, str]]) -> Any:
        if endpoint_name in self.endpoints:
            arn = arn_formatter("endpoint", endpoint_name, self.account_id, self.region_name)
            raise ValidationError(message=f'Cannot create already existing endpoint "{arn}".')
        endpoint = original_create_endpoint(self, endpoint_name, endpoint_config_name, tags)
        config = self.endpoint_configs[endpoint_config_name]
        if config.async_inference_config:
            endpoint.async_inference_config = config.async_inference_config
        script = self.__dict__.setdefault(SCRIPT_STORE, {}).get(endpoint_name)
        if script:
            endpoint.endpoint_status = script.pop(0)
        return endpoint

    backend_cls.create_endpoint = create_endpoint

    original_describe_endpoint = backend_cls.describe_endpoint

    def describe_endpoint(self: Any, endpoint_name: str) -> dict[str, Any]:
        response: dict[str, Any] = original_describe_endpoint(self, endpoint_name)
        script = self.__dict__.setdefault(SCRIPT_STORE, {}).get(endpoint_name)
        if script:
            status = script.pop(0)
            endpoint = self.endpoints[endpoint_name]
            endpoint.endpoint_status = status
            if status == "Failed":
                endpoint.failure_reason = "The primary container for production variant AllTraffic did not pass the ping health check."
            response = original_describe_endpoint(self, endpoint_name)
        return response

    backend_cls.describe_endpoint = describe_endpoint

    original_weights = backend_cls.update_endpoint_weights_and_capacities

    def update_endpoint_weights_and_capacities(self: Any, endpoint_name: str, desired_weights_and_capacities: list[dict[str, Any]]) -> str:
        endpoint = self.endpoints.get(endpoint_name)
        kept = {v["VariantName"]: v.get("CurrentWeight") for v in endpoint.production_variants} if endpoint else {}
        for change in desired_weights_and_capacities:
            if change.get("DesiredWeight") is None and kept.get(change.get("VariantName")) is not None:
                change["DesiredWeight"] = kept[change["VariantName"]]
        arn: str = original_weights(self, endpoint_name, desired_weights_and_capacities)
        return arn

    backend_cls.update_endpoint_weights_and_capacities = update_endpoint_weights_and_capacities


def _patch_endpoint_model() -> None:
    original = models.FakeEndpoint._process_production_variants

    def _process_production_variants(self: Any, production_variants: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = original(self, production_variants)
        for summary, variant in zip(out, production_variants, strict=False):
            if variant.get("ManagedInstanceScaling"):
                summary["ManagedInstanceScaling"] = variant["ManagedInstanceScaling"]
        return out

    models.FakeEndpoint._process_production_variants = _process_production_variants


def _patch_responses() -> None:
    cls = responses.SageMakerResponse
    for fn in (
        create_inference_component,
        describe_inference_component,
        list_inference_components,
        update_inference_component_runtime_config,
        delete_inference_component,
    ):
        setattr(cls, fn.__name__, fn)

    original_create_config = cls.create_endpoint_config

    def create_endpoint_config(self: Any) -> ActionResult:
        result: ActionResult = original_create_config(self)
        role = self._get_param("ExecutionRoleArn")
        if role:
            self.sagemaker_backend.endpoint_configs[self._get_param("EndpointConfigName")].execution_role_arn = role
        return result

    cls.create_endpoint_config = create_endpoint_config

    original_search = cls.search

    def search(self: Any) -> ActionResult:
        if self._get_param("Resource") != "Endpoint":
            return original_search(self)
        found = self.sagemaker_backend.search(resource="Endpoint", search_expression=self._get_param("SearchExpression"))
        results = []
        for item in found["Results"]:
            endpoint = dict(item["Endpoint"])
            endpoint["EndpointArn"] = endpoint.pop("Arn", None)
            results.append({"Endpoint": endpoint})
        start = int(self._get_param("NextToken") or 0)
        size = int(self._get_param("MaxResults") or 10)
        page: dict[str, Any] = {"Results": results[start : start + size]}
        if start + size < len(results):
            page["NextToken"] = str(start + size)
        return ActionResult(page)

    cls.search = search


def _backend(region: str, account: str) -> Any:
    return models.sagemaker_backends[account][region]


def script_status(name: str, statuses: list[str], region: str = "us-east-1", account: str = DEFAULT_ACCOUNT_ID) -> None:
    """The next endpoint created as `name` starts in statuses[0]; each DescribeEndpoint moves one on."""
    _backend(region, account).__dict__.setdefault(SCRIPT_STORE, {})[name] = list(statuses)


def set_times(
    name: str, created: datetime, modified: datetime | None = None, region: str = "us-east-1", account: str = DEFAULT_ACCOUNT_ID
) -> None:
    """Age an endpoint: moto stamps endpoints with the wall clock when they are created."""
    endpoint = _backend(region, account).endpoints[name]
    endpoint.creation_time = _naive_utc(created)
    endpoint.last_modified_time = _naive_utc(modified or created)


def _naive_utc(value: datetime) -> datetime:
    """moto keeps naive UTC times (its utcnow), and sorts endpoints by them."""
    return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value


def set_status(name: str, status: str, region: str = "us-east-1", account: str = DEFAULT_ACCOUNT_ID) -> None:
    """Put an endpoint in a status moto never reaches by itself (Creating, Updating, Failed …)."""
    _backend(region, account).endpoints[name].endpoint_status = status


def apply() -> None:
    backend_cls = models.SageMakerModelBackend
    if getattr(backend_cls, "_reaper_inference", False):
        return
    _patch_backend(backend_cls)
    _patch_endpoint_model()
    _patch_responses()
    backend_cls._reaper_inference = True
