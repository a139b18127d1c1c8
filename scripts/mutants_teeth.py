# ruff: noqa: E501  (a table of exact source snippets, one mutant a few lines)
"""Mutants of issue 50 for :mod:`scripts.mutate`: the training loop, the seal, the contract's capabilities,
the paired comparison's buckets and order, and the contrastive readout split.

An independent mutation run found small realistic bugs there that the project's own run never tried
and no test caught. ``LOOP`` are one-place slips in the one training loop and its tasks: each must
move tests/test_one_loop.py's losses or weights beyond its tolerance (chosen in that file from the
measured drift between two machines), or be caught by tests/test_loop_stopping.py (early stopping and
clipping, which the recorded runs never reach). :data:`scripts.mutants.MUTANTS` includes these.
"""

from __future__ import annotations

from scripts.mutant_def import Mutant, m

LOOP_PY = "nmt/training/loop.py"
NMT_TASK = "nmt/training/nmt_task.py"
LM_TR = "nmt/training/lm_training.py"
FUS_TR = "nmt/training/fusion_training.py"
SEAL = "nmt/models/seal.py"
DIG = "nmt/models/digests.py"
CON = "nmt/models/contract.py"
PAIRED = "nmt/tools/paired.py"
CONTRAST = "nmt/explanation/contrastive.py"

T_ONE = "tests/test_one_loop.py"
T_STOP = "tests/test_loop_stopping.py"
T_SEAL = "tests/test_seal_encoding.py"
T_CAPS = ("tests/test_contract.py::test_capabilities_answer_alpha_surgery_and_windows_as_worked_out_by_hand",
          "tests/test_contract.py::test_a_config_alone_gives_the_trained_context_first")
T_PAIRED = "tests/test_paired.py"
T_SPLIT = "tests/test_contrastive.py::test_the_readout_split_names_each_input_its_own_share"

LOOP = [
    m("loop_sum_not_mean", LOOP_PY, "(loss_sum / n_tok).backward()", "loss_sum.backward()", T_ONE,
      "the gradient of the summed loss, not the per-token mean (clipping then bites every update)"),
    m("loop_grads_accumulate", LOOP_PY, "    task.optimizer.zero_grad(set_to_none=True)\n", "", T_ONE,
      "gradients are never zeroed: each update adds the previous ones'"),
    m("loop_epoch_same_order", NMT_TASK, "args.sampled_vocab, seed=args.seed + epoch)", "args.sampled_vocab, seed=args.seed)",
      T_ONE, "every epoch batches the sentences in the first epoch's order"),
    m("loop_eval_mode", LOOP_PY, "        task.model.train()\n", "        task.model.eval()\n", T_ONE,
      "the loop trains with dropout off"),
    m("loop_skips_a_batch", LOOP_PY, 'for batch in mine[st["batch_in_epoch"]:]:', 'for batch in mine[st["batch_in_epoch"] + 1:]:',
      T_ONE, "each epoch (and each resume) skips one batch"),
    m("lm_loss_counts_padding", LM_TR, "pos[tgt_out].flatten(), ignore_index=PAD_ID,", "pos[tgt_out].flatten(),", T_ONE,
      "the language model's loss counts its padding as words to predict"),
    m("fusion_loss_counts_padding", FUS_TR, "batch.tgt_out.flatten(), ignore_index=PAD_ID,\n", "batch.tgt_out.flatten(),\n",
      T_ONE, "the controller's loss counts padding as words to predict"),
    m("stop_on_a_tie", LOOP_PY, "improved = v.score > st[best]", "improved = v.score >= st[best]", T_STOP,
      "a validation that ties the best counts as a gain: early stopping waits longer"),
    m("stop_one_late", LOOP_PY, 'if cfg.patience and st["bad_evals"] >= cfg.patience:', 'if cfg.patience and st["bad_evals"] > cfg.patience:',
      T_STOP, "early stopping after patience + 1 bad validations"),
    m("stop_never_resets", LOOP_PY, 'st["bad_evals"] = 0 if improved else st["bad_evals"] + 1', 'st["bad_evals"] += 1', T_STOP,
      "a gain does not reset the count of bad validations"),
    m("stop_ignored", LOOP_PY, "    return bool(st[\"stopped\"])\n\n\ndef _epochs", "    return bool(out_of_updates or lp.interrupted)\n\n\ndef _epochs",
      T_STOP, "the loop goes on after early stopping was decided"),
    m("patience_not_passed", NMT_TASK, "patience=args.patience,", "patience=0,", T_STOP,
      "train.py's --patience never reaches the loop"),
    m("clip_not_applied", LOOP_PY, "clip_grad_norm_(task.model.parameters(), cfg.clip) if cfg.clip else None",
      "clip_grad_norm_(task.model.parameters(), float('inf')) if cfg.clip else None", T_STOP,
      "the gradient norm is measured but never clipped"),
    m("clip_not_passed", NMT_TASK, "clip=args.clip,", "clip=1.0,", T_STOP, "train.py's --clip never reaches the loop"),
]

