"""Training data for a 30k-word, truecased en→fr model (issue 20), compact enough for a 64 MiB upload.

    python scripts/prep_large_vocab.py --data ../shared/data --out .gpu-data-tc --pairs 20000 --jobs 1  # rehearsal
    nice python scripts/prep_large_vocab.py --data ../shared/data --out .gpu-data-tc --jobs 2               # all

Reads (README of the data folder, §3, §3a, §5) Europarl ``train`` + ``train_rest`` (``--europarl-pairs``
in all, ``train`` first: 950k pairs make ~55 MiB of xz, what the upload holds) and Tatoeba ``train``
(``--pairs`` caps each corpus, for rehearsals), drops pairs with a side equal to a dev or test
sentence used here (§3a), Moses-tokenises them (:mod:`nmt.text.tokenize`, ``--jobs``
processes), trains one truecaser per language on all of it (:mod:`nmt.text.truecase`) and truecases
it; keeps pairs with 1…``--max-len`` tokens on both sides, drops exact duplicates, and repeats the
Tatoeba pairs ``--tatoeba-copies`` times (everyday words Europarl lacks). Then it builds the
``--vocab`` most frequent words per language on exactly that training set and writes, to ``--out``:

* ``train.tc.{en,fr}.xz``: the training pairs, one line of space-separated tokens, every word
  outside the vocabulary written as ``<unk>``: ``train.py --pretokenized`` builds the *same*
  vocabularies from them (the kept words keep their counts), and rare words cost no upload bytes;
* ``--lex-out``/``lex.tc.{en,fr}.xz`` (not uploaded): the deduplicated pairs (Tatoeba once) with every
  word kept, for ``scripts/build_lexicon.py`` (eflomal, on the CPU) and the ``<unk>`` dictionary;
* ``vocab.{en,fr}.txt``, ``truecase.{en,fr}.json`` (restricted to the vocabulary), raw
  ``valid`` (Tatoeba dev + 500 Europarl dev2000q4) and test sets, and ``summary.json`` (counts,
  bytes, and the OOV rate of each test set with and without truecasing).
"""

from __future__ import annotations

import argparse
import gzip
import json
import lzma
import sys
import time
from collections.abc import Sequence
from multiprocessing import Pool
from pathlib import Path
from sys import intern
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nmt.text.data import corpus_file, read_lines, read_parallel
from nmt.text.tokenize import Tokenizer
from nmt.text.truecase import Truecaser
from nmt.text.vocab import UNK, Vocab

SRC, TGT = "en", "fr"
TRAIN = (("europarl-v7-fr-en", "train"), ("europarl-v7-fr-en", "train_rest"), ("tatoeba-fr-en", "train"))
TESTS = {"tatoeba-test": ("tatoeba-fr-en", "test", None), "test2000q4": ("europarl-v7-fr-en", "test2000q4", None),
         "newstest2014": ("wmt", "newstest2014-fren", None)}
VALID = (("tatoeba-fr-en", "dev", None), ("europarl-v7-fr-en", "dev2000q4", 500))
Pairs = list[tuple[list[str], list[str]]]


def _tokenize_chunk(job: tuple[str, list[str]]) -> list[list[str]]:
    lang, lines = job
    tok = Tokenizer(lang)
    return [tok.tokenize(line) for line in lines]


def tokenize(lines: Sequence[str], lang: str, jobs: int, chunk: int = 5000) -> list[list[str]]:
    """Moses tokens of every line, in order, on ``jobs`` processes."""
    work = [(lang, list(lines[k : k + chunk])) for k in range(0, len(lines), chunk)]
    # Interned words: millions of sentences share one string object per distinct word (memory).
    if jobs <= 1:
        return [[intern(w) for w in s] for job in work for s in _tokenize_chunk(job)]
    with Pool(jobs) as pool:
        return [[intern(w) for w in s] for part in pool.imap(_tokenize_chunk, work) for s in part]


def held_out(data: Path) -> set[str]:
    """Every sentence (either language) of the dev and test sets used here."""
    specs = [*TESTS.values(), *VALID, ("europarl-v7-fr-en", "dev2000q4", None)]
    return {x for folder, split, _ in specs for lang in (SRC, TGT)
            for x in read_lines(corpus_file(data / folder, split, lang))}


