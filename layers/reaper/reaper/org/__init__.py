"""The organisation's central account: one action log and one digest for every member account."""
