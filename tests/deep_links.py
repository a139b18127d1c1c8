"""Today's shared links, one per page and URL key (issue 49 item 5): what a visitor, a teacher or a paper's
reader may hold. Each row is the address (path and query) and the texts that view shows (its title, and where
one says which view it is, a heading or a line), recorded on the app before its pages moved into one
``st.navigation`` frame; ``tests/test_app_links.py`` opens each and finds the same texts, no error box. The
stepper's top-k heading is read as its text since it joined the top-k list's HTML snippet (issue 52: one element
fewer a Step): "**Top-5 candidates at i = 0** · click one" as recorded, "Top-5 candidates at i = 0 · click one"
as shown.
"""

from __future__ import annotations

from typing import NamedTuple

TEXT = "A dog runs."
STOPS = (  # the lesson's stops, as titled
    "1. How to read the pictures",
    "2. The bottleneck",
    "3. Annotations: one vector per word",
    "4. Energies: scoring each word",
    "5. Softmax: from energies to α",
    "6. The context c_i: a weighted sum",
    "7. Reordering",
    "8. Long sentences (Fig. 2)",
    "9. Unknown words",
    "10. What we learned",
)


class Link(NamedTuple):
    """One shared address and what it shows."""

    path: str  # the address's path: "/" (the stepper) or "/<page>"
    query: dict[str, str | list[str]]
    shows: tuple[str, ...]  # texts the view shows (titles, headings, lines; each found whole)


STEPPER: tuple[Link, ...] = (  # as recorded, before the stepper's keys took the prefix sp_ (issue 49)
    Link("/", {}, ("Step through decoding", "Model", "Decoding", "Display")),
    Link("/", {"text": TEXT, "step": "1"}, ("Step through decoding", "Top-5 candidates at i = 0 · click one")),
    Link("/", {"text": TEXT, "step": "3", "force": ["0:Un"]}, ("Top-5 candidates at i = 2 · click one",)),
    Link("/", {"text": TEXT, "mode": "beam", "beam": "3", "norm": "none", "step": "2"},
         ("Top-5 candidates at i = 1", "Beam size k", "Length normalisation")),
    Link("/", {"text": TEXT, "mode": "sample", "temp": "0.7", "topk": "5", "topp": "0.9", "seed": "3",
               "step": "2"}, ("**How i = 1 was drawn**",)),
    Link("/", {"text": TEXT, "freeze": "true", "step": "2"},
         ("**No alignment: every step reads the same summary vector**",
          "**What the one summary costs on this sentence:**")),
    Link("/", {"text": TEXT, "freeze": "true", "ablation": "true", "step": "1"}, ("**Untrained ablation.**",)),
    Link("/", {"text": TEXT, "present": "true", "step": "2"}, ("Step through decoding", "Table (T)")),
    Link("/", {"text": TEXT, "paper": "true", "cand": "true", "step": "2"},
         ("Top-5 candidates at i = 1 · click one",)),
)

LINKS: tuple[Link, ...] = (
    # the stepper: its bound controls, the step and forced words; the links recorded before its keys took the
    # prefix sp_, and each in today's form (?sp_text=…&sp_step=…), which shows the same
    *STEPPER,
    *(Link(lk.path, {f"sp_{k}": v for k, v in lk.query.items()}, lk.shows) for lk in STEPPER if lk.query),
    # the lesson: each stop, the levels, the presenter's view, the palette, the class vote
    *(Link("/lesson", {"ls_stop": str(n)}, (title, f"**{n} / 10**")) for n, title in enumerate(STOPS, 1)),
    Link("/lesson", {"ls_stop": "3", "ls_level": "phd"}, ("3 / 10", "an annotation h_j of 1024 numbers")),  # h_j's
    # formula shows with the revealed row (stop 3 asks first since issue 51)
    Link("/lesson", {"ls_stop": "2", "ls_view": "presenter"},
         ("2. The bottleneck", "**Presenter view**", "**Answer.**")),
    Link("/lesson", {"ls_stop": "1", "ls_palette": "viridis", "ls_log": "true"}, ("1. How to read the pictures",)),
    Link("/lesson", {"ls_stop": "1", "ls_vote": "true"}, ("1. How to read the pictures",)),
    # the phone's vote page: no room yet, and a room that does not exist
    Link("/vote", {}, ("Class vote", "Type the room code shown on the projector.")),
    Link("/vote", {"room": "ZZZZ"}, ("Class vote", "Type the room code shown on the projector.")),
    # the other pages, each with its URL keys
    Link("/beam_explorer", {"bx_beam": "3", "bx_text": TEXT},
         ("Beam search explorer", "**Beam search (k = 3), best hypothesis**", "Un chien court.")),
    Link("/beam_explorer", {"bx_text": TEXT, "bx_nbest": "3", "bx_tab": "N-best and α"},
         ("**Beam search (k = 5), best hypothesis**", "**1.** Un chien court.")),
    Link("/beam_explorer", {"bx_text": TEXT, "bx_layout": "rank", "bx_tab": "Beam per step"},
         ("After step **0**: **5** live",)),
    Link("/alignment_browser", {"al_pick": "5", "al_from": "my own pairs"},
         ("Alignment browser", "Paste sentence pairs to browse them.")),
    Link("/alignment_browser", {}, ("One pair", "A man in an orange hat starring at something.")),
    Link("/watch_it_learn", {}, ("Watch it learn", "#### :blue[RNNsearch]", "#### :orange[RNNencdec]")),
    Link("/watch_it_learn", {"wl_present": "true"}, ("Watch it learn", "### Gageure")),
    Link("/bottleneck_compare", {"bn_text": TEXT},
         ("The bottleneck, side by side", "Where does the fixed vector give out?", "Un chien court.")),
    Link("/bottleneck_compare", {"bn_from": "corpus by length"},
         ("**Source:** An employee is handing a woman a bag",)),
    Link("/compare_attention", {"cmp_text": TEXT}, ("Compare attention", "Summary", "Un chien court.")),
    Link("/length_quality", {"results": "none"}, ("Length vs quality", "Table 1 reproduction", "Recompute")),
    Link("/length_quality", {}, ("Length vs quality", "Table 1 reproduction")),
    Link("/paired_compare", {"pr_limit": "first 100", "pr_dec": "beam 5"},
         ("Is A really better than B?", "Press **Run the comparison**")),
    Link("/explanation", {"ex_text": TEXT, "ex_tab": "Surgery"},
         ("Is attention an explanation?", "**Original:** Une petite fille mange une pomme.",
          "**Edited:** Une petite fille mange une fille.")),
    Link("/explanation", {"ex_text": TEXT, "ex_tab": "Whole sentence"},
         ("**Source:** A little girl is eating an apple.",)),
    Link("/explanation", {"ex_text": TEXT, "ex_tab": "Debate tests"},
         ("Two tests from the debate (Jain & Wallace 2019",)),
)
