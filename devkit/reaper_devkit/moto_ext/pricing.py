"""The AWS Price List Query API (service `pricing`), which moto 5.2.5 does not have, for the kit.

Written from the API reference:
- GetProducts: ServiceCode (required), Filters (all must match), FormatVersion (aws_v1), MaxResults
  (1..100), NextToken; answers FormatVersion, PriceList (one JSON string per product) and NextToken.
  Errors: InvalidParameterException, InvalidNextTokenException, NotFoundException, AccessDeniedException,
  InternalErrorException, ExpiredNextTokenException, ThrottlingException.
  https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_pricing_GetProducts.html
- Filter: Type TERM_MATCH ("match both the given filter field and the given value"), EQUALS (exactly),
  CONTAINS (a substring), ANY_OF / NONE_OF (the value is / is not any of the given, comma-separated,
  values); Field: "ServiceCode, and all attribute names".
  https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_pricing_Filter.html
- DescribeServices: ServiceCode (optional) -> Services [{ServiceCode, AttributeNames}]; an unknown code is
  NotFoundException. https://docs.aws.amazon.com/aws-cost-management/latest/APIReference/API_pricing_DescribeServices.html
  (GetAttributeValues is not emulated: the reaper does not call it.)

The catalogue is AWS's own entries, never prices typed in here: `price_catalogue/<ServiceCode>.jsonl.gz`
beside this package, one PriceList entry per line, generated from a public dated copy of AWS's price
list (PRICE_SOURCE.md). A test may `install()` entries of the documented shape where the shape is
what it tests (pagination, filters), and `fail_next()` to have the API throttle or refuse.

moto dispatches by URL in-process (moto.backend_index.backend_url_patterns, then the backend's `urls`)
and, in server mode, by the SigV4 credential scope's service ("pricing" -> host pricing.<region>.amazonaws.com)
then the same patterns and `moto.backends.get_backend("pricing")`, which imports `moto.pricing`: this
module registers itself under that name, so both paths reach the same backend.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import sys
import threading
import types
import uuid
from pathlib import Path
from typing import Any

from moto import backend_index
from moto.core.base_backend import BackendDict, BaseBackend
from moto.core.exceptions import JsonRESTError
from moto.core.responses import BaseResponse

CATALOGUE = Path(__file__).resolve().parent.parent / "price_catalogue"
ENDPOINT_REGIONS = ["us-east-1", "eu-central-1", "ap-south-1"]  # where AWS serves the Price List Query API
URL_BASE = r"https?://(api\.)?pricing\.(.+)\.amazonaws\.com"
FILTER_TYPES = ("TERM_MATCH", "EQUALS", "CONTAINS", "ANY_OF", "NONE_OF")
TOP_LEVEL_FIELDS = ("ServiceCode", "productFamily", "sku")

_lock = threading.Lock()
_installed: dict[str, list[dict[str, Any]]] = {}  # ServiceCode -> entries a test installed (wins over the files)
_loaded: dict[str, list[dict[str, Any]]] = {}  # ServiceCode -> entries read from the catalogue files
_tokens: dict[str, tuple[str, int, int]] = {}  # NextToken -> (query digest, offset, generation)
_failures: list[tuple[str, str]] = []  # (error code, message) to answer the next requests with, in order
_state = {"generation": 0}
requests: list[dict[str, Any]] = []  # every GetProducts request received (tests and bench count them)


def install(service_code: str, entries: list[dict[str, Any]]) -> None:
    """Serve these entries for the service (tests of shape: pagination, filters); `reset()` removes them."""
    with _lock:
        _installed[service_code] = [dict(e) for e in entries]
        _state["generation"] += 1


def fail_next(code: str = "ThrottlingException", times: int = 1, message: str = "Rate exceeded") -> None:
    """Answer the next `times` requests with this error (ThrottlingException, AccessDeniedException, ...)."""
    with _lock:
        _failures.extend([(code, message)] * times)


def reset() -> None:
    """Forget installed entries, failures, issued tokens and counted requests (issued tokens now expire)."""
    with _lock:
        _installed.clear()
        _failures.clear()
        _tokens.clear()
        requests.clear()
        _state["generation"] += 1


def entries(service_code: str) -> list[dict[str, Any]] | None:
    """The catalogue of one service; None when it has none (an unknown ServiceCode)."""
    if service_code in _installed:
        return _installed[service_code]
    if service_code not in _loaded:
        path = CATALOGUE / f"{service_code}.jsonl.gz"
        if not path.exists():
            return None
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            _loaded[service_code] = [json.loads(line) for line in fh if line.strip()]
    return _loaded[service_code]


def _services() -> list[str]:
    files = [p.name.removesuffix(".jsonl.gz") for p in CATALOGUE.glob("*.jsonl.gz")] if CATALOGUE.exists() else []
    return sorted({*files, *_installed})


def _field(entry: dict[str, Any], name: str) -> str | None:
    if name == "ServiceCode":
        return str(entry.get("serviceCode") or entry.get("product", {}).get("attributes", {}).get("servicecode") or "")
    product = entry.get("product", {})
    if name in ("productFamily", "sku") and name in product:
        return str(product[name])
    value = product.get("attributes", {}).get(name)
    return None if value is None else str(value)


def _matches(entry: dict[str, Any], f: dict[str, str]) -> bool:
    value = _field(entry, f["Field"])
    wanted = f["Value"]
    if f["Type"] in ("TERM_MATCH", "EQUALS"):
        return value is not None and value == wanted
    if f["Type"] == "CONTAINS":
        return value is not None and wanted in value
    listed = {v.strip() for v in wanted.split(",")}
    return (value in listed) if f["Type"] == "ANY_OF" else (value not in listed)


def _invalid(message: str) -> JsonRESTError:
    return JsonRESTError("InvalidParameterException", message)


def _check_filters(catalogue: list[dict[str, Any]], filters: list[dict[str, str]]) -> None:
    known = {k for e in catalogue for k in e.get("product", {}).get("attributes", {})} | set(TOP_LEVEL_FIELDS)
    for f in filters:
        if not isinstance(f, dict) or not {"Type", "Field", "Value"} <= set(f):
            raise _invalid("Each filter needs Type, Field and Value")
        if f["Type"] not in FILTER_TYPES:
            raise _invalid(f"1 validation error detected: Value '{f['Type']}' at 'filters.type' failed to satisfy constraint")
        if f["Field"] not in known:
            raise _invalid(f"Invalid filter field: {f['Field']}")


def _digest(service: str, filters: list[dict[str, str]]) -> str:
    return hashlib.sha256(json.dumps([service, filters], sort_keys=True).encode()).hexdigest()


def _offset(token: str | None, digest: str) -> int:
    if not token:
        return 0
    issued = _tokens.get(token)
    if issued is None:
        raise JsonRESTError("InvalidNextTokenException", "The pagination token is invalid. Try again without a pagination token.")
    if issued[0] != digest:
        raise JsonRESTError("InvalidNextTokenException", "The pagination token does not belong to this request.")
    if issued[2] != _state["generation"]:
        raise JsonRESTError("ExpiredNextTokenException", "The pagination token expired. Try again without a pagination token.")
    return issued[1]


class PricingBackend(BaseBackend):
    """Global and read-only: the catalogue is the same for every account and endpoint region."""

    @property
    def _url_module(self) -> Any:  # moto looks for <package>.urls; this one module holds url_bases and url_paths
        return sys.modules[__name__]

    def get_products(self, service: str, filters: list[dict[str, str]], max_results: int, token: str | None) -> dict[str, Any]:
        with _lock:
            requests.append({"ServiceCode": service, "Filters": filters, "MaxResults": max_results, "NextToken": token})
            if _failures:
                code, message = _failures.pop(0)
                raise JsonRESTError(code, message)
            catalogue = entries(service)
            if catalogue is None:
                raise JsonRESTError("NotFoundException", f"Service code {service} is not found")
            if not 1 <= max_results <= 100:
                raise _invalid("MaxResults must be between 1 and 100")
            _check_filters(catalogue, filters)
            digest = _digest(service, filters)
            start = _offset(token, digest)
            found = [e for e in catalogue if all(_matches(e, f) for f in filters)]
            page = found[start : start + max_results]
            out: dict[str, Any] = {"FormatVersion": "aws_v1", "PriceList": [json.dumps(e) for e in page]}
            if start + max_results < len(found):
                nxt = uuid.uuid4().hex
                _tokens[nxt] = (digest, start + max_results, _state["generation"])
                out["NextToken"] = nxt
            return out

    def describe_services(self, service: str | None) -> dict[str, Any]:
        with _lock:
            codes = _services()
            if service is not None and service not in codes:
                raise JsonRESTError("NotFoundException", f"Service code {service} is not found")
            chosen = [service] if service is not None else codes
            described = []
            for code in chosen:
                names = sorted({k for e in entries(code) or [] for k in e.get("product", {}).get("attributes", {})})
                described.append({"ServiceCode": code, "AttributeNames": names})
            return {"FormatVersion": "aws_v1", "Services": described}


class PricingResponse(BaseResponse):
    def __init__(self) -> None:
        super().__init__(service_name="pricing")

    @property
    def backend(self) -> PricingBackend:
        return pricing_backends[self.current_account][ENDPOINT_REGIONS[0]]

    def get_products(self) -> str:
        service = self._get_param("ServiceCode")
        if not service:
            raise _invalid("ServiceCode is required")
        answer = self.backend.get_products(
            service, self._get_param("Filters") or [], int(self._get_param("MaxResults") or 100), self._get_param("NextToken")
        )
        return json.dumps(answer)

    def describe_services(self) -> str:
        return json.dumps(self.backend.describe_services(self._get_param("ServiceCode")))


url_bases = [URL_BASE]
url_paths = {"{0}/$": PricingResponse.dispatch}
pricing_backends = BackendDict(PricingBackend, "pricing", use_boto3_regions=False, additional_regions=ENDPOINT_REGIONS)


def apply() -> None:
    """Register the service with moto: a module `moto.pricing` and its URL pattern (idempotent)."""
    if "moto.pricing" in sys.modules:
        return
    module = types.ModuleType("moto.pricing")
    module.pricing_backends = pricing_backends  # type: ignore[attr-defined]
    module.__doc__ = __doc__
    sys.modules["moto.pricing"] = module
    if not any(name == "pricing" for name, _ in backend_index.backend_url_patterns):
        backend_index.backend_url_patterns.append(("pricing", re.compile(URL_BASE)))
