#!/usr/bin/env python3
"""Writes fuzz_stored_run's seeds from a results store: for each lab, its newest run (at most
MAX_ROWS rows) as seeds/stored/<lab>.json, the run the target damages, and one input per part
it damages (seeds/stored-inputs/<lab>-<part>: "<lab>\\n<part>\\n<the part's text>").
Usage: stored_seeds.py STORE   (make the store with one small CPU run of each lab first)"""
import json
import os
import sqlite3
import sys

MAX_ROWS = 12
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds")


def main():
    db = sqlite3.connect(sys.argv[1])
    runs = db.execute("SELECT id, kind, label, spec_json FROM runs ORDER BY id DESC").fetchall()
    seen = set()
    os.makedirs(os.path.join(HERE, "stored"), exist_ok=True)
    os.makedirs(os.path.join(HERE, "stored-inputs"), exist_ok=True)
    for run_id, lab, label, spec in runs:
        if lab in seen:
            continue
        seen.add(lab)
        rows = db.execute("SELECT status, config_json, result_json FROM points WHERE run_id = ? ORDER BY idx "
                          "LIMIT ?", (run_id, MAX_ROWS)).fetchall()
        doc = {"lab": lab, "label": label, "spec": spec,
               "rows": [{"status": s, "config": c, "result": r} for s, c, r in rows]}
        with open(os.path.join(HERE, "stored", lab + ".json"), "w") as f:
            json.dump(doc, f, indent=1)
        parts = {"spec": spec, "row": rows[0][2], "config": rows[0][1], "label": label or "a label"}
        for part, text in parts.items():
            with open(os.path.join(HERE, "stored-inputs", f"{lab}-{part}"), "w") as f:
                f.write(f"{lab}\n{part}\n{text}")
        print(f"{lab}: run {run_id}, {len(rows)} rows")


if __name__ == "__main__":
    main()
