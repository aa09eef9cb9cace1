"""Ontologies (label hierarchies) and their graph distances, as a similarity between labels.

An :class:`Ontology` is a graph of nodes, each with an id and optionally a name, read from:

- the **AudioSet ontology JSON** (``format: audioset``): a JSON list of objects with ``id``,
  ``name`` and ``child_ids``, one edge per ``child_ids`` entry (all nodes are kept, abstract and
  blacklisted ones included, and no virtual root is added);
- the graph formats networkx reads: an **edge list** (``edgelist``: ``.edgelist``, ``.txt``,
  ``.tsv``; one ``parent child`` pair per line), **GraphML** (``graphml``: ``.graphml``) and
  **node-link JSON** (``node_link``: a JSON object with ``nodes`` and ``links`` or ``edges``).

``format: auto`` (the default) goes by the suffix, and for ``.json`` by the content: a list of
objects with ``child_ids`` is AudioSet, an object with ``nodes`` is node-link.

**Distances.** The distance between two nodes is the paper's (Liu et al. 2023): the smallest
number of edges between them, with the graph taken as **undirected** (a parent and its child are
1 apart, two siblings 2). Paths may pass through any node of the graph, including nodes that
are not classes of the data. All-pairs distances are computed once per ontology with scipy's
``csgraph.shortest_path`` (breadth-first in C; 25 ms for AudioSet's 632 nodes) and kept in
memory; with ``cache_dir`` they are also stored on disk, keyed by the sha256 of the ontology
file's bytes. Nodes in different connected components are an **infinite** distance apart
(``np.inf``), and every similarity function maps that to 0. The all-pairs matrix takes
8·n² bytes (3.2 MB for AudioSet, 800 MB for 10,000 nodes).

**Labels** are node ids or node names. An id always wins over a name; a name shared by several
nodes is ambiguous and cannot be used (the error says which ids to use instead). An integer
label is looked up as its decimal text (node ids are kept as text). An unknown label is a
:class:`~evalkit.errors.DataError` that lists it, where it occurs and the close ids and names.

**The ``ontology`` similarity** maps the distance d of two labels to [0, 1] with ``function``:

- ``linear``: 1 − d / D_max, where D_max is the ontology's largest finite distance between any
  two of its nodes (:attr:`Ontology.max_finite_distance`; 21 for AudioSet). D_max is fixed by
  the ontology, not by the labels at hand, so a pair's similarity never depends on which other
  labels are being compared. (If the graph has no edges, D_max = 0 and linear is 1 for d = 0,
  else 0.)
- ``exponential``: exp(−d / ``scale``) (the paper's τ);
- ``inverse``: 1 / (1 + d);
- ``threshold``: 1 if d ≤ ``max_distance`` (the paper's λ), else 0.

Every function gives 1 for d = 0 (the same node, whether named by id or by name) and 0 for an
infinite distance.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import inspect
import io
import os
import tempfile
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from evalkit.plugin import Array, BaseComponent, ConfigError, ConfigPath, DataError, check_memory, parse_json, reading

if TYPE_CHECKING:
    import networkx as nx

# networkx and scipy are imported where a graph is read or distances computed, not here: the
# registry imports every plugin (``evalkit plugins``), and they would double its start-up time.

Format = Literal["audioset", "edgelist", "graphml", "node_link"]

FORMATS: dict[str, str] = {
    "audioset": "AudioSet ontology JSON (a list of objects with id, name, child_ids)",
    "edgelist": "edge list (.edgelist, .txt, .tsv: one 'parent child' pair per line)",
    "graphml": "GraphML (.graphml)",
    "node_link": "node-link JSON (an object with 'nodes' and 'links' or 'edges')",
}

#: file suffix -> format, for ``format: auto`` (``.json`` is told apart by its content)
SUFFIXES: dict[str, Format] = {
    ".edgelist": "edgelist",
    ".txt": "edgelist",
    ".tsv": "edgelist",
    ".graphml": "graphml",
}

#: node attributes read as a node's name from GraphML and node-link files, in this order
NAME_ATTRIBUTES = ("name", "label")

#: bump when the on-disk cache layout (or the graph a file is read as) changes
CACHE_VERSION = 1

#: ontologies kept loaded by :func:`load_ontology`
LOAD_CACHE_SIZE = 8

#: unknown labels listed (with suggestions) in one error message
MAX_LISTED = 20


# ---------------------------------------------------------------------------------------------
# The ontology
# ---------------------------------------------------------------------------------------------


class Ontology:
    """A label graph: node ids, optional names, and hop-count distances (undirected).

    Build one with :func:`load_ontology` (cached) or :func:`read_ontology` from a file, or
    directly from ids and (parent, child) edges, or with :meth:`from_graph` from a networkx
    graph.

    Args:
        ids: the node ids (converted to text; must be unique).
        edges: (parent, child) pairs of ids. Direction is kept in :attr:`graph` but ignored by
            distances.
        names: a name per node (``None`` or ``""`` for none), in the order of ``ids``.
        source: where the ontology came from, for messages (a file path).
        sha256: the hash of the file's bytes; with ``cache_dir``, the key of the disk cache.
        format: the file format, also part of the disk cache key.
        cache_dir: a folder for the all-pairs distances as ``.npz`` files (``None``: memory
            only). Used only when ``sha256`` is known, i.e. for ontologies read from a file.
    """

    def __init__(
        self,
        ids: Sequence[Any],
        edges: Iterable[tuple[Any, Any]] = (),
        names: Sequence[str | None] | None = None,
        *,
        source: str = "<memory>",
        sha256: str | None = None,
        format: str | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.source = source
        self.sha256 = sha256
        self.format = format
        self.cache_dir = None if cache_dir is None else Path(cache_dir)
        self.ids: tuple[str, ...] = tuple(str(i) for i in ids)
        index: dict[str, int] = {}
        for i, node in enumerate(self.ids):
            if index.setdefault(node, i) != i:
                raise DataError(f"ontology {source!r}: node id {node!r} occurs more than once")
        if names is None:
            names = [None] * len(self.ids)
        elif len(names) != len(self.ids):
            raise ValueError(f"{len(names)} names for {len(self.ids)} nodes")
        self.names: tuple[str | None, ...] = tuple(None if n in (None, "") else str(n) for n in names)

        parents, children = [], []
        for parent, child in edges:
            for end in (parent, child):
                if str(end) not in index:
                    raise DataError(
                        f"ontology {source!r}: the edge ({parent!r}, {child!r}) names {end!r}, "
                        "which is not a node"
                    )
            parents.append(index[str(parent)])
            children.append(index[str(child)])
        self._parents = np.asarray(parents, dtype=np.intp)
        self._children = np.asarray(children, dtype=np.intp)

        # label -> node: ids first, then the names no other node shares and no id shadows
        by_name: dict[str, list[int]] = {}
        for i, name in enumerate(self.names):
            if name is not None:
                by_name.setdefault(name, []).append(i)
        self.ambiguous: dict[str, tuple[str, ...]] = {}
        self._lookup: dict[str, int] = {}
        for name, nodes in by_name.items():
            if name in index:
                continue
            if len(nodes) == 1:
                self._lookup[name] = nodes[0]
            else:
                self.ambiguous[name] = tuple(self.ids[i] for i in nodes)
        self._lookup.update(index)
        self._distances: np.ndarray | None = None
        self._max_finite: float | None = None
        self._graph: nx.DiGraph | None = None

    @classmethod
    def from_graph(cls, graph: nx.Graph, **kwargs: Any) -> Ontology:
        """An ontology from a networkx graph: its nodes (names from a ``name`` or ``label``
        attribute) and edges (u, v) as (parent, child). ``kwargs`` go to the constructor.
        """
        nodes = list(graph.nodes)
        ids = [str(n) for n in nodes]
        if len(set(ids)) != len(ids):
            raise DataError(
                f"ontology {kwargs.get('source', '<memory>')!r}: node ids that differ only in "
                "type (e.g. 1 and '1') are the same label"
            )
        names = []
        for node in nodes:
            attrs = graph.nodes[node]
            name = next((attrs[a] for a in NAME_ATTRIBUTES if attrs.get(a) not in (None, "")), None)
            names.append(None if name is None else str(name))
        edges = ((str(u), str(v)) for u, v in graph.edges() if u != v)
        return cls(ids, edges, names, **kwargs)

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, label: Any) -> bool:
        return self._index(label) >= 0

    def __repr__(self) -> str:
        return f"Ontology({self.source!r}, {len(self)} nodes, {len(self._parents)} edges)"

    @property
    def edges(self) -> list[tuple[str, str]]:
        """The (parent, child) id pairs, in file order."""
        return [(self.ids[p], self.ids[c]) for p, c in zip(self._parents, self._children)]

    @property
    def graph(self) -> nx.DiGraph:
        """The ontology as a networkx DiGraph (parent → child; nodes keyed by id, with ``name``)."""
        if self._graph is None:
            import networkx as nx

            graph = nx.DiGraph()
            graph.add_nodes_from(
                (node, {} if name is None else {"name": name})
                for node, name in zip(self.ids, self.names)
            )
            graph.add_edges_from(self.edges)
            self._graph = graph
        return self._graph

    # -- labels --------------------------------------------------------------------------------

    def _index(self, label: Any) -> int:
        """The node of one label, or -1 (unknown, ambiguous, or not a usable label)."""
        if isinstance(label, (int, np.integer)) and not isinstance(label, (bool, np.bool_)):
            label = str(int(label))
        try:
            return self._lookup.get(label, -1)
        except TypeError:  # unhashable
            return -1

    def resolve(self, labels: Sequence[Any], where: str = "") -> np.ndarray:
        """The node indices (into :attr:`ids`) of ``labels`` (ids or names), as an intp array.

        Raises:
            DataError: listing every unknown or ambiguous label with close ids and names,
                prefixed with ``where``.
        """
        if isinstance(labels, str):
            raise TypeError(f"resolve() takes a list of labels, not the string {labels!r}")
        if not isinstance(labels, (Sequence, np.ndarray)):
            labels = list(labels)
        get = self._lookup.get
        try:
            out = np.fromiter((get(label, -1) for label in labels), dtype=np.intp, count=len(labels))
        except TypeError:  # an unhashable label; the slow path reports it
            out = np.fromiter((self._index(label) for label in labels), dtype=np.intp, count=len(labels))
        missing = np.flatnonzero(out < 0)
        if missing.size:
            for i in missing.tolist():  # integers are looked up as text
                out[i] = self._index(labels[i])
            missing = np.flatnonzero(out < 0)
            if missing.size:
                bad: dict[Any, list[str]] = {}
                for i in missing.tolist():
                    bad.setdefault(_key(labels[i]), [])
                raise self.label_error(bad, where)
        return out

    def suggest(self, label: Any, n: int = 3) -> list[str]:
        """Up to ``n`` ids or names close to ``label`` (difflib), the closest first."""
        text = str(label)
        candidates = list(self._lookup)
        close = difflib.get_close_matches(text, candidates, n=n, cutoff=0.6)
        folded = [c for c in candidates if c.casefold() == text.casefold() and c != text]
        return list(dict.fromkeys(folded + close))[:n]

    def label_error(self, labels: Mapping[Any, Sequence[str]], where: str = "") -> DataError:
        """The error for unknown or ambiguous ``labels``, each with the samples it occurs in
        (possibly none) and close ids or names."""
        parts = []
        for label, samples in list(labels.items())[:MAX_LISTED]:
            text = repr(label)
            if isinstance(label, str) and label in self.ambiguous:
                text += f" is the name of {len(self.ambiguous[label])} nodes (ids " + ", ".join(
                    repr(i) for i in self.ambiguous[label]
                ) + "): use one of the ids"
            elif not isinstance(label, (str, int, np.integer)):
                kind = type(label.value if isinstance(label, _Opaque) else label).__name__
                text += f" ({kind}) is not a label: use a node id or name (text)"
            if samples:
                samples = list(samples)
                shown = ", ".join(str(s) for s in samples[:5])
                more = f" and {len(samples) - 5} more" if len(samples) > 5 else ""
                text += f" (sample{'s' if len(samples) > 1 else ''} {shown}{more})"
            if not (isinstance(label, str) and label in self.ambiguous):
                close = self.suggest(label)
                if close:
                    text += " — did you mean " + " or ".join(repr(c) for c in close) + "?"
            parts.append(text)
        count = len(labels)
        if count > MAX_LISTED:
            parts.append(f"... and {count - MAX_LISTED} more")
        prefix = f"{where}: " if where else ""
        return DataError(
            f"{prefix}{count} label{'s' if count != 1 else ''} not usable in ontology "
            f"{self.source!r} ({len(self)} nodes; a label is a node id, or a node name that no "
            "other node has): " + "; ".join(parts)
        )

    # -- distances -----------------------------------------------------------------------------

    def check_distances_fit(self) -> None:
        """Refuse an ontology whose all-pairs distances cannot fit (scipy's result, then this
        one), before minutes of work, not after."""
        n = len(self)
        check_memory(2 * 8 * n * n, self.source, f"the distances between its {n:,} nodes ({n:,} x {n:,} float64)")

    def all_pairs(self) -> np.ndarray:
        """The (n, n) float64 hop counts between all nodes (read-only; ``inf`` when
        disconnected), computed at the first call and then kept (and cached on disk with
        ``cache_dir``)."""
        if self._distances is None:
            self.check_distances_fit()
            distances = self._read_cache()
            if distances is None:
                distances = self._compute()
                self._write_cache(distances)
            distances.flags.writeable = False
            self._distances = distances
        return self._distances

    def _compute(self) -> np.ndarray:
        from scipy import sparse
        from scipy.sparse import csgraph

        n = len(self)
        adjacency = sparse.csr_array(
            (np.ones(len(self._parents)), (self._parents, self._children)), shape=(n, n)
        )
        distances = csgraph.shortest_path(adjacency, method="D", unweighted=True, directed=False)
        return np.ascontiguousarray(distances, dtype=np.float64)

    def distances(
        self, labels: Sequence[Any], others: Sequence[Any] | None = None, *, where: str = ""
    ) -> np.ndarray:
        """The (len(labels), len(others)) hop counts between labels (``others`` defaults to
        ``labels``): a new float64 array, ``inf`` between disconnected nodes."""
        rows = self.resolve(labels, where)
        cols = rows if others is None else self.resolve(others, where)
        return self.all_pairs()[np.ix_(rows, cols)]

    @property
    def max_finite_distance(self) -> float:
        """D_max: the largest finite distance between any two nodes of the whole graph (0 for
        a graph without edges). The linear similarity divides by it. For the largest distance
        among some labels only (e.g. a class list), see :meth:`max_finite_distance_among`.
        """
        if self._max_finite is None:
            self._max_finite = _max_finite(self.all_pairs())
        return self._max_finite

    def max_finite_distance_among(self, labels: Sequence[Any], where: str = "") -> float:
        """The largest finite distance between two of ``labels`` (0 if none is finite and
        nonzero). For AudioSet's 527 classes it is 21, as for the whole graph."""
        return _max_finite(self.distances(labels, where=where))

    # -- disk cache ----------------------------------------------------------------------------

    def cache_path(self) -> Path | None:
        """The ``.npz`` file of the disk cache: keyed by the sha256 of the file's bytes (and the
        format it is read as), or None without ``cache_dir`` or a file hash."""
        if self.cache_dir is None or self.sha256 is None:
            return None
        return self.cache_dir / f"ontology-{self.sha256}-{self.format}-v{CACHE_VERSION}.npz"

    def _read_cache(self) -> np.ndarray | None:
        path = self.cache_path()
        if path is None or not path.is_file():
            return None
        try:
            with np.load(path, allow_pickle=False) as data:
                ids, distances = data["ids"], data["distances"]
                if distances.shape != (len(self), len(self)) or ids.tolist() != list(self.ids):
                    return None  # not this graph after all: recompute and overwrite
                return distances.astype(np.float64)
        except (OSError, ValueError, KeyError, EOFError) as exc:
            warnings.warn(f"ontology {self.source!r}: ignoring unreadable cache {str(path)!r} ({exc})",
                          RuntimeWarning, stacklevel=3)
            return None

    def _write_cache(self, distances: np.ndarray) -> None:
        path = self.cache_path()
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            try:
                with os.fdopen(handle, "wb") as file:
                    # float32 holds hop counts exactly (up to 2**24) and inf; half the size
                    np.savez(
                        file,
                        ids=np.array(self.ids, dtype=str),
                        distances=distances.astype(np.float32),
                    )
                os.replace(temporary, path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except OSError as exc:
            warnings.warn(f"ontology {self.source!r}: cannot write the distance cache {str(path)!r} "
                          f"({exc}); distances stay in memory only", RuntimeWarning, stacklevel=3)


def _max_finite(distances: np.ndarray) -> float:
    finite = distances[np.isfinite(distances)]
    return float(finite.max()) if finite.size else 0.0


class _Opaque:
    """An unhashable label, so that it can still be listed in an error."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return repr(self.value)


def _key(label: Any) -> Any:
    """``label``, or an :class:`_Opaque` wrapper if it cannot be a dict key."""
    try:
        hash(label)
    except TypeError:
        return _Opaque(label)
    return label


# ---------------------------------------------------------------------------------------------
# Reading files
# ---------------------------------------------------------------------------------------------


def read_ontology(
    path: str | os.PathLike[str],
    *,
    format: Literal["auto"] | Format = "auto",
    cache_dir: str | os.PathLike[str] | None = None,
) -> Ontology:
    """Read an ontology file (not cached: see :func:`load_ontology`).

    Raises:
        ConfigError: the file does not exist, or its format cannot be told from its name.
        DataError: the file is not a valid ontology in that format.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"ontology: cannot read {str(path)!r} ({exc.strerror or exc})") from None
    sha256 = hashlib.sha256(data).hexdigest()
    source = str(path)
    parsed: Any = None
    if format == "auto":
        if path.suffix.lower() == ".json":
            parsed = _json(data, source)
        format = _detect(path, parsed)
    elif format in ("audioset", "node_link"):
        parsed = _json(data, source)
    common = {"source": source, "sha256": sha256, "format": format, "cache_dir": cache_dir}
    if format == "audioset":
        return _audioset(parsed, common)
    if format == "node_link":
        return _node_link(parsed, common)
    if format == "graphml":
        return _graphml(data, common)
    if format == "edgelist":
        return _edgelist(data, tab=path.suffix.lower() == ".tsv", common=common)
    raise ConfigError(f"ontology: unknown format {format!r}; use auto or one of {', '.join(FORMATS)}")


