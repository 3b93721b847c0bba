"""Modes and approvals: who decides whether a tool call runs (DESIGN §5 Modes).

* ``ask`` — read-only tools only; anything else is refused by policy.
* ``agent`` — every write, edit, delete, shell command or memory save asks the
  user: allow once, always (for this session, per tool), or deny. With no
  terminal to ask, the call is ``not-asked``: it does not run, never a hang,
  and the runner stops the run rather than tell the model a person said no.
  ``memory_save`` always asks about its exact sentence (a saved entry is a
  sentence the user confirmed), and a command on the denied list is asked about
  every time even after "always".
* ``quest`` — asks nothing; the boundaries are the authorized folders (enforced
  by :mod:`.safefs`), the denied-command list (enforced here) and max steps,
  time and cost (enforced by the loop, read from :class:`Policy`).

The denied-command list is a guard rail, not a security boundary: a shell can
spell a command in ways no list foresees (``base64 -d | sh``). Matching is
therefore conservative (it splits on every operator, looks inside ``bash -c``,
``eval`` and ``$(…)``) and a false refusal is preferred to a miss. The
boundary in quest mode is the sandbox (see :mod:`workhearth.shell.sandbox`).
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TextIO

from workhearth.agent.audit import Decision
from workhearth.errors import ConfigError, UsageError

Mode = Literal["ask", "agent", "quest"]
MODES: tuple[Mode, ...] = ("ask", "agent", "quest")
# Why: "unasked" (nobody could answer) is not "deny" (someone said no); the audit
# and the model must not be told a person refused what nobody saw.
Answer = Literal["once", "always", "deny", "unasked"]

DEFAULT_DENIED_COMMANDS: tuple[str, ...] = (
    "sudo",
    "su",
    "doas",
    "pkexec",
    "rm -rf /",
    "rm -rf /*",
    "rm -rf ~",
    "rm -rf ~/",
    "rm -rf $HOME",
    "git push --force",
    "git push -f",
    "git push --force-with-lease",
    "git push +*",
    "mkfs*",
    "shutdown",
    "reboot",
    "halt",
    "poweroff",
)
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
_WRAPPERS = frozenset(
    {"env", "command", "builtin", "exec", "nohup", "time", "nice", "ionice", "timeout"}
    | {"stdbuf", "xargs", "then", "do", "else", "if", "while", "until", "!", "{", "}"}
)
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_OPERATOR = re.compile(r"^[();<>|&\n]+$")
# A redirection: the word after it names a file (or a descriptor), not a command.
_REDIRECT = re.compile(r"^(?:&?>>?|>&|>\||<<?<?|<&|<>)$")
_FLAG_ALIASES = {"--recursive": "-r", "-R": "-r", "--force": "-f"}


# ---------------------------------------------------------------- approvers
class SecretAsk:
    """A value only the user may give, asked for with the approval (a password to type).

    Why a slot the approver fills, not an answer: the value must go to the one place
    that needs it (the page's field) and nowhere else: not the model, the transcript,
    the audit or an event. An approver that cannot ask a person for it (``--yes``
    without a terminal, a script) leaves :attr:`value` None, and the caller refuses.
    """

    def __init__(self, prompt: str) -> None:
        self.prompt = prompt  # what to type, in words ("the password of Password on …")
        self.value: str | None = None

    def __repr__(self) -> str:  # Why: a request may be logged; the value never is
        return f"SecretAsk({self.prompt!r})"


@dataclass(frozen=True)
class ApprovalRequest:
    """One question to the user: ``summary`` is exactly what will happen.

    ``secret``: the user also types a value (hidden) that the approver puts there.
    """

    tool: str
    summary: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    call_id: str = ""
    allow_always: bool = True
    warning: str | None = None
    secret: SecretAsk | None = None


class Approver(Protocol):
    """Answers approval requests. ``human`` is True when a person answers them."""

    # Why: read-only, so a class attribute and a computed property (TerminalApprover) both fit.
    @property
    def human(self) -> bool: ...

    def ask(self, request: ApprovalRequest) -> Answer: ...


class DenyAll:
    """Every request is denied, as a rule (``denied-by-policy``)."""

    human = False

    def ask(self, request: ApprovalRequest) -> Answer:
        return "deny"


class AllowAll:
    """Every request is allowed once, without asking (scripts, tests)."""

    human = False

    def ask(self, request: ApprovalRequest) -> Answer:
        return "once"


deny_all = DenyAll()
allow_all = AllowAll()


class TerminalApprover:
    """Asks on a terminal. ``yes`` (``--yes``) allows everything without asking.

    With no interactive input (not a TTY, closed, or end of input) the answer is
    ``unasked``. ``interactive`` overrides the TTY check (tests pass a StringIO).
    """

    _ANSWERS: Mapping[str, Answer] = {
        "y": "once",
        "yes": "once",
        "a": "always",
        "always": "always",
        "n": "deny",
        "no": "deny",
    }

    def __init__(
        self,
        input: TextIO | None = None,
        output: TextIO | None = None,
        *,
        yes: bool = False,
        interactive: bool | None = None,
    ) -> None:
        self.input = input
        self.output = output if output is not None else sys.stderr
        self.yes = yes
        if interactive is None:
            interactive = is_terminal(input)
        self.interactive = interactive
        self._lock = threading.Lock()

    @property
    def human(self) -> bool:
        return not self.yes

    def ask(self, request: ApprovalRequest) -> Answer:
        if request.secret is not None:
            # Why before --yes: a flag can say yes, but only a person can type a password.
            return self._ask_secret(request, request.secret)
        if self.yes:
            return "once"
        if not self.interactive or self.input is None:
            return "unasked"
        choices = (
            "[y]es once, [a]lways this session, [n]o" if request.allow_always else "[y]es, [n]o"
        )
        with self._lock:  # one question at a time
            out = self.output
            out.write(f"\n{request.tool} wants to:\n  {request.summary}\n")
            if request.warning:
                out.write(f"  warning: {request.warning}\n")
            for _attempt in range(3):
                out.write(f"Allow? {choices}: ")
                out.flush()
                line = self.input.readline()
                if not line:
                    return "unasked"  # end of input: nobody is there to answer
                answer = self._ANSWERS.get(line.strip().lower())
                if answer == "always" and not request.allow_always:
                    answer = "once"
                if answer is not None:
                    return answer
            return "deny"

    def _ask_secret(self, request: ApprovalRequest, secret: SecretAsk) -> Answer:
        """Show the request, then read the value with the terminal's echo off; an empty
        line is a no."""
        if not self.interactive or self.input is None:
            return "unasked"
        with self._lock:
            out = self.output
            out.write(f"\n{request.tool} wants to:\n  {request.summary}\n")
            out.write(f"Type {secret.prompt} (hidden; an empty line: no): ")
            out.flush()
            line = read_hidden(self.input)
            out.write("\n")
            out.flush()
        if line is None:
            return "unasked"
        value = line.rstrip("\r\n")
        if not value:
            return "deny"
        secret.value = value
        return "once"


def read_hidden(stream: TextIO) -> str | None:
    """One line from ``stream`` without echoing it when it is a terminal (as ``getpass``
    does, but on the approver's own stream); None at end of input."""
    fd: int | None = None
    try:
        if stream.isatty():
            fd = stream.fileno()
    except (AttributeError, ValueError, OSError):
        fd = None
    if fd is None:
        return stream.readline() or None
    import termios

    old = termios.tcgetattr(fd)
    quiet = list(old)
    quiet[3] &= ~termios.ECHO
    try:
        # Why FLUSH first, DRAIN after: what was typed before the prompt may have been
        # seen on the screen, so it is dropped; what comes after is the next answer.
        termios.tcsetattr(fd, termios.TCSAFLUSH, quiet)
        line = stream.readline()
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)
    return line or None


def is_terminal(stream: TextIO | None) -> bool:
    """True when ``stream`` is an interactive terminal a person can answer on."""
    if stream is None:
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


# ------------------------------------------------------------------ policy
@dataclass(frozen=True)
class Policy:
    """Quest boundaries. The loop enforces the limits; ``None`` means no limit."""

    denied_commands: tuple[str, ...] = DEFAULT_DENIED_COMMANDS
    max_steps: int | None = 50
    max_seconds: float | None = None
    max_cost: float | None = None
    hide: tuple[str, ...] = ()  # absolute or ~/ paths hidden from commands, beside the defaults
    network: bool = True
    env: tuple[str, ...] = ()  # variables named like secrets that quest commands still get

    @classmethod
    def from_config(cls, raw: Mapping[str, object], source: str = "config.toml") -> Policy:
        """Read ``[quest]``: ``denied_commands`` (replaces the defaults),
        ``extra_denied_commands`` (adds to them), ``max_steps``, ``max_seconds``, ``max_cost``,
        ``hide`` (paths every tool hides, beyond the credential stores), ``network`` and
        ``env`` (variables named like credentials that quest commands still receive).

        ``source`` (the config file) starts the message of a :class:`ConfigError`.
        """
        try:
            return cls._from_table(raw.get("quest", {}))
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from None

    @classmethod
    def _from_table(cls, table: object) -> Policy:
        if not isinstance(table, Mapping):
            raise ConfigError("[quest] must be a table")
        unknown = sorted(set(table) - QUEST_KEYS)
        if unknown:
            raise ConfigError(f"[quest] has unknown keys: {', '.join(unknown)}")
        denied = _strings(table.get("denied_commands", DEFAULT_DENIED_COMMANDS), "denied_commands")
        denied += _strings(table.get("extra_denied_commands", ()), "extra_denied_commands")
        limits: dict[str, Any] = {}
        for key in ("max_steps", "max_seconds", "max_cost"):
            value = table.get(key, getattr(cls, key))
            if value is not None and (
                not isinstance(value, int | float) or isinstance(value, bool) or value <= 0
            ):
                raise ConfigError(f"[quest] {key} must be a positive number")
            limits[key] = value
        hide = _strings(table.get("hide", ()), "hide")
        for entry in hide:
            if not (entry.startswith(("/", "~/")) or entry == "~"):
                raise ConfigError(
                    f"[quest] hide entries must be absolute or start with ~/: {entry!r}"
                )
        network = table.get("network", True)
        if not isinstance(network, bool):
            raise ConfigError("[quest] network must be true or false")
        env = _strings(table.get("env", ()), "env")
        for name in env:
            if not _ENV_NAME.fullmatch(name):
                raise ConfigError(f"[quest] env entries must be variable names: {name!r}")
        return cls(tuple(denied), **limits, hide=hide, network=network, env=env)

    def denied_rule(self, command: str) -> str | None:
        """The first denied rule ``command`` matches, or None."""
        rules = [r.split() for r in self.denied_commands if r.strip()]
        for tokens in simple_commands(command):
            for rule in rules:
                if _rule_matches(rule, tokens):
                    return " ".join(rule)
        return None


QUEST_KEYS = frozenset(
    {
        "denied_commands",
        "extra_denied_commands",
        "max_steps",
        "max_seconds",
        "max_cost",
        "hide",
        "network",
        "env",
    }
)
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _strings(value: object, key: str) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"[quest] {key} must be a list of strings")
    return tuple(value)


