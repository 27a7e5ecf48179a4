#!/usr/bin/env python3
"""Predicts the "lanes" portfolio's schedules to bug from per-strategy columns.

    scripts/bench/lanes-predict.py [--pattern PREFIX/PERIOD ...] [--search] [--json]
                                   [--sweep-run0 own|shared] CSV...

CSV: explore.sh's raw files (bench-results/explore-runs.csv: program, mode, seed,
found, schedules_to_bug, ...), with the columns of the strategies alone (flip,
sweep, pct, random, pos, window, rf, nest; a "portfolio" column is shown beside
the prediction when given). In "lanes" (explorer/online_lanes.c) index 0 is run 0
(the cycle's pct), then each index runs the lane its slot letter names: C the
cycle (pct, random, pos, window, pct, random, pos, rf), F flip, S sweep; the
pattern is PREFIX for the first indexes, then PERIOD over and over (the default:
the one online_lanes.c has). Flip learns from run 0 and its own runs only, sweep
from its own runs only, so the k-th schedule of flip alone is the flip lane's
k-th run (run 0 counted: flip alone runs pct first since branch `slots`; older
flip columns had pos there and are off by that run) and the k-th of sweep alone
the sweep lane's k-th (its own run 0 first). The cycle learns from every
run, so its members are modelled by their alone columns (member m's j-th turn in
the cycle finds the bug when m alone found it at its j-th schedule): a rough
guide. Sweep slots run nest once a lock chain is known: for a program nest alone
found, S slots are modelled as nest's turns.

--sweep-run0 shared models a sweep lane that learns run 0 as well (its column
then from a sweep alone that ran pct first); own (the default) is online_lanes.c.

--search tries every prefix of 8 letters (C first) with a few periods and prints
the best: most programs with a median <= 5 (less one for each program the
portfolio column has at <= 5 and the pattern puts above), then the smallest sum
of medians, each capped at 30 (misses count as 100). Per program: predicted schedules per seed and median."""
import csv
import itertools
import json
import os
import re
import statistics
import sys

CYCLE = ["pct", "random", "pos", "window", "pct", "random", "pos", "rf"]
HORIZON = 150
MISS = 100
CAP = 30


def default_pattern():
    src = os.path.join(os.path.dirname(__file__), "../../explorer/online_portfolio.c")
    try:
        text = open(src).read()
        pre = re.search(r'#define EX_LANES_PREFIX "([CFS]+)"', text).group(1)
        per = re.search(r'#define EX_LANES_PERIOD "([CFS]+)"', text).group(1)
        return pre + "/" + per
    except (OSError, AttributeError):
        return "CFSFSFFC/FCSC"


def load(paths):
    """table[program][mode][seed] = schedules to bug (None: not found)."""
    table = {}
    for p in paths:
        with open(p) as f:
            for row in csv.DictReader(f):
                try:
                    seed = int(row["seed"])
                    k = int(row["schedules_to_bug"]) if row["found"] == "1" else None
                except (KeyError, ValueError):
                    sys.exit(f"lanes-predict: {p}: not an explore-runs.csv row: {row}")
                table.setdefault(row["program"], {}).setdefault(row["mode"], {})[seed] = k
    return table


SWEEP_SHARES_RUN0 = False  # --sweep-run0 shared: the sweep lane learns run 0 too


def predict(cols, seed, pattern):
    """The predicted 1-based schedule to bug of one seed, or None within HORIZON."""
    pre, per = pattern.split("/")
    get = lambda m: cols.get(m, {}).get(seed)
    nest_k = get("nest")
    turns = {m: 0 for m in set(CYCLE) | {"flip", "sweep", "nest"}}
    cpos = 1  # run 0 is the cycle's position 0 (pct)
    for i in range(HORIZON):
        if i == 0:
            # Run 0 (pct) is the flip lane's first run too (flip alone runs pct
            # first); the sweep lane begins with its own run 0 at its first slot.
            turns["pct"] = turns["flip"] = 1
            if SWEEP_SHARES_RUN0:
                turns["sweep"] = 1
            if get("pct") == 1 or get("flip") == 1:
                return 1
            continue
        c = pre[i] if i < len(pre) else per[(i - len(pre)) % len(per)]
        if c == "S":
            m = "nest" if nest_k is not None else "sweep"
        elif c == "F":
            m = "flip"
        else:
            m = CYCLE[cpos % 8]
            cpos += 1
        turns[m] += 1
        if get(m) is not None and get(m) == turns[m]:
            return i + 1
    return None