def _detect(path: Path, parsed: Any) -> Format:
    if parsed is not None:
        if isinstance(parsed, list) and parsed and all(isinstance(x, dict) for x in parsed) and any(
            "child_ids" in x for x in parsed
        ):
            return "audioset"
        if isinstance(parsed, dict) and "nodes" in parsed:
            return "node_link"
        raise DataError(
            f"ontology {str(path)!r}: a JSON ontology is either a list of objects with 'id' and "
            "'child_ids' (AudioSet) or an object with 'nodes' and 'links' or 'edges' (node-link); "
            f"this file holds a {type(parsed).__name__}"
            + (" without 'child_ids'" if isinstance(parsed, list) else " without 'nodes'")
        )
    try:
        return SUFFIXES[path.suffix.lower()]
    except KeyError:
        choices = "; ".join(f"{name}: {text}" for name, text in FORMATS.items())
        raise ConfigError(
            f"ontology: cannot tell the format of {str(path)!r} from its suffix "
            f"{path.suffix or '(none)'!r}. Set format: audioset, edgelist, graphml or node_link "
            f"({choices})"
        ) from None


def _json(data: bytes, source: str) -> Any:
    with reading(source):
        return parse_json(data.decode("utf-8-sig"), f"ontology {source!r}")


def _audioset(parsed: Any, common: dict[str, Any]) -> Ontology:
    source = common["source"]
    if not isinstance(parsed, list):
        raise DataError(f"ontology {source!r}: an AudioSet ontology is a JSON list of node objects")
    ids: list[Any] = []
    names: list[str | None] = []
    edges: list[tuple[Any, Any]] = []
    for n, node in enumerate(parsed):
        if not isinstance(node, dict) or not isinstance(node.get("id"), (str, int)):
            raise DataError(f"ontology {source!r}: entry {n} has no 'id' (each entry is an object "
                            "with 'id', 'name' and 'child_ids')")
        children = node.get("child_ids", [])
        if not isinstance(children, list):
            raise DataError(f"ontology {source!r}: 'child_ids' of node {node['id']!r} is not a list")
        ids.append(node["id"])
        names.append(node.get("name"))
        edges.extend((node["id"], child) for child in children)
    known = {str(i) for i in ids}
    unknown = [(parent, child) for parent, child in edges if str(child) not in known]
    if unknown:
        listed = ", ".join(f"{c!r} (child of {p!r})" for p, c in unknown[:5])
        raise DataError(f"ontology {source!r}: {len(unknown)} child_ids entries name no node: {listed}")
    return Ontology(ids, edges, names, **common)


