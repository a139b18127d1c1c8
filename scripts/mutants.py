# ruff: noqa: E501  (a table of exact source snippets, one mutant a few lines)
"""The mutants of :mod:`scripts.mutate`: realistic one-place mistakes, each with the tests meant to catch it.

A mutant is (name, file, the exact old snippet, its replacement, the tests to run, what it breaks).
The first thirteen are the survivors of issue 24's hand-made round; :mod:`scripts.mutants_more` adds
the partition softmax, ensembles, fusion, candidate lists, int8 storage, <unk> replacement,
truecasing, the timeline and the lesson; :mod:`scripts.mutants_teeth` the training loop, the seal, the
contract's capabilities, the paired comparison and the contrastive split (issue 50). Keep each snippet
unique in its file (the script reports an error otherwise) and each test list short (the tests that
matter).
"""

from __future__ import annotations

from scripts.mutant_def import Mutant, m
from scripts.mutants_more import EXPLAINED as MORE_EXPLAINED
from scripts.mutants_more import MORE
from scripts.mutants_teeth import TEETH, TEETH_EXPLAINED

DEC = "nmt/decoding/search.py"
SRC = "nmt/decoding/source.py"
REC = "nmt/decoding/recorder.py"
BEAM = "nmt/decoding/beam.py"
STEP = "nmt/decoding/stepper.py"
LUO = "nmt/models/luong.py"
LUO_ATT = "nmt/models/luong_attention.py"
FAITH = "nmt/explanation/faithfulness.py"
DEBATE = "nmt/explanation/debate.py"
T_MUT = "tests/test_mutants.py"
T_DEC = "tests/test_decoding.py"
T_ATT = "tests/test_attribution.py"
T_SUR = "tests/test_surgery.py"
T_MOD = "tests/test_model.py"
T_LUO = "tests/test_luong.py"
T_MET = "tests/test_metrics.py"
T_EXP = "tests/test_explanation.py"
T_BEAM = "tests/test_beam_views.py"
T_LEN = "tests/test_length_quality.py"
T_EVAL = "tests/test_evalsets.py"
T_IG = "tests/test_ig_completeness.py"


def t(test: str) -> str:
    """A test of tests/test_mutants.py by name."""
    return f"{T_MUT}::{test}"


BEAM_REF = t("test_beam_search_equals_a_reference_beam_search")


