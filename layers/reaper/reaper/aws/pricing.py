"""List prices: AWS's Price List API, cached, with the shipped copy of AWS's price list behind it.

One `Pricer` per runtime (reaper.wiring) reaches every kind through `Clients.pricer`. It answers a
`Price(usd, source, as_of)` or None (unpriced, never $0), in this order (docs/prices.md):
1. the process's memory;
2. the action-log table (one item per (service, region) holding the map, a week's TTL), read once;
3. the Price List API, one request per (service, region, type) with exact filters (reaper.aws.price_list),
   sent to the pricing endpoint's region (us-east-1 by default), never the swept region; what it
   answers is kept, an empty answer too (for a day) so it is not asked every sweep; where the API lists
   no price for that use of the type, the shipped copy's figure (saying so), else unpriced;
4. when the API is off (REAPER_LIVE_PRICES=off), throttled, refused or unreachable: the shipped table
   prices.json (AWS's price list as published on its date), and the figure says so. After the first
   failure the process asks the API no more (a sweep must not wait on it once per type).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Protocol, TypedDict

from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from reaper.aws import price_list
from reaper.aws.dynamo_shapes import Item
from reaper.core.price import LIVE, SHIPPED, Price

log = logging.getLogger(__name__)

# GetProducts "does not support specifying a resource ARN in the Resource element": Resource "*" (template.yaml)
# https://docs.aws.amazon.com/service-authorization/latest/reference/list_awspricelist.html
PERMISSIONS = ("pricing:GetProducts",)

PRICE_FILE = Path(__file__).with_name("prices.json")

# price-table section for each kind of usage
NOTEBOOK = "sagemaker-notebook"
HOSTING = "sagemaker-hosting"
TRAINING = "sagemaker-training"
EC2 = "ec2"
FSX_LUSTRE = "fsx-lustre-gb-month"
STUDIO = "sagemaker-studio"  # Studio app instances (JupyterLab, Code Editor, KernelGateway)
BEDROCK_TOKENS = "bedrock-tokens"  # "<model id>/input|output" -> USD per 1,000 on-demand tokens
# storage left behind (kinds/storage): per GB-month, from the shipped copy only; a copy without the row
# says "unpriced", never $0 (docs/kinds/storage.md)
EBS_GB_MONTH = "ebs-gb-month"  # row: the volume type (gp3, gp2, io2, ...)
EBS_SNAPSHOT_GB_MONTH = "ebs-snapshot-gb-month"  # row: "standard" (no row shipped: unpriced)
FSX_BACKUP_GB_MONTH = "fsx-backup-gb-month"  # row: "lustre"
STUDIO_SPACE_GB_MONTH = "sagemaker-space-gb-month"  # a Studio space's EBS storage; row: "ebs" (no row shipped: unpriced)

# which Price List service answers a section; SageMaker's four sections come from one request per type
_GROUP = {
    NOTEBOOK: "sagemaker",
    HOSTING: "sagemaker",
    TRAINING: "sagemaker",
    STUDIO: "sagemaker",
    EC2: "ec2",
    FSX_LUSTRE: "fsx",
    BEDROCK_TOKENS: "bedrock",
}
PRICED_FOR = 7 * 24 * 3600  # a price read from the API is kept a week
UNPRICED_FOR = 24 * 3600  # a type the API does not price is asked again after a day
DEFAULT_PRICING_REGION = "us-east-1"
# errors about the request (an unknown service code, a filter it does not take), not about the API's availability
REFUSES_THE_REQUEST = frozenset({"NotFoundException", "InvalidParameterException"})
# Two attempts and short timeouts: a throttled or unreachable API falls back to the shipped copy at once
PRICING_CONFIG = Config(retries={"mode": "standard", "total_max_attempts": 2}, connect_timeout=3, read_timeout=10)


class ShippedRow(TypedDict, total=False):
    """One row of the shipped copy (prices.json: docs/prices-shipped-copy.md)."""

    usd: float | None
    source: str | None
    as_of: str | None
    note: str


@dataclass(frozen=True)
class ShippedTable:
    """prices.json: its date, and each section's rows by region, then key (a row, or a bare figure)."""

    as_of: str | None
    sections: dict[str, dict[str, dict[str, ShippedRow | float]]]


@cache
def _table() -> ShippedTable:
    data = json.loads(PRICE_FILE.read_text())  # a JSON object the repository ships: its "_" keys are notes
    return ShippedTable(data.get("_as_of"), {k: v for k, v in data.items() if not k.startswith("_")})


def row(section: str, region: str, key: str | None) -> ShippedRow | None:
    """One row of the shipped table: {"usd", "source", "as_of"[, "note"]}, or None when it has none."""
    found = _table().sections.get(section, {}).get(region, {}).get(key) if key else None
    if found is None:
        return None
    return found.copy() if isinstance(found, dict) else {"usd": found, "source": None, "as_of": _table().as_of}