def med(xs):
    return statistics.median([MISS if x is None else x for x in xs])


def report(table, pattern, seeds):
    out = {}
    for prog in sorted(table):
        cols = table[prog]
        pred = [predict(cols, s, pattern) for s in seeds]
        port = [cols.get("portfolio", {}).get(s) for s in seeds] if "portfolio" in cols else None
        out[prog] = {"predicted": pred, "median": med(pred),
                     "portfolio": port, "portfolio_median": med(port) if port else None}
    return out


def score(res):
    """Programs at <= 5, minus those the portfolio column had at <= 5 and the
    prediction puts above; then the sum of the medians, each capped at CAP."""
    meds = [r["median"] for r in res.values()]
    lost = sum(1 for r in res.values()
               if r["portfolio_median"] is not None and r["portfolio_median"] <= 5 < r["median"])
    return (sum(m <= 5 for m in meds) - lost, -sum(min(m, CAP) for m in meds))


def main(argv):
    patterns, search, as_json, paths = [], False, False, []
    it = iter(argv)
    for a in it:
        if a == "--pattern":
            p = next(it, None)
            if not p or not re.fullmatch(r"C[CFS]*/[CFS]+", p):
                sys.exit("lanes-predict: --pattern PREFIX/PERIOD, letters C F S, PREFIX from C")
            patterns.append(p)
        elif a == "--sweep-run0":
            v = next(it, None)
            if v not in ("own", "shared"):
                sys.exit("lanes-predict: --sweep-run0 own|shared")
            global SWEEP_SHARES_RUN0
            SWEEP_SHARES_RUN0 = v == "shared"
        elif a == "--search":
            search = True
        elif a == "--json":
            as_json = True
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        elif a.startswith("-"):
            sys.exit(f"lanes-predict: unknown option {a} (--help for usage)")
        else:
            paths.append(a)
    if not paths:
        sys.exit("lanes-predict: give explore-runs.csv files (--help for usage)")
    table = load(paths)
    seeds = sorted({s for c in table.values() for m in c.values() for s in m})
    if not patterns:
        patterns = [default_pattern()]
    if search:
        best, fewest = [], None
        for per in ["FCSC", "FSC", "FC", "FFSC", "FSCC", "FSFC", "SFCC", "FCFSCC", "FSFCSC"]:
            for tail in itertools.product("CFS", repeat=7):
                p = "C" + "".join(tail) + "/" + per
                res = report(table, p, seeds)
                lost = sum(1 for r in res.values() if r["portfolio_median"] is not None
                           and r["portfolio_median"] <= 5 < r["median"])
                fewest = lost if fewest is None else min(fewest, lost)
                best.append((score(res), p))
        best.sort(reverse=True)
        patterns += [p for _, p in best[:5]]
        if not as_json:
            print(f"searched {len(best)} patterns; the fewest programs a pattern puts above 5 "
                  f"that the portfolio column has at <= 5: {fewest}")
    results = {p: report(table, p, seeds) for p in patterns}
    if as_json:
        print(json.dumps({p: {"score": score(r), "programs": r} for p, r in results.items()}))
        return 0
    for p, res in results.items():
        n5, neg = score(res)
        at5 = sum(r["median"] <= 5 for r in res.values())
        print(f"pattern {p}: {at5} of {len(res)} programs with a median <= 5 (score {n5}), "
              f"sum of medians capped at {CAP}: {-neg:g}")
        for prog, r in res.items():
            fmt = lambda xs: " ".join("-" if x is None else str(x) for x in xs)
            line = f"  {prog:22} {fmt(r['predicted']):14} median {r['median']:g}"
            if r["portfolio"]:
                line += f"   portfolio {fmt(r['portfolio'])} median {r['portfolio_median']:g}"
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
