"""The scheduler: one scheduling loop per process, wiring the queue, the cache, the framework
profiles and the cycles (SchedulingCycle, BindingCycle, Outcomes) together."""
