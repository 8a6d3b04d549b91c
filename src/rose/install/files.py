"""Plan, then apply: every file rose edits is computed in full before anything is written.

An agent module turns the user's current files into a list of `FileEdit` (bytes before, bytes after); `apply` then
writes them. So a malformed file found late never leaves an early file half-installed, installing twice finds
nothing to write, and a test can look at a plan without touching disk.

Safety rules `apply` keeps:
* before the first change to an existing file that rose cannot otherwise undo exactly, its bytes are copied to
  ``<file>.rose-backup`` (never overwritten while it exists); an uninstall that can put it back exactly does, and
  removes the backup;
* writes are atomic (temp file, fsync, rename) and keep the file's permission bits;
* a symlinked settings file (a dotfiles checkout) is edited where it points, the link stays a link; a project's
  file only when it points inside the project (`refuse_links_out`: a repository commits links);
* a file that changed on disk since it was read is not overwritten (another program was editing it: run again).
"""
from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from rose.install.model import FileAction, FileChange, InstallError
from rose.store.atomic import write_bytes_atomic
from rose.store.paths import inside
from rose.typedrecord import Record

BACKUP_SUFFIX = ".rose-backup"
DEFAULT_MODE = 0o644


def real_target(path: Path) -> Path:
    """Where a write to ``path`` must land: through symlinks, so a link into a dotfiles repo stays a link."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def refuse_links_out(edits: Iterable[FileEdit], project: Path) -> None:
    """A project's files are written only inside the project: an edit of a path under `project` that resolves
    outside it (a committed `AGENTS.md` linked to ~/.bashrc, a `.claude` linked to another project's) raises
    InstallError before anything is written. The user's own files (~/.claude, ~/.codex) keep their dotfile links."""
    root = os.path.realpath(project)
    for edit in edits:
        if edit.before == edit.after or not inside(os.path.abspath(edit.path), os.path.abspath(project)):
            continue
        real = os.path.realpath(edit.path)
        if not inside(real, root):
            raise InstallError(f"{edit.path} leads to {real}, outside this project (a link the repository holds?): "
                               "rose writes a project's files only inside it; nothing was written")


def backup_path(path: Path) -> Path:
    target = real_target(path)
    return target.with_name(target.name + BACKUP_SUFFIX)


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or None when it does not exist. A directory or unreadable file is an InstallError.

    Read as rose.store.reader reads a store's files: the repository's `.claude/settings.json`, `.mcp.json`, ...
    can be committed links, and one to /dev/zero read until memory ran out, one to a FIFO never returned. Anything
    but a regular file is refused unread; a link is followed to wherever it leads (a dotfiles checkout) as long as
    that is a regular file. The limit is a log's: ~/.claude.json grows with every project the user opens."""
    from rose.errors import UnsafeFile
    from rose.store import reader

    try:
        return reader.read_bytes(path, reader.LOG, within=os.sep)
    except FileNotFoundError:
        return None
    except UnsafeFile as exc:
        raise InstallError(f"{path} {exc.reason}; rose left it untouched") from None
    except OSError as exc:
        raise InstallError(f"cannot read {path}: {exc.strerror or exc}; rose left it untouched") from None


def decode(path: Path, raw: bytes) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InstallError(f"{path} is not UTF-8 text (byte {exc.start}); rose left it untouched") from None
    return text[1:] if text.startswith("\ufeff") else text


class FileEdit(Record):
    path: Path
    before: bytes | None
    after: bytes | None       # None: the file is removed
    detail: str = ""
    keep_backup: bool = False  # copy `before` to <path>.rose-backup before changing it (if no backup exists yet)
    drop_backup: bool = False  # `after` is the backup put back exactly: remove the backup afterwards
    prune_dir: bool = False    # after removing the file, remove its folder too if that left it empty

    @property
    def noop(self) -> bool:
        return self.before == self.after and not self.drop_backup

    def action(self) -> FileAction:
        if self.before == self.after:
            return FileAction.UNCHANGED
        if self.after is None:
            return FileAction.REMOVED
        if self.before is None:
            return FileAction.CREATED
        return FileAction.RESTORED if self.drop_backup else FileAction.UPDATED


def apply(edits: Iterable[FileEdit]) -> list[FileChange]:
    edits = list(edits)
    targets = [os.path.realpath(e.path) for e in edits if e.before != e.after]
    if len(targets) != len(set(targets)):   # each edit is a whole file: a second edit of one would undo the first
        twice = sorted({t for t in targets if targets.count(t) > 1})
        raise InstallError(f"rose planned two edits of {', '.join(twice)}; nothing was written (a bug in rose: please "
                           "report it)")
    for edit in edits:  # nothing is written if any file moved under us since it was planned
        if edit.before != edit.after and read_bytes(edit.path) != edit.before:
            raise InstallError(f"{edit.path} changed while rose was planning its edit (another program is writing "
                               "it?); nothing was written, run the command again")
    changes = []
    prune: list[Path] = []
    for edit in edits:
        action = edit.action()
        backup = backup_path(edit.path)
        if action is not FileAction.UNCHANGED:
            if edit.keep_backup and edit.before is not None and not backup.exists():
                _write(backup, edit.before, mode_from=edit.path)
                _ignore_locally(backup, True)
            if edit.after is None:
                with contextlib.suppress(FileNotFoundError):
                    edit.path.unlink()
                if edit.prune_dir:
                    prune.append(edit.path.parent)
            else:
                _write(real_target(edit.path), edit.after, mode_from=edit.path)
            if edit.drop_backup:
                with contextlib.suppress(FileNotFoundError):
                    backup.unlink()
                _ignore_locally(backup, False)
        changes.append(FileChange(edit.path, action, edit.detail, backup if backup.exists() else None))
    for folder in prune:  # after every edit: two files rose created may share the folder
        with contextlib.suppress(OSError):  # not empty, or gone: leave it
            folder.rmdir()
    return changes


def _ignore_locally(backup: Path, ignored: bool) -> None:
    """A backup inside a git work tree (a project-scope install) is named in that clone's own ignore list,
    .git/info/exclude, which is never committed, so `git add -A` cannot commit it; the line goes with the backup.
    Best effort: an ignore list rose cannot write leaves the backup as it is, untracked."""
    for folder in backup.parents:
        git = folder / ".git"
        if git.is_dir():
            break
        if git.exists() or git.is_symlink():
            return   # a linked worktree or submodule (.git a file): its ignore list lives elsewhere; left alone
    else:
        return
    line = "/" + backup.relative_to(folder).as_posix()
    exclude = git / "info" / "exclude"
    try:
        lines = exclude.read_text(encoding="utf-8").splitlines() if exclude.is_file() else []
        if (line in lines) == ignored:
            return
        lines = [*lines, line] if ignored else [kept for kept in lines if kept != line]
        exclude.parent.mkdir(parents=True, exist_ok=True)
        _write(exclude, ("\n".join(lines) + "\n" if lines else "").encode("utf-8"), mode_from=exclude)
    except (OSError, UnicodeDecodeError):
        pass   # best effort: an unreadable exclude file costs only an untracked backup showing in git status


def _mode(path: Path) -> int:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return DEFAULT_MODE & ~umask


def _write(path: Path, data: bytes, mode_from: Path) -> None:
    mode = _mode(mode_from)
    write_bytes_atomic(path, data)  # a temp file is created 0600: put the user's bits back
    os.chmod(path, mode)


class Plan(Record):
    """Everything one install / uninstall of one agent and scope will do, before it is done."""

    summary: str
    edits: list[FileEdit]
    command: str = ""
    notes: list[str] | None = None
    steps: list[str] | None = None

    def __post_init__(self) -> None:
        self.notes = list(self.notes or [])
        self.steps = list(self.steps or [])