SEAL_AND_CAPS = [
    m("seal_float_rounded", SEAL, 'h.update(b"f" + obj.hex().encode() + b";")', 'h.update(b"f" + repr(round(obj, 12)).encode() + b";")',
      T_SEAL, "the seal rounds floats: a value changed past its 12th decimal passes"),
    m("seal_vocab_joined", SEAL, 'self.update(b"s" + struct.pack("<Q", len(data)))', 'self.update(b" ")', T_SEAL, "a vocabulary sealed as one joined text: words can move across a space"),
    m("seal_keys_unsorted", SEAL, "for key in sorted(obj, key=lambda k: (type(k).__name__, str(k))):", "for key in obj:",
      T_SEAL, "the seal depends on the order a dict's entries were written in"),
    m("seal_bool_is_int", SEAL, "if obj is None or isinstance(obj, bool):", "if obj is None:", T_SEAL,
      "True and 1 seal alike"),
    m("seal_skips_meta", SEAL, 'if k not in ("model", SEAL)}, "the checkpoint")', 'if k not in ("model", SEAL, "meta")}, "the checkpoint")',
      T_SEAL, "the seal leaves the metadata out"),
    m("identity_skips_meta", DIG, 'NOT_IDENTITY = ("model", "weights_sha256", "train_state")',
      'NOT_IDENTITY = ("model", "weights_sha256", "train_state", "meta")', T_SEAL,
      "a shipped file's identity leaves its metadata out"),
    m("unsealed_any_value", SEAL, 'os.environ.get(UNSEALED_ENV, "").strip() == "1"', 'bool(os.environ.get(UNSEALED_ENV, "").strip())',
      T_SEAL, "RNNSEARCH_ALLOW_UNSEALED=0 allows unsealed files"),
    m("caps_mean_has_no_alpha", CON, 'return (context or self.trained_context) != "fixed"',
      'return (context or self.trained_context) == "attention"', T_CAPS, "uniform α (mean) said to record no α"),
    m("caps_alpha_as_trained", CON, 'return (context or self.trained_context) != "fixed"', 'return self.trained_context != "fixed"',
      T_CAPS, "has_alpha ignores the mode it is asked about"),
    m("caps_editable_any_alpha", CON, 'return self.alpha_editable and (context or self.trained_context) == "attention"',
      'return self.alpha_editable and (context or self.trained_context) != "fixed"', T_CAPS,
      "surgery offered on uniform α (mean)"),
    m("caps_trained_last", CON, "return self.context_modes[0]", "return self.context_modes[-1]", T_CAPS,
      "the trained context read from the end of the modes"),
    m("caps_gaussian_any_window", CON, "return self.half_width if self.gaussian else None",
      "return self.half_width if self.local_window else None", T_CAPS, "local-m said to carry local-p's Gaussian"),
    m("caps_modes_unordered", "nmt/models/rnnsearch.py", "modes = (cfg.context, *(m for m in CONTEXT_MODES if m != cfg.context))",
      "modes = (cfg.context, *(m for m in reversed(CONTEXT_MODES) if m != cfg.context))", T_CAPS,
      "the untrained modes in another order"),
]