SURVIVORS = [
    m("beam_eos_rank_k", BEAM, "(tok != EOS_ID or rank < k)", "(tok != EOS_ID or rank <= k)", BEAM_REF,
      "beam search accepts </s> at rank k (0-based), one past the k best"),
    m("beam_expand_k", BEAM, "cand.topk(min(2 * k, k * V), dim=-1)", "cand.topk(min(k, k * V), dim=-1)", BEAM_REF,
      "k instead of 2k candidates per step"),
    m("beam_no_top_up", BEAM, "search.finished.extend((how.norm(s.logprob, len(s.tokens)), s) for s in new_live)",
      "pass", t("test_beam_at_the_length_limit_finishes_the_live_hypotheses"),
      "the n-best list is not topped up from the live hypotheses when the search stops"),
    m("max_target_len_plus_one", SRC, "return min(2 * src_len + 10, 250)", "return min(2 * src_len + 11, 250)",
      t("test_max_target_len_by_hand"), "the maximum target length off by one"),
    m("greedy_limit_off_by_one", DEC, "if chosen[r] != EOS_ID and i + 1 < limits[b]:",
      "if chosen[r] != EOS_ID and i < limits[b]:",
      t("test_a_model_that_never_ends_stops_at_the_hand_computed_length"), "greedy decodes one step past the limit"),
    m("truncation_at_100", SRC, "truncated = len(tokens) > max_src_tokens", "truncated = len(tokens) >= max_src_tokens",
      t("test_truncation_flag_at_exactly_the_limit"), "the truncation flag is set at exactly 100 tokens"),
    m("sentence_bleu_no_effective_order", "nmt/text/metrics.py", "BLEU(effective_order=True).sentence_score",
      "BLEU().sentence_score", t("test_sentence_bleu_uses_effective_order"), "sentence BLEU without effective order"),
    m("shuffle_energies_unshuffled", "nmt/decoding/surgery.py", "return alpha[:, perm], energies[:, perm]",
      "return alpha[:, perm], energies", t("test_shuffle_edit_permutes_alpha_and_energies_alike"),
      "the shuffle edit leaves the energies unshuffled"),
    m("first_change_length_only", "nmt/decoding/surgery.py", "return None if len(a) == len(b) else min(len(a), len(b))",
      "return None", t("test_first_change_sees_a_change_of_length_only"), "first_change misses a change of length only"),
    m("ig_steps_ignored", "nmt/explanation/attribution.py", "first = IG_START if ig_steps is None else ig_steps",
      "first = IG_START", (f"{T_ATT}::test_integrated_gradients_are_complete",
                           t("test_a_fixed_number_of_ig_points_is_used_as_given")), "a fixed ig_steps is ignored"),
    m("links_to_eos", FAITH, "    n = att.src_len - 1\n", "    n = att.src_len\n",
      t("test_argmax_links_never_point_at_the_source_eos"), "attribution links may point at the source </s>"),
    m("permutation_ignores_seed", DEBATE, "gen = torch.Generator().manual_seed(seed)",
      "gen = torch.Generator().manual_seed(0)", t("test_permutation_test_follows_its_seed"),
      "the permutation test ignores its seed"),
    m("duplicate_roots_kept", "nmt/text/corpora.py", "if all(r.path != o.path and r.name != o.name for o in out):",
      "if all(r.path != o.path or r.name != o.name for o in out):", t("test_duplicate_data_roots_are_dropped"),
      "a data root with the folder or the name of an earlier one is kept"),
    m("paper_beside_any_test", "ui/figures/length.py", 'if "newstest2014" in test and name in paper:',
      "if name in paper:", t("test_paper_numbers_only_beside_newstest2014"),
      "the paper's newstest2014 numbers shown beside any test set"),
]

DECODING = [
    m("length_penalty_gnmt_4", BEAM, "((5.0 + length) / 6.0) ** gnmt_alpha", "((4.0 + length) / 6.0) ** gnmt_alpha",
      f"{T_DEC}::test_nbest_scores_are_forced_log_p_over_the_length_penalty", "GNMT length penalty with 4 for 5"),
    m("length_penalty_length_plus_one", BEAM, "return float(max(length, 1))", "return float(max(length + 1, 1))",
      f"{T_DEC}::test_nbest_scores_are_forced_log_p_over_the_length_penalty", "length normalisation by |y| + 1"),
    m("beam_rank_finished_ascending", BEAM, "ranked = sorted(finished, key=lambda x: -x[0])",
      "ranked = sorted(finished, key=lambda x: x[0])", BEAM_REF, "finished hypotheses ranked worst first"),
    m("beam_stop_at_k_minus_one", BEAM, "if len(search.finished) >= k or at_limit or not new_live:",
      "if len(search.finished) >= k - 1 or at_limit or not new_live:", BEAM_REF, "beam stops one finished early"),
    m("beam_norm_by_logprob_only", BEAM, "return logprob / length_penalty(length, self.length_norm, self.gnmt_alpha)",
      "return logprob", BEAM_REF, "finished hypotheses ranked by raw log p whatever the norm"),
    m("beam_skip_pad_rows", BEAM, "sel += [a * k + p for p in parents] + [a * k] * pad",
      "sel += [a * k + p for p in reversed(parents)] + [a * k] * pad", BEAM_REF, "live states paired with wrong parents"),
    m("greedy_argmin", DEC, "masked(lm, rules, log_probs, i)).argmax(-1).tolist(), False",
      "masked(lm, rules, log_probs, i)).argmin(-1).tolist(), False",
      f"{T_DEC}::test_tiny_model_translates_its_training_pairs", "greedy takes the least likely word"),
    m("finish_keeps_eos", "nmt/decoding/trace.py", "            if s.token == EOS:\n                break\n", "",
      f"{T_DEC}::test_tiny_model_translates_its_training_pairs", "the translation text includes </s>"),
    m("stepper_done_off_by_one", STEP, "len(steps) >= self.max_len)", "len(steps) > self.max_len)",
      t("test_a_model_that_never_ends_stops_at_the_hand_computed_length"), "the stepper runs one past the limit"),
    m("truncate_keeps_all", SRC, "    tokens = tokens[:max_src_tokens]\n", "",
      t("test_truncation_flag_at_exactly_the_limit"), "a long source is flagged but not cut"),
    m("back_forgets_state", STEP, "            self.trace.steps.pop()\n            self._states.pop()\n",
      "            self.trace.steps.pop()\n", f"{T_DEC}::test_back_then_step_returns_the_same_state",
      "back() leaves the decoder state one step ahead"),
    m("finished_without_eos", REC, "trace.finished = bool(trace.steps) and trace.steps[-1].token_id == EOS_ID",
      "trace.finished = bool(trace.steps)", t("test_a_model_that_never_ends_stops_at_the_hand_computed_length"),
      "a translation cut at the length limit counts as finished"),
]

