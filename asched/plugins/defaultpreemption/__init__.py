"""DefaultPreemption, the default PostFilter plugin (kube-scheduler plugins/defaultpreemption)."""

from asched.plugins.defaultpreemption.args import Args, DefaultPreemptionArgs
from asched.plugins.defaultpreemption.candidates import Candidate, pick_one_node_for_preemption
from asched.plugins.defaultpreemption.pdb import PDB_INFORMER, PodDisruptionBudget, decode_pdb
from asched.plugins.defaultpreemption.plugin import NAME, SPEC, DefaultPreemption

__all__ = [
    "NAME",
    "PDB_INFORMER",
    "SPEC",
    "Args",
    "Candidate",
    "DefaultPreemption",
    "DefaultPreemptionArgs",
    "PodDisruptionBudget",
    "decode_pdb",
    "pick_one_node_for_preemption",
]
