"""The ontology loaders, graph distances and the ``ontology`` similarity, on real files."""

from __future__ import annotations

import csv
import hashlib
import json
import pickle
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from pydantic import ValidationError
from scipy.sparse import csgraph

from evalkit.errors import ConfigError, DataError
from evalkit.testing import check_similarity
from evalkit_ontology.ontology import (
    Ontology,
    OntologySimilarity,
    load_ontology,
    read_ontology,
    similarity_from_distance,
)

ROOT = Path(__file__).resolve().parent.parent
AUDIOSET = ROOT / "configs" / "data" / "audioset"
ONTOLOGY = AUDIOSET / "ontology.json"
CLASSES = AUDIOSET / "class_labels_indices.csv"

# A hand-drawn ontology: two branches joined by a node with two parents (b1 under b and a2).
#
#         r
#        / \
#       a   b
#      / \   \
#    a1   a2  b1
#          \__/
EDGES = [("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2"), ("b", "b1"), ("a2", "b1")]
NODES = ["r", "a", "b", "a1", "a2", "b1"]
NAMES = {"r": "Root", "a": "Animal", "b": "Bird", "a1": "Ant", "a2": "Ape", "b1": "Blue jay"}
# Shortest undirected paths, worked out by hand from the drawing (e.g. a1-a-a2-b1 = 3, shorter
# than a1-a-r-b-b1 = 4; b-b1-a2 = 2).
HAND = np.array([
    #  r  a  b  a1 a2 b1
    [0, 1, 1, 2, 2, 2],  # r
    [1, 0, 2, 1, 1, 2],  # a
    [1, 2, 0, 3, 2, 1],  # b
    [2, 1, 3, 0, 2, 3],  # a1
    [2, 1, 2, 2, 0, 1],  # a2
    [2, 2, 1, 3, 1, 0],  # b1
], dtype=float)


@pytest.fixture(autouse=True)
def _fresh_loader_cache():
    load_ontology.cache_clear()
    yield
    load_ontology.cache_clear()


@pytest.fixture
def count_shortest_path(monkeypatch):
    """Counts the calls to scipy's all-pairs routine (still computing the real thing)."""
    calls = []
    real = csgraph.shortest_path

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(csgraph, "shortest_path", counting)
    return calls


def classes() -> list[dict[str, str]]:
    with CLASSES.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def similarity(path: Path, **params) -> OntologySimilarity:
    return OntologySimilarity(OntologySimilarity.Params(ontology=path, **params))


# -- hand-drawn ontology in every format -----------------------------------------------------


def write_edgelist(folder: Path) -> Path:
    path = folder / "tiny.edgelist"
    lines = ["# parent child"] + [f"{p} {c}" for p, c in EDGES]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_tsv(folder: Path) -> Path:
    """Tab-separated, so the ids here are the names (with spaces)."""
    path = folder / "tiny.tsv"
    path.write_text("".join(f"{NAMES[p]}\t{NAMES[c]}\n" for p, c in EDGES), encoding="utf-8")
    return path


def tiny_graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    graph.add_nodes_from((n, {"name": NAMES[n]}) for n in NODES)
    graph.add_edges_from(EDGES)
    return graph


def write_graphml(folder: Path) -> Path:
    path = folder / "tiny.graphml"
    nx.write_graphml(tiny_graph(), path)
    return path