MODEL = [
    m("gru_update_gate_swapped", "nmt/models/rnnsearch.py", "return h_prev + z * (h_tilde - h_prev)",
      "return h_tilde + z * (h_prev - h_tilde)", T_MOD, "GRU update gate z and 1 − z swapped"),
    m("gru_reset_outside", "nmt/models/rnnsearch.py", "h_tilde = torch.tanh(gx_h + mm(r * h_prev, u_h))",
      "h_tilde = torch.tanh(gx_h + r * mm(h_prev, u_h))", T_MOD, "the reset gate applied after U (Cho's other variant)"),
    m("attention_energy_no_tanh", "nmt/models/rnnsearch.py", "return self.v_a(torch.tanh(q + keys)).squeeze(-1)",
      "return self.v_a(q + keys).squeeze(-1)", (T_MOD, t("test_alignment_model_by_hand")),
      "alignment model without its tanh"),
    m("attention_mask_ignored", "nmt/models/rnnsearch.py",
      'return torch.softmax(energies.masked_fill(~mask, float("-inf")), dim=-1)',
      "return torch.softmax(energies, dim=-1)", (T_MOD, t("test_alignment_model_by_hand")),
      "padding gets attention weight"),
    m("maxout_min", "nmt/models/rnnsearch.py", "t = t_tilde.unflatten(-1, (-1, 2)).amax(-1)",
      "t = t_tilde.unflatten(-1, (-1, 2)).amin(-1)", (T_MOD, t("test_readout_and_initial_state_by_hand")), "maxout takes the minimum"),
    m("readout_no_context", "nmt/models/rnnsearch.py", "t_tilde = self.U_o(s_prev) + self.V_o(y_emb) + self.C_o(context)",
      "t_tilde = self.U_o(s_prev) + self.V_o(y_emb)", (T_MOD, t("test_readout_and_initial_state_by_hand")), "the readout ignores c_i"),
    m("s0_from_forward", "nmt/models/rnnsearch.py", "return torch.tanh(self.W_s(h_bwd_first))", "return self.W_s(h_bwd_first)",
      (T_MOD, t("test_readout_and_initial_state_by_hand")), "s_0 without its tanh"),
    m("annotations_unmasked", "nmt/models/rnnsearch.py",
      "annotations = torch.cat([h_fwd, h_bwd], dim=-1) * mask.unsqueeze(-1)",
      "annotations = torch.cat([h_fwd, h_bwd], dim=-1)", (T_MOD, t("test_readout_and_initial_state_by_hand")), "padding annotations not zeroed"),
    m("annotations_order", "nmt/models/rnnsearch.py", "annotations = torch.cat([h_fwd, h_bwd], dim=-1) * mask",
      "annotations = torch.cat([h_bwd, h_fwd], dim=-1) * mask", (T_MOD, t("test_readout_and_initial_state_by_hand")), "h_j = [←h_j; →h_j] instead of [→; ←]"),
    m("log_softmax_dim0", "nmt/models/rnnsearch.py", "return torch.log_softmax(logits, dim=-1)",
      "return torch.log_softmax(logits, dim=0)", T_MOD,
      "log-softmax over the batch"),
]

