"""The README's generated blocks, each built from the parsed results files (:mod:`scripts.readme_numbers`).

Every function takes the sources by short name (``m30k``, ``luong``, ``europarl``: the
``checkpoints/*.results.json``; ``faith_m30k``, ``faith_europarl``, ``cpu``: ``bench/*.json``) and
returns Markdown. Every number in it is read from those files; nothing here is a measurement.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

M30K_TEST = "test_2016_flickr"
NEWSTEST = "wmt/newstest2014-fren"
EP_TEST = "europarl-v7-fr-en/test2000q4"
MIN_BUCKET = 100  # Fig. 2 shows the length buckets with at least this many sentences


def num(x: float, digits: int) -> str:
    """``x`` with ``digits`` decimals and a typographic minus."""
    return f"{x:.{digits}f}".replace("-", "−")


def signed(x: float, digits: int = 2) -> str:
    """``x`` with its sign always written (+0.03, −0.02)."""
    return ("+" if x >= 0 else "") + num(x, digits)


def count(n: int) -> str:
    """An integer with thousands separators (3,003)."""
    return f"{n:,}"


def pct(x: float) -> str:
    """A fraction as a whole percentage (0.464 → "46 %")."""
    return f"{round(x * 100)} %"


def device(name: str) -> str:
    """The training device in words ("cpu (1 threads)" → "one CPU thread")."""
    if name.startswith("cpu ("):
        threads = name[5:].split()[0]
        return "one CPU thread" if threads == "1" else f"{threads} CPU threads"
    return f"one {name}"


NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven"}


def label(config: dict[str, Any], short: bool = False) -> str:
    """A model's name from its config: RNNsearch, RNNencdec or the Luong variant it is (``short``: no details)."""
    if config.get("arch") == "luong":
        att = config["attention"]
        if short:
            return f"Luong {att}" + (f" {config['score']}" if att == "global" else "")
        where = "global" if att == "global" else f"{att} (D = {config['window']})"
        feed = ", input feeding" if config.get("input_feeding") else ""
        return f"Luong {where}, {config['score']} score{feed}"
    return "RNNsearch" if config["context"] == "attention" else "RNNencdec"


def score_table(models: dict[str, Any]) -> list[str]:
    """Cased / lowercased BLEU of ``nmt.tools.export`` results, one row per model and decoding."""
    splits = list(next(iter(models.values()))["scores"])
    rows = ["| model | decoding | " + " | ".join(splits) + " |", "|---|---|" + "---:|" * len(splits)]
    for m in models.values():
        for dec in ("greedy", "beam5"):
            cells = [f"{r['bleu']['score']:.1f} / {r['bleu_lc']['score']:.1f}" if r else ""
                     for r in (m["scores"][s].get(dec) for s in splits)]
            rows.append(f"| {label(m['config'])} | {'beam 5' if dec == 'beam5' else dec} | " + " | ".join(cells) + " |")
    return rows


def m30k_beam5(m: dict[str, Any], key: str = "bleu") -> float:
    """A Multi30k model's BLEU variant ``key`` on test_2016_flickr with beam 5."""
    return float(m["scores"][M30K_TEST]["beam5"][key]["score"])


def shipped_europarl(europarl: dict[str, Any]) -> dict[str, Any]:
    """The Europarl models that ship as checkpoints, RNNsearch first."""
    models = {n: m for n, m in europarl["models"].items() if m.get("checkpoint")}
    return dict(sorted(models.items(), key=lambda kv: not kv[0].startswith("RNNsearch")))


def span(values: list[int], fmt: str = "{}") -> str:
    """``"a"`` for one value, ``"a to b"`` for the least and greatest of several."""
    lo, hi = min(values), max(values)
    return fmt.format(lo) if lo == hi else f"{fmt.format(lo)} to {fmt.format(hi)}"


