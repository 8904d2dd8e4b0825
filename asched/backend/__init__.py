"""Scheduler state kept between cycles: the cache (nodes, assigned and assumed pods),
the per-cycle snapshot, and the scheduling queue."""
