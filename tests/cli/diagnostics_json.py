"""irisc --diagnostics-format=json: the errors of a file as one JSON array on
standard error, each with its kind, message, file, range (1-based lines and
columns, the end one past the last character) and notes; the error limit as an
entry of no place; and an empty array for a file without errors. Then
--diagnostics-format=sarif: the same as a SARIF 2.1.0 log.
    diagnostics_json.py <irisc> <tests/cli folder> <a valid file>"""
import json
import subprocess
import sys

irisc, folder, valid = sys.argv[1:]
source = f"{folder}/diagnostics_json.iris"


def span(line, start, end):
    return {"start": {"line": line, "column": start}, "end": {"line": line, "column": end}}


expected = [
    {
        "severity": "error",
        "kind": "AssignToImmutable",
        "message": "cannot assign to 'total': it is bound with 'let'",
        "file": source,
        "range": span(5, 5, 10),
        "notes": [{"severity": "note", "kind": "BoundHere", "message": "'total' is bound here",
                   "file": source, "range": span(4, 9, 14)}],
    },
    {"severity": "error", "message": "too many errors emitted, stopping now [--error-limit=1]", "notes": []},
]

def region(line, start, end):
    return {"physicalLocation": {"artifactLocation": {"uri": source},
                                 "region": {"startLine": line, "startColumn": start, "endLine": line, "endColumn": end}}}


expected_sarif = {
    "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
    "version": "2.1.0",
    "runs": [{
        "tool": {"driver": {"name": "irisc"}},
        "columnKind": "unicodeCodePoints",
        "results": [
            {"level": "error", "ruleId": "AssignToImmutable",
             "message": {"text": "cannot assign to 'total': it is bound with 'let'"},
             "locations": [region(5, 5, 10)],
             "relatedLocations": [{**region(4, 9, 14), "message": {"text": "'total' is bound here"}}]},
            {"level": "error", "message": {"text": "too many errors emitted, stopping now [--error-limit=1]"}},
        ],
    }],
}

failed = False


def check(args, want_status, want_diagnostics, form="json"):
    global failed
    run = subprocess.run([irisc, f"--diagnostics-format={form}", *args], capture_output=True, text=True)
    try:
        got = json.loads(run.stderr)
    except json.JSONDecodeError as e:
        got = f"not JSON ({e}): {run.stderr!r}"
    if run.returncode != want_status or got != want_diagnostics:
        failed = True
        print(f"FAILED: irisc --diagnostics-format={form} {' '.join(args)}: status {run.returncode} (expected {want_status})")
        print(f"  got:      {json.dumps(got)}\n  expected: {json.dumps(want_diagnostics)}")


check(["--error-limit=1", source], 1, expected)
check([valid], 0, [])
check(["--error-limit=1", source], 1, expected_sarif, "sarif")
print("1 failed" if failed else "diagnostics as JSON: ok")
sys.exit(1 if failed else 0)
