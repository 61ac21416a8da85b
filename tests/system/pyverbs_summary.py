#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""pyverbs_summary.py - reads the verbose unittest log of rdma-core's pyverbs suite
(run_tests.py -v) and judges it: every test's outcome, the counts, and each skip
checked against the reasons written down in SKIPS (a tab-separated file: a regular
expression on "<test id>: <skip message>", then the stated reason). A failure, an
error, an unexpected success, a skip that no line of SKIPS explains, or fewer passes
than --min-pass makes the exit status 1.

Usage: pyverbs_summary.py LOG SKIPS [--min-pass N]
"""
import re
import sys

# "name (id)", the first line of its docstring if it has one, " ... ", whatever the test
# itself prints, then the outcome at the end of a line.
RESULT = re.compile(
    r"^(?P<name>\w+) \((?P<id>[\w.]+)\)\n?(?:[^\n]*?) \.\.\. (?:[^\n]*\n)*?[^\n]*?"
    r"(?P<res>ok|FAIL|ERROR|skipped (?P<why>'.*'|\".*\")|expected failure|unexpected success)$",
    re.M)


def load_skips(path):
    rules = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            if "\t" not in line:
                sys.exit(f"{path}:{n}: expected 'regex<TAB>reason'")
            pattern, reason = line.split("\t", 1)
            rules.append((re.compile(pattern), reason.strip()))
    return rules


def main():
    args = sys.argv[1:]
    min_pass = 0
    if "--min-pass" in args:
        i = args.index("--min-pass")
        try:
            min_pass = int(args[i + 1])
        except (IndexError, ValueError):
            sys.exit("--min-pass needs a number")
        del args[i:i + 2]
    if len(args) != 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    with open(args[0], encoding="utf-8", errors="replace") as f:
        log = f.read()
    rules = load_skips(args[1])

    outcome = {}
    for m in RESULT.finditer(log):
        res = m.group("res")
        if res.startswith("skipped"):
            res = "skipped"
        outcome[m.group("id")] = (res, (m.group("why") or "").strip("'\""))
    ran = re.search(r"^Ran (\d+) tests? in", log, re.M)
    if not ran:
        print("pyverbs: the suite did not finish (no 'Ran N tests' line)")
        return 1

    counts = {}
    for res, _ in outcome.values():
        counts[res] = counts.get(res, 0) + 1
    bad = 0
    if len(outcome) != int(ran.group(1)):
        print(f"pyverbs: {ran.group(1)} tests ran but {len(outcome)} results were parsed")
        bad = 1

    stated = {}
    for tid, (res, why) in sorted(outcome.items()):
        if res in ("FAIL", "ERROR", "unexpected success"):
            print(f"  {res}: {tid}")
            bad = 1
        elif res == "skipped":
            reason = next((r for p, r in rules if p.search(f"{tid}: {why}")), None)
            if reason is None:
                print(f"  SKIP WITHOUT A STATED REASON: {tid}: {why}")
                bad = 1
                reason = "(none stated)"
            stated.setdefault(reason, []).append(tid)

    print("pyverbs: %d ran: %d pass, %d fail, %d error, %d skipped" % (
        int(ran.group(1)), counts.get("ok", 0) + counts.get("expected failure", 0),
        counts.get("FAIL", 0), counts.get("ERROR", 0), counts.get("skipped", 0)))
    for reason, tids in sorted(stated.items(), key=lambda kv: -len(kv[1])):
        print(f"  skipped {len(tids):3d}: {reason}")
    if counts.get("ok", 0) < min_pass:
        print(f"pyverbs: {counts.get('ok', 0)} pass, fewer than the {min_pass} required")
        bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main())
