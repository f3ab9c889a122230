"""Feeds: operations run on a schedule, as their owner, through the executor."""
