"""What a JoeyNMT 2.x ``config.yaml`` says, checked option by option (:mod:`nmt.tools.importers.joeynmt`).

Every option that changes what the trained model computes is either mapped onto
:class:`nmt.models.luong.LuongConfig` or refused in one line (``ValueError``: which option, and why); options
that only shaped training (dropouts, initialisers, frozen parts, pre-trained embedding files) are
accepted and kept in the imported checkpoint's ``meta["source_config"]``.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from nmt.models.luong import LuongConfig
from nmt.text.tokenize import SPLITS as SPLITS
from nmt.text.tokenize import SUPPORTED_LANGS
from nmt.tools.importers.bounded import short
from nmt.tools.importers.joeynmt_files import read_config as read_config

JOEY_SPECIALS = ("<unk>", "<pad>", "<s>", "</s>")  # ids 0-3, JoeyNMT's defaults
DEFAULT_SYMBOLS = {"unk_token": "<unk>", "unk_id": 0, "pad_token": "<pad>", "pad_id": 1, "bos_token": "<s>",
                   "bos_id": 2, "eos_token": "</s>", "eos_id": 3, "sep_token": None, "sep_id": None,
                   "lang_tags": []}
# options that only shaped training: accepted as they are
TRAINING_ONLY = {"dropout", "emb_dropout", "hidden_dropout", "freeze", "load_pretrained"}
EMBEDDING_KEYS = {"embedding_dim", "scale", "dropout", "freeze", "load_pretrained"}
ENCODER_KEYS = {"type", "rnn_type", "hidden_size", "embeddings", "bidirectional", "num_layers"} | TRAINING_ONLY
DECODER_KEYS = ({"type", "rnn_type", "hidden_size", "embeddings", "attention", "num_layers", "init_hidden",
                 "input_feeding", "activation"} | TRAINING_ONLY)
MODEL_KEYS = {"encoder", "decoder", "initializer", "init_gain", "bias_initializer", "embed_initializer",
              "embed_init_gain", "init_rnn_orthogonal", "lstm_forget_gate", "tied_embeddings", "tied_softmax"}
SIDE_KEYS = {"lang", "level", "lowercase", "normalize", "max_length", "min_length", "voc_limit", "voc_min_freq",
             "voc_file", "tokenizer_type", "bpe_type", "tokenizer_cfg"}
# tokenizer_cfg of level "bpe" with tokenizer_type "subword-nmt" (joeynmt/tokenizers.py SubwordNMTTokenizer);
# dropout is BPE-dropout, applied in training only
BPE_CFG_KEYS = {"pretokenizer", "codes", "separator", "dropout"}


def refuse(what: str, why: str) -> ValueError:
    """The one-line refusal: ``what`` (an option and its value), ``why`` (what it would take)."""
    return ValueError(f"{what}: {why}")


# the type each option this importer reads must have (a value of another type is refused before it is used)
_PARTS = ("model.encoder", "model.decoder")
TYPES: dict[str, tuple[type, ...]] = {
    **{f"{p}.{k}": (dict,) for p in _PARTS for k in ("embeddings",)},
    **{f"{p}.{k}": (int,) for p in _PARTS for k in ("hidden_size", "num_layers")},
    **{f"{p}.embeddings.{k}": (int,) for p in _PARTS for k in ("embedding_dim",)},
    **{f"{p}.embeddings.scale": (bool,) for p in _PARTS},
    **{f"{p}.{k}": (str,) for p in _PARTS for k in ("type", "rnn_type", "attention", "init_hidden", "activation")},
    **{f"{p}.{k}": (bool,) for p in _PARTS for k in ("bidirectional", "input_feeding")},
    **{f"data.{s}.{k}": (str,) for s in ("src", "trg") for k in ("lang", "level", "tokenizer_type", "bpe_type")},
    **{f"data.{s}.{k}": (bool,) for s in ("src", "trg") for k in ("lowercase", "normalize")},
    **{f"data.{s}.tokenizer_cfg": (dict,) for s in ("src", "trg")},
    "data.special_symbols": (dict,), "model.tied_embeddings": (bool,), "model.tied_softmax": (bool,),
}
MAX_SIZE = 1 << 16  # units, layers or embedding size above this is no model this app can show


def check_types(cfg: dict[str, Any]) -> None:
    """Refuse an option of the wrong type (:data:`TYPES`; sizes positive and at most :data:`MAX_SIZE`), so
    that the checks after it compare values of the types they expect."""
    for path, types in TYPES.items():
        node: Any = cfg
        for key in path.split("."):
            node = node.get(key) if isinstance(node, dict) else None
        if node is None:
            continue
        if not isinstance(node, types) or (types == (int,) and (isinstance(node, bool) or not 0 < node <= MAX_SIZE)):
            want = {dict: "a table", int: f"a whole number from 1 to {MAX_SIZE}", str: "a string", bool: "true or "
                    "false"}[types[0]]
            raise refuse(f"{path} {short(node)}", f"must be {want}")


def _unknown(table: dict[str, Any], known: set[str], where: str) -> None:
    """Refuse the first option of ``table`` outside ``known``."""
    extra = sorted(set(table) - known)
    if extra:
        raise refuse(f"{where}.{extra[0]}", "an option the importer does not map, so it cannot promise the same "
                                            "translations")


def _side(cfg: dict[str, Any], side: str) -> dict[str, Any]:
    """``data.src`` or ``data.trg`` after checking its language, level and pre-processing."""
    d = cfg["data"][side]
    _unknown(d, SIDE_KEYS, f"data.{side}")
    if d.get("lang") not in SUPPORTED_LANGS:
        raise refuse(f"data.{side}.lang {short(d.get('lang'))}", f"this app tokenises {', '.join(SUPPORTED_LANGS)}")
    level = d.get("level", "word")
    if level == "bpe":
        _bpe_side(d, side)
    elif level != "word":
        raise refuse(f"data.{side}.level {short(level)}", "word-level and subword-nmt BPE models are mapped")
    if d.get("normalize", False):
        raise refuse(f"data.{side}.normalize", "JoeyNMT's unicode normalisation is not reproduced")
    pre = (d.get("tokenizer_cfg") or {}).get("pretokenizer", "none")
    if str(pre).lower() != "none":
        raise refuse(f"data.{side}.tokenizer_cfg.pretokenizer {short(pre)}",
                     "JoeyNMT's Moses pre-tokeniser escapes HTML characters, which this app does not reproduce")
    return d


def _bpe_side(d: dict[str, Any], side: str) -> None:
    """Refuse a BPE side other than subword-nmt's codes file (JoeyNMT's default bpe kind is sentencepiece)."""
    kind = d.get("tokenizer_type", d.get("bpe_type", "sentencepiece"))
    if kind != "subword-nmt":
        raise refuse(f"data.{side}.tokenizer_type {short(kind)}", "only subword-nmt BPE is mapped for JoeyNMT models")
    tcfg = d.get("tokenizer_cfg") or {}
    _unknown(tcfg, BPE_CFG_KEYS, f"data.{side}.tokenizer_cfg")
    if not isinstance(tcfg.get("codes"), str) or not tcfg["codes"]:
        raise refuse(f"data.{side}.tokenizer_cfg.codes", "a BPE model names its codes file")


def bpe_codes(cfg: dict[str, Any]) -> tuple[str, str] | None:
    """(codes file name, separator) of a BPE model, the same on both sides; None for a word-level model.
    JoeyNMT copies the codes file into its model folder under this name."""
    sides = [cfg["data"][s] for s in ("src", "trg")]
    levels = {d.get("level", "word") for d in sides}
    if levels == {"word"}:
        return None
    if levels != {"bpe"}:
        raise refuse("data.src/trg.level", "one side BPE and the other words is not mapped")
    found = {(PurePosixPath(str(d["tokenizer_cfg"]["codes"]).replace("\\", "/")).name,
              str(d["tokenizer_cfg"].get("separator", "@@"))) for d in sides}
    if len(found) != 1:
        raise refuse("data.src/trg.tokenizer_cfg", "one codes file and separator for both sides is mapped")
    return found.pop()


def tokenisation(cfg: dict[str, Any], split: str) -> dict[str, Any]:
    """The tokenisation the imported checkpoint records (:func:`nmt.models.checkpoint.tokenizers` reads it)."""
    if split not in SPLITS:
        raise refuse(f"split {short(split)}", f"one of {SPLITS}")
    check_types(cfg)
    lower = {_side(cfg, s).get("lowercase", False) for s in ("src", "trg")}
    if len(lower) != 1:
        raise refuse("data.src/trg.lowercase", "one side lower-cased and the other not is not reproduced")
    how = "pretokenizer none: the line is split at single spaces"
    if bpe_codes(cfg):
        return {"level": "bpe", "lowercase": bool(lower.pop()), "split": split,
                "joeynmt": how + ", then into subword-nmt BPE pieces known to the model's vocabulary"}
    return {"level": "word", "lowercase": bool(lower.pop()), "split": split, "joeynmt": how}


def _check_symbols(cfg: dict[str, Any]) -> None:
    """Refuse special symbols other than JoeyNMT's defaults (ids 0-3, no separator, no language tags)."""
    given = cfg["data"].get("special_symbols") or {}
    for key, value in given.items():
        if DEFAULT_SYMBOLS.get(key, "?") != value:
            raise refuse(f"data.special_symbols.{key} {short(value)}",
                         "only JoeyNMT's default special symbols are mapped")


