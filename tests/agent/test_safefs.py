"""SafeFS: nothing outside the authorized folders is reachable, even while the tree changes."""

from __future__ import annotations

import errno
import os
import stat
import threading
import time
from pathlib import Path

import pytest

from tests.agent.conftest import Tree
from workhearth.agent import openat as fdw
from workhearth.agent.safefs import PathDenied, SafeFS, glob_regex
from workhearth.config import Config
from workhearth.errors import NotFoundError, UsageError
from workhearth.trash import Trash

# ------------------------------------------------------------------ lexical


@pytest.mark.parametrize(
    "path",
    ["../outside/secret.txt", "src/../../outside/secret.txt", "..", "./../work/../outside"],
)
def test_dot_dot_escapes_are_refused(fs: SafeFS, path: str) -> None:
    with pytest.raises(PathDenied):
        fs.read_text(path)


def test_dot_dot_inside_the_root_is_fine(fs: SafeFS) -> None:
    assert fs.read_text("src/../README.md") == "# readme\n"
    assert fs.display("src/./../README.md").endswith("/work/README.md")


def test_absolute_paths_outside_every_root_are_refused(fs: SafeFS, tree: Tree) -> None:
    for path in (str(tree.secret), "/etc/passwd", f"{tree.root}/../outside/secret.txt"):
        with pytest.raises(PathDenied, match=r"outside the authorized folders|climbs out"):
            fs.read_text(path)
    assert fs.read_text(str(tree.root / "README.md")) == "# readme\n"


def test_a_sibling_with_the_root_as_name_prefix_is_outside(tmp_path: Path, tree: Tree) -> None:
    twin = tmp_path / "work2"
    twin.mkdir()
    (twin / "f").write_text("x")
    with pytest.raises(PathDenied):
        SafeFS([tree.root]).read_text(str(twin / "f"))


def test_nul_and_empty_paths_are_refused(fs: SafeFS) -> None:
    with pytest.raises(PathDenied):
        fs.read_text("a\0b")
    with pytest.raises(UsageError):
        fs.read_text("")


def test_several_roots_and_absolute_paths_into_each(tmp_path: Path, tree: Tree) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "o.txt").write_text("other")
    fs = SafeFS([tree.root, other])
    assert fs.read_text(str(other / "o.txt")) == "other"
    assert fs.read_text("README.md") == "# readme\n"  # relative = first root


# ------------------------------------------------------------------ symlinks


def test_links_pointing_out_are_refused_for_files_and_folders(fs: SafeFS, tree: Tree) -> None:
    (tree.root / "leak.txt").symlink_to(tree.secret)
    (tree.root / "leakdir").symlink_to(tree.outside)
    (tree.root / "relleak").symlink_to("../outside")
    for path in ("leak.txt", "leakdir/secret.txt", "relleak/secret.txt"):
        with pytest.raises(PathDenied, match="link"):
            fs.read_text(path)
        with pytest.raises(PathDenied):
            fs.write_text(path, "overwritten")
    assert tree.secret.read_text() == "TOP SECRET\n"
    with pytest.raises(PathDenied):
        fs.write_text("leakdir/new.txt", "x")
    assert not (tree.outside / "new.txt").exists()


def test_links_inside_the_root_are_followed(fs: SafeFS, tree: Tree) -> None:
    (tree.root / "code").symlink_to("src")
    (tree.root / "abs.py").symlink_to(tree.root / "src" / "app.py")
    (tree.root / "src" / "up").symlink_to("../README.md")
    assert fs.read_text("code/app.py") == "print('hi')\n"
    assert fs.read_text("abs.py") == "print('hi')\n"
    assert fs.read_text("code/up") == "# readme\n"
    assert fs.locate("code/app.py") == tree.root / "src" / "app.py"
    # Writing through an in-root link writes its target and keeps the link.
    fs.write_text("abs.py", "print('bye')\n")
    assert (tree.root / "abs.py").is_symlink()
    assert (tree.root / "src" / "app.py").read_text() == "print('bye')\n"


def test_a_chain_that_ends_outside_is_refused(fs: SafeFS, tree: Tree) -> None:
    (tree.root / "hop1").symlink_to("hop2")
    (tree.root / "hop2").symlink_to(tree.outside)
    with pytest.raises(PathDenied):
        fs.read_text("hop1/secret.txt")


def test_link_loops_end_with_a_clear_error(fs: SafeFS, tree: Tree) -> None:
    (tree.root / "a").symlink_to("b")
    (tree.root / "b").symlink_to("a")
    with pytest.raises(PathDenied, match="too many levels"):
        fs.read_text("a/x")