def models(s: dict[str, Any]) -> str:
    """The shipped checkpoints with what they are, what they were trained on and their headline BLEU."""
    rows = ["| checkpoint | model | trained on | test BLEU, beam 5 |", "|---|---|---|---|"]
    for res in (s["m30k"], s["luong"]):
        for m in res["models"].values():
            t = m["training"]
            rows.append(f"| `{Path(m['checkpoint']).name}` | {label(m['config'])} | Multi30k, "
                        f"{t['train_seconds'] / 60:.0f} min on {device(t['device'])} | "
                        f"{m30k_beam5(m):.1f} on {M30K_TEST} |")
    for name, m in shipped_europarl(s["europarl"]).items():
        t, b5 = m["training"], m["tests_beam5"]
        rows.append(f"| `{Path(m['checkpoint']).name}` | {name} | Europarl v7, {t['train_seconds'] / 60:.0f} min "
                    f"on {device(t['device'])} | {b5[NEWSTEST]['all']['score']:.2f} on newstest2014, "
                    f"{b5[EP_TEST]['all']['score']:.2f} on Europarl test2000q4 |")
    for name, m in s["everyday"]["models"].items():
        t, b5 = m["training"], m["tests_beam5"]
        rows.append(f"| `{Path(m['checkpoint']).name}` | {name.replace(' 30k', ', 30k words')} | Europarl v7 + "
                    f"Tatoeba, {t['train_seconds'] / 60:.0f} min on {device(t['device'])} | "
                    f"{b5['tatoeba-fr-en/test']['all']['score']:.2f} on Tatoeba test, "
                    f"{b5[NEWSTEST]['all']['score']:.2f} on newstest2014, "
                    f"{b5[EP_TEST]['all']['score']:.2f} on Europarl test2000q4 |")
    rs = next(iter(s["m30k"]["models"].values()))
    ep = next(iter(shipped_europarl(s["europarl"]).values()))
    return "\n".join([*rows, "", (
        f"Cased BLEU (sacrebleu, 13a) on detokenised output; {M30K_TEST} has "
        f"{count(rs['scores'][M30K_TEST]['beam5']['sentences'])} sentences, the Tatoeba test "
        f"{count(next(iter(s['everyday']['models'].values()))['tests_beam5']['tatoeba-fr-en/test']['sentences'])}, "
        "newstest2014 "
        f"{count(ep['tests_beam5'][NEWSTEST]['sentences'])} and Europarl test2000q4 "
        f"{count(ep['tests_beam5'][EP_TEST]['sentences'])}.")])


def multi30k(s: dict[str, Any]) -> str:
    """The RNNsearch / RNNencdec pair on Multi30k: every split, how it was trained, what it shares."""
    ms = s["m30k"]["models"]
    lines = [*score_table(ms), "", "BLEU cased / lowercased (sacrebleu 13a, detokenised output against the raw "
             "references). Tokenised lowercased BLEU (Moses tokens, as multi-bleu.perl-style Multi30k papers "
             f"report it) on {M30K_TEST} with beam 5: " + ", ".join(
                 f"{label(m['config'])} {m30k_beam5(m, 'bleu_tok_lc'):.2f}" for m in ms.values()) + ".", ""]
    for m in ms.values():
        t = m["training"]
        lines.append(f"* {label(m['config'])}: {t['epochs']} epochs, {count(t['updates'])} updates, "
                     f"{t['train_seconds'] / 60:.0f} min on {device(t['device'])}, "
                     f"{count(round(t['train_tokens_per_s']))} target tokens/s.")
    c, a = next(iter(ms.values()))["config"], next(iter(ms.values()))["args"]
    search, encdec = (m30k_beam5(m, "bleu_lc") for m in ms.values())
    lines += ["", f"Both share vocabularies ({count(c['src_vocab_size'])} English and {count(c['tgt_vocab_size'])} "
              f"French words, each occurring at least {a['min_freq']} times in training), sizes "
              f"(m = {c['emb_dim']}, n = {c['hidden_dim']}, n' = {c['attn_dim']}, l = {c['maxout_dim']}), dropout "
              f"{c['dropout']}, label smoothing {a['label_smoothing']}, {a['optimizer'].capitalize()} at {a['lr']:g}, "
              f"batch {a['batch_size']}, and data "
              f"({count(next(iter(ms.values()))['training']['train_data']['pairs'])} training pairs). With "
              f"beam 5, RNNsearch is {search - encdec:.1f} lowercased BLEU points above RNNencdec on {M30K_TEST}."]
    return "\n".join(lines)


