"""Import an OpenNMT-py 3.x recurrent model: ``python -m nmt import onmt CKPT --out NAME.pt``.

An OpenNMT-py 3 checkpoint (``*_step_N.pt``, onmt/models/model_saver.py) is a ``torch.save`` of a dict:
``model`` and ``generator`` (named tensors), ``vocab`` (``src`` and ``tgt`` as plain lists of tokens,
``data_task``, ``decoder_start_token``), ``opt`` (an ``argparse.Namespace``) and ``optim``. It is read
with ``torch.load(weights_only=True)`` with exactly that one class allowed (``safe_globals``, for this
call only): a file that needs anything more to load is refused without running it.

OpenNMT-py's ``InputFeedRNNDecoder`` / ``StdRNNDecoder`` (onmt/decoders/decoder.py, 3.5.1) are
Luong-shaped, so the weights map onto :class:`nmt.models.luong.LuongNMT` (n = hidden size, n/2 a direction):

    h̄_s: brnn encoder (nn.LSTM/GRU, bidirectional); the source has no </s> (LuongConfig.src_eos=False)
    h_0 = [→h_S; ←h_1] of encoder layer l            no bridge: OpenNMT-py's _fix_enc_hidden = ours
    h_0 = ReLU(W x + b) over OpenNMT-py's rows x     -bridge: encoder.bridge.0 (h), .1 (LSTM cells)
    h_t = RNN(h_{t-1}, [E y_{t-1}; h̃_{t-1}])         decoder.rnn.layers.k (StackedLSTM/GRU; input_feed 1)
                                                      or decoder.rnn.*_lk (nn.LSTM/GRU; input_feed 0)
    dot:     e_ts = h_tᵀ h̄_s
    general: e_ts = (W_in h_t)ᵀ h̄_s                 = h_tᵀ W_a h̄_s with W_a = W_inᵀ (linear_in)
    mlp:     e_ts = vᵀ tanh(W_q h_t + b_q + W_c h̄_s) = our concat score with its bias (score_bias):
                                                      W_a = [W_q, W_c], b_a = b_q, v_a = v
    h̃_t = tanh(W_out [c_t; h_t])                    linear_out, context first as ours; no bias (dot, general)
    h̃_t = W_out [c_t; h_t] + b                       mlp: a bias and no tanh (output_tanh=False)
    p(y_t) = softmax(W_g h̃_t + b_g)                  generator (nn.Linear); the translator's log_softmax

Dropouts (embeddings, between stacked layers, on h̃_t) only act in training. Vocabularies: OpenNMT-py
puts ``<unk>`` at 0 and ``<blank>`` (its padding) at 1, this project ``<pad>`` at 0 and ``<unk>`` at
1, so rows 0 and 1 of both embeddings and of the generator swap places, and ``<blank>`` is renamed.
Tokenisation: OpenNMT-py splits each line at spaces; the text it read was tokenised before, by what
only its trainer knows: ``--split moses`` (default; this app's Moses tokeniser) or ``--split spaces``.
A model trained with the ``sentencepiece`` transform (one joint model for both sides) gets that model's
bytes in its tokenisation record (:mod:`nmt.text.subword_sentencepiece`): the words become its pieces.

Refused, in one line saying what and why (:mod:`nmt.tools.importers.onmt_opt`): Transformers and other
encoders or decoders, unidirectional encoders, SRU, coverage, copy attention, context gates,
sparsemax, features, position encodings, LoRA or quantised layers, transforms other than sentencepiece
and the training-pair filters, separate source and target sentencepiece models, options OpenNMT-py
3.5.1 does not have, weight names or shapes that do not fit.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import pickle
import warnings
from pathlib import Path
from typing import Any

import torch

from nmt.decoding.toolkit import SearchRules
from nmt.models import checkpoint
from nmt.models.luong import LuongConfig, LuongNMT
from nmt.text import subword_sentencepiece
from nmt.text.tokenize import SUPPORTED_LANGS
from nmt.text.vocab import PAD, Vocab
from nmt.tools.importers import bounded
from nmt.tools.importers import onmt_opt as oo

TOOLKIT = "opennmt-py"
MAPPED_AGAINST = "opennmt-py 3.5.1 (RNNEncoder brnn, InputFeedRNNDecoder / StdRNNDecoder, GlobalAttention)"


class Refused(bounded.Refused):
    """An OpenNMT-py checkpoint this importer will not convert; the message says what and why, in one line."""


def max_output_length(n_src: int, ratio: float = 1.25, max_length: int = 250) -> int:
    """onmt_translate's output limit (``-max_length`` 250, ``-max_length_ratio`` 1.25, one sentence a batch)
    for a source of ``n_src`` ids including our ``</s>`` (OpenNMT-py's source has none): int(min(max_length,
    S · ratio + 5)) steps, ``</s>`` included (onmt/translate/translator.py ``translate_batch``)."""
    if ratio <= 0:
        return max_length
    return int(min(max_length, (n_src - 1) * ratio + 5))


# onmt_translate's defaults (onmt/opts.py translate_opts): -max_length 250, -max_length_ratio 1.25 (limit
# int(min(250, S · 1.25 + 5)), S the source without </s>: onmt/translate/translator.py translate_batch),
# -min_length 0 (decode_strategy.py ensure_min_length), nothing banned (-ban_unk_token off), -beam_size 5 with
# -length_penalty avg and -alpha 1 (penalties.py length_average; beam_search.py BeamSearchBase). Its training
# options (the checkpoint's opt) do not hold them.
SEARCH_RULES = SearchRules(toolkit="opennmt-py 3.5.1", ratio=1.25, plus=5.0, cap=250, src_eos=False, min_len=0,
                           never_write=(), beam="opennmt-py", length_penalty="avg", alpha=1.0,
                           source="onmt/translate/translator.py translate_batch; onmt/translate/beam_search.py "
                                  "BeamSearchBase.advance, update_finished; onmt/translate/penalties.py")


def sha256(path: Path) -> str:
    """Hex SHA-256 of a file's bytes (a regular file of at most :data:`bounded.MAX_CHECKPOINT` bytes)."""
    h = hashlib.sha256()
    with bounded.open_bytes(path, bounded.MAX_CHECKPOINT) as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def load_weights_only(path: Path) -> Any:
    """``torch.load(path, weights_only=True)`` with ``argparse.Namespace`` (the ``opt``) allowed for this call
    only; anything that needs more is refused in one line, without running it."""
    try:
        with torch.serialization.safe_globals([argparse.Namespace]), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with bounded.open_bytes(path, bounded.MAX_CHECKPOINT) as f:
                return torch.load(f, map_location="cpu", weights_only=True)
    except (FileNotFoundError, bounded.FileRefused):
        raise
    except pickle.UnpicklingError as err:
        if "GLOBAL" in str(err) or "weights_only" in str(err):
            raise Refused(f"{path.name} holds objects that only running code from the file could load; "
                          "it is not loaded unsafely") from None
        raise Refused(f"{path.name} is not a readable PyTorch checkpoint (UnpicklingError)") from None
    except Exception as err:  # zip errors, truncation
        raise Refused(f"{path.name} is not a readable PyTorch checkpoint ({type(err).__name__})") from None


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """The checkpoint's ``model``, ``generator``, ``vocab`` and ``opt`` (the opt as a plain dict)."""
    path = Path(path)
    raw = load_weights_only(path)
    if not isinstance(raw, dict) or not {"model", "generator", "vocab", "opt"} <= set(raw):
        raise Refused(f"{path.name}: no model, generator, vocab and opt (not an OpenNMT-py 3 checkpoint)")
    for part in ("model", "generator"):
        if not isinstance(raw[part], dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                                      for k, v in raw[part].items()):
            raise Refused(f"{path.name}: its {part} is not a table of named tensors (safetensors-only "
                          "checkpoints are not read)")
    if not isinstance(raw["opt"], argparse.Namespace):
        raise Refused(f"{path.name}: its opt is not OpenNMT-py's argparse.Namespace")
    vocab = raw["vocab"]
    if not isinstance(vocab, dict) or not all(isinstance(vocab.get(s), list) for s in ("src", "tgt")):
        raise Refused(f"{path.name}: its vocab has no src and tgt token lists (OpenNMT-py 2 checkpoints are not read)")
    try:
        opt = oo.plain(vars(raw["opt"]))
    except ValueError as err:
        raise Refused(f"{path.name}: {err}") from None
    return {"model": raw["model"], "generator": raw["generator"], "vocab": vocab, "opt": opt}


