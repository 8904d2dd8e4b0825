"""Plugin results: a code, the reasons, and the plugin that said it.

Mirrors kube-scheduler's framework.Status. Plugins return `None` for success (like Go's nil
status) so the hot path allocates nothing; anything else is a Status. Rejections are
Statuses, never exceptions: the runtime turns a plugin's exception into an Error status
tagged with the plugin's name.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum


class Code(IntEnum):
    SUCCESS = 0
    ERROR = 1
    # Rejected on this node now; preemption may help.
    UNSCHEDULABLE = 2
    # Rejected and preemption cannot help on this node.
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    # Waiting for something outside the scheduler; requeued without backoff.
    PENDING = 6


_CODE_NAMES = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


@dataclass(slots=True, frozen=True)
class Status:
    code: Code
    reasons: tuple[str, ...] = ()
    plugin: str = ""
    error: BaseException | None = None

    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending (kube-scheduler IsRejected)."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)

    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        if self.plugin == plugin:
            return self
        return Status(self.code, self.reasons, plugin, self.error)

    def code_name(self) -> str:
        return _CODE_NAMES[self.code]

    def __str__(self) -> str:
        who = f" by {self.plugin}" if self.plugin else ""
        return f"{self.code_name()}{who}: {self.message()}"


SUCCESS = Status(Code.SUCCESS)


def unschedulable(*reasons: str, plugin: str = "") -> Status:
    return Status(Code.UNSCHEDULABLE, reasons, plugin)


def unresolvable(*reasons: str, plugin: str = "") -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons, plugin)


def error(err: BaseException | str, plugin: str = "") -> Status:
    exc = err if isinstance(err, BaseException) else RuntimeError(err)
    return Status(Code.ERROR, (str(exc) or type(exc).__name__,), plugin, exc)


def wrap_error(prefix: str, st: Status, plugin: str = "") -> Status:
    """An Error reading "<prefix>: <st's message>", as kube-scheduler's runtime reports a
    plugin's failure: fwk.AsStatus(fmt.Errorf(prefix + ": %w", status.AsError()))."""
    return Status(Code.ERROR, (f"{prefix}: {st.message()}",), plugin or st.plugin, st.error)


def skip(plugin: str = "") -> Status:
    # PreFilter and PreScore skip for most pods: one shared Status per plugin (Statuses are
    # frozen) instead of a new one each time.
    st = _SKIPS.get(plugin)
    if st is None:
        st = _SKIPS[plugin] = Status(Code.SKIP, (), plugin)
    return st


_SKIPS: dict[str, Status] = {}


def wait(*reasons: str, plugin: str = "") -> Status:
    return Status(Code.WAIT, reasons, plugin)


def pending(*reasons: str, plugin: str = "") -> Status:
    return Status(Code.PENDING, reasons, plugin)


def excluded_by_pre_filter(plugins: Iterable[str]) -> Status:
    """The status of every node a PreFilter result left out (findNodesThatFitPod's
    SetAbsentNodesStatus): UnschedulableAndUnresolvable, naming the plugins that narrowed
    the nodes, sorted. Like Go's it is no plugin's own status (its plugin is "")."""
    names = " ".join(sorted(plugins))
    return Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"node(s) didn't satisfy plugin(s) [{names}]",)
    )


def no_node_left(plugins: Iterable[str], plugin: str) -> Status:
    """The status when the PreFilter results' node sets intersect to nothing
    (RunPreFilterPlugins), reported as `plugin`'s, the one whose result emptied it."""
    names = sorted(plugins)
    msg = (
        f"node(s) didn't satisfy plugin {names[0]}"
        if len(names) == 1
        else f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously"
    )
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (msg,), plugin)


def is_success(status: Status | None) -> bool:
    return status is None or status.code == Code.SUCCESS


def code_of(status: Status | None) -> Code:
    return Code.SUCCESS if status is None else status.code
