# ruff: noqa: E501  (a table of exact source snippets, one mutant a few lines)
"""More mutants for :mod:`scripts.mutate`: the partition softmax, ensembles, fusion, candidate lists,
int8 storage, <unk> replacement, truecasing, the training timeline and the lesson.

Realistic one-place mistakes of the kinds that pass a weak suite: a wrong row or index, an
off-by-one, a renormalisation dropped, two things swapped. Each names the tests meant to catch
it, kept short (the fast tests of that module). :data:`scripts.mutants.MUTANTS` includes these.
"""

from __future__ import annotations

from scripts.mutant_def import Mutant, m

SS = "nmt/training/sampled_softmax.py"
ENS = "nmt/decoding/ensemble.py"
FUS = "nmt/decoding/fusion.py"
CAND = "nmt/models/candidates.py"
QUANT = "nmt/models/quantize.py"
UNK = "nmt/decoding/unk_replace.py"
TRACE = "nmt/decoding/trace.py"
TC = "nmt/text/truecase.py"
TL = "nmt/training/timeline.py"
LES = "ui/lesson/views.py"

T_SS = "tests/test_sampled_softmax.py"
T_ENS = "tests/test_ensemble.py"
T_FUS = "tests/test_fusion.py"
T_TC = "tests/test_truecase.py"
T_LES = ("tests/test_lesson_logic.py", "tests/test_lesson.py::test_verdict_marks_a_right_and_a_wrong_guess",
         "tests/test_lesson.py::test_fig2_frame_keeps_one_decoding_and_buckets_of_ten_sentences",
         "tests/test_lesson.py::test_stop_index_falls_back_to_the_first_stop")
T_CAND = tuple(f"tests/test_candidates.py::{t}" for t in (
    "test_the_models_step_renormalises_over_the_list", "test_each_row_of_a_batch_renormalises_over_its_own_list",
    "test_build_by_hand",
    "test_greedy_and_beam_write_only_listed_words_and_the_full_list_changes_nothing",
    "test_an_ensemble_of_the_model_with_itself_decodes_with_the_list_as_the_model",
    "test_the_stepper_marks_words_that_came_in_through_a_source_word"))
T_Q = tuple(f"tests/test_int8.py::{t}" for t in (
    "test_quantize_by_hand", "test_round_trip_error_at_most_half_a_step", "test_int8_without_scales_is_refused",
    "test_int8_checkpoint_loads_within_bound"))
T_UNK = tuple(f"tests/test_unk_replace.py::{t}" for t in (
    "test_dictionary_hit_copy_fallback_and_never_eos", "test_unk_without_attention_or_with_a_tie_stays_and_output_stops_at_eos",
    "test_every_source_position_and_every_dictionary_case", "test_the_empty_and_the_partial_table_by_hand"))
T_TL = tuple(f"tests/test_timeline.py::{t}" for t in (
    "test_schedule_is_log_spaced_and_dense_early", "test_row_entropy_by_hand", "test_write_read_round_trip_and_rewind",
    "test_rewind_keeps_the_entry_of_the_update_it_resumes_at", "test_mean_entropy_leaves_out_the_end_of_sentence_row"))

