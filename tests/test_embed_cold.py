"""The dense half of a command in its own process (issue 15): WordLlama's weights memory-mapped with only a query's
rows converted, the vectors laid out as one view of their joined blobs, the "is anything unembedded?" check told
from the rows a table reads, and the tables and model kept for the process. Each is held equal to what it replaced."""
from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest

from rose.embed import Chunked, load_numpy, to_blob
from rose.embed import dense
from rose.embed.safetensors_map import map_single_tensor
from rose.errors import EmbedUnavailable
from rose.model import Node
from rose.store import Layers
from tests.support.four_words import FourWords

np = load_numpy()


# -- the safetensors map ----------------------------------------------------------------------------------------

def _write(path: Path, header: object, data: bytes, length: int | None = None) -> Path:
    raw = json.dumps(header).encode()
    path.write_bytes((len(raw) if length is None else length).to_bytes(8, "little") + raw + data)
    return path


@pytest.mark.parametrize("dtype,shape", [("float16", (7, 5)), ("float32", (3, 4, 2)), ("float64", (9,))])
def test_the_mapped_tensor_is_what_safetensors_reads(tmp_path: Path, dtype: str, shape: tuple[int, ...]) -> None:
    from safetensors.numpy import load_file, save_file

    values = np.random.default_rng(3).standard_normal(shape).astype(dtype)
    save_file({"weights": values}, str(tmp_path / "w.safetensors"), metadata={"made": "here"})
    mapped = map_single_tensor(tmp_path / "w.safetensors")
    assert mapped.dtype == np.dtype(dtype) and mapped.shape == shape
    assert np.array_equal(mapped, load_file(str(tmp_path / "w.safetensors"))["weights"])
    assert not mapped.flags.writeable   # a view of the file, never a copy to write into


def test_a_file_that_is_not_one_whole_tensor_is_a_clear_error(tmp_path: Path) -> None:
    good = {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}
    data = bytes(16)
    cases = {
        "short": None,
        "huge header": _write(tmp_path / "a", {"w": good}, data, length=10**9),
        "not json": None,
        "two tensors": _write(tmp_path / "c", {"w": good, "v": good}, data),
        "no tensor": _write(tmp_path / "d", {"__metadata__": {}}, data),
        "bf16": _write(tmp_path / "e", {"w": {**good, "dtype": "BF16"}}, data),
        "bad shape": _write(tmp_path / "f", {"w": {**good, "shape": [2, -2]}}, data),
        "range short of shape": _write(tmp_path / "g", {"w": {**good, "data_offsets": [0, 12]}}, data),
        "range past the file": _write(tmp_path / "h", {"w": {**good, "data_offsets": [8, 24]}}, data),
        "reversed range": _write(tmp_path / "i", {"w": {**good, "data_offsets": [16, 0]}}, data),
        "not a list": _write(tmp_path / "j", [good], data),
    }
    (tmp_path / "short").write_bytes(b"\x01\x00")
    cases["short"] = tmp_path / "short"
    (tmp_path / "nj").write_bytes((5).to_bytes(8, "little") + b"{nope" + data)
    cases["not json"] = tmp_path / "nj"
    for what, path in cases.items():
        with pytest.raises(EmbedUnavailable):
            map_single_tensor(path)
            pytest.fail(what)
    assert map_single_tensor(_write(tmp_path / "ok", {"w": good}, data)).shape == (2, 2)


# -- the static embedder: the same vectors as from the whole matrix ---------------------------------------------

def _texts() -> list[str]:
    rng = random.Random(11)
    words = ("redis cache ttl deploy the port database retry lockfile Always never check before migration "
             "naïve café — 数据库 emoji 🚀 tabs\tand\nnewlines <s> </s> <unk> CamelCaseIdentifier snake_case_name "
             "x86_64 v1.2.3 http://example.com/a?b=c ~/.rose/nodes/*.md").split(" ")
    texts = ["", " ", "a", "  leading and trailing  ", "<s>", "x" * 500, "🚀" * 20]
    texts += [" ".join(rng.choice(words) for _ in range(rng.randint(1, 60))) for _ in range(400)]
    texts += ["".join(chr(rng.choice([rng.randint(32, 126), rng.randint(160, 0x2FFF), rng.randint(0x1F300, 0x1F6FF)]))
                      for _ in range(rng.randint(1, 80))) for _ in range(200)]
    return texts


