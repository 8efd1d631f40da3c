"""Assemble a realistic answer set from its writers' and reviewers' files (docs/answers-record/).

    python scripts/answers_assemble.py --set blind-a \
        --writer w1=docs/answers-record/blind-a/writers/w1.jsonl ... \
        [--a R1.jsonl --b R2.jsonl --adjudication ADJ.jsonl]

For each gold version (gold/v1, gold/v2) it writes gold/<v>/answers/<set>/answers.jsonl (rows in
gold order, each with its writer), builds the set's cassettes and manifest (the code of
`extraction-eval cassettes answers`), and, given both reviewers and the adjudication, writes
matches.jsonl: a conversation where the two reviewers agree keeps their decision ("agreed"),
every other one takes the adjudicator's ("adjudicated"). Each row is bound to its answer by the
sha256 of the cassette's response.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from extraction_eval._entry import run_entry
from extraction_eval.cassettes._answers import ANSWERS_FILE, write_answer_cassettes
from extraction_eval.evaluation._reviewing import MATCHES_FILE, response_sha256
from extraction_eval.gold._load import answer_set_dir

KEYS = ("pairs", "forbidden", "stale")


def rows(path: Path) -> dict[str, dict]:
    return {
        json.loads(line)["conversation_id"]: json.loads(line)
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    }


def canonical(decision: dict) -> dict:
    return {k: sorted(decision.get(k, [])) for k in KEYS}


def main(
    name: Annotated[str, typer.Option("--set", help="the answer set's name")],
    writer: Annotated[list[str], typer.Option("--writer", help="WRITER=answers.jsonl (repeat)")],
    gold: Annotated[list[Path] | None, typer.Option("--gold", help="gold folders (repeat; default v1 and v2)")] = None,
    a: Annotated[Path | None, typer.Option("--a", help="reviewer a's decisions")] = None,
    b: Annotated[Path | None, typer.Option("--b", help="reviewer b's decisions")] = None,
    adjudication: Annotated[Path | None, typer.Option("--adjudication", help="the adjudicator's decisions")] = None,
    carry_from: Annotated[
        str | None,
        typer.Option(
            "--carry-from",
            help="a reworded twin: carry this set's decisions over by position (each twin memory restates "
            "the same-numbered memory of that set, checked by the twin's fidelity review)",
        ),
    ] = None,
    carry_unchanged: Annotated[
        Path | None,
        typer.Option(
            "--carry-unchanged-from",
            help="an earlier gold version (gold/v2) whose set of the same name decided the same conversations: "
            "a conversation whose answer, expected rows and forbidden rows are the same there keeps that "
            "decision (gold v3's conversations from v2 that no erratum touched)",
        ),
    ] = None,
) -> None:
    written: dict[str, dict] = {}
    for spec in writer:
        who, _, path = spec.partition("=")
        for cid, row in rows(Path(path)).items():
            if cid in written:
                raise SystemExit(f"{path}: {cid} was already written by {written[cid]['writer']}")
            written[cid] = {"conversation_id": cid, "writer": who, "memories": row["memories"]}
    ra = rows(a) if a else None
    rb = rows(b) if b else None
    adjudicated = rows(adjudication) if adjudication else {}
    for folder_of_gold in gold or [Path("gold/v1"), Path("gold/v2")]:
        order = [
            json.loads(line)["conversation_id"]
            for line in (folder_of_gold / "conversations.jsonl").read_text(encoding="utf-8").splitlines()
        ]
        mine = [c for c in order if c in written]
        if not mine:
            continue
        folder = answer_set_dir(folder_of_gold, name)
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / ANSWERS_FILE, "w", encoding="utf-8") as fh:
            for cid in mine:
                fh.write(json.dumps(written[cid], ensure_ascii=False) + "\n")
        result = write_answer_cassettes(folder_of_gold, name)
        print(f"{folder}: {len(mine)} answers, writers {dict(result.writers)}")
        if carry_from is not None:
            _carry(folder, folder_of_gold, carry_from, mine)
            continue
        if ra is None or rb is None:
            continue
        carried = {} if carry_unchanged is None else _unchanged(folder_of_gold, carry_unchanged, name, mine)
        responses = {
            json.loads(line)["conversation_id"]: json.loads(line)["response"]
            for line in (folder / "openai_cassettes.jsonl").read_text(encoding="utf-8").splitlines()
        }
        counts = {"agreed": 0, "adjudicated": 0}
        if carry_unchanged is not None:
            counts[f"carried:{carry_unchanged.name}"] = len(carried)
        both = [cid for cid in mine if cid in carried or (cid in ra and cid in rb)]
        if len(both) < len(mine):
            # a review in progress: matches.jsonl decides only what both reviewers have decided
            # (`matcher validate --reviewed-only`); every other conversation fails closed
            print(f"{folder}: {len(mine) - len(both)} of {len(mine)} conversations not yet decided by both reviewers")
        with open(folder / MATCHES_FILE, "w", encoding="utf-8") as fh:
            for cid in both:
                if cid in carried:
                    fh.write(json.dumps(carried[cid], ensure_ascii=False) + "\n")
                    continue
                da, db = canonical(ra[cid]), canonical(rb[cid])
                if da == db:
                    decision, how = da, "agreed"
                elif cid not in adjudicated:
                    counts["awaiting adjudication"] = counts.get("awaiting adjudication", 0) + 1
                    continue  # not decided yet: fails closed, like an unreviewed conversation
                else:
                    decision, how = canonical(adjudicated[cid]), "adjudicated"
                counts[how] += 1
                row = {
                    "conversation_id": cid,
                    "answer_sha256": response_sha256(responses[cid]),
                    **decision,
                    "decided": how,
                }
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"{folder / MATCHES_FILE}: {counts}")


def _unchanged(gold: Path, earlier: Path, name: str, mine: list[str]) -> dict[str, dict]:
    """The earlier version's decisions of the conversations that are the same here: the same answer
    (its sha256 in the decision), the same expected rows and the same forbidden rows (a stratum aside)."""

    def by_conversation(path: Path, drop: tuple[str, ...] = ()) -> dict[str, list[dict]]:
        out: dict[str, list[dict]] = {}
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                row = json.loads(line)
                out.setdefault(row["conversation_id"], []).append({k: v for k, v in row.items() if k not in drop})
        return out

    here_expected, then_expected = (by_conversation(g / "expected_memories.jsonl") for g in (gold, earlier))
    here_forbidden, then_forbidden = (
        by_conversation(g / "forbidden_memories.jsonl", ("stratum",)) for g in (gold, earlier)
    )
    decisions = rows(answer_set_dir(earlier, name) / MATCHES_FILE)
    responses = {
        json.loads(line)["conversation_id"]: json.loads(line)["response"]
        for line in (answer_set_dir(gold, name) / "openai_cassettes.jsonl").read_text(encoding="utf-8").splitlines()
    }
    out = {}
    for cid in mine:
        d = decisions.get(cid)
        same = (
            d is not None
            and d["answer_sha256"] == response_sha256(responses[cid])
            and here_expected.get(cid) == then_expected.get(cid)
            and here_forbidden.get(cid) == then_forbidden.get(cid)
        )
        if same:
            out[cid] = {**d, "decided": f"carried:{earlier.name}"}
    return out


def _carry(folder: Path, gold: Path, source: str, mine: list[str]) -> None:
    """The twin's matches.jsonl: the source set's decisions, bound to the twin's own answers."""
    base = rows(answer_set_dir(gold, source) / MATCHES_FILE)
    base_answers = rows(answer_set_dir(gold, source) / ANSWERS_FILE)
    twin_answers = rows(folder / ANSWERS_FILE)
    responses = {
        json.loads(line)["conversation_id"]: json.loads(line)["response"]
        for line in (folder / "openai_cassettes.jsonl").read_text(encoding="utf-8").splitlines()
    }
    with open(folder / MATCHES_FILE, "w", encoding="utf-8") as fh:
        for cid in mine:
            if len(base_answers[cid]["memories"]) != len(twin_answers[cid]["memories"]):
                raise SystemExit(f"{cid}: the twin has another number of memories than {source}: not a twin")
            row = {
                "conversation_id": cid,
                "answer_sha256": response_sha256(responses[cid]),
                **canonical(base[cid]),
                "decided": f"carried:{source}",
            }
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{folder / MATCHES_FILE}: {len(mine)} conversations, decisions carried from {source}")


if __name__ == "__main__":
    run_entry(main, __doc__.splitlines()[0])
