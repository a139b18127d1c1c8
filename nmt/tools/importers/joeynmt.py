"""Import a JoeyNMT 2.x recurrent model: ``python -m nmt import joeynmt MODEL_DIR --out NAME.pt``.

A JoeyNMT model folder holds ``config.yaml``, ``src_vocab.txt``, ``trg_vocab.txt`` (one token a line;
``<unk> <pad> <s> </s>`` = ids 0-3) and ``best.ckpt`` / ``N.ckpt`` (``torch.save`` of a dict, the
weights under ``model_state``). Everything is read without running code: the checkpoint with
``torch.load(weights_only=True)``, the config by :mod:`nmt.tools.importers.yaml_subset`.

JoeyNMT's ``RecurrentDecoder`` (joeynmt/decoders.py, 2.3.0) is Luong-shaped, so the weights map onto
:class:`nmt.models.luong.LuongNMT` (n = decoder units = the bidirectional encoder's 2 × units):

    h_t = RNN(h_{t-1}, [E y_{t-1}; h̃_{t-1}])      decoder.rnn (input feeding; GRU or LSTM, L layers)
    bahdanau: e_ts = vᵀ tanh(W_q h_t + W_k h̄_s)   = our "concat" score, W_a = [W_q, W_k], v_a = v
    luong:    e_ts = h_tᵀ W_k h̄_s                   = our "general" score, W_a = W_k
    h̃_t = tanh(W [h_t; c_t] + b)                  att_vector_layer: query first; ours reads [c_t; h_t],
                                                    so W's two column blocks swap places
    p(y_t) = softmax(W_o h̃_t)                      output_layer has no bias: our W_s gets b = 0
    h_0 = c_0 = tanh(W_b [→h_S; ←h_1] + b_b)        bridge_layer, every layer (LuongConfig.bridge="learned")

Vocabularies: JoeyNMT puts ``<unk>`` at 0 and ``<pad>`` at 1, this project the other way round, so
rows 0 and 1 of both embeddings and of the output layer swap places (an exact permutation).
Tokenisation: JoeyNMT splits its input at single spaces after an optional Moses pre-tokeniser and
lower-casing; ``lowercase`` is taken from the config, and with ``pretokenizer: none`` the text the
model read was tokenised before JoeyNMT saw it, by what only its trainer knows: ``--split moses``
(default; this app's Moses tokeniser) or ``--split spaces`` (the text was used as it is).
``level: bpe`` with ``tokenizer_type: subword-nmt``: the codes file (copied by JoeyNMT into the model
folder) is stored in the checkpoint and applied as JoeyNMT does (:mod:`nmt.text.subword_bpe`).

Refused, in one line saying what and why: Transformers, unidirectional encoders, sizes this model
cannot hold (2 × encoder units ≠ decoder units, different source and target embedding sizes or layer
counts), ``init_hidden`` other than ``bridge``, activations other than tanh, scaled embeddings,
character levels, sentencepiece subwords, JoeyNMT's Moses pre-tokeniser (it escapes HTML), normalisation, other
special symbols, language tags, any option or weight name the importer does not know, and shapes
that do not fit.
"""

from __future__ import annotations

import argparse
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from nmt.decoding.toolkit import SearchRules
from nmt.models import checkpoint
from nmt.models.luong import LuongConfig, LuongNMT
from nmt.text.subword_bpe import check_codes
from nmt.text.vocab import Vocab
from nmt.tools.importers import bounded, joeynmt_files
from nmt.tools.importers import joeynmt_config as jc

TOOLKIT = "joeynmt"


class Refused(bounded.Refused):
    """A JoeyNMT model this importer will not convert; the message says what and why, in one line."""