SAMPLED_SOFTMAX = [
    m("ss_bias_first_rows", SS, "bias = None if self.bias is None else self.bias[self.candidates]",
      "bias = None if self.bias is None else self.bias[: len(self.candidates)]", T_SS,
      "V′'s logits take the first |V′| rows of the output bias, not V′'s"),
    m("ss_weight_first_rows", SS, "return F.linear(x, self.weight[self.candidates], bias)",
      "return F.linear(x, self.weight[: len(self.candidates)], bias)", T_SS,
      "V′'s logits take the first |V′| rows of the output weights"),
    m("ss_bias_dropped", SS, "return F.linear(x, self.weight[self.candidates], bias)",
      "return F.linear(x, self.weight[self.candidates], None)", T_SS, "the partition's logits without the output bias"),
    m("ss_partition_at_tau", SS, "if i > start and len(words) + len(new) > tau:",
      "if i > start and len(words) + len(new) >= tau:", T_SS, "a partition closes one word before τ"),
    m("ss_last_partition_dropped", SS, "    if len(targets) > start:\n", "    if len(targets) > start + 1:\n", T_SS,
      "a last partition of one sentence is dropped"),
    m("ss_pad_left_out", SS, "            start, words = i, {PAD_ID}\n", "            start, words = i, set()\n", T_SS,
      "a new partition's V′ lacks <pad>"),
    m("ss_label_smoothing_dropped", SS, "return sequence_loss(logits, positions(tgt_out, vocab), label_smoothing)",
      "return sequence_loss(logits, positions(tgt_out, vocab))", T_SS, "the partition loss ignores label smoothing"),
    m("ss_positions_right", SS, "pos = torch.searchsorted(vocab, tgt_out)",
      "pos = torch.searchsorted(vocab, tgt_out, right=True)", T_SS, "each target's position in V′ one to the right"),
]

ENSEMBLE = [
    m("ens_not_renormalised", ENS, "StepOutput(lp.mean(0).log_softmax(-1), att, nxt)", "StepOutput(lp.mean(0), att, nxt)",
      (T_ENS, "tests/test_ensemble_views.py::test_the_stepper_top_k_of_a_real_ensemble_step_sums_to_one"),
      "the members' mean log p shown as p without renormalising (sums to < 1)"),
    m("ens_sum_not_mean", ENS, "StepOutput(lp.mean(0).log_softmax(-1), att, nxt)",
      "StepOutput(lp.sum(0).log_softmax(-1), att, nxt)", T_ENS, "the members' log p summed, not averaged, then renormalised"),
    m("ens_arithmetic_mean", ENS, "StepOutput(lp.mean(0).log_softmax(-1), att, nxt)",
      "StepOutput(lp.exp().mean(0).log(), att, nxt)", T_ENS, "the other rule: the members' p averaged"),
    m("ens_state_norm_sum", ENS, "for s in self.members]).square().sum(0).sqrt()", "for s in self.members]).sum(0)",
      T_ENS, "the ensemble's ‖s‖ as the sum of the members' norms"),
    m("ens_state_norm_first", ENS, "return torch.stack([s.norm(dim=dim).float() for s in self.members]).square().sum(0).sqrt()",
      "return self.members[0].norm(dim=dim).float()", T_ENS, "the ensemble's ‖s‖ is its first member's"),
    m("ens_alpha_first_member", ENS, "alpha=torch.stack(alphas).mean(0) if alphas else None,",
      "alpha=alphas[0] if alphas else None,", T_ENS, "the ensemble's α is its first member's"),
    m("ens_context_first_member", ENS, "context=torch.cat([o.attended.context.float() for o in outs], -1),",
      "context=outs[0].attended.context.float(),", T_ENS, "the ensemble's c_i is its first member's"),
    m("ens_member_logprob_row_zero", ENS, "lps = self.member_log_probs[:, row, token_id].tolist()",
      "lps = self.member_log_probs[:, 0, token_id].tolist()", T_ENS, "each member's log p read from beam row 0"),
    m("ens_member_top_row_zero", ENS, "top=(self.itos[top_id[m][row]], top_p[m][row]))",
      "top=(self.itos[top_id[m][0]], top_p[m][0]))", T_ENS, "each member's first choice read from beam row 0"),
    m("ens_member_alpha_row_zero", ENS, "alpha=None if alphas[m] is None else alphas[m][row][:n_src],",
      "alpha=None if alphas[m] is None else alphas[m][0][:n_src],", T_ENS, "each member's α read from beam row 0"),
    m("ens_vocab_size_only", ENS, 'if getattr(lm, f"{side}_vocab").itos != getattr(first, f"{side}_vocab").itos:',
      'if len(getattr(lm, f"{side}_vocab").itos) != len(getattr(first, f"{side}_vocab").itos):', T_ENS,
      "members whose vocabularies have the same size but other ids are accepted"),
    m("ens_caption_z_inverted", "ui/stepper/views_ensemble.py", "{geo / step.prob:.2f}", "{step.prob / geo:.2f}",
      "tests/test_ensemble_views.py::test_members_caption_gives_the_normalised_geometric_mean_and_who_disagrees",
      "the caption's Z is p_ens over the geometric mean, not the other way"),
]

