#!/usr/bin/env python3
"""Checks an amr2d/amr3d advection report (JSON Lines): every record has the
report fields of src/app/FORMATS.md (Output), the load-type counts add up to the cell count, time and
step advance, the run ends at t_final, and the mass balance holds.
Usage: check_report.py FILE.jsonl T_FINAL TOL [l2]  (l2: expect l2_error)"""
import json
import sys

path, t_final, tol = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
want_l2 = len(sys.argv) > 4 and sys.argv[4] == "l2"
fields = ["sim_time", "step", "cells", "mass", "mass_balance_error",
          "cells_type0", "cells_type1", "t_poisson", "t_advection"]
records = [json.loads(line) for line in open(path) if line.strip()]
assert records, "%s: no records" % path
prev_t, prev_step = -1.0, -1
for i, r in enumerate(records):
    missing = [f for f in fields if f not in r]
    assert not missing, "record %d lacks %s" % (i, missing)
    assert ("l2_error" in r) == want_l2, "record %d: l2_error presence" % i
    assert r["cells_type0"] + r["cells_type1"] == r["cells"], "record %d: type counts" % i
    assert r["sim_time"] > prev_t and r["step"] > prev_step, "record %d: no progress" % i
    assert r["mass_balance_error"] <= tol, "record %d: mass balance error %g" % (i, r["mass_balance_error"])
    assert r["t_poisson"] >= 0 and r["t_advection"] > 0, "record %d: times" % i
    prev_t, prev_step = r["sim_time"], r["step"]
assert abs(prev_t - t_final) <= 1e-12 * max(1.0, t_final), "ends at %r, not %r" % (prev_t, t_final)
worst = max(r["mass_balance_error"] for r in records)
print("%s: %d records, last t %g, step %d, worst mass balance error %.2e"
      % (path, len(records), prev_t, prev_step, worst))