def search_rules(config: dict[str, Any]) -> SearchRules:
    """JoeyNMT 2.3's search rules for a model of this config (its ``testing`` section, else JoeyNMT's defaults,
    joeynmt/config.py ``parse_test_args``): length limit int(1.5 · source ids incl. ``</s>``) when
    ``max_output_length`` is -1 (joeynmt/search.py ``search``), else that number; ``</s>`` never at a step below
    ``min_output_length`` (1), ``<s>`` and ``<pad>`` never written (``<unk>`` neither when ``generate_unk`` is
    false) (joeynmt/search.py ``recurrent_greedy``, ``beam_search``); its beam with the GNMT penalty when
    ``beam_alpha`` > 0 (default -1: none)."""
    test = config.get("testing") if isinstance(config.get("testing"), dict) else {}
    limit, least, alpha = test.get("max_output_length", -1), test.get("min_output_length", 1), test.get("beam_alpha",
                                                                                                       -1)
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (limit, least, alpha)):
        raise Refused("config.yaml: testing.max_output_length, min_output_length and beam_alpha must be numbers")
    never = ["<s>", "<pad>"] + ([] if test.get("generate_unk", True) is not False else ["<unk>"])
    fixed = limit > 0
    return SearchRules(toolkit="joeynmt 2.3", ratio=0.0 if fixed else 1.5, plus=float(limit) if fixed else 0.0,
                       cap=None, src_eos=True, min_len=int(least), never_write=tuple(never), beam="joeynmt",
                       length_penalty="gnmt" if alpha > 0 else "none", alpha=float(alpha),
                       source="joeynmt/search.py search, recurrent_greedy, beam_search; joeynmt/config.py "
                              "parse_test_args")


def max_output_length(n_src: int) -> int:
    """JoeyNMT's default output limit (``max_output_length: -1``, one sentence a batch) for a source of
    ``n_src`` ids including ``</s>``: int(1.5 · n_src) steps, ``</s>`` included (joeynmt/search.py)."""
    return int(n_src * 1.5)


@dataclass
class ModelDir:
    """What a JoeyNMT model folder holds, read without running any of it."""

    config: dict[str, Any]
    src_vocab: list[str]
    trg_vocab: list[str]
    state: dict[str, torch.Tensor]
    ckpt_name: str
    steps: int | None
    files: dict[str, str]  # file name → sha256