def write_node_link(folder: Path, edges_key: str = "links") -> Path:
    path = folder / f"tiny_{edges_key}.json"
    data = {
        "directed": True,
        "multigraph": False,
        "graph": {},
        "nodes": [{"id": n, "name": NAMES[n]} for n in NODES],
        edges_key: [{"source": p, "target": c} for p, c in EDGES],
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def write_audioset(folder: Path) -> Path:
    path = folder / "tiny_audioset.json"
    children = {n: [c for p, c in EDGES if p == n] for n in NODES}
    path.write_text(json.dumps([{"id": n, "name": NAMES[n], "child_ids": children[n]} for n in NODES]))
    return path


WRITERS = {
    "edgelist": write_edgelist,
    "graphml": write_graphml,
    "node_link_links": write_node_link,
    "node_link_edges": lambda folder: write_node_link(folder, "edges"),
    "audioset": write_audioset,
}
FORMAT_OF = {"node_link_links": "node_link", "node_link_edges": "node_link"}
FORMAT_OF.update({kind: kind for kind in ("edgelist", "graphml", "audioset")})


@pytest.mark.parametrize("kind", list(WRITERS))
def test_tiny_ontology_in_each_format_gives_the_hand_derived_hop_counts(tmp_path, kind):
    ontology = load_ontology(WRITERS[kind](tmp_path))
    assert ontology.format == FORMAT_OF[kind]
    assert len(ontology) == 6
    assert ontology.distances(NODES).tolist() == HAND.tolist()
    if kind != "edgelist":  # the others carry names
        names = [NAMES[n] for n in NODES]
        assert ontology.distances(names).tolist() == HAND.tolist()
    assert ontology.max_finite_distance == 3


def test_tab_separated_edge_list_keeps_spaces_in_ids(tmp_path):
    ontology = load_ontology(write_tsv(tmp_path))
    names = [NAMES[n] for n in NODES]
    assert ontology.distances(names).tolist() == HAND.tolist()
    assert "Blue jay" in ontology


def test_distances_between_two_label_lists(tmp_path):
    ontology = load_ontology(write_edgelist(tmp_path))
    got = ontology.distances(["a1", "b"], ["b1", "r", "a1"])
    assert got.tolist() == [[3, 2, 0], [1, 1, 3]]


def test_explicit_format_and_unknown_suffix(tmp_path):
    path = write_edgelist(tmp_path).rename(tmp_path / "tiny.pairs")
    with pytest.raises(ConfigError, match="cannot tell the format.*format: audioset, edgelist"):
        load_ontology(path)
    assert load_ontology(path, format="edgelist").distances(NODES).tolist() == HAND.tolist()


def test_integer_node_ids_are_found_by_int_and_by_text(tmp_path):
    path = tmp_path / "ints.json"
    path.write_text(json.dumps({"nodes": [{"id": 1}, {"id": 2}, {"id": 3}],
                                "links": [{"source": 1, "target": 2}, {"source": 2, "target": 3}]}))
    ontology = load_ontology(path)
    assert ontology.distances([1, "3"], [3, np.int64(1)]).tolist() == [[2, 0], [0, 2]]


# -- the bundled AudioSet ontology ------------------------------------------------------------


def test_bundled_audioset_files_are_the_documented_copies():
    # ../shared/data/README.md and configs/data/audioset/LICENSE.md give these hashes
    assert hashlib.sha256(ONTOLOGY.read_bytes()).hexdigest() == (
        "9c685f4403eecc3ca9be37fd7285cf212feaaea6ff7229d3e7ca89e0d1f2d15d"
    )
    assert hashlib.sha256(CLASSES.read_bytes()).hexdigest() == (
        "cdd1049833c4b86127c2773ac0d14a2754b6a6d0d1798002ed5c66e699708429"
    )
    assert "CC BY-SA 4.0" in (AUDIOSET / "LICENSE.md").read_text(encoding="utf-8")


def test_audioset_distances_over_the_527_classes():
    ontology = load_ontology(ONTOLOGY)
    assert ontology.format == "audioset"
    assert len(ontology) == 632
    rows = classes()
    ids = [r["mid"] for r in rows]
    assert len(ids) == 527 and ids[0] == "/m/09x0r" and ids[-1] == "/m/07hvw1"
    d = ontology.distances(ids)
    assert d.shape == (527, 527)
    assert np.array_equal(d, d.T)
    assert np.all(np.diag(d) == 0)
    off = d[~np.eye(527, dtype=bool)]
    assert off.min() == 1 and off.max() == 21  # D_max = 21 (Liu et al.'s reference matrix)
    assert ontology.max_finite_distance_among(ids) == 21
    assert ontology.max_finite_distance == 21  # the whole graph (632 nodes) too
    speech = next(r["mid"] for r in rows if r["display_name"] == "Speech")
    animal = next(r["mid"] for r in rows if r["display_name"] == "Animal")
    assert (speech, animal) == ("/m/09x0r", "/m/0jbk")
    assert d[ids.index(speech), ids.index(animal)] == 9


def test_audioset_labels_by_id_and_by_name_are_the_same():
    ontology = load_ontology(ONTOLOGY)
    rows = classes()
    ids = [r["mid"] for r in rows]
    names = [r["display_name"] for r in rows]
    assert np.array_equal(ontology.resolve(ids), ontology.resolve(names))
    mixed = [name if k % 2 else mid for k, (mid, name) in enumerate(zip(ids, names))]
    assert np.array_equal(ontology.distances(mixed, names), ontology.distances(ids))
    sim = similarity(ONTOLOGY)
    assert sim.matrix(["Speech", "/m/09x0r"], ["/m/09x0r", "Speech"]).tolist() == [[1, 1], [1, 1]]


def test_unknown_label_suggests_close_names_and_says_where():
    ontology = load_ontology(ONTOLOGY)
    with pytest.raises(DataError) as error:
        ontology.resolve(["Speech", "Laughtr", "/m/09x0"], where="classes")
    message = str(error.value)
    assert message.startswith("classes: 2 labels not usable in ontology")
    assert "'Laughtr' — did you mean 'Laughter'" in message
    assert "'/m/09x0' — did you mean '/m/09x0r'" in message
    assert ontology.suggest("laughter")[0] == "Laughter"  # case differs only: first


def test_unknown_and_unusable_labels_through_the_similarity():
    sim = similarity(ONTOLOGY)
    with pytest.raises(DataError, match=r"similarity 'ontology': 3 labels .*'Laughtr' — did you "
                       r"mean 'Laughter'.*\['x'\] \(list\) is not a label.*3\.5 \(float\) is not"):
        sim.matrix(["Laughtr", ["x"], 3.5], ["Dog"])
    with pytest.raises(DataError, match="'Dgo'"):
        sim.pairs(["Dog"], ["Dgo"])


def test_check_lists_every_unknown_label_with_its_samples():
    sim = similarity(ONTOLOGY)
    sim.check({"clip1": ["Speech", "Dog"], "clip2": ["/m/0jbk"]})  # all known: no error
    with pytest.raises(DataError) as error:
        sim.check({"clip1": ["Laughtr", "Dog"], "clip2": ["Laughtr", "Barkk"], "clip3": [["x"]]})
    message = str(error.value)
    assert message.startswith("similarity 'ontology': 3 labels")
    assert "'Laughtr' (samples clip1, clip2) — did you mean 'Laughter'" in message
    assert "'Barkk' (sample clip2) — did you mean 'Bark'" in message
    assert "['x'] (list) is not a label" in message


def test_ambiguous_names_must_be_given_by_id_and_ids_win_over_names(tmp_path):
    path = tmp_path / "dup.json"
    path.write_text(json.dumps([
        {"id": "m1", "name": "Bass", "child_ids": ["m2", "m3"]},
        {"id": "m2", "name": "Bass", "child_ids": []},
        {"id": "m3", "name": "m2", "child_ids": []},  # a name that is another node's id
    ]))
    ontology = load_ontology(path)
    ambiguous = r"'Bass' is the name of 2 nodes \(ids 'm1', 'm2'\): use one of the ids"
    with pytest.raises(DataError, match=ambiguous):
        ontology.resolve(["Bass"])
    assert ontology.resolve(["m1", "m2", "m3"]).tolist() == [0, 1, 2]
    assert ontology.resolve(["m2"]).tolist() == [1]  # the id, not node m3's name


# -- disconnected graphs ----------------------------------------------------------------------


def test_disconnected_graph_gives_infinite_distance_and_similarity_zero(tmp_path):
    path = tmp_path / "two_parts.txt"
    path.write_text("r a\na b\nx y\nlonely\n")  # a line with one field: a node without edges
    ontology = load_ontology(path)
    assert len(ontology) == 6
    d = ontology.distances(["r", "b", "x", "lonely"])
    assert d.tolist() == [
        [0, 2, np.inf, np.inf],
        [2, 0, np.inf, np.inf],
        [np.inf, np.inf, 0, np.inf],
        [np.inf, np.inf, np.inf, 0],
    ]
    assert ontology.max_finite_distance == 2
    for function in ("linear", "exponential", "inverse", "threshold"):
        m = similarity(path, function=function).matrix(["r", "x", "lonely"], ["y", "b", "lonely"])
        assert m[0, 0] == 0 and m[1, 1] == 0 and m[0, 2] == 0 and m[1, 0] > 0
        assert m[2, 2] == 1  # the same node, even without edges
    check_similarity(similarity(path), ["r", "a", "b", "x", "y", "lonely", "r"])


def test_graph_without_edges_linear_is_exact_matching(tmp_path):
    path = tmp_path / "nodes.txt"
    path.write_text("p\nq\n")
    sim = similarity(path)
    assert sim.ontology.max_finite_distance == 0
    assert sim.matrix(["p", "q"], ["p", "q"]).tolist() == [[1, 0], [0, 1]]


# -- the similarity functions -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"function": "linear"}, 1 - HAND / 3),  # D_max of the tiny graph is 3
        ({}, 1 - HAND / 3),  # linear is the default
        ({"function": "exponential"}, np.exp(-HAND)),
        ({"function": "exponential", "scale": 2.0}, np.exp(-HAND / 2)),
        ({"function": "inverse"}, 1 / (1 + HAND)),
        ({"function": "threshold"}, (HAND <= 1).astype(float)),
        ({"function": "threshold", "max_distance": 2}, (HAND <= 2).astype(float)),
        ({"function": "threshold", "max_distance": 0}, np.eye(6)),
    ],
)
def test_each_similarity_function_on_hand_derived_distances(tmp_path, params, expected):
    sim = similarity(write_graphml(tmp_path), **params)
    got = sim.matrix(NODES, NODES)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-15)
    assert got.dtype == np.float64 and got.flags.writeable
    left = [x for x in NODES for _ in NODES]
    right = [y for _ in NODES for y in NODES]
    np.testing.assert_array_equal(sim.pairs(left, right), got.ravel())  # pairs == matrix


