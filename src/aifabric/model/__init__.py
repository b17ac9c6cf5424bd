"""The core model: one fabric description that every module reads (architecture.md)."""

from aifabric.model.addressing import Addressing
from aifabric.model.base import Endpoint, StrictModel, Tup
from aifabric.model.design_spec import DesignSpec
from aifabric.model.device import (
    SWITCH_ROLE_TIER,
    Breakout,
    HostPort,
    Middlebox,
    Nic,
    Server,
    Switch,
    expand_port_range,
    parse_switch_port,
)
from aifabric.model.fabric import Fabric, FabricIndex, Pod, Site, fabric_index, integrity_problems
from aifabric.model.io import (
    DesignDocument,
    dump_fabric,
    dump_fabric_json,
    fabric_json_schema,
    parse_document,
    read_document,
    write_fabric,
)
from aifabric.model.link import Link, LinkKind
from aifabric.model.qos import EcnThresholds, PfcWatchdog, QosPolicy, TrafficClass
from aifabric.model.workload import DTYPE_BYTES, Workload

__all__ = [
    "DTYPE_BYTES",
    "SWITCH_ROLE_TIER",
    "Addressing",
    "Breakout",
    "DesignDocument",
    "DesignSpec",
    "EcnThresholds",
    "Endpoint",
    "Fabric",
    "FabricIndex",
    "HostPort",
    "Link",
    "LinkKind",
    "Middlebox",
    "Nic",
    "PfcWatchdog",
    "Pod",
    "QosPolicy",
    "Server",
    "Site",
    "StrictModel",
    "Switch",
    "TrafficClass",
    "Tup",
    "Workload",
    "dump_fabric",
    "dump_fabric_json",
    "expand_port_range",
    "fabric_index",
    "fabric_json_schema",
    "integrity_problems",
    "parse_document",
    "parse_switch_port",
    "read_document",
    "write_fabric",
]