def shipped(section: str, region: str, key: str | None) -> Price | None:
    """The shipped copy's price, saying it is the shipped copy and its date."""
    found = row(section, region, key)
    usd = None if found is None else found.get("usd")
    if found is None or usd is None or float(usd) <= 0:
        return None
    return Price(float(usd), SHIPPED, found.get("as_of") or _table().as_of)


def hourly(section: str, region: str, instance_type: str | None, count: int = 1) -> float | None:
    """The shipped copy's figure alone (scripts and old tests); the runtime asks a Pricer."""
    price = shipped(section, region, instance_type) if instance_type else None
    return None if price is None else round(price.usd * max(count, 0), 4)


def fsx_key(deployment: str, per_unit_throughput: int | None) -> str:
    return deployment if per_unit_throughput is None or deployment.startswith("SCRATCH") else f"{deployment}/{per_unit_throughput}"


def fsx_hourly(region: str, deployment: str, per_unit_throughput: int | None, capacity_gib: int) -> float | None:
    price = shipped(FSX_LUSTRE, region, fsx_key(deployment, per_unit_throughput))
    return None if price is None else round(price.usd * capacity_gib / 730.0, 4)


class ListedPrice(TypedDict):
    """One price the Price List API gave, as cached (reaper.aws.price_list.Listed without its product)."""

    usd: float
    sku: str | None
    as_of: str | None


class Lookup(TypedDict):
    """One request's answer, cached: its prices by section (a SageMaker use, "ec2", an FSx deployment) and
    until when (epoch seconds) it stands."""

    sections: dict[str, ListedPrice]
    until: int


PriceMap = dict[str, Lookup]  # what was asked (an instance type; "lustre") -> its answer


class PriceStore(Protocol):
    """Where read prices are kept between processes: one map per (service group, region)."""

    def load(self, group: str, region: str) -> PriceMap: ...

    def save(self, group: str, region: str, entries: PriceMap, expires_at: int) -> None: ...


class TablePriceStore:
    """The action-log table: pk PRICE#<group>#<region>, sk -, the map as JSON, expires_at a week on."""

    def __init__(self, dynamodb: Any, table: str) -> None:
        self.client, self.table = dynamodb, table

    def load(self, group: str, region: str) -> PriceMap:
        # Query, which every sweep function may call on the table already (reaper.sweep.iam), for the one item
        key = _key(group, region)
        items = self.client.query(
            TableName=self.table, KeyConditionExpression="pk = :pk", ExpressionAttributeValues={":pk": key["pk"]}, Limit=1
        ).get("Items", [])
        item = items[0] if items else None
        if not item or "prices" not in item:
            return {}
        found: PriceMap = json.loads(item["prices"]["S"])
        return found

    def save(self, group: str, region: str, entries: PriceMap, expires_at: int) -> None:
        item = {**_key(group, region), "prices": {"S": json.dumps(entries, sort_keys=True)}, "expires_at": {"N": str(expires_at)}}
        self.client.put_item(TableName=self.table, Item=item)


def _key(group: str, region: str) -> Item:
    return {"pk": {"S": f"PRICE#{group}#{region}"}, "sk": {"S": "-"}}