FUSION = [
    m("fus_shallow_not_renormalised", FUS, 'fused = scores if self.mode == "deep" or self.beta == 0 else scores.log_softmax(-1)',
      "fused = scores", T_FUS, "shallow fusion's score shown as log p (e^score sums to < 1)"),
    m("fus_beta_ignored", FUS, "scores = own + self.beta * lm_out.log_probs", "scores = own + lm_out.log_probs", T_FUS,
      "shallow fusion with β = 1 whatever β is"),
    m("fus_gate_ignored", FUS, "return g, self.W_f(g.unsqueeze(-1) * h_lm)", "return g, self.W_f(h_lm)", T_FUS,
      "deep fusion lets the LM's state in ungated"),
    m("fus_gate_tanh", FUS, "g = torch.sigmoid(self.gate(h_lm)).squeeze(-1)", "g = torch.tanh(self.gate(h_lm)).squeeze(-1)",
      T_FUS, "the gate squashed by tanh, not the logistic sigmoid"),
    m("fus_explain_tm_lm_swapped", FUS, "_top(tm, itos, k, True), _top(lm, itos, k, True), _top(sc, itos, k, False)",
      "_top(lm, itos, k, True), _top(tm, itos, k, True), _top(sc, itos, k, False)", T_FUS,
      "the panel's TM and LM columns swapped"),
    m("fus_explain_score_renormalised", FUS, "tm, lm, sc = step.tm_log_probs[0], step.lm_log_probs[0], step.score[0]",
      "tm, lm, sc = step.tm_log_probs[0], step.lm_log_probs[0], step.log_probs[0]", T_FUS,
      "the panel's shallow score is the renormalised log p, not log p_TM + β log p_LM"),
    m("fus_lm_state_not_selected", FUS, "FusedRecurrent(self.tm.index_select(dim, rows), self.lm.index_select(dim, rows))",
      "FusedRecurrent(self.tm.index_select(dim, rows), self.lm)", T_FUS, "the LM's state does not follow the beam's rows"),
    m("fus_tm_alone_ignored", FUS, "own = self.tm.step(enc, tm_state, context, alpha).log_probs if tm_alone else scores",
      "own = scores", T_FUS, "deep fusion's panel shows the fused p as the TM's own"),
]

CANDIDATE_LISTS = [
    m("cand_bias_first_rows", CAND, "bias = None if layer.bias is None else layer.bias[union]",
      "bias = None if layer.bias is None else layer.bias[: union.numel()]", T_CAND,
      "the list's logits take the first |U| rows of the output bias"),
    m("cand_frequent_without_specials", CAND, "return range(min(len(SPECIALS) + k_frequent, vocab_size))",
      "return range(min(k_frequent, vocab_size))", T_CAND, "the K most frequent words counted from id 0 (specials eat K)"),
    m("cand_translations_off_by_one", CAND, "for t in list(translations.get(w, ()))[: spec.k_translations]:",
      "for t in list(translations.get(w, ()))[: spec.k_translations + 1]:", T_CAND, "K′ + 1 translations per source word"),
    m("cand_row_not_cleared", CAND, "            mask[b] = False\n", "            pass\n", T_CAND,
      "a sentence with a list may still write every word"),
    m("cand_union_all_rows", CAND, "union = allowed.any(0).nonzero().squeeze(-1)", "union = allowed.all(0).nonzero().squeeze(-1)",
      T_CAND, "the batch's union taken as the words every row may use"),
]

