#!/usr/bin/env python3
"""Turn lbbench JSON Lines into seed 001's Fig. 2/3 tables (Markdown).

One table per (ranks, graph, backend, scenario, task mesh), one row per
method.  Task-mode runs (with "edgecut_tot") give every column; runs
without task selection give iterations, rounds, run time and transfers.
Run times are the medians of the repetitions when lbbench ran with -repeat
(seed 001's protocol), else the single run's.

    python3 postprocess/seed001_table.py runs.jsonl [more.jsonl ...]
"""
import argparse
import json


def fmt(v, spec):
    return "" if v is None else format(v, spec)


def main(paths):
    groups = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    key = (r["ranks"], r["graph"], r["backend"], r["scenario"], tuple(r.get("tasks", [])))
                    groups.setdefault(key, []).append(r)
    for (ranks, graph, backend, scenario, tasks), rows in sorted(groups.items()):
        size = " x ".join(map(str, tasks)) + " tasks, " if tasks else ""
        print(f"\n**{scenario.upper()}**, {graph} ({ranks} ranks, {backend}), {size}target avg/max 0.999\n")
        if tasks:
            print("| method | iterations | rounds | run ms | selection ms | TransferMax | TransferTot | imbalance | MigrationMax | MigrationTot | migrated / bound | EdgeCutMax | EdgeCutTot |")
            print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        else:
            print("| method | iterations | rounds | run ms | setup ms | TransferMax | TransferTot |")
            print("|---|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            t = 1e3 * r.get("runtime_median_s", r["runtime_s"])
            if tasks:
                ratio = r["migrated_weight"] / r["migration_lower_bound"] if r["migration_lower_bound"] > 0 else None
                sel = r.get("select_median_s", r.get("select_s"))
                print(f"| {r['method']} | {r.get('iterations', '')} | {r.get('rounds', '')} | {t:.2f} | {fmt(sel and 1e3 * sel, '.2f')} | {fmt(r.get('transfer_max'), '.4f')} | "
                      f"{fmt(r.get('transfer_tot'), '.4f')} | {r['imbalance']:.4f} | {r['migration_max']} | {r['migration_tot']:.4f} | "
                      f"{fmt(ratio, '.2f')} | {r['edgecut_max']} | {r['edgecut_tot']:.4f} |")
            else:
                print(f"| {r['method']} | {r['iterations']} | {r['rounds']} | {t:.2f} | {1e3 * r.get('setup_s', 0):.2f} | "
                      f"{r['transfer_max']:.4f} | {r['transfer_tot']:.4f} |")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+", help="lbbench -json FILE.jsonl (task or chain mode)")
    main(ap.parse_args().runs)
