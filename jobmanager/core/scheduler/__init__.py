"""Scheduling: regions, strategies, failover, release, slots and adaptive decisions."""
