"""`python -m scripts.captures [--check]`: regenerate the docs' captures from a real run, or check them."""

import argparse
import sys

from scripts.captures import capture_all, differences, write
from scripts.captures.run import ROOT


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.captures", description=__doc__)
    parser.add_argument("--check", action="store_true", help="rewrite nothing; exit 1 with a diff if a page differs")
    checking = parser.parse_args().check
    captured = capture_all()
    if checking:
        diff = differences(captured)
        print(diff or "every capture matches what the product prints", end="\n" if not diff else "")
        return 1 if diff else 0
    for page in write(captured):
        print(f"rewritten: {page.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