def _tokens(command: str) -> list[str]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars="();<>|&\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: split crudely, err on the side of matching
        return re.findall(
            r"[();<>|&\n]+|[^\s();<>|&]+", command.replace('"', " ").replace("'", " ")
        )


def simple_commands(command: str, _depth: int = 0) -> Iterator[list[str]]:
    """Each simple command in ``command`` as words, wrappers and assignments removed.

    Looks inside ``$(…)``, backticks, ``bash -c '…'`` and ``eval``.
    """
    if _depth > 5:
        return
    current: list[str] = []
    target = False
    for token in [*_tokens(command), ";"]:
        if target and not _OPERATOR.match(token):
            # Why: `cmd > out.txt 2>&1` is one command; its file is no command of its own.
            target = False
            yield from _substitutions(token, _depth)
            continue
        target = bool(_REDIRECT.match(token))
        if _OPERATOR.match(token):
            if current and not target:
                yield from _unwrap(current, _depth)
                current = []
            continue
        yield from _substitutions(token, _depth)
        current.append(token.replace("`", "").removeprefix("$"))


def _substitutions(token: str, depth: int) -> Iterator[list[str]]:
    """The simple commands inside a word's ``$(…)`` or backticks."""
    for mark in ("$(", "`"):
        if mark in token:
            yield from simple_commands(token.split(mark, 1)[1].replace("`", " "), depth + 1)