LUONG = [
    m("luong_gaussian_sigma", LUO_ATT, "sigma = self.D / 2", "sigma = self.D", T_LUO, "local-p σ = D, not D/2"),
    m("luong_gaussian_sign", LUO_ATT, "torch.exp(-dist.square() / (2 * sigma**2))",
      "torch.exp(-dist.abs() / (2 * sigma**2))", T_LUO, "Gaussian on |s − p_t| instead of its square"),
    m("luong_window_strict", LUO_ATT, "valid = valid & (dist.abs() <= self.D)", "valid = valid & (dist.abs() < self.D)",
      T_LUO, "local window one short on each side"),
    m("luong_position_unscaled", LUO_ATT, "position = last * torch.sigmoid(gate)", "position = torch.sigmoid(gate)",
      T_LUO, "p_t = sigmoid(…) without (S − 1)"),
    m("luong_concat_no_tanh", LUO_ATT, "e = self.v_a(torch.tanh(q.unsqueeze(2) + keys.unsqueeze(1))).squeeze(-1)",
      "e = self.v_a(q.unsqueeze(2) + keys.unsqueeze(1)).squeeze(-1)", T_LUO, "concat score without tanh"),
    m("luong_no_input_feeding", LUO, "feed = n if cfg.input_feeding else 0", "feed = 0", T_LUO,
      "input feeding off whatever the config says"),
    m("luong_window_floor", LUO_ATT, "window = torch.stack([(position - self.D).ceil().clamp(min=0),",
      "window = torch.stack([(position - self.D).floor().clamp(min=0),", T_LUO, "window start rounded down"),
]

METRICS = [
    m("corpus_bleu_lowercase_ignored", "nmt/text/metrics.py",
      "metric = BLEU(lowercase=lowercase, tokenize=tokenize, force=True) if tokenize else BLEU(lowercase=lowercase)",
      "metric = BLEU(tokenize=tokenize, force=True) if tokenize else BLEU()", T_MET, "lowercased BLEU is cased"),
    m("bleu_by_length_closed_bucket", "nmt/text/metrics.py", "idx = [k for k, n in enumerate(src_lengths) if lo <= n < hi]",
      "idx = [k for k, n in enumerate(src_lengths) if lo <= n <= hi]", T_MET, "length buckets overlap at their ends"),
    m("length_buckets_miss_top", "nmt/text/metrics.py", "for lo in range(0, top + 1, width)]", "for lo in range(0, top, width)]",
      T_MET, "the longest sentences fall outside every bucket"),
    m("tok_lc_not_lowercased", "nmt/text/metrics.py", "[\" \".join(tok.tokenize(r)) for r in refs], lowercase=True, tokenize=\"none\")",
      "[\" \".join(tok.tokenize(r)) for r in refs], lowercase=False, tokenize=\"none\")", T_MET,
      "tokenised BLEU is cased"),
    m("chrf_swapped", "nmt/text/metrics.py", "CHRF().sentence_score(hyp, [ref])", "CHRF().sentence_score(ref, [hyp])", T_MET,
      "sentence chrF with hypothesis and reference swapped"),
    m("aer_formula", "nmt/explanation/align.py", '"aer": 1.0 - (a_s + a_p) / (a_n + s_n) if a_n + s_n else 0.0',
      '"aer": 1.0 - (2 * a_s) / (a_n + s_n) if a_n + s_n else 0.0', "tests/test_align.py", "AER counts only sure links"),
    m("aer_possible_without_sure", "nmt/explanation/align.py", "        p = p | s\n", "", "tests/test_align.py",
      "P is not taken to include S"),
    m("align_argmax_eos", "nmt/explanation/align.py", "        real = s.alpha[:n_src]\n        links.add((max(range(n_src)",
      "        real = s.alpha\n        links.add((max(range(n_src + 1)", "tests/test_align.py",
      "α links may point at the source </s>"),
]