def _node_link(parsed: Any, common: dict[str, Any]) -> Ontology:
    import networkx as nx

    source = common["source"]
    if not isinstance(parsed, dict) or "nodes" not in parsed:
        raise DataError(f"ontology {source!r}: node-link JSON is an object with 'nodes' and 'links'")
    nodes = parsed["nodes"]
    if not isinstance(nodes, list):
        raise DataError(f"ontology {source!r}: 'nodes' is a {type(nodes).__name__}; expected a list of node objects")
    for n, node in enumerate(nodes):  # networkx would number a node without an id silently
        if not isinstance(node, dict) or not isinstance(node.get("id"), (str, int)):
            raise DataError(f"ontology {source!r}: node {n} of 'nodes' has no 'id' (text or a number); give every node one")
    key = "links" if "links" in parsed else "edges"
    # networkx >= 3.4 names the edge key `edges=`, older versions `link=`
    keyword = "edges" if "edges" in inspect.signature(nx.node_link_graph).parameters else "link"
    try:
        graph = nx.node_link_graph(parsed, directed=True, multigraph=False, **{keyword: key})
    except (KeyError, TypeError, ValueError, nx.NetworkXError) as exc:
        raise DataError(
            f"ontology {source!r}: not a node-link graph ({type(exc).__name__}: {exc}); nodes need "
            f"an 'id' and each of '{key}' a 'source' and 'target'"
        ) from None
    declared = {node["id"] for node in nodes}
    undeclared = [n for n in graph.nodes if n not in declared]  # networkx adds a linked node silently
    if undeclared:
        link = next((f" (in {e})" for e in parsed[key] if undeclared[0] in (e["source"], e["target"])), "")
        raise DataError(
            f"ontology {source!r}: {len(undeclared)} node(s) in '{key}' but not in 'nodes', first {undeclared[0]!r}"
            f"{link}; declare every node under 'nodes', or fix the link"
        )
    return Ontology.from_graph(graph, **common)


