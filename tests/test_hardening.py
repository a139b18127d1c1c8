"""Hardening (issue 12): corpora only from configured roots, no tracebacks, damaged checkpoints refused.

Each test drives what an attacker or a careless user would do (a path in the URL, a number the
widget cannot hold, a flipped byte in a checkpoint, a truncated corpus) and checks what they see.
"""

from __future__ import annotations

import gzip
import re
import shutil
import tomllib
import zipfile
from pathlib import Path

import pytest
import torch
from streamlit.testing.v1 import AppTest

from nmt.models import checkpoint, seal
from nmt.models.checkpoint import CheckpointError
from nmt.text import corpora
from nmt.text.corpora import DataRoot
from nmt.text.data import CorpusError, read_lines
from nmt.tools import cli
from nmt.tools.experiment import score_test_set
from tests.conftest import plain
from tests.page_app import app_at
from tests.tool_run import run_nmt
from ui.alignment import views_uploads as uploads
from ui.figures import alignment

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 120



def pair(d: Path, name: str, en: str, fr: str) -> None:
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{name}.en").write_text(en + "\n", encoding="utf-8")
    (d / f"{name}.fr").write_text(fr + "\n", encoding="utf-8")


# ----------------------------------------------------------------------------------------------
# Corpora come only from configured roots
# ----------------------------------------------------------------------------------------------


def test_find_splits_lists_plain_gzipped_and_gold_sets_under_a_root(tmp_path: Path) -> None:
    (tmp_path / "m30k").mkdir()
    for lang in ("en", "fr"):
        with gzip.open(tmp_path / "m30k" / f"val.{lang}.gz", "wt", encoding="utf-8") as f:
            f.write("x\n")
        (tmp_path / "m30k" / f"test.{lang}").write_text("x\n")
    (tmp_path / "m30k" / "lonely.en").write_text("x\n")  # no French side: not a split
    gold = tmp_path / "alignment" / "hans"
    for name in ("test.en", "test.fr", "test.en-fr.sure", "test.en-fr.possible"):
        gold.mkdir(parents=True, exist_ok=True)
        (gold / name).write_text("0-0\n")
    pair(gold / "orig", "raw", "x", "x")  # untouched originals are not offered
    pair(tmp_path / "a" / "b" / "c" / "d", "deep", "x", "x")  # four folders down: beyond the walk
    splits = corpora.find_splits([DataRoot("data", tmp_path)], "en", "fr")
    assert [s.label for s in splits] == ["alignment/hans/test", "m30k/test", "m30k/val"]
    assert [s.gold for s in splits] == [True, False, False]
    assert corpora.gold_files(splits[0], "en", "fr") == (gold / "test.en-fr.sure", gold / "test.en-fr.possible")
    assert corpora.find_splits([DataRoot("data", tmp_path / "missing")], "en", "fr") == []


