"""Where a generated skill lives: `.claude/skills/<name>/SKILL.md`, machine-local, and never over an authored one.

A live skill of a project store is written to the project's `.claude/skills/<name>/SKILL.md` (listed in the clone's
`.git/info/exclude`, so it is never committed by accident); one of the global store, to `~/.claude/skills/<name>/`.
The file is Claude Code's skill format with `disable-model-invocation: true`: Claude Code lists it (the user can run
it as /<name>) but does not load it on its own, because which sessions get it is the trial's randomization (rose
serves the procedure itself in the treatment arm, rose.evolve.runtime). A retired or rejected skill's file is
removed. rose recognises its own files by the MARKER line naming the record; a folder without it is authored and
left exactly as it is. `rose evolution promote` rewrites an active skill as the user's own (no marker, loaded by
Claude Code itself) and takes it out of the exclude list.
"""
from __future__ import annotations

import contextlib
import json
import os
import stat
from pathlib import Path

from rose.evolve.registry import Artifact, read
from rose.store import reader

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rose.store import Layers, Store

MARKER = "<!-- rose-generated"


def skills_root(layers: Layers, store: Store) -> Path | None:
    """The folder whose `.claude/skills` holds `store`'s generated skills (None: nowhere to put them)."""
    from rose import environment
    from rose.model import Scope

    try:
        return layers.project_root() if store.scope is Scope.PROJECT else environment.home()
    except Exception:  # noqa: BLE001 - no project or home: the skills stay in the registry only
        return None


def skill_file(root: Path, name: str) -> Path:
    return root / ".claude" / "skills" / name / "SKILL.md"


def link_on_the_way(root: Path, path: Path) -> Path | None:
    """The first symbolic link from below `root` down to `path` itself, else None. git commits symlinks (and an
    archive of a repository brings its `.git/`): a `.claude`, `.claude/skills` or `.git/info` link would have a
    write meant for the repository land wherever it points, so none is written through. `root` itself (the folder
    the user opened) is not questioned; a path not under it counts as a link."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return path
    current = root
    for part in parts:
        current = current / part
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return current
        except FileNotFoundError:
            return None   # nothing further down exists yet: what rose makes there is a real folder
        except OSError:
            return current
    return None


def _link_note(link: Path, path: Path) -> str:
    return f"not written: {link} is a symbolic link, and {path} is written only inside the repository"


def render(a: Artifact, *, generated: bool = True) -> str:
    """The skill as a SKILL.md. `generated`: rose's own, not model-invoked, with the marker naming its record."""
    description = " ".join(a.description.split()) or a.name
    head = f"---\nname: {a.name}\ndescription: {json.dumps(description, ensure_ascii=False)}\n"
    if generated:
        head += "disable-model-invocation: true\n"
    head += "---\n"
    note = (f"\n{MARKER} {a.id} ({a.state.value}) by rose evolution from {', '.join(a.sources)}; activates on: "
            f"{a.trigger}. Machine-local: rose applies it in a trial's treatment arm; `rose evolution promote "
            f"{a.id}` makes it yours. -->\n") if generated else ""
    return head + note + "\n" + a.body.strip() + "\n"


def ours(path: Path, artifact_id: str | None = None) -> bool:
    """Is `path` a file rose generated (for `artifact_id`, when given)?"""
    try:   # a repository's file: a regular one and no link (UnsafeFile), so a FIFO there is never waited on
        text = reader.read_text(path, reader.RECORD)
    except (OSError, UnicodeDecodeError):
        return False
    for line in text.splitlines():
        if line.startswith(MARKER):
            return artifact_id is None or line[len(MARKER):].split()[:1] == [artifact_id]
    return False


def sync(layers: Layers, enabled: bool) -> list[str]:
    """Write every live generated skill of the layers' stores where Claude Code finds it, and remove the files of
    those no longer live (all of them when evolution is off: `enabled`); returns what changed. A file rose did not
    write is never touched."""
    from rose.model import Scope
    from rose.store.atomic import write_text_atomic

    changed = []
    for store in layers.stores():
        artifacts = [a for a in read(store) if a.kind == "skill"]
        root = skills_root(layers, store) if artifacts else None
        if root is None:
            continue
        live = {a.name for a in artifacts if a.state.live and enabled}
        for a in artifacts:
            target = skill_file(root, a.name)
            link = link_on_the_way(root, target) if store.scope is Scope.PROJECT else None   # ~/.claude: the user's
            if link is not None:
                changed.append(_link_note(link, target))
                continue
            if a.state.live and enabled:
                if target.parent.exists() and not ours(target, a.id):
                    continue   # authored (or another record's): generated behaviour never overwrites it
                text = render(a)
                try:
                    if not target.exists() or reader.read_text(target, reader.RECORD) != text:
                        target.parent.mkdir(parents=True, exist_ok=True)
                        write_text_atomic(target, text)
                        changed.append(f"wrote {target}")
                        problem = exclude(root, target.parent)
                        if problem:
                            changed.append(problem)
                except OSError as exc:
                    changed.append(f"could not write {target}: {exc}")
            elif a.name not in live and ours(target, a.id):
                with contextlib.suppress(OSError):
                    target.unlink()
                    target.parent.rmdir()
                    changed.append(f"removed {target}")
    return changed


def exclude(root: Path, path: Path, *, add: bool = True) -> str:
    """Keep `path` out of commits in this clone (`.git/info/exclude`, itself never committed); `add=False` takes it
    out again. Nothing happens outside a git clone. Returns "" or why the exclude file could not be changed (the
    caller says so: the file itself is written, only `git status` would show it)."""
    info = root / ".git" / "info" / "exclude"
    link = link_on_the_way(root, info)
    if link is not None:
        return _link_note(link, info)
    if not info.parent.is_dir():
        return ""
    try:
        rel = path.relative_to(root).as_posix() + ("/" if path.is_dir() or not path.suffix else "")
    except ValueError:
        return ""
    try:   # as a store's files are read and appended to: a FIFO or a device there is refused, never waited on
        text = reader.read_text(info, reader.SMALL) if os.path.lexists(info) else ""
        lines = text.splitlines()
        if add and rel not in lines:
            with os.fdopen(reader.open_append(info), "a", encoding="utf-8") as handle:
                handle.write(("" if not text or text.endswith("\n") else "\n") + rel + "\n")
        elif not add and rel in lines:
            from rose.store.atomic import write_text_atomic

            write_text_atomic(info, "".join(f"{line}\n" for line in lines if line != rel))
    except (OSError, UnicodeDecodeError) as exc:
        return f"could not update {info}: {exc}"
    return ""