SURGERY = [
    m("zero_not_renormalised", "nmt/decoding/surgery.py", "        return out / total, energies\n", "        return out, energies\n",
      T_SUR, "the zero edit does not renormalise α"),
    m("uniform_wrong", "nmt/decoding/surgery.py", "return torch.full_like(alpha, 1.0 / Tx), energies",
      "return torch.full_like(alpha, 1.0 / (Tx + 1)), energies", T_SUR, "uniform α over Tx + 1"),
    m("onehot_wrong_j", "nmt/decoding/surgery.py", "        out[0, edit.j] = 1.0\n", "        out[0, edit.j - 1] = 1.0\n", T_SUR,
      "the one-hot edit puts its weight one word to the left"),
    m("energies_no_softmax", "nmt/decoding/surgery.py", 'return torch.softmax(values, dim=-1), values  # eq. (6)',
      "return values / values.sum(), values  # eq. (6)", T_SUR, "energies edit without eq. 6's softmax"),
    m("freeze_not_held", "nmt/decoding/surgery.py", "        if plan.freeze_from == i:\n            frozen = alpha\n", "",
      T_SUR, "freezing α does nothing"),
    m("before_alpha_is_edited", "nmt/decoding/surgery.py", "record.before[i] = own.alpha[0].tolist()",
      "record.before[i] = alpha[0].tolist()", (T_SUR, t("test_surgery_records_the_models_own_alpha_before_the_edit")),
      "the α recorded as 'before the edit' is the edited one"),
    m("copy_edit_wrong_step", "nmt/decoding/surgery.py", "return torch.tensor([original_alpha[edit.step]], dtype=alpha.dtype",
      "return torch.tensor([original_alpha[edit.step - 1]], dtype=alpha.dtype", T_SUR, "copy takes α from the step before"),
    m("target_without_eos", "nmt/decoding/surgery.py", "            tgt.append(EOS_ID)\n", "            pass\n", T_SUR,
      "a forced target is not closed with </s>"),
]

ATTRIBUTION = [
    m("saliency_l1", "nmt/explanation/attribution.py", 'out["saliency"] = g.norm(dim=-1).cpu().numpy()',
      'out["saliency"] = g.abs().sum(-1).cpu().numpy()', T_ATT, "saliency as an L1 norm"),
    m("x_grad_no_input", "nmt/explanation/attribution.py", 'out["x_grad"] = (xs.detach() * g).sum(-1).cpu().numpy()',
      'out["x_grad"] = g.sum(-1).cpu().numpy()', T_ATT, "gradient × input without the input"),
    m("ig_wrong_baseline", "nmt/explanation/attribution.py", 'fill = unk if baseline == "unk" else torch.zeros_like(unk)',
      "fill = torch.zeros_like(unk)", T_ATT, "the <unk> baseline is zero"),
    m("loo_embed_sign", "nmt/explanation/attribution.py", "return (lp[0:1] - lp[1:]).T  # (K, Tx)",
      "return (lp[1:] - lp[0:1]).T  # (K, Tx)", T_ATT, "leave-one-out with its sign flipped"),
    m("loo_alpha_keep_self", "nmt/explanation/attribution.py",
      "masks = torch.cat([keep.view(1, Tx), keep & ~torch.eye(Tx, dtype=torch.bool, device=e.device)])",
      "masks = torch.cat([keep.view(1, Tx), keep.expand(Tx, Tx)])", T_ATT, "leave-one-out in α leaves nothing out"),
    m("ig_refine_never", "nmt/explanation/attribution.py", "        if ig_steps is None:\n            _refine_ig(", "        if False:\n            _refine_ig(",
      T_IG, "IG points never raised by the gap"),
    m("ig_refine_tol_wrong", "nmt/explanation/attribution.py", "bad = np.flatnonzero(np.abs(out.ig_delta) > IG_GAP_TOL)",
      "bad = np.flatnonzero(np.abs(out.ig_delta) > 10 * IG_GAP_TOL)", T_IG, "IG refined only above 0.5 nats"),
    m("kendall_no_ties", "nmt/explanation/attribution.py", "return float(kendalltau(a, b).statistic)",
      "return float(kendalltau(a, b, variant='c').statistic)", T_ATT, "Kendall τ-c instead of τ-b"),
    m("top1_argmin", "nmt/explanation/attribution.py", "return float(int(np.argmax(a)) == int(np.argmax(b)))",
      "return float(int(np.argmax(a)) == int(np.argmin(b)))", T_ATT, "top-1 compares with the argmin"),
    m("jsd_log2", "nmt/explanation/attribution.py", "    return max(0.0, 0.5 * kl(p) + 0.5 * kl(q))",
      "    return max(0.0, (0.5 * kl(p) + 0.5 * kl(q)) / math.log(2))", T_ATT, "JSD in bits, documented in nats"),
    m("target_log_prob_wrong_row", "nmt/explanation/attribution.py", "return sorted_out[torch.argsort(order)]", "return sorted_out",
      T_ATT, "rows of the Captum forward not put back in order"),
    m("logprob_of_argmax", "nmt/explanation/attribution.py", "lp = run.log_probs[0, step_t, tgt_out[0, step_t]]",
      "lp = run.log_probs[0, step_t].max(-1).values", f"{T_ATT}::test_integrated_gradients_are_complete",
      "log p of the model's argmax word recorded instead of the explained (forced) word's"),
]

