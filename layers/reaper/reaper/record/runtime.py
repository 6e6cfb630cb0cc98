"""What a sweep runs with: settings, clients per region, the action log and an outbox.

Built in one place (`reaper.wiring.build_runtime`); this module knows the `Outbox` protocol, never Slack.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import boto3

from reaper.aws.clients import Clients
from reaper.aws.pricing import Pricer
from reaper.core.settings import Settings
from reaper.record.actionlog import ActionLog
from reaper.record.forward import Forwarder
from reaper.record.org_settings_reader import CentralSettingsReader
from reaper.record.outbox import NoOutbox, Outbox


@dataclass
class Runtime:
    settings: Settings
    home_region: str
    session: boto3.session.Session | None = None
    log: ActionLog | None = None
    outbox: Outbox = field(default_factory=NoOutbox)
    forwarder: Forwarder | None = None  # the organisation's central bus (REAPER_CENTRAL_EVENT_BUS_ARN)
    # the modes the organisation's central account set for this account (REAPER_CENTRAL_SETTINGS_TABLE_ARN)
    central_settings: CentralSettingsReader | None = None
    # list prices for every kind and region (reaper.wiring builds it: the API, the table, the shipped copy)
    pricer: Pricer | None = None
    _clients: dict[str, Clients] = field(default_factory=dict)

    def clients(self, region: str | None = None) -> Clients:
        region = region or self.home_region
        if region not in self._clients:
            if self.pricer is None:
                self.pricer = Pricer.for_session(self.session or boto3.session.Session())
            self._clients[region] = Clients(region, self.session, self.pricer)
        return self._clients[region]

    def forward_now(self) -> None:
        """Send the records still waiting for the central bus (end of a sweep, of a click)."""
        if self.forwarder is not None:
            self.forwarder.flush()

    @property
    def regions(self) -> tuple[str, ...]:
        return self.settings.regions or (self.home_region,)