class Pricer:
    """List prices for one runtime: memory, then the table, then the API, then the shipped copy."""

    def __init__(
        self,
        client: Callable[[], Any] | None,
        store: PriceStore | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._client_factory = client  # None: the API is off (REAPER_LIVE_PRICES=off)
        self._client: Any = None
        self.store = store
        self.clock = clock
        self.calls = 0  # GetProducts requests made by this process (bench/, tests)
        self.down: str | None = None if client is not None else "off"  # why the API is not asked at all
        self.down_for: dict[str, str] = {}  # a service the API refused (NotFoundException ...): not asked again
        self._maps: dict[tuple[str, str], PriceMap] = {}

    @classmethod
    def shipped_only(cls) -> Pricer:
        return cls(None)

    @classmethod
    def for_session(cls, session: Any, region: str = DEFAULT_PRICING_REGION, store: PriceStore | None = None) -> Pricer:
        return cls(lambda: session.client("pricing", region_name=region, config=PRICING_CONFIG), store)

    # -- what the kinds ask --
    def hourly(self, section: str, region: str, instance_type: str | None, count: int = 1) -> Price | None:
        if not instance_type:
            return None
        price = self._price(section, region, instance_type, section, instance_type)
        return None if price is None else price.times(max(count, 0))

    def fsx_hourly(self, region: str, deployment: str, per_unit_throughput: int | None, capacity_gib: int) -> Price | None:
        """FSx for Lustre storage cost per hour: GB-month price x capacity / 730."""
        key = fsx_key(deployment, per_unit_throughput)
        price = self._price(FSX_LUSTRE, region, "lustre", key, key)
        return None if price is None else price.times(capacity_gib / 730.0)

    def bedrock_tokens(self, region: str, model_id: str, direction: str) -> Price | None:
        """The model's on-demand price per 1,000 input or output tokens (AmazonBedrock); None: unpriced.

        The shipped copy holds no Bedrock rows (PRICE_SOURCE.md): without the API, Bedrock is unpriced."""
        return self._price(BEDROCK_TOKENS, region, model_id, direction, f"{model_id}/{direction}")

    def storage_hourly(self, section: str, region: str, key: str, size_gib: int) -> Price | None:
        """Stored GB priced per GB-month, as an hourly figure (x size / 730): the shipped copy's row, or None."""
        price = shipped(section, region, key)
        return None if price is None else price.times(size_gib / 730.0)

    # -- the floor --
    def _price(self, section: str, region: str, lookup: str, key: str, row_key: str) -> Price | None:
        """`lookup`: what one request asks for (an instance type; "lustre"); `key`: the price in its answer (a
        section; an FSx deployment); `row_key`: the shipped table's row (an instance type; an FSx deployment)."""
        if self._client_factory is None:  # the API is off: the shipped copy alone
            return shipped(section, region, row_key)
        group = _GROUP[section]
        entries = self._map(group, region)
        entry = entries.get(lookup)
        if entry is None or entry.get("until", 0) < self.clock():
            entry = self._ask(group, region, lookup) if self.down is None and group not in self.down_for else None
            if entry is None:  # the API failed, now or earlier in this process: the shipped copy, saying so
                return shipped(section, region, row_key)
            entries[lookup] = entry
            self._save(group, region, entries)
        found = entry.get("sections", {}).get(key)
        if found is None:  # the API lists no price for this use of the type: the shipped copy's, if it has one
            return shipped(section, region, row_key)
        return Price(float(found["usd"]), LIVE, found.get("as_of"), found.get("sku"))

    def _map(self, group: str, region: str) -> PriceMap:
        if (group, region) not in self._maps:
            loaded: PriceMap = {}
            if self.store is not None:
                try:
                    loaded = self.store.load(group, region)
                except (ClientError, BotoCoreError, ValueError) as exc:
                    log.warning("price cache unreadable (%s): asking the Price List API", exc)
            self._maps[(group, region)] = loaded
        return self._maps[(group, region)]

    def _save(self, group: str, region: str, entries: PriceMap) -> None:
        if self.store is None:
            return
        try:
            self.store.save(group, region, entries, int(self.clock()) + PRICED_FOR)
        except (ClientError, BotoCoreError) as exc:  # a cache that cannot be written costs a request next time, nothing else
            log.warning("price cache not written (%s)", exc)

    def _ask(self, group: str, region: str, lookup: str) -> Lookup | None:
        """One request (pages aside) for one type in one region; None when the API failed (now down)."""
        counter = [0]
        try:
            if self._client is None and self._client_factory is not None:
                self._client = self._client_factory()
            sections = _sections(group, self._client, region, lookup, counter)
        except (ClientError, BotoCoreError) as exc:
            code = exc.response.get("Error", {}).get("Code", "error") if isinstance(exc, ClientError) else type(exc).__name__
            if code in REFUSES_THE_REQUEST:  # this service or these filters, not the API: the others are still asked
                self.down_for[group] = code
            else:  # throttled, refused, unreachable: not asked again by this process
                self.down = code
            log.warning("AWS Price List API unavailable for %s (%s): the shipped copy of AWS's price list is used", group, code)
            return None
        finally:
            self.calls += counter[0]
        keep = PRICED_FOR if sections else UNPRICED_FOR
        return {"sections": sections, "until": int(self.clock()) + keep}


def _sections(group: str, client: Any, region: str, lookup: str, counter: list[int]) -> dict[str, ListedPrice]:
    if group == "sagemaker":
        found = list(price_list.products(client, price_list.SAGEMAKER, {"regionCode": region, "instanceName": lookup}, counter))
        listed = price_list.sagemaker_sections(found, lookup)
    elif group == "ec2":
        fields = {"regionCode": region, "instanceType": lookup, **price_list.EC2_FILTERS}
        box = price_list.ec2_price(list(price_list.products(client, price_list.EC2, fields, counter)))
        listed = {EC2: box} if box is not None else {}
    elif group == "bedrock":
        fields = {"regionCode": region, "model": lookup}
        listed = price_list.bedrock_token_sections(list(price_list.products(client, price_list.BEDROCK, fields, counter)))
    else:
        fields = {"regionCode": region, "fileSystemType": "Lustre"}
        listed = price_list.fsx_lustre_sections(list(price_list.products(client, price_list.FSX, fields, counter)))
    return {k: {"usd": p.usd, "sku": p.sku, "as_of": p.as_of} for k, p in listed.items()}