FAITHFULNESS = [
    m("jsd_half_missing", DEBATE, "    return 0.5 * kl.sum(-1)\n", "    return kl.sum(-1)\n", f"{T_SUR}::test_jsd_by_hand",
      "JSD without its ½"),
    m("simplex_theta_off", DEBATE, "theta = css.gather(-1, rho - 1) / rho.to(v.dtype)",
      "theta = css.gather(-1, rho - 1) / (rho + 1).to(v.dtype)", f"{T_SUR}::test_simplex_projection_by_hand", "simplex projection with a wrong θ"),
    m("tvd_no_half", DEBATE, "tvd = 0.5 * (p - p0).abs().sum(-1)", "tvd = (p - p0).abs().sum(-1)", f"{T_SUR}::test_permutation_test_matches_a_step_with_the_shuffled_alpha",
      "total variation distance without its ½"),
    m("adv_eps_ignored", DEBATE, "ok = ((p_y - p_ref).abs() <= eps) & (rival < top) & (d > best_jsd)",
      "ok = (rival < top) & (d > best_jsd)", (f"{T_SUR}::test_adversarial_alpha_stays_on_the_simplex_and_keeps_the_output_word", t("test_adversarial_alpha_keeps_its_constraints_even_without_the_penalty")), "adversarial α may change p(y_i) by any amount"),
    m("adv_argmax_ignored", DEBATE, "ok = ((p_y - p_ref).abs() <= eps) & (rival < top) & (d > best_jsd)",
      "ok = ((p_y - p_ref).abs() <= eps) & (d > best_jsd)", (f"{T_SUR}::test_adversarial_alpha_stays_on_the_simplex_and_keeps_the_output_word", t("test_adversarial_alpha_keeps_its_constraints_even_without_the_penalty"),
      t("test_adversarial_alpha_keeps_the_models_argmax_when_the_forced_word_is_not_it")),
      "adversarial α may change the model's own best word"),
    m("summary_tau_nan_kept", FAITH, "v = [x for x in xs if x is not None and not math.isnan(x)]",
      "v = [x for x in xs if x is not None]", f"{T_ATT}::test_argmax_links_and_summary_by_hand", "undefined τ (NaN) enters the means"),
    m("aer_target_eos_linked", FAITH, "        if att.tgt_tokens[i] != EOS:\n", "        if True:\n",
      t("test_argmax_links_never_point_at_the_source_eos"), "the target </s> gets an attribution link"),
]

