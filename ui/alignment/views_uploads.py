"""Sentence pairs a user pastes or uploads: parsed, checked, and every problem in one plain message.

:func:`parse_tsv_pairs` and :func:`parse_two_files` fail with a :class:`PairsError` whose message can be
shown as is (after Markdown escaping: it may name an uploaded file).
"""

from __future__ import annotations

MAX_PAIRS = 5000
MAX_UPLOAD_MB = 5  # also server.maxUploadSize in .streamlit/config.toml (Streamlit's MB = 2**20 bytes)
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 2**20
MAX_PASTE_CHARS = 1_000_000  # the paste box: MAX_PAIRS pairs of 200 characters (a file takes up to MAX_UPLOAD_MB)
# Either side of one pair, as the pages' source box: a 50,000-character reference line in a 5 MB file would
# otherwise be force-decoded word by word (an 8,000-word reference cost 104 s of CPU, issue 24).
MAX_SIDE_CHARS = 2000


class PairsError(ValueError):
    """A problem with uploaded or pasted sentence pairs; the message is fit to show as is."""


def decode_text(data: bytes | str, name: str) -> str:
    """UTF-8 text of an uploaded file (BOM dropped); a clear :class:`PairsError` for anything else."""
    if isinstance(data, str):
        text = data
    else:
        if len(data) > MAX_UPLOAD_BYTES:
            raise PairsError(f"{name} is {len(data) / 2**20:.1f} MB; the limit is {MAX_UPLOAD_MB} MB.")
        if b"\x00" in data:
            raise PairsError(f"{name} looks like a binary file (it contains NUL bytes), not plain text.")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as err:
            line = data[: err.start].count(b"\n") + 1
            bad = data[err.start : err.start + 1].hex()
            raise PairsError(
                f"{name} is not UTF-8 text: byte 0x{bad} on line {line} cannot be decoded. "
                "It is probably in Latin-1 / Windows-1252; save it as UTF-8 and upload it again."
            ) from None
    return text.removeprefix("\ufeff")


def _lines(text: str) -> list[str]:
    """Lines without their line ends (\\n, \\r\\n or \\r), a final line end not making an extra line."""
    return text.splitlines()


def _check_count(pairs: list[tuple[str, str]], lines: list[int], names: tuple[str, str]) -> list[tuple[str, str]]:
    """The pairs (``lines``: each one's line number), if there are some, not too many to browse, and none
    with a side longer than :data:`MAX_SIDE_CHARS`."""
    for pair, n in zip(pairs, lines):
        for side, text, name in zip(("source", "reference"), pair, names):
            if len(text) > MAX_SIDE_CHARS:
                raise PairsError(f"Line {n} of {name}: the {side} has {len(text):,} characters; the limit is "
                                 f"{MAX_SIDE_CHARS:,} per sentence.")
    if not pairs:
        raise PairsError("No sentence pairs found: the input is empty.")
    if len(pairs) > MAX_PAIRS:
        raise PairsError(f"{len(pairs)} pairs is too many to browse here; keep it to at most {MAX_PAIRS}.")
    return pairs


def parse_tsv_pairs(data: bytes | str, name: str = "the pasted text") -> list[tuple[str, str]]:
    """Sentence pairs from ``source<TAB>reference`` lines.

    Blank lines are skipped; a line without exactly one tab, or with an empty side, is an error
    naming its line number.
    """
    text = decode_text(data, name)
    pairs: list[tuple[str, str]] = []
    numbers: list[int] = []
    for n, line in enumerate(_lines(text), start=1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 2:
            what = "no tab" if len(parts) == 1 else f"{len(parts) - 1} tabs"
            raise PairsError(f"Line {n} of {name} has {what}; write one pair per line as "
                             "source<TAB>reference.")
        src, ref = parts[0].strip(), parts[1].strip()
        if not src or not ref:
            side = "source" if not src else "reference"
            raise PairsError(f"Line {n} of {name} has an empty {side} side.")
        pairs.append((src, ref))
        numbers.append(n)
    return _check_count(pairs, numbers, (name, name))


def parse_two_files(
    src: bytes | str, ref: bytes | str, src_name: str = "the source file", ref_name: str = "the reference file"
) -> list[tuple[str, str]]:
    """Sentence pairs from two files with one sentence per line, line k of one translating line k.

    Line counts must match (a final blank line is ignored); a line blank in both files is skipped,
    a line blank in only one is an error naming its line number.
    """
    s_lines = _lines(decode_text(src, src_name))
    r_lines = _lines(decode_text(ref, ref_name))
    while s_lines and not s_lines[-1].strip():
        s_lines.pop()
    while r_lines and not r_lines[-1].strip():
        r_lines.pop()
    if len(s_lines) != len(r_lines):
        raise PairsError(f"{src_name} has {len(s_lines)} lines but {ref_name} has {len(r_lines)}; "
                         "line k of one file must translate line k of the other.")
    pairs: list[tuple[str, str]] = []
    numbers: list[int] = []
    for n, (s, r) in enumerate(zip(s_lines, r_lines), start=1):
        s, r = s.strip(), r.strip()
        if not s and not r:
            continue
        if not s or not r:
            raise PairsError(f"Line {n} is empty in {src_name if not s else ref_name} but not in "
                             f"{ref_name if not s else src_name}.")
        pairs.append((s, r))
        numbers.append(n)
    return _check_count(pairs, numbers, (src_name, ref_name))
