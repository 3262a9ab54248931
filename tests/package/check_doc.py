"""docs/build-integration.md shows the consumer project of tests/consumer file
by file, so that what a user copies is what the tests build: every line
`<!-- file: NAME -->` is followed by a fenced code block that must equal
tests/consumer/NAME, and every file of tests/consumer must be shown.

Usage: check_doc.py <doc.md> <folder>"""
import pathlib
import re
import sys


def main(doc, folder):
    text = pathlib.Path(doc).read_text()
    shown = re.findall(r"^<!-- file: (\S+) -->\n```[a-z+]*\n(.*?)^```$", text, re.S | re.M)
    errors = []
    names = [name for name, _ in shown]
    for name in sorted(set(names)):
        if names.count(name) > 1:
            errors.append(f"{doc}: {name} is shown {names.count(name)} times")
    for name, block in shown:
        path = pathlib.Path(folder, name)
        if not path.is_file():
            errors.append(f"{doc}: {name} is not a file of {folder}")
        elif path.read_text() != block:
            errors.append(f"{doc}: the block of {name} differs from {path}")
    for path in sorted(pathlib.Path(folder).iterdir()):
        if path.name not in names:
            errors.append(f"{doc}: {path} is not shown")
    for error in errors:
        print(error, file=sys.stderr)
    print(f"{doc}: {len(shown)} files checked, {len(errors)} errors")
    return 1 if errors or not shown else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
