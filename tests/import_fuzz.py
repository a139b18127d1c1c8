"""Hostile model folders for the importers, generated from a seed, and a driver that runs each through
``python -m nmt import`` in-process (``python -m tests.import_fuzz SEED N DIR``; tests/test_import_bounded.py).

Every case starts from a committed fixture (tests/fixtures/joeynmt/model, tests/fixtures/onmt/model) and breaks
one thing: nesting thousands deep, huge sparse files (made by ``truncate``, no disk used), binary vocabularies,
named pipes and sockets where files belong, and values of the wrong type. The driver prints one JSON object:
per case its kind, exit status, output lines and seconds, and how far the process's peak memory rose above
its baseline: the peak after torch and one real import (the cases are written by a forked child, so writing
them does not count). The peak only rises, so every case stayed within the baseline plus the final rise."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import resource
import shutil
import socket
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

FIX = Path(__file__).parent / "fixtures"
JOEY, ONMT_CKPT = FIX / "joeynmt" / "model", FIX / "onmt" / "model" / "model_step_1500.pt"
GB = 1 << 30


def _deep_yaml(depth: int, indent: int) -> str:
    return "\n".join(" " * (indent * i) + f"k{i}:" for i in range(depth)) + "\n"


def _random_bytes(rng: random.Random, n: int) -> bytes:
    return rng.randbytes(n)


def _sparse(path: Path, size: int) -> None:
    path.unlink(missing_ok=True)
    with path.open("wb") as f:
        f.truncate(size)


def _fifo(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def _socket(path: Path) -> None:
    path.unlink(missing_ok=True)
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))
    s.close()


def _nested_list(depth: int) -> list[Any]:
    out: list[Any] = []
    for _ in range(depth):
        out = [out]
    return out


CONFIG_SWAPS = [  # (old line, new line) in the fixture's config.yaml: one option of a wrong type or value
    ('hidden_size: 64', 'hidden_size: "abc"'), ('hidden_size: 64', 'hidden_size: -64'),
    ('hidden_size: 64', 'hidden_size: 100000000'), ('hidden_size: 32', 'hidden_size: [1, 2]'),
    ('num_layers: 1\n        input', 'num_layers: 0\n        input'),
    ('num_layers: 1\n        dropout: 0.1\n    decoder', 'num_layers: 1.5\n        dropout: 0.1\n    decoder'),
    ('embedding_dim: 32', 'embedding_dim: null'), ('embedding_dim: 32', 'embedding_dim: true'),
    ('attention: "bahdanau"', 'attention: [bahdanau]'), ('attention: "bahdanau"', 'attention: 7'),
    ('rnn_type: "gru"', 'rnn_type: 3'), ('type: "recurrent"', 'type: []'), ('lowercase: True', 'lowercase: "maybe"'),
    ('lang: "en"', 'lang: [en]'), ('level: "word"', 'level: 5'), ('init_hidden: "bridge"', 'init_hidden: 1'),
    ('input_feeding: True', 'input_feeding: "x"'), ('model:\n', 'model: 5\nmodel2:\n'),
    ('data:\n', 'data: []\ndata2:\n'),
    ('    src:\n', '    src: "x"\n    src2:\n'), ('    encoder:\n', '    encoder: 1\n    encoder2:\n'),
    ('joeynmt_version: "2.3.0"', 'joeynmt_version: [2, 3]'), ('bidirectional: True', 'bidirectional: "yes please"'),
    ('embeddings:\n            embedding_dim: 32\n        hidden_size: 32',
     'embeddings: 32\n        hidden_size: 32'),
]


def _joey_case(rng: random.Random, d: Path) -> str:
    """A JoeyNMT folder in ``d`` with one hostile change; returns its kind."""
    shutil.copytree(JOEY, d, symlinks=True, ignore=shutil.ignore_patterns("best.ckpt"))
    (d / "best.ckpt").symlink_to(JOEY.resolve() / "best.ckpt")
    kind = rng.choice(["deep_config", "deep_config_flow", "sparse", "binary_config", "binary_vocab", "nul_vocab",
                       "long_word", "fifo", "socket", "dir", "wrong_type", "vocab_specials", "vocab_count",
                       "ckpt_object", "ckpt_bytes", "no_file"])
    name = rng.choice(["config.yaml", "src_vocab.txt", "trg_vocab.txt", "best.ckpt"])
    if kind == "deep_config":
        depth = rng.choice([17, 100, 400, 1000, 3000])
        (d / "config.yaml").write_text((d / "config.yaml").read_text() + _deep_yaml(depth, rng.choice([1, 2, 4])))
    elif kind == "deep_config_flow":
        depth = rng.choice([3, 50, 3000])
        (d / "config.yaml").write_text(f"model: {'[' * depth}1{']' * depth}\n" if rng.random() < 0.5 else
                                       f"model: {'{a: ' * depth}1{'}' * depth}\n")
    elif kind == "sparse":
        _sparse(d / name, rng.choice([5 << 20, GB, 2 * GB, 3 * GB]))
    elif kind == "binary_config":
        (d / "config.yaml").write_bytes(_random_bytes(rng, rng.choice([10, 1000, 50_000])))
    elif kind == "binary_vocab":
        (d / rng.choice(["src_vocab.txt", "trg_vocab.txt"])).write_bytes(_random_bytes(rng, rng.choice([10, 20_000])))
    elif kind == "nul_vocab":
        (d / rng.choice(["src_vocab.txt", "trg_vocab.txt"])).write_bytes(b"\0" * rng.choice([1, 1000, 3_000_000]))
    elif kind == "long_word":
        (d / "trg_vocab.txt").write_text("x" * rng.choice([1000, 3_000_000]) + "\n")
    elif kind in ("fifo", "socket"):
        (_fifo if kind == "fifo" else _socket)(d / name)
    elif kind == "dir":
        (d / name).unlink()
        (d / name).mkdir()
    elif kind == "wrong_type":
        old, new = rng.choice(CONFIG_SWAPS)
        text = (d / "config.yaml").read_text()
        assert old in text, old
        (d / "config.yaml").write_text(text.replace(old, new, 1))
    elif kind == "vocab_specials":
        words = (d / "src_vocab.txt").read_text().split("\n")
        rng.shuffle(words)
        (d / "src_vocab.txt").write_text("\n".join(words))
    elif kind == "vocab_count":
        words = (d / "trg_vocab.txt").read_text().split("\n")
        extra = "".join(f"w{k}\n" for k in range(rng.choice([0, 50])))
        (d / "trg_vocab.txt").write_text("\n".join(words[: rng.choice([4, 100, len(words) - 5])]) + "\n" + extra)
    elif kind == "ckpt_object":
        (d / "best.ckpt").unlink()
        _save_deep(rng.choice([[1, 2], {"model_state": [1]}, {"model_state": {"a": "b"}}, {"model_state": {}},
                               {"model_state": {"x": _nested_list(3000)}}, {"model_state": {1: torch.zeros(2)}},
                               {"model_state": {"src_embed.lut.weight": torch.zeros(3)}}, "text", None]),
                   d / "best.ckpt")
    elif kind == "ckpt_bytes":
        (d / "best.ckpt").unlink()
        real = (JOEY / "best.ckpt").read_bytes()
        (d / "best.ckpt").write_bytes(rng.choice([_random_bytes(rng, 5000), real[: rng.randint(10, len(real) - 10)],
                                                  b"\0" * 100_000]))
    else:
        (d / name).unlink()
    return f"joeynmt:{kind}" + (f":{name}" if kind in ("sparse", "fifo", "socket", "dir", "no_file") else "")


def _save_deep(obj: Any, path: Path) -> None:
    """``torch.save`` of values nested thousands deep (pickle writes them recursively)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)
    try:
        torch.save(obj, path)
    finally:
        sys.setrecursionlimit(limit)