QUANTIZE = [
    m("q_scale_128", QUANT, "amax / QMAX, torch.ones_like(amax)", "amax / 128, torch.ones_like(amax)", T_Q,
      "int8 scale max|row| / 128"),
    m("q_truncate", QUANT, "q = torch.round(w32 / scale[:, None]).clamp_(-QMAX, QMAX).to(torch.int8)",
      "q = (w32 / scale[:, None]).clamp_(-QMAX, QMAX).to(torch.int8)", T_Q, "int8 values truncated, not rounded"),
    m("q_amax_columns", QUANT, "amax = w32.abs().amax(dim=1)", "amax = w32.abs().amax(dim=0)", T_Q,
      "one scale per column, used as one per row"),
    m("q_dequantize_columns", QUANT, "return q.float() * scale.float()[:, None]", "return q.float() * scale.float()[None, :]",
      T_Q, "dequantising multiplies columns by the row scales"),
    m("q_zero_row_scale", QUANT, "torch.where(amax > 0, amax / QMAX, torch.ones_like(amax))", "amax / QMAX", T_Q,
      "an all-zero row gets scale 0 (0/0 when quantising)"),
    m("q_unscaled_int8_loaded", QUANT, '            raise ValueError(f"{k} is stored as int8 without its {SCALE_SUFFIX} scales")',
      "            pass", T_Q, "an int8 matrix without its scales is loaded as raw integers"),
]

UNK_REPLACEMENT = [
    m("unk_empty_table_ignored", UNK, "    if table is not None:\n", "    if table:\n", T_UNK,
      "an explicitly empty dictionary falls back to the trace's own"),
    m("unk_first_word_skipped", UNK, "dictionary={w: table[w] for w in trace.src_tokens if w in table}",
      "dictionary={w: table[w] for w in trace.src_tokens[1:] if w in table}", T_UNK,
      "the first source word's dictionary entry is left out"),
    m("unk_labels_swapped", TRACE, "DICTIONARY if known else COPIED", "COPIED if known else DICTIONARY", T_UNK,
      "dictionary and copied labels swapped"),
    m("unk_no_copy_fallback", TRACE, "self.dictionary[src] if known else src", "self.dictionary[src] if known else UNK", T_UNK,
      "a word the dictionary lacks stays <unk> instead of being copied"),
    m("unk_copies_word_before", TRACE, "out[s.i] = (j, self.src_tokens[j])", "out[s.i] = (j, self.src_tokens[j - 1])", T_UNK,
      "<unk> copies the word before the most attended one"),
]

TRUECASE = [
    m("tc_first_token_counted", TC, "possibly_use_first_token=False", "possibly_use_first_token=True", T_TC,
      "the truecaser learns from sentence-initial (lower-case) tokens"),
    m("tc_specials_recased", TC, "return [tokens[i] if i in odd else w for i, w in enumerate(out)]", "return list(out)",
      T_TC, "specials and tags come back as the stand-in word"),
    m("tc_restrict_by_key", TC, "return Truecaser({k: v for k, v in self.best.items() if v in words})",
      "return Truecaser({k: v for k, v in self.best.items() if k in words})", T_TC,
      "restrict keeps entries by the lower-cased key, not the spelling"),
    m("tc_spellings_not_lowered", TC, 'return cls({w.lower(): w for w in d["spellings"].split("\\n") if w})',
      'return cls({w: w for w in d["spellings"].split("\\n") if w})', T_TC, "a stored model's keys keep their capitals"),
    m("tc_detruecase_misaligned", "nmt/text/truecase.py", "    return out if len(out) == len(tokens) else tokens\n", "    return out\n",
      T_TC, "detruecasing may return another number of tokens"),
]

