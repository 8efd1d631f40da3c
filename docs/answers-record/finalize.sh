#!/bin/bash
# Combine every unit's reviewer files, measure agreement before adjudication, assemble matches.
set -e
cd /work/main
R=/work/blind/review; OUT=docs/answers-record/blind-a/reviews; mkdir -p $OUT
for v in v1 v2; do
  if [ $v = v1 ]; then units="v1"; else units="v2a v2b v2c v2d v2e v2f"; fi
  : > /tmp/$v-ra.jsonl; : > /tmp/$v-rb.jsonl; : > /tmp/$v-adj.jsonl
  for u in $units; do
    for who in ra rb; do
      f=$R/blind-a.$u/$who/decisions.jsonl
      if [ -f $f ] && [ -f $R/blind-a.$u/ra/decisions.jsonl ] && [ -f $R/blind-a.$u/rb/decisions.jsonl ]; then cat $f >> /tmp/$v-$who.jsonl; fi
      [ -f $f ] && cp $f $OUT/$u-$who.jsonl
    done
    a=$R/blind-a.$u/adjudication/decisions.jsonl; [ -f $a ] && cat $a >> /tmp/$v-adj.jsonl && cp $a $OUT/$u-adjudication.jsonl
  done
  if [ -s /tmp/$v-ra.jsonl ]; then
    .venv/bin/python scripts/answers_agreement.py --a /tmp/$v-ra.jsonl --b /tmp/$v-rb.jsonl --answers gold/$v/answers/blind-a/answers.jsonl --gold gold/$v --out $OUT/agreement-$v
    W=$(python3 -c "import json;print(' '.join(sorted({json.loads(l)['writer'] for l in open('gold/$v/answers/blind-a/answers.jsonl')})))")
    .venv/bin/python scripts/answers_assemble.py --set blind-a --gold gold/$v $(for w in $W; do echo --writer $w=docs/answers-record/blind-a/writers/$w.jsonl; done) --a /tmp/$v-ra.jsonl --b /tmp/$v-rb.jsonl --adjudication /tmp/$v-adj.jsonl
  fi
done
