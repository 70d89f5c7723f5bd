#!/usr/bin/env python3
"""What a CTest run skipped and why, from the JUnit files `ctest --output-junit` writes.

    scripts/test-summary.py JUNIT.xml [JUNIT.xml ...]

Prints one line of totals per file and one line per reason, most frequent first:

    release: 1210 tests, 1121 passed, 0 failed, 89 skipped
       82 skipped: no usable GPU: no CUDA driver (cudaGetDeviceCount: ...)
        1 skipped: cannot create a network namespace here (needs root and iproute2)

A skipped test's reason is the line GoogleTest prints after "Skipped" (GTEST_SKIP() << why),
the "every test skipped: why" line of a multi-rank program, or the last line a script printed
before exiting 77. A skip without any of these is reported as such, so it shows.
"""
import collections
import os
import re
import sys
import xml.etree.ElementTree as ElementTree


def skip_reason(output):
    gtest = re.search(r": Skipped\n(.+)", output)
    if gtest:
        return gtest.group(1).strip()
    multi_rank = re.search(r"every test skipped: (.+)", output)
    if multi_rank:
        return multi_rank.group(1).strip()
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    if lines:
        return re.sub(r"^(skipped|skip)\s*:\s*", "", lines[-1], flags=re.IGNORECASE)
    return "no reason printed"


def summarize(path):
    cases = ElementTree.parse(path).getroot().iter("testcase")
    counts = collections.Counter()
    reasons = collections.Counter()
    for case in cases:
        status = case.get("status")
        output = case.findtext("system-out") or ""
        if case.find("skipped") is not None or status == "notrun":
            counts["skipped"] += 1
            reasons[skip_reason(output)] += 1
        elif case.find("failure") is not None or status == "fail":
            counts["failed"] += 1
        else:
            counts["passed"] += 1
    name = os.path.splitext(os.path.basename(path))[0].removeprefix("junit-")
    total = sum(counts.values())
    print(f"{name}: {total} tests, {counts['passed']} passed, {counts['failed']} failed, "
          f"{counts['skipped']} skipped")
    for reason, count in reasons.most_common():
        print(f"  {count:5d} skipped: {reason}")


def main(paths):
    if not paths:
        sys.exit("test-summary.py: give the JUnit files of `ctest --output-junit`")
    for path in paths:
        if not os.path.exists(path):
            sys.exit(f"test-summary.py: {path}: no such file (did ctest run?)")
        summarize(path)


if __name__ == "__main__":
    main(sys.argv[1:])