def luong_tables(res: dict[str, Any]) -> list[str]:
    """Luong et al.'s Tables 4 and 6 in one table (``scripts/luong_tables.py``): perplexity, BLEU and AER."""
    if not res.get("table4"):
        return []
    aer = {r["model"]: r for r in res.get("table6", [])}
    rows = ["", f"Luong et al.'s Tables 4 and 6 on {M30K_TEST} (perplexity by forced decoding of the references; "
                "cased BLEU) and the Hansards en–fr test set (AER of the argmax-α links; out of domain):", "",
            "| attention | score | perplexity | BLEU greedy | BLEU beam 5 | AER |", "|---|---|---:|---:|---:|---:|"]
    for r in res["table4"]:
        a = aer.get(r["model"])
        rows.append(f"| {r['attention']} | {r['score']} | {r['ppl']:.2f} | {r['bleu_greedy']:.1f} | "
                    f"{r['bleu_beam5']:.1f} | " + (f"{a['aer']:.3f} |" if a else "|"))
    return rows


def luong(s: dict[str, Any]) -> str:
    """Luong et al.'s attention on Multi30k, beside RNNsearch and RNNencdec."""
    ms = s["luong"]["models"]
    first = next(iter(ms.values()))
    c, a = first["config"], first["args"]
    minutes = sorted({round(m["training"]["train_seconds"] / 60) for m in ms.values()})
    epochs = sorted({m["training"]["epochs"] for m in ms.values()})
    updates = sorted({m["training"]["updates"] for m in ms.values()})
    attention = {label(m["config"], short=True): m30k_beam5(m) for m in (*s["m30k"]["models"].values(), *ms.values())}
    encdec = {k: v for k, v in attention.items() if k == "RNNencdec"}
    attention = {k: v for k, v in attention.items() if k != "RNNencdec"}
    spread = max(attention.values()) - min(attention.values())
    n_attention = NUMBER_WORDS.get(len(attention), str(len(attention)))
    return "\n".join([*score_table(ms), "", (
        f"One-layer {c['cell'].upper()} decoders over a {c['encoder']} encoder (so h̄_s is RNNsearch's annotation "
        f"and only the attention differs), m = {c['emb_dim']}, n = {c['hidden_dim']}, the RNNsearch pair's "
        f"vocabularies, data and batch ({a['batch_size']}); each shipped model is its run's best validation "
        f"checkpoint, at update {span(updates, '{:,}')} (epoch {span(epochs)}), trained on "
        f"{device(first['training']['device'])} in {span(minutes)} min (longer where other work shared the CPU). "
        f"With beam 5 on {M30K_TEST} "
        f"the {n_attention} attention models are "
        f"within {spread:.1f} cased BLEU of each other (" + ", ".join(f"{k} {v:.1f}" for k, v in attention.items())
        + f"); RNNencdec reaches {encdec['RNNencdec']:.1f}."), *luong_tables(s["luong"])])


def table1_row(name: str, m: dict[str, Any], paper: dict[str, Any]) -> str:
    """One row of Table 1: greedy and beam-5 BLEU on all sentences and on those without unknown words."""
    cells = []
    for key in ("tests", "tests_beam5"):
        r = m.get(key, {}).get(NEWSTEST)
        cells += [f"{r['all']['score']:.2f} ± {r['all']['ci95']:.2f}", f"{r['no_unk']['score']:.2f}"] if r else ["", ""]
    p = paper.get(name)
    cells.append(f"{p['all']:.2f} / {p['no_unk']:.2f}" if p else "")
    return f"| {name} | " + " | ".join(cells) + " |"


