"""AWS Price List Query API (pricing:GetProducts): one (service, region, type) at a time, exact filters.

What each request asks and what the answer's fields mean is listed in docs/aws-assumptions.md
("Prices from the AWS Price List Query API"); the caching and the fallback are in reaper.aws.pricing.
- GetProducts: `ServiceCode`, `Filters` (TERM_MATCH, Field = an attribute name, Value), `MaxResults`
  up to 100, `NextToken`; `PriceList` is a list of JSON strings, one product each, with
  `product.attributes`, `product.sku`, `terms.OnDemand.<offer>.priceDimensions.<rate>.pricePerUnit.USD`
  and `publicationDate`.
  https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_pricing_GetProducts.html
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

SAGEMAKER = "AmazonSageMaker"
EC2 = "AmazonEC2"
FSX = "AmazonFSx"
BEDROCK = "AmazonBedrock"
PAGE = 100  # GetProducts' MaxResults upper bound

# an accelerated EC2 instance as the reaper prices it: Linux, shared tenancy, no pre-installed software,
# a used (not reserved-unused) instance (docs/aws-assumptions.md)
EC2_FILTERS = {"operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA", "capacitystatus": "Used"}
_REGION_PREFIX = re.compile(r"^[A-Z]{2,4}\d?-")  # usagetype's region prefix: USE1-, EU-, EUC1-, APS3- ...


@dataclass(frozen=True)
class Listed:
    """One product's on-demand price as the Price List API gives it."""

    usd: float
    unit: str
    sku: str
    as_of: str | None  # the publication date of the price list it came from (YYYY-MM-DD)
    attributes: Mapping[str, str]

    @property
    def usage(self) -> str:
        """The usage type without its region prefix: 'Notebk:ml.t3.medium' for 'USE1-Notebk:ml.t3.medium'."""
        return _REGION_PREFIX.sub("", self.attributes.get("usagetype", ""), count=1)


class Filter(TypedDict):
    """https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_pricing_Filter.html"""

    Type: str
    Field: str
    Value: str


class GetProductsRequest(TypedDict, total=False):
    """GetProducts' request members (API_pricing_GetProducts.html, above)."""

    ServiceCode: str
    Filters: list[Filter]
    FormatVersion: str
    MaxResults: int
    NextToken: str


def filters(fields: Mapping[str, str]) -> list[Filter]:
    return [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in fields.items()]


def products(client: Any, service: str, fields: Mapping[str, str], counter: list[int]) -> Iterator[Listed]:
    """Every product matching all `fields`, its on-demand price read; `counter[0]` counts the requests made."""
    token: str | None = None
    while True:
        request: GetProductsRequest = {"ServiceCode": service, "Filters": filters(fields), "FormatVersion": "aws_v1", "MaxResults": PAGE}
        if token:
            request["NextToken"] = token
        counter[0] += 1
        page = client.get_products(**request)
        for text in page.get("PriceList", []):
            listed = on_demand(json.loads(text) if isinstance(text, str) else text)
            if listed is not None:
                yield listed
        token = page.get("NextToken")
        if not token:
            return


def on_demand(entry: Mapping[str, Any]) -> Listed | None:
    """The product's on-demand price per unit in USD; None when it has none above zero (never $0)."""
    product = entry.get("product", {})
    for term in entry.get("terms", {}).get("OnDemand", {}).values():
        for dim in term.get("priceDimensions", {}).values():
            try:
                usd = float(dim.get("pricePerUnit", {}).get("USD", "") or 0)
            except ValueError:
                continue
            if usd > 0:
                published = str(entry.get("publicationDate") or term.get("effectiveDate") or "")[:10] or None
                attrs = {str(k): str(v) for k, v in product.get("attributes", {}).items()}
                return Listed(usd, str(dim.get("unit", "")), str(product.get("sku", "")), published, attrs)
    return None


