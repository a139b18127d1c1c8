"""The README's block on paired comparisons (``python -m nmt paired``), built from their JSON files.

Sources (:mod:`scripts.readme_numbers`): ``paired_europarl`` (``bench/paired-europarl-newstest2014.json``:
RNNencdec-50 against RNNsearch-50, Table 1's pair) and ``paired_m30k`` (``bench/paired-m30k-test2016.json``:
the Multi30k RNNsearch against each Luong variant). Every number is read from those files.
"""

from __future__ import annotations

from typing import Any

from scripts.readme_blocks import count


def _p(p: float | None, resamples: int) -> str:
    """A p-value as sacrebleu gives it; its floor 1/(resamples + 1) written as "≤" that floor."""
    if p is None:
        return "—"
    floor = 1 / (resamples + 1)
    return f"≤ {floor:.3f}" if p <= round(floor, 4) + 1e-12 else f"{p:.3f}"  # the JSON keeps 4 decimals


def _row(res: dict[str, Any], name: str, base: str) -> str:
    n = res["resamples"]
    cells = []
    for metric in ("BLEU", "chrF"):
        a, b = res["overall"][metric][base], res["overall"][metric][name]
        cells += [f"{a['score']:.2f}", f"{b['score']:.2f}", f"{b['score'] - a['score']:+.2f}", _p(b["p_value"], n)]
    return f"| {name} | " + " | ".join(cells) + " |"


def paired(s: dict[str, Any]) -> str:
    """Table 1's pair on newstest2014 (overall and by length) and the Luong variants against RNNsearch on
    Multi30k test 2016, each with sacrebleu's paired-bootstrap p-values."""
    ep, m30k = s["paired_europarl"], s["paired_m30k"]
    head = ("| system | baseline BLEU | BLEU | Δ BLEU | p | baseline chrF | chrF | Δ chrF | p |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    out = [f"**{ep['systems'][0]} against {ep['baseline']}** on newstest2014 ({count(ep['sentences'])} sentences, "
           f"{'greedy' if ep['beam'] == 1 else 'beam ' + str(ep['beam'])}; {count(ep['resamples'])} paired "
           "resamples, p of the difference from the baseline):", "", head,
           *(_row(ep, name, ep["baseline"]) for name in ep["systems"]), ""]
    base = ep["baseline"]
    tested = [b for b in ep["by_length"] if "BLEU" in b]
    out += ["By source length (buckets of at least " + str(ep["min_bucket"]) + " sentences):", "",
            "| source words | " + " | ".join(f"{b['lo']}–{b['hi'] - 1}" for b in tested) + " |",
            "|---|" + "---:|" * len(tested),
            "| sentences | " + " | ".join(count(b["n"]) for b in tested) + " |"]
    for name in (base, *ep["systems"]):
        out.append(f"| {name} BLEU | " + " | ".join(f"{b['BLEU'][name]['score']:.2f}" for b in tested) + " |")
    out.append("| p | " + " | ".join(_p(b["BLEU"][ep["systems"][0]]["p_value"], ep["resamples"]) for b in tested)
               + " |")
    out += ["", f"**The Luong variants against {m30k['baseline']}** on Multi30k test 2016 "
            f"({count(m30k['sentences'])} sentences, greedy, {count(m30k['resamples'])} resamples):", "", head,
            *(_row(m30k, name, m30k["baseline"]) for name in m30k["systems"]), "",
            f"{len(m30k['systems'])} systems against one baseline make {2 * len(m30k['systems'])} tests; at "
            "p < 0.05 about one test in twenty comes out below it by chance alone, so a single p near 0.05 is weak "
            "evidence."]
    return "\n".join(out)


def coverage(s: dict[str, Any]) -> str:
    """Whether attention's coverage flags go with worse translations, per model and test set (Spearman ρ
    between a sentence's flag count and its chrF, and the mean chrF with and without flags)."""
    rows = ["| model | test set | sentences | flagged | ρ (flags, chrF) | p | chrF flagged | chrF clean |",
            "|---|---|---:|---:|---:|---:|---:|---:|"]
    for e in s["coverage"]:
        rows.append(f"| {e['checkpoint'].removesuffix('.pt')} | {e['data']}/{e['split']} | {count(e['n'])} | "
                    f"{count(e['flagged'])} | {e['spearman_rho']:+.3f} | {e['p_value']:.2g} | "
                    f"{e['chrf_flagged']:.2f} | {e['chrf_clean']:.2f} |")
    first = s["coverage"][0]
    weak = max(abs(e["spearman_rho"]) for e in s["coverage"])
    return "\n".join([
        f"A word is flagged unread below Σ_i α_ij = {first['unread_below']:g} and re-read above "
        f"{first['reread_above']:g} (greedy translations, sentence chrF by sacrebleu):", "", *rows, "",
        f"The flags go with worse translations, but weakly: |ρ| is at most {weak:.2f}, so a flag marks a sentence "
        "worth a look, not a bad one."])