def test_symlinks_out_of_a_root_are_not_followed_and_labels_are_not_paths(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "secret"
    pair(root / "m30k", "val", "inside", "dedans")
    pair(outside, "passwords", "hunter2", "hunter2")
    (root / "escape").symlink_to(outside, target_is_directory=True)
    (root / "m30k" / "leak.en").symlink_to(outside / "passwords.en")
    (root / "m30k" / "leak.fr").symlink_to(outside / "passwords.fr")
    splits = corpora.find_splits([DataRoot("data", root.resolve())], "en", "fr")
    assert [s.label for s in splits] == ["m30k/val"]
    for label in ("../secret/passwords", str(outside / "passwords"), "escape/passwords", "m30k/leak", "~/x"):
        assert corpora.by_label(splits, label) is None


def test_configured_roots_come_from_the_env_and_the_allow_list(tmp_path: Path) -> None:
    config = tmp_path / "roots.toml"
    config.write_text('[[root]]\nname = "extra"\npath = "more"\n', encoding="utf-8")
    roots = corpora.configured_roots({"RNNSEARCH_DATA": "corp"}, config, project=tmp_path)
    builtin = DataRoot("built-in", tmp_path / "evalsets")  # always last, labels bare like data/'s
    assert roots == [DataRoot("data", tmp_path / "corp"), DataRoot("extra", tmp_path / "more", prefixed=True),
                     builtin]
    assert corpora.configured_roots({}, tmp_path / "none.toml", project=tmp_path) == [
        DataRoot("data", tmp_path / "data"), builtin]
    pair(tmp_path / "corp" / "m30k", "val", "a", "b")
    pair(tmp_path / "more" / "wmt", "news", "a", "b")
    assert [s.label for s in corpora.find_splits(roots, "en", "fr")] == ["extra:wmt/news", "m30k/val"]
    config.write_text('[[root]]\npath = "x"\n', encoding="utf-8")
    with pytest.raises(ValueError, match="needs a name and a path"):
        corpora.configured_roots({}, config, project=tmp_path)


@pytest.fixture
def app_env(tiny_checkpoint_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data root with one small split, and a secret pair outside it."""
    data = tmp_path / "data"
    src = (ROOT / "tests" / "fixtures" / "tiny" / "val.en").read_text(encoding="utf-8")
    ref = (ROOT / "tests" / "fixtures" / "tiny" / "val.fr").read_text(encoding="utf-8")
    pair(data / "m30k", "val", src.strip(), ref.strip())
    pair(tmp_path / "outside", "secret", "The launch code is 1234.", "Le code est 1234.")
    monkeypatch.setenv("RNNSEARCH_CHECKPOINTS", str(tiny_checkpoint_dir))
    monkeypatch.setenv("RNNSEARCH_DATA", str(data))
    return tmp_path


def run_page(page: str, **params: str) -> AppTest:
    at = app_at(f"pages/{page}", TIMEOUT)
    at.query_params.update(params)
    return at.run()


def everything_shown(at: AppTest) -> str:
    """All text of a page run: Markdown, messages, tables and widget options."""
    parts = [e.value for kind in ("markdown", "caption", "error", "warning", "info", "success") for e in
             getattr(at, kind)]
    parts += [df.value.to_csv() for df in at.dataframe]
    parts += [str(o) for w in at.selectbox for o in w.options]
    return plain("\n".join(parts))


@pytest.mark.parametrize("page,params", [
    ("alignment_browser.py", {"al_data": "{out}", "al_split": "secret"}),
    ("alignment_browser.py", {"al_data": "../outside", "al_split": "../outside/secret"}),
    ("alignment_browser.py", {"al_split": "{out}/secret"}),
    ("bottleneck_compare.py", {"bn_from": "corpus by length", "bn_data": "{out}", "bn_split": "secret",
                               "bn_len": "5"}),
])
def test_a_url_cannot_make_a_page_read_outside_the_data_roots(app_env: Path, page: str,
                                                             params: dict[str, str]) -> None:
    out = str(app_env / "outside")
    at = run_page(page, **{k: v.format(out=out) for k, v in params.items()})
    assert not at.exception
    shown = everything_shown(at)
    assert "launch code" not in shown and "secret" not in shown
    assert "m30k/val" in shown  # the configured split is what is offered instead
    assert str(app_env) not in shown  # and no absolute server path is printed


def test_numbers_no_widget_can_hold_give_the_default_not_a_traceback(app_env: Path) -> None:
    at = run_page("alignment_browser.py", al_n="1e309", al_len="1e309")
    assert not at.exception and not at.error
    assert at.select_slider(key="al_n").value == 50
    at = run_page("bottleneck_compare.py", bn_from="corpus by length", bn_var="1e309", bn_len="-1e309")
    assert not at.exception and not at.error
    assert at.selectbox(key="bn_var").value == 0


def test_an_error_inside_a_page_shows_a_short_message_and_is_logged(
        app_env: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise OSError(f"[Errno 36] File name too long: '{app_env}/x'")

    monkeypatch.setattr(alignment, "filter_pairs", boom)
    at = run_page("alignment_browser.py")
    assert not at.exception  # no traceback reaches the visitor
    (msg,) = [e.value for e in at.error]
    assert plain(msg).startswith("Something went wrong while drawing this page (OSError)")
    assert str(app_env) not in plain(msg)
    ref = re.search(r"reference ([0-9a-f]{8})", plain(msg))
    assert ref is not None
    logged = [r for r in caplog.records if ref.group(1) in r.getMessage()]
    assert logged and logged[0].exc_info is not None  # the traceback is in the server log


def test_a_truncated_gzip_corpus_is_a_message_not_a_traceback(app_env: Path, tmp_path: Path) -> None:
    data = app_env / "data" / "broken"
    data.mkdir()
    for lang in ("en", "fr"):
        payload = gzip.compress(("A dog runs.\n" * 500).encode())
        (data / f"test.{lang}.gz").write_bytes(payload[: len(payload) // 2])
    with pytest.raises(CorpusError, match=r"^test\.en\.gz is truncated or damaged"):
        read_lines(data / "test.en.gz")
    at = run_page("alignment_browser.py", al_split="broken/test")
    assert not at.exception
    assert [plain(e.value) for e in at.error] == [
        "Cannot read broken/test: test.en.gz is truncated or damaged after 0 lines (Compressed file ended before "
        "the end-of-stream marker was reached)"]


def test_pasted_markdown_is_shown_as_typed(app_env: Path) -> None:
    at = run_page("alignment_browser.py", al_from="my own pairs")
    at.text_area(key="al_paste").input("**A dog** ![x](http://h/x.png) runs.\t`Un` chien court.").run()
    assert not at.exception
    detail = [m.value for m in at.markdown if m.value.startswith(("**Source**", "**Reference:**"))]
    assert len(detail) == 2
    assert "![x](" not in detail[0] and "\\*\\*A dog\\*\\*" in detail[0]
    assert plain(detail[1]) == "**Reference:** `Un` chien court."


# ----------------------------------------------------------------------------------------------
# Checkpoints: damaged files are refused in one plain line
# ----------------------------------------------------------------------------------------------


def flip_largest_tensor(path: Path, n: int = 4096) -> None:
    """Invert ``n`` bytes in the middle of the largest stored tensor (torch.save writes a plain zip)."""
    with zipfile.ZipFile(path) as z:
        info = max((i for i in z.infolist() if "/data/" in i.filename), key=lambda i: i.file_size)
    with open(path, "r+b") as f:
        f.seek(info.header_offset)
        header = f.read(30)
        start = info.header_offset + 30 + int.from_bytes(header[26:28], "little") + int.from_bytes(header[28:30],
                                                                                                   "little")
        f.seek(start + info.file_size // 2)
        data = f.read(min(n, info.file_size // 2))
        f.seek(start + info.file_size // 2)
        f.write(bytes(b ^ 0xFF for b in data))


def test_flipped_bytes_in_the_weights_are_refused(tiny_ckpt: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.pt"
    shutil.copy(tiny_ckpt, bad)
    flip_largest_tensor(bad)
    with pytest.raises(CheckpointError, match=r"^bad\.pt is damaged: its weights do not match"):
        checkpoint.load(bad)
    assert checkpoint.read_checkpoint(bad, mmap=True)["format"] == checkpoint.FORMAT  # metadata stays readable


def test_the_digest_covers_every_tensor_and_the_manifest_covers_old_files(tiny_ckpt: Path, tmp_path: Path) -> None:
    ckpt = checkpoint.read_checkpoint(tiny_ckpt)
    weights = ckpt["model"]
    digest = checkpoint.weights_digest(weights)
    assert ckpt["weights_sha256"] == digest and len(digest) == 64
    for name in list(weights)[:3]:  # one changed number anywhere changes the digest
        changed = dict(weights)
        changed[name] = weights[name].clone()
        changed[name].view(-1)[0] += 1
        assert checkpoint.weights_digest(changed) != digest
    old = {k: v for k, v in ckpt.items() if k not in ("weights_sha256", seal.SEAL)}  # written before digests
    torch.save(old, tmp_path / "old-rnnsearch.pt")
    assert checkpoint.load(tmp_path / "old-rnnsearch.pt", allow_unsealed=True).path  # no digest anywhere: loads
    (tmp_path / checkpoint.MANIFEST).write_text(f"{digest}  old-rnnsearch.pt\n")
    assert checkpoint.load(tmp_path / "old-rnnsearch.pt", allow_unsealed=True).path  # the manifest's digest matches
    first = sorted(weights)[0]
    old["model"] = dict(weights, **{first: weights[first] + 1})
    torch.save(old, tmp_path / "old-rnnsearch.pt")
    with pytest.raises(CheckpointError, match="is damaged"):
        checkpoint.load(tmp_path / "old-rnnsearch.pt", allow_unsealed=True)


def test_shipped_checkpoints_match_their_recorded_digests() -> None:
    shipped = sorted((ROOT / "checkpoints").glob("*.pt"))
    if not shipped:
        pytest.skip("no shipped checkpoints")
    listed = {line.split("  ")[1] for line in (ROOT / "checkpoints" / checkpoint.MANIFEST).read_text().splitlines()}
    for p in shipped:
        ckpt = checkpoint.read_checkpoint(p)  # verifies
        assert "weights_sha256" in ckpt or p.name in listed, f"{p.name} has no recorded digest"


def test_broken_files_give_one_plain_line(tmp_path: Path, tiny_ckpt: Path) -> None:
    (tmp_path / "empty.pt").write_bytes(b"")
    data = tiny_ckpt.read_bytes()
    (tmp_path / "half.pt").write_bytes(data[: len(data) // 2])

    class Evil:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return (print, ("this ran",))

    torch.save({"format": checkpoint.FORMAT, "x": Evil()}, tmp_path / "evil.pt")
    expected = {
        "empty.pt": "empty.pt is empty (0 bytes), not a checkpoint",
        "half.pt": "half.pt is not a valid checkpoint: it is truncated, damaged or not a PyTorch file",
        "evil.pt": "evil.pt holds objects that can only be loaded by running code from the file; it is not a valid "
                   "checkpoint and will not be loaded unsafely",
    }
    for name, message in expected.items():
        with pytest.raises(CheckpointError) as err:
            checkpoint.load(tmp_path / name)
        assert str(err.value) == message
    proc = run_nmt(["translate", "--checkpoint", str(tmp_path / "half.pt")], "A dog.\n")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"error: {expected['half.pt']}\n"  # one line, no traceback, no ANSI codes


# ----------------------------------------------------------------------------------------------
# Scoring where nothing is free of unknown words; the server's own settings
# ----------------------------------------------------------------------------------------------


def test_table1_scoring_with_no_unk_free_sentence(tiny_lm: checkpoint.LoadedModel) -> None:
    src = ["zyxw qqqq dog .", "vvvv is running ."]
    res = score_test_set(tiny_lm, src, ["zzz chien .", "wwww court ."], n_bootstrap=0)
    assert res["no_unk_sentences"] == 0 and res["no_unk"] is None and res["sentences"] == 2


def test_server_config_sets_the_upload_limit_no_telemetry_and_no_error_details() -> None:
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert cfg["browser"]["gatherUsageStats"] is False
    assert cfg["server"]["maxUploadSize"] == uploads.MAX_UPLOAD_MB
    assert cfg["client"]["showErrorDetails"] == "none"
    with pytest.raises(uploads.PairsError, match=r"is 5\.0 MB; the limit is 5 MB"):
        uploads.decode_text(b"x" * (5 * 2**20 + 1), "big.tsv")


def test_command_line_tools_run_on_one_thread_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    before = torch.get_num_threads()
    seen: list[int] = []
    try:
        for value, expected in (("", 1), ("3", 3), ("many", 1), ("0", 1)):
            monkeypatch.setenv("RNNSEARCH_THREADS", value)
            assert cli.run(lambda: seen.append(torch.get_num_threads())) == 0
            assert seen[-1] == expected, value

        def bad_input() -> int:
            raise CorpusError("test.en.gz is truncated or damaged after 3 lines")

        assert cli.run(bad_input) == 2
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("page,key,cap", [
    ("compare_attention.py", "cmp_ref", 600), ("bottleneck_compare.py", "bn_ref", 600),
    ("compare_attention.py", "cmp_text", 2000), ("bottleneck_compare.py", "bn_text", 2000),
    ("beam_explorer.py", "bx_text", 2000), ("alignment_browser.py", "al_q", 200),
    ("explanation.py", "ex_text", 600), ("explanation.py", "ex_ref", 600),
])
def test_a_url_carries_no_more_text_than_its_box(app_env: Path, page: str, key: str, cap: int) -> None:
    """An 8,000-word reference in a URL once cost 104 s of server CPU: each box's cap holds for its URL too."""
    own = {"ex_preset": "Your own sentence"} if page == "explanation.py" else {}  # the source box shows then
    at = run_page(page, **own, **{key: "chien " * 8000})
    assert not at.exception
    widgets = [w for kind in ("text_input", "text_area") for w in getattr(at, kind) if w.key == key]
    assert len(widgets) == 1 and widgets[0].value == ("chien " * 8000)[:cap]


def test_the_paste_box_is_capped_too(app_env: Path) -> None:
    """The one box no URL fills: pasted pairs are capped like an upload, not left to the browser's memory."""
    at = run_page("alignment_browser.py", al_from="my own pairs", al_upload="paste")
    assert not at.exception
    assert at.text_area(key="al_paste").proto.max_chars == uploads.MAX_PASTE_CHARS == 1_000_000


def test_a_table_with_more_words_than_a_click_may_start_waits_for_its_button(
        app_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """al_n=200 of Europarl in a URL once translated ~5,000 source words (~50 s of CPU) on opening the link."""
    from ui.common import heavy

    heavy.store("alignment").clear()
    monkeypatch.setattr(heavy, "AUTO_WORDS", 0)
    at = run_page("alignment_browser.py", al_n="10")
    assert not at.exception and not at.dataframe
    assert at.button(key="al_go").label == "Translate these 10 pairs"
    at.button(key="al_go").click().run()
    assert not at.exception and len(at.dataframe[0].value) == 10
    again = run_page("alignment_browser.py", al_n="10")  # another visitor: kept, so no button
    assert len(again.dataframe[0].value) == 10 and not [b for b in again.button if b.key == "al_go"]