def test_similarity_from_distance_maps_infinity_to_zero():
    d = np.array([0.0, 1.0, 4.0, np.inf])
    # linear and inverse: one correctly rounded division each, so the bits of 0.75 and 0.2
    assert similarity_from_distance(d, "linear", d_max=4).tolist() == [1, 0.75, 0, 0]
    assert similarity_from_distance(d, "inverse", d_max=4).tolist() == [1, 0.5, 0.2, 0]
    # exp is not correctly rounded, and numpy picks its loop by CPU and array: equal to rounding
    np.testing.assert_allclose(
        similarity_from_distance(d, "exponential", d_max=4, scale=1), [1, np.exp(-1), np.exp(-4), 0], rtol=1e-12, atol=0
    )
    assert similarity_from_distance(d, "threshold", d_max=4, max_distance=1).tolist() == [1, 1, 0, 0]


def test_matrix_equals_pairs_and_check_similarity_on_audioset():
    sim = similarity(ONTOLOGY, function="exponential", scale=3.0)
    items = ["Speech", "Laughter", "Giggle", "/m/0jbk", "Dog", "Bark", "Field recording",
             "Music", "Speech", "/m/09x0r"]
    check_similarity(sim, items)
    rng = np.random.default_rng(5)
    names = [r["display_name"] for r in classes()]
    xs = [names[i] for i in rng.integers(0, 527, 300)]
    ys = [names[i] for i in rng.integers(0, 527, 300)]
    m = sim.matrix(xs, ys)
    assert m.shape == (300, 300)
    np.testing.assert_array_equal(sim.pairs(xs, ys), np.diag(m))
    assert sim.matrix([], ys).shape == (0, 300) and sim.pairs([], []).shape == (0,)
    with pytest.raises(ValueError, match="one length"):
        sim.pairs(["Dog"], [])