def _graphml(data: bytes, common: dict[str, Any]) -> Ontology:
    import networkx as nx

    try:
        graph = nx.read_graphml(io.BytesIO(data))
    except Exception as exc:  # XML parse errors, networkx errors
        raise DataError(
            f"ontology {common['source']!r}: not a readable GraphML file "
            f"({type(exc).__name__}: {exc})"
        ) from None
    return Ontology.from_graph(graph, **common)


def _edgelist(data: bytes, *, tab: bool, common: dict[str, Any]) -> Ontology:
    """One ``parent child`` pair per line (tab-separated in ``.tsv``, so ids may hold spaces;
    else separated by white space). ``#`` starts a comment; a line with one field is a node
    without edges; further fields (e.g. weights) are ignored: distances are hop counts."""
    with reading(common["source"]):
        text = data.decode("utf-8-sig")
    nodes: dict[str, None] = {}
    edges = []
    for line in text.splitlines():
        line = line.split("#", 1)[0]
        fields = [f.strip() for f in line.split("\t")] if tab else line.split()
        fields = [f for f in fields[:2] if f]
        nodes.update(dict.fromkeys(fields))
        if len(fields) == 2 and fields[0] != fields[1]:
            edges.append((fields[0], fields[1]))
    if not nodes:
        raise DataError(f"ontology {common['source']!r}: the edge list has no nodes")
    return Ontology(list(nodes), edges, **common)