def _unwrap(tokens: list[str], depth: int) -> Iterator[list[str]]:
    while tokens:
        head = os.path.basename(tokens[0])
        if _ASSIGN.match(tokens[0]):
            tokens = tokens[1:]
        elif head in _WRAPPERS:
            tokens = tokens[1:]
            while tokens and (
                tokens[0].startswith("-")
                or tokens[0].replace(".", "", 1).isdigit()
                or _ASSIGN.match(tokens[0])
            ):
                tokens = tokens[1:]
        else:
            break
    if not tokens:
        return
    head = os.path.basename(tokens[0])
    if head in _SHELLS and "-c" in tokens[1:-1]:
        yield from simple_commands(tokens[tokens.index("-c") + 1], depth + 1)
    elif head == "eval":
        yield from simple_commands(" ".join(tokens[1:]), depth + 1)
    yield [head, *tokens[1:]]


def _flags(token: str) -> set[str]:
    token = token.split("=", 1)[0]
    if token.startswith("--"):
        return {_FLAG_ALIASES.get(token, token)}
    return {_FLAG_ALIASES.get(f"-{c}", f"-{c}") for c in token[1:]}


def _rule_matches(rule: Sequence[str], tokens: Sequence[str]) -> bool:
    if not fnmatch.fnmatchcase(tokens[0], rule[0]):
        return False
    flags: set[str] = set()
    words: list[str] = []
    for arg in tokens[1:]:
        if arg.startswith("-") and len(arg) > 1:
            flags |= _flags(arg)
        else:
            words.append(arg)
    for part in rule[1:]:
        if part.startswith("-") and len(part) > 1:
            if not _flags(part) <= flags:
                return False
        elif part.endswith("*") and part != "/*":
            if not any(w.startswith(part[:-1]) for w in words):
                return False
        elif part not in words:
            return False
    return True


