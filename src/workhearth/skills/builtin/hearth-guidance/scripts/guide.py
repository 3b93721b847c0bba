"""Print one topic of the hearth guide (references/TOPIC.md), or list the topics."""

from __future__ import annotations

import sys
from pathlib import Path

from workhearth.skills.scriptkit import OneLineParser

PROG = "guide.py"
TOPICS = Path(__file__).resolve().parent.parent / "references"


def topics() -> dict[str, Path]:
    return {p.stem: p for p in sorted(TOPICS.glob("*.md"))}


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(
        prog=PROG, description="Print a topic of the hearth guide; without one, list the topics."
    )
    parser.add_argument(
        "topic", nargs="?", help="one of the topics (run without arguments to list them)"
    )
    args = parser.parse_args(argv)
    known = topics()
    if args.topic is None:
        for name, path in known.items():
            title = path.read_text(encoding="utf-8").splitlines()[0].lstrip("# ").strip()
            print(f"{name:<10} {title}")
        return 0
    path = known.get(args.topic.lower().strip())
    if path is None:
        print(f"{PROG}: no topic {args.topic!r} (topics: {', '.join(known)})", file=sys.stderr)
        return 2
    sys.stdout.write(path.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
