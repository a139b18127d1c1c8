#!/usr/bin/env bash
# Ship the two Multi30k en→fr Luong models (issue 11): score each finished run on every split (greedy
# and beam 5) and write checkpoints/m30k-en-fr-luong-{global-general,local-p}.pt (fp16) and
# checkpoints/m30k-en-fr-luong.results.json. Train them first with
#   python train.py --config configs/m30k-en-fr-luong-global-general.toml --data data/multi30k
#   python train.py --config configs/m30k-en-fr-luong-local-p.toml --data data/multi30k
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${DATA:-data/multi30k}
SPLITS="val test_2016_flickr test_2017_flickr test_2017_mscoco"
MODELS="luong-global-general luong-local-p"
pids=()
for m in $MODELS; do
  python -m nmt.export --run "runs/m30k-en-fr-$m" --name "$m" --data "$DATA" --splits $SPLITS \
    --out "checkpoints/m30k-en-fr-$m.pt" --results "runs/m30k-en-fr-$m.results.json" ${FORCE:+--force} \
    > "runs/export-$m.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
python - $MODELS <<'PY'
import json, pathlib, sys
out = {"corpus": "Multi30k task 1, en→fr", "paper": "Luong, Pham & Manning (2015)", "models": {}}
for m in sys.argv[1:]:
    out["models"].update(json.loads(pathlib.Path(f"runs/m30k-en-fr-{m}.results.json").read_text())["models"])
pathlib.Path("checkpoints/m30k-en-fr-luong.results.json").write_text(json.dumps(out, indent=1, ensure_ascii=False))
PY
ls -la checkpoints/
