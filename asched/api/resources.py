"""Resource vectors, as kube-scheduler's framework.Resource.

CPU is in millicores, memory and ephemeral storage in bytes; `scalar` holds extended
resources (nvidia.com/gpu, hugepages-*, attachable volumes) in their base units.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from asched.api.quantity import parse_cpu_milli, parse_quantity

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

# kube-scheduler's scoring defaults for containers that request nothing
# (pkg/scheduler/util: DefaultMilliCPURequest, DefaultMemoryRequest).
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024


@dataclass(slots=True)
class Resource:
    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pods: int = 0
    scalar: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_list(cls, items: Mapping[str, object], field_path: str = "") -> Resource:
        """Parse a ResourceList. Raises QuantityError/ValueError naming the entry."""
        r = cls()
        for name, raw in items.items():
            if not isinstance(raw, str | int | float):
                raise ValueError(f"{field_path}.{name}: {raw!r} is not a quantity")
            try:
                if name == CPU:
                    r.milli_cpu = parse_cpu_milli(raw)
                elif name == MEMORY:
                    r.memory = parse_quantity(raw)
                elif name == EPHEMERAL_STORAGE:
                    r.ephemeral_storage = parse_quantity(raw)
                elif name == PODS:
                    r.allowed_pods = parse_quantity(raw)
                else:
                    r.scalar[name] = parse_quantity(raw)
            except ValueError as exc:
                raise ValueError(f"{field_path}.{name}: {exc}") from None
        return r

    def copy(self) -> Resource:
        return Resource(
            self.milli_cpu,
            self.memory,
            self.ephemeral_storage,
            self.allowed_pods,
            dict(self.scalar),
        )

    def add(self, other: Resource) -> None:
        self.milli_cpu += other.milli_cpu
        self.memory += other.memory
        self.ephemeral_storage += other.ephemeral_storage
        self.allowed_pods += other.allowed_pods
        for k, v in other.scalar.items():
            self.scalar[k] = self.scalar.get(k, 0) + v

    def sub(self, other: Resource) -> None:
        self.milli_cpu -= other.milli_cpu
        self.memory -= other.memory
        self.ephemeral_storage -= other.ephemeral_storage
        self.allowed_pods -= other.allowed_pods
        for k, v in other.scalar.items():
            self.scalar[k] = self.scalar.get(k, 0) - v

    def get(self, name: str) -> int:
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pods
        return self.scalar.get(name, 0)

    def is_zero(self) -> bool:
        return not (
            self.milli_cpu or self.memory or self.ephemeral_storage or any(self.scalar.values())
        )