def read_training(data: Path, limit: int | None, europarl: int,
                  jobs: int) -> dict[str, tuple[list[list[str]], list[list[str]]]]:
    """Tokenised (not yet truecased) sides of each training corpus: at most ``limit`` pairs of each and
    ``europarl`` Europarl pairs in all (``train`` first); pairs with a dev/test sentence dropped (§3a)."""
    out, skip, read = {}, held_out(data), {}
    for folder, split in TRAIN:
        caps = [limit] if limit is not None else []
        if folder.startswith("europarl"):
            caps.append(europarl - sum(n for name, n in read.items() if name.startswith("europarl")))
        cap = min(caps) if caps else None
        src, tgt = read_parallel(data / folder, split, SRC, TGT, cap) if cap is None or cap > 0 else ([], [])
        read[f"{folder}/{split}"] = len(src)
        keep = [i for i, (a, b) in enumerate(zip(src, tgt, strict=True)) if a not in skip and b not in skip]
        out[f"{folder}/{split}"] = (tokenize([src[i] for i in keep], SRC, jobs),
                                    tokenize([tgt[i] for i in keep], TGT, jobs))
        print(f"{folder}/{split}: {len(keep)} of {len(src)} pairs tokenised", file=sys.stderr)
    return out


def select(src: Sequence[Sequence[str]], tgt: Sequence[Sequence[str]], max_len: int,
           seen: set[tuple[str, str]]) -> list[int]:
    """Indices of the pairs with 1…max_len tokens on both sides and not in ``seen`` (which they join)."""
    out = []
    for i, (s, t) in enumerate(zip(src, tgt, strict=True)):
        key = (" ".join(s), " ".join(t))
        if 1 <= len(s) <= max_len and 1 <= len(t) <= max_len and key not in seen:
            seen.add(key)
            out.append(i)
    return out


def write_tokens(path: Path, sentences: Sequence[Sequence[str]], vocab: Vocab | None = None) -> None:
    """One line of space-separated tokens per sentence (``<unk>`` for words outside ``vocab``), xz."""
    with lzma.open(path, "wt", encoding="utf-8", preset=9 | lzma.PRESET_EXTREME) as f:
        for s in sentences:
            f.write(" ".join(w if vocab is None or w in vocab else UNK for w in s) + "\n")


def copy_raw(data: Path, out: Path, name: str, parts: Sequence[tuple[str, str, int | None]]) -> int:
    """Raw sentence pairs of one or more splits, gzipped under ``out/name.{en,fr}.gz``; their count."""
    n = 0
    for lang in (SRC, TGT):
        lines = [x for folder, split, limit in parts
                 for x in read_lines(corpus_file(data / folder, split, lang), limit)]
        with gzip.open(out / f"{name}.{lang}.gz", "wt", encoding="utf-8", compresslevel=9) as f:
            f.writelines(x + "\n" for x in lines)
        n = len(lines)
    return n


def oov_rates(data: Path, tcs: dict[str, Truecaser], vocabs: dict[str, Vocab], cased: dict[str, Vocab],
              jobs: int) -> dict[str, Any]:
    """Share of test tokens outside the vocabulary: truecased text vs the same vocabulary size without."""
    out: dict[str, Any] = {}
    for name, (folder, split, limit) in TESTS.items():
        src, tgt = read_parallel(data / folder, split, SRC, TGT, limit)
        row: dict[str, Any] = {"pairs": len(src)}
        for lang, lines in ((SRC, src), (TGT, tgt)):
            toks = tokenize(lines, lang, jobs)
            n = sum(map(len, toks))
            row[f"{lang}_oov_cased"] = round(sum(w not in cased[lang] for s in toks for w in s) / n, 4)
            row[f"{lang}_oov_truecased"] = round(
                sum(w not in vocabs[lang] for s in toks for w in tcs[lang].truecase(s)) / n, 4)
        out[name] = row
    return out


