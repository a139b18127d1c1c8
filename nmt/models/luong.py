"""Luong, Pham & Manning (EMNLP 2015): global and local attention, on RNNsearch's code path.

Notation follows the paper: h̄_s = source (encoder) states, h_t = top decoder state, c_t = context,
h̃_t = attentional state, S / T = source / target length, D = window half-width; m = embedding size,
n = hidden units, L = layers, K_y = target vocabulary, B / N = batch rows. Equation numbers refer to
the paper. One decoder step t reads h_t *after* the recurrence (Bahdanau's reads s_{i-1} before it):

    h_t = RNN(h_{t-1}, [E y_{t-1}; h̃_{t-1}])   stacked LSTM/GRU; h̃_{t-1} only with input feeding (§3.3)
    score(h_t, h̄_s)                            eq. (8): dot h_tᵀh̄_s | general h_tᵀW_a h̄_s |
                                                concat v_aᵀ tanh(W_a[h_t; h̄_s]); eq. (9) location W_a h_t
    a_t(s) = softmax_s score(h_t, h̄_s)          eq. (7); local attention: s ∈ [p_t − D, p_t + D] only,
                                                p_t = t (local-m) or eq. (10) (local-p), then × eq. (11)
    c_t = Σ_s a_t(s) h̄_s
    h̃_t = tanh(W_c [c_t; h_t])                 eq. (5)
    p(y_t | y_<t, x) = softmax(W_s h̃_t)        eq. (6)

Choices, written down:

* Encoder (``encoder``): ``bidirectional`` (default, used by the shipped configs) or ``reversed``
  (Luong's own: one direction reading the source backwards). Bidirectional because then h̄_s, like
  RNNsearch's annotation h_j, summarises the whole sentence centred on word s, so the comparison with
  RNNsearch changes the attention and nothing else, and local windows centred on p_t sit on the
  words they name; with n/2 units per direction h̄_s has n units, the size the dot score needs.
  The reversed encoder's states are put back in source order, so s always indexes word s.
* Bridge: decoder layer l starts from encoder layer l's final state (h and, for LSTMs, c): the
  concatenation [→h_S; ←h_1] for the bidirectional encoder, the state after reading word 1 for the
  reversed one (Sutskever et al.); no parameters. ``bridge="learned"`` (JoeyNMT's, for imported
  models, :mod:`nmt.tools.importers.joeynmt`): every layer starts from s_0 = tanh(W_b [→h_S; ←h_1] + b_b) of
  the top encoder layer, an LSTM's cells from the same s_0. ``bridge="onmt"``: OpenNMT-py's (:func:`_onmt_bridge`).
* OpenNMT-py's options (:mod:`nmt.tools.importers.onmt`; off for the models trained here): ``src_eos=False``, the
  source's ``</s>`` is masked out, α = 0 on it; ``score_bias`` and ``output_tanh=False``: its ``mlp``.
* Cells: LSTM (Luong's) or GRU, ``layers`` deep (the paper: 4; 1 keeps the parameter count with
  the shipped RNNsearch's: 11.1M vs 12.0M at m = 256, n = 512 on Multi30k's vocabularies).
* Positions are 0-based: local-m uses p_t = min(t, S − 1) (the clamp keeps a window inside the
  sentence when the output outgrows the input) and local-p p_t = (S − 1) · sigmoid(…) ∈ [0, S − 1],
  the paper's S · sigmoid(…) ∈ [0, S] over 1-based positions. A source longer than
  ``max_positions`` is refused by the location score (its W_a has one row per position).
* Energies (the trace's e) are the scores before softmax, window and Gaussian; α is the final
  a_t(s). Local-p's α is not renormalised after the Gaussian (eq. 11), so it sums to < 1.
* Initialisation uniform in [−0.1, 0.1] (§4.1); dropout on embeddings, between layers and on h̃_t
  (the fed-back h̃_t is the dropped one, as in OpenNMT). Biases kept in W_c and W_s.

The inference API is RNNSearch's (``encode`` / ``encode_embeddings`` / ``initial_state`` /
``step(..., alpha=None)`` / ``log_probs`` / ``forward``), so :mod:`nmt.decoding.search` runs it unchanged:
:class:`LuongState` stands in for the tensor ``DecoderState.s`` (see there). The attention itself
(scores, windows, eqs. 7-11: :class:`LuongAttention`, :class:`LuongAttended`) is in :mod:`nmt.models.luong_attention`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from nmt.models.candidates import output_logits
from nmt.models.contract import Capabilities
from nmt.models.luong_attention import LuongAttended, LuongAttention
from nmt.models.rnnsearch import DecoderState, StepOutput
from nmt.text.vocab import PAD_ID

SCORES = ("dot", "general", "concat", "location")
ATTENTIONS = ("global", "local-m", "local-p")
CELLS = ("lstm", "gru")
ENCODERS = ("bidirectional", "reversed")
BRIDGES = ("copy", "learned", "onmt")


@dataclass
class LuongConfig:
    """Sizes and attention variant of one Luong model."""

    src_vocab_size: int
    tgt_vocab_size: int
    emb_dim: int = 256  # m
    hidden_dim: int = 512  # n: h_t, h̄_s and h̃_t (n/2 per direction in a bidirectional encoder)
    score: str = "general"  # eq. (8)-(9)
    attention: str = "global"  # global | local-m | local-p
    window: int = 10  # D (paper: 10); σ = D/2
    input_feeding: bool = True
    cell: str = "lstm"
    layers: int = 1
    encoder: str = "bidirectional"
    dropout: float = 0.0
    max_positions: int = 128  # rows of the location score's W_a (decoding caps sources at 101)
    context: str = "attention"  # the only context mode (nmt.decoding.search reads cfg.context)
    arch: str = "luong"
    bridge: str = "copy"  # copy: encoder layer l's finals; learned: tanh(W_b [→h_S; ←h_1] + b_b) (JoeyNMT's)
    src_eos: bool = True  # False: the source's </s> is masked out (OpenNMT-py's encoder never reads one)
    score_bias: bool = False  # concat: v_aᵀ tanh(W_a[h_t; h̄_s] + b_a) (OpenNMT-py's mlp)
    output_tanh: bool = True  # False: h̃_t = W_c[c_t; h_t] + b (OpenNMT-py's mlp)

    def __post_init__(self) -> None:
        for name, allowed in (("score", SCORES), ("attention", ATTENTIONS), ("cell", CELLS),
                              ("encoder", ENCODERS), ("context", ("attention",)), ("arch", ("luong",)),
                              ("bridge", BRIDGES)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        if self.layers < 1 or self.window < 0:
            raise ValueError("layers must be ≥ 1 and window ≥ 0")
        if self.encoder == "bidirectional" and self.hidden_dim % 2:
            raise ValueError("a bidirectional encoder needs an even hidden_dim (n/2 units per direction)")
        if self.bridge != "copy" and self.encoder != "bidirectional":
            raise ValueError(f"the {self.bridge} bridge reads a bidirectional encoder's [→h_S; ←h_1]")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LuongConfig:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


# ----------------------------------------------------------------------------------------------
# Per-sentence state objects (never stored on a module)
# ----------------------------------------------------------------------------------------------


def _select(obj: Any, rows: torch.Tensor) -> Any:
    return type(obj)(*(None if (v := getattr(obj, f.name)) is None else v.index_select(0, rows)
                       for f in fields(obj)))


@dataclass
class LuongEncoderState:
    """What the decoder reads from one batch of source sentences.

    memory: (B, S, n)  h̄_s, zero on padding
    keys:   (B, S, n)  the h̄_s half of the score, precomputed once (general: W_a h̄_s; concat:
                       W_a's h̄ columns times h̄_s); None for dot and location
    mask:   (B, S)     True on real tokens (incl. ``</s>``)
    src_len: (B,)
    h0, c0: (B, L, n)  the decoder's initial states (c0 None for GRUs)
    allowed: (B, K_y)  True on each sentence's candidate words (nmt.models.candidates); None: every word
    """

    memory: torch.Tensor
    keys: torch.Tensor | None
    mask: torch.Tensor
    src_len: torch.Tensor
    h0: torch.Tensor
    c0: torch.Tensor | None
    allowed: torch.Tensor | None = None

    def select(self, rows: torch.Tensor) -> LuongEncoderState:
        """Rows ``rows`` of the batch (used to expand sentences into beams)."""
        return _select(self, rows)

    def restrict(self, allowed: torch.Tensor | None) -> LuongEncoderState:
        """This state with each sentence's candidate words ``allowed`` (B, K_y) (:mod:`nmt.models.candidates`)."""
        return replace(self, allowed=allowed)

    def head(self, n: int) -> LuongEncoderState:
        """The first ``n`` rows, as views (a batch that sheds rows from its end)."""
        return type(self)(*(None if (v := getattr(self, f.name)) is None else v[:n] for f in fields(self)))


@dataclass
class LuongState:
    """The recurrent state carried from step t − 1 to t, held in ``DecoderState.s``.

    h: (N, L, n) h_{t-1} per layer;  c: (N, L, n) LSTM cells or None;  feed: (N, n) h̃_{t-1}
    (zeros at t = 0);  t: (N,) the target position t (0-based) of the next step.

    nmt.decoding.search rebuilds ``DecoderState(out.state.s, y)`` and calls ``s.norm(dim=-1)`` and
    ``s.index_select(0, rows)``; this class answers both (the norm is the top layer's ‖h_{t-1}‖),
    so every decoder there carries the whole state without knowing its parts.
    """

    h: torch.Tensor
    c: torch.Tensor | None
    feed: torch.Tensor
    t: torch.Tensor

    @property
    def top(self) -> torch.Tensor:
        """The top layer's h (N, n)."""
        return self.h[:, -1]

    def norm(self, dim: int = -1) -> torch.Tensor:
        return self.top.norm(dim=dim)

    def index_select(self, dim: int, rows: torch.Tensor) -> LuongState:
        if dim != 0:
            raise ValueError("a LuongState is selected along its batch dimension (0) only")
        return _select(self, rows)


def _onmt_bridge(linear: nn.Linear, final: torch.Tensor) -> torch.Tensor:
    """OpenNMT-py's bridge (onmt/encoders/rnn_encoder.py ``_bridge``) of encoder finals (2L, B, n/2) read as
    2 · B rows of L · n/2 values: ReLU(W row + b) each, back to (2L, B, n/2) (L = 1: each direction apart)."""
    B = final.shape[1]
    rows = final.permute(1, 0, 2).reshape(-1, linear.in_features)  # (2 · B, L · n/2)
    return torch.relu(linear(rows)).view(B, -1, final.shape[2]).permute(1, 0, 2)  # (2L, B, n/2)


def _check_context(context: str | None) -> None:
    if context not in (None, "attention"):
        raise ValueError(f"a Luong model has only the 'attention' context, not {context!r} "
                         "(fixed and mean contexts are RNNsearch/RNNencdec modes)")


# ----------------------------------------------------------------------------------------------
# The model
# ----------------------------------------------------------------------------------------------


class LuongNMT(nn.Module):
    """Encoder, stacked decoder, Luong attention and the attentional softmax output."""

    def __init__(self, cfg: LuongConfig, init: bool = True) -> None:
        """``init=False`` skips the uniform initialisation, for weights about to be loaded."""
        super().__init__()
        self.cfg = cfg
        m, n, L = cfg.emb_dim, cfg.hidden_dim, cfg.layers
        bi = cfg.encoder == "bidirectional"
        rnn, cell = (nn.LSTM, nn.LSTMCell) if cfg.cell == "lstm" else (nn.GRU, nn.GRUCell)
        self.src_embed = nn.Embedding(cfg.src_vocab_size, m, padding_idx=PAD_ID)
        self.encoder = rnn(m, n // 2 if bi else n, num_layers=L, batch_first=True, bidirectional=bi,
                           dropout=cfg.dropout if L > 1 else 0.0)
        self.tgt_embed = nn.Embedding(cfg.tgt_vocab_size, m, padding_idx=PAD_ID)
        feed = n if cfg.input_feeding else 0  # input feeding widens layer 1's input by h̃_{t-1}
        self.cells = nn.ModuleList([cell(m + feed, n)] + [cell(n, n) for _ in range(L - 1)])
        self.attention = LuongAttention(n, cfg.score, cfg.attention, cfg.window, cfg.max_positions, cfg.score_bias)
        self.W_c = nn.Linear(2 * n, n)  # eq. (5)
        self.W_s = nn.Linear(n, cfg.tgt_vocab_size)  # eq. (6)
        self.dropout = nn.Dropout(cfg.dropout)
        if cfg.bridge == "learned":
            self.W_b = nn.Linear(n, n)  # s_0 = tanh(W_b [→h_S; ←h_1] + b_b), JoeyNMT's bridge
        elif cfg.bridge == "onmt":  # OpenNMT-py's: ReLU(W x + b) on rows of L · n/2 (see _onmt_bridge)
            self.W_b = nn.Linear(L * n // 2, L * n // 2)
            if cfg.cell == "lstm":
                self.W_bc = nn.Linear(L * n // 2, L * n // 2)  # the cells' own
        if init:
            for p in self.parameters():
                nn.init.uniform_(p, -0.1, 0.1)  # §4.1
            for emb in (self.src_embed, self.tgt_embed):
                emb.weight.data[PAD_ID] = 0.0

    @property
    def capabilities(self) -> Capabilities:
        """What it can do (:meth:`capabilities_for` its config)."""
        return self.capabilities_for(self.cfg)

    @staticmethod
    def capabilities_for(cfg: LuongConfig) -> Capabilities:
        """Attention only; Update, Look, Generate in that order (h_t first, then eqs. 7-8 and 5-6); a local
        window for local-m / local-p (local-p with eq. 11's Gaussian); re-encodable from embeddings. Its
        step accepts an α, but attention surgery is not offered for it (its views are RNNsearch's)."""
        return Capabilities("luong", ("attention",), ("update", "look", "generate"),
                            local_window=cfg.attention != "global", half_width=cfg.window,
                            gaussian=cfg.attention == "local-p", embeddings_input=True)

    # -- inference API: explicit states in, states out ---------------------------------------

    def encode(self, src: torch.Tensor, src_len: torch.Tensor) -> LuongEncoderState:
        """Source states h̄_s, attention keys and the decoder's initial states of a batch (B, S)."""
        return self.encode_embeddings(self.src_embed(src), src_len)

    def encode_embeddings(self, x: torch.Tensor, src_len: torch.Tensor) -> LuongEncoderState:
        """:meth:`encode` from source embeddings x = E x_s (B, S, m)."""
        S = x.shape[1]
        if not self.cfg.src_eos:  # the last id (</s>) is not read: masked out, like padding (S ≥ 1 kept)
            src_len = (src_len - 1).clamp(min=1)
        pos = torch.arange(S, device=x.device).unsqueeze(0)  # (1, S)
        mask = pos < src_len.unsqueeze(1)  # (B, S)
        x = self.dropout(x)  # (B, S, m)
        rev = torch.where(mask, src_len.unsqueeze(1) - 1 - pos, pos).unsqueeze(-1)  # (B, S, 1) an involution
        if self.cfg.encoder == "reversed":
            x = x.gather(1, rev.expand_as(x))  # each sentence backwards within its length
        packed = pack_padded_sequence(x, src_len.cpu(), batch_first=True, enforce_sorted=False)
        out, final = self.encoder(packed)
        memory = pad_packed_sequence(out, batch_first=True, total_length=S)[0]  # (B, S, n), 0 on padding
        if self.cfg.encoder == "reversed":
            memory = memory.gather(1, rev.expand_as(memory))  # back in source order: h̄_s is word s's
        h_fin, c_fin = final if self.cfg.cell == "lstm" else (final, None)
        if self.cfg.bridge == "onmt":
            h_fin = _onmt_bridge(self.W_b, h_fin)
            c_fin = None if c_fin is None else _onmt_bridge(self.W_bc, c_fin)
        h0 = self._bridge(h_fin)  # (B, L, n)
        if self.cfg.bridge == "learned":  # every layer (and an LSTM's cells) from the top layer's finals
            h0 = torch.tanh(self.W_b(h0[:, -1:])).expand_as(h0).contiguous()  # (B, L, n)
            return LuongEncoderState(memory, self.attention.keys(memory), mask, src_len, h0,
                                     None if c_fin is None else h0)
        return LuongEncoderState(memory, self.attention.keys(memory), mask, src_len,
                                 h0, None if c_fin is None else self._bridge(c_fin))

    def _bridge(self, final: torch.Tensor) -> torch.Tensor:
        """Encoder final states (L·dirs, B, n/dirs) → decoder initial states (B, L, n): [→h_S; ←h_1]."""
        L = self.cfg.layers
        return final.view(L, -1, *final.shape[1:]).permute(2, 0, 1, 3).flatten(2)

    def initial_state(self, enc: LuongEncoderState, bos: torch.Tensor) -> DecoderState:
        """The decoder state before the first target word: encoder finals, h̃_0 = 0, y_0 = ``<s>``."""
        N = bos.shape[0]
        feed = enc.memory.new_zeros(N, self.cfg.hidden_dim)  # (N, n)
        return DecoderState(LuongState(enc.h0, enc.c0, feed, torch.zeros_like(bos)), bos)

    def _recur(self, prev: LuongState, y_emb: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """h_t = RNN(h_{t-1}, [E y_{t-1}; h̃_{t-1}]) (and c_t) of every layer (N, L, n); E y_{t-1}: (N, m)."""
        x = torch.cat([y_emb, prev.feed], -1) if self.cfg.input_feeding else y_emb  # (N, m + n) or (N, m)
        hs, cs = [], []
        for layer, cell in enumerate(self.cells):
            if prev.c is None:
                h = cell(x, prev.h[:, layer])  # (N, n)
            else:
                h, c = cell(x, (prev.h[:, layer], prev.c[:, layer]))
                cs.append(c)
            hs.append(h)
            x = self.dropout(h)  # the next layer's input
        return torch.stack(hs, 1), torch.stack(cs, 1) if cs else None

    def _attend(
        self, h: torch.Tensor, enc: LuongEncoderState, t: torch.Tensor, alpha: torch.Tensor | None = None
    ) -> tuple[LuongAttended, torch.Tensor]:
        """Attention and the attentional state h̃_t (N, T, n) for top states h (N, T, n); α given or own."""
        att = self.attention(h, enc.memory, enc.keys, enc.mask, t, alpha)
        h_tilde = self.W_c(torch.cat([att.context, h], -1))  # (N, T, n)   eq. (5) before its tanh
        h_tilde = torch.tanh(h_tilde) if self.cfg.output_tanh else h_tilde
        return att, self.dropout(h_tilde)

    def step(
        self, enc: LuongEncoderState, state: DecoderState, context: str | None = None,
        alpha: torch.Tensor | None = None, parts: dict[str, torch.Tensor] | None = None, rows: slice | None = None,
    ) -> StepOutput:
        """One target position t: h_t, a_t, c_t, h̃_t, log p(y_t | y_<t, x) and the next state.

        A given ``alpha`` (N, S) replaces a_t(s) in c_t, so h̃_t, p(y_t) and the fed-back h̃_t read it.
        A given ``parts`` dict receives the logits W_s h̃_t (:mod:`nmt.decoding.phases`; the rest is in the output).
        ``rows`` reads out only those rows' log p (N', K_y)."""
        _check_context(context)
        prev: LuongState = state.s
        h, c = self._recur(prev, self.tgt_embed(state.y_prev))  # (N, L, n)
        given = None if alpha is None else alpha.unsqueeze(1)  # (N, 1, S)
        att, h_tilde = self._attend(h[:, -1:], enc, prev.t.unsqueeze(1), given)  # T = 1
        att = LuongAttended(*(None if (v := getattr(att, f.name)) is None else v.squeeze(1) for f in fields(att)))
        nxt = DecoderState(LuongState(h, c, h_tilde.squeeze(1), prev.t + 1), state.y_prev)
        r = slice(None) if rows is None else rows
        allowed = None if enc.allowed is None else enc.allowed[r]
        return StepOutput(self.log_probs(h_tilde.squeeze(1)[r], parts, allowed), att, nxt)  # (N', K_y)

    def log_probs(self, h_tilde: torch.Tensor, parts: dict[str, torch.Tensor] | None = None,
                  allowed: torch.Tensor | None = None) -> torch.Tensor:
        """log p(y_t | y_<t, x) = log softmax(W_s h̃_t) (…, K_y)   eq. (6), in float32; over the
        ``allowed`` words only when a candidate list is given (Jean et al. 2015 §3.2)."""
        logits = output_logits(self.W_s, h_tilde, allowed)  # (…, K_y)
        if parts is not None:
            parts["logits"] = logits
        return torch.log_softmax(logits.float(), dim=-1)

    # -- training: teacher forcing ---------------------------------------------------------------

    def forward(
        self, src: torch.Tensor, src_len: torch.Tensor, tgt_in: torch.Tensor, context: str | None = None
    ) -> torch.Tensor:
        """Logits (B, T, K_y) of the reference continuation ``tgt_in`` = <s> y_1 … y_{T-1}.

        Without input feeding only the recurrence runs step by step and attention is batched over
        all T steps; with it, h̃_{t-1} must exist before h_t, so attention runs inside the loop.
        """
        _check_context(context)
        enc = self.encode(src, src_len)
        B, T = tgt_in.shape
        y_emb = self.dropout(self.tgt_embed(tgt_in))  # (B, T, m)
        state: LuongState = self.initial_state(enc, tgt_in[:, 0]).s
        t = torch.arange(T, device=tgt_in.device).expand(B, T)  # (B, T)
        outs = []
        for i, y in enumerate(y_emb.unbind(1)):
            h, c = self._recur(state, y)  # (B, L, n)
            if self.cfg.input_feeding:
                h_tilde = self._attend(h[:, -1:], enc, t[:, i : i + 1])[1]  # (B, 1, n)
                outs.append(h_tilde)
                state = LuongState(h, c, h_tilde.squeeze(1), state.t + 1)
            else:
                outs.append(h[:, -1:])
                state = LuongState(h, c, state.feed, state.t + 1)
        h_all = torch.cat(outs, 1)  # (B, T, n): h̃_t with input feeding, else h_t
        h_tilde = h_all if self.cfg.input_feeding else self._attend(h_all, enc, t)[1]
        return self.W_s(h_tilde)  # (B, T, K_y)
