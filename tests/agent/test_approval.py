"""Modes, approvers and the denied-command list."""

from __future__ import annotations

import io
import threading

import pytest

from workhearth.agent.approval import (
    DEFAULT_DENIED_COMMANDS,
    ApprovalRequest,
    Gate,
    Policy,
    TerminalApprover,
    allow_all,
    deny_all,
)
from workhearth.errors import ConfigError, UsageError


class Scripted:
    """An approver that answers from a list and records the questions."""

    human = True

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []

    def ask(self, request: ApprovalRequest):
        self.asked.append(request)
        return self.answers.pop(0)


def test_ask_mode_allows_reading_and_refuses_everything_else() -> None:
    gate = Gate("ask", approver=allow_all)
    assert gate.decide("read_file", read_only=True, summary="").decision == "allowed-by-mode"
    verdict = gate.decide("write_file", read_only=False, summary="write x")
    assert verdict.decision == "denied-by-policy" and "ask mode" in verdict.reason
    assert not verdict.allowed


def test_agent_mode_asks_once_always_and_deny() -> None:
    user = Scripted("once", "always", "deny")
    gate = Gate("agent", approver=user)
    assert gate.decide("shell", read_only=False, summary="ls", command="ls").decision == (
        "allowed-by-user"
    )
    assert gate.decide("shell", read_only=False, summary="pwd", command="pwd").allowed
    # "always" for shell: no more questions about shell...
    verdict = gate.decide("shell", read_only=False, summary="make", command="make")
    assert verdict.decision == "allowed-by-user"
    assert len(user.asked) == 2
    # ...but other tools still ask.
    assert gate.decide("delete", read_only=False, summary="rm x").decision == "denied-by-user"
    assert gate.unasked is None
    assert [r.summary for r in user.asked] == ["ls", "pwd", "rm x"]


def test_always_never_covers_a_denied_command_or_a_memory_sentence() -> None:
    user = Scripted("always", "always", "once", "deny")
    gate = Gate("agent", approver=user)
    gate.decide("shell", read_only=False, summary="ls", command="ls")
    verdict = gate.decide("shell", read_only=False, summary="sudo ls", command="sudo ls")
    assert verdict.allowed and user.asked[-1].warning and not user.asked[-1].allow_always
    assert "shell" in gate.always
    gate.decide("memory_save", read_only=False, summary='"a"', allow_always=False)
    assert "memory_save" not in gate.always
    assert (
        gate.decide("memory_save", read_only=False, summary='"b"', allow_always=False).decision
        == "denied-by-user"
    )


def test_quest_mode_never_asks_and_refuses_denied_commands() -> None:
    gate = Gate("quest", approver=Scripted())
    assert gate.decide("write_file", read_only=False, summary="").decision == "allowed-by-mode"
    assert gate.decide("shell", read_only=False, summary="", command="make test").allowed
    verdict = gate.decide("shell", read_only=False, summary="", command="git push -f origin main")
    assert verdict.decision == "denied-by-policy" and "git push" in verdict.reason


def test_unknown_mode_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="mode"):
        Gate("yolo")


def test_no_approver_means_deny_by_policy() -> None:
    assert (
        Gate("agent").decide("shell", read_only=False, summary="ls").decision == "denied-by-policy"
    )
    assert deny_all.ask(ApprovalRequest("shell", "ls")) == "deny"


def test_the_decision_says_who_allowed_or_why_nobody_did() -> None:
    flagged = Gate("agent", approver=TerminalApprover(None, yes=True))
    assert flagged.decide("shell", read_only=False, summary="ls").decision == "allowed-by-flag"
    assert Gate("agent", approver=allow_all).decide("shell", read_only=False, summary="ls").allowed
    nobody = Gate("agent", approver=TerminalApprover(None))
    verdict = nobody.decide("write_file", read_only=False, summary="write x")
    assert verdict.decision == "not-asked" and not verdict.allowed
    assert nobody.unasked is not None and nobody.unasked.summary == "write x"
    # reading needs nobody
    assert nobody.decide("read_file", read_only=True, summary="").decision == "allowed-by-mode"


# ------------------------------------------------------------------ terminal


def _terminal(text: str, **kw) -> tuple[TerminalApprover, io.StringIO]:
    out = io.StringIO()
    return TerminalApprover(io.StringIO(text), out, interactive=True, **kw), out