def _swap_unk_pad(t: torch.Tensor) -> torch.Tensor:
    """Rows 0 (OpenNMT-py's <unk>) and 1 (<blank>) swapped: this project's <pad> = 0, <unk> = 1."""
    perm = torch.arange(t.shape[0])
    perm[0], perm[1] = 1, 0
    return t.index_select(0, perm)


def vocab_of(words: list[Any], side: str) -> Vocab:
    """This project's vocabulary of an OpenNMT-py token list: <unk>/<blank> swapped, <blank> named <pad>."""
    if tuple(words[:4]) != oo.ONMT_SPECIALS or not all(isinstance(w, str) for w in words):
        raise Refused(f"vocab {side} starts with {bounded.short(words[:4], 60)}, not OpenNMT-py's default "
                      f"{list(oo.ONMT_SPECIALS)}")
    try:
        return Vocab([PAD, words[0], *words[2:]])
    except ValueError as err:
        raise Refused(f"vocab {side}: {err}") from None


def expected_names(cfg: LuongConfig, attention: str) -> dict[str, set[str]]:
    """The weight names (``model`` and ``generator``) of an OpenNMT-py RNN model with these options."""
    emb = "embeddings.make_embedding.emb_luts.0.weight"
    names = {f"encoder.{emb}", f"decoder.{emb}", "decoder.attn.linear_out.weight"}
    names |= {"general": {"decoder.attn.linear_in.weight"}, "dot": set(),
              "mlp": {"decoder.attn.linear_context.weight", "decoder.attn.linear_query.weight",
                      "decoder.attn.linear_query.bias", "decoder.attn.v.weight", "decoder.attn.linear_out.bias"}
              }[attention]
    if cfg.bridge == "onmt":
        names |= {f"encoder.bridge.{i}.{w}" for i in range(2 if cfg.cell == "lstm" else 1) for w in ("weight", "bias")}
    for k in range(cfg.layers):
        for w in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            names |= {f"encoder.rnn.{w}_l{k}", f"encoder.rnn.{w}_l{k}_reverse"}
            names.add(f"decoder.rnn.layers.{k}.{w}" if cfg.input_feeding else f"decoder.rnn.{w}_l{k}")
    return {"model": names, "generator": {"weight", "bias"}}


