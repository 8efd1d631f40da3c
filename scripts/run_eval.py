#!/usr/bin/env python3
"""The seed's `eval/run_eval.py`: the same as `extraction-eval run` (same flags).

python scripts/run_eval.py --mode cassette
"""

from __future__ import annotations

import sys

from extraction_eval.cli import app

if __name__ == "__main__":
    app(args=["run", *sys.argv[1:]], prog_name="run_eval.py")
