#!/bin/bash
# agreement and worklist of one review unit: unit_agree.sh blind-a.v2e WRITERFILE...
set -e
u=$1; shift
cd /work/main
.venv/bin/python scripts/answers_agreement.py --a /work/blind/review/$u/ra/decisions.jsonl --b /work/blind/review/$u/rb/decisions.jsonl $(for f in "$@"; do echo --answers $f; done) --out /work/blind/review/$u/adjudication
