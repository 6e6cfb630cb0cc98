"""The notebook kind's own settings (docs/kinds/notebook.md), read from their REAPER_* variables
(reaper.core.settings). JupyterReads stays shared: the Studio kind and the coverage report read it too."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from reaper.core.settings import KindSettings


class NotebookSettings(KindSettings):
    ENV_VARS: ClassVar[dict[str, str]] = {
        "REAPER_AGENT_LIFECYCLE_CONFIG": "agent_lifecycle_config",
        "REAPER_AGENT_CHANNEL": "agent_channel",
        "REAPER_ATTACH_AGENT": "attach_agent",
        "REAPER_AGENT_PUBLISH_POLICY_ARN": "agent_publish_policy_arn",
        "REAPER_NOTEBOOK_EARLY_WARNING": "notebook_early_warning",
    }

    agent_lifecycle_config: str = "mlreaper-activity-agent"
    # AgentChannel: "metric" = the agent publishes MLReaper/NotebookActivity (docs/kinds/notebook.md) and the
    # reaper reads it; "logs" = samples in /mlreaper/<lifecycle config>, read first (docs/kinds/notebook.md, AgentChannel)
    agent_channel: str = Field(default="metric", pattern="^(metric|logs)$")
    attach_agent: bool = False
    agent_publish_policy_arn: str | None = None  # the stack's NotebookActivityPublishPolicy (for the silent-agent fix)
    # on strong evidence the warning comes early, so the stop falls at the threshold (issue 27)
    notebook_early_warning: bool = True
