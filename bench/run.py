"""Benchmarks: training throughput, batched decoding speed, and one interactive step's latency.

    python bench/run.py --what train decode step --data data/multi30k \
        --checkpoint checkpoints/m30k-en-fr-rnnsearch.pt --json bench/results-cpu.json

* train  – target tokens/s of forward + backward + Adam at embeddings 256, hidden 512, 10k-word
           vocabularies, batch 64 (the issue's setting), fp32 and bf16 autocast, on synthetic
           batches shaped like Multi30k (source 13, target 14 tokens incl. ``</s>``);
* decode – sentences/s of greedy and beam-5 decoding of test_2016_flickr, batched;
* step   – latency of one :meth:`nmt.decoding.search.Stepper.step` (what the app does per click);
* app    – server-side time of the app's first view (model load included) and of one "Step" click,
           through Streamlit's AppTest.

Numbers are machine-specific: the JSON records the device, the CPU model and whether it has native
bf16 (bf16 autocast is fast only where it does: see :mod:`nmt.models.device`), thread count and torch version.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nmt.decoding import search as decoding  # noqa: E402
from nmt.models import checkpoint  # noqa: E402
from nmt.models.device import cpu_info  # noqa: E402
from nmt.models.rnnsearch import ModelConfig, RNNSearch, sequence_loss  # noqa: E402
from nmt.text.data import read_parallel  # noqa: E402
from nmt.tools import cli  # noqa: E402


def device_name(dev: torch.device) -> str:
    """The GPU's name, or the CPU's model and the thread count."""
    if dev.type == "cuda":
        return torch.cuda.get_device_name(dev)
    return f"{cpu_info().model} cpu, {torch.get_num_threads()} threads"


def machine() -> dict[str, Any]:
    """What the numbers depend on besides the code: device, CPU model and its bf16 support, torch."""
    cpu = cpu_info()
    return {"cpu": cpu.model, "cpu_native_bf16": cpu.native_bf16, "torch": str(torch.__version__)}


def bench_train(dev: torch.device, batch: int, steps: int, amp: bool, vocab: int = 10000) -> dict[str, Any]:
    """Median target tokens/s of full training steps on synthetic Multi30k-shaped batches."""
    torch.manual_seed(0)
    model = RNNSearch(ModelConfig(vocab, vocab, 256, 512, 512, 256, dropout=0.3)).to(dev)
    opt = torch.optim.Adam(model.parameters(), 1e-3)
    tx, ty = 13, 14
    src = torch.randint(4, vocab, (batch, tx), device=dev)
    src_len = torch.full((batch,), tx, device=dev)
    tgt = torch.randint(4, vocab, (batch, ty), device=dev)
    times = []
    for _ in range(steps + 3):
        if dev.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=amp):
            logits = model(src, src_len, tgt)
        loss = sequence_loss(logits, tgt) / (batch * ty)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if dev.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    med = statistics.median(times[3:])
    return {"batch": batch, "amp_bf16": amp, "target_tokens_per_s": round(batch * ty / med, 1),
            "step_ms": round(med * 1000, 1), "steps_timed": steps}


def bench_decode(ckpt: str, data: str, split: str, limit: int | None) -> dict[str, Any]:
    lm = checkpoint.load(ckpt)
    src, _ = read_parallel(data, split, lm.src_tok.lang, lm.tgt_tok.lang, limit)
    out: dict[str, Any] = {"split": split, "sentences": len(src)}
    for beam in (1, 5):
        decoding.translate(lm, src[:64], beam=beam)  # warm-up
        t0 = time.perf_counter()
        decoding.translate(lm, src, beam=beam)
        dt = time.perf_counter() - t0
        key = "greedy" if beam == 1 else "beam5"
        out[key] = {"seconds": round(dt, 2), "sentences_per_s": round(len(src) / dt, 1)}
    return out


def bench_step(ckpt: str, sentence: str, repeats: int) -> dict[str, Any]:
    lm = checkpoint.load(ckpt)
    t0 = time.perf_counter()
    stepper = decoding.Stepper(lm, sentence)
    encode_ms = (time.perf_counter() - t0) * 1000
    times = []
    for _ in range(repeats):
        if stepper.done:
            stepper = decoding.Stepper(lm, sentence)
        t0 = time.perf_counter()
        stepper.step()
        times.append((time.perf_counter() - t0) * 1000)
    return {"sentence": sentence, "encode_ms": round(encode_ms, 2),
            "step_ms_median": round(statistics.median(times), 2),
            "step_ms_p95": round(sorted(times)[int(0.95 * (len(times) - 1))], 2), "repeats": repeats}


def bench_app(repeats: int = 5) -> dict[str, Any]:
    """Server-side seconds to render the first view of a fresh session, and one Step click."""
    from streamlit.testing.v1 import AppTest

    first, clicks = [], []
    for _ in range(repeats):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
        t0 = time.perf_counter()
        at.run()
        first.append(time.perf_counter() - t0)
        step = next(b for b in at.button if b.key == "sp_btn_step")
        t0 = time.perf_counter()
        step.click().run()
        clicks.append(time.perf_counter() - t0)
        assert not at.exception, at.exception
    return {"first_view_s_cold": round(first[0], 3), "first_view_s_median": round(statistics.median(first), 3),
            "step_click_s_median": round(statistics.median(clicks), 3), "repeats": repeats}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--what", nargs="+", default=["train", "decode", "step"], choices=["train", "decode", "step", "app"])
    p.add_argument("--device", default="cpu")
    p.add_argument("--batch", type=int, nargs="+", default=[64])
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--checkpoint", default=str(ROOT / "checkpoints" / "m30k-en-fr-rnnsearch.pt"))
    p.add_argument("--data", default=str(ROOT / "data" / "multi30k"))
    p.add_argument("--split", default="test_2016_flickr")
    p.add_argument("--limit", type=int, default=None)
    p.add_argument("--json", help="merge the results into this JSON file")
    args = p.parse_args()
    dev = torch.device(args.device)
    res: dict[str, Any] = {"device": device_name(dev), **machine(), "date": time.strftime("%Y-%m-%d")}
    if "train" in args.what:
        res["train"] = [bench_train(dev, b, args.steps, amp) for b in args.batch for amp in (False, True)]
        for r in res["train"]:
            print(f"train batch {r['batch']} bf16={r['amp_bf16']}: {r['target_tokens_per_s']} tok/s", file=sys.stderr)
    if "decode" in args.what:
        res["decode"] = bench_decode(args.checkpoint, args.data, args.split, args.limit)
        print(f"decode: {res['decode']}", file=sys.stderr)
    if "step" in args.what:
        res["step"] = bench_step(args.checkpoint, "A man in a red shirt is riding a bike down the street.", 200)
        print(f"step: {res['step']}", file=sys.stderr)
    if "app" in args.what:
        res["app"] = bench_app()
        print(f"app: {res['app']}", file=sys.stderr)
    if args.json:
        path = Path(args.json)
        old = json.loads(path.read_text()) if path.exists() else {}
        old.update(res)
        path.write_text(json.dumps(old, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(cli.refusing(main))  # a bad checkpoint or corpus: one line, exit status 2