def load_ontology(
    path: str | os.PathLike[str],
    *,
    format: Literal["auto"] | Format = "auto",
    cache_dir: str | os.PathLike[str] | None = None,
) -> Ontology:
    """The ontology in ``path``, read once per (resolved path, modification time, size, format,
    cache_dir) and shared, with its distances, by everything that loads it.

    Raises:
        ConfigError: the file does not exist or is not a file.
    """
    given = Path(path).expanduser()
    resolved = given.resolve()
    try:
        stat = resolved.stat()
    except OSError:
        stat = None
    if stat is None or not resolved.is_file():
        what = "is a directory, not a file" if resolved.is_dir() else "does not exist"
        shown = "" if str(given) == str(resolved) else f" (resolved to {str(resolved)!r})"
        raise ConfigError(f"ontology file {str(given)!r}{shown} {what}")
    cache = None if cache_dir is None else str(Path(cache_dir).expanduser().resolve())
    return _load_ontology(str(resolved), stat.st_mtime_ns, stat.st_size, format, cache)


@functools.lru_cache(maxsize=LOAD_CACHE_SIZE)
def _load_ontology(path: str, mtime_ns: int, size: int, format: str, cache_dir: str | None) -> Ontology:
    # mtime_ns and size are only part of the key: a rewritten file is read again
    return read_ontology(path, format=format, cache_dir=cache_dir)  # type: ignore[arg-type]