def sha256(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with bounded.open_bytes(path, bounded.MAX_CHECKPOINT) as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_model_dir(folder: str | Path, ckpt: str | None = None) -> ModelDir:
    """Config, vocabularies and weights of a JoeyNMT model folder (``ckpt``: a checkpoint other than
    ``best.ckpt``). The checkpoint is loaded with ``weights_only=True``: a file that would need to run
    pickled code to load is refused without running it."""
    folder = Path(folder)
    config, src_words, trg_words, ckpt_path = joeynmt_files.read_text_files(folder, ckpt)
    paths = {name: folder / name for name in joeynmt_files.TEXT_FILES}
    raw = _load_weights_only(ckpt_path)
    state = raw.get("model_state") if isinstance(raw, dict) else None
    if not isinstance(state, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                              for k, v in state.items()):
        raise Refused(f"{ckpt_path.name}: no model_state table of named tensors (not a JoeyNMT checkpoint)")
    files = {name: sha256(p) for name, p in paths.items()} | {ckpt_path.name: sha256(ckpt_path)}
    steps = raw.get("steps")
    return ModelDir(config, src_words, trg_words, state,
                    ckpt_path.name, steps if isinstance(steps, int) else None, files)


def _load_weights_only(path: Path) -> Any:
    """``torch.load(path, weights_only=True)``; anything that needs more is refused in one line."""
    try:
        with bounded.open_bytes(path, bounded.MAX_CHECKPOINT) as f:
            return torch.load(f, map_location="cpu", weights_only=True)
    except (FileNotFoundError, bounded.FileRefused):
        raise
    except Exception as err:  # UnpicklingError for a pickled callable; zip errors for damage
        if "GLOBAL" in str(err) or "weights_only" in str(err):
            raise Refused(f"{path.name} holds objects that only running code from the file could load; "
                          "it is not loaded unsafely") from None
        raise Refused(f"{path.name} is not a readable PyTorch checkpoint ({type(err).__name__})") from None


# ----------------------------------------------------------------------------------------------
# Weights: JoeyNMT's names and shapes → LuongNMT's
# ----------------------------------------------------------------------------------------------


def _swap_unk_pad(t: torch.Tensor) -> torch.Tensor:
    """Rows 0 (JoeyNMT's <unk>) and 1 (<pad>) swapped: this project's <pad> = 0, <unk> = 1."""
    perm = torch.arange(t.shape[0])
    perm[0], perm[1] = 1, 0
    return t.index_select(0, perm)


def expected_names(cfg: LuongConfig, attention: str) -> set[str]:
    """The weight names a JoeyNMT model of these sizes has (tied weights appear under both names)."""
    names = {"src_embed.lut.weight", "trg_embed.lut.weight", "decoder.att_vector_layer.weight",
             "decoder.att_vector_layer.bias", "decoder.output_layer.weight", "decoder.bridge_layer.weight",
             "decoder.bridge_layer.bias", "decoder.attention.key_layer.weight"}
    if attention == "bahdanau":
        names |= {"decoder.attention.query_layer.weight", "decoder.attention.energy_layer.weight"}
    for k in range(cfg.layers):
        for w in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            names |= {f"encoder.rnn.{w}_l{k}", f"encoder.rnn.{w}_l{k}_reverse", f"decoder.rnn.{w}_l{k}"}
    return names


def map_weights(state: dict[str, torch.Tensor], cfg: LuongConfig, attention: str) -> dict[str, torch.Tensor]:
    """LuongNMT's state dict from JoeyNMT's ``model_state`` (every name accounted for, fp32)."""
    unknown = sorted(set(state) - expected_names(cfg, attention))
    missing = sorted(expected_names(cfg, attention) - set(state))
    if unknown or missing:
        what = (f"unknown weight {bounded.short(unknown[0], 80)}" if unknown
                    else f"no weight {bounded.short(missing[0], 80)}")
        raise Refused(f"model_state: {what} (the config says a {cfg.layers}-layer {cfg.cell} with "
                      f"{attention} attention; only JoeyNMT 2.x recurrent models are mapped)")
    s = {k: v.detach().float() for k, v in state.items()}
    n = cfg.hidden_dim
    out = {"src_embed.weight": _swap_unk_pad(s["src_embed.lut.weight"]),
           "tgt_embed.weight": _swap_unk_pad(s["trg_embed.lut.weight"]),
           "W_s.weight": _swap_unk_pad(s["decoder.output_layer.weight"]),
           "W_b.weight": s["decoder.bridge_layer.weight"], "W_b.bias": s["decoder.bridge_layer.bias"],
           "W_c.bias": s["decoder.att_vector_layer.bias"]}
    out["W_s.bias"] = torch.zeros(out["W_s.weight"].shape[0])  # JoeyNMT's output layer has no bias
    w = s["decoder.att_vector_layer.weight"]  # (n, n + n) over [h_t; c_t]
    if tuple(w.shape) != (n, 2 * n):
        raise Refused(f"model_state: att_vector_layer is {list(w.shape)}, not [{n}, {2 * n}] as the config says")
    out["W_c.weight"] = torch.cat([w[:, n:], w[:, :n]], 1)  # (n, 2n) over [c_t; h_t]
    if attention == "bahdanau":  # vᵀ tanh(W_q h_t + W_k h̄_s) = v_aᵀ tanh(W_a [h_t; h̄_s])
        out["attention.W_a.weight"] = torch.cat([s["decoder.attention.query_layer.weight"],
                                                 s["decoder.attention.key_layer.weight"]], 1)  # (n, 2n)
        out["attention.v_a.weight"] = s["decoder.attention.energy_layer.weight"]  # (1, n)
    else:  # h_tᵀ (W_k h̄_s)
        out["attention.W_a.weight"] = s["decoder.attention.key_layer.weight"]  # (n, n)
    for k in range(cfg.layers):
        for w_name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            for suffix in ("", "_reverse"):
                out[f"encoder.{w_name}_l{k}{suffix}"] = s[f"encoder.rnn.{w_name}_l{k}{suffix}"]
            out[f"cells.{k}.{w_name}"] = s[f"decoder.rnn.{w_name}_l{k}"]
    return out


def build(md: ModelDir) -> tuple[LuongNMT, Vocab, Vocab]:
    """The LuongNMT model and vocabularies of a JoeyNMT model folder's contents."""
    try:
        cfg = jc.luong_config(md.config, len(md.src_vocab), len(md.trg_vocab))
    except ValueError as err:
        raise Refused(f"config.yaml: {err}") from None
    vocabs = []
    for side, words in (("src", md.src_vocab), ("trg", md.trg_vocab)):
        if tuple(words[:4]) != jc.JOEY_SPECIALS:
            raise Refused(f"{side}_vocab.txt starts with {bounded.short(words[:4], 60)}, not JoeyNMT's default "
                          f"{list(jc.JOEY_SPECIALS)}")
        rows = md.state.get(f"{side}_embed.lut.weight")
        if rows is not None and rows.ndim == 2 and rows.shape[0] != len(words):
            raise Refused(f"{side}_vocab.txt has {len(words)} tokens but the checkpoint's embedding {rows.shape[0]}")
        try:
            vocabs.append(Vocab([words[1], words[0], *words[2:]]))
        except ValueError as err:
            raise Refused(f"{side}_vocab.txt: {err}") from None
    try:
        weights = map_weights(md.state, cfg, md.config["model"]["decoder"]["attention"])
    except (RuntimeError, IndexError) as err:  # torch.cat / row swaps of tensors whose shapes do not fit
        raise Refused(f"model_state: weights whose shapes do not fit each other ({type(err).__name__})") from None
    model = bounded.load_checked(cfg, weights, Refused("model_state does not fit the sizes in config.yaml"))
    return model, vocabs[0], vocabs[1]



def _bpe_record(folder: Path, name: str, separator: str) -> dict[str, Any]:
    """The checkpoint's record of a BPE model's pieces (:mod:`nmt.text.subword`): the codes file JoeyNMT copied
    into its model folder, checked by :func:`nmt.text.subword_bpe.check_codes`; JoeyNMT restricts the pieces
    to those its vocabulary knows (``set_vocab``), and so does the app."""
    path = folder / name
    if not os.path.lexists(path):
        raise Refused(f"{folder.name}: no {name} (the BPE codes config.yaml names; JoeyNMT copies them into "
                      "the model folder)")
    try:
        codes = bounded.read_text(path, bounded.MAX_CODES)
        check_codes(codes)
    except (UnicodeDecodeError, ValueError) as err:
        raise Refused(f"{name}: {err}") from None
    return {"kind": "bpe", "codes": codes, "separator": separator, "restrict_to_vocabulary": True}


def convert(folder: str | Path, ckpt: str | None = None, split: str = "moses") -> dict[str, Any]:
    """The sealed checkpoint dict of a JoeyNMT model folder (:func:`nmt.models.checkpoint.make_checkpoint`)."""
    md = read_model_dir(folder, ckpt)
    model, src_vocab, tgt_vocab = build(md)
    data = md.config["data"]
    try:
        tokens = jc.tokenisation(md.config, split)
        codes = jc.bpe_codes(md.config)
    except ValueError as err:
        raise Refused(f"config.yaml: {err}") from None
    if codes is not None:
        tokens["subword"] = _bpe_record(Path(folder), *codes)
        md.files[codes[0]] = sha256(Path(folder) / codes[0])
    meta = {
        "imported": {"toolkit": TOOLKIT, "version": str(md.config.get("joeynmt_version", "unstated")),
                     "checkpoint": md.ckpt_name, "steps": md.steps, "files_sha256": md.files,
                     "mapped_against": "joeynmt 2.3.0 (RecurrentEncoder, RecurrentDecoder)"},
        "source_config": md.config,
        "tokenisation": tokens,
        "search_rules": search_rules(md.config).to_meta(),
    }
    return checkpoint.make_checkpoint(model, src_vocab, tgt_vocab, data["src"]["lang"], data["trg"]["lang"], meta)


def main(argv: list[str] | None = None) -> int:
    """``python -m nmt import joeynmt MODEL_DIR --out NAME.pt [--ckpt N.ckpt] [--split moses|spaces]``."""
    p = argparse.ArgumentParser(prog="python -m nmt import joeynmt",
                                description="Convert a JoeyNMT 2.x recurrent model folder into a checkpoint of "
                                            "this app (refused in one line when it cannot be converted exactly).")
    p.add_argument("model_dir", type=Path, help="JoeyNMT's model_dir (config.yaml, src/trg_vocab.txt, best.ckpt)")
    p.add_argument("--out", type=Path, required=True, help="the checkpoint to write (NAME.pt)")
    p.add_argument("--ckpt", default=None, help="a checkpoint in the folder other than best.ckpt (e.g. 900.ckpt)")
    p.add_argument("--split", choices=jc.SPLITS, default="moses",
                   help="how the text JoeyNMT read had been tokenised: moses (this app's Moses tokeniser) or "
                        "spaces (raw text, split at spaces); JoeyNMT's own pretokenizer must be none")
    args = p.parse_args(argv)
    ckpt = convert(args.model_dir, args.ckpt, args.split)
    checkpoint.atomic_save(ckpt, args.out)
    lm = checkpoint.load(args.out)  # read back: sealed, intact and buildable
    cfg, version = lm.model.cfg, ckpt["meta"]["imported"]["version"]
    print(f"{args.out}: {cfg.cell.upper()} ×{cfg.layers}, {cfg.score} score, n = {cfg.hidden_dim}, "
          f"vocabularies {len(lm.src_vocab)} / {len(lm.tgt_vocab)}, from {TOOLKIT} {version}")
    return 0
