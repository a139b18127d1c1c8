"""The README's faithfulness block: agreement of each attribution with α, the Hansards AER of each, the
permutation and adversarial tests, and the note on integrated gradients' completeness gap (issue 24)."""

from __future__ import annotations

from typing import Any

from scripts.readme_blocks import count, num, pct

BY_GAP = "by_gap"  # ig_completeness.table_points once the IG row is recomputed with points chosen by the gap
METHOD_ROWS = {"saliency": "saliency (‖∇‖)", "x_grad": "gradient × input", "ig": "integrated gradients",
               "loo_embed": "leave-one-out, embedding", "loo_alpha": "leave-one-out, α"}


def faith_table(run: dict[str, Any], aer: dict[str, Any], ig_points: Any = None) -> list[str]:
    """Agreement of each attribution with α, and the Hansards AER of α and of each attribution; the IG
    row names its number of points (``ig_points``) and points to the note on its completeness gap."""
    rows = ["| method vs α | Kendall τ-b | top-1 agreement | JSD (nats) | Hansards AER |",
            "|---|---:|---:|---:|---:|", f"| α itself | | | | {aer['alpha']['aer']:.3f} |"]
    for key, name in METHOD_ROWS.items():
        if key == "ig" and ig_points is not None:
            name = f"{name} ({'points chosen by the gap' if ig_points == BY_GAP else f'{ig_points} points'}) †"
        g = run["agreement"][key]
        rows.append(f"| {name} | {num(g['kendall_tau'], 3)} | {g['top1']:.3f} | {g['jsd']:.3f} | "
                    f"{aer[key]['aer']:.3f} |")
    return rows


def faith_tests(run: dict[str, Any], eps: float) -> str:
    """The permutation and adversarial tests in one sentence."""
    p, a = run["permutation"], run["adversarial"]
    return (f"Shuffling α at one step changes the written word {pct(p['flip_rate'])} of the time (median total "
            f"variation distance {p['median_tvd']:.2f}); at {pct(a['found_rate'])} of steps an α {a['mean_jsd']:.2f} "
            f"nats (JSD, mean) away from the model's keeps the same word within ε = {eps} of its probability.")


def ig_note(f: dict[str, Any]) -> str:
    """† under a table: the IG row's completeness gap |Σ_j IG_ij − (log p − log p')| at its fixed
    points, what the recomputation at points chosen by the gap gives, and what was not recomputed."""
    c = f.get("ig_completeness")
    if not c:
        return ""
    if c.get("table_points") == BY_GAP:
        return _ig_note_by_gap(c)
    g = c["table_gap"]
    text = (f"† IG at {c['table_points']} points does not add up: the completeness gap |Σ IG − Δ log p| is "
            f"{g['mean']:.2f} nats on average and {g['max']:.1f} at most over the table's steps.")
    r = c.get("recomputed")
    if r:
        a, b = r["fixed"], r["by_gap"]
        text += (f" With the points chosen per step until the gap is below {r['tol']} nats ({b['points_mean']:.0f} "
                 f"on average, at most {b['points_max']}; mean gap {b['gap_mean']:.3f} nats, against "
                 f"{a['gap_mean']:.3f} at {c['table_points']} points), on the first {r['sentences']} sentences the IG "
                 f"row reads Kendall τ {num(a['kendall_tau'], 3)} → {num(b['kendall_tau'], 3)}, top-1 "
                 f"{a['top1']:.3f} → {b['top1']:.3f}, JSD {a['jsd']:.3f} → {b['jsd']:.3f}")
        if r.get("aer"):
            text += (f"; Hansards AER on the first {r['aer']['sentences']} gold sentences "
                     f"{r['aer']['fixed']:.3f} → {r['aer']['by_gap']:.3f}")
        text += "."
    if c.get("caveat"):
        text += f" {c['caveat']}"
    return text


def _ig_note_by_gap(c: dict[str, Any]) -> str:
    """† under a table whose IG row was recomputed with the points chosen by the gap: the gap now, and
    the row as it read at its former fixed points."""
    r, was = c["recomputed"], c["before"]
    a, b, g = r["fixed"], r["by_gap"], was["agreement"]
    text = (f"† IG with its points chosen per step, doubled while the completeness gap |Σ IG − Δ log p| is above "
            f"{r['tol']} nats, up to {b['points_max']} ({b['points_mean']:.0f} on average): the gap is then "
            f"{b['gap_mean']:.3f} nats on average and {b['gap_max']:.2f} at most, and above {r['tol']} at "
            f"{b['above_tol'] * 100:.1f} % of the {count(r['steps'])} steps (`{r['file']}`). "
            f"At a fixed {c['former_points']} points the gap was {a['gap_mean']:.2f} "
            f"on average and {a['gap_max']:.1f} at most, and the row read Kendall τ {num(g['kendall_tau'], 3)}, "
            f"top-1 {g['top1']:.3f}, JSD {g['jsd']:.3f}")
    if was.get("aer"):
        text += f", Hansards AER {was['aer']['aer']:.3f}"
    return text + "."


def faithfulness(s: dict[str, Any]) -> str:
    """Is attention an explanation? Agreement tables and the two tests for both RNNsearch models."""
    fm, fe = s["faith_m30k"], s["faith_europarl"]
    m_run, e_run = fm["corpus_all_1000"], fe["corpus_1000_gpu"]
    m_pts, e_pts = ((f.get("ig_completeness") or {}).get("table_points") for f in (fm, fe))
    return "\n".join([
        f"**Multi30k RNNsearch**, all {count(m_run['sentences'])} {fm['corpus']['split']} sentences "
        f"({count(m_run['steps'])} target words; `bench/faithfulness-m30k.json`):", "",
        *faith_table(m_run, fm["aer_all_447"], m_pts), "", faith_tests(m_run, fm["corpus"]["eps"]), "",
        ig_note(fm), "",
        f"**Europarl RNNsearch-50**, the first {count(e_run['sentences'])} {fe['corpus']['split']} sentences "
        f"({count(e_run['steps'])} target words; `bench/faithfulness-europarl.json`):", "",
        *faith_table(e_run, fe["aer_all_447"], e_pts), "", faith_tests(e_run, e_run["eps"]), "",
        ig_note(fe), "",
        f"Hansards AER on all {count(fm['aer_all_447']['sentences'])} gold sentences, the argmax of each row."])