def europarl(s: dict[str, Any]) -> str:
    """The paper's Table 1 on newstest2014 and the in-domain test2000q4, and how the pair was trained."""
    res = s["europarl"]
    order = sorted(res["models"], key=lambda n: (-int(n.rsplit("-", 1)[1]), not n.startswith("RNNsearch")))
    ms = res["models"]
    news = ms[order[0]]["tests"][NEWSTEST]
    lines = [f"| newstest2014 ({count(news['sentences'])}) | greedy all | greedy no-UNK | beam 5 all | beam 5 no-UNK "
             "| paper all / no-UNK |", "|---|---:|---:|---:|---:|---:|"]
    lines += [table1_row(n, ms[n], res["paper_table1_newstest2014"]) for n in order]
    ep = ms[order[0]]["tests"][EP_TEST]
    lines += ["", f"| Europarl test2000q4 ({count(ep['sentences'])}) | greedy all | greedy no-UNK | beam 5 all "
              "| beam 5 no-UNK |", "|---|---:|---:|---:|---:|"]
    for n in order:
        cells = []
        for key in ("tests", "tests_beam5"):
            r = ms[n].get(key, {}).get(EP_TEST)
            cells += [f"{r['all']['score']:.2f} ± {r['all']['ci95']:.2f}", f"{r['no_unk']['score']:.2f}"] if r \
                else ["", ""]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    search, encdec = shipped_europarl(res).values()
    ratio = {t: search["tests_beam5"][t]["all"]["score"] / encdec["tests_beam5"][t]["all"]["score"]
             for t in (NEWSTEST, EP_TEST)}
    c = search["config"]
    trained = "; ".join(f"{n}: {count(m['training']['updates'])} updates, {m['training']['epochs']} epochs, "
                        f"{m['training']['train_seconds'] / 60:.1f} min" for n, m in shipped_europarl(res).items())
    lines += ["", (
        f"Cased BLEU (sacrebleu 13a) on detokenised output, ± the 95 % bootstrap interval; no-UNK: the "
        f"{count(news['no_unk_sentences'])} newstest2014 sentences with no source or reference word outside the "
        f"model's shortlists. With beam 5, RNNsearch-50 scores {ratio[NEWSTEST]:.1f}× RNNencdec-50 on newstest2014 "
        f"and {ratio[EP_TEST]:.1f}× on test2000q4. Trained on {device(search['training']['device'])} with bf16 "
        f"autocast from {count(search['training']['train_data']['pairs'])} Europarl v7 pairs of at most "
        f"{search['dev']['args']['max_len']} tokens ({trained}), with {count(c['src_vocab_size'])}-word "
        f"shortlists and m = {c['emb_dim']}, n = n' = {c['hidden_dim']}, l = {c['maxout_dim']}.")]
    int8 = {n: m["int8"] for n, m in shipped_europarl(res).items() if m.get("int8")}
    if int8:
        lines[-1] += (" The numbers above are of the fp16 weights; the shipped files store their embedding and "
                      "output matrices as int8 (one scale per row, to make room for the everyday model), which "
                      "moves greedy BLEU on test2000q4 by " + ", ".join(
                          f"{signed(q['bleu_change']['greedy'])} for {n} ({q['bleu_fp16']['greedy']:.2f} → "
                          f"{q['bleu_int8']['greedy']:.2f}, {count(q['greedy_outputs_changed'])} of "
                          f"{count(q['sentences'])} outputs changed)" for n, q in int8.items()) + ".")
    return "\n".join(lines)


def length_buckets(s: dict[str, Any]) -> str:
    """Fig. 2: greedy BLEU of the shipped Europarl pair by source length on test2000q4."""
    shipped = shipped_europarl(s["europarl"])
    buckets = {n: m["tests"][EP_TEST]["by_length"] for n, m in shipped.items()}
    first = next(iter(buckets.values()))
    keep = [k for k, b in enumerate(first) if b["n"] >= MIN_BUCKET]
    head = [f"{first[k]['lo']}–{first[k]['hi'] - 1}" for k in keep]
    rows = ["| source words | " + " | ".join(head) + " |", "|---|" + "---:|" * len(keep),
            "| sentences | " + " | ".join(count(first[k]["n"]) for k in keep) + " |"]
    rows += [f"| {n} | " + " | ".join(f"{b[k]['score']:.1f}" for k in keep) + " |" for n, b in buckets.items()]
    return "\n".join([*rows, "", f"Cased BLEU per bucket of source length (Moses tokens); buckets with fewer than "
                      f"{MIN_BUCKET} sentences are in the results file."])


