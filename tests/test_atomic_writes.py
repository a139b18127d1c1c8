"""Every writer of a file another run reads survives ``kill -9`` mid-write: the file holds the old version or
a new one in full (read back by the project's own reader), never half of one; the killed write's temporary
file is removed by the next write of that name (nmt/text/atomic.py).

Each writer (:mod:`tests.atomic_writers`): the dictionary (``scripts/build_lexicon.py``'s ``write_lexicon``;
killing the build left an empty or truncated dictionary 2 times in 3 when it wrote in place), checkpoints
(``atomic_save``: the seal tool, training, exports), the training timeline and the fusion LM's token-id cache
(``nmt.training.lm_training.save_ids``; the next run loads it as it stands). The child writes two versions
in turn; it is killed 0.05 s after its second write opened its temporary file (a write takes longer).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nmt.text import atomic
from tests import atomic_writers as aw

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("kind", aw.KINDS)
def test_a_writer_killed_mid_write_leaves_a_whole_file(kind: str, tmp_path: Path) -> None:
    target = tmp_path / {"dictionary": "x.lexicon.tsv.xz", "checkpoint": "x.pt", "timeline": "x.timeline.npz",
                     "lm-ids": "lm-ids-0123456789abcdef.pt"}[kind]
    aw.write(kind, target, aw.payload(kind, 0))  # the old file
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    child = subprocess.Popen([sys.executable, "-m", "tests.atomic_writers", kind, str(target)], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "start 0\n"
        assert child.stdout.readline() == "start 1\n"  # version 1 written in full; version 2 being written
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob("*.tmp")) and time.monotonic() < deadline:  # its temporary file opened
            time.sleep(0.002)
        time.sleep(0.05)  # and being written
        temporaries = sorted(tmp_path.glob("*.tmp"))
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert aw.version_of(kind, target) == 1  # the last whole version, read in full
    assert len(temporaries) == 1, temporaries  # it was killed mid-write (a plain in-place writer has none)
    assert atomic.stale_temporaries(target) == temporaries  # left behind by the killed writer …
    aw.write(kind, target, aw.payload(kind, 0))
    assert sorted(tmp_path.glob("*.tmp")) == [] and aw.version_of(kind, target) == 0  # … and removed by the next