@pytest.mark.parametrize("function", ["linear", "exponential", "inverse", "threshold"])
def test_check_similarity_passes_for_every_function(tmp_path, function):
    check_similarity(similarity(write_node_link(tmp_path), function=function),
                     NODES + ["Blue jay", "a1", "Root"])


# -- parameters -------------------------------------------------------------------------------


def test_params_are_checked(tmp_path):
    path = write_edgelist(tmp_path)
    with pytest.raises(ValidationError, match="`scale` is only used with function: exponential"):
        OntologySimilarity.Params(ontology=path, scale=2.0)
    with pytest.raises(ValidationError, match="`max_distance` is only used with function: threshold"):
        OntologySimilarity.Params(ontology=path, function="linear", max_distance=2)
    with pytest.raises(ValidationError):
        OntologySimilarity.Params(ontology=path, function="exponential", scale=0)
    with pytest.raises(ValidationError):
        OntologySimilarity.Params(ontology=path, function="cosine")
    with pytest.raises(ValidationError, match="tau"):
        OntologySimilarity.Params(ontology=path, tau=1.0)  # extra="forbid"
    with pytest.raises(ValidationError, match="ontology"):
        OntologySimilarity.Params()


def test_ontology_path_is_relative_to_the_config_folder(tmp_path):
    write_edgelist(tmp_path)
    params = OntologySimilarity.Params.model_validate(
        {"ontology": "tiny.edgelist"}, context={"base": tmp_path}
    )
    assert params.ontology == tmp_path / "tiny.edgelist"
    assert OntologySimilarity(params).matrix(["a1"], ["b1"]).tolist() == [[0.0]]


