"""``setpci`` reads of the ACS Control register: real PLX loop (pytorch/pytorch#24081), the
NCCL guide's ``ECAP_ACS+0x6.w`` form with ``-v`` device prefixes, writes not taken as reads, and
the decoding of the register bits against the PCIe ACS Control layout (bit 2 ReqRedir, bit 3
CmpltRedir)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from aifabric.evidence.pcie import PciDevice, parse_setpci_acs
from tests.unit.evidence.fixtures import load


def test_plx_loop_from_a_real_paste() -> None:
    res = load("setpci-acs", "pytorch-24081-plx-loop")
    devs = [r for r in res.records if isinstance(r, PciDevice)]
    assert len(devs) == 12 and not res.warnings
    redirect = [d for d in devs if d.acs_redirect]
    assert len(redirect) == 8  # the 001d values
    assert devs[1].acs_ctl == {
        "SrcValid": True,
        "TransBlk": False,
        "ReqRedir": True,
        "CmpltRedir": True,
        "UpstreamFwd": True,
        "EgressCtrl": False,
        "DirectTrans": False,
    }
    assert devs[0].line == 3 and not devs[0].acs_redirect  # after the sudo prompt line


def test_named_capability_with_device_prefix_and_writes() -> None:
    text = (
        "# for BDF in $(lspci -d '*:*:*' | awk '{print $1}'); do\n"
        "setpci -v -s $BDF ECAP_ACS+0x6.w; done\n"
        "0000:00:01.0 @1aa = 0010\n"
        "0000:16:02.0 @1aa = 0x0004\n"
        "# setpci -v -s 0000:16:02.0 ECAP_ACS+0x6.w=0000\n"
        "0000\n"
    )
    devs = parse_setpci_acs(text).records
    assert [(d.bdf, d.acs_redirect) for d in devs] == [  # type: ignore[attr-defined]
        ("0000:00:01.0", False),
        ("0000:16:02.0", True),
    ]


@given(st.integers(0, 0xFFFF))
def test_bits_decode(value: int) -> None:
    [dev] = parse_setpci_acs(f"$ setpci -s 03:00.0 f2a.w\n{value:04x}\n").records
    assert dev.acs_redirect == bool(value & 0b1100)  # type: ignore[attr-defined]
