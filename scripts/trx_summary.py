#!/usr/bin/python3
"""Summarises the TRX files `dotnet test --logger trx` wrote into a folder.

    trx_summary.py artifacts/test-results

Prints failed tests (with the first lines of their message), skipped tests (with the reason),
and as its last line exactly "N passed, N failed, N skipped". Exit code 0 only when at least one
TRX file with at least one test was found and nothing failed. Standard library only.
"""

import glob
import os
import sys
import xml.etree.ElementTree as ET

NS = {"t": "http://microsoft.com/schemas/VisualStudio/TeamTest/2010"}
PASSED = {"Passed"}
SKIPPED = {"NotExecuted", "Inconclusive", "Pending", "Disconnected", "NotRunnable"}
MAX_LISTED = 25


def first_lines(text, count):
    lines = [line.rstrip() for line in (text or "").strip().splitlines() if line.strip()]
    shown = lines[:count]
    if len(lines) > count:
        shown.append("…")
    return shown


def read_results(path):
    """(name, outcome, message) for each top-level test result in one TRX file."""
    root = ET.parse(path).getroot()
    results = []
    for result in root.findall("t:Results/t:UnitTestResult", NS):
        message = result.findtext("t:Output/t:ErrorInfo/t:Message", default="", namespaces=NS)
        stack = result.findtext("t:Output/t:ErrorInfo/t:StackTrace", default="", namespaces=NS)
        if not message:
            message = result.findtext("t:Output/t:StdOut", default="", namespaces=NS)
        results.append((result.get("testName", "?"), result.get("outcome", "Unknown"), message, stack))
    return results


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: trx_summary.py RESULTS_DIR\n")
        return 2
    files = sorted(glob.glob(os.path.join(argv[1], "**", "*.trx"), recursive=True))
    if not files:
        sys.stderr.write("error: no TRX file in %s: the build or the test run failed before any test ran\n" % argv[1])
        print("0 passed, 0 failed, 0 skipped")
        return 1

    passed, failed, skipped = [], [], []
    for path in files:
        try:
            results = read_results(path)
        except ET.ParseError as exc:
            sys.stderr.write("error: %s is not a readable TRX file: %s\n" % (path, exc))
            failed.append(("(unreadable %s)" % os.path.basename(path), "Error", str(exc), ""))
            continue
        for name, outcome, message, stack in results:
            if outcome in PASSED:
                passed.append(name)
            elif outcome in SKIPPED:
                skipped.append((name, outcome, message))
            else:
                failed.append((name, outcome, message, stack))

    # CI keeps the end of the output: with failures, fewer skipped lines and more of each failure (its message and
    # where it was thrown), which is what finding the cause needs.
    listed = MAX_LISTED if not failed else 5
    if skipped:
        print("Skipped:")
        for name, _, message in skipped[:listed]:
            reason = first_lines(message, 1)
            print("  %s%s" % (name, (": " + reason[0]) if reason else ""))
        if len(skipped) > listed:
            print("  … and %d more" % (len(skipped) - listed))
    if failed:
        print("Failed:")
        for name, outcome, message, stack in failed:
            print("  %s%s" % (name, "" if outcome == "Failed" else " [%s]" % outcome))
            for line in first_lines(message, 24):
                print("      " + line)
            for line in first_lines(stack, 6):
                print("      " + line)

    total = len(passed) + len(failed) + len(skipped)
    if total == 0:
        sys.stderr.write("error: the TRX files in %s hold no test results\n" % argv[1])
    print("%d passed, %d failed, %d skipped" % (len(passed), len(failed), len(skipped)))
    return 0 if total > 0 and not failed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
