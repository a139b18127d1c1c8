"""Dictionary replacement of <unk> (Jean et al. 2015 §2.3, Luong et al. 2015) on hand-made traces (issue 20)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from nmt.decoding.search import greedy
from nmt.decoding.trace import DecodeTrace, Replacement, StepRecord
from nmt.decoding.unk_replace import COPIED, DICTIONARY, OutputWord, replace_in_trace, with_dictionary
from nmt.models import checkpoint
from nmt.models.rnnsearch import ModelConfig, RNNSearch
from nmt.text.lexicon import SUFFIX, beside, write_lexicon
from nmt.text.vocab import BOS_ID, EOS, EOS_ID, UNK, UNK_ID, Vocab
from tests.tool_run import Ran, run_nmt

ROOT = Path(__file__).resolve().parent.parent

SRC = ["the", "Zorblax", "ate", "cheese", EOS]
TABLE = {"cheese": "fromage", "ate": "mangé", "the": "le"}


def _step(i: int, token: str, alpha: list[float] | None) -> StepRecord:
    return StepRecord(i=i, token=token, token_id=0, logprob=-0.1, forced=False, energies=None, alpha=alpha,
                      topk=[], state_norm=1.0, context_norm=1.0)


def _trace(steps: list[StepRecord], dictionary: dict[str, str] | None = None) -> DecodeTrace:
    return DecodeTrace(source="the Zorblax ate cheese", src_tokens=SRC, src_unk=[False, True, False, False, False],
                       method="greedy", context="attention", steps=steps, dictionary=dictionary or {})


STEPS = [
    _step(0, "le", [0.7, 0.1, 0.1, 0.05, 0.05]),
    _step(1, UNK, [0.1, 0.6, 0.1, 0.1, 0.1]),  # "Zorblax": not in the table → copied
    _step(2, "a", [0.1, 0.1, 0.5, 0.2, 0.1]),
    _step(3, UNK, [0.05, 0.05, 0.1, 0.3, 0.5]),  # </s> has most; the best real word is "cheese"
    _step(4, UNK, [0.1, 0.1, 0.35, 0.05, 0.4]),  # </s> again; then "ate" → "mangé"
    _step(5, EOS, [0.0, 0.0, 0.0, 0.0, 1.0]),
]


def test_dictionary_hit_copy_fallback_and_never_eos() -> None:
    want = [OutputWord("le"), OutputWord("Zorblax", COPIED), OutputWord("a"), OutputWord("fromage", DICTIONARY),
            OutputWord("mangé", DICTIONARY)]
    assert replace_in_trace(_trace(STEPS), TABLE) == want
    # the trace's own dictionary (as a model with one fills it) gives the same; without one, all are copied
    assert replace_in_trace(_trace(STEPS, {"cheese": "fromage", "ate": "mangé"})) == want
    assert [w.label for w in replace_in_trace(_trace(STEPS))] == [None, COPIED, None, COPIED, COPIED]
    swaps = _trace(STEPS, TABLE).unk_replacements()
    assert swaps == {1: Replacement(1, "Zorblax", "Zorblax", COPIED),
                     3: Replacement(3, "cheese", "fromage", DICTIONARY), 4: Replacement(2, "ate", "mangé", DICTIONARY)}


def test_unk_without_attention_or_with_a_tie_stays_and_output_stops_at_eos() -> None:
    steps = [_step(0, UNK, None), _step(1, "x", None), _step(2, EOS, None), _step(3, UNK, [1.0, 0, 0, 0, 0])]
    assert replace_in_trace(_trace(steps), TABLE) == [OutputWord(UNK), OutputWord("x")]
    tie = [_step(0, UNK, [0.3, 0.3, 0.2, 0.1, 0.1])]  # the mean context's uniform α points at no one word
    assert replace_in_trace(_trace(tie), TABLE) == [OutputWord(UNK)]


OWN = {"the": "le", "Zorblax": "Zorblaxe", "ate": "mangé", "cheese": "fromage"}  # a trace's own dictionary
CASES = {  # name: (the table given to replace_in_trace, the trace's own dictionary)
    "missing": (None, {}), "own": (None, OWN), "empty table": ({}, OWN),
    "partial table": ({"the": "la", "cheese": "fromages", "bread": "pain"}, OWN), "full table": (TABLE, {}),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("j", range(len(SRC)))
def test_every_source_position_and_every_dictionary_case(case: str, j: int) -> None:
    """An <unk> whose α peaks at source position j (the first word included) becomes that word's entry
    in the dictionary in force (the table when one is given, even an empty one; else the trace's own),
    labelled "dictionary", else the word itself, "copied"; at the final </s> the real words tie and
    the <unk> stays. The words around it are kept."""
    table, own = CASES[case]
    alpha = [0.1] * len(SRC)
    alpha[j] = 0.6
    steps = [_step(0, "x", [0.2] * 5), _step(1, UNK, alpha), _step(2, "y", [0.2] * 5), _step(3, EOS, [0.2] * 5)]
    got = replace_in_trace(_trace(steps, own), table)
    used = own if table is None else table
    word = SRC[j]
    if word == EOS:
        want = OutputWord(UNK)
    elif word in used:
        want = OutputWord(used[word], DICTIONARY)
    else:
        want = OutputWord(word, COPIED)
    assert got == [OutputWord("x"), want, OutputWord("y")]


def test_the_empty_and_the_partial_table_by_hand() -> None:
    # <unk>s pointing at "the" (j = 0), "Zorblax" (1) and "cheese" (3), the trace's own dictionary OWN
    steps = [_step(0, UNK, [0.7, 0.1, 0.1, 0.05, 0.05]), _step(1, UNK, [0.1, 0.6, 0.1, 0.1, 0.1]),
             _step(2, UNK, [0.05, 0.05, 0.1, 0.6, 0.2])]
    assert [w.word for w in replace_in_trace(_trace(steps, OWN))] == ["le", "Zorblaxe", "fromage"]
    assert [w.word for w in replace_in_trace(_trace(steps, OWN), {})] == ["the", "Zorblax", "cheese"]
    assert [w.word for w in replace_in_trace(_trace(steps, OWN), {"the": "la"})] == ["la", "Zorblax", "cheese"]
    assert with_dictionary(_trace(steps, OWN), {"the": "la", "bread": "pain"}).dictionary == {"the": "la"}


def test_a_checkpoint_finds_its_dictionary_by_prefix(tmp_path: Path) -> None:
    """PREFIX.lexicon.tsv.xz beside a checkpoint serves every PREFIX-*.pt; the longest prefix wins; a
    damaged file is an error naming it, not a traceback."""
    for name in ("m30k-en-fr", "m30k-en-fr-luong", "m30k-en", "other"):
        write_lexicon({"a": [(name, 1)]}, tmp_path / f"{name}{SUFFIX}")
    assert beside(tmp_path / "m30k-en-fr-rnnsearch.pt") == tmp_path / f"m30k-en-fr{SUFFIX}"
    assert beside(tmp_path / "m30k-en-fr-luong-local-m.pt") == tmp_path / f"m30k-en-fr-luong{SUFFIX}"
    assert beside(tmp_path / "m30k-en-frx.pt") == tmp_path / f"m30k-en{SUFFIX}"
    assert beside(tmp_path / "europarl-en-fr-rnnsearch-50.pt") is None
    ckpt = _unk_then_eos_model(tmp_path)  # unk.pt: no dictionary
    assert checkpoint.load(ckpt).dictionary == {}
    write_lexicon({"cheese": [("fromage", 3), ("fromages", 1)]}, tmp_path / f"unk{SUFFIX}")
    lm = checkpoint.load(ckpt)
    assert lm.dictionary == {"cheese": "fromage"} and lm.dictionary_file.endswith(f"unk{SUFFIX}")
    assert greedy(lm, ["cheese Zorblax"])[0].dictionary == {"cheese": "fromage"}  # the trace carries its part
    (tmp_path / f"unk{SUFFIX}").write_bytes(b"not xz")
    with pytest.raises(checkpoint.CheckpointError, match=f"unk{SUFFIX}"):
        checkpoint.load(ckpt)


def _unk_then_eos_model(tmp_path: Path) -> Path:
    """A hand-set RNNsearch whose greedy output is always "<unk> </s>": the readout sees only E y_{i-1}
    (U_o = C_o = 0), E(<s>) = (1, 0), E(<unk>) = (0, 1), and W_o scores <unk> from the first, </s> from the
    second maxout unit."""
    torch.manual_seed(0)
    src = Vocab.build([["the", "Zorblax", "cheese"]], 50)
    tgt = Vocab.build([["le", "fromage"]], 50)
    model = RNNSearch(ModelConfig(len(src), len(tgt), 2, 4, 4, 2, 0.0, "attention"))  # initialised: no NaN
    d = model.decoder
    with torch.no_grad():
        d.U_o.weight.zero_()
        d.C_o.weight.zero_()
        d.V_o.weight.copy_(torch.tensor([[1.0, 0], [1, 0], [0, 1], [0, 1]]))
        d.V_o.bias.zero_()
        d.embed.weight.zero_()
        d.embed.weight[BOS_ID] = torch.tensor([1.0, 0])
        d.embed.weight[UNK_ID] = torch.tensor([0.0, 1])
        d.W_o.weight.zero_()
        d.W_o.bias.zero_()
        d.W_o.weight[UNK_ID, 0] = 10.0
        d.W_o.weight[EOS_ID, 1] = 10.0
    path = tmp_path / "unk.pt"
    checkpoint.atomic_save(checkpoint.make_checkpoint(model, src, tgt, "en", "fr", {}), path)
    return path


def test_translate_cli_unk_dict(tmp_path: Path) -> None:
    """``nmt.tools.translate --unk-dict``: each <unk> becomes the dictionary's translation, else the source word."""
    ckpt = _unk_then_eos_model(tmp_path)
    write_lexicon({"cheese": [("fromage", 3)], "the": [("le", 5)]}, tmp_path / "lex.tsv")
    lines = ["cheese", "Zorblax", "cheese Zorblax"]

    def run(*extra: str) -> Ran:
        ran = run_nmt(["translate", "--checkpoint", str(ckpt), *extra], "\n".join(lines) + "\n")
        assert ran.returncode == 0, ran.stderr
        return ran

    def cli(*extra: str) -> list[str]:
        return run(*extra).stdout.splitlines()

    assert cli() == [UNK] * 3
    out = cli("--unk-dict", str(tmp_path / "lex.tsv"))
    # one-word sources: the only real word is the most attended one (</s> never is)
    assert out[:2] == ["fromage", "Zorblax"]
    assert out[2] in ("fromage", "Zorblax")
    # the model's own dictionary (beside the checkpoint): bare --unk-replace uses it, "copy" does not
    write_lexicon({"cheese": [("fromage", 3)]}, tmp_path / f"unk{SUFFIX}")
    assert cli("--unk-replace")[:2] == ["fromage", "Zorblax"]
    assert cli("--unk-replace", "copy")[:2] == ["cheese", "Zorblax"]
    # each replacement is marked on stderr as the app marks it; without replacement, no such line
    marks = run("--unk-replace").stderr.splitlines()
    assert marks[:2] == ["line 1: «fromage» from the dictionary ('cheese')", "line 2: «Zorblax» copied"]
    assert len(marks) == 3 and run().stderr == ""


def test_the_dictionary_bench_writes_each_trace_three_ways() -> None:
    """bench/unk_dictionary.py: <unk> kept, copied (the dictionary ignored) and from the dictionary."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_unk", ROOT / "bench" / "unk_dictionary.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)

    class Tok:
        def detokenize(self, words: list[str]) -> str:
            return " ".join(words)

    lm = type("LM", (), {"tgt_tok": Tok()})()
    traces = [_trace(STEPS, {"cheese": "fromage", "ate": "mangé"}), None]
    assert bench.written(lm, traces, "kept") == (["le <unk> a <unk> <unk>", ""], {})
    assert bench.written(lm, traces, "copied") == (["le Zorblax a cheese ate", ""], {COPIED: 3})
    assert bench.written(lm, traces, "dictionary") == (["le Zorblax a fromage mangé", ""], {COPIED: 1, DICTIONARY: 2})
