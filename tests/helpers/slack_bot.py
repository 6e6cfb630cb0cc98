"""The workspace the bot-mode tests post to: its admin, fallback and project channels, its users, and the
bot built in front of a Slack Web API stand-in."""

from __future__ import annotations

from reaper.slack.bot import BotConfig, SlackBot
from reaper_devkit.slack_api import SlackApi

ADMIN, FALLBACK, VISION = "C0ADMIN", "C0FALLBACK", "C0VISION"
USERS = {"ana@example.com": "U0ANA0001", "bo@example.com": "U0BO00001"}


def bot_for(api: SlackApi) -> SlackBot:
    return SlackBot.build(
        BotConfig(
            bot_token="xoxb-test",
            admin_channel=ADMIN,
            fallback_channel=FALLBACK,
            project_channels={"vision": VISION},
            admins=frozenset({"U0ADMIN01"}),
            base_url=api.url,
        )
    )