# SageMaker's sections (docs/aws-assumptions.md): the instance is in the usage type, e.g. USE1-Notebk:ml.t3.medium,
# USE1-Host:..., USE1-Train:..., USE1-Studio:JupyterLab-ml....; where an entry has no usage type its `component`
# (or `platoinstancetype`) names the use: Notebook, Hosting, Training, Studio-JupyterLab, Studio-Notebook ...
_SAGEMAKER_USAGE = {"sagemaker-notebook": "Notebk:{}", "sagemaker-hosting": "Host:{}", "sagemaker-training": "Train:{}"}
_SAGEMAKER_COMPONENT = {"sagemaker-notebook": "notebook", "sagemaker-hosting": "hosting", "sagemaker-training": "training"}
# Studio apps, in order of preference (AWS lists the same price for each, mostly): JupyterLab, Code Editor,
# then Studio Classic's KernelGateway (component Studio-Notebook)
_STUDIO_USAGE = ("Studio:JupyterLab-{}", "Studio:CodeEditor-{}", "Studio:KernelGateway-{}")
_STUDIO_COMPONENT = ("studio-jupyterlab", "studio-codeeditor", "studio-notebook")


def _component(p: Listed) -> str:
    return (p.attributes.get("component") or p.attributes.get("platoinstancetype") or "").lower()


def _hourly(found: list[Listed], itype: str) -> list[Listed]:
    return [p for p in found if p.unit.lower().startswith("hr") and p.attributes.get("instanceName", itype) == itype]


def sagemaker_sections(found: list[Listed], itype: str) -> dict[str, Listed]:
    """The notebook, hosting, training and Studio prices of one ML instance type, from one answer."""
    hourly = _hourly(found, itype)
    out: dict[str, Listed] = {}
    for section, pattern in _SAGEMAKER_USAGE.items():
        hit = next((p for p in hourly if p.usage == pattern.format(itype)), None)
        hit = hit or next((p for p in hourly if not p.usage and _component(p) == _SAGEMAKER_COMPONENT[section]), None)
        if hit is not None:
            out[section] = hit
    studio = [p for pattern in _STUDIO_USAGE for p in hourly if p.usage == pattern.format(itype)]
    studio += [p for component in _STUDIO_COMPONENT for p in hourly if not p.usage and _component(p) == component]
    if studio:
        out["sagemaker-studio"] = studio[0]
    return out


def ec2_price(found: list[Listed]) -> Listed | None:
    """The box-usage price of the instance (the product that bills the running instance by the hour)."""
    boxes = [p for p in found if "BoxUsage" in p.usage and p.unit.lower().startswith("hr")]
    boxes.sort(key=lambda p: (p.attributes.get("operation") != "RunInstances", p.attributes.get("licenseModel") != "No License required"))
    return boxes[0] if boxes else None


def fsx_lustre_sections(found: list[Listed]) -> dict[str, Listed]:
    """FSx for Lustre storage per GB-month, keyed as the shipped table keys it: 'SCRATCH_2', 'PERSISTENT_2/125'."""
    out: dict[str, Listed] = {}
    for p in found:
        a = p.attributes
        if not p.unit.lower().startswith("gb-mo") or a.get("fileSystemType", "").lower() != "lustre":
            continue
        deployment = a.get("deploymentOption", "").upper().replace("-", "_")
        if not deployment:
            continue
        throughput = re.sub(r"\D", "", a.get("throughputCapacity", ""))
        key = deployment if deployment.startswith("SCRATCH") or not throughput else f"{deployment}/{throughput}"
        out.setdefault(key, p)
    return out


# Bedrock's on-demand token prices (docs/aws-assumptions.md, "Bedrock prices from the Price List"): a product
# with `feature` "On-demand Inference" (or none), `inferenceType` "Input tokens" or "Output tokens" exactly
# (batch, cache, long-context, image ... are other values), priced per "1K tokens" (or "1M tokens" on newer
# entries). The request asks for the model by `model` = the model id: an entry named by its display name
# ("Claude 3 Haiku") does not match, and the model stays unpriced rather than matched by a guess.
_TOKEN_DIRECTIONS = {"input tokens": "input", "output tokens": "output"}
_PER_1K = {"1k tokens": 1.0, "1m tokens": 1000.0}  # unit -> thousands of tokens it prices


def bedrock_token_sections(found: list[Listed]) -> dict[str, Listed]:
    """{"input": price per 1,000 input tokens, "output": ... output tokens} for one model in one region."""
    out: dict[str, Listed] = {}
    for p in found:
        a = p.attributes
        direction = _TOKEN_DIRECTIONS.get(a.get("inferenceType", "").strip().lower())
        per = _PER_1K.get(p.unit.strip().lower())
        if direction is None or per is None or a.get("feature", "On-demand Inference") != "On-demand Inference":
            continue
        out.setdefault(direction, Listed(p.usd / per, "1K tokens", p.sku, p.as_of, p.attributes))
    return out
