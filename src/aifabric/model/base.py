"""Building blocks shared by every model class: the strict frozen base, tuple fields that accept
YAML lists, and the two scalar types that appear in YAML as strings (an :class:`Endpoint`
``device:port`` and an IPv4 interface ``10.0.0.1/31``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from ipaddress import IPv4Network, ip_network
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    PlainSerializer,
    PlainValidator,
    StringConstraints,
    WithJsonSchema,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

__all__ = ["Endpoint", "IPv4If", "IPv4Net", "StrictModel", "Tup"]

T = TypeVar("T")


class StrictModel(BaseModel):
    """Base of all model classes: strict types, frozen, unknown fields refused."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid", validate_default=True)


def _as_tuple(value: object) -> object:
    return tuple(value) if isinstance(value, list) else value


Tup = Annotated[tuple[T, ...], BeforeValidator(_as_tuple)]
"""An immutable sequence field that accepts a YAML/JSON list."""

_NAME = r"[A-Za-z0-9][A-Za-z0-9_.\-]*"
_ENDPOINT_RE = re.compile(rf"^(?P<device>{_NAME}):(?P<port>[^\s:]+)$")


@dataclass(frozen=True, slots=True, order=True)
class Endpoint:
    """One end of a link: a device name and a port name, written ``device:port``.

    Server ports are host interfaces (``srv001:nic0``); switch ports use aifabric's neutral
    names (``leaf01:Ethernet7``, breakout sub-port ``leaf01:Ethernet7/2``); dialect renderers
    map them to vendor names.
    """

    device: str
    port: str

    def __str__(self) -> str:
        return f"{self.device}:{self.port}"

    @classmethod
    def parse(cls, text: str) -> Endpoint:
        match = _ENDPOINT_RE.match(text)
        if match is None:
            raise ValueError(
                f"endpoint {text!r} must be written device:port, for example leaf01:Ethernet1"
            )
        return cls(match.group("device"), match.group("port"))

    @classmethod
    def _validate(cls, value: Any) -> Endpoint:
        if isinstance(value, Endpoint):
            return value
        if isinstance(value, str):
            return cls.parse(value)
        raise ValueError(f"endpoint must be a string device:port, got {type(value).__name__}")

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(
            cls._validate,
            serialization=core_schema.plain_serializer_function_ser_schema(str),
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {
            "type": "string",
            "pattern": _ENDPOINT_RE.pattern,
            "description": "device:port, e.g. leaf01:Ethernet1",
        }


_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IPV4_IF_PATTERN = rf"^{_OCTET}\.{_OCTET}\.{_OCTET}\.{_OCTET}/(?:3[0-2]|[12]?[0-9])$"


def _parse_ipv4_network(value: Any) -> IPv4Network:
    if isinstance(value, IPv4Network):
        return value
    if not isinstance(value, str):
        raise ValueError(f"expected an IPv4 prefix such as 10.0.0.0/16, got {value!r}")
    try:
        net = ip_network(value, strict=True)
    except ValueError as exc:
        raise ValueError(f"{value!r} is not an IPv4 prefix: {exc}") from None
    if not isinstance(net, IPv4Network):
        raise ValueError(f"{value!r} is not IPv4")
    return net


IPv4If = Annotated[
    str,
    StringConstraints(pattern=_IPV4_IF_PATTERN),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": _IPV4_IF_PATTERN,
            "description": "IPv4 address/prefix, e.g. 10.0.0.1/31",
        }
    ),
]
"""An interface address with its prefix length, written ``10.0.0.1/31``. Kept as text and
checked by pattern (fabric files hold hundreds of thousands); parse with
:func:`ipaddress.ip_interface` where arithmetic is needed."""

IPv4Net = Annotated[
    IPv4Network,
    PlainValidator(_parse_ipv4_network),
    PlainSerializer(str, return_type=str),
    WithJsonSchema({"type": "string", "description": "IPv4 prefix, e.g. 10.0.0.0/16"}),
]
"""A network prefix, written ``10.0.0.0/16``."""
