"""DynamicResources: place pods whose spec.resourceClaims ask for DRA devices.

Mirrors kube-scheduler 1.37's pkg/scheduler/framework/plugins/dynamicresources
(DynamicResources), for claims with `exactly` and `firstAvailable` requests and
matchAttribute constraints:

- PreEnqueue: every claim of the pod exists (for a template claim, the pod's
  status.resourceClaimStatuses names the generated one), is not being deleted and, if
  generated, is owned by the pod; otherwise the pod waits with Go's error as message.
- PreFilter: Skip for pods without claims. Allocated claims contribute their allocation's
  node selector; unallocated ones need their DeviceClasses to exist and no allocation of
  theirs in flight; an allocator is prepared over all ResourceSlices with every device
  already allocated (or in flight) counted as taken.
- Filter: an allocated claim's node selector must match the node; the unallocated ones
  must all be allocatable from the node's slices ("cannot allocate all claims").
- Score: with firstAvailable requests, nodes where earlier alternatives could be
  allocated score higher (computeScore), normalized to 0..100.
- PostFilter: one allocated claim that some node could not use and that no other pod
  holds is deallocated, so the next attempt may allocate it elsewhere; without its
  PreFilter state (an earlier PreFilter plugin rejected the pod) it fails with Go's
  "not found", which ends the PostFilter run.
- Reserve / Unreserve: the node's allocation is put in flight (so the next pod cannot
  take the same devices) / taken back; after PreBind, Unreserve also takes the pod out of
  each claim's status.reservedFor (written in the background: releaser.py).
- PreBind: each claim gets its allocation (with its allocationTimestamp) and the pod in
  status.reservedFor (bindClaim); when a device has binding conditions, PreBind then
  waits for the driver to report them (readiness.py), and Filter treats a claim whose
  binding failed or timed out as unavailable.

Every rejection is UnschedulableAndUnresolvable (Go's statusUnschedulable); a broken claim
or class (a CEL error) is an Error. asched adds a PreScore that Skips pods without
firstAvailable requests (Go's Score gives them 0 everywhere). Extended resources backed by
DRA (a pod's `example.com/gpu: 2` that a DeviceClass provides) join as one more claim,
made per node and created at PreBind (extended.py).

Pod groups. In a pod-group cycle the members share the cycle's own state (GroupState): a
claim whose allocation one member's Reserve put in flight is reused by the next member's
PreFilter instead of making it wait ("in the process of being allocated"). With
DRAWorkloadResourceClaims (beta, off in 1.37) a claim the pod's PodGroup lists in
spec.resourceClaims the same way as the pod is reserved for the PodGroup, a reservation
for the group counts as the pod's (PreBind has nothing to write), and a claim made from
the group's template is accepted as the pod's. Not mirrored: PodGroupPostFilter (freeing
the claims of a group that found no placement).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import structlog

from asched.api.dra import (
    Allocation,
    DeviceClass,
    DeviceTaintRule,
    ResourceClaim,
    ResourceSlice,
)
from asched.api.node import Node
from asched.api.pod import Pod
from asched.api.workload import NativePodGroup
from asched.base import featuregates
from asched.client.protocol import (
    REQUEST_ERRORS,
    failure_fields,
    may_have_been_applied,
    request_context,
)
from asched.client.readback import ReadBack
from asched.framework.cycle_state import CycleState
from asched.framework.events import ClusterEventWithHint
from asched.framework.handle import Handle
from asched.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    PodGroupPostFilterPlugin,
    PodGroupScheduling,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    ReservePlugin,
    ScoreNormalizer,
    ScorePlugin,
)
from asched.framework.listers import InformerRequest, ObjectStore
from asched.framework.nodeinfo import NodeInfo
from asched.framework.podgroups import PodGroupPostFilterResult
from asched.framework.registry import PluginSpec
from asched.framework.signatures import SignResult, unsignable
from asched.framework.status import Code, Status, error, skip, unresolvable, unschedulable
from asched.framework.types import (
    MAX_NODE_SCORE,
    NodeScore,
    NodeToStatus,
    PostFilterResult,
    PreFilterResult,
)
from asched.framework.workloads import NATIVE_POD_GROUPS
from asched.plugins.deviceclasses import DEVICE_CLASSES, is_dra_extended_resource_name, resolver
from asched.plugins.dynamicresources.allocator import (
    AllocationError,
    AllocationTimeout,
    Allocator,
    NodeAllocationFailure,
)
from asched.plugins.dynamicresources.args import DynamicResourcesArgs
from asched.plugins.dynamicresources.binding import (
    ClaimBindError,
    bind_claim,
    create_claim,
    deallocate_claim,
    delete_claim,
    patch_extended_claim_status,
    unreserve_consumer,
    written_after_all,
)
from asched.plugins.dynamicresources.claims import (
    ClaimLookupError,
    bindings,
    group_claim_name,
    pod_claims,
    pod_ref,
    reserved_for_pod,
)
from asched.plugins.dynamicresources.extended import (
    MSG_CANNOT_FIT,
    MSG_CLAIM_EXISTS,
    SPECIAL_CLAIM_NAME,
    RequestMapping,
    claim_manifest,
    find_claim,
    mapped_scalars,
    node_resources,
    requests_and_mappings,
    special_claim,
)
from asched.plugins.dynamicresources.hints import ClaimHints
from asched.plugins.dynamicresources.pools import SliceIndex, SliceIndexCache
from asched.plugins.dynamicresources.readiness import (
    BindingFailed,
    claim_unavailable,
    has_binding_conditions,
    wait_until_ready,
)
from asched.plugins.dynamicresources.releaser import ReservationReleaser
from asched.plugins.dynamicresources.state import GROUP_STATE_KEY, STATE_KEY, GroupState, State
from asched.plugins.dynamicresources.tracker import (
    DEVICE_TAINT_RULES,
    INFORMERS,
    RESOURCE_CLAIMS,
    RESOURCE_SLICES,
    ClaimTracker,
    with_taint_rules,
)
from asched.plugins.helpers import default_normalize_score

log = structlog.get_logger(__name__)

NAME = "DynamicResources"

MSG_NOT_AVAILABLE = "resourceclaim not available on the node"
MSG_CANNOT_ALLOCATE = "cannot allocate all claims"
MSG_DEALLOCATED = "deallocation of ResourceClaim completed"
MSG_DELETED = "deletion of ResourceClaim completed"
MSG_GROUP_POST_FILTER = "deallocation and deletion of ResourceClaims completed"
MSG_GROUP_DEALLOCATED = "deallocation of PodGroup ResourceClaim completed"
MSG_GROUP_UNRESERVED = "ResourceClaim unreserved for PodGroup"
# fwk.ErrNotFound: CycleState.Read of a key PreFilter never wrote.
STATE_NOT_FOUND = "not found"
# resourceapi.FirstAvailableDeviceRequestMaxSize: the first alternative scores this much.
FIRST_AVAILABLE_MAX_SIZE = 8
Args = DynamicResourcesArgs


class DynamicResources(
    PreEnqueuePlugin,
    PreFilterPlugin,
    FilterPlugin,
    PostFilterPlugin,
    PodGroupPostFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    ScoreNormalizer,
    ReservePlugin,
    PreBindPlugin,
    EnqueueExtensions,
):
    # Every pod with resource claims is refused (sign_pod).
    refuses_signing_often = True

    def __init__(self, args: DynamicResourcesArgs | None, handle: Handle) -> None:
        self._args = args or DynamicResourcesArgs()
        self._handle = handle
        self.tracker = ClaimTracker(self._claim_store)
        self.releaser = ReservationReleaser(handle.client)
        self._slice_cache = SliceIndexCache()
        # Go's fts.EnableDRAWorkloadResourceClaims, read once.
        self._group_claims = featuregates.enabled("DRAWorkloadResourceClaims")
        self.hints = ClaimHints(self.tracker, group_claims=self._group_claims)

    @property
    def name(self) -> str:
        return NAME

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return self.hints.events()

    def sign_pod(self, pod: Pod) -> SignResult:
        """DynamicResources.SignPod: a pod with claims depends on the claims' state."""
        if pod.resource_claims:
            return unsignable("pods with dra resource claims are not signable", NAME)
        return ()

    def informers(self) -> Sequence[InformerRequest[Any]]:
        if self._group_claims:
            return (*INFORMERS, NATIVE_POD_GROUPS)
        return INFORMERS

    def _claim_store(self) -> ObjectStore[ResourceClaim]:
        store: ObjectStore[ResourceClaim] = self._handle.store(RESOURCE_CLAIMS)
        return store

    def _class(self, name: str) -> DeviceClass | None:
        store: ObjectStore[DeviceClass] = self._handle.store(DEVICE_CLASSES)
        return store.get(name)

    def _pod_group(self, pod: Pod) -> NativePodGroup | None:
        """getPodGroupSnapshot: the pod's PodGroup with the gate on, None for a pod in no
        group; a group the scheduler does not know is Go's lister error."""
        if not self._group_claims or not pod.scheduling_group:
            return None
        store: ObjectStore[NativePodGroup] = self._handle.store(NATIVE_POD_GROUPS)
        group = store.get(f"{pod.namespace}/{pod.scheduling_group}")
        if group is None:
            raise ClaimLookupError(
                "pod group object not found for pod group "
                f"podgroup/{pod.namespace}/{pod.scheduling_group}"
            )
        return group

    def _slice_index(self) -> SliceIndex:
        """ListWithDeviceTaintRules (the slices with the DeviceTaintRules' taints),
        indexed, kept across pods until a slice or rule changes."""
        store: ObjectStore[ResourceSlice] = self._handle.store(RESOURCE_SLICES)
        rules: ObjectStore[DeviceTaintRule] = self._handle.store(DEVICE_TAINT_RULES)
        slices, rule_list = store.list(), rules.list()
        return self._slice_cache.index(
            slices, rule_list, lambda: with_taint_rules(slices, rule_list)
        )

    # ---- PreEnqueue --------------------------------------------------------------------
    def pre_enqueue(self, pod: Pod) -> Status | None:
        if not pod.resource_claims:
            return None
        try:
            pod_claims(pod, self.tracker.get, group_claims=self._group_claims)
        except ClaimLookupError as exc:
            return unresolvable(str(exc), plugin=NAME)
        return None

    # ---- PreFilter ---------------------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        s = State()
        state.write(STATE_KEY, s)
        group = _group_state(state)
        if group is not None:
            group.pods[pod.key] = s
        claims: list[ResourceClaim] = []
        if pod.resource_claims:
            try:
                claims = [
                    c for _, c in pod_claims(pod, self.tracker.get, group_claims=self._group_claims)
                ]
            except ClaimLookupError as exc:
                return None, unresolvable(str(exc), plugin=NAME)
        n_user = len(claims)
        extended = self._pre_filter_extended(pod, s)
        if extended is not None:
            claims.append(extended)
        if self._group_claims and pod.resource_claims:
            try:
                s.bindings = bindings(pod, self._pod_group(pod))
            except ClaimLookupError as exc:
                return None, unresolvable(str(exc), plugin=NAME)
        if not claims:
            return None, skip(NAME)
        to_allocate = [(i, c) for i, c in enumerate(claims) if c.allocation is None]
        for index, claim in to_allocate:
            # Go: a sibling of this pod-group cycle has this allocation in flight; the
            # pod shares it rather than waiting for it to be written.
            pending = self.tracker.pending_allocation(claim.uid)
            if group is not None and pending is not None and claim.uid in group.pending:
                s.shared_pending[index] = pending
                continue
            if pending is not None:
                return None, unresolvable(
                    f"resource claim {claim.key} is in the process of being allocated",
                    plugin=NAME,
                )
            if claim is extended:
                continue  # its requests are made per node, of classes that exist
            status = self._validate_claim(claim)
            if status is not None:
                return None, status
        if to_allocate:
            s.allocator = Allocator(
                self._class, self.tracker.allocated_state(), self._slice_index()
            )
        s.claims, s.allocated = claims, [c.allocation is not None for c in claims]
        s.n_user = n_user
        return None, None

    def _pre_filter_extended(self, pod: Pod, s: State) -> ResourceClaim | None:
        """preFilterExtendedResources: the pod's claim for extended resources a DeviceClass
        provides (the one in the API, or an in-memory stand-in), or None."""
        scalars = pod.requests.scalar
        if not any(q and is_dra_extended_resource_name(n) for n, q in scalars.items()):
            return None  # the common pod: no class store read
        store: ObjectStore[DeviceClass] = self._handle.store(DEVICE_CLASSES)
        classes = resolver(store.list())
        mapped = mapped_scalars(pod, classes)
        if mapped is None:
            return None
        s.scalars, s.classes = mapped, classes
        return find_claim(pod, self.tracker.claims()) or special_claim(pod)

    def _validate_claim(self, claim: ResourceClaim) -> Status | None:
        """Every request's DeviceClass exists (Go's PreFilter loop over requests)."""
        for req in claim.requests:
            if req.exactly is not None:
                alternatives = [(req.name, req.exactly.device_class_name)]
            elif req.first_available:
                alternatives = [
                    (f"{req.name}/{sub.name}", sub.device_class_name) for sub in req.first_available
                ]
            else:
                return unresolvable(
                    f"resource claim {claim.key}, request {req.name}: unknown request type",
                    plugin=NAME,
                )
            for name, class_name in alternatives:
                status = self._validate_device_class(class_name, name)
                if status is not None:
                    return status
        return None

    def _validate_device_class(self, class_name: str, request: str) -> Status | None:
        """Go's validateDeviceClass."""
        if not class_name:
            return error(f"request {request}: unsupported request type", NAME)
        if self._class(class_name) is None:
            return unresolvable(
                f"request {request}: device class {class_name} does not exist", plugin=NAME
            )
        return None

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    # ---- Filter ------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        """Go's Filter: every allocated claim must be available on the node and the others
        allocatable there; a failed allocation is reported before unavailable claims."""
        s = state.get(STATE_KEY)
        if s is None or not s.claims:
            return None
        node = node_info.node
        if node is None:
            return error("node not found", NAME)
        extended = s.extended
        node_claim: ResourceClaim | None = None
        mappings: tuple[RequestMapping, ...] = ()
        if extended is not None:
            # filterExtendedResources
            if extended.requests:
                return unresolvable(MSG_CLAIM_EXISTS, plugin=NAME)
            wanted = node_resources(s.scalars, node.allocatable.scalar, s.classes)
            if wanted is None:
                return unresolvable(MSG_CANNOT_FIT, plugin=NAME)
            if not s.n_user and not wanted:
                return None  # NodeResourcesFit has it all on this node
            if extended.allocation is None:
                requests, mappings = requests_and_mappings(pod, wanted, s.classes)
                node_claim = replace(extended, requests=requests)
        unavailable: list[int] = []
        if any(s.allocated):
            wall = self._handle.clock.wall()
            unavailable = [
                i
                for i, (claim, done) in enumerate(zip(s.claims, s.allocated, strict=True))
                if done
                and claim.allocation is not None
                and (
                    not _usable_on(claim.allocation, node)
                    or claim_unavailable(claim, self._args.binding_timeout, wall)
                )
            ]
        # A sibling's allocation in flight counts as the claim's (availableOnNodes).
        unavailable += [i for i, a in s.shared_pending.items() if not _usable_on(a, node)]
        result: list[Allocation] | None = None
        if s.allocator is not None:
            open_claims = [i for i, done in enumerate(s.allocated) if not done]
            fresh = [i for i in open_claims if i not in s.shared_pending]
            to_allocate = [
                node_claim if s.claims[i] is extended and node_claim is not None else s.claims[i]
                for i in fresh
            ]
            clock = self._handle.clock
            timeout = self._args.filter_timeout
            made: list[Allocation] | None = []
            try:
                if to_allocate:
                    made = s.allocator.allocate(
                        node.name,
                        node.labels,
                        to_allocate,
                        deadline=clock.now() + timeout if timeout > 0 else None,
                        now=clock.now,
                    )
            except AllocationTimeout:
                return error(f"node {node.name}: timed out trying to allocate devices", NAME)
            except AllocationError as exc:
                return error(exc, NAME)
            except NodeAllocationFailure as exc:
                return unresolvable(str(exc), plugin=NAME)
            if made is None or len(made) != len(to_allocate):
                return unresolvable(MSG_CANNOT_ALLOCATE, plugin=NAME)
            # One allocation per open claim, in claim order: the shared ones as they are
            # in flight. (Go appends the shared ones after the new ones, which Reserve
            # then pairs with the claims in claim order; asched keeps each with its own
            # claim.)
            new = iter(made)
            result = [
                s.shared_pending[i] if i in s.shared_pending else next(new) for i in open_claims
            ]
        if unavailable:
            s.unavailable.update(unavailable)
            return unresolvable(MSG_NOT_AVAILABLE, plugin=NAME)
        if result is not None:
            s.node_allocations[node.name] = result
            if node_claim is not None:
                s.node_extended[node.name] = (node_claim, mappings)
        return None

    # ---- PostFilter ----------------------------------------------------------------
    async def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status | None]:
        """Go's PostFilter and deallocateOrDeletePodClaims: deallocate one claim that some
        node could not use and that no other pod holds, so the next attempt may allocate
        it elsewhere. Without PreFilter's state (an earlier PreFilter plugin rejected the
        pod) this is Go's `not found` error, which ends the PostFilter run: the pod's
        message then ends in " not found" and DefaultPreemption does not run.

        Go picks among the unavailable claims in map order (at random); asched takes the
        first in spec.resourceClaims order."""
        s = state.get(STATE_KEY)
        if s is None:
            return None, error(STATE_NOT_FOUND, NAME)
        if not s.claims:
            return None, unschedulable(plugin=NAME)
        return None, (await self._deallocate_or_delete(pod, s))[1]

    async def _deallocate_or_delete(self, pod: Pod, s: State) -> tuple[bool, Status]:
        """deallocateOrDeletePodClaims: (whether a claim was freed, the status)."""
        extended = s.extended
        for index in sorted(s.unavailable):
            claim = s.claims[index]
            if claim is extended:
                if extended.name != SPECIAL_CLAIM_NAME:
                    break
                continue
            holders = claim.reserved_for
            if holders and not (len(holders) == 1 and holders[0].uid == pod.uid):
                continue
            # A failed write (a RequestError) propagates: the framework's PostFilter runner
            # classifies it, logs it once and returns Go's statusError (the error's text).
            await deallocate_claim(self._handle.client, claim)
            log.debug("claim_deallocated", pod=pod.key, claim=claim.key)
            return True, unschedulable(MSG_DEALLOCATED, plugin=NAME)
        if extended is not None and extended.name != SPECIAL_CLAIM_NAME:
            await delete_claim(self._handle.client, extended)
            self.tracker.forget(extended.uid)
            return True, unschedulable(MSG_DELETED, plugin=NAME)
        return False, unschedulable(plugin=NAME)

    # ---- PodGroupPostFilter ----------------------------------------------------------
    async def pod_group_post_filter(
        self, group: PodGroupScheduling
    ) -> tuple[PodGroupPostFilterResult | None, Status | None]:
        """Go's PodGroupPostFilter, after a pod-group cycle found no placement: first, as
        PostFilter would for each unscheduled member, free one claim of its own that some
        node could not use (what that frees does not change the answer); if a member had
        nothing to free, then, with DRAWorkloadResourceClaims, free a claim of the group
        (deallocatePodGroupClaims). Answers Unschedulable "deallocation and deletion of
        ResourceClaims completed" unless the group step says otherwise, so the next
        plugin (DefaultPreemption) runs. A group with a topology constraint is left alone
        (Unschedulable, no reason), and so is one none of whose members reached PreFilter
        (Go would read no state there: the scenarios agree on no reason)."""
        info = group.info
        if info.pod_group.topology_key or not group.attempted:
            return None, unschedulable(plugin=NAME)
        return None, await self._free_claims(group.state, info.pod_group, info.unscheduled)

    async def _free_claims(
        self, group_cycle: CycleState, pg: NativePodGroup, unscheduled: Sequence[Pod]
    ) -> Status:
        group = group_cycle.get(GROUP_STATE_KEY)
        if group is None:
            return error(STATE_NOT_FOUND, NAME)
        unreserve_group = False
        for pod in unscheduled:
            s = group.pods.get(pod.key)
            if s is None:
                continue
            found, st = await self._deallocate_or_delete(pod, s)
            if st.code == Code.ERROR:
                return st
            unreserve_group = unreserve_group or not found
        if unreserve_group and self._group_claims and unscheduled:
            st_group = await self._free_group_claims(group, pg, unscheduled[0])
            if st_group is not None:
                return st_group
        return unschedulable(MSG_GROUP_POST_FILTER, plugin=NAME)

    async def _free_group_claims(
        self, group: GroupState, pg: NativePodGroup, pod: Pod
    ) -> Status | None:
        """deallocatePodGroupClaims: only while no member is bound or assumed outside the
        cycle, deallocate one claim a member could not use that is reserved for nobody or
        for the group alone; else take the group out of `reservedFor` of one allocated
        claim the group lists. Go picks among members and claims in map order (at random);
        asched takes them in PreFilter order and spec.resourceClaims order."""
        if not pod.scheduling_group:
            return None
        if self._handle.scheduled_in_scheduling_group(pod.namespace, pod.scheduling_group):
            return None
        client = self._handle.client
        for s in group.pods.values():
            for index in sorted(s.unavailable):
                claim = s.claims[index]
                holders = claim.reserved_for
                if holders and not (len(holders) == 1 and holders[0].uid == pg.uid):
                    continue
                # As for a pod's claim (above): a failed write propagates, and the
                # framework's PostFilter runner classifies it (Go's statusError).
                await deallocate_claim(client, claim)
                log.debug("group_claim_deallocated", podgroup=pg.key, claim=claim.key)
                return unschedulable(MSG_GROUP_DEALLOCATED, plugin=NAME)
        for entry in pg.resource_claims:
            try:
                name = group_claim_name(pg, entry)
            except ClaimLookupError as exc:
                return error(str(exc), NAME)
            if name is None:
                continue
            shared = self.tracker.get(pg.namespace, name)
            if shared is None:
                return error(f'could not find ResourceClaim "{pg.namespace}/{name}"', NAME)
            if entry.template_name is not None and shared.controller_uid != pg.uid:
                continue  # IsForPodGroup: not the claim the group's template made
            if shared.allocation is None or not reserved_for_pod(
                shared, pod, group=self._group_claims
            ):
                continue
            try:
                await unreserve_consumer(client, shared, pg.uid)
            except REQUEST_ERRORS as exc:
                # Go logs any error and goes on: the next cycle gets here again.
                log.warning("group_claim_unreserve_failed", claim=shared.key, **failure_fields(exc))
                continue
            return unresolvable(MSG_GROUP_UNRESERVED, plugin=NAME)
        return None

    # ---- Score ---------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status | None:
        """Not in Go, whose Score is 0 on every node unless a claim has firstAvailable
        requests: Skip then, so such pods keep the columnar scoring path."""
        s = state.get(STATE_KEY)
        if s is None or not any(r.first_available for c in s.claims for r in c.requests):
            return skip(NAME)
        return None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        """Go's Score/computeScore: earlier firstAvailable alternatives score higher."""
        s = state.get(STATE_KEY)
        allocations = None if s is None else s.node_allocations.get(node_info.name)
        if s is None or allocations is None:
            return 0
        pending = iter(allocations)
        score = 0
        for claim in s.claims:
            allocation = claim.allocation or next(pending, None)
            if allocation is None:
                return 0
            chosen = {r.request for r in allocation.results if "/" in r.request}
            for req in claim.requests:
                for i, sub in enumerate(req.first_available):
                    if f"{req.name}/{sub.name}" in chosen:
                        score += FIRST_AVAILABLE_MAX_SIZE - i
        return score

    def normalize_score(
        self, state: CycleState, pod: Pod, scores: list[NodeScore]
    ) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return None

    # ---- Reserve -----------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = state.get(STATE_KEY)
        if s is None or s.allocator is None:
            return None
        allocations = s.node_allocations.get(node_name)
        if not allocations:
            if all(c is s.extended for c in s.to_allocate()):
                return None  # the node had the extended resources itself
            return error("claim allocation not found for node", NAME)
        group = _group_state(state)
        for claim, allocation in zip(s.to_allocate(), allocations, strict=True):
            self.tracker.signal_pending(claim.uid, allocation)
            s.reserved[claim.uid] = allocation
            if group is not None:
                group.pending.setdefault(claim.uid, set()).add(pod.uid)
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Go's Unreserve: allocations still in flight are taken back, and every allocated
        claim reserved for the pod (PreBind keeps the claims as it wrote them) loses the
        pod from status.reservedFor; the allocation stays, as in Go (PostFilter of a
        later attempt may deallocate it). Idempotent: a repeated write coalesces."""
        s = state.get(STATE_KEY)
        if s is None:
            return
        group = _group_state(state)
        for uid in list(s.reserved):
            # The allocation stays in flight while a sibling still shares it.
            if self.tracker.remove_pending(uid) and group is not None:
                group.pending.pop(uid, None)
            del s.reserved[uid]
        # A claim reserved for the pod's PodGroup stays so: other members may need it.
        for claim in s.claims[: s.n_user]:
            if claim.allocation is not None and reserved_for_pod(claim, pod):
                self.releaser.put(claim, pod)
        # unreserveExtendedResourceClaim: a claim PreBind created goes away again.
        extended = s.extended
        if extended is not None and extended.name != SPECIAL_CLAIM_NAME:
            self.tracker.forget(extended.uid)
            self.releaser.delete(extended)

    async def run(self) -> None:
        """Background work: Unreserve's reservedFor writes."""
        await self.releaser.run()

    # ---- PreBind -----------------------------------------------------------------------
    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """Go's PreBindPreFlight: PreBind has work when the pod has claims."""
        s = state.get(STATE_KEY)
        if s is None or not s.claims:
            return skip(NAME)
        return None

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        s = state.get(STATE_KEY)
        if s is None:
            return None
        for index, current in enumerate(s.claims):
            uid = current.uid
            allocation = s.reserved.get(uid)
            is_extended = index == s.n_user
            if is_extended and allocation is None and not current.requests:
                continue  # the node had the extended resources itself
            if allocation is None and reserved_for_pod(current, pod, group=self._group_claims):
                continue
            client = self._handle.client
            claim = current
            if is_extended and current.name == SPECIAL_CLAIM_NAME:
                made = s.node_extended.get(node_name)
                if made is None:
                    return error(f"extended resource claim not found for node {node_name}", NAME)
                with request_context(f"creating claim for extended resources of {pod.key}"):
                    claim = await create_claim(client, claim_manifest(pod, made[0].requests))
                self.tracker.created(claim)
                s.claims[index] = claim
            consumer = s.bindings[index] if index < len(s.bindings) else pod_ref(pod)
            # A failed write propagates with what bind_claim was writing, in Go's words:
            # the framework's PreBind runner classifies it by kind. What the claim itself
            # refuses (deleted, taken, conflicts past RetryOnConflict) is ClaimBindError.
            try:
                stored = await bind_claim(
                    client, claim, consumer, allocation, self._handle.clock.wall()
                )
            except ClaimBindError as exc:
                return error(str(exc), NAME)
            except REQUEST_ERRORS as exc:
                # A write whose answer was lost may have landed: Unreserve would then free
                # devices the claim holds (binding.written_after_all). Ask first.
                if not may_have_been_applied(exc):
                    raise
                reader = ReadBack(client, self._handle.clock)
                landed = await written_after_all(reader, claim, consumer, allocation)
                log.info("claim_checked", pod=pod.key, claim=claim.key, landed=landed is not None)
                if landed is None:
                    raise
                stored = landed
            self.tracker.assume(stored)
            # Unreserve works on the claim as written (Go's state.claims.set).
            s.claims[index] = stored
            if allocation is not None:
                # Written: no longer in flight, however many siblings shared it.
                self.tracker.remove_pending(uid, force=True)
                del s.reserved[uid]
            log.debug("claim_bound", pod=pod.key, claim=claim.key, node=node_name)
            if is_extended:
                mapped = s.node_extended.get(node_name, (claim, ()))[1]
                try:
                    await patch_extended_claim_status(
                        client, pod, stored.name, [m.json() for m in mapped]
                    )
                except ValueError as exc:  # no mappings: nothing was sent
                    return error(str(exc), NAME)
        if not has_binding_conditions(s.claims):
            return None
        self._handle.events.event(
            pod,
            "Normal",
            "BindingConditionsPending",
            "Scheduling",
            f"waiting for binding conditions for device on node {node_name}",
        )
        try:
            await wait_until_ready(
                s.claims,
                lambda c: self.tracker.get(c.namespace, c.name),
                self._handle.clock,
                self._args.binding_timeout,
            )
        except BindingFailed as exc:
            return error(str(exc), NAME)
        return None


def _usable_on(allocation: Allocation, node: Node) -> bool:
    """The allocation's node selector (none: every node) matches the node."""
    selector = allocation.node_selector
    return selector is None or selector.matches(node.labels, node.name)


def _group_state(state: CycleState) -> GroupState | None:
    """getOrCreatePodGroupStateData: the pod-group cycle's DynamicResources state, made on
    first use; None outside a pod-group cycle."""
    cycle = state.pod_group_cycle
    if cycle is None:
        return None
    group = cycle.get(GROUP_STATE_KEY)
    if group is None:
        group = GroupState()
        cycle.write(GROUP_STATE_KEY, group)
    return group


SPEC = PluginSpec(NAME, DynamicResources, DynamicResourcesArgs)