def hansards(s: dict[str, Any]) -> str:
    """Alignment error rates on the Hansards gold set: attention of both RNNsearch models and eflomal."""
    m30k = s["faith_m30k"]["aer_all_447"]
    ep = shipped_europarl(s["europarl"])["RNNsearch-50"]["hansards_aer"]
    stat = s["europarl"]["hansards_statistical_aligner"]
    tau = ep["tau_from_trial"]
    refs = ep["references"]
    fast_align = next(v for k, v in refs.items() if k.startswith("fast_align"))
    luong_ref = next(v for k, v in refs.items() if k.startswith("Luong"))
    a, e = m30k["alpha"], ep["argmax"]
    return (f"Hansards AER ({count(ep['sentences'])} gold sentences; references force-decoded, each target word "
            f"linked to its argmax α): Multi30k RNNsearch {a['aer']:.3f} (precision {a['precision']:.3f}, recall "
            f"{a['recall']:.3f}), Europarl RNNsearch-50 {e['aer']:.3f} (precision {e['precision']:.3f}, recall "
            f"{e['recall']:.3f}), and {ep['thresholded'][str(tau)]['aer']:.3f} linking every α ≥ {tau} (τ chosen "
            f"on the trial set). A statistical aligner does far better: eflomal, run on the gold sentences plus "
            f"{count(stat['extra_training_pairs'])} lowercased Europarl pairs (`docs/recorded/hansards-eflomal.md`), "
            f"reaches {stat['forward']['aer']:.3f} forward and {stat['intersection']['aer']:.3f} for the "
            f"intersection of both directions; fast_align with grow-diag is reported at {fast_align} on this set, "
            f"and Luong et al. (2015) report {luong_ref.replace('-', '–')} for attention on RWTH de–en.")


def speed(s: dict[str, Any]) -> str:
    """How fast the app and the tools are on a small CPU."""
    c = s["cpu"]
    d, step, app = c["decode"], c["step"], c["app"]
    panel = s["faith_m30k"]["speed"]["panel_one_step_25_words_idle"]  # its src_tokens count </s>
    train = sorted(c["train"], key=lambda r: r["target_tokens_per_s"])
    lo, hi = train[0], train[-1]

    def setting(r: dict[str, Any]) -> str:
        """A benchmark row's precision and batch, in words."""
        return f"{'bf16' if r['amp_bf16'] else 'fp32'}, batch {r['batch']}"

    return (f"On a small CPU ({c['device']}, `bench/results-cpu.json`) the Multi30k RNNsearch translates "
            f"{d['split']} at {d['greedy']['sentences_per_s']:.0f} sentences/s greedily and "
            f"{d['beam5']['sentences_per_s']:.0f} with beam 5; one decoder step takes {step['step_ms_median']:.1f} ms "
            f"and one Step click of the app {app['step_click_s_median'] * 1000:.0f} ms on the server; the first "
            f"view opens in {app['first_view_s_cold']:.1f} s, model load included. One word's attribution panel "
            f"takes {panel['middle']['wall_s']:.2f}–{panel['last_word']['wall_s']:.2f} s for a "
            f"{panel['src_tokens'] - 1}-word sentence (one thread). Training runs at "
            f"{count(round(lo['target_tokens_per_s']))} target tokens/s ({setting(lo)}) to "
            f"{count(round(hi['target_tokens_per_s']))} ({setting(hi)}).")


