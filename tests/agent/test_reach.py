"""What a rewind cannot undo, named at the time (issue 22): network, database servers,
and writes outside the authorized folders, read from the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from workhearth.agent.reach import outside_reach

WS = Path("/home/ana/work")


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("ls -la && cat notes.md | wc -l", []),
        ("sed -i s/a/b/ data.csv && python3 make.py > out.txt", []),
        ("curl -s https://example.com/x -o page.html", ["network (curl)"]),
        ("git add -A && git commit -m x && git push origin main", ["network (git push)"]),
        ("git status", []),
        ("FOO=1 psql -c 'insert into t values (1)'", ["database server (psql)"]),
        ("echo hi > /etc/motd", ["outside the authorized folders (/etc/motd)"]),
        ("echo hi > /dev/null 2>&1", []),
        ("cp report.pdf ~/Desktop/", ["outside the authorized folders (~/Desktop/)"]),
        ("mv build ../elsewhere", ["outside the authorized folders (../elsewhere)"]),
        ("rm -rf /home/ana/work/tmp", []),
        ("rsync -a out/ backup@host:/srv/", ["network (rsync)"]),
        ("pip install requests", ["network (pip install)"]),
        ("sudo docker run x; echo ok >> /home/ana/work/log", ["network (docker)"]),
    ],
)
def test_outside_reach(command: str, expected: list[str]) -> None:
    assert outside_reach(command, [WS]) == expected


def test_a_sandboxed_command_only_reaches_the_network() -> None:
    assert outside_reach("echo x > /etc/motd; curl x", [WS], sandboxed=True) == ["network (curl)"]


def test_a_command_that_does_not_parse_is_still_read() -> None:
    assert outside_reach("echo 'unclosed > /etc/x", [WS]) == [
        "outside the authorized folders (/etc/x)"
    ]