PAIRED_AND_SPLIT = [
    m("paired_signed_order", PAIRED, 'rows.sort(key=lambda row: (-abs(row["delta_chrf"]), row["k"]))',
      'rows.sort(key=lambda row: (-row["delta_chrf"], row["k"]))', T_PAIRED,
      "the largest differences in B's favour only: B's worst losses sink to the end"),
    m("paired_ties_reversed", PAIRED, 'rows.sort(key=lambda row: (-abs(row["delta_chrf"]), row["k"]))',
      'rows.sort(key=lambda row: (-abs(row["delta_chrf"]), -row["k"]))', T_PAIRED, "equal differences listed last line first"),
    m("paired_bucket_closed", PAIRED, "idx = [k for k, n in enumerate(src_lengths) if lo <= n < hi]",
      "idx = [k for k, n in enumerate(src_lengths) if lo <= n <= hi]", T_PAIRED,
      "a sentence of 10 words counted in the 0–9 bucket too"),
    m("split_names_swapped", CONTRAST, "return ({name: float(a.sum()) for name, a in zip(SHARES, attrs, strict=True)},",
      "return ({name: float(a.sum()) for name, a in zip(SHARES, attrs[::-1], strict=True)},", T_SPLIT,
      "the state's share reported as the context's and back"),
    m("split_wrong_step", CONTRAST, "inputs = tuple(t[:, step].detach() for t in (run.s_prev, run.y_emb, run.context))",
      "inputs = tuple(t[:, -1].detach() for t in (run.s_prev, run.y_emb, run.context))", T_SPLIT,
      "the split reads the last position's inputs, not the step's"),
    m("split_baseline_mean", CONTRAST, "baselines=tuple(torch.zeros_like(t) for t in inputs)",
      "baselines=tuple(t.mean() * torch.ones_like(t) for t in inputs)", T_SPLIT,
      "the readout split measured from each input's mean, not from zero"),
]

TEETH: list[Mutant] = [*LOOP, *SEAL_AND_CAPS, *PAIRED_AND_SPLIT]

_OLD_SUITE = "survived the tests that existed before issue 50 (run with the new test deselected); killed since by "
TEETH_EXPLAINED: dict[str, str] = {
    **{name: _OLD_SUITE + "tests/test_loop_stopping.py (a hand-built task with scripted validation scores, and "
       "train.py --patience with validation scripted)" for name in
       ("stop_on_a_tie", "stop_one_late", "stop_never_resets", "stop_ignored", "patience_not_passed")},
    **{name: _OLD_SUITE + "tests/test_loop_stopping.py (one weight, gradient 4: w after two clipped SGD steps; "
       "--clip reaches the loop)" for name in ("clip_not_applied", "clip_not_passed")},
    **{name: _OLD_SUITE + "tests/test_seal_encoding.py (the canonical encoding written out byte for byte)"
       for name in ("seal_float_rounded", "seal_vocab_joined", "seal_keys_unsorted", "seal_bool_is_int")},
    **{name: _OLD_SUITE + "tests/test_contract.py (has_alpha, editable, the trained context and the Gaussian "
       "asked of each kind, by hand)" for name in ("caps_mean_has_no_alpha", "caps_alpha_as_trained",
                                                     "caps_editable_any_alpha", "caps_trained_last",
                                                     "caps_gaussian_any_window")},
    **{name: _OLD_SUITE + "test_differences_either_way_by_size_then_line_and_buckets_at_their_edges (losses and "
       "gains of 100 chrF, lengths 10 and 20)" for name in ("paired_signed_order", "paired_bucket_closed")},
    **{name: _OLD_SUITE + "test_the_readout_split_names_each_input_its_own_share (a readout linear in each input)"
       for name in ("split_names_swapped", "split_wrong_step")},
}
