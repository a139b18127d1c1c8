"""Precision choice: bf16 autocast only where the CPU (or GPU) has it natively, from fake cpuinfo text."""

from __future__ import annotations

import pytest
import torch

from nmt.models import device as nmt_device
from nmt.models.device import CpuInfo, choose_precision, cpu_info, parse_cpuinfo

CPU = torch.device("cpu")
CUDA = torch.device("cuda")

# Trimmed /proc/cpuinfo of the machines in question (two processors each, as the kernel lists them).
SAPPHIRE_RAPIDS = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Platinum 8480+
flags\t\t: fpu vme sse sse2 avx avx2 avx512f avx512bw avx512_bf16 amx_bf16 amx_tile amx_int8

processor\t: 1
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Platinum 8480+
flags\t\t: fpu vme sse sse2 avx avx2 avx512f avx512bw avx512_bf16 amx_bf16 amx_tile amx_int8
"""
EPYC_ROME = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 7B12 64-Core Processor
flags\t\t: fpu vme sse sse2 avx avx2 fma f16c sha_ni
"""
# AVX-512 without its BF16 extension (Skylake-SP): still no native bf16.
SKYLAKE = """processor\t: 0
model name\t: Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz
flags\t\t: fpu sse2 avx avx2 avx512f avx512dq avx512cd avx512bw avx512vl avx512_vnni
"""
GRAVITON3 = """processor\t: 0
BogoMIPS\t: 2100.00
Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp sve i8mm bf16 svebf16
CPU implementer\t: 0x41
"""


def test_parse_cpuinfo_reads_model_and_flags_of_the_first_processor() -> None:
    info = parse_cpuinfo(EPYC_ROME)
    assert info.model == "AMD EPYC 7B12 64-Core Processor"
    assert info.flags == frozenset({"fpu", "vme", "sse", "sse2", "avx", "avx2", "fma", "f16c", "sha_ni"})
    assert parse_cpuinfo(SAPPHIRE_RAPIDS).model == "Intel(R) Xeon(R) Platinum 8480+"


@pytest.mark.parametrize(("text", "native"), [
    (SAPPHIRE_RAPIDS, True),   # AMX-bf16
    (EPYC_ROME, False),        # AVX2 only: bf16 emulated, ~34x slower than fp32
    (SKYLAKE, False),          # AVX-512F but no AVX512_BF16
    (GRAVITON3, True),         # Arm bf16 extension
    ("flags : avx512_bf16\n", True),
])
def test_native_bf16_from_cpuinfo_flags(text: str, native: bool) -> None:
    assert parse_cpuinfo(text).native_bf16 is native


def test_auto_picks_fp32_on_a_cpu_without_native_bf16() -> None:
    p = choose_precision("auto", CPU, parse_cpuinfo(EPYC_ROME))
    assert (p.bf16, p.name, p.warning) == (False, "fp32", "")
    assert p.log_line() == "precision: fp32 (amp=auto: this CPU, AMD EPYC 7B12 64-Core Processor, has no native bf16)"


def test_auto_picks_bf16_on_a_cpu_with_amx() -> None:
    p = choose_precision("auto", CPU, parse_cpuinfo(SAPPHIRE_RAPIDS))
    assert p.log_line() == "precision: bf16 (amp=auto: this CPU, Intel(R) Xeon(R) Platinum 8480+, has native bf16)"


def test_explicit_bf16_is_forced_with_a_warning_where_not_native() -> None:
    p = choose_precision("bf16", CPU, parse_cpuinfo(EPYC_ROME))
    assert p.bf16 and p.name == "bf16"
    assert p.log_line() == ("precision: bf16 (amp=bf16) WARNING: this CPU, AMD EPYC 7B12 64-Core Processor, has no "
                            "native bf16; bf16 autocast may be many times slower than fp32")
    assert choose_precision("bf16", CPU, parse_cpuinfo(SAPPHIRE_RAPIDS)).warning == ""


def test_off_is_fp32_even_where_bf16_is_native() -> None:
    assert choose_precision("off", CPU, parse_cpuinfo(SAPPHIRE_RAPIDS)).bf16 is False


def test_auto_on_cuda_follows_the_gpu_not_the_cpu() -> None:
    cpu = parse_cpuinfo(EPYC_ROME)
    assert choose_precision("auto", CUDA, cpu, cuda_bf16=True).bf16 is True
    assert choose_precision("auto", CUDA, parse_cpuinfo(SAPPHIRE_RAPIDS), cuda_bf16=False).bf16 is False


def test_unknown_amp_value_is_an_error() -> None:
    with pytest.raises(ValueError, match="amp must be"):
        choose_precision("fp8", CPU, parse_cpuinfo(EPYC_ROME))


def test_without_cpuinfo_the_flags_come_from_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nmt_device, "_torch_cpu_info",
                        lambda: CpuInfo("Apple M2", frozenset({"neon", "bf16"})))
    info = cpu_info("")
    assert info == CpuInfo("Apple M2", frozenset({"neon", "bf16"}))
    assert info.native_bf16
    # Arm cpuinfo has flags but no model name: the name comes from torch, the flags stay cpuinfo's
    info = cpu_info(GRAVITON3)
    assert info.model == "Apple M2" and "svebf16" in info.flags and "neon" not in info.flags


def test_torch_capabilities_are_read_as_flags() -> None:
    """On this machine: the torch fallback yields true capabilities only, as flags."""
    info = nmt_device._torch_cpu_info()
    caps = dict(torch.cpu.get_capabilities()) if hasattr(torch.cpu, "get_capabilities") else {}
    assert info.flags == frozenset(k for k, v in caps.items() if v is True)
    assert "architecture" not in info.flags  # a string value, not a feature