def map_weights(ck: dict[str, Any], cfg: LuongConfig, attention: str) -> dict[str, torch.Tensor]:
    """LuongNMT's state dict from OpenNMT-py's ``model`` and ``generator`` (every name accounted for, fp32)."""
    want = expected_names(cfg, attention)
    for part in ("model", "generator"):
        unknown, missing = sorted(set(ck[part]) - want[part]), sorted(want[part] - set(ck[part]))
        if unknown or missing:
            what = (f"unknown weight {bounded.short(unknown[0], 80)}" if unknown
                    else f"no weight {bounded.short(missing[0], 80)}")
            raise Refused(f"{part}: {what} (the opt says a {cfg.layers}-layer {cfg.cell.upper()} with {attention} "
                          f"attention, input_feed {int(cfg.input_feeding)}, bridge {cfg.bridge == 'onmt'})")
    s = {k: v.detach().float() for k, v in ck["model"].items()}
    g = {k: v.detach().float() for k, v in ck["generator"].items()}
    emb = "embeddings.make_embedding.emb_luts.0.weight"
    out = {"src_embed.weight": _swap_unk_pad(s[f"encoder.{emb}"]),
           "tgt_embed.weight": _swap_unk_pad(s[f"decoder.{emb}"]),
           "W_s.weight": _swap_unk_pad(g["weight"]), "W_s.bias": _swap_unk_pad(g["bias"]),
           "W_c.weight": s["decoder.attn.linear_out.weight"]}  # (n, 2n) over [c_t; h_t], as ours
    out["W_c.bias"] = s.get("decoder.attn.linear_out.bias", torch.zeros(cfg.hidden_dim))  # none for dot, general
    if attention == "general":  # (W_in h_t)ᵀ h̄_s = h_tᵀ W_inᵀ h̄_s
        out["attention.W_a.weight"] = s["decoder.attn.linear_in.weight"].t().contiguous()
    elif attention == "mlp":  # vᵀ tanh(W_q h_t + b_q + W_c h̄_s) = v_aᵀ tanh(W_a [h_t; h̄_s] + b_a)
        out["attention.W_a.weight"] = torch.cat([s["decoder.attn.linear_query.weight"],
                                                 s["decoder.attn.linear_context.weight"]], 1)  # (n, 2n)
        out["attention.W_a.bias"] = s["decoder.attn.linear_query.bias"]
        out["attention.v_a.weight"] = s["decoder.attn.v.weight"]  # (1, n)
    if cfg.bridge == "onmt":
        out["W_b.weight"], out["W_b.bias"] = s["encoder.bridge.0.weight"], s["encoder.bridge.0.bias"]
        if cfg.cell == "lstm":
            out["W_bc.weight"], out["W_bc.bias"] = s["encoder.bridge.1.weight"], s["encoder.bridge.1.bias"]
    for k in range(cfg.layers):
        for w in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            for suffix in ("", "_reverse"):
                out[f"encoder.{w}_l{k}{suffix}"] = s[f"encoder.rnn.{w}_l{k}{suffix}"]
            out[f"cells.{k}.{w}"] = s[f"decoder.rnn.layers.{k}.{w}" if cfg.input_feeding else f"decoder.rnn.{w}_l{k}"]
    return out


