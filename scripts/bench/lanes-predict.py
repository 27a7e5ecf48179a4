#!/usr/bin/env python3
"""Predicts the "lanes" portfolio's schedules to bug from per-strategy columns.

    scripts/bench/lanes-predict.py [--pattern PREFIX/PERIOD ...] [--search] [--json] CSV...

CSV: explore.sh's raw files (bench-results/explore-runs.csv: program, mode, seed,
found, schedules_to_bug, ...), with the columns of the strategies alone (flip,
sweep, pct, random, pos, window, rf, nest; a "portfolio" column is shown beside
the prediction when given). In "lanes" (explorer/online_lanes.c) index 0 is run 0
(the cycle's pct), then each index runs the lane its slot letter names: C the
cycle (pct, random, pos, window, pct, random, pos, rf), F flip, S sweep; the
pattern is PREFIX for the first indexes, then PERIOD over and over (the default:
the one online_lanes.c has). Flip and sweep learn from run 0 and their own runs
only, so the k-th schedule of flip alone is the lane's k-th run (run 0 counted):
exact up to run 0 itself (alone, flip's and sweep's run 0 is pct since branch
`slots`; older columns had pos and a sweep there). The cycle learns from every
run, so its members are modelled by their alone columns (member m's j-th turn in
the cycle finds the bug when m alone found it at its j-th schedule): a rough
guide. Sweep slots run nest once a lock chain is known: for a program nest alone
found, S slots are modelled as nest's turns.

--search tries every prefix of 8 letters (C first) with a few periods and prints
the best: most programs with a median <= 5, then the smallest sum of medians
(misses count as 100). Per program: predicted schedules per seed and median."""
import csv
import itertools
import json
import os
import re
import statistics
import sys

CYCLE = ["pct", "random", "pos", "window", "pct", "random", "pos", "rf"]
HORIZON = 400
MISS = 100


def default_pattern():
    src = os.path.join(os.path.dirname(__file__), "../../explorer/online_lanes.c")
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


def predict(cols, seed, pattern):
    """The predicted 1-based schedule to bug of one seed, or None within HORIZON."""
    pre, per = pattern.split("/")
    get = lambda m: cols.get(m, {}).get(seed)
    nest_k = get("nest")
    turns = {m: 0 for m in set(CYCLE) | {"flip", "sweep", "nest"}}
    cpos = 1  # run 0 is the cycle's position 0 (pct)
    for i in range(HORIZON):
        if i == 0:
            # Run 0 (pct) is every lane's first run; alone, only pct's column ran it.
            for m in ("pct", "flip", "sweep"):
                turns[m] = 1
            if get("pct") == 1:
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
    meds = [r["median"] for r in res.values()]
    return (sum(m <= 5 for m in meds), -sum(meds))


def main(argv):
    patterns, search, as_json, paths = [], False, False, []
    it = iter(argv)
    for a in it:
        if a == "--pattern":
            p = next(it, None)
            if not p or not re.fullmatch(r"C[CFS]*/[CFS]+", p):
                sys.exit("lanes-predict: --pattern PREFIX/PERIOD, letters C F S, PREFIX from C")
            patterns.append(p)
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
        best = []
        for per in ["FCSC", "FSC", "FC", "FFSC", "FSCC", "FSFC", "SFCC", "FCFSCC"]:
            for tail in itertools.product("CFS", repeat=7):
                p = "C" + "".join(tail) + "/" + per
                best.append((score(report(table, p, seeds)), p))
        best.sort(reverse=True)
        patterns += [p for _, p in best[:5]]
    results = {p: report(table, p, seeds) for p in patterns}
    if as_json:
        print(json.dumps({p: {"score": score(r), "programs": r} for p, r in results.items()}))
        return 0
    for p, res in results.items():
        n5, neg = score(res)
        print(f"pattern {p}: {n5} of {len(res)} programs with a median <= 5, "
              f"sum of medians {-neg:g} (misses count {MISS})")
        for prog, r in res.items():
            fmt = lambda xs: " ".join("-" if x is None else str(x) for x in xs)
            line = f"  {prog:22} {fmt(r['predicted']):14} median {r['median']:g}"
            if r["portfolio"]:
                line += f"   portfolio {fmt(r['portfolio'])} median {r['portfolio_median']:g}"
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