def _rnn_sizes(enc: dict[str, Any], dec: dict[str, Any]) -> tuple[int, int, int]:
    """(m, n, L) after checking that this project's Luong model can hold them."""
    m_src, m_tgt = enc["embeddings"].get("embedding_dim", 64), dec["embeddings"].get("embedding_dim", 64)
    if m_src != m_tgt:
        raise refuse(f"embedding_dim {m_src} (source) vs {m_tgt} (target)", "one embedding size for both is mapped")
    n_enc, n = enc.get("hidden_size", 1), dec.get("hidden_size", 0)
    if 2 * n_enc != n:
        raise refuse(f"hidden_size {n_enc} (encoder) vs {n} (decoder)",
                     "this model's attention reads h̄_s of the decoder's size: decoder units = 2 × encoder units")
    L = enc.get("num_layers", 1)
    if dec.get("num_layers", 1) != L:
        raise refuse(f"num_layers {L} (encoder) vs {dec.get('num_layers', 1)} (decoder)", "equal depths are mapped")
    return m_src, n, L


def luong_config(cfg: dict[str, Any], src_size: int, tgt_size: int) -> LuongConfig:
    """The LuongConfig of a JoeyNMT recurrent model's config (``ValueError`` for anything else)."""
    check_types(cfg)
    model = cfg["model"]
    enc, dec = model["encoder"], model["decoder"]
    _unknown(model, MODEL_KEYS, "model")
    for name, part, known, default in (("encoder", enc, ENCODER_KEYS, "recurrent"),
                                       ("decoder", dec, DECODER_KEYS, "transformer")):
        if part.get("type", default) != "recurrent":
            raise refuse(f"model.{name}.type {short(part.get('type', default))}", "only recurrent models are mapped "
                         "(this app steps through RNN attention; Transformers are not imported)")
        _unknown(part, known, f"model.{name}")
        _unknown(part.get("embeddings") or {}, EMBEDDING_KEYS, f"model.{name}.embeddings")
        if (part.get("embeddings") or {}).get("scale", False):
            raise refuse(f"model.{name}.embeddings.scale", "scaled embeddings (a Transformer option) are not mapped")
    version = str(cfg.get("joeynmt_version", "2"))
    if not version.startswith("2"):
        raise refuse(f"joeynmt_version {short(version)}", "the mapping follows JoeyNMT 2.x's code")
    cell = enc.get("rnn_type", "gru")
    if dec.get("rnn_type", "gru") != cell or cell not in ("gru", "lstm"):
        raise refuse(f"rnn_type {short(cell)} / {short(dec.get('rnn_type', 'gru'))}",
                     "GRU or LSTM on both sides is mapped")
    if not enc.get("bidirectional", True):
        raise refuse("model.encoder.bidirectional false", "JoeyNMT 2.3's RNN decoder reads both directions' "
                     "final states; only bidirectional encoders are mapped")
    if dec.get("init_hidden", "bridge") != "bridge":
        raise refuse(f"model.decoder.init_hidden {short(dec.get('init_hidden'))}", "only the learned bridge is mapped")
    if dec.get("activation", "tanh") != "tanh":
        raise refuse(f"model.decoder.activation {short(dec.get('activation'))}", "h̃_t = tanh(…) is the one mapped")
    attention = dec.get("attention", "bahdanau")
    if attention not in ("bahdanau", "luong"):
        raise refuse(f"model.decoder.attention {short(attention)}", "bahdanau or luong is mapped")
    _check_symbols(cfg)
    m, n, L = _rnn_sizes(enc, dec)
    return LuongConfig(src_vocab_size=src_size, tgt_vocab_size=tgt_size, emb_dim=m, hidden_dim=n,
                       score="concat" if attention == "bahdanau" else "general", attention="global",
                       input_feeding=bool(dec.get("input_feeding", True)), cell=cell, layers=L,
                       encoder="bidirectional", dropout=0.0, bridge="learned")