def test_the_static_embedder_gives_the_whole_matrix_vectors_bit_for_bit() -> None:
    from rose.embed.static import TOKENIZER, WEIGHTS, WHOLE_MATRIX_AT, StaticEmbedder, _package_dir, available

    if not available():
        pytest.skip("wordllama is not installed")
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    # the embedder as it was: the whole matrix read and converted, then the mean of the token rows, normalised
    pkg = _package_dir()
    matrix = next(iter(load_file(str(pkg / WEIGHTS)).values())).astype(np.float32)
    tokenizer = Tokenizer.from_file(str(pkg / TOKENIZER))
    tokenizer.no_truncation()
    texts = _texts()
    expected = []
    for enc in tokenizer.encode_batch(texts, add_special_tokens=False):
        ids = [i for i in enc.ids if i < len(matrix)] or [0]
        vec = matrix[ids].mean(axis=0)
        norm = float(np.linalg.norm(vec)) or 1.0
        expected.append((vec / norm).tolist())

    gathered = StaticEmbedder()
    small = [v for at in range(0, len(texts), 7) for v in gathered.embed(texts[at:at + 7])]   # rows converted
    assert gathered._whole is None
    assert small == expected
    python = StaticEmbedder()          # a query at a time: tokenized in Python until PYTHON_CHARS, then the library
    one_by_one = [v for text in texts for v in python.embed([text])]
    assert python._library is not None, "the texts outgrew the Python rules' budget"
    assert one_by_one == expected
    whole = StaticEmbedder()
    assert len(texts) >= WHOLE_MATRIX_AT
    assert whole.embed(texts) == expected                    # a large batch converts the whole matrix once
    assert whole._whole is not None and np.array_equal(whole._whole, matrix)
    assert whole.embed(texts[:3]) == expected[:3]


def _config() -> dict:
    from rose.embed.static import TOKENIZER, _package_dir, available

    if not available():
        pytest.skip("wordllama is not installed")
    return json.loads((_package_dir() / TOKENIZER).read_text(encoding="utf-8"))


def test_the_python_tokenizer_gives_the_librarys_ids() -> None:
    from tokenizers import Tokenizer

    from rose.embed.bpe import Rules

    config = _config()
    rules = Rules.of(config)
    assert rules is not None
    library = Tokenizer.from_str(json.dumps(config))
    library.no_truncation()
    rng = random.Random(2)
    texts = _texts() + ["<s>x</s>", "a<unk>b<s><s>", "</s", "<s", "▁▁ ▁", "\u2581leading", "x" * 3000,
                        " ".join(rng.choice(["deploy", "the", "cache", "ünïcödé", "🚀"]) for _ in range(800))]
    assert [rules.encode(t) for t in texts] == [e.ids for e in library.encode_batch(texts, add_special_tokens=False)]
    with pytest.raises(UnicodeEncodeError):
        rules.encode("a lone surrogate \udcff")       # the library refuses it too: no text is guessed at


def test_a_tokenizer_config_the_python_rules_do_not_follow_goes_to_the_library() -> None:
    import copy

    from rose.embed.bpe import Rules

    base = _config()
    changes = [
        lambda c: c.update(normalizer={"type": "NFKC"}),
        lambda c: c.update(pre_tokenizer={"type": "Whitespace"}),
        lambda c: c["model"].update(dropout=0.1),
        lambda c: c["model"].update(byte_fallback=False),
        lambda c: c["model"].update(continuing_subword_prefix="##"),
        lambda c: c["model"].update(end_of_word_suffix="</w>"),
        lambda c: c["model"].update(ignore_merges=True),
        lambda c: c["model"].update(type="WordPiece"),
        lambda c: c["model"]["vocab"].pop("<0x41>"),
        lambda c: c["model"]["vocab"].update({"a b": 99999}),
        lambda c: c["model"]["merges"].append("a b c"),
        lambda c: c["model"]["merges"].append(["a", "b"]),
        lambda c: c["added_tokens"][0].update(lstrip=True),
        lambda c: c["added_tokens"][0].update(normalized=True),
        lambda c: c.pop("added_tokens"),
    ]
    for change in changes:
        config = copy.deepcopy(base)
        change(config)
        assert Rules.of(config) is None
    assert Rules.of(base) is not None


