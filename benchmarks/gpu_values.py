"""Are the values read from real nvidia-smi and collect_env pastes right?
``python benchmarks/gpu_values.py SET`` (a directory under benchmarks/captures/).

Each capture of kind ``nvidia-smi`` or ``collect-env`` carries, in its meta.yaml, the values a
reader read off it by eye (``expected:`` driver version, CUDA version, number of GPUs, PyTorch
version). The capture is read the way ``aifabric diagnose`` reads a file (:func:`parse_paste`);
each expected value is compared with what the parts of that kind hold. A value the reader left
``null`` is not scored. Prints one line per miss and the totals per field.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from aifabric.evidence.base import decode_capture
from aifabric.evidence.nvidia_smi import GpuState, SmiDriver
from aifabric.evidence.paste import parse_paste
from aifabric.evidence.torch_env import TorchEnv

ROOT = Path(__file__).resolve().parent / "captures"


def _read(path: Path, kind: str) -> dict[str, Any]:
    text = decode_capture(path.read_bytes(), str(path))
    records = [r for part in parse_paste(text) if part.kind == kind and part.result
               for r in part.result.records]  # fmt: skip
    if kind == "nvidia-smi":
        drivers = [r for r in records if isinstance(r, SmiDriver)]
        gpus = [r for r in records if isinstance(r, GpuState)]
        return {
            "driver_version": next((d.driver_version for d in drivers if d.driver_version),
                                   next((g.driver_version for g in gpus if g.driver_version),
                                        None)),
            "cuda_version": next((d.cuda_version for d in drivers if d.cuda_version), None),
            "gpus": len(gpus),
        }  # fmt: skip
    envs = [r for r in records if isinstance(r, TorchEnv)]
    env = envs[0] if envs else None
    return {
        "driver_version": env.driver_version if env else None,
        "cuda_version": env.cuda_build if env else None,
        "gpus": len(env.gpus) if env else 0,
        "torch_version": env.torch_version if env else None,
    }


def main(name: str) -> int:
    scored: Counter[str] = Counter()
    right: Counter[str] = Counter()
    for meta_path in sorted((ROOT / name).glob("*/meta.yaml")):
        meta = yaml.safe_load(meta_path.read_text(encoding="utf-8")) or {}
        kind = meta.get("kind")
        want = meta.get("expected") or {}
        if kind not in ("nvidia-smi", "collect-env") or not want:
            continue
        got = _read(meta_path.parent / "input.txt", kind)
        for key, value in want.items():
            if value is None or key not in got:
                continue
            scored[key] += 1
            ok = str(got[key]) == str(value)
            right[key] += ok
            if not ok:
                print(f"miss {meta_path.parent.name}: {key} expected {value!r}, read {got[key]!r}")
    for key in sorted(scored):
        print(f"{key}: {right[key]}/{scored[key]}")
    print(f"all: {sum(right.values())}/{sum(scored.values())}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "frozen35"))
