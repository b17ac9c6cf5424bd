"""Diagnose: rules as data (``checks/rules/*.yaml``) over parsed evidence, ranked findings."""

from aifabric.checks.diagnose.engine import Diagnosis, Evidence, diagnose, load_evidence
from aifabric.checks.diagnose.rules import Rule, all_rules

__all__ = ["Diagnosis", "Evidence", "Rule", "all_rules", "diagnose", "load_evidence"]
