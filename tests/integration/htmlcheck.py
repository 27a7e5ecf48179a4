#!/usr/bin/env python3
"""Checks the DOM chromium rendered from a `jinxctl inspect --html` page (html.sh).

    htmlcheck.py DOM INSPECT_JSON [--hostile] [--max-ms MS] [--threads N] [--select N]

DOM is `chromium --headless --dump-dom` of the page (after its script ran), INSPECT_JSON
`jinxctl inspect --json` of the same dump. Checks: the page's script ran (it stamps
data-render-ms on <html>; the CSP admits it by hash only), one column per thread of the
retired trace (every thread the JSON timeline names has one), the first differing cue
point highlighted as the JSON says, the crash row and the crashing frame's function in
the backtrace; with --select N (the page loaded as page.html#cue-N, which selects cue
point N as a click does), that the detail panel shows its instruction; with --hostile, that no element or attribute came from the dump (exactly
the page's 2 scripts, no img/svg onload/on* attributes) while the hostile symbol shows
as text; with --max-ms, the render time. Prints one line per check; exit 1 on a failure.
"""
import json
import re
import sys
from html.parser import HTMLParser


class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []          # (tag, attrs dict)
        self.text = []
        self.in_frame = 0
        self.frames = []
        self.by_id = {}         # text of the detail panel's fields
        self.cur_id = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "div" and (a.get("id") or "").startswith("d-"):
            self.cur_id = a["id"]
            self.by_id[self.cur_id] = ""
        if tag == "li" and "frame" in (a.get("class") or "").split():
            self.in_frame = 1
            self.frames.append("")

    def handle_endtag(self, tag):
        if tag == "li":
            self.in_frame = 0
        if tag == "div":
            self.cur_id = None

    def handle_data(self, data):
        self.text.append(data)
        if self.in_frame:
            self.frames[-1] += data
        if self.cur_id:
            self.by_id[self.cur_id] += data

    def find(self, pred):
        return [a for t, a in self.tags if pred(t, a)]


def main():
    args = sys.argv[1:]
    dom_path, json_path = args[0], args[1]
    hostile = "--hostile" in args
    max_ms = float(args[args.index("--max-ms") + 1]) if "--max-ms" in args else None
    want_threads = int(args[args.index("--threads") + 1]) if "--threads" in args else None
    select = args[args.index("--select") + 1] if "--select" in args else None
    d = Dom()
    d.feed(open(dom_path, encoding="utf-8", errors="replace").read())
    j = json.load(open(json_path))
    fails = 0

    def check(ok, what):
        nonlocal fails
        print(("ok   " if ok else "FAIL ") + what)
        fails += 0 if ok else 1

    html = d.find(lambda t, a: t == "html")
    ms = html[0].get("data-render-ms") if html else None
    check(ms is not None, "the page's script ran (data-render-ms=%s)" % ms)
    if max_ms is not None and ms is not None:
        check(float(ms) < max_ms, "rendered in %s ms (< %g)" % (ms, max_ms))
    rnd = j.get("round")
    if rnd:
        tl = d.find(lambda t, a: a.get("id") == "tl")
        cols = [int(a["data-tid"]) for a in d.find(lambda t, a: "th" in (a.get("class") or "").split())]
        check(len(tl) == 1 and int(tl[0]["data-threads"]) == len(cols) and cols == sorted(set(cols)),
              "%d thread columns %s" % (len(cols), cols))
        named = sorted({e["thread"] for e in rnd["timeline"]})
        check(set(named) <= set(cols), "every thread of the interleaving has a column %s" % named)
        if want_threads is not None:
            check(len(cols) == want_threads, "%d columns, wanted %d" % (len(cols), want_threads))
        fd = rnd["first_difference"]
        hl = d.find(lambda t, a: a.get("id") == "first-diff")
        if fd >= 0:
            check(len(hl) == 1 and hl[0].get("data-i") == str(fd)
                  and "d" in hl[0].get("class", "").split(),
                  "cue point %d highlighted as the first difference" % fd)
        else:
            check(not hl, "no difference, nothing highlighted")
        check(len(d.find(lambda t, a: a.get("id") == "crash-row")) == 1, "the crash row ends the timeline")
        if select is not None:  # page.html#cue-N: what a click on cue point N shows
            what, insn = d.by_id.get("d-what", ""), d.by_id.get("d-insn", "")
            check(what.startswith("cue point %s: " % select) and insn and "unknown" not in insn,
                  "cue point %s selected: %s | %s | %s" % (select, what[:60], insn[:50],
                                                          d.by_id.get("d-line", "")[:60]))
    else:
        check(len(d.find(lambda t, a: a.get("id") == "no-round")) == 1, "no round: the page says so")
    crashed = j["threads"][0] if j["threads"] else None
    if crashed and crashed["backtrace"]:
        fn = re.sub(r"\+0x[0-9a-f]+$", "", crashed["backtrace"][0]["symbol"])
        check(bool(d.frames) and fn in d.frames[0],
              "crash frame #0 is %s (%s)" % (fn, d.frames[0].strip()[:80] if d.frames else "none"))
    if hostile:
        scripts = d.find(lambda t, a: t == "script")
        check(len(scripts) == 2, "exactly the page's 2 script elements (%d)" % len(scripts))
        check(not d.find(lambda t, a: t == "img"), "no <img> from the dump")
        on = [(t, k) for t, a in d.tags for k in a if k.startswith("on")]
        check(not on, "no on* attribute anywhere %s" % on[:3])
        text = "".join(d.text)
        check("<script>alert(1)</script>" in text, "the hostile symbol shows as text")
        check("<img src=x onerror=alert(3)>" in text, "the hostile detail shows as text")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
