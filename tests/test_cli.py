"""Command-line entry points: nmt.tools.translate, nmt.tools.evaluate."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import sacrebleu

from nmt.decoding import search as decoding
from nmt.text.tokenize import Tokenizer
from nmt.tools import evaluate
from nmt.tools import translate as translate_cli
from tests.conftest import ROOT, TINY_DATA
from tests.tool_run import run_main, run_nmt

# The fixture's test split: 20 held-out pairs, none of them a training pair. Source lengths in
# Moses tokens (full stop included), counted by hand; pairs 11-20 use words the training pairs
# never had, on both sides ("camel", "chameau", ...).
TEST_SRC_LENGTHS = [7, 8, 7, 8, 6, 6, 6, 8, 8, 14, 7, 7, 7, 7, 8, 8, 8, 3, 17, 9]
UNSEEN_WORDS = range(10, 20)
TWO_LINES = "A man rides a bike.\n\nTwo dogs play in the snow.\n"


def test_translate_cli_reads_stdin_writes_one_line_per_input(tiny_ckpt: Path) -> None:
    src = (TINY_DATA / "train.en").read_text().splitlines()
    ref = (TINY_DATA / "train.fr").read_text().splitlines()
    stdin = "\n".join([src[0], "", src[1], " ".join(["dog"] * 150)]) + "\n"
    res = run_nmt(["translate", "--checkpoint", str(tiny_ckpt), "--beam", "3"], stdin)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.split("\n")[:-1]
    assert len(lines) == 4
    assert lines[0] == ref[0] and lines[1] == "" and lines[2] == ref[1]
    assert "line 4" in res.stderr and "truncated" in res.stderr


def _sacrebleu(hyps: list[str], refs: list[str], **kw: object) -> float:
    """sacrebleu's own corpus_bleu function, called directly (not through nmt.text.metrics)."""
    return sacrebleu.corpus_bleu(hyps, [refs], **kw).score


def test_evaluate_cli_writes_json(tiny_lm, tiny_ckpt: Path, tmp_path: Path, capsys) -> None:
    """nmt.tools.evaluate on held-out pairs: the JSON holds translate()'s hypotheses, the three BLEU variants
    equal to sacrebleu run directly on them, the hand-counted length buckets each with its own BLEU;
    a pair whose reference has words outside the model's vocabulary is never matched exactly."""
    src = (TINY_DATA / "test.en").read_text().splitlines()
    ref = (TINY_DATA / "test.fr").read_text().splitlines()
    out = tmp_path / "res.json"
    rc = evaluate.main(["--checkpoint", str(tiny_ckpt), "--data", str(TINY_DATA), "--split", "test",
                        "--beam", "2", "--json", str(out)])
    assert rc == 0
    res = json.loads(out.read_text())
    assert res["sentences"] == 20 and res["beam"] == 2 and res["length_norm"] == "length"
    hyps = res["hypotheses"]
    assert hyps == decoding.translate(tiny_lm, src, beam=2)
    assert all(hyps[k] != ref[k] for k in UNSEEN_WORDS)
    assert res["bleu"]["score"] == pytest.approx(_sacrebleu(hyps, ref), abs=0.005)
    assert res["bleu"]["score"] < 100
    assert res["bleu_lc"]["score"] == pytest.approx(_sacrebleu(hyps, ref, lowercase=True), abs=0.005)
    fr = Tokenizer("fr")
    hyps_tok, ref_tok = ([" ".join(fr.tokenize(x)) for x in xs] for xs in (hyps, ref))
    assert res["bleu_tok_lc"]["score"] == pytest.approx(
        _sacrebleu(hyps_tok, ref_tok, lowercase=True, tokenize="none", force=True), abs=0.005)
    assert [(b["lo"], b["hi"], b["n"]) for b in res["by_length"]] == [(0, 10, 18), (10, 20, 2)]
    for b in res["by_length"]:
        idx = [k for k, n in enumerate(TEST_SRC_LENGTHS) if b["lo"] <= n < b["hi"]]
        assert b["score"] == pytest.approx(_sacrebleu([hyps[k] for k in idx], [ref[k] for k in idx]), abs=0.005)
    assert "nrefs:1|case:mixed" in capsys.readouterr().out


def test_translate_help_names_only_real_options() -> None:
    """Every --option the description mentions exists (it once named a --max-src-tokens that did not)."""
    p = translate_cli.parser()
    named = set(re.findall(r"--[a-z][a-z-]+", p.description or ""))
    real = {o for a in p._actions for o in a.option_strings}
    assert named == {"--checkpoint", "--beam", "--max-src-tokens", "--chunk", "--unk-replace", "--allow-unsealed",
                     "--app-rules"}
    assert named <= real