load_ontology.cache_clear = _load_ontology.cache_clear  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------------------------
# The similarity
# ---------------------------------------------------------------------------------------------

Function = Literal["linear", "exponential", "inverse", "threshold"]


def similarity_from_distance(
    distance: np.ndarray,
    function: Function,
    *,
    d_max: float,
    scale: float = 1.0,
    max_distance: float = 1,
) -> np.ndarray:
    """f(d) in [0, 1] for hop counts ``distance`` (``inf`` gives 0): linear 1 − d/d_max,
    exponential exp(−d/scale), inverse 1/(1 + d), threshold 1 if d ≤ max_distance else 0."""
    d = np.asarray(distance, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        if function == "linear":
            sim = 1.0 - d / d_max if d_max > 0 else (d == 0).astype(np.float64)
        elif function == "exponential":
            sim = np.exp(-d / scale)
        elif function == "inverse":
            sim = 1.0 / (1.0 + d)
        elif function == "threshold":
            sim = (d <= max_distance).astype(np.float64)
        else:
            raise ValueError(f"unknown function {function!r}")
    sim = np.where(np.isinf(d), 0.0, sim)
    return np.clip(sim, 0.0, 1.0)


class OntologyFile(BaseModel):
    """The parameters that name an ontology file; shared by every component that reads one."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    ontology: ConfigPath = Field(
        description="The ontology file: AudioSet JSON, an edge list (.edgelist/.txt/.tsv), GraphML "
        "or node-link JSON. A relative path is taken relative to the config file (from Python: "
        "the current directory).",
    )
    format: Literal["auto", "audioset", "edgelist", "graphml", "node_link"] = Field(
        "auto",
        description="auto (by suffix; .json by content), audioset, edgelist, graphml or node_link.",
    )
    cache_dir: ConfigPath | None = Field(
        None,
        description="A folder to keep the all-pairs distances in, as .npz keyed by the sha256 of "
        "the ontology file (default: none, memory only).",
    )

    def load(self) -> Ontology:
        """The ontology, read once per file and shared (see :func:`load_ontology`)."""
        return load_ontology(self.ontology, format=self.format, cache_dir=self.cache_dir)


class OntologyParams(OntologyFile):
    function: Function = Field(
        "linear",
        description="How the hop count d becomes a similarity: linear 1 − d/D_max (D_max: the "
        "ontology's largest finite distance between any two nodes), exponential exp(−d/scale), "
        "inverse 1/(1 + d), threshold 1 if d ≤ max_distance else 0. Disconnected labels: 0.",
    )
    scale: float = Field(
        1.0, gt=0, allow_inf_nan=False,
        description="exponential only: the decay length τ in edges (exp(−d/scale)).",
    )
    max_distance: int | float = Field(
        1, ge=0, allow_inf_nan=False,
        description="threshold only: λ, the largest distance (in edges) that still counts as "
        "similar (1 if d ≤ max_distance, else 0); 0 means the same node only.",
    )

    @model_validator(mode="after")
    def _params_of_the_function(self) -> OntologyParams:
        for param, function in (("scale", "exponential"), ("max_distance", "threshold")):
            if param in self.model_fields_set and self.function != function:
                raise ValueError(
                    f"`{param}` is only used with function: {function}, but function is "
                    f"{self.function!r}; set function: {function} or remove `{param}`"
                )
        return self


class OntologySimilarity(BaseComponent[OntologyParams]):
    """Ontology: similarity of two labels from their distance in a label graph, in [0, 1].

    Parameters: ``ontology`` (the file), ``format``, ``function`` (linear | exponential |
    inverse | threshold), ``scale`` (τ of exponential), ``max_distance`` (λ of threshold) and
    ``cache_dir``. Labels are node ids or unique node names; the distance is the number of
    edges on a shortest path with the graph taken as undirected; labels in different components
    have similarity 0. The similarity over all node pairs is computed once, and ``matrix`` and
    ``pairs`` index it.
    """

    name = "ontology"
    symmetric = True
    Params = OntologyParams

    def __init__(self, params: OntologyParams) -> None:
        super().__init__(params)
        self._ontology: Ontology | None = None
        self._table: np.ndarray | None = None
        self.ontology  # noqa: B018 (load now: a bad file is reported before any work)

    def __repr__(self) -> str:
        given = ", ".join(f"{k}={v!r}" for k, v in self.params.model_dump(exclude_unset=True).items())
        return f"{type(self).__name__}({given})"

    def __getstate__(self) -> dict[str, Any]:
        # Pickled (e.g. to a worker) without the graph: each process loads its own (cached).
        return {**self.__dict__, "_ontology": None, "_table": None}

    @property
    def who(self) -> str:
        return "similarity 'ontology'"

    @property
    def ontology(self) -> Ontology:
        if self._ontology is None:
            self._ontology = self.params.load()
        return self._ontology

    def table(self) -> np.ndarray:
        """The (n, n) similarity between all nodes of the ontology (read-only)."""
        if self._table is None:
            ontology, p = self.ontology, self.params
            n = len(ontology)
            # the table, and the temporaries of similarity_from_distance and max_finite_distance,
            # beside the distances (with scipy's copy, while they are computed): checked before
            # minutes of all-pairs work, not after
            computing = ontology._distances is None
            if computing:
                ontology.check_distances_fit()  # alone first: the message names what cannot fit at all
            check_memory((5 + computing) * 8 * n * n, ontology.source,
                         f"the distances and similarities between its {n:,} nodes ({n:,} x {n:,})")
            distances = ontology.all_pairs()
            table = similarity_from_distance(
                distances, p.function, d_max=ontology.max_finite_distance,
                scale=p.scale, max_distance=p.max_distance,
            )
            table.flags.writeable = False
            self._table = table
        return self._table

    # -- the Similarity protocol ---------------------------------------------------------------

    def check(self, samples: Mapping[Any, Sequence[Any]]) -> None:
        """Reject every label the ontology does not know (or cannot tell apart), listing the
        samples it occurs in and close ids and names."""
        ontology = self.ontology
        known: dict[Any, bool] = {}
        missing: dict[Any, dict[str, None]] = {}
        for sample, items in samples.items():
            for item in items:
                try:
                    ok = known.get(item)
                    if ok is None:
                        ok = known[item] = ontology._index(item) >= 0
                except TypeError:  # unhashable: not a label
                    ok, item = False, _Opaque(item)
                if not ok:
                    missing.setdefault(item, {})[str(sample)] = None
        if missing:
            raise ontology.label_error({k: list(v) for k, v in missing.items()}, self.who)

    def matrix(self, xs: Sequence[Any], ys: Sequence[Any]) -> Array:
        """The (len(xs), len(ys)) similarities, by indexing the all-nodes table."""
        ontology = self.ontology
        rows = ontology.resolve(xs, self.who)
        cols = ontology.resolve(ys, self.who)
        return self.table()[np.ix_(rows, cols)]

    def pairs(self, xs: Sequence[Any], ys: Sequence[Any]) -> Array:
        """Element-wise similarities sim(xs[i], ys[i]), shape (len(xs),)."""
        if len(xs) != len(ys):
            raise ValueError(
                f"{self.who}: pairs() needs lists of one length, got {len(xs)} and {len(ys)}"
            )
        ontology = self.ontology
        return self.table()[ontology.resolve(xs, self.who), ontology.resolve(ys, self.who)]