def test_dot_dot_after_an_in_root_link_uses_the_real_folder(fs: SafeFS, tree: Tree) -> None:
    (tree.root / "deep").mkdir()
    (tree.root / "deep" / "inner").mkdir()
    (tree.root / "deep" / "inner" / "f.txt").write_text("deep")
    (tree.root / "shortcut").symlink_to("deep/inner")
    # Lexically, shortcut/.. is the root; the kernel's shortcut/.. is deep/. Ours is lexical
    # (before walking), so it stays inside either way.
    assert fs.read_text("shortcut/../README.md") == "# readme\n"


# ------------------------------------------------------------------ races


def _swap_dir_for_link(folder: Path, target: Path) -> None:
    folder.rename(folder.with_name(folder.name + ".real"))
    folder.symlink_to(target)


@pytest.fixture
def sub(tree: Tree) -> Path:
    sub = tree.root / "sub"
    sub.mkdir()
    (sub / "secret.txt").write_text("INSIDE\n")
    return sub


def test_folder_swapped_for_a_link_between_check_and_open_is_refused(
    fs: SafeFS, tree: Tree, sub: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A naive resolve-then-open would check `sub` (a real folder), then open the swapped link."""
    real_openat = fdw.openat
    swapped = []

    def racing_openat(dir_fd: int, name: str, flags: int, mode: int = 0o777) -> int:
        if name == "sub" and not swapped:
            _swap_dir_for_link(sub, tree.outside)  # the attacker wins the race here
            swapped.append(True)
        return real_openat(dir_fd, name, flags, mode)

    assert os.path.realpath(tree.root / "sub").startswith(str(tree.root))  # the "check" passes
    monkeypatch.setattr(fdw, "openat", racing_openat)
    with pytest.raises(PathDenied, match="link"):
        fs.read_text("sub/secret.txt")
    assert swapped


def test_swap_after_the_folder_was_opened_keeps_reading_inside(
    fs: SafeFS, tree: Tree, sub: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_openat = fdw.openat

    def racing_openat(dir_fd: int, name: str, flags: int, mode: int = 0o777) -> int:
        if name == "secret.txt" and not sub.is_symlink():
            _swap_dir_for_link(sub, tree.outside)
        return real_openat(dir_fd, name, flags, mode)

    monkeypatch.setattr(fdw, "openat", racing_openat)
    # The walk holds the real folder's descriptor: the file comes from there, not outside.
    assert fs.read_text("sub/secret.txt") == "INSIDE\n"
    assert sub.is_symlink()


def test_final_file_swapped_for_a_link_is_refused(
    fs: SafeFS, tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes = tree.root / "notes.txt"
    notes.write_text("mine")
    real_openat = fdw.openat

    def racing_openat(dir_fd: int, name: str, flags: int, mode: int = 0o777) -> int:
        if name == "notes.txt" and not notes.is_symlink():
            notes.unlink()
            notes.symlink_to(tree.secret)
        return real_openat(dir_fd, name, flags, mode)

    monkeypatch.setattr(fdw, "openat", racing_openat)
    with pytest.raises(PathDenied):
        fs.read_text("notes.txt")


def test_write_racing_a_link_swap_never_lands_outside(
    fs: SafeFS, tree: Tree, sub: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_openat = fdw.openat

    def racing_openat(dir_fd: int, name: str, flags: int, mode: int = 0o777) -> int:
        fd = real_openat(dir_fd, name, flags, mode)
        if name == "sub" and not sub.is_symlink():
            _swap_dir_for_link(sub, tree.outside)  # after the walk opened the real folder
        return fd

    monkeypatch.setattr(fdw, "openat", racing_openat)
    fs.write_text("sub/out.txt", "written")
    assert not (tree.outside / "out.txt").exists()
    assert (tree.root / "sub.real" / "out.txt").read_text() == "written"


def test_a_swap_seen_half_way_by_the_walk_is_refused_as_a_link(
    fs: SafeFS, tree: Tree, sub: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The open sees a link, readlink a folder, stat a link again: the walk looks again.

    This is the interleaving that made the flipping-thread test flaky under load
    ("sub is not a folder"); here it is forced, once, through the seams.
    """
    real = tree.root / "sub.real"
    real_openat, real_readlink = fdw.openat, fdw.readlink
    flips: list[str] = []

    def to_link() -> None:
        sub.rename(real)
        sub.symlink_to(tree.outside)

    def to_folder() -> None:
        sub.unlink()
        real.rename(sub)

    def racing_openat(dir_fd: int, name: str, flags: int, mode: int = 0o777) -> int:
        if name == "sub" and not flips:
            to_link()
            flips.append("link")
        return real_openat(dir_fd, name, flags, mode)

    def racing_readlink(dir_fd: int, name: str) -> str | None:
        if name == "sub" and flips == ["link"]:
            to_folder()
            result = real_readlink(dir_fd, name)
            to_link()
            flips.append("folder, then link")
            return result
        return real_readlink(dir_fd, name)

    monkeypatch.setattr(fdw, "openat", racing_openat)
    monkeypatch.setattr(fdw, "readlink", racing_readlink)
    with pytest.raises(PathDenied, match="link"):
        fs.read_text("sub/secret.txt")
    assert flips == ["link", "folder, then link"]


def test_a_thread_flipping_folder_and_link_never_leaks(fs: SafeFS, tree: Tree, sub: Path) -> None:
    stop = threading.Event()
    real = tree.root / "sub.real"

    def flipper() -> None:
        while not stop.is_set():
            sub.rename(real)
            sub.symlink_to(tree.outside)
            sub.unlink()
            real.rename(sub)

    thread = threading.Thread(target=flipper)
    thread.start()
    seen: set[str] = set()
    try:
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            try:
                seen.add(fs.read_text("sub/secret.txt"))
            except (PathDenied, NotFoundError):
                seen.add("refused")
            try:
                fs.write_text("sub/new.txt", "x", make_parents=False)
            except (PathDenied, NotFoundError):
                pass
    finally:
        stop.set()
        thread.join()
    assert "TOP SECRET\n" not in seen
    assert not (tree.outside / "new.txt").exists()
    assert seen <= {"INSIDE\n", "refused"}


def test_a_replaced_root_is_refused(tmp_path: Path, tree: Tree) -> None:
    fs = SafeFS([tree.root])
    fs.read_text("README.md")
    tree.root.rename(tmp_path / "moved")
    tree.root.symlink_to(tree.outside)
    with pytest.raises(PathDenied, match="replaced"):
        fs.read_text("secret.txt")


# ------------------------------------------------------------------ reading and writing


def test_write_is_atomic_returns_previous_and_keeps_the_mode(fs: SafeFS, tree: Tree) -> None:
    assert fs.write_text("new/dir/file.txt", "one") is None
    assert (tree.root / "new" / "dir" / "file.txt").read_text() == "one"
    script = tree.root / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    assert fs.write_text("run.sh", "#!/bin/sh\necho hi\n") == b"#!/bin/sh\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    assert not list(tree.root.rglob(".*.tmp"))


def test_before_replace_sees_the_old_bytes_and_can_abort(fs: SafeFS, tree: Tree) -> None:
    seen = []

    def veto(previous: bytes | None) -> None:
        seen.append(previous)
        raise UsageError("no")

    with pytest.raises(UsageError):
        fs.write_text("README.md", "changed", before_replace=veto)
    assert seen == [b"# readme\n"]
    assert (tree.root / "README.md").read_text() == "# readme\n"
    assert not [p for p in tree.root.iterdir() if p.name.endswith(".tmp")]


def test_read_limits_folders_and_special_files(fs: SafeFS, tree: Tree) -> None:
    (tree.root / "big.bin").write_bytes(b"x" * 100)
    with pytest.raises(UsageError, match="larger than 10 bytes"):
        fs.read_bytes("big.bin", max_bytes=10)
    with pytest.raises(UsageError, match="folder"):
        fs.read_text("src")
    with pytest.raises(UsageError, match="folder"):
        fs.write_text("src", "x")
    os.mkfifo(tree.root / "pipe")
    with pytest.raises(UsageError, match="not a regular file"):
        fs.read_text("pipe")  # returns at once, never blocks on the pipe
    with pytest.raises(NotFoundError):
        fs.read_text("missing.txt")
    with pytest.raises(NotFoundError):
        fs.read_text("nope/missing.txt")
    with pytest.raises(UsageError, match="not a folder"):
        fs.read_text("README.md/inner")
    (tree.root / "latin1.txt").write_bytes(b"caf\xe9")
    with pytest.raises(UsageError, match="not UTF-8"):
        fs.read_text("latin1.txt")


def test_stat_and_mkdir(fs: SafeFS, tree: Tree) -> None:
    fs.mkdir("a/b/c")
    assert (tree.root / "a" / "b" / "c").is_dir()
    fs.mkdir("a/b/c")  # exists: fine
    (tree.root / "ln").symlink_to("README.md")
    info = fs.stat("ln", follow=False)
    assert (info.kind, info.link) == ("symlink", "README.md")
    assert fs.stat("ln").kind == "file"
    assert fs.exists("README.md") and not fs.exists("nope")


# ------------------------------------------------------------------ delete


def test_delete_moves_to_the_trash_and_restores(fs: SafeFS, tree: Tree, config: Config) -> None:
    item = fs.delete("src", session="s1")
    assert not (tree.root / "src").exists()
    assert (item.kind, item.original, item.session) == ("dir", str(tree.root / "src"), "s1")
    assert item.size == len("print('hi')\n")
    Trash(config.paths.trash).restore(item.id)
    assert (tree.root / "src" / "app.py").read_text() == "print('hi')\n"


def test_delete_of_a_link_removes_the_link_not_its_target(fs: SafeFS, tree: Tree) -> None:
    (tree.root / "leak").symlink_to(tree.outside)
    (tree.root / "inner").symlink_to("README.md")
    fs.delete("leak")
    fs.delete("inner")
    assert tree.secret.exists() and (tree.root / "README.md").exists()
    assert not (tree.root / "leak").is_symlink()


def test_delete_refuses_the_root_and_missing_files(fs: SafeFS) -> None:
    with pytest.raises(PathDenied, match="authorized folder itself"):
        fs.delete(".")
    with pytest.raises(NotFoundError):
        fs.delete("missing")
    with pytest.raises(UsageError, match="trash"):
        SafeFS([fs.roots[0].path]).delete("README.md")


def test_delete_across_filesystems_copies_then_removes(
    fs: SafeFS, tree: Tree, config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    import workhearth.trash as trash_mod

    real_rename = os.rename

    def no_cross_device(src, dst, *, src_dir_fd=None, dst_dir_fd=None):
        if src_dir_fd is not None:
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        return real_rename(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)

    (tree.root / "src" / "ln").symlink_to("app.py")
    monkeypatch.setattr(trash_mod.os, "rename", no_cross_device)
    item = fs.delete("src")
    monkeypatch.undo()
    assert not (tree.root / "src").exists()
    payload = config.paths.trash / item.id / "payload"
    assert (payload / "app.py").read_text() == "print('hi')\n"
    assert os.readlink(payload / "ln") == "app.py"


# ------------------------------------------------------------------ protected, walk, glob


def test_workhearth_home_inside_a_root_is_off_limits(tmp_path: Path, config: Config) -> None:
    config.home.mkdir(parents=True, exist_ok=True)
    (config.home / "audit.jsonl").write_text("{}\n")
    fs = SafeFS([tmp_path], trash=Trash(config.paths.trash), protected=[config.home])
    (tmp_path / "alias").symlink_to(config.home)
    for path in ("home/audit.jsonl", "alias/audit.jsonl", str(config.home / "audit.jsonl")):
        with pytest.raises(PathDenied, match="own data folder"):
            fs.read_text(path)
    with pytest.raises(PathDenied):
        fs.write_text("home/audit.jsonl", "forged")
    with pytest.raises(PathDenied):
        fs.delete("home")
    assert not [e for e in fs.walk() if e.rel.startswith("home/")]


def test_walk_lists_links_but_never_enters_them(fs: SafeFS, tree: Tree) -> None:
    (tree.root / "leakdir").symlink_to(tree.outside)
    (tree.root / "code").symlink_to("src")
    rels = {e.rel: e.kind for e in fs.walk()}
    assert rels["leakdir"] == "symlink" and rels["code"] == "symlink"
    assert "leakdir/secret.txt" not in rels and "code/app.py" not in rels
    assert rels["src/app.py"] == "file" and rels["src"] == "dir"
    assert [e.rel for e in fs.list_dir("src")] == ["app.py"]
    with pytest.raises(UsageError, match="not a folder"):
        list(fs.walk("README.md"))


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/*.py", "a/b/c.py", True),
        ("**/*.py", "c.py", True),
        ("*.py", "a/c.py", False),
        ("src/*.{py,txt}", "src/x.txt", True),
        ("src/*.{py,txt}", "src/x.md", False),
        ("[!R]*", "README.md", False),
        ("[!R]*", "app.py", True),
        ("src/**", "src/a/b", True),
        ("a?c", "abc", True),
        ("a?c", "a/c", False),
        ("f(x).txt", "f(x).txt", True),
    ],
)
def test_glob_patterns(pattern: str, path: str, matches: bool) -> None:
    assert bool(glob_regex(pattern).fullmatch(path)) is matches


def test_glob_over_the_tree(fs: SafeFS, tree: Tree) -> None:
    (tree.root / "src" / "deep").mkdir()
    (tree.root / "src" / "deep" / "x.py").write_text("")
    assert [e.rel for e in fs.glob("**/*.py")] == ["src/app.py", "src/deep/x.py"]
    assert [e.rel for e in fs.glob("*.md")] == ["README.md"]
    assert [e.rel for e in fs.glob("*.py", "src")] == ["app.py"]