def build(args: argparse.Namespace) -> dict[str, Any]:
    """Everything but the test-set OOV rates; returns the summary."""
    t0, out, data = time.time(), Path(args.out), Path(args.data)
    out.mkdir(parents=True, exist_ok=True)
    corpora = read_training(data, args.pairs, args.europarl_pairs, args.jobs)
    tcs = {lang: Truecaser.train(s for src, tgt in corpora.values() for s in (src if lang == SRC else tgt))
           for lang in (SRC, TGT)}
    print(f"truecasers trained ({time.time() - t0:.0f}s)", file=sys.stderr)
    kept: dict[str, Pairs] = {}
    kept_cased: dict[str, Pairs] = {}
    seen: set[tuple[str, str]] = set()  # exact duplicates are dropped across all corpora
    for name, (src, tgt) in corpora.items():
        idx = select(src, tgt, args.max_len, seen)
        kept_cased[name] = [(src[i], tgt[i]) for i in idx]
        kept[name] = [([intern(w) for w in tcs[SRC].truecase(src[i])], [intern(w) for w in tcs[TGT].truecase(tgt[i])])
                      for i in idx]
    tatoeba = kept.pop("tatoeba-fr-en/train")
    train = [p for pairs in kept.values() for p in pairs] + tatoeba * args.tatoeba_copies
    vocabs = {SRC: Vocab.build((s for s, _ in train), args.vocab), TGT: Vocab.build((t for _, t in train), args.vocab)}
    tatoeba_cased = kept_cased.pop("tatoeba-fr-en/train")
    train_cased = [p for pairs in kept_cased.values() for p in pairs] + tatoeba_cased * args.tatoeba_copies
    cased = {SRC: Vocab.build((s for s, _ in train_cased), args.vocab),  # the same pairs, not truecased (OOV)
             TGT: Vocab.build((t for _, t in train_cased), args.vocab)}
    lexicon = tatoeba + [p for pairs in kept.values() for p in pairs]
    Path(args.lex_out).mkdir(parents=True, exist_ok=True)
    for k, lang in enumerate((SRC, TGT)):
        write_tokens(out / f"train.tc.{lang}.xz", [p[k] for p in train], vocabs[lang])
        write_tokens(Path(args.lex_out) / f"lex.tc.{lang}.xz", [p[k] for p in lexicon])
        (out / f"vocab.{lang}.txt").write_text("".join(w + "\n" for w in vocabs[lang].itos), encoding="utf-8")
        (out / f"truecase.{lang}.json").write_text(json.dumps(tcs[lang].restrict(vocabs[lang]).to_dict(),
                                                              ensure_ascii=False), encoding="utf-8")
    summary: dict[str, Any] = {
        "pairs_tokenised": {n: len(s) for n, (s, _) in corpora.items()},
        "pairs_kept": {**{n: len(p) for n, p in kept.items()}, "tatoeba-fr-en/train": len(tatoeba)},
        "tatoeba_copies": args.tatoeba_copies, "train_pairs": len(train), "lexicon_pairs": len(lexicon),
        "max_len": args.max_len, "vocab": {lang: len(v) for lang, v in vocabs.items()},
        "valid_pairs": copy_raw(data, out, "valid", VALID),
        "test_pairs": {name: copy_raw(data, out, name, [spec]) for name, spec in TESTS.items()},
        "train_unk_rate": {lang: round(sum(w not in vocabs[lang] for p in train for w in p[k])
                                       / max(1, sum(len(p[k]) for p in train)), 4)
                           for k, lang in enumerate((SRC, TGT))},
    }
    summary["oov"] = oov_rates(data, tcs, vocabs, cased, args.jobs)
    summary["bytes"] = {p.name: p.stat().st_size for p in sorted(out.iterdir()) if p.is_file()}
    summary["total_mib"] = round(sum(summary["bytes"].values()) / 2**20, 2)
    summary["seconds"] = round(time.time() - t0, 1)
    return summary


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default="data", help="the shared data folder (README §3, §3a, §5, §6)")
    p.add_argument("--out", default=".gpu-data-tc")
    p.add_argument("--pairs", type=int, default=None, help="first N pairs of each training corpus (rehearsal)")
    p.add_argument("--max-len", type=int, default=50)
    p.add_argument("--vocab", type=int, default=30000, help="words per language, specials included")
    p.add_argument("--tatoeba-copies", type=int, default=3)
    p.add_argument("--europarl-pairs", type=int, default=950000,
                   help="Europarl pairs read in all (train, then train_rest): what fits the upload")
    p.add_argument("--lex-out", default=".lexicon-data", help="where the lexicon text goes (not uploaded)")
    p.add_argument("--jobs", type=int, default=1)
    args = p.parse_args(argv)
    summary = build(args)
    (Path(args.out) / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    print(json.dumps(summary, indent=1))
    if summary["total_mib"] > 60:
        print(f"warning: {summary['total_mib']} MiB does not fit a 64 MiB upload with the tracked files; "
              "lower --europarl-pairs", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
