"""The scheduler: one scheduling loop per process. compose.py builds and wires the queue,
the cache, the framework profiles and the cycles (SchedulingCycle, GroupCycle,
BindingCycle, Outcomes); scheduler.py runs them; views.py is what watching tools read."""
