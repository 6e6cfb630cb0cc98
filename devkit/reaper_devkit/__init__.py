"""Development kit: moto extensions, demo seeding, a local Slack receiver. Not shipped in the layer."""