def test_terminal_answers() -> None:
    request = ApprovalRequest("shell", "run in /w:\nls", warning="careful")
    for typed, answer in [("y\n", "once"), ("YES\n", "once"), ("a\n", "always"), ("n\n", "deny")]:
        approver, out = _terminal(typed)
        assert approver.ask(request) == answer
    assert "run in /w:" in out.getvalue() and "careful" in out.getvalue()
    approver, out = _terminal("what\nhuh\ny\n")
    assert approver.ask(request) == "once" and out.getvalue().count("Allow?") == 3
    approver, _ = _terminal("maybe\nmaybe\nmaybe\ny\n")
    assert approver.ask(request) == "deny"  # three bad answers
    approver, _ = _terminal("a\n")
    assert approver.ask(ApprovalRequest("memory_save", '"x"', allow_always=False)) == "once"


def test_terminal_without_a_tty_or_input_asks_nobody_without_waiting() -> None:
    request = ApprovalRequest("shell", "ls")
    assert TerminalApprover(None).ask(request) == "unasked"
    not_a_tty = io.StringIO("y\n")  # StringIO.isatty() is False
    assert TerminalApprover(not_a_tty).ask(request) == "unasked"
    approver, _ = _terminal("")  # end of input
    assert approver.ask(request) == "unasked"
    blocked = threading.Event()

    class Never(io.StringIO):
        def readline(self, *a):  # would hang if ever called
            blocked.set()
            raise AssertionError("read from a non-interactive stream")

    assert TerminalApprover(Never()).ask(request) == "unasked" and not blocked.is_set()


def test_yes_allows_everything_and_is_not_a_person() -> None:
    approver = TerminalApprover(None, yes=True)
    assert approver.ask(ApprovalRequest("shell", "sudo rm -rf /")) == "once"
    assert approver.human is False and TerminalApprover(None).human is True


# ------------------------------------------------------------------ denied commands


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("ls -la", None),
        ("sudo ls", "sudo"),
        ("/usr/bin/sudo ls", "sudo"),
        ("s''udo ls", "sudo"),
        ("echo ok && sudo ls", "sudo"),
        ("echo ok\nsudo ls", "sudo"),
        ("x=$(sudo id)", "sudo"),
        ('echo "$(doas id)"', "doas"),
        ("echo `su -`", "su"),
        ("bash -c 'sudo ls'", "sudo"),
        ("eval sudo ls", "sudo"),
        ("FOO=1 nice -n 5 timeout 9 sudo ls", "sudo"),
        ("cat <(sudo ls)", "sudo"),
        ("rm -rf /", "rm -rf /"),
        ("rm -fr /", "rm -rf /"),
        ("rm -r -f /", "rm -rf /"),
        ("rm --recursive --force /", "rm -rf /"),
        ("rm -rf ~", "rm -rf ~"),
        ("rm -rf /tmp/build", None),
        ("rm -rf build", None),
        ("git push --force", "git push --force"),
        ("git -C repo push -f origin main", "git push --force"),
        ("git push origin +main", "git push +*"),
        ("git push origin main", None),
        ('git commit -m "do not sudo; ever"', None),
        ("mkfs.ext4 /dev/sdb", "mkfs*"),
        ("echo sudo", None),
    ],
)
def test_denied_commands(command: str, rule: str | None) -> None:
    assert Policy().denied_rule(command) == rule


def test_policy_from_config() -> None:
    default = Policy.from_config({})
    assert default.denied_commands == DEFAULT_DENIED_COMMANDS and default.max_steps == 50
    custom = Policy.from_config(
        {
            "quest": {
                "denied_commands": ["curl"],
                "extra_denied_commands": ["npm publish"],
                "max_steps": 9,
                "max_cost": 0.5,
            }
        }
    )
    assert custom.denied_commands == ("curl", "npm publish")
    assert (custom.max_steps, custom.max_seconds, custom.max_cost) == (9, None, 0.5)
    assert custom.denied_rule("npm publish --tag x") == "npm publish"
    assert custom.denied_rule("sudo ls") is None
    for bad in (
        {"quest": {"max_steps": -1}},
        {"quest": {"max_steps": "x"}},
        {"quest": {"denied_commands": "sudo"}},
        {"quest": {"max_step": 3}},  # a typo is reported, not ignored
        {"quest": 3},
    ):
        with pytest.raises(ConfigError, match=r"^/home/config\.toml: \[quest\]"):
            Policy.from_config(bad, "/home/config.toml")
