"""DynamicResources' queueing: Go's EventsToRegister and its hint functions. The plugin
owns one ClaimHints and hands its events to the queue; the hints read the plugin's claim
tracker."""

from __future__ import annotations

from collections.abc import Sequence

from asched.api.dra import ResourceClaim
from asched.api.pod import Pod
from asched.framework.events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
)
from asched.plugins.dynamicresources.claims import ClaimLookupError, pod_claims
from asched.plugins.dynamicresources.tracker import ClaimTracker


class ClaimHints:
    """The events DynamicResources registers and the hints that judge them."""

    def __init__(self, tracker: ClaimTracker, *, group_claims: bool) -> None:
        self.tracker = tracker
        # Go's fts.EnableDRAWorkloadResourceClaims. The hints look claims up as PreEnqueue
        # does (one foreachPodResourceClaim in Go): a member whose claim its PodGroup owns
        # and that PreEnqueue gated before the claim arrived is let out by the claim's Add.
        self._group_claims = group_claims

    def events(self) -> Sequence[ClusterEventWithHint]:
        """Go's EventsToRegister, same events and hints."""
        return (
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE,
                    ActionType.ADD
                    | ActionType.UPDATE_NODE_LABEL
                    | ActionType.UPDATE_NODE_ALLOCATABLE,
                )
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.RESOURCE_CLAIM,
                    ActionType.ADD | ActionType.UPDATE | ActionType.DELETE,
                ),
                self.claim_changed,
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.UNSCHEDULED_POD,
                    ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM,
                ),
                self.pod_updated,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.DEVICE_CLASS, ActionType.ADD | ActionType.UPDATE)
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.RESOURCE_SLICE, ActionType.ADD | ActionType.UPDATE)
            ),
        )

    def claim_changed(self, pod: Pod, old: object | None, new: object | None) -> QueueingHint:
        """Go's isSchedulableAfterClaimChange."""
        if new is None:
            gone = old if isinstance(old, ResourceClaim) else None
            if gone is not None and gone.allocation is None:
                return QueueingHint.QUEUE_SKIP
            return QueueingHint.QUEUE
        if not isinstance(new, ResourceClaim):
            return QueueingHint.QUEUE
        before = old if isinstance(old, ResourceClaim) else None
        deallocated = (
            before is not None and before.allocation is not None and new.allocation is None
        )
        if not deallocated and not _names(pod, new):
            # Go answers QueueSkip both when the pod's claims cannot be looked up and when
            # none of them is this one; a claim the pod does not name cannot be one of
            # them (the lookup is by name), so the lookup, which for every pod still
            # waiting for its template's claim raises, is not needed to say so. Each
            # claim event asks this of every waiting pod.
            return QueueingHint.QUEUE_SKIP
        try:
            claims = pod_claims(pod, self.tracker.get, group_claims=self._group_claims)
            uses = any(c.uid == new.uid for _, c in claims)
        except ClaimLookupError:
            return QueueingHint.QUEUE_SKIP
        if deallocated:
            return QueueingHint.QUEUE
        if not uses:
            return QueueingHint.QUEUE_SKIP
        if before is None:
            return QueueingHint.QUEUE
        # Go skips only when the whole status is unchanged (a driver's status.devices
        # conditions count too); allocation and reservedFor are compared as well because
        # the claim tracker's in-flight copies change them without a new fingerprint.
        if (before.allocation, before.reserved_for, before.status_fingerprint) == (
            new.allocation,
            new.reserved_for,
            new.status_fingerprint,
        ):
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE

    def pod_updated(self, pod: Pod, old: object | None, new: object | None) -> QueueingHint:
        """Go's isSchedulableAfterTargetPodUpdate."""
        if not isinstance(new, Pod):
            return QueueingHint.QUEUE
        try:
            pod_claims(new, self.tracker.get, group_claims=self._group_claims)
        except ClaimLookupError:
            return QueueingHint.QUEUE_SKIP
        return QueueingHint.QUEUE


def _names(pod: Pod, claim: ResourceClaim) -> bool:
    """The pod names the claim: in spec.resourceClaims, or in status.resourceClaimStatuses
    as the claim made from one of its templates (resourceclaim.Name's two sources)."""
    if pod.namespace != claim.namespace:
        return False
    name = claim.name
    for entry in pod.resource_claims:  # a loop: any() over a generator costs twice as much
        if entry.claim_name == name:
            return True
    return name in pod.resource_claim_statuses.values()
