"""Which precision to train in: bf16 autocast only where the hardware runs bf16 natively.

bf16 autocast is fast on CPUs with AMX-bf16 or AVX-512-BF16 (and on Arm cores with the bf16
extension), but on a CPU without them PyTorch emulates it, and training ran ~34x slower than
fp32 on such an AMD EPYC. ``amp = "auto"`` therefore means: bf16 on a CUDA GPU that supports it,
bf16 on a CPU only when it is native, fp32 otherwise. ``amp = "bf16"`` forces bf16 (with a warning
when it is not native) and ``amp = "off"`` forces fp32.

The CPU is read from ``/proc/cpuinfo`` (Linux), else from ``torch.cpu.get_capabilities()``.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from pathlib import Path

import torch

AMP_AUTO = ("auto",)
AMP_ON = ("bf16", "on", "true", "1")
AMP_OFF = ("off", "fp32", "false", "0", "no")
AMP_CHOICES = AMP_AUTO + AMP_ON + AMP_OFF

# cpuinfo flags (x86 "flags", Arm "Features") that mean bf16 matrix arithmetic in hardware
NATIVE_BF16_FLAGS = frozenset({"amx_bf16", "avx512_bf16", "bf16"})


@dataclass(frozen=True)
class CpuInfo:
    """The CPU's model name and feature flags, as far as they could be found out."""

    model: str
    flags: frozenset[str]

    @property
    def native_bf16(self) -> bool:
        """Whether the CPU has bf16 instructions (AMX-bf16, AVX-512-BF16 or Arm bf16)."""
        return bool(self.flags & NATIVE_BF16_FLAGS)


@dataclass(frozen=True)
class Precision:
    """The precision a run trains in, and why it was chosen (for the log and checkpoint metadata)."""

    bf16: bool
    reason: str
    warning: str = ""

    @property
    def name(self) -> str:
        return "bf16" if self.bf16 else "fp32"

    def log_line(self) -> str:
        """One line for the training log, e.g. ``precision: fp32 (amp=auto: this CPU, X, has no native bf16)``."""
        return f"precision: {self.name} ({self.reason})" + (f" WARNING: {self.warning}" if self.warning else "")


def parse_cpuinfo(text: str) -> CpuInfo:
    """Model name and flags of the first processor listed in ``/proc/cpuinfo`` text (x86 or Arm)."""
    model, flags = "", frozenset[str]()
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key = key.strip().lower()
        if key in ("model name", "hardware", "cpu model") and not model:
            model = value.strip()
        elif key in ("flags", "features") and not flags:
            flags = frozenset(value.split())
    return CpuInfo(model, flags)


def _torch_cpu_info() -> CpuInfo:
    """The CPU as PyTorch's cpuinfo sees it (``torch.cpu.get_capabilities``; empty where torch lacks it)."""
    get = getattr(torch.cpu, "get_capabilities", None)
    caps = dict(get()) if get is not None else {}
    flags = frozenset(k for k, v in caps.items() if v is True)
    return CpuInfo(str(caps.get("cpu_name") or ""), flags)


def cpu_info(cpuinfo_text: str | None = None) -> CpuInfo:
    """This machine's CPU: from ``cpuinfo_text`` if given, else ``/proc/cpuinfo``, else PyTorch.

    A model name missing from cpuinfo (Arm often has none) is taken from PyTorch or ``platform``."""
    if cpuinfo_text is None:
        try:
            cpuinfo_text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            cpuinfo_text = ""
    info = parse_cpuinfo(cpuinfo_text)
    if not info.flags or not info.model:
        fallback = _torch_cpu_info()
        info = CpuInfo(info.model or fallback.model, info.flags or fallback.flags)
    if not info.model:
        info = CpuInfo(platform.processor() or platform.machine() or "unknown CPU", info.flags)
    return info


def cuda_bf16_supported() -> bool:
    """Whether the current GPU runs bf16 natively (compute capability ≥ 8.0), not by emulation."""
    return torch.cuda.is_available() and torch.cuda.is_bf16_supported(including_emulation=False)


def choose_precision(amp: str, device: torch.device, cpu: CpuInfo | None = None,
                     cuda_bf16: bool | None = None) -> Precision:
    """The precision for ``--amp`` on ``device``; ``cpu`` and ``cuda_bf16`` default to this machine's."""
    amp = str(amp).lower()
    if amp not in AMP_CHOICES:
        raise ValueError(f"amp must be auto, bf16 or off, got {amp!r}")
    if device.type == "cuda":
        native = cuda_bf16_supported() if cuda_bf16 is None else cuda_bf16
        where = "this GPU"
    else:
        cpu = cpu_info() if cpu is None else cpu
        native = cpu.native_bf16
        where = f"this CPU, {cpu.model},"
    has = f"{where} has native bf16" if native else f"{where} has no native bf16"
    if amp in AMP_OFF:
        return Precision(False, f"amp={amp}")
    if amp in AMP_ON:
        warning = "" if native else f"{has}; bf16 autocast may be many times slower than fp32"
        return Precision(True, f"amp={amp}", warning)
    return Precision(native, f"amp=auto: {has}")


def pick_device(name: str = "auto") -> torch.device:
    """``auto``: the GPU when there is one, else the CPU; any other name as given (``cuda:1``, ``cpu``)."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def threads_from_env(default: int = 1) -> int:
    """The thread count asked for by ``$RNNSEARCH_THREADS`` (a positive integer), else ``default``."""
    try:
        n = int(os.environ.get("RNNSEARCH_THREADS", "").strip() or default)
    except ValueError:
        return default
    return max(1, n)