def test_the_process_shares_one_static_embedder() -> None:
    from rose.config import EmbedProvider, EmbedSettings
    from rose.embed import make_embedder
    from rose.embed.static import available

    if not available():
        pytest.skip("wordllama is not installed")
    a = make_embedder(EmbedSettings(provider=EmbedProvider.AUTO))
    b = make_embedder(EmbedSettings(provider=EmbedProvider.WORDLLAMA))
    assert a is not None and b is not None and a.base is b.base


# -- the vector table ------------------------------------------------------------------------------------------


def _put(db: Path, rows: list[tuple[str, bytes]], model: str = "m") -> None:
    conn = sqlite3.connect(db)
    conn.executemany("INSERT OR REPLACE INTO embeddings(node_id, model, vec, text_hash) VALUES (?, ?, ?, 'h')",
                     [(node_id, model, blob) for node_id, blob in rows])
    conn.commit()
    conn.close()


def test_the_matrix_holds_each_lessons_chunks_and_skips_a_blob_that_fits_no_vector(layers: Layers) -> None:
    db = layers.project.index_db_path
    rng = np.random.default_rng(5)
    chunks = {"n_one000": 1, "n_three0": 3, "n_two000": 2, "n_four00": 4, "n_one001": 1}
    vectors = {i: rng.standard_normal((n, 4)).astype(np.float32) for i, n in chunks.items()}
    _put(db, [(i, v.tobytes()) for i, v in vectors.items()]
         + [("n_torn00", b"\x00" * 10), ("n_empty0", b""), ("n_wide00", bytes(4 * 6))])
    _put(db, [("n_other0", to_blob([1.0, 0, 0, 0]))], model="another space")
    table = dense.VectorTable(db, "m")
    try:
        for _ in range(20):
            q = rng.standard_normal(4).astype(np.float32)
            ranked = table.rank(q.tolist(), 10)
            want = sorted(((i, float((v @ q).max())) for i, v in vectors.items()), key=lambda t: -t[1])
            assert [i for i, _ in ranked] == [i for i, _ in want]   # the torn, empty and 6-wide blobs are skipped
            assert all(abs(a - b) < 1e-5 for (_, a), (_, b) in zip(ranked, want))
        assert table.matrix.shape == (11, 4) and table.ids == list(vectors)
    finally:
        table.close()


def test_a_table_reloads_what_changed_and_its_version_is_what_version_counts(layers: Layers) -> None:
    store = layers.project
    store.save_many([Node(id="n_al0001", family="w", title="Alpha", body="alpha alpha"),
                     Node(id="n_be0001", family="w", title="Beta", body="beta beta")])
    embedder = Chunked(FourWords())
    store.embed_missing(embedder)
    table = dense.VectorTable(store.index_db_path, embedder.name)
    try:
        [q] = embedder.embed(["gamma"])
        assert {i for i, _ in table.rank(q, 5)} == {"n_al0001", "n_be0001"}
        assert table.loaded_version == table.version()
        store.save(Node(id="n_ga0001", family="w", title="Gamma", body="gamma gamma"))
        store.embed_missing(embedder)
        assert table.rank(q, 1)[0][0] == "n_ga0001"
        assert table.loaded_version == table.version()
    finally:
        table.close()