# -------------------------------------------------------------------- gate
@dataclass(frozen=True)
class Verdict:
    decision: Decision
    reason: str = ""

    @property
    def allowed(self) -> bool:
        return self.decision.startswith("allowed-")


class Gate:
    """Decides each call from the mode, the policy and (in agent mode) the user.

    Holds the session's "always" answers, per tool name, and :attr:`unasked`: the
    last request that needed a person when none could answer (the runner stops on it).
    """

    def __init__(self, mode: str, policy: Policy | None = None, approver: Approver | None = None):
        if mode not in MODES:
            raise UsageError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.mode: Mode = mode
        self.policy = policy or Policy()
        self.approver: Approver = approver or deny_all
        self.always: set[str] = set()
        self.unasked: ApprovalRequest | None = None
        self._lock = threading.Lock()

    def decide(
        self,
        tool: str,
        *,
        read_only: bool,
        summary: str,
        arguments: Mapping[str, Any] | None = None,
        command: str | None = None,
        call_id: str = "",
        allow_always: bool = True,
        preapproved: bool = False,
        secret: SecretAsk | None = None,
    ) -> Verdict:
        """``preapproved``: the user's own config lets this tool run unasked (an MCP
        server with ``trust = true``); it still never runs in ask mode. ``secret``: the
        user is asked for a value too (never "always"; the caller reads it there)."""
        rule = self.policy.denied_rule(command) if command and not read_only else None
        remember = allow_always and rule is None and secret is None
        settled = self._settled(tool, read_only, rule, preapproved, remember)
        if settled is not None:
            return settled
        warning = f"this command matches the denied rule {rule!r}" if rule else None
        request = ApprovalRequest(
            tool, summary, dict(arguments or {}), call_id, remember, warning, secret
        )
        return self._asked(tool, request)

    def _settled(
        self, tool: str, read_only: bool, rule: str | None, preapproved: bool, remember: bool
    ) -> Verdict | None:
        """The verdict when nobody needs asking (the mode, the rules, the user's config or
        an earlier "always"); None when the user must be asked."""
        if read_only:
            return Verdict("allowed-by-mode")
        if self.mode == "ask":
            return Verdict(
                "denied-by-policy",
                f"{tool} changes things, and ask mode only reads; "
                "the user can switch to agent mode to allow it",
            )
        if self.mode == "quest":
            if rule is not None:
                return Verdict("denied-by-policy", f"the command matches the denied rule {rule!r}")
            return Verdict("allowed-by-mode")
        if preapproved and rule is None:
            return Verdict("allowed-by-config", "the user's config trusts this tool")
        if remember and tool in self.always:
            return Verdict("allowed-by-user", "allowed for this session")
        return None

    def _asked(self, tool: str, request: ApprovalRequest) -> Verdict:
        """Ask the approver (one question at a time) and turn its answer into a verdict."""
        with self._lock:
            answer = self.approver.ask(request)
        human = self.approver.human
        if answer == "unasked":
            self.unasked = request
            return Verdict("not-asked", "nobody was there to approve it")
        if answer == "deny":
            if human:
                return Verdict("denied-by-user", "the user denied this call")
            return Verdict("denied-by-policy", "calls that need approval are denied here")
        if answer == "always" and request.allow_always:
            self.always.add(tool)
        return Verdict("allowed-by-user" if human else "allowed-by-flag")