def build(ck: dict[str, Any]) -> tuple[LuongNMT, Vocab, Vocab]:
    """The LuongNMT model and vocabularies of an OpenNMT-py checkpoint's contents."""
    src_vocab, tgt_vocab = vocab_of(ck["vocab"]["src"], "src"), vocab_of(ck["vocab"]["tgt"], "tgt")
    try:
        cfg = oo.luong_config(ck["opt"], len(src_vocab), len(tgt_vocab))
    except ValueError as err:
        raise Refused(str(err)) from None
    for side, vocab in (("encoder", src_vocab), ("decoder", tgt_vocab)):
        rows = ck["model"].get(f"{side}.embeddings.make_embedding.emb_luts.0.weight")
        if rows is not None and rows.ndim == 2 and rows.shape[0] != len(vocab):
            raise Refused(f"vocab {side[:3].replace('enc', 'src').replace('dec', 'tgt')} has {len(vocab)} tokens but "
                          f"the {side}'s embedding {rows.shape[0]}")
    try:
        weights = map_weights(ck, cfg, ck["opt"]["global_attention"])
    except (RuntimeError, IndexError) as err:  # torch.cat / row swaps of tensors whose shapes do not fit
        raise Refused(f"model: weights whose shapes do not fit each other ({type(err).__name__})") from None
    model = bounded.load_checked(cfg, weights, Refused("the weights do not fit the sizes in opt"))
    return model, src_vocab, tgt_vocab


def sentencepiece_model(path: Path, opt: dict[str, Any], spm: Path | None) -> tuple[Path, bytes]:
    """The one sentencepiece model of both sides: ``spm``, else the file the opt names (``src_subword_model``,
    ``tgt_subword_model``) looked for beside the checkpoint; two different models are refused."""
    for side in ("src", "tgt"):
        if opt.get(f"{side}_subword_vocab") and opt.get(f"{side}_vocab_threshold", 0) > 0:
            raise Refused(f"opt.{side}_subword_vocab with a threshold: sentencepiece vocabulary restriction is "
                          "not reproduced")
    if spm is None:
        named = {Path(str(opt.get(f"{side}_subword_model") or "")).name for side in ("src", "tgt")}
        files = {path.parent / name for name in named if name}
        if not files or not all(os.path.lexists(f) for f in files):
            raise Refused(f"transform 'sentencepiece': its model {sorted(named)} is not beside {path.name}; give "
                          "it with --spm FILE")
        models = {bounded.read_bytes(f, bounded.MAX_CODES): f for f in files}
        if len(models) != 1:
            raise Refused("transform 'sentencepiece': different source and target models; one joint model is "
                          "mapped (this app's tokenisation record holds one)")
        model, spm = next(iter(models.items()))
    else:
        model = bounded.read_bytes(spm, bounded.MAX_CODES)
    try:
        subword_sentencepiece.SentencePiece(model)
    except ValueError as err:
        raise Refused(f"{spm.name}: {err}") from None
    return spm, model


