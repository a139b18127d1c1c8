"""Language-model fusion (Gülçehre et al. 2015 §4; the MILA WMT'15 system, Jean et al. 2015 §2.4).

A translation model (TM) and a target-side language model (LM, :mod:`nmt.models.lm`) over the same target
vocabulary decode together. :class:`FusedModel` has the interface the decoders call on a model
(``encode``, ``initial_state``, ``step`` returning a :class:`nmt.models.state.StepOutput`, states with
``select``), so greedy, beam, forced decoding and the :class:`nmt.decoding.search.Stepper` decode a fused
model unchanged: it calls the TM's own :meth:`step` and the LM's own :meth:`step`, never a copy.

* **Shallow fusion** (§4.1): every word's score is

      score(y_i = k) = log p_TM(k | y_<i, x) + β log p_LM(k | y_<i),

  The paper ranks by this score as is; here the step's log p is the score renormalised over the
  vocabulary, log p_fused(k) = score(k) − log Σ_k' exp score(k'), so every p shown for a fused step
  is a probability (p_fused ∝ p_TM · p_LM^β). One step's ranking, and so greedy decoding, is the
  score's; a beam's scores gain −log Z_i per step. With β = 0 it is exactly log p_TM (Z_i = 1, not
  recomputed). The score itself is kept for the fusion panel (``FusedStepOutput.score``).
* **Deep fusion** (§4.2): a controller gate g_i = σ(v_gᵀ s_i^LM + b_g) scales the LM's hidden
  state, which enters the TM's deep output beside its own inputs:

      t̃_i = U_o s_{i-1} + V_o E y_{i-1} + C_o c_i + W_f (g_i s_i^LM),   p(y_i) = softmax(W_o maxout(t̃_i))

  (the paper concatenates g_i s_i^LM to the output layer's input; a concatenation followed by a
  linear map is this sum). Only v_g, b_g and W_f are trained, on parallel data with the TM and
  the LM frozen (scripts/train_fusion.py). W_f starts at zero, so before training — and with the
  gate held at 0 — deep fusion is the TM. RNNsearch models only (they own a deep output).

Shapes: N decoder rows, K_y target words, n_LM the LM's hidden size, 2l the TM's t̃ size.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from nmt.models import checkpoint, quantize
from nmt.models.checkpoint import LoadedModel
from nmt.models.contract import Capabilities
from nmt.models.lm import GRULanguageModel, LMConfig, LMState, is_lm_checkpoint
from nmt.models.state import DecoderState, StepOutput
from nmt.text.data import pad_ids
from nmt.text.vocab import BOS_ID, Vocab

MODES = ("none", "shallow", "deep")
CONTROLLER_ARCH = "deep-fusion-controller"


@dataclass
class FusedRecurrent:
    """The recurrent state of a fused model, held in ``DecoderState.s``: the TM's (a tensor s_{i-1}
    (N, n) or a Luong state) and the LM's h (N, n_LM). The decoders rebuild ``DecoderState(s, y)``
    and call ``s.norm(dim=-1)`` (the TM's) and ``s.index_select(0, rows)``; both are answered here."""

    tm: Any
    lm: torch.Tensor

    def norm(self, dim: int = -1) -> torch.Tensor:
        return self.tm.norm(dim=dim)

    def index_select(self, dim: int, rows: torch.Tensor) -> FusedRecurrent:
        return FusedRecurrent(self.tm.index_select(dim, rows), self.lm.index_select(dim, rows))


@dataclass
class FusedStepOutput(StepOutput):
    """A fused step: ``log_probs`` is the fused log p (shallow: the score renormalised); the TM's and
    the LM's own log p (N, K_y), the deep-fusion gate g_i (N,) (None for shallow fusion) and the fused
    score before renormalising (shallow: log p_TM + β log p_LM; deep: log p_fused) are kept for the views."""

    tm_log_probs: torch.Tensor | None = None
    lm_log_probs: torch.Tensor | None = None
    gate: torch.Tensor | None = None
    score: torch.Tensor | None = None


class DeepFusionController(nn.Module):
    """The weights deep fusion adds: the gate (v_g, b_g) and W_f (n_LM → 2l), nothing else."""

    def __init__(self, lm_hidden: int, readout_dim: int) -> None:
        super().__init__()
        self.gate = nn.Linear(lm_hidden, 1)  # g = σ(v_gᵀ s^LM + b_g)
        self.W_f = nn.Linear(lm_hidden, readout_dim, bias=False)  # into t̃ (2l)
        nn.init.zeros_(self.W_f.weight)

    def forward(self, h_lm: torch.Tensor, held: float | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """g (…,) and the readout input W_f (g s^LM) (…, 2l) for LM states (…, n_LM); ``held`` fixes g."""
        g = torch.sigmoid(self.gate(h_lm)).squeeze(-1) if held is None else h_lm.new_full(h_lm.shape[:-1], held)
        return g, self.W_f(g.unsqueeze(-1) * h_lm)


class FusedModel(nn.Module):
    """A translation model and a language model decoding as one (see the module docstring).

    ``gate`` holds deep fusion's g_i at a fixed value (None: the controller's own)."""

    def __init__(self, tm: nn.Module, lm: GRULanguageModel, mode: str, beta: float = 0.0,
                 controller: DeepFusionController | None = None, gate: float | None = None) -> None:
        super().__init__()
        if mode not in ("shallow", "deep"):
            raise ValueError(f"fusion mode must be 'shallow' or 'deep', not {mode!r}")
        if mode == "deep" and (controller is None or not tm.capabilities.deep_fusion):
            raise ValueError("deep fusion needs a translation model with a deep output (RNNsearch) and a "
                             "trained controller")
        self.tm, self.lm, self.mode, self.beta, self.gate_value = tm, lm, mode, float(beta), gate
        self.controller = controller

    @property
    def cfg(self) -> Any:
        """The translation model's config (context mode, sizes): what the decoders read."""
        return self.tm.cfg

    @property
    def capabilities(self) -> Capabilities:
        """The translation model's context modes and attention window (its α is the TM's); no phases,
        surgery, deep-fusion input or compilation of its own: its step is two models' steps."""
        return dataclasses.replace(self.tm.capabilities, arch="fused", phases=None, alpha_editable=False,
                                   deep_fusion=False, compilable=False, embeddings_input=False)

    def encode(self, src: torch.Tensor, src_len: torch.Tensor) -> Any:
        return self.tm.encode(src, src_len)

    def initial_state(self, enc: Any, bos: torch.Tensor) -> DecoderState:
        """The TM's s_0 and the LM's h_{-1} = 0, both before y_0 = ``<s>``."""
        tm0 = self.tm.initial_state(enc, bos)
        return DecoderState(FusedRecurrent(tm0.s, self.lm.initial_state(bos).h), bos)

    def step(self, enc: Any, state: DecoderState, context: str | None = None,
             alpha: torch.Tensor | None = None, tm_alone: bool = False) -> FusedStepOutput:
        """One target position of the fused model: the LM's step, then the TM's own step (with the
        gated LM state in its deep output for deep fusion); the scores of the module docstring.

        ``tm_alone`` (deep fusion, for the views): also run the TM's step without the LM, for its own
        log p_TM (otherwise ``tm_log_probs`` is the fused distribution, the only one computed)."""
        rec: FusedRecurrent = state.s
        tm_state = DecoderState(rec.tm, state.y_prev)
        lm_out = self.lm.step(LMState(rec.lm, state.y_prev))
        gate = None
        if self.mode == "deep":
            gate, extra = self.controller(lm_out.hidden, self.gate_value)
            tm_out = self.tm.step(enc, tm_state, context, alpha, extra=extra)
            scores = tm_out.log_probs
            own = self.tm.step(enc, tm_state, context, alpha).log_probs if tm_alone else scores
        else:
            tm_out = self.tm.step(enc, tm_state, context, alpha)
            own = tm_out.log_probs
            scores = own + self.beta * lm_out.log_probs
        fused = scores if self.mode == "deep" or self.beta == 0 else scores.log_softmax(-1)  # − log Z_i
        nxt = DecoderState(FusedRecurrent(tm_out.state.s, lm_out.hidden), state.y_prev)
        return FusedStepOutput(fused, tm_out.attended, nxt, own, lm_out.log_probs, gate, scores)


# ----------------------------------------------------------------------------------------------
# Loading and building
# ----------------------------------------------------------------------------------------------


@dataclass
class LoadedLM:
    """A language model ready to fuse: weights, its vocabulary and its checkpoint's meta."""

    model: GRULanguageModel
    vocab: Vocab
    lang: str
    meta: dict[str, Any]
    path: str = ""


def load_lm(path: str | Path) -> LoadedLM:
    """Read a language-model checkpoint (refused when damaged, like every checkpoint)."""
    ckpt = checkpoint.read_checkpoint(path)
    if not is_lm_checkpoint(ckpt):
        raise checkpoint.CheckpointError(f"{Path(path).name} is not a language-model checkpoint")
    model = GRULanguageModel(LMConfig.from_dict(ckpt["config"]))
    weights = quantize.dequantized(ckpt["model"])
    model.load_state_dict({k: v.float() for k, v in weights.items()})
    return LoadedLM(model.eval(), Vocab(ckpt["tgt_vocab"]), ckpt["tgt_lang"], dict(ckpt["meta"]), str(path))


def load_controller(path: str | Path) -> tuple[DeepFusionController, dict[str, Any]]:
    """Read a deep-fusion controller checkpoint (written by scripts/train_fusion.py)."""
    ckpt = checkpoint.read_checkpoint(path)
    cfg = ckpt["config"]
    if cfg.get("arch") != CONTROLLER_ARCH:
        raise checkpoint.CheckpointError(f"{Path(path).name} is not a deep-fusion controller checkpoint")
    ctl = DeepFusionController(cfg["lm_hidden"], cfg["readout_dim"])
    ctl.load_state_dict({k: v.float() for k, v in ckpt["model"].items()})
    return ctl.eval(), dict(ckpt["meta"])


@dataclass
class FusionFiles:
    """What a folder offers a translation model: a language model over its target vocabulary (or
    None) and a deep-fusion controller trained for exactly this TM and LM (or None)."""

    lm: Path | None = None
    controller: Path | None = None


def find_fusion_files(folder: Path, tm: LoadedModel) -> FusionFiles:
    """The first LM in ``folder`` that reads ``tm``'s target language and vocabulary, and a controller
    recorded as trained on ``tm``'s file and that LM's (deep fusion only for an RNNsearch TM)."""
    try:
        paths = sorted(p for p in folder.glob("*.pt") if p.is_file())
    except OSError:
        return FusionFiles()
    heads = {}
    for p in paths:
        try:
            heads[p] = checkpoint.read_checkpoint(p, mmap=True)
        except checkpoint.CheckpointError:
            continue
    lm = next((p for p, ck in heads.items() if is_lm_checkpoint(ck) and ck.get("tgt_lang") == tm.tgt_tok.lang
               and ck.get("tgt_vocab") == tm.tgt_vocab.itos), None)
    if lm is None:
        return FusionFiles()
    ctl = next((p for p, ck in heads.items() if tm.model.capabilities.deep_fusion
                and (ck.get("config") or {}).get("arch") == CONTROLLER_ARCH
                and ck["meta"].get("tm", {}).get("file") == Path(tm.path).name
                and ck["meta"].get("lm", {}).get("file") == lm.name), None)
    return FusionFiles(lm, ctl)


def matches(tm: LoadedModel, lm: LoadedLM) -> bool:
    """Whether the LM reads the TM's target language and vocabulary, word for word."""
    return lm.lang == tm.tgt_tok.lang and lm.vocab.itos == tm.tgt_vocab.itos


def fuse(tm: LoadedModel, lm: LoadedLM, mode: str, beta: float = 0.0,
         controller: DeepFusionController | None = None, gate: float | None = None) -> LoadedModel:
    """A :class:`LoadedModel` whose model is the fused one (same vocabularies, tokenisers, path), for
    every decoder of :mod:`nmt.decoding.search`; ``mode`` "none" returns ``tm`` itself."""
    if mode == "none":
        return tm
    if not matches(tm, lm):
        raise ValueError("the language model does not read this translation model's target vocabulary")
    fused = FusedModel(tm.model, lm.model.to(tm.device), mode, beta, controller, gate).to(tm.device).eval()
    key = {"mode": mode, "beta": beta if mode == "shallow" else None, "lm": Path(lm.path).name or None,
           "gate": gate}
    return dataclasses.replace(tm, model=fused, meta={**tm.meta, "fusion": key})


# ----------------------------------------------------------------------------------------------
# What each model said at each step of a fused trace (for the stepper's fusion view)
# ----------------------------------------------------------------------------------------------


@dataclass
class FusionStep:
    """One step of a fused trace: the written word's log p_TM, log p_LM and fused score, deep
    fusion's gate g_i (None for shallow), and each side's top-k (word, p) and the fused top-k
    (word, score)."""

    i: int
    token: str
    tm_logprob: float
    lm_logprob: float
    score: float
    gate: float | None
    tm_top: list[tuple[str, float]]
    lm_top: list[tuple[str, float]]
    fused_top: list[tuple[str, float]]


def _top(values: torch.Tensor, itos: list[str], k: int, exp: bool) -> list[tuple[str, float]]:
    v, idx = values.topk(k)
    return [(itos[j], float(x.exp() if exp else x)) for x, j in zip(v, idx.tolist(), strict=True)]


@torch.no_grad()
def explain(fused: LoadedModel, trace: Any, topk: int = 5) -> list[FusionStep]:
    """Replay a fused model's trace word by word through its own :meth:`FusedModel.step` and record
    what the TM, the LM and the fusion each said (nothing is recomputed outside the model's step)."""
    model = fused.model
    if model.capabilities.arch != "fused":
        raise ValueError("explain needs a fused model (nmt.decoding.fusion.fuse)")
    src, src_len = pad_ids([fused.src_vocab.encode(trace.src_tokens[:-1])])
    dev = fused.device
    enc = model.encode(src.to(dev), src_len.to(dev))
    state = model.initial_state(enc, torch.tensor([BOS_ID], device=dev))
    itos, k = fused.tgt_vocab.itos, min(topk, len(fused.tgt_vocab))
    out: list[FusionStep] = []
    for rec in trace.steps:
        step = model.step(enc, state, trace.context, tm_alone=True)
        tm, lm, sc = step.tm_log_probs[0], step.lm_log_probs[0], step.score[0]
        y = rec.token_id
        out.append(FusionStep(rec.i, rec.token, float(tm[y]), float(lm[y]), float(sc[y]),
                              None if step.gate is None else float(step.gate[0]),
                              _top(tm, itos, k, True), _top(lm, itos, k, True), _top(sc, itos, k, False)))
        state = DecoderState(step.state.s, torch.tensor([y], device=dev))
    return out
