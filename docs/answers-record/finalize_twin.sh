#!/bin/bash
# The reworded twin's own two reviews: combine each version's units, measure agreement before
# adjudication, assemble blind-a-twin's matches.jsonl from them (no longer carried by position).
set -e
cd /work/main
R=/work/blind/review; OUT=docs/answers-record/blind-a-twin/reviews; mkdir -p $OUT
T=docs/answers-record/blind-a-twin
for v in v1 v2; do
  if [ $v = v1 ]; then units="v1"; writers="--writer tw1=$T/tw1/final.jsonl"; else units="v2a v2b v2c v2d v2e v2f"; writers="--writer tw2=$T/tw2/final.jsonl --writer tw3=$T/tw3/final.jsonl --writer tw4=$T/tw4/final.jsonl"; fi
  : > /tmp/tw-$v-ra.jsonl; : > /tmp/tw-$v-rb.jsonl; : > /tmp/tw-$v-adj.jsonl
  for u in $units; do
    for who in ra rb; do
      f=$R/blind-a-twin.$u/$who/decisions.jsonl
      cat $f >> /tmp/tw-$v-$who.jsonl; cp $f $OUT/$u-$who.jsonl
    done
    a=$R/blind-a-twin.$u/adjudication/decisions.jsonl; [ -f $a ] && cat $a >> /tmp/tw-$v-adj.jsonl && cp $a $OUT/$u-adjudication.jsonl || true
  done
  .venv/bin/python scripts/answers_agreement.py --a /tmp/tw-$v-ra.jsonl --b /tmp/tw-$v-rb.jsonl --answers gold/$v/answers/blind-a-twin/answers.jsonl --gold gold/$v --out $OUT/agreement-$v
  .venv/bin/python scripts/answers_assemble.py --set blind-a-twin --gold gold/$v $writers --a /tmp/tw-$v-ra.jsonl --b /tmp/tw-$v-rb.jsonl --adjudication /tmp/tw-$v-adj.jsonl
done