VIEWS_AND_DATA = [
    m("explanation_scale_by_sum", "ui/explanation/views.py", "peak = float(np.max(np.abs(v))) if v.size else 0.0",
      "peak = float(np.sum(np.abs(v))) if v.size else 0.0", ("tests/test_explanation.py::test_scale_row_divides_by_the_largest_absolute_value", "tests/test_explanation.py::test_bars_scale_each_row_and_rank_by_signed_score"), "rows scaled by their sum, not their peak"),
    m("explanation_alpha_tau_zero", "ui/explanation/views.py",
      '"top word": _top_word(att, alpha), "τ": 1.0, "top-1": 1.0, "JSD": 0.0}]',
      '"top word": _top_word(att, alpha), "τ": 0.0, "top-1": 1.0, "JSD": 0.0}]', ("tests/test_explanation.py::test_agreement_table_against_hand_computed_values", t("test_alphas_own_row_in_the_agreement_table_agrees_with_itself")), "α's own row claims τ = 0"),
    m("explanation_rank_ascending", "ui/explanation/views.py", "order = np.argsort(-raw, kind=\"stable\")",
      "order = np.argsort(raw, kind=\"stable\")", "tests/test_explanation.py::test_bars_scale_each_row_and_rank_by_signed_score", "rank 1 given to the lowest score"),
    m("explanation_nan_tau_in_mean", "ui/explanation/views.py", "vals = [v for v in measures[k] if not math.isnan(v)]",
      "vals = list(measures[k])", "tests/test_explanation.py::test_sentence_agreement_averages_steps_and_skips_undefined_tau", "sentence agreement means include NaN τ"),
    m("beam_step_rank_ascending", "ui/beam/views.py",
      "for r, h in enumerate(sorted(hyps, key=lambda h: -h.logprob), start=1):",
      "for r, h in enumerate(sorted(hyps, key=lambda h: h.logprob), start=1):", "tests/test_beam_views.py::test_beam_step_frames", "beam step table ranked worst first"),
    m("corpora_inside_unresolved", "nmt/text/corpora.py", "return real is not None and real.is_relative_to(root)",
      "return path.is_relative_to(root)", "tests/test_evalsets.py::test_links_out_of_the_builtin_root_are_not_followed", "a symbolic link out of a data root is followed"),
    m("corpora_builtin_name_allowed", "nmt/text/corpora.py", "if str(e[\"name\"]).strip() == BUILTIN_NAME:",
      "if False:", t("test_the_builtin_root_name_is_reserved"), "a config root may call itself built-in"),
    m("trace_unk_copy_eos", "nmt/decoding/trace.py", "            a = s.alpha[:real]\n", "            a = s.alpha\n",
      f"{T_DEC}::test_unk_replacement_copies_the_most_attended_source_word_never_eos",
      "<unk> replacement may copy the source </s>"),
    m("trace_unk_copy_ties", "nmt/decoding/trace.py", "            if a.count(best) == 1:\n", "            if True:\n",
      f"{T_DEC}::test_unk_replacement_in_the_mean_context_copies_nothing_in_decoding_and_in_the_view",
      "<unk> replacement copies on a tie (uniform α)"),
]

T_CAND = "tests/test_candidates.py"
CANDIDATES = [
    m("candidates_ignored_by_the_step", "nmt/models/rnnsearch.py",
      "logits = output_logits(self.W_o, self.dropout(t), allowed)", "logits = output_logits(self.W_o, self.dropout(t), None)",
      T_CAND, "RNNsearch's step ignores the sentence's candidate list"),
    m("candidates_ignored_by_luong", LUO, "logits = output_logits(self.W_s, h_tilde, allowed)",
      "logits = output_logits(self.W_s, h_tilde, None)", T_CAND, "Luong's step ignores the candidate list"),
    m("candidates_rows_unmasked", "nmt/models/candidates.py", "    return out.masked_fill(~allowed, float(\"-inf\"))",
      "    return out", T_CAND, "a row may write any word of the batch's union, not only its own list"),
    m("candidates_lost_in_select", "nmt/models/state.py",
      "t.index_select(0, rows) for t in self._parts()))", "t.index_select(0, rows) for t in self._parts()[:-1]))",
      T_CAND, "beams lose their sentence's candidate list when rows are selected"),
    m("candidates_via_frequent", "nmt/models/candidates.py", "if k >= len(SPECIALS) + spec.k_frequent and", "if",
      T_CAND, "a frequent word is marked as having come in through a source word"),
]

