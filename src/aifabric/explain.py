"""Explainable numbers (seed S24): every figure can say how it was computed.

An :class:`Explained` value carries its formula, its inputs (with units) and the sources of its
constants (catalog entries, seed ids, standards). ``--explain`` and ``explain`` JSON fields render
lists of them. Keep them small and literal: a reader should be able to redo the arithmetic.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Explained"]


class Explained(BaseModel):
    """A computed quantity with its derivation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    quantity: str = Field(description="what this is, e.g. 'leaves'")
    value: float | int | str
    unit: str = ""
    formula: str = Field(description="the formula with symbols, e.g. 'L = ceil(S / s_leaf)'")
    inputs: dict[str, float | int | str] = Field(default_factory=dict)
    sources: list[str] = Field(
        default_factory=list, description="seed ids, catalog entries, standards"
    )
    note: str | None = None

    @classmethod
    def fast(
        cls,
        *,
        quantity: str,
        value: float | int | str,
        formula: str,
        unit: str = "",
        inputs: dict[str, float | int | str] | None = None,
        sources: list[str] | None = None,
        note: str | None = None,
    ) -> Explained:
        """Build without validation, for hot paths whose arguments are already typed (mypy
        checks them): ~10x cheaper than the validating constructor."""
        return cls.model_construct(
            quantity=quantity,
            value=value,
            unit=unit,
            formula=formula,
            inputs=inputs or {},
            sources=sources or [],
            note=note,
        )

    def line(self) -> str:
        """One human line: ``leaves = 16  [L = ceil(S / s_leaf); S=128, s_leaf=8]``."""
        unit = f" {self.unit}" if self.unit else ""
        inputs = ", ".join(f"{k}={_fmt(v)}" for k, v in self.inputs.items())
        text = f"{self.quantity} = {_fmt(self.value)}{unit}  [{self.formula}"
        text += f"; {inputs}]" if inputs else "]"
        if self.sources:
            text += f"  (sources: {', '.join(self.sources)})"
        if self.note:
            text += f"  note: {self.note}"
        return text


def _fmt(v: float | int | str) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)