def test_missing_file_and_malformed_files(tmp_path):
    with pytest.raises(ConfigError, match="ontology file .*nope.json' does not exist"):
        similarity(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"id": "a", "child_ids": ["b"]}]))
    with pytest.raises(DataError, match=r"1 child_ids entries name no node: 'b' \(child of 'a'\)"):
        load_ontology(bad)
    bad.write_text(json.dumps({"id": "a"}))
    with pytest.raises(DataError, match="either a list of objects with 'id' and 'child_ids'"):
        load_ontology(bad)
    bad.write_text("{not json")
    with pytest.raises(DataError, match="not valid JSON"):
        load_ontology(bad)
    graphml = tmp_path / "bad.graphml"
    graphml.write_text("<graphml><graph>")
    with pytest.raises(DataError, match="not a readable GraphML file"):
        load_ontology(graphml)
    dup = tmp_path / "dup.json"
    dup.write_text(json.dumps([{"id": "a", "child_ids": []}, {"id": "a", "child_ids": []}]))
    with pytest.raises(DataError, match="node id 'a' occurs more than once"):
        load_ontology(dup)


# -- computed once, and cached --------------------------------------------------------------


def test_distances_are_computed_once_per_ontology(tmp_path, count_shortest_path):
    path = write_graphml(tmp_path)
    first = similarity(path)
    second = similarity(path, function="inverse")
    assert first.ontology is second.ontology is load_ontology(path)  # one loaded ontology
    for sim in (first, second):
        sim.matrix(NODES, NODES)
        sim.pairs(NODES, NODES[::-1])
    first.ontology.distances(["a1"], ["b1"])
    assert first.ontology.max_finite_distance == 3
    assert len(count_shortest_path) == 1


def test_loader_cache_notices_a_rewritten_file(tmp_path):
    path = write_edgelist(tmp_path)
    before = load_ontology(path)
    assert load_ontology(str(path)) is before
    path.write_text("r a\na b\nb c\n")
    after = load_ontology(path)
    assert after is not before and len(after) == 4