def test_translate_truncates_at_max_src_tokens_and_streams(tiny_lm: object) -> None:
    """Three lines in chunks of two: the first chunk is written before the third line is read;
    ``--max-src-tokens 3`` keeps 3 of line 2's 5 tokens, noted on stderr with its line number."""
    out, err = io.StringIO(), io.StringIO()
    read: list[str] = []

    def stdin() -> Iterator[str]:
        for line in ["a dog .\n", "two dogs run on grass\n", "\n"]:
            if len(read) == 2:  # the first chunk's two translations are out already
                assert out.getvalue().count("\n") == 2
            read.append(line)
            yield line

    args = translate_cli.parser().parse_args(["--checkpoint", "x", "--max-src-tokens", "3", "--chunk", "2"])
    translate_cli.translate_stream(tiny_lm, stdin(), out, err, args)
    lines = out.getvalue().split("\n")
    assert len(lines) == 4 and lines[2] == "" and lines[3] == ""
    assert err.getvalue() == "line 2: source longer than 3 tokens, truncated\n"
    short = decoding.translate(tiny_lm, ["two dogs run"])[0]  # the same three tokens, given whole
    assert lines[1] == short


def test_one_tool_lists_its_subcommands_and_runs_each_as_its_module_does(tiny_ckpt: Path) -> None:
    """``python -m nmt`` names every subcommand; ``python -m nmt translate`` writes what the old ``python -m
    nmt.translate`` writes (forwarded to the same main, with a note); an unknown subcommand is one line and
    exit status 2. In this process (tests/tool_run.py), but for the one real start in the smoke test below."""
    import runpy

    import nmt.__main__ as tool

    helped = run_nmt(["--help"])
    assert helped.returncode == 0
    listed = re.findall(r"^  (\w+)  ", helped.stdout, flags=re.M)
    assert listed == ["translate", "evaluate", "experiment", "paired", "align", "faithfulness", "export", "timeline",
                      "seal", "serve", "import"]
    for name, (module, _) in tool.SUBCOMMANDS.items():  # `import` is a keyword: its module is nmt.tools.importers
        assert module == {"import": "nmt.tools.importers"}.get(name, f"nmt.tools.{name}")
        assert callable(__import__(module, fromlist=["main"]).main)
    args = ["--checkpoint", str(tiny_ckpt), "--beam", "2"]
    new = run_nmt(["translate", *args], TWO_LINES)
    old = run_main(lambda argv: runpy.run_module("nmt.translate", run_name="__main__"), args, TWO_LINES)
    assert new.returncode == old.returncode == 0
    assert new.stdout == old.stdout and len(new.stdout.splitlines()) == 3
    assert old.stderr.startswith("note: `python -m nmt.translate` is now `python -m nmt translate`")
    bad = run_nmt(["transalte"])
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "unknown subcommand 'transalte'" in bad.stderr
    damaged = run_nmt(["translate", "--checkpoint", str(ROOT / "README.md")])
    assert damaged.returncode == 2 and damaged.stderr.startswith("error: ") and damaged.stderr.count("\n") == 1


def test_python_m_nmt_translate_starts_and_translates(tiny_ckpt: Path, tiny_lm: object) -> None:
    """The smoke test of the real entry point: one ``python -m nmt translate`` process, in a fresh
    interpreter, writes the same lines as the in-process calls above (the tool family's only start)."""
    res = subprocess.run([sys.executable, "-m", "nmt", "translate", "--checkpoint", str(tiny_ckpt), "--beam", "2"],
                         input=TWO_LINES, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.split("\n")
    assert len(lines) == 4 and lines[1] == lines[3] == ""
    assert [lines[0], lines[2]] == decoding.translate(tiny_lm, ["A man rides a bike.", "Two dogs play in the snow."],
                                                      beam=2)


def test_a_tool_run_in_process_leaves_the_process_as_it_was(tiny_ckpt: Path) -> None:
    """tests/tool_run.py puts back what a tool changes for its process: ``--allow-unsealed`` sets
    RNNSEARCH_ALLOW_UNSEALED, ``$RNNSEARCH_THREADS`` sets torch's threads, ``python -m nmt`` rewrites
    sys.argv and the tool's logging adds a root handler; none of it reaches the next test."""
    import logging
    import os

    import torch

    from nmt.models.seal import UNSEALED_ENV

    before = (os.environ.get(UNSEALED_ENV), torch.get_num_threads(), list(sys.argv), list(logging.getLogger().handlers),
              os.getcwd())
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RNNSEARCH_THREADS", str(before[1] + 1))
        ran = run_nmt(["translate", "--checkpoint", str(tiny_ckpt), "--allow-unsealed"], "a dog .\n")
        assert ran.returncode == 0 and len(ran.stdout.splitlines()) == 1
    after = (os.environ.get(UNSEALED_ENV), torch.get_num_threads(), list(sys.argv), list(logging.getLogger().handlers),
             os.getcwd())
    assert after == before
