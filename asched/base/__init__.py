"""The base layer: primitives every other layer may use and that import nothing of asched.

Time (Clock, RealClock, FakeClock, run_within) lives here so that the client, the informers,
the framework and the scheduler share one clock without importing each other.
"""