def _onmt_mutations(raw: dict[str, Any]) -> list[Callable[[dict[str, Any]], Any]]:
    """Ways to break a loaded OpenNMT-py checkpoint dict (each returns what to save)."""
    def opt(**kw: Any) -> Callable[[dict[str, Any]], Any]:
        def f(ck: dict[str, Any]) -> Any:
            o = argparse.Namespace(**vars(ck["opt"]))
            for k, v in kw.items():
                setattr(o, k, v)
            return {**ck, "opt": o}
        return f

    def part(key: str, value: Any) -> Callable[[dict[str, Any]], Any]:
        return lambda ck: {**ck, key: value}

    big = "<unk>\0" + "x" * 3_000_000
    return [
        opt(data={"corpus": {"path_src": _nested_list(3000)}}), opt(transforms=_nested_list(3000)),
        opt(enc_hid_size="abc"), opt(dec_hid_size=-2, enc_hid_size=-2), opt(enc_layers=0, dec_layers=0),
        opt(rnn_type=5), opt(global_attention=["dot"]), opt(src_word_vec_size=10**9, tgt_word_vec_size=10**9),
        opt(enc_hid_size=10**8, dec_hid_size=10**8), opt(encoder_type=None), opt(input_feed="x"),
        opt(**{"x" * 100_000: 1}), opt(brnn=b"bytes"), opt(transforms={1, "a"}), opt(copy_attn="y" * 1_000_000),
        part("vocab", {"src": [big], "tgt": ["a"]}), part("vocab", {"src": list(range(10)), "tgt": []}),
        part("vocab", []), part("vocab", {"src": ["<unk>", "<blank>", "<s>", "</s>"], "tgt": raw["vocab"]["tgt"]}),
        part("model", {"x": 1}), part("model", []), part("generator", {"weight": torch.zeros(2)}),
        part("opt", {"a": 1}), part("opt", _nested_list(3000)),
        lambda ck: {k: v for k, v in ck.items() if k != "generator"}, lambda ck: [ck], lambda ck: None,
    ]


