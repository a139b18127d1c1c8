"""What an OpenNMT-py 3.x checkpoint's ``opt`` says, checked option by option (:mod:`nmt.tools.importers.onmt`).

Every option is one OpenNMT-py 3.5.1's ``onmt_train`` knows (``onmt_options.txt``; any other name is
refused). The options that change what a recurrent model computes are either mapped onto
:class:`nmt.models.luong.LuongConfig` (:func:`luong_config`) or must hold the value of a plain RNN model
(``REQUIRED``); a refusal is one ``ValueError`` line (which option, and why). The rest only shaped
training (dropouts, optimiser, initialisers, data filters) or belong to other architectures
(Transformer, CNN, GGNN), whose options a recurrent model never reads; the imported checkpoint keeps
them all in ``meta["source_config"]``.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from nmt.models.luong import LuongConfig
from nmt.text.tokenize import SPLITS as SPLITS
from nmt.tools.importers.bounded import short

ONMT_SPECIALS = ("<unk>", "<blank>", "<s>", "</s>")  # ids 0-3: OpenNMT-py 3's default_specials
SCORES = {"dot": "dot", "general": "general", "mlp": "concat"}  # global_attention → our score
# options a plain recurrent seq2seq model has at these values; anything else is refused
REQUIRED: dict[str, Any] = {
    "model_task": "seq2seq", "data_task": "seq2seq", "model_type": "text", "decoder_type": "rnn",
    "context_gate": None, "coverage_attn": False, "copy_attn": False, "reuse_copy_attn": False,
    "global_attention_function": "softmax", "generator_function": "softmax", "position_encoding": False,
    "n_src_feats": 0, "decoder_start_token": "<s>", "lora_layers": [], "lora_embedding": False,
    "quant_layers": [], "quant_type": "",
}
WHY = {
    "model_task": "only translation models (seq2seq) are mapped, not language models",
    "data_task": "only translation models (seq2seq) are mapped, not language models",
    "model_type": "only text models are mapped",
    "decoder_type": "only recurrent decoders are mapped (this app steps through RNN attention; Transformers "
                    "are not imported)",
    "context_gate": "the context gate (Tu et al. 2017) is not in this app's Luong model",
    "coverage_attn": "coverage attention is not in this app's Luong model",
    "copy_attn": "copy attention (a pointer-generator) is not in this app's Luong model",
    "reuse_copy_attn": "copy attention (a pointer-generator) is not in this app's Luong model",
    "global_attention_function": "only softmax attention weights are mapped (sparsemax is not)",
    "generator_function": "only a softmax output is mapped (sparsemax is not)",
    "position_encoding": "position encodings are not in this app's Luong model",
    "n_src_feats": "source word features are not mapped",
    "decoder_start_token": "the decoder must start from <s>",
}
MAX_DEPTH = 16  # nesting of opt's values
MAX_SIZE = 1 << 16  # units, layers or embedding size above this is no model this app can show
MAX_KEY = 200  # an option name longer than this is cut (and then refused as unknown)
TRAINING_FILTERS = {"filtertoolong", "clean"}  # transforms that only drop training pairs
TRANSFORMS = TRAINING_FILTERS | {"sentencepiece"}


def refuse(what: str, why: str) -> ValueError:
    """The one-line refusal: ``what`` (an option and its value), ``why`` (what it would take)."""
    return ValueError(f"{what}: {why}")


@cache
def known_options() -> frozenset[str]:
    """The option names of OpenNMT-py 3.5.1's ``onmt_train`` (``onmt_options.txt``)."""
    text = resources.files("nmt.tools.importers").joinpath("onmt_options.txt").read_text(encoding="utf-8")
    return frozenset(ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#"))


def plain(value: Any, depth: int = 0) -> Any:
    """``value`` as plain data a checkpoint may hold: sets and tuples become (sorted) lists; values nested
    deeper than :data:`MAX_DEPTH` are refused (OpenNMT-py's deepest, ``data``, nests 3 levels)."""
    if depth > MAX_DEPTH:
        raise refuse("opt", f"values nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        return {str(k)[:MAX_KEY]: plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        items = [plain(v, depth + 1) for v in value]
        try:
            return sorted(items)
        except TypeError:
            raise refuse("opt", "a set of values of different types") from None
    if isinstance(value, list | tuple):
        return [plain(v, depth + 1) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise refuse(f"an option of type {type(value).__name__[:40]}", "only plain values are read from opt")


def check_options(opt: dict[str, Any]) -> None:
    """Refuse unknown option names and required options at other values."""
    unknown = sorted(set(opt) - known_options())
    if unknown:
        raise refuse(f"opt.{unknown[0]}", "an option OpenNMT-py 3.5.1 does not have, so the importer cannot "
                                          "promise the same translations")
    for key, want in REQUIRED.items():
        if key in opt and opt[key] != want:
            raise refuse(f"opt.{key} {short(opt[key])}", WHY.get(key, "not mapped onto this app's Luong model"))


def transforms(opt: dict[str, Any]) -> set[str]:
    """Every transform the options name (``transforms``, ``_all_transform`` and each corpus's own)."""
    names = set(opt.get("transforms") or []) | set(opt.get("_all_transform") or [])
    for corpus in (opt.get("data") or {}).values():
        if isinstance(corpus, dict):
            names |= set(corpus.get("transforms") or [])
    other = sorted(names - TRANSFORMS)
    if other:
        raise refuse(f"transform {short(other[0])}", "only the sentencepiece transform is reproduced (and the "
                                                "training-pair filters filtertoolong, clean)")
    return names


def _sizes(opt: dict[str, Any]) -> tuple[int, int, int]:
    """(m, n, L) after checking that this project's Luong model can hold them."""
    m_src, m_tgt = opt.get("src_word_vec_size"), opt.get("tgt_word_vec_size")
    for key in ("src_word_vec_size", "tgt_word_vec_size", "enc_hid_size", "dec_hid_size", "enc_layers", "dec_layers"):
        value = opt.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or not 0 < value <= MAX_SIZE:
            raise refuse(f"opt.{key} {short(value)}", f"must be a whole number from 1 to {MAX_SIZE}")
    if m_src != m_tgt:
        raise refuse(f"word_vec_size {m_src} (source) vs {m_tgt} (target)", "one embedding size for both is mapped")
    n_enc, n = opt.get("enc_hid_size"), opt.get("dec_hid_size")
    if n_enc != n or not isinstance(n, int) or n % 2:
        raise refuse(f"hidden_size {n_enc} (encoder) vs {n} (decoder)", "equal, even sizes are mapped (the "
                     "bidirectional encoder has n/2 units a direction)")
    L = opt.get("enc_layers")
    if opt.get("dec_layers") != L or not isinstance(L, int) or L < 1:
        raise refuse(f"layers {L} (encoder) vs {opt.get('dec_layers')} (decoder)", "equal depths are mapped")
    return m_src, n, L


def luong_config(opt: dict[str, Any], src_size: int, tgt_size: int) -> LuongConfig:
    """The LuongConfig of an OpenNMT-py recurrent model's options (``ValueError`` for anything else)."""
    check_options(opt)
    for key in ("input_feed", "bridge"):
        if opt.get(key, 0) not in (0, 1):  # False and True are 0 and 1
            raise refuse(f"opt.{key} {short(opt.get(key))}", "must be 0 or 1 (false or true)")
    if opt.get("encoder_type") != "brnn":
        raise refuse(f"opt.encoder_type {short(opt.get('encoder_type'))}", "only the bidirectional RNN encoder (brnn) "
                     "is mapped (this app's encoders: bidirectional, or one direction reading backwards)")
    cell = str(opt.get("rnn_type", "")).lower()
    if cell not in ("lstm", "gru"):
        raise refuse(f"opt.rnn_type {short(opt.get('rnn_type'))}", "LSTM or GRU is mapped")
    attention = opt.get("global_attention")
    if not isinstance(attention, str) or attention not in SCORES:
        raise refuse(f"opt.global_attention {short(attention)}", "dot, general or mlp attention is mapped")
    m, n, L = _sizes(opt)
    mlp = attention == "mlp"
    return LuongConfig(src_vocab_size=src_size, tgt_vocab_size=tgt_size, emb_dim=m, hidden_dim=n,
                       score=SCORES[attention], attention="global", input_feeding=bool(opt.get("input_feed")),
                       cell=cell, layers=L, encoder="bidirectional", dropout=0.0,
                       bridge="onmt" if opt.get("bridge") else "copy", src_eos=False, score_bias=mlp,
                       output_tanh=not mlp)