TIMELINE = [
    m("tl_entropy_not_renormalised", TL, "    a = a / np.clip(a.sum(axis=1, keepdims=True), 1e-12, None)\n", "", T_TL,
      "α rows not renormalised before their entropy"),
    m("tl_entropy_columns", TL, "    return -terms.sum(axis=1)", "    return -terms.sum(axis=0)", T_TL,
      "entropy summed over target steps, not source words"),
    m("tl_relative_by_rows", TL, "(h / math.log(a.shape[1])).tolist()", "(h / math.log(a.shape[0])).tolist()", T_TL,
      "relative entropy divided by log T_y, not log T_x"),
    m("tl_eos_row_kept", TL, 'words = [i for i, t in enumerate(entry["tgt_tokens"][p]) if t != "</s>"]',
      'words = list(range(len(entry["tgt_tokens"][p])))', T_TL, "the </s> row counts in the mean entropy"),
    m("tl_rewind_off_by_one", TL, 'self.drop(lambda e: e["update"] > update or not e.get("scheduled", True))',
      'self.drop(lambda e: e["update"] >= update or not e.get("scheduled", True))', T_TL,
      "rewinding to an update drops that update's own entry"),
    m("tl_drop_wrong_key", TL, "if k[0] not in dead}", "if k[1] not in dead}", T_TL,
      "dropped entries' α looked up by probe, not update"),
    m("tl_schedule_seven", TL, "MANTISSAS_X2 = (2, 3, 4, 6, 8, 10, 14)", "MANTISSAS_X2 = (2, 3, 4, 6, 8, 10, 12)", T_TL,
      "the schedule records 6·10^k instead of 7·10^k"),
    m("tl_add_unsorted", TL, '        self.entries.sort(key=lambda e: e["update"])\n', "", T_TL,
      "entries kept in the order added, not by update"),
]

LESSON = [
    m("les_negative_guess", LES, "ok = guess is not None and 0 <= guess < len(a)", "ok = guess is not None and guess < len(a)",
      T_LES, "a negative guess counts (Python indexes it from the end)"),
    m("les_guess_one_past", LES, "ok = guess is not None and 0 <= guess < len(a)",
      "ok = guess is not None and 0 <= guess <= len(a)", T_LES, "a guess one past the sentence counts"),
    m("les_argmax_skips_eos", LES, "j = max(range(len(a)), key=a.__getitem__)\n    ok = ",
      "j = max(range(len(a) - 1), key=a.__getitem__)\n    ok = ",
      T_LES, "the model's argmax never at the last source token"),
    m("les_min_bucket_strict", LES, '(rows["n"] >= min_n)]', '(rows["n"] > min_n)]', T_LES,
      "a bucket of exactly the minimum size is left out"),
    m("les_any_guess_matches", LES, "return self.guess is not None and self.guess == self.argmax",
      "return self.guess is not None", T_LES, "any guess is called right"),
    m("les_last_stop_excluded", LES, "return k - 1 if 1 <= k <= n_stops else 0", "return k - 1 if 1 <= k < n_stops else 0",
      T_LES, "the last stop's number opens the first stop"),
    m("les_guess_alpha_of_argmax", LES, "float(a[guess]) if ok else None)", "float(a[j]) if ok else None)", T_LES,
      "the guess is shown with the argmax's α"),
    m("les_gaps_swapped", LES, "round(float(r[better] - r[worse]), 2)", "round(float(r[worse] - r[better]), 2)", T_LES,
      "Fig. 2's gaps with their sign flipped"),
]

MORE: list[Mutant] = [*SAMPLED_SOFTMAX, *ENSEMBLE, *FUSION, *CANDIDATE_LISTS, *QUANTIZE, *UNK_REPLACEMENT, *TRUECASE,
                      *TIMELINE, *LESSON]

# Survivors and why: a survivor of the latest run is either explained here (an equivalent edit, or a
# gap left open on purpose) or given a test. scripts/mutate.py writes this table into bench/mutation.json.
EXPLAINED: dict[str, str] = {
    "cand_union_all_rows": "survived the first run of these mutants: every candidate-list test gave the batch one "
                           "sentence, where the union of the lists is the list; killed since by "
                           "test_each_row_of_a_batch_renormalises_over_its_own_list (two sentences, two lists)",
    "tc_detruecase_misaligned": "survived the first run: no test gave detruecasing a token Moses drops or splits; "
                                "killed since by test_detruecasing_never_misaligns_the_sentence",
}