def _onmt_case(rng: random.Random, d: Path, raw: dict[str, Any]) -> tuple[str, Path]:
    """An OpenNMT-py checkpoint in ``d`` with one hostile change; returns its kind and path."""
    d.mkdir(parents=True)
    path = d / "model_step_1500.pt"
    kind = rng.choice(["opt", "opt", "opt", "sparse", "fifo", "socket", "dir", "bytes", "spm"])
    if kind == "opt":
        muts = _onmt_mutations(raw)
        k = rng.randrange(len(muts))
        _save_deep(muts[k](raw), path)
        kind = f"opt{k}"
    elif kind == "sparse":
        _sparse(path, rng.choice([GB, 3 * GB]))
    elif kind in ("fifo", "socket"):
        (_fifo if kind == "fifo" else _socket)(path)
    elif kind == "dir":
        path.mkdir()
    elif kind == "bytes":
        path.write_bytes(_random_bytes(rng, 3000))
    else:  # a sentencepiece transform whose model beside the checkpoint is a pipe, a huge file or random bytes
        o = argparse.Namespace(**vars(raw["opt"]))
        o.transforms, o.src_subword_model, o.tgt_subword_model = ["sentencepiece"], "spm.model", "spm.model"
        torch.save({**raw, "opt": o}, path)
        spm = rng.choice([_fifo, lambda p: _sparse(p, 2 * GB), lambda p: p.write_bytes(_random_bytes(rng, 500))])
        spm(d / "spm.model")
    return f"onmt:{kind}", path


def run_one(argv: list[str]) -> tuple[int, list[str], float]:
    """``python -m nmt`` in this process: (exit status, output lines, seconds)."""
    from nmt.__main__ import main

    out, err, saved = io.StringIO(), io.StringIO(), list(sys.argv)
    t0 = time.perf_counter()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:  # a traceback: the case fails, with it as its output
        code, err = -1, io.StringIO(traceback.format_exc())
    finally:
        sys.argv = saved
    return code, (out.getvalue() + err.getvalue()).splitlines(), time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.import_fuzz SEED N DIR``: N cases from SEED in DIR; one JSON object on stdout."""
    seed, n, root = int((argv or sys.argv[1:])[0]), int((argv or sys.argv[1:])[1]), Path((argv or sys.argv[1:])[2])
    torch.set_num_threads(1)
    pid = os.fork()  # the cases are written by a child: what writing them takes is not counted as reading them
    if pid == 0:
        with torch.serialization.safe_globals([argparse.Namespace]):
            raw = torch.load(ONMT_CKPT, weights_only=True)
        rng, todo = random.Random(seed), []
        for k in range(n):
            d = root / f"case{k}"
            if rng.random() < 0.6:
                todo.append((_joey_case(rng, d), ["import", "joeynmt", str(d), "--out", str(root / "out.pt")]))
            else:
                kind, src = _onmt_case(rng, d, raw)
                todo.append((kind, ["import", "onmt", str(src), "--out", str(root / "out.pt")]))
        (root / "cases.json").write_text(json.dumps(todo))
        os._exit(0)
    os.waitpid(pid, 0)
    run_one(["import", "joeynmt", str(JOEY), "--out", str(root / "warm.pt")])  # one real import: the baseline
    base = peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cases = []
    for kind, argv_k in json.loads((root / "cases.json").read_text()):
        code, lines, secs = run_one(argv_k)
        now = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        cases.append({"kind": kind, "rc": code, "lines": lines, "seconds": round(secs, 3),
                      "peak_rise_mb": round((now - peak) / 1024, 1)})
        peak = now
    print(json.dumps({"cases": cases, "baseline_mb": base / 1024, "peak_above_baseline_mb": (peak - base) / 1024}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
