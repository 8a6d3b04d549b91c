"""The sync's listing of a lesson folder (rose.store.index._stat_lessons): a folder of lesson files alone is
checked whole in C, any other is filtered entry by entry; either way the same files come out: regular *.md files
whose names do not start with a dot, never a link, a folder or a stray file, each with its own stat."""
from __future__ import annotations

import os
import random
import stat
from pathlib import Path

from rose.store.index import _stat_lessons


def _expected(folder: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for name in os.listdir(folder):
        st = os.lstat(folder / name)
        if name.endswith(".md") and not name.startswith(".") and stat.S_ISREG(st.st_mode):
            out[name] = (st.st_mtime_ns, st.st_size)
    return out


def _listed(folder: Path) -> dict[str, tuple[int, int]]:
    names, stats = _stat_lessons(str(folder))
    assert len(names) == len(stats) == len(set(names))
    return {name: (st.st_mtime_ns, st.st_size) for name, st in zip(names, stats)}


def test_a_folder_of_lesson_files_alone_lists_every_one(tmp_path: Path) -> None:
    for i in range(50):
        (tmp_path / f"n_{i:03d}.md").write_text("x" * i, encoding="utf-8")
    assert _listed(tmp_path) == _expected(tmp_path) and len(_listed(tmp_path)) == 50


def test_each_kind_of_stray_entry_is_left_out(tmp_path: Path) -> None:
    (tmp_path / "n_a.md").write_text("a", encoding="utf-8")
    (tmp_path / "n_b.md").write_text("bb", encoding="utf-8")
    strays = {".hidden.md": "file", "._n_a.md": "file", "notes.txt": "file", "n_c.md.tmp": "file", "md": "file",
              "n_d.md": "folder", "n_link.md": "link", "n_dangling.md": "dangling"}
    for name, kind in strays.items():
        if kind == "file":
            (tmp_path / name).write_text("stray", encoding="utf-8")
        elif kind == "folder":
            (tmp_path / name).mkdir()
        elif kind == "link":
            os.symlink(tmp_path / "n_a.md", tmp_path / name)
        else:
            os.symlink(tmp_path / "gone.md", tmp_path / name)
    assert _listed(tmp_path) == _expected(tmp_path) and set(_listed(tmp_path)) == {"n_a.md", "n_b.md"}
    for name in strays:   # each stray alone among lesson files sends the folder down the filtered path
        alone = tmp_path / f"alone-{name.strip('.')}"
        alone.mkdir()
        (alone / "n_z.md").write_text("z", encoding="utf-8")
        os.rename(tmp_path / name, alone / name)
        assert set(_listed(alone)) == {"n_z.md"}, name


def test_random_folders_list_what_a_plain_filter_does(tmp_path: Path) -> None:
    rng = random.Random(15)
    names = ["n_{}.md", ".n_{}.md", "n_{}.txt", "n_{}.md~", "n_{}.mdx", "{}.md", "é_{}.md", "n {}.md"]
    for trial in range(30):
        folder = tmp_path / f"f{trial}"
        folder.mkdir()
        for i in range(rng.randrange(0, 40)):
            name = rng.choice(names if rng.random() < 0.3 else names[:1]).format(i)
            kind = rng.random()
            if kind < 0.9:
                (folder / name).write_text("y" * rng.randrange(100), encoding="utf-8")
            elif kind < 0.95:
                (folder / name).mkdir(exist_ok=True)
            elif not (folder / name).exists():
                os.symlink(folder / "elsewhere.md", folder / name)
        assert _listed(folder) == _expected(folder), sorted(os.listdir(folder))


def test_a_name_that_is_not_utf8_is_listed_as_the_filesystem_gives_it(tmp_path: Path) -> None:
    raw = os.fsencode(tmp_path) + b"/n_\xff.md"
    with open(raw, "wb") as handle:
        handle.write(b"body")
    (tmp_path / "n_ok.md").write_text("ok", encoding="utf-8")
    assert _listed(tmp_path) == _expected(tmp_path) and len(_listed(tmp_path)) == 2