def classroom(s: dict[str, Any]) -> str:
    """The waits a class sees (bench/classroom.py, Chromium) and 30 students stepping at once (bench/load.py),
    both measured on an idle machine."""
    idle = [v for k, v in s["classroom"].items() if k.startswith("idle")]
    lines = []
    if idle:
        c = idle[-1]
        ok = all(c["meets_target"].values())
        lines.append(
            f"Measured in Chromium on {c['cpu_count']} CPU cores with nothing else running "
            f"(`bench/classroom.py`, medians of {c['repeats']}): the stepper's first view {c['first_view_s']:.1f} s "
            f"(target {c['targets']['first_view_s']:g} s), Step {c['step_s'] * 1000:.0f} ms from click to screen "
            f"(target {c['targets']['step_s'] * 1000:.0f} ms), the freeze toggle {c['freeze_s']:.2f} s, Play "
            f"{c['play_s_per_word']:.2f} s per word at the 0.5 s setting" + (" (all within target)." if ok else "."))
    klass = next((r["class"] for r in reversed(s["load"]["runs"]) if r.get("class")), None)
    if klass:
        lines.append(
            f"With 30 students each pressing Step every 2 s on one server (`bench/load.py --class`), a step "
            f"took {klass['p95_ms']:.0f} ms at the 95th percentile with {klass['errors']} errors, and the "
            + ("server's memory returned to its baseline" if klass.get("rss_ok") else
               f"server's memory ended at {klass['rss_after_mib']:.0f} MiB (baseline {klass['rss_baseline_mib']:.0f})")
            + "; the 95th percentile passes 1 s at about "
            f"{klass['p95_1s_passed_at_steps_per_s']:.0f} steps per second (about "
            f"{klass['p95_1s_passed_at_steps_per_s'] * 2:.0f} students stepping every 2 s).")
    if (v := s.get("class_votes")) is not None:
        lines.append(class_votes(v))
    return "\n\n".join(lines)


def class_votes(v: dict[str, Any]) -> str:
    """60 phones voting in a Lesson room while 30 students step, one server (bench/class_votes.py)."""
    load = max(v["loadavg_1min_before"], v["loadavg_1min_after"])
    shared = f", shared with other work at a load average up to {load:.0f}" if load > v["machine"]["cores"] else ""
    where = f"{v['machine']['cores']} CPU cores{shared}"
    t, s, rss = v["tap_to_projector"], v["step"], v["rss_mib"]
    return (f"With {v['phones']} phones voting in a Lesson room while {v['students']} students press Step every 2 s "
            f"on one server (`bench/class_votes.py`, {where}), a tap reached the projector in "
            f"{t['p50_ms'] / 1000:.1f} s at the median and {t['p95_ms'] / 1000:.1f} s at the 95th percentile "
            f"(the projector redraws every 2 s), a step took {s['p95_ms'] / 1000:.1f} s at the 95th percentile, "
            f"{v['votes_counted']} of {v['phones']} votes were counted with {v['errors']} errors, and the server's "
            f"memory went from {rss['before']:.0f} to {rss['peak']:.0f} MiB at its peak and back to "
            f"{rss['after']:.0f} MiB.")


def unknown(s: dict[str, Any]) -> str:
    """BLEU with each ``<unk>`` kept, copied or translated from the model's dictionary (bench/unk_dictionary.py)."""
    rows = ["| model | test set | decoding | `<unk>` kept | copied | from the dictionary |",
            "|---|---|---|---:|---:|---:|"]
    for r in s["unknown"]:
        test = f"{r['data']}/{r['split']} ({r['sentences']:,})"
        rows.append(f"| `{r['checkpoint']}` | {test} | {r['decoding'].replace('beam', 'beam ')} | "
                    f"{r['kept']['bleu']:.2f} | {r['copied']['bleu']:.2f} | {r['dictionary']['bleu']:.2f} |")
    return "\n".join(rows)


def candidates(s: dict[str, Any]) -> str:
    """BLEU and reference coverage of per-sentence candidate lists against the full softmax (bench/candidates.py)."""
    rows = ["| model | test set | decoding | K most frequent (+ K′ per source word) | words in the list | "
            "reference words it holds | BLEU |", "|---|---|---|---|---:|---:|---:|"]
    for r in s["candidates"]:
        test = f"{r['data']}/{r['split']} ({r['sentences']:,})"
        for run in r["runs"]:
            k = (f"all {r['vocab_size']:,} (no list)" if run["k_frequent"] is None
                 else f"{run['k_frequent']:,} (+ {r['k_translations']})")
            rows.append(f"| `{r['checkpoint']}` | {test} | {r['decoding'].replace('beam', 'beam ')} | {k} | "
                        f"{run['mean_size']:,.0f} | {run['reference_coverage']:.1%} | {run['bleu']:.2f} |")
    return "\n".join(rows)
