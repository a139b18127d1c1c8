"""The fusion LM's training loss (scripts/train_lm.py): an exact softmax over the words its text holds.

``restricted_loss`` scores each target against the rows V' of the output layer (embedding rows and
bias entries of those words only). Checked against a hand-built reference: the full vocabulary's
logits with every word outside V' set to −∞, on a tiny model whose bias entries all differ (a loss
that reads the wrong rows of the bias or the embedding gives another number).
"""

from __future__ import annotations

import torch

from nmt.models.lm import GRULanguageModel, LMConfig
from nmt.text.vocab import PAD_ID
from scripts.train_lm import restricted_loss, shortlist


def test_restricted_loss_is_the_full_softmax_over_the_words_the_text_holds() -> None:
    torch.manual_seed(0)
    model = GRULanguageModel(LMConfig(12, emb_dim=5, hidden_dim=6)).eval()
    with torch.no_grad():
        model.out_bias.copy_(torch.arange(12.0) * 0.37 - 2.0)  # every word's bias differs
    seqs = [[5, 9, 3], [7, 3, 11, 3]]
    rows = shortlist(seqs)  # V' = {pad, 3, 5, 7, 9, 11}
    assert rows.tolist() == [PAD_ID, 3, 5, 7, 9, 11]
    pos = torch.zeros(12, dtype=torch.long)
    pos[rows] = torch.arange(len(rows))
    tgt_out = torch.tensor([[5, 9, 3, PAD_ID], [7, 3, 11, 3]])
    tgt_in = torch.tensor([[1, 5, 9, PAD_ID], [1, 7, 3, 11]])
    with torch.no_grad():
        got = restricted_loss(model, rows, pos, tgt_in, tgt_out)
        h, _ = model.gru(model.embed(tgt_in))  # the reference, written out: E (P h) + b over all words
        full = model.proj(h) @ model.embed.weight.T + model.out_bias
        outside = torch.ones(12, dtype=torch.bool)
        outside[rows] = False
        full[..., outside] = float("-inf")
        want = sum(-torch.log_softmax(full[b, t], -1)[tgt_out[b, t]] for b in range(2) for t in range(4)
                   if tgt_out[b, t] != PAD_ID)
    assert torch.allclose(got, want, atol=1e-5), (float(got), float(want))
