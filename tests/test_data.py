"""Tokenisation, vocabularies, corpus reading and minibatching."""

from __future__ import annotations

import gzip
import lzma
from pathlib import Path

import pytest

from nmt.text.data import Example, batches, corpus_file, encode_examples, filter_by_length, make_batch, read_parallel
from nmt.text.tokenize import Tokenizer
from nmt.text.vocab import BOS_ID, EOS_ID, PAD_ID, UNK_ID, Vocab


def test_moses_round_trip_fr() -> None:
    tok = Tokenizer("fr")
    words = tok.tokenize("L'homme porte un chapeau rouge, non ?")
    assert words == ["L'", "homme", "porte", "un", "chapeau", "rouge", ",", "non", "?"]
    assert tok.detokenize(words) == "L'homme porte un chapeau rouge, non ?"
    # punctuation is normalised the Moses way: guillemets become plain quotes
    assert tok.tokenize("« rouge »") == ['"', "rouge", '"']


def test_tokenizer_keeps_html_as_text() -> None:
    """Markup is split like any text (never unescaped or dropped)."""
    assert Tokenizer("en").tokenize("<script>alert(1)</script>") == [
        "<", "script", ">", "alert", "(", "1", ")", "<", "/", "script", ">"]


@pytest.mark.parametrize(("lang", "tokens", "text"), [
    ("fr", ["Un", "<unk>", "fait", "du", "<unk>", "."], "Un <unk> fait du <unk>."),
    ("fr", ["L'", "<unk>", "porte", "un", "<unk>", ",", "non", "?"], "L'<unk> porte un <unk>, non ?"),
    ("fr", ["<unk>", "<s>", "<pad>", "."], "<unk> <s> <pad>."),
    ("en", ["A", "<unk>", "'s", "<unk>", "."], "A <unk>'s <unk>."),
])
def test_model_specials_survive_detokenise_then_tokenise(lang: str, tokens: list[str], text: str) -> None:
    """A model's output with <unk>, <s> or <pad> detokenises to the expected text and tokenises back
    to the same tokens (sacremoses alone splits "<unk>" into "<", "unk", ">" and leaves "L' <unk>")."""
    tok = Tokenizer(lang)
    assert tok.detokenize(tokens) == text
    assert tok.tokenize(text) == tokens


def test_only_the_exact_specials_are_kept_whole() -> None:
    """</s>, other case and other markup stay ordinary text; a glued special stays inside its word;
    an absurd number of specials (past sacremoses' limit) is split rather than failing."""
    tok = Tokenizer("en")
    assert tok.tokenize("a </s> <UNK> <b>") == ["a", "<", "/", "s", ">", "<", "UNK", ">", "<", "b", ">"]
    assert tok.tokenize("x<unk>y <unk>.") == ["x<unk>y", "<unk>", "."]
    assert tok.tokenize(" ".join(["<unk>"] * 1001)) == ["<", "unk", ">"] * 1001


def test_unsupported_language() -> None:
    with pytest.raises(ValueError):
        Tokenizer("xx")


def test_vocab_shortlist_and_unknowns() -> None:
    v = Vocab.build([["a", "b", "a"], ["c", "a", "b"]], max_size=6)
    assert v.itos == ["<pad>", "<unk>", "<s>", "</s>", "a", "b"]
    assert v.encode(["a", "c"]) == [4, UNK_ID, EOS_ID]
    assert v.decode([4, 5, EOS_ID, 4]) == ["a", "b"]
    assert Vocab.build([["a", "b", "a"]], max_size=10, min_freq=2).itos[4:] == ["a"]


def test_read_plain_and_gzipped(tmp_path: Path) -> None:
    (tmp_path / "x.en").write_text("one\ntwo\n")
    with gzip.open(tmp_path / "x.fr.gz", "wt") as f:
        f.write("un\ndeux\n")
    assert read_parallel(tmp_path, "x", "en", "fr") == (["one", "two"], ["un", "deux"])
    with lzma.open(tmp_path / "z.en.xz", "wt") as f:
        f.write("three\n")
    (tmp_path / "z.fr").write_text("trois\n")
    assert read_parallel(tmp_path, "z", "en", "fr") == (["three"], ["trois"])
    with pytest.raises(FileNotFoundError, match="README"):
        corpus_file(tmp_path, "y", "en")


def test_mismatched_line_counts_fail_clearly(tmp_path: Path) -> None:
    (tmp_path / "x.en").write_text("one\ntwo\n")
    (tmp_path / "x.fr").write_text("un\n")
    with pytest.raises(ValueError, match="2 en lines but 1 fr"):
        read_parallel(tmp_path, "x", "en", "fr")


def test_length_filter() -> None:
    ex = [Example(["a"] * 3, ["b"] * 3), Example(["a"] * 31, ["b"] * 3), Example([], ["b"])]
    assert filter_by_length(ex, 30) == [ex[0]]


def test_batch_tensors() -> None:
    v = Vocab.build([["a", "b", "c"]], 10)
    b = make_batch([Example(["a", "b"], ["c"]), Example(["a"], ["b", "c"])], v, v)
    assert b.src.tolist() == [[4, 5, EOS_ID], [4, EOS_ID, PAD_ID]]
    assert b.tgt_in.tolist() == [[BOS_ID, 6, PAD_ID], [BOS_ID, 5, 6]]
    assert b.tgt_out.tolist() == [[6, EOS_ID, PAD_ID], [5, 6, EOS_ID]]
    assert b.n_tgt_tokens == 5


def test_stored_ids_give_the_same_batch_and_only_under_their_vocabularies() -> None:
    v = Vocab.build([["a", "b", "c"]], 10)
    ex = [Example(["a", "b"], ["c"]), Example(["a"], ["b", "c"])]
    encode_examples(ex, v, v)
    assert ex[0].ids is not None and ex[0].ids.src.tolist() == [4, 5, EOS_ID]  # by hand, as above
    b = make_batch(ex, v, v)
    assert b.src.tolist() == [[4, 5, EOS_ID], [4, EOS_ID, PAD_ID]]
    assert b.tgt_in.tolist() == [[BOS_ID, 6, PAD_ID], [BOS_ID, 5, 6]]
    assert b.tgt_out.tolist() == [[6, EOS_ID, PAD_ID], [5, 6, EOS_ID]]
    other = Vocab.build([["c", "c", "b"]], 10)  # c=4, b=5: the stored ids are not this vocabulary's
    assert make_batch(ex, other, other).src.tolist() == [[UNK_ID, 5, EOS_ID], [UNK_ID, EOS_ID, PAD_ID]]


def test_batches_are_length_sorted_within_chunks_and_cover_everything() -> None:
    ex = [Example(["w"] * (1 + (i * 7) % 13), ["w"]) for i in range(100)]
    v = Vocab.build([["w"]], 10)
    bs = list(batches(ex, v, v, batch_size=10, chunk_batches=5, seed=3))
    assert sum(b.src.shape[0] for b in bs) == 100
    for b in bs:
        lens = b.src_len.tolist()
        assert max(lens) - min(lens) <= 4  # sorted within a chunk of 50: near-equal lengths
    again = list(batches(ex, v, v, batch_size=10, chunk_batches=5, seed=3))
    assert all((a.src == b.src).all() for a, b in zip(bs, again))  # seeded