def test_lacking_says_what_missing_embeddings_finds(layers: Layers) -> None:
    store = layers.project
    embedder = Chunked(FourWords())
    table = dense.VectorTable(store.index_db_path, embedder.name)

    def agree() -> bool:
        lacking = table.lacking()
        assert lacking == bool(store.index.missing_embeddings(embedder.name, limit=1))
        return lacking

    try:
        assert not agree()                                                  # an empty store lacks nothing
        store.save_many([Node(id="n_al0001", family="w", title="Alpha", body="alpha"),
                         Node(id="n_be0001", family="w", title="Beta", body="beta")])
        assert agree()                                                      # new lessons
        store.embed_missing(embedder)
        assert not agree()
        node = store.get("n_be0001")
        node.body = "beta, and now gamma"
        store.save(node)
        assert agree()                                                      # an edited text
        store.embed_missing(embedder)
        assert not agree()
        _put(store.index_db_path, [("n_al0001", to_blob([1.0, 0, 0, 0]))], model="another space")
        assert agree()            # its vector replaced by another space's (one vector per lesson in the index)
        store.embed_missing(embedder)
        assert not agree()
    finally:
        table.close()


def test_a_process_keeps_its_tables_and_opens_a_replaced_index_again(layers: Layers, monkeypatch) -> None:
    store = layers.project
    store.save(Node(id="n_al0001", family="w", title="Alpha", body="alpha"))
    embedder = Chunked(FourWords())
    store.embed_missing(embedder)
    monkeypatch.setattr(dense, "_local", {})
    db = store.index_db_path
    first = dense.local_table(db, embedder.name)
    assert dense.local_table(db, embedder.name) is first                        # kept for the next pass
    assert dense.rank_in_process([db], embedder, "alpha", 3)[str(db)][0][0] == "n_al0001"

    store.close()
    db.unlink()                                   # index.db deleted: the files rebuild it, another file
    for extra in db.parent.glob("index.db-*"):
        extra.unlink()
    layers2 = Layers.discover(store.root.parent)
    fresh = layers2.project
    fresh.sync()
    fresh.save(Node(id="n_be0001", family="w", title="Beta", body="beta"))
    fresh.embed_missing(embedder)
    again = dense.local_table(db, embedder.name)
    assert again is not first
    assert {i for i, _ in dense.rank_in_process([db], embedder, "beta", 3)[str(db)]} == {"n_al0001", "n_be0001"}
    layers2.close()


def test_the_process_holds_at_most_a_few_tables(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(dense, "_local", {})
    closed = []
    monkeypatch.setattr(dense.VectorTable, "close", lambda self: closed.append(self.db_path))
    dbs = []
    for i in range(dense.LOCAL_TABLES + 2):
        db = tmp_path / f"i{i}.db"
        sqlite3.connect(db).close()
        dbs.append(db)
        dense.local_table(db, "m")
    assert len(dense._local) == dense.LOCAL_TABLES
    assert closed == dbs[:2]                          # the least recently used, closed


def test_recall_ranks_both_passes_with_one_table_and_one_model(layers: Layers, monkeypatch) -> None:
    from rose.config import EmbedProvider, Selector, Settings
    from rose.recall import recall

    store = layers.project
    store.save_many([Node(id=f"n_w{i:05d}", family="w", title=f"{w.title()} lesson {i}", tags=[w],
                          body=f"{w} {w} matters for step {i}.") for i, w in enumerate(FourWords.words * 15)])
    made, opened = [], []
    embedder = Chunked(FourWords())

    def make(settings):
        made.append(settings)
        return embedder

    class Counted(dense.VectorTable):
        def __init__(self, *a):
            opened.append(a)
            super().__init__(*a)

    monkeypatch.setattr("rose.embed.make_embedder", make)
    monkeypatch.setattr(dense, "VectorTable", Counted)
    monkeypatch.setattr(dense, "_local", {})
    settings = Settings()
    settings.embed.provider = EmbedProvider.OPENAI   # any provider with a model: the one made above answers
    settings.recall.selector = Selector.HYBRID
    settings.recall.max_pack_tokens = 120           # the store does not fit: ranked, and a second pass asked
    result = recall(layers, "alpha lesson for step 3", settings=settings, hot=False, record_session=False)
    assert result.trace.get("second_pass"), "the second pass ran"
    assert len(made) == 2                               # both passes ranked densely ...
    assert len(opened) == 1                             # ... against one table, read once
    assert store.index.missing_embeddings(embedder.name, limit=1) == []
