"""Small files whose reading would take gigabytes are refused by ``python -m nmt translate`` in one line,
exit status 2, before anything allocates for them: each kind's peak memory is measured in the child.

The kinds (:mod:`tests.hostile_checkpoints`): the shipped Multi30k RNNsearch with an embedding size of
20,000 and zero-stride weights, its weights digest and seal made again (the weights claim 1 GB, the file
holds 0.2 MB; building the model took 9.5 GB before the checks came first); weights that are views of
one shared storage; a vocabulary and a meta entry that refer 2,000 times to one 1 MB string (2 GB once
copied, which the digest did: 6.4 GB).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from nmt.models import checkpoint, storage
from nmt.models.checkpoint import CheckpointError
from tests import hostile_checkpoints as hc

ROOT = Path(__file__).resolve().parent.parent
PEAK_LIMIT_KB = 1_000_000  # 1 GB, the Bar (the interpreter and torch alone: about 0.25 GB)


# The child records its own peak (VmHWM of /proc/self/status) as it exits. Not wait4's ru_maxrss: Linux
# keeps a process's high-water mark across exec, so a child started from a large pytest worker (vfork,
# then exec) reports the worker's size, not its own.
PEAK_WRAPPER = (
    "import atexit, runpy, sys\n"
    "out = sys.argv[1]\n"
    "def _peak():\n"
    "    hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]\n"
    "    open(out, 'w').write(hwm)\n"
    "atexit.register(_peak)\n"
    "sys.argv = ['python -m nmt', *sys.argv[2:]]\n"
    "runpy.run_module('nmt', run_name='__main__', alter_sys=True)\n"
)


def run_measured(args: list[str], stdin: str, tmp: Path) -> tuple[int, str, str, int]:
    """``python -m nmt ARGS`` in a child: (exit status, stdout, stderr, the child's peak resident memory in KB)."""
    (tmp / "in.txt").write_text(stdin)
    peak = tmp / "peak.txt"
    with open(tmp / "in.txt") as fin, open(tmp / "out.txt", "w") as fout, open(tmp / "err.txt", "w") as ferr:
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        proc = subprocess.run([sys.executable, "-c", PEAK_WRAPPER, str(peak), *args], stdin=fin, stdout=fout,
                              stderr=ferr, cwd=ROOT, env=env, check=False)
    return proc.returncode, (tmp / "out.txt").read_text(), (tmp / "err.txt").read_text(), int(peak.read_text())


def _zero_stride(tmp: Path) -> Path:
    return hc.zero_stride_copy(ROOT / "checkpoints" / "m30k-en-fr-rnnsearch.pt", tmp / "zero-stride.pt")


BOMBS = {
    "zero-stride.pt": (_zero_stride, "is not a usable checkpoint: its weight encoder.w_in repeats its stored numbers "
                                     "(strides [0, 0, 0] for shape [2, 20000, 1536]), which would take memory the "
                                     "file does not hold"),
    "overlapping.pt": (lambda tmp: hc.overlapping_copy(hc.tiny_checkpoint(), tmp / "overlapping.pt"),
                       "is not a usable checkpoint: its weight encoder.b_in shares its stored numbers with its weight "
                       "encoder.w_in, which would take memory the file does not hold"),
    "vocab-refs.pt": (lambda tmp: hc.repeated_string_copy(hc.tiny_checkpoint(), tmp / "vocab-refs.pt", "src_vocab"),
                      "is not a usable checkpoint: its src_vocab holds the word 'xxxxxxxxxxxxxxxxxxxx' more than once"),
    "meta-refs.pt": (lambda tmp: hc.repeated_string_copy(hc.tiny_checkpoint(), tmp / "meta-refs.pt", "meta"),
                     "is not a usable checkpoint: it holds more than 64 MB of text and numbers besides its weights "
                     "(or refers to one part of it many times)"),
}


@pytest.mark.parametrize("kind", sorted(BOMBS))
def test_translate_refuses_a_memory_bomb_in_one_line_within_1_gb(kind: str, tmp_path: Path) -> None:
    make, why = BOMBS[kind]
    path = make(tmp_path)
    assert path.stat().st_size < 1_100_000  # small files, all of them
    rc, out, err, peak_kb = run_measured(["translate", "--checkpoint", str(path)], "a dog .\n", tmp_path)
    assert (rc, out, err) == (2, "", f"error: {kind} {why}\n")
    assert peak_kb < PEAK_LIMIT_KB, f"{kind}: peak {peak_kb / 1e6:.2f} GB"


def test_the_zero_stride_copy_is_sealed_as_the_seal_tool_would(tmp_path: Path) -> None:
    """The Bar's file is no damaged file: its seal and weights digest are right; only its weights' strides
    (a loader that copied them would hold 1 GB) are what refuses it."""
    import torch

    raw = torch.load(_zero_stride(tmp_path), weights_only=True)
    assert raw[checkpoint.seal.SEAL] == checkpoint.seal.content_digest(raw)  # it leaves the weights out
    assert raw["model"]["encoder.embed.weight"].stride() == (0, 0)
    assert raw["model"]["encoder.embed.weight"].untyped_storage().nbytes() == 2  # one fp16 zero


def test_a_config_over_the_size_cap_is_refused_before_a_model_is_built(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The cap is set at, then one byte below, the fp32 bytes of the tiny model's stored (fp32) weights."""
    path = tmp_path / "tiny.pt"
    checkpoint.atomic_save(hc.tiny_checkpoint(), path)
    need = 4 * sum(v.numel() for v in checkpoint.read_checkpoint(path)["model"].values())
    monkeypatch.setenv(storage.MODEL_BYTES_ENV, str(need))
    checkpoint.load(path)  # exactly at the cap: loads
    monkeypatch.setenv(storage.MODEL_BYTES_ENV, str(need - 1))
    with pytest.raises(CheckpointError, match=r"^tiny.pt does not hold a model this program can build: its config "
                                              r"asks for 0.003 MB of weights, more than the 0.003 MB allowed"):
        checkpoint.load(path)
