"""Scheduler extenders: kube-scheduler's HTTP webhooks for Filter, Prioritize, Bind and
preemption (k8s.io/kube-scheduler/extender/v1), configured by `extenders:` in the
KubeSchedulerConfiguration. See docs/extenders.md for what is supported.
"""

from asched.extender.build import build_extenders
from asched.extender.chain import EXTENDER_EVENTS, EXTENDER_NAME, Extenders, ExtenderScores
from asched.extender.extender import HTTPExtender
from asched.extender.objects import WireObjects
from asched.extender.transport import ExtenderSetupError, Poster, Transport
from asched.framework.extenders import ExtenderError, Victims

__all__ = [
    "EXTENDER_EVENTS",
    "EXTENDER_NAME",
    "ExtenderError",
    "ExtenderScores",
    "ExtenderSetupError",
    "Extenders",
    "HTTPExtender",
    "Poster",
    "Transport",
    "Victims",
    "WireObjects",
    "build_extenders",
]