T_SEG = "tests/test_segments.py"
SEGMENTS = [
    m("segments_warmup_off_by_one", "nmt/training/segments.py", "return lr * (done + 1) / warmup if done < warmup else None",
      "return lr * done / warmup if done < warmup else None", T_SEG, "the warm-up's first update at learning rate 0"),
    m("segments_weights_not_loaded", "nmt/training/setup.py", "        model.load_state_dict(segments.init_weights(data.init))\n",
      "        pass\n", T_SEG, "a new segment starts from fresh weights, not the checkpoint's"),
    m("segments_epoch_position_lost", "nmt/training/segments.py", '"batch_in_epoch": int(meta.get("batch_in_epoch", 0)),',
      '"batch_in_epoch": 0,', T_SEG, "a segment repeats the batches of the epoch the last one had seen"),
    m("segments_history_dropped", "nmt/training/segments.py", 'return [*st.get("segments_before", []), now]', "return [now]",
      T_SEG, "a checkpoint forgets the segments before its own"),
    m("segments_resume_loses_origin", "nmt/training/segments.py", '"from": st.get("segment_from")}', '"from": None}',
      T_SEG, "a resumed segment forgets which checkpoint it started from"),
]

T_LVP = "tests/test_lv_probe.py"
LARGE_VOCAB = [
    m("probe_tau_gain_ignored", "scripts/lv_probe.py", 'part["tok_s"] >= TAU_GAIN * full["tok_s"]',
      'part["tok_s"] >= full["tok_s"]', T_LVP, "the partition softmax chosen for any gain"),
    m("probe_memory_ignored", "scripts/lv_probe.py", '(r["worst_case_gb"] or 0) <= share * memory_gb]', "True]",
      T_LVP, "a batch that runs out of memory on long sentences is chosen"),
    m("probe_compiled_not_kept", "scripts/lv_probe.py", 'return batch, pick["tau"], bool(pick.get("compiled"))',
      'return batch, pick["tau"], False', T_LVP, "the faster compiled step is never used"),
    m("stored_ids_any_vocab", "nmt/text/data.py", "if c is not None and c.src_vocab is src_vocab and c.tgt_vocab is tgt_vocab:",
      "if c is not None:", "tests/test_data.py", "ids stored under other vocabularies are batched as if they were these"),
    m("bars_at_most_flipped", "scripts/large_vocab_results.py", "met = None if value is None else (value <= threshold if at_most else value >= threshold)",
      "met = None if value is None else value >= threshold", "tests/test_large_vocab_results.py",
      "the <unk> share bar is met by having more <unk> lines"),
]

T_TL = "tests/test_timeline.py"
T_TYPED = "tests/test_app_stepper_inputs.py"
TIMELINE_AND_TYPED = [
    m("timeline_shows_tokens", "ui/timeline/views.py", 'words = entry["translations"][probe].split()',
      'words = [w for w in entry["tgt_tokens"][probe] if w != "</s>"]', T_TL,
      "a truecased model's translation shown as its lowercased tokens (« elle lut »)"),
    m("note_head_cuts_in_parentheses", "ui/timeline/views.py", 'if depth <= 0 and ch in ":;":', 'if ch in ":;":', T_TL,
      "the projector's one-line note cut inside a parenthesis"),
    m("typed_sentence_ignores_hand_choice", "ui/stepper/controller.py",
      'if state.get("w_preset") == CUSTOM and not state.get("_model_by_hand"):',
      'if state.get("w_preset") == CUSTOM:', T_TYPED,
      "a pair chosen by hand is switched away when a sentence is typed"),
    m("typed_group_without_search", "ui/common/models.py", "if g.name == name and g.search is not None]",
      "if g.name == name]",
      T_TYPED, "typed sentences go to a pair with no RNNsearch"),
]

EXPLAINED: dict[str, str] = {**MORE_EXPLAINED, **TEETH_EXPLAINED}

__all__ = ["EXPLAINED", "MUTANTS", "Mutant", "m"]

MUTANTS: list[Mutant] = [*SURVIVORS, *CANDIDATES, *SEGMENTS, *LARGE_VOCAB, *TIMELINE_AND_TYPED, *DECODING, *MODEL, *LUONG, *METRICS, *SURGERY, *ATTRIBUTION, *FAITHFULNESS,
                         *VIEWS_AND_DATA, *MORE, *TEETH]