def test_disk_cache_is_keyed_by_the_file_hash(tmp_path, count_shortest_path):
    cache = tmp_path / "cache"
    # Two files of the same shape (four nodes a b c d, three edges) but different graphs.
    chain, star = tmp_path / "chain.txt", tmp_path / "star.txt"
    chain.write_text("a b\nb c\nc d\n")
    star.write_text("a b\na c\na d\n")
    assert load_ontology(chain, cache_dir=cache).distances(["b", "d"]).tolist() == [[0, 2], [2, 0]]
    assert load_ontology(star, cache_dir=cache).distances(["b", "d"]).tolist() == [[0, 2], [2, 0]]
    assert load_ontology(chain, cache_dir=cache).distances(["a", "d"]).tolist() == [[0, 3], [3, 0]]
    assert load_ontology(star, cache_dir=cache).distances(["a", "d"]).tolist() == [[0, 1], [1, 0]]
    files = sorted(p.name for p in cache.iterdir())
    digests = [hashlib.sha256(p.read_bytes()).hexdigest() for p in (chain, star)]
    assert len(files) == 2 and all(any(d in f for f in files) for d in digests)
    assert len(count_shortest_path) == 2

    # The same bytes at another path: read from the disk cache, not computed again.
    load_ontology.cache_clear()
    copy = tmp_path / "elsewhere" / "chain copy.txt"
    copy.parent.mkdir()
    copy.write_bytes(chain.read_bytes())
    ontology = load_ontology(copy, cache_dir=cache)
    assert ontology.distances(["a", "d"]).tolist() == [[0, 3], [3, 0]]
    assert len(count_shortest_path) == 2
    assert len(list(cache.iterdir())) == 2

    # Without cache_dir nothing is written; a damaged cache file is recomputed with a warning.
    load_ontology.cache_clear()
    load_ontology(chain).all_pairs()
    assert len(count_shortest_path) == 3
    cached = cache / next(f for f in files if digests[0] in f)
    cached.write_bytes(b"not an npz")
    with pytest.warns(RuntimeWarning, match="ignoring unreadable cache"):
        assert load_ontology(chain, cache_dir=cache).distances(["a", "d"]).tolist() == [[0, 3], [3, 0]]
    assert len(count_shortest_path) == 4


def test_similarity_cache_dir_param(tmp_path, count_shortest_path):
    path = write_audioset(tmp_path)
    sim = similarity(path, cache_dir=tmp_path / "cache")
    sim.matrix(NODES, NODES)
    assert [p.suffix for p in (tmp_path / "cache").iterdir()] == [".npz"]
    load_ontology.cache_clear()
    again = similarity(path, cache_dir=tmp_path / "cache")
    assert again.ontology is not sim.ontology
    np.testing.assert_array_equal(again.matrix(NODES, NODES), sim.matrix(NODES, NODES))
    assert len(count_shortest_path) == 1


def test_pickled_similarity_reloads_its_ontology(tmp_path):
    sim = similarity(write_edgelist(tmp_path), function="inverse")
    sim.matrix(NODES, NODES)
    copy = pickle.loads(pickle.dumps(sim))
    np.testing.assert_array_equal(copy.matrix(NODES, NODES), 1 / (1 + HAND))  # one correctly rounded division


def test_ontology_from_a_networkx_graph():
    ontology = Ontology.from_graph(tiny_graph())
    assert ontology.distances(NODES).tolist() == HAND.tolist()
    assert ontology.cache_path() is None  # no file hash: memory only
    assert sorted(ontology.graph.edges) == sorted(EDGES)
    assert ontology.graph.nodes["b1"]["name"] == "Blue jay"


def test_read_ontology_is_not_cached(tmp_path):
    path = write_edgelist(tmp_path)
    assert read_ontology(path) is not read_ontology(path)


def test_similarities_that_cannot_fit_are_refused_before_the_distances_are_computed(tmp_path, monkeypatch):
    """Room for the distances (2 x 8 n^2 bytes) but not for them and the similarity table with its
    temporaries (6 x 8 n^2): refused before the all-pairs work, naming both, not after it."""
    n = len(NODES)
    monkeypatch.setattr("evalkit.budget.available_memory", lambda: 3 * 8 * n * n)
    sim = similarity(write_graphml(tmp_path))
    from evalkit.budget import human

    with pytest.raises(DataError, match=rf"the distances and similarities between its {n} nodes \({n} x {n}\) would "
                                        rf"take {human(6 * 8 * n * n)} of memory, but {human(3 * 8 * n * n)} is available"):
        sim.table()
    assert sim.ontology._distances is None  # nothing computed