def convert(path: str | Path, src_lang: str, tgt_lang: str, split: str = "moses",
            spm: Path | None = None) -> dict[str, Any]:
    """The sealed checkpoint dict of an OpenNMT-py checkpoint (:func:`nmt.models.checkpoint.make_checkpoint`);
    ``spm``: the sentencepiece model of a model trained with that transform (default: found beside it)."""
    path = Path(path)
    ck = read_checkpoint(path)
    model, src_vocab, tgt_vocab = build(ck)
    try:
        names = oo.transforms(ck["opt"])
    except ValueError as err:
        raise Refused(str(err)) from None
    if split not in oo.SPLITS:
        raise Refused(f"split {bounded.short(split)}: one of {oo.SPLITS}")
    files = {path.name: sha256(path)}
    tokens: dict[str, Any] = {"level": "word", "lowercase": False, "split": split,
                              "onmt": "the line is split at spaces; no transform changes the text"}
    if "sentencepiece" in names:
        spm_path, spm_model = sentencepiece_model(path, ck["opt"], spm)
        files[spm_path.name] = sha256(spm_path)
        tokens = {"level": "subword", "lowercase": False, "split": split,
                  "subword": subword_sentencepiece.record(spm_model),
                  "onmt": "the line's words, joined by spaces, become pieces by the sentencepiece transform"}
    meta = {
        "imported": {"toolkit": TOOLKIT, "version": "3.x (OpenNMT-py does not record its version; the "
                     "checkpoint has its 3.x layout)", "checkpoint": path.name,
                     "steps": ck["opt"].get("train_steps"), "files_sha256": files,
                     "mapped_against": MAPPED_AGAINST},
        "source_config": ck["opt"],
        "tokenisation": tokens,
        "search_rules": SEARCH_RULES.to_meta(),
    }
    return checkpoint.make_checkpoint(model, src_vocab, tgt_vocab, src_lang, tgt_lang, meta)


def main(argv: list[str] | None = None) -> int:
    """``python -m nmt import onmt CKPT --out NAME.pt --src-lang en --tgt-lang fr [--split moses|spaces]``."""
    p = argparse.ArgumentParser(prog="python -m nmt import onmt",
                                description="Convert an OpenNMT-py 3.x recurrent checkpoint (*_step_N.pt) into a "
                                            "checkpoint of this app (refused in one line when it cannot be "
                                            "converted exactly).")
    p.add_argument("ckpt", type=Path, help="OpenNMT-py's checkpoint (MODEL_step_N.pt)")
    p.add_argument("--out", type=Path, required=True, help="the checkpoint to write (NAME.pt)")
    p.add_argument("--src-lang", default="en", choices=SUPPORTED_LANGS,
                   help="the source language (OpenNMT-py does not record it)")
    p.add_argument("--tgt-lang", default="fr", choices=SUPPORTED_LANGS, help="the target language")
    p.add_argument("--split", choices=oo.SPLITS, default="moses",
                   help="how the text OpenNMT-py read had been tokenised: moses (this app's Moses tokeniser) or "
                        "spaces (raw text, split at spaces)")
    p.add_argument("--spm", type=Path, default=None,
                   help="the sentencepiece model of a model trained with the sentencepiece transform (default: the "
                        "file its opt names, beside the checkpoint)")
    args = p.parse_args(argv)
    ckpt = convert(args.ckpt, args.src_lang, args.tgt_lang, args.split, args.spm)
    checkpoint.atomic_save(ckpt, args.out)
    lm = checkpoint.load(args.out)  # read back: sealed, intact and buildable
    cfg = lm.model.cfg
    print(f"{args.out}: {cfg.cell.upper()} ×{cfg.layers}, {cfg.score} score, n = {cfg.hidden_dim}, "
          f"vocabularies {len(lm.src_vocab)} / {len(lm.tgt_vocab)}, from {TOOLKIT}")
    return 0
