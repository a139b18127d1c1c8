"""scripts/prep_large_vocab.py on a fake data folder made of the tiny fixture (issue 20)."""

from __future__ import annotations

import json
import lzma
import shutil
from pathlib import Path

from nmt.text.truecase import load_models
from nmt.text.vocab import UNK, Vocab
from scripts import prep_large_vocab
from tests.conftest import TINY_DATA

LAYOUT = {  # data-folder file → tiny fixture split
    "europarl-v7-fr-en/train": "train", "europarl-v7-fr-en/train_rest": "train",
    "europarl-v7-fr-en/dev2000q4": "val", "europarl-v7-fr-en/test2000q4": "test",
    "tatoeba-fr-en/train": "train", "tatoeba-fr-en/dev": "val", "tatoeba-fr-en/test": "test",
    "wmt/newstest2014-fren": "test",
}


def _data(tmp: Path) -> Path:
    for name, split in LAYOUT.items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        for lang in ("en", "fr"):
            shutil.copy(TINY_DATA / f"{split}.{lang}", tmp / f"{name}.{lang}")
    # Tatoeba: the training pairs as exclamations (other pairs than Europarl's), plus one test pair
    for lang, extra in (("en", "A man is riding a camel."), ("fr", "Un homme monte un chameau.")):
        path = tmp / f"tatoeba-fr-en/train.{lang}"
        lines = [x.removesuffix(".") + " !" for x in path.read_text(encoding="utf-8").splitlines()]
        path.write_text("\n".join([*lines, extra]) + "\n", encoding="utf-8")
    return tmp


def test_prep_writes_what_train_py_rebuilds(tmp_path: Path) -> None:
    data, out = _data(tmp_path / "data"), tmp_path / "out"
    assert prep_large_vocab.main(["--data", str(data), "--out", str(out), "--lex-out", str(tmp_path / "lex"),
                                  "--vocab", "40", "--europarl-pairs", "30", "--tatoeba-copies", "2"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    # Europarl: all 20 of train, then 10 of train_rest (30 in all). Dropped as held out: the 5 pairs
    # that are also the dev set (tiny "val" = the first 5 training pairs) and Tatoeba's camel (a test pair).
    assert summary["pairs_tokenised"] == {"europarl-v7-fr-en/train": 15, "europarl-v7-fr-en/train_rest": 5,
                                          "tatoeba-fr-en/train": 20}
    # train_rest's 5 repeat train's pairs 6-10 (duplicates dropped); Tatoeba's 20 pairs twice
    assert summary["train_pairs"] == 15 + 0 + 2 * 20
    sides = {lang: [line.split(" ") for line in lzma.open(out / f"train.tc.{lang}.xz", "rt", encoding="utf-8")
                    .read().splitlines()] for lang in ("en", "fr")}
    for lang in ("en", "fr"):
        written = (out / f"vocab.{lang}.txt").read_text(encoding="utf-8").splitlines()
        assert len(written) == 40
        assert Vocab.build(sides[lang], 40).itos == written  # what train.py --pretokenized builds
        assert any(UNK in s for s in sides[lang])  # words past the 40 are written as <unk>
        assert set(w for s in sides[lang] for w in s) <= set(written)
    # truecased: "The man is wearing a red hat." (training pair 6) starts with the mid-sentence spelling
    assert sides["en"][0][:5] == ["the", "man", "is", "wearing", "a"]
    tcs = load_models(str(out / "truecase"), "en", "fr")
    assert tcs["src"].truecase(["A", "man"]) == ["a", "man"]
    lex_lines = lzma.open(tmp_path / "lex" / "lex.tc.en.xz", "rt", encoding="utf-8").read().splitlines()
    assert len(lex_lines) == 20 + 15 and UNK not in " ".join(lex_lines)  # Tatoeba once, every word kept
    assert summary["oov"]["tatoeba-test"]["pairs"] == 20
