"""The live web inspector: what the scheduler is doing, served at /inspector/.

- collector: what the cycles decide, recorded by reference and formatted later;
- snapshot: the scheduler's queues, pending pods, gangs, nodes and throughput per tick;
- stream: per-client coalescing fan-out of snapshots (backpressure);
- web: the routes on the ops server, behind its authentication and authorization;
- static/: the page, its script and style (package data, no CDN).
"""

from asched.inspector.collector import Collector
from asched.inspector.snapshot import Inspector
from asched.inspector.stream import Broadcaster
from asched.inspector.web import ExplainFn, routes

__all__ = ["Broadcaster", "Collector", "ExplainFn", "Inspector", "routes"]
