"""Switch lossless-QoS configs judged on their own, without a fabric file: see
:mod:`.verdicts_core`.

``aifabric verify`` compares a switch config with the fabric's intent (which DSCP RoCE uses,
which priority is lossless). A config pasted to ``diagnose`` has no intent beside it, but its own
settings must agree with each other for RoCE to be lossless and congestion-controlled (S11-S14):

* the priorities the config makes lossless (PFC on) must receive traffic: with DSCP trust, some
  DSCP must map into them, or RoCE marked with any DSCP lands on a lossy queue and is dropped
  under congestion instead of paused;
* the egress queue of a lossless priority needs ECN marking when the config marks ECN on other
  queues: DCQCN only slows a sender that receives CNPs, which come from ECN-marked packets (S13);
  a lossless queue that never marks relies on PFC alone and spreads pause (S14);
* the ECN thresholds of a lossless queue must be ordered (min below max).

The config is read into the same observed model ``verify`` uses (``aifabric.dialects``); the
deriver (:mod:`.derive_switch`) adds one ``switch_qos`` record per switch-config capture, and
the verdicts judge it. A
config excerpt without the sections a check needs is not judged by that check.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from aifabric.checks.diagnose.derive_switch import SwitchQos
from aifabric.checks.diagnose.verdicts import Verdict, verdict
from aifabric.evidence.base import Record

if TYPE_CHECKING:
    from aifabric.checks.diagnose.engine import Evidence

__all__: list[str] = []


_SEED = "S12"


@verdict("switch_qos")
def _lossless_consistency(rec: Record, ev: Evidence) -> Iterator[Verdict]:
    if not isinstance(rec, SwitchQos):
        return
    prios = ", ".join(str(p) for p in rec.lossless)
    if rec.trust == "dscp" and rec.dscp_to_tc is not None:
        into = sorted(d for d, tc in rec.dscp_to_tc.items() if tc in rec.lossless)
        default_lossless = rec.dscp_default_tc in rec.lossless
        if not into and not default_lossless:
            yield Verdict(
                id="diagnose.switch-lossless-unreachable",
                severity="error",
                cause="config.qos",
                message=(
                    f"{rec.device}: PFC is on priority {prios}, but the DSCP map sends no DSCP "
                    "there: RoCE traffic lands on a lossy priority"
                ),
                explanation=(
                    "The switch classifies by DSCP (trust dscp); a packet reaches a lossless "
                    "priority only through the DSCP-to-traffic-class map. This config's map "
                    f"sends none of the 64 DSCP values to priority {prios}, so PFC protects no "
                    "traffic and RoCE is dropped under congestion (retransmissions, retry "
                    "exceeded) instead of paused (S11, S12)."
                ),
                fix=(
                    "Map the DSCP the hosts mark RoCE with (26 by NVIDIA's default, check "
                    "traffic_class / cma_roce_tos on a host) to the lossless priority, and the "
                    "CNP DSCP (48) to its own strict-priority queue; run `aifabric verify` with "
                    "the fabric file for the whole chain."
                ),
                refs=("S11", "S12", "S13"),
                confidence=0.7,
            )
    if rec.lossless_without_ecn:
        queues = ", ".join(str(q) for q in rec.lossless_without_ecn)
        yield Verdict(
            id="diagnose.switch-lossless-no-ecn",
            severity="warning",
            cause="config.qos",
            message=(
                f"{rec.device}: the lossless queue(s) {queues} mark no ECN, while the config "
                "marks ECN on other queues: RoCE gets no congestion signal"
            ),
            explanation=(
                "DCQCN slows a RoCE sender only when the receiver gets ECN-marked packets and "
                "returns CNPs (S13). This config enables ECN/WRED marking, but not on the egress "
                f"queue(s) of its lossless priority {prios}, so RoCE flows there are never told "
                "to slow down: congestion is handled by PFC alone, which pauses whole links and "
                "spreads to victims (S14)."
            ),
            fix=(
                "Attach the ECN profile to the lossless queue(s) (SONiC QUEUE|Ethernet*|3 "
                "wred_profile, EOS random-detect ecn on the tx-queue, NVUE qos congestion-control "
                "on the traffic class), with thresholds within the buffer (S13)."
            ),
            refs=("S13", "S14", _SEED),
            confidence=0.55,
        )
    if rec.bad_thresholds:
        yield Verdict(
            id="diagnose.switch-ecn-thresholds-inverted",
            severity="warning",
            cause="config.qos",
            message=f"{rec.device}: ECN thresholds inverted ({'; '.join(rec.bad_thresholds)})",
            explanation=(
                "WRED/ECN marks between a minimum and a maximum queue depth; with the minimum "
                "above the maximum the marking ramp is empty, so the queue marks all or nothing "
                "depending on the ASIC (S13)."
            ),
            fix="Set min below max (e.g. 150 KB / 1.5 MB for 100-400G RoCE, S13).",
            refs=("S13",),
            confidence=0.5,
        )
