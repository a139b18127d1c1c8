"""The stepper page's candidate list (Jean et al. 2015 §3.2; issue 20): the sidebar switch and K, the
sentence's list and the "via" marks, the link, and a forced word the list leaves out."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from nmt.text.lexicon import SUFFIX, ranked, read_lexicon, write_lexicon
from nmt.text.vocab import SPECIALS
from tests.stepper_app import SENTENCE, html_bodies, link, start, trace

TINY_LEXICON = Path(__file__).resolve().parent / "fixtures" / "tiny" / "lexicon.en-fr.tsv"


@pytest.fixture
def with_dictionary(tiny_checkpoint_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The tiny pair in a folder of its own, with the fixture's dictionary beside it."""
    d = tmp_path / "ckpts"
    shutil.copytree(tiny_checkpoint_dir, d)
    write_lexicon(read_lexicon(TINY_LEXICON), d / f"tiny-en-fr{SUFFIX}")
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(d))
    return d


def test_the_candidate_list_restricts_and_marks_the_written_words(with_dictionary: Path) -> None:
    at = start({"text": SENTENCE, "cand": "true", "cand_k": "0", "step": "30"})
    t = trace(at)
    assert t.candidates is not None and (t.candidates.k_frequent, t.candidates.k_translations) == (0, 10)
    tr = ranked(read_lexicon(TINY_LEXICON))
    listed = {w for s in t.src_tokens for w in tr.get(s, ())[:10]}
    assert set(t.target_tokens) <= listed | set(SPECIALS)  # K = 0: the dictionary's words only
    assert any(t.came_in_via(s.i) for s in t.steps)
    assert any("may use" in c.value and f"**{t.candidates.size:,}**" in c.value for c in at.caption)
    assert any(">via " in b for b in html_bodies(at))
    assert at.select_slider(key="sp_cand_k").value == 0
    assert link(at)["sp_cand"] == ["true"] and link(at)["sp_cand_k"] == ["0"]
    at.toggle(key="sp_cand").set_value(False).run()
    assert trace(at).candidates is None and not any(">via " in b for b in html_bodies(at))
    assert not any("may use" in c.value for c in at.caption)


def test_a_forced_word_outside_the_list_gives_way_to_the_models_own(with_dictionary: Path) -> None:
    at = start({"text": SENTENCE, "cand": "true", "cand_k": "0", "step": "3", "force": "0:chien"})
    assert not at.exception
    assert trace(at).steps[0].token != "chien" and not trace(at).steps[0].forced
    assert at.session_state["sp_plan"] == {}
    assert any("chien" in e["what"] and "candidate list" in e["what"] for e in at.session_state["sp_log"])
