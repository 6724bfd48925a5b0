"""Tiny utilities with seeded bugs: the example repository of the rollout-fleet demo sweep."""
