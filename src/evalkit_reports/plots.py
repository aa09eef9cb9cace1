"""Figures from tidy rows, for the HTML report and the ``png`` / ``svg`` report writers.

Every figure is a :class:`matplotlib.figure.Figure` made directly on an Agg canvas: nothing here
touches pyplot's global state, so rendering works headless and leaves no figure registered
anywhere. Which figures exist depends on the rows:

- ``heatmap-…``: each set metric over T-norm (rows) × averaging (columns), one figure per
  system, representation and similarity that has at least two T-norms;
- ``bars-…``: systems side by side per metric, one panel per T-norm and averaging, one figure per
  representation (and similarity), with confidence whiskers when rows carry ``ci_low``/``ci_high``;
  with more than MAX_BAR_ROWS component combinations, ``dots`` instead: a dot per system for each
  combination, one panel per metric and averaging;
  ``bars-data-metrics`` does the same for metrics that are not set ratios (KL divergence, mAP…);
- ``classes-…``: per-class values (averaging ``none``), a horizontal bar per class and system,
  one panel per metric, one figure per component combination;
- ``sweep-…``: each metric against the swept value, one line per system and component
  combination, a band for the confidence interval;
- ``levels-…``: a metric per level (OmAP per λ), one line per system, and each system's difference
  to the first system (Liu et al., Figure 3);
- ``agreement``: the matrix of Kendall's τ between the system rankings of the measures;
- ``curve-…``: a curve a data metric reports (the PSD-ROC of ``psds``), one line per system, one
  panel per sweep value;
- ``timeline-…``: with ``per_sample: true`` on event lists, a system's worst files, a panel each,
  each class's reference events above the system's.

Large grids are capped (``MAX_*`` below); what was left out is said in :attr:`Gallery.notes`,
and every value is still in the report's tables.

Output is deterministic: a fixed style (matplotlib's defaults plus :data:`RC`, whatever the user's
matplotlibrc says), fixed sizes and DPI, no timestamps or software versions in the files, and a
fixed hash salt for the ids inside SVG files.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import importlib
import io
import math
import multiprocessing
import os
import re
import signal
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from cycler import cycler

from evalkit.plugin import CurveRow, Measure, Results, Row, agreement_note, atomic_write, level_differences, visible

if TYPE_CHECKING:  # matplotlib (0.5 s to import) is imported where a figure is drawn: not by
    # the gallery, so a run whose figures are drawn by worker processes never imports it itself
    from matplotlib.colors import Colormap
    from matplotlib.figure import Figure

#: Resolution of the image files; a page shows them at DISPLAY_DPI, so they stay sharp on HiDPI.
DPI = 150
DISPLAY_DPI = 100
MAX_HEATMAPS = 12
MAX_BAR_FIGURES = 12
MAX_BAR_ROWS = 4
MAX_BAR_COLUMNS = 4
MAX_SWEEP_FIGURES = 12
MAX_LEVEL_FIGURES = 8
MAX_PANELS = 16
MAX_LINES = 10
MAX_MEASURES = 30
MAX_CLASSES = 40
#: A heatmap panel of at most this many cells has each written in it: every text costs a
#: freetype layout and render (144 of them were a third of tnorms' heatmaps); beyond it the
#: colour bar and the report's tables carry the values, and the caption says so.
MAX_ANNOTATED = 24
MAX_WIDTH = 9.6  # inches: 960 px on the page
#: A 0-1 axis' ticks and their labels, as matplotlib chooses and writes them, fixed (:func:`_unit_axis`).
UNIT_TICKS = np.linspace(0, 1, 6).tolist()
UNIT_LABELS = [f"{v:.1f}" for v in UNIT_TICKS]
#: From this many figures on, they are drawn in worker processes (:func:`images`).
POOL_FIGURES = 2
#: The signals the command answers (evalkit.cli): Ctrl-C and SIGTERM.
STOPPING = {signal.SIGINT, signal.SIGTERM}
PR_SET_PDEATHSIG = 1  # Linux's prctl option: the signal a process gets when its parent dies

#: Okabe & Ito's colour-blind-safe palette (yellow last: it is faint on white).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINESTYLES = ("-", "--", ":", "-.")
HEAT, DIVERGING = "viridis", "RdBu"  # colour maps, missing values grey (_colours)
NONE = "—"

RC = {
    "font.family": "DejaVu Sans",  # shipped with matplotlib: the same glyphs on every machine
    "text.parse_math": False,  # names are shown as written: "$\\frac$" is no formula (nor an error)
    "font.size": 9,
    "axes.titlesize": 9.5,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "legend.title_fontsize": 8.5,
    "legend.frameon": False,
    "figure.titlesize": 11,
    "figure.facecolor": "white",
    "savefig.facecolor": "white",
    "axes.prop_cycle": cycler(color=PALETTE),
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "axes.grid.axis": "y",
    "axes.axisbelow": True,
    "grid.color": "#cccccc",
    "grid.linewidth": 0.6,
    "lines.linewidth": 1.6,
    "lines.markersize": 4.5,
    "errorbar.capsize": 2.5,
    "svg.fonttype": "path",
    "svg.hashsalt": "evalkit",
    "path.simplify": True,
}


@dataclass(frozen=True)
class Plot:
    """A figure to draw: a file-name-safe ``name``, a ``caption`` and ``alt`` text for pages, and
    ``draw()``, which makes the :class:`Figure` (call it inside :func:`style`)."""

    name: str
    kind: str  # heatmap, bars, dots, classes, sweep, levels, agreement, curve
    title: str
    caption: str
    alt: str
    draw: Callable[[], Figure] = field(repr=False, compare=False)


@dataclass
class Gallery:
    plots: list[Plot]
    notes: list[str]  # what the caps left out


# --- public entry points ---------------------------------------------------------------------

def figures(results: Results) -> list[tuple[str, Figure]]:
    """Every figure the rows call for, drawn, as ``(name, figure)``; names are stable and safe
    in file names. The caller owns the figures (``fig.clear()`` frees them; none is registered
    with pyplot). Save them inside :func:`style` to get exactly the report's files."""
    with style():
        return [(plot.name, plot.draw()) for plot in gallery(results).plots]


def gallery(results: Results) -> Gallery:
    """The figures the rows call for, not drawn yet, and notes on what the caps left out."""
    results = _shown(results)
    notes: list[str] = []
    colours = system_colours(results.rows)
    plain = [r for r in results.rows if r.class_ is None and r.level is None and r.sweep is None]
    set_rows = [r for r in plain if r.averaging is not None]
    data_rows = [r for r in plain if r.averaging is None]
    sweep_rows = [r for r in results.rows if r.sweep is not None and r.class_ is None and r.level is None]
    level_rows = [r for r in results.rows if r.level is not None and r.sweep is None and r.class_ is None]
    class_rows = [r for r in results.rows if r.class_ is not None and r.level is None and r.sweep is None]
    ceilings = {(r.metric, r.averaging, (r.representation, r.similarity, r.tnorm)): r.value for r in results.ceilings
                if r.class_ is None and r.level is None and r.sweep is None}
    plots = [
        *_heatmaps(set_rows, notes),
        *_set_bars(set_rows, colours, notes, ceilings),
        *_data_bars(data_rows, colours, notes),
        *_per_class(class_rows, colours, notes),
        *_sweeps(sweep_rows, colours, notes),
        *_levels(level_rows, colours, notes),
        *_agreement(results, notes),
        *_curves(results, colours, notes),
        *_timelines(results, colours),
    ]
    return Gallery(_unique_names(plots), notes)


def _shown(results: Results) -> Results:
    """``results`` with control characters in its names made visible (``\\x1b``): a figure has no
    glyph for them, and matplotlib's warning about it would pass them on to the terminal."""

    def names(record: Any) -> Any:
        changed = {f.name: visible(v) for f in fields(record) if isinstance(v := getattr(record, f.name), str)}
        return replace(record, **changed) if any(changed[k] != getattr(record, k) for k in changed) else record

    agreement = [replace(a, measure_a=names(a.measure_a), measure_b=names(a.measure_b)) for a in results.agreement]
    return replace(results, rows=[names(r) for r in results.rows], agreement=agreement)


@contextmanager
def style() -> Iterator[None]:
    """matplotlib's defaults (ignoring any matplotlibrc) plus :data:`RC`, for drawing and saving."""
    from matplotlib import style as mpl_style

    with mpl_style.context(["default", RC]):
        yield


@functools.cache
def _colours(name: str) -> Colormap:
    """matplotlib's colour map ``name``, with missing values grey."""
    from matplotlib import colormaps

    return colormaps[name].with_extremes(bad="#d9d9d9")


def image(plot: Plot, fmt: str) -> bytes:
    """``plot`` drawn once and saved as ``fmt`` ("png" or "svg"), reproducibly; the figure's
    canvas and pixel buffer are freed after saving.

    A PNG is the Agg canvas' buffer after one draw (which runs the constrained layout once),
    encoded as ``savefig`` would but without the alpha channel, which the opaque figures do not
    use (a third faster to encode, a tenth smaller): ``savefig`` on a figure with a layout
    engine first makes a dry run of the whole draw to place the layout, which doubled the cost
    of every figure."""
    if fmt not in ("png", "svg"):
        raise ValueError(f"figures are written as png or svg, not {fmt!r}")
    import PIL.Image
    from matplotlib.backend_bases import FigureCanvasBase
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    buffer = io.BytesIO()
    with style():
        fig = plot.draw()
        _unmeasured(fig)
        try:
            if fmt == "png":
                canvas = fig.canvas
                assert isinstance(canvas, FigureCanvasAgg), "every figure is made on an Agg canvas (_figure)"
                fig.set_dpi(DPI)
                canvas.draw()
                rgba = PIL.Image.frombuffer("RGBA", canvas.get_width_height(physical=True), canvas.buffer_rgba(),
                                            "raw", "RGBA", 0, 1)
                opaque = rgba.convert("RGB")  # RC's white figure: alpha is 255 throughout (PIL's copy: 4x numpy's)
                opaque.save(buffer, format="png", dpi=(DPI, DPI))  # no software version
            else:
                fig.savefig(buffer, format="svg", dpi=DPI, metadata={"Date": None})  # no timestamp
        finally:  # the canvas and its pixel buffer go now; the figure's other cycles to the collector
            FigureCanvasBase(fig)  # (cheaper than fig.clear(), which rebuilt every axis to empty it)
    return buffer.getvalue()


def _unmeasured(fig: Figure) -> None:
    """Leave out of the constrained layout every axis with nothing it would measure: no tick
    labels, no offset text, at most an empty label (an inner panel's shared axis, as sharing
    leaves it). Its bounding box is then a point, which the layout drops, so the layout is the
    same, but measuring it updated its ticks four times a pass for nothing (docs/benchmarks.md,
    "Figures cheaper to draw")."""
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            tick = axis.majorTicks[0]  # its labels' visibility is every tick's (set_tick_params)
            shown = [text for text in (axis.label, axis.offsetText, tick.label1, tick.label2) if text.get_visible()]
            if shown in ([], [axis.label]) and not axis.label.get_text():
                axis.set_in_layout(False)


def images(plots: Sequence[Plot], fmt: str) -> list[bytes]:
    """Every plot as ``fmt`` (:func:`image`), in order: drawn by the worker :func:`start_pool`
    started (which calls this function there), else by forked worker processes, one per core
    (they inherit matplotlib from this process), when there are at least :data:`POOL_FIGURES`
    plots and a core is idle (:func:`_idle_core`); otherwise here.

    Measured on 2 cores: a pool of two forked workers costs about 40 ms to start and stop, a
    figure 0.1–1 s of pure-Python matplotlib work, so two figures already pay (taggers' two:
    0.28–0.37 s against 0.42–0.53 s here; docs/benchmarks.md). The plots are sent pickled (their
    ``draw`` is a function of this module and its data). Where fork is unsafe or absent (macOS,
    Windows) the figures are drawn here. The bytes are the same either way."""
    global _ready
    worker, _ready = _ready, None
    if worker is not None:
        future = worker.pool.submit(images, plots, fmt)  # there: on a pool forked from it
        try:
            return future.result()
        finally:
            worker.stop([future])
    if len(plots) < POOL_FIGURES or not _forking() or not _idle_core():
        return [image(plot, fmt) for plot in plots]
    _import_drawing()  # here, once: the pool inherits it (in the worker start_pool started: done)
    pool = _pool(min(len(plots), _cores()))
    try:
        return list(pool.map(partial(_image_of, fmt=fmt), plots))
    finally:
        pool.shutdown(cancel_futures=True)  # interrupted: the figures being drawn are awaited, no others


def start_pool() -> None:
    """Start the worker that will draw the next :func:`images` (or :func:`submit`) now: it imports
    matplotlib (0.5 s) while this process scores the run, and this process need not import it at
    all (`evalkit run`, through the figure writers' ``start``).

    One worker, forked before matplotlib is imported: a second would import it too, 0.6 s of CPU
    more for tnorms' run while this process scores (docs/benchmarks.md). Once the figures are
    handed to it, it still draws them on every idle core: :func:`images` there forks its own
    pool, which inherits its matplotlib, while this process prints the tables."""
    global _ready
    if _ready is None and _forking():
        before = set(multiprocessing.active_children())
        pool = _pool(1)
        (process,) = set(multiprocessing.active_children()) - before
        _ready = _Worker(pool, process)


def submit(results: Results, fmt: str) -> None:
    """Hand every figure of ``results`` as ``fmt`` to the worker :func:`start_pool` started
    (none started: nothing), so that it draws them while this process prints the tables and writes
    the other reports; :func:`drawn` collects them (`evalkit run`, through the writers'
    ``results_ready``). :func:`stop_pool` ends it."""
    global _ready, _handed
    if _handed is not None and _handed.results is not results:
        stop_pool()
    if _handed is None:
        if _ready is None:
            return
        _handed, _ready = _Handed(results, gallery(results), _ready), None
    if fmt not in _handed.futures:
        _handed.futures[fmt] = _handed.worker.pool.submit(images, _handed.found.plots, fmt)


def drawn(results: Results, fmt: str) -> tuple[Gallery, list[bytes]]:
    """The gallery of ``results`` and each of its plots as ``fmt``: those :func:`submit` handed to
    the worker, or else drawn now (:func:`images`)."""
    if _handed is not None and _handed.results is results and fmt in _handed.futures:
        return _handed.found, _handed.futures[fmt].result()
    found = gallery(results)
    return found, images(found.plots, fmt)


def stop_pool() -> None:
    """Stop the worker :func:`start_pool` started: the run's reports are written, or it failed or
    was interrupted first, and then the figures :func:`submit` handed it that are not drawn yet
    are not waited for."""
    global _ready, _handed
    handed = _handed
    workers = [worker for worker in (_ready, None if handed is None else handed.worker) if worker is not None]
    _ready = _handed = None
    for worker in workers:
        worker.stop(() if handed is None else handed.futures.values())


@dataclass(frozen=True)
class _Worker:
    """The worker :func:`start_pool` forks: a pool of one process, which draws a format's figures
    as one task (:func:`images`, on its own pool)."""

    pool: ProcessPoolExecutor
    process: multiprocessing.process.BaseProcess

    def stop(self, futures: Iterable[Future[list[bytes]]]) -> None:
        """Figures not started are cancelled; a worker still drawing some is ended (SIGTERM; its
        own pool dies with it), as nobody will read them."""
        futures = [future for future in futures if not future.cancel()]  # those the worker has taken
        if not all(future.done() for future in futures):
            self.process.terminate()
        self.pool.shutdown(cancel_futures=True)


@dataclass
class _Handed:
    """The figures of one run's results, handed to the worker (:func:`submit`): the future of
    their bytes by format, collected by every writer that asks for that format."""

    results: Results
    found: Gallery
    worker: _Worker
    futures: dict[str, Future[list[bytes]]] = field(default_factory=dict)


_ready: _Worker | None = None  # started by start_pool(), taken by the next images() or submit()
_handed: _Handed | None = None  # made by submit(), read by drawn(), ended by stop_pool()


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1


def _forking() -> bool:
    return _cores() >= 2 and sys.platform.startswith("linux")


def _idle_core() -> bool:
    """Whether a core is likely idle (the last minute's load average is below the number of
    cores): forked helpers draw the figures in parallel only then. On the project's 2 cores
    shared by other work (load 4-9) they finished no sooner and took 0.2-0.3 s more CPU than one
    process drawing them all (each fills matplotlib's caches again; docs/benchmarks.md)."""
    return os.getloadavg()[0] < _cores()


def _pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` forked processes, forked now (by a first, empty task). A signal
    landing in a fork runs its handler in an at-fork hook, where Python prints the exception
    and goes on: the signals are held until the workers exist."""
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"), initializer=_receive,
                               initargs=(os.getpid(),))
    held = signal.pthread_sigmask(signal.SIG_BLOCK, STOPPING)
    try:
        pool.submit(int)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    return pool


def _receive(parent: int) -> None:
    """A worker's start. Ctrl-C reaches the whole process group; the parent answers it and stops
    the pool, so a worker ignores it (a worker ended by it hung the run: the pool then waits for
    the other workers, blocked sending figures nobody reads). SIGTERM ends a worker as any
    process, not through the parent's handler. Both were held in the fork (:func:`_pool`).
    A worker dies with its parent: one whose parent was killed (SIGKILL) waited for work forever,
    holding the command's stdout and stderr open. Then it imports what drawing needs, unless
    it inherited it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # killed before prctl
        os._exit(1)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPPING)
    _import_drawing()


def _import_drawing() -> None:
    for module in ("matplotlib.backends.backend_agg", "matplotlib.figure", "matplotlib.style", "PIL.PngImagePlugin"):
        importlib.import_module(module)


def _image_of(plot: Plot, fmt: str) -> bytes:
    return image(plot, fmt)  # this module's image when the task runs (a test may replace it)


def write_images(results: Results, out: Path, fmt: str) -> list[Path]:
    """One file per figure, ``{out}-{name}.{fmt}``; returns the paths written."""
    out = Path(out)
    found, data = drawn(results, fmt)
    paths = [out.with_name(f"{out.name}-{plot.name}.{fmt}") for plot in found.plots]
    return [atomic_write(path, image) for path, image in zip(paths, data)]


def system_colours(rows: Iterable[Row]) -> dict[str, str]:
    systems = list(dict.fromkeys(r.system for r in rows))
    return {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(systems)}


def label(value: object) -> str:
    return NONE if value is None else str(value)


# --- grouping helpers ------------------------------------------------------------------------

def _group(rows: Iterable[Row], key: Callable[[Row], tuple]) -> dict[tuple, list[Row]]:
    groups: dict[tuple, list[Row]] = {}
    for r in rows:
        groups.setdefault(key(r), []).append(r)
    return groups


def _distinct(rows: Iterable[Row], attribute: str) -> list:
    return list(dict.fromkeys(getattr(r, attribute) for r in rows))


def _finite(values: Iterable[float | None]) -> list[float]:
    return [v for v in values if v is not None and not math.isnan(v)]


def _unit(rows: Sequence[Row]) -> bool:
    """All values (and bounds) in [0, 1]: the axis can be fixed to 0–1."""
    values = _finite(v for r in rows for v in (r.value, r.ci_low, r.ci_high))
    return bool(values) and min(values) >= 0 and max(values) <= 1


def _sweep_value(row: Row) -> float:
    """The swept value of a row (the caller has dropped rows without one)."""
    assert row.sweep_value is not None, "only rows with a sweep value are drawn against it"
    return row.sweep_value


def _level(row: Row) -> int:
    """The level of a per-level row."""
    assert row.level is not None, "per-level rows have a level"
    return row.level


def _has_ci(rows: Iterable[Row]) -> bool:
    return any(r.ci_low is not None and r.ci_high is not None for r in rows)


def _join(parts: Iterable[object]) -> str:
    return " · ".join(str(p) for p in parts if p is not None)


def _words(values: Sequence[object]) -> str:
    words = [label(v) for v in values]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _slug(*parts: object) -> str:
    text = "-".join(str(p) for p in parts if p is not None)
    slug = re.sub(r"[^a-z0-9._]+", "-", text.lower()).strip("-.") or "figure"
    if len(slug) > 60:  # long parameter lists: keep a readable start, stay unique
        slug = slug[:50].rstrip("-.") + "-" + hashlib.sha256(text.encode()).hexdigest()[:8]
    return slug


def _unique_names(plots: list[Plot]) -> list[Plot]:
    seen: dict[str, int] = {}
    out = []
    for plot in plots:
        count = seen.get(plot.name, 0) + 1
        seen[plot.name] = count
        out.append(plot if count == 1 else replace(plot, name=f"{plot.name}-{count}"))
    return out


def _cap(items: list, limit: int, what: str, notes: list[str], rest: str) -> list:
    if len(items) > limit:
        notes.append(f"{what}: the first {limit} of {len(items)} are drawn; {rest}")
        return items[:limit]
    return items


# --- drawing helpers -------------------------------------------------------------------------

def _figure(width: float, height: float) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(min(width, MAX_WIDTH), height), dpi=DISPLAY_DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _axes_grid(fig: Figure, n: int, ncols: int, **kwargs) -> list:
    nrows = math.ceil(n / ncols)
    axes = fig.subplots(nrows, ncols, squeeze=False, **kwargs).ravel().tolist()
    for ax in axes[n:]:
        ax.set_visible(False)
    for ax in axes[max(n - ncols, 0):n]:  # above an empty slot, shared x ticks still need labels
        ax.tick_params(labelbottom=True)
    return axes[:n]


def _text_colour(rgba: Sequence[float]) -> str:
    r, g, b = rgba[:3]
    return "black" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.45 else "white"


def _number(value: float) -> str:
    if math.isnan(value):
        return "undef."
    return f"{value:.3f}" if abs(value) < 100 else f"{value:.4g}"


def _rotate_if_long(ax, labels: Sequence[str], room: float) -> None:
    """Tilt the x tick labels when they would not fit side by side in ``room`` inches."""
    if sum(len(s) for s in labels) * 0.075 > room:
        for tick in ax.get_xticklabels():
            tick.set_rotation(30)
            tick.set_horizontalalignment("right")
            tick.set_rotation_mode("anchor")


def _unit_axis(ax) -> None:
    """The y axis of ``ax`` from 0 to 1.04, with the ticks and labels matplotlib chooses there (0,
    0.2 … 1) fixed: its locator and formatter no longer work them out again at each of the dozen
    tick updates of a draw. Only for the set bars' rows, 2 in each: on a shorter or narrower axis
    (data bars under long rotated names, per-class panels beside long system names) matplotlib
    chooses fewer ticks, so those keep its locator."""
    ax.set_ylim(0, 1.04)
    ax.set_yticks(UNIT_TICKS, UNIT_LABELS)


def _bars(ax, at: np.ndarray, lengths: Sequence[float], width: float, colours: Sequence[str], *,
          horizontal: bool = False, edgecolor: str = "white", linewidth: float = 0.4) -> None:
    """What ``ax.bar`` (``ax.barh`` when ``horizontal``) draws, byte for byte in the images, as one
    collection: bar() adds a patch per bar, each updating the data limits on its own (a third of
    the set bars' build). Bars start at 0, which autoscaling keeps at the edge, as bar()'s do."""
    from matplotlib.collections import PatchCollection
    from matplotlib.patches import Rectangle

    boxes = [Rectangle((0, c - width / 2), n, width) if horizontal else Rectangle((c - width / 2, 0), width, n)
             for c, n in zip(at, lengths)]
    bars = PatchCollection(boxes, facecolors=colours, edgecolors=edgecolor, linewidths=linewidth, joinstyle="miter")
    (bars.sticky_edges.x if horizontal else bars.sticky_edges.y).append(0)
    ax.add_collection(bars)


def _height(row: Row | None) -> float:
    """A bar's length: none (NaN) for a missing row, an undefined value, or an infinite one (a
    threshold at which every frame is detected is -inf), which no bar can show: its value is
    written in its place instead."""
    return row.value if row is not None and math.isfinite(row.value) else np.nan


def _mark_flat_bars(ax, bars: list[tuple[float | np.integer, float]]) -> None:
    """Write the value of bars too short to see (a 0 looks like a missing bar otherwise), or
    that no bar shows (undefined, ±inf)."""
    low, high = ax.get_ylim()
    for x, value in bars:
        if not math.isfinite(value) or abs(value) <= 0.01 * (high - low):
            ax.text(x, 0, _number(value).rstrip("0").rstrip(".") or "0", ha="center", va="bottom",
                    fontsize=6.5, color="#444444")


def _errorbars(ax, at: Iterable[float] | np.ndarray, rows: Sequence[Row | None], horizontal: bool = False,
               colour: str = "#222222", capsize: float | None = None) -> None:
    """Whiskers for the rows (None: nothing drawn there) that have a confidence interval, at
    the positions ``at`` along the category axis: x (bars), or y when ``horizontal``."""
    points = [
        (position, r.value, r.ci_low, r.ci_high)
        for position, r in zip(at, rows)
        if r is not None and r.ci_low is not None and r.ci_high is not None
    ]
    if not points:
        return
    where = [p[0] for p in points]
    value = [p[1] for p in points]
    spread = [[max(v - low, 0) for _, v, low, _ in points], [max(high - v, 0) for _, v, _, high in points]]
    style: dict[str, Any] = dict(fmt="none", ecolor=colour, elinewidth=0.9, zorder=3, capsize=capsize)
    if horizontal:
        ax.errorbar(value, where, xerr=spread, **style)
    else:
        ax.errorbar(where, value, yerr=spread, **style)


# --- (a) heatmaps: T-norm × averaging per system ---------------------------------------------

def _heatmaps(rows: list[Row], notes: list[str]) -> list[Plot]:
    groups = _group(rows, lambda r: (r.system, r.representation, r.similarity))
    eligible = [(key, g) for key, g in groups.items() if len(_distinct(g, "tnorm")) >= 2]
    eligible = _cap(eligible, MAX_HEATMAPS, "Heatmaps (T-norm × averaging)", notes,
                    "the tables hold every value")
    plots = []
    for (system, representation, similarity), group in eligible:
        metrics = _distinct(group, "metric")
        tnorms, averagings = _distinct(group, "tnorm"), _distinct(group, "averaging")
        where = _join([representation, similarity])
        title = f"{system} — {where}" if where else system
        cells = len(tnorms) * len(averagings)
        written = cells <= MAX_ANNOTATED
        plots.append(Plot(
            name=_slug("heatmap", system, representation, similarity),
            kind="heatmap",
            title=title,
            caption=(f"{_words(metrics)} of {system}"
                     + (f" ({where})" if where else "")
                     + " for each T-norm (rows) and averaging (columns). Lighter is higher; "
                     "grey cells are undefined (0/0)."
                     + ("" if written else f" Values are not written in the cells ({cells} a panel): the "
                        "colour bar gives the scale, the tables every value.")),
            alt=(f"Heatmaps of {_words(metrics)} for system {system}"
                 + (f", {where}" if where else "")
                 + f": rows are the T-norms {_words(tnorms)}, columns the averagings "
                 f"{_words(averagings)}, "
                 + ("each cell annotated with its value." if written else
                    "cells coloured by value without numbers (the report's tables hold them).")),
            draw=partial(_draw_heatmap, title, group, written),
        ))
    return plots


#: A heatmap panel's frame, set as its axes are made (not per axes after: that updated every tick
#: again): no grid, no tick marks, no spines; the colour bar keeps the usual ones.
HEATMAP_RC = {"axes.grid": False, "xtick.major.size": 0, "ytick.major.size": 0, "axes.spines.left": False,
              "axes.spines.bottom": False}


def _draw_heatmap(title: str, rows: list[Row], written: bool) -> Figure:
    """``written``: each cell's value is written in it (see MAX_ANNOTATED)."""
    from matplotlib import style as mpl_style
    from matplotlib.colors import Normalize

    heat = _colours(HEAT)
    metrics = _distinct(rows, "metric")[:MAX_PANELS]
    tnorms, averagings = _distinct(rows, "tnorm"), _distinct(rows, "averaging")
    cells = {(r.metric, r.tnorm, r.averaging): r.value for r in rows}
    unit = _unit(rows)
    ncols = min(len(metrics), 4)
    nrows = math.ceil(len(metrics) / ncols)
    tick_room = max(len(label(t)) for t in tnorms) * 0.065 + 0.2
    cell_w = max(0.62, max(len(label(a)) for a in averagings) * 0.075)
    width = ncols * (len(averagings) * cell_w + 0.25) + tick_room + (1.0 if unit else 0.9 * ncols)
    height = nrows * (len(tnorms) * 0.42 + 1.0) + 0.45
    fig = _figure(max(width, 4.0), height)
    with mpl_style.context(HEATMAP_RC):
        axes = _axes_grid(fig, len(metrics), ncols, sharey=True)
    norm = Normalize(0.0, 1.0) if unit else None
    axes[0].set_yticks(range(len(tnorms)), [label(t) for t in tnorms])  # for every panel: they share y
    image = None
    for i, (ax, metric) in enumerate(zip(axes, metrics)):
        grid = np.array([[cells.get((metric, t, a), np.nan) for a in averagings] for t in tnorms], float)
        finite = grid[np.isfinite(grid)]
        panel_norm = norm or Normalize(*(finite.min(), finite.max()) if finite.size else (0, 1))
        image = ax.imshow(np.ma.masked_invalid(grid), cmap=heat, norm=panel_norm, aspect="auto")
        if written:
            for (y, x), value in np.ndenumerate(grid):
                if (metric, tnorms[y], averagings[x]) in cells:
                    colour = "black" if math.isnan(value) else _text_colour(heat(panel_norm(value)))
                    ax.text(x, y, _number(value), ha="center", va="center", color=colour, fontsize=8, in_layout=False)
        ax.set_xticks(range(len(averagings)), [label(a) for a in averagings])
        ax.set_title(metric)
        ax.set_xlabel("averaging")
        if i % ncols == 0:
            ax.set_ylabel("T-norm")
        else:  # no label, no tick labels (shared), no ticks: nothing to draw
            ax.yaxis.set_visible(False)
        if not unit:
            fig.colorbar(image, ax=ax, shrink=0.9)
    if unit and image is not None:
        fig.colorbar(image, ax=axes, shrink=0.9, label="value").set_ticks(UNIT_TICKS, labels=UNIT_LABELS)
    fig.suptitle(title)
    return fig


#: How a caption names the ceiling (``Results.ceilings``) its figure draws.
CEILING_CAPTION = (" Dashed line: the T-norm's ceiling, the reference scored against itself (the most a perfect "
                   "system reaches; 1 only for the minimum).")


# --- (b) grouped bars: systems × metrics ------------------------------------------------------

#: (metric, averaging, (representation, similarity, T-norm)) -> the reference scored against itself
Ceilings = dict[tuple[str, str | None, tuple], float]
CEILING_COLOUR = "#6e7781"


def _set_bars(rows: list[Row], colours: dict[str, str], notes: list[str], ceilings: Ceilings) -> list[Plot]:
    """One panel per (representation, similarity, T-norm) and averaging: panel rows are the
    component combinations, panel columns the averagings. More than MAX_BAR_ROWS combinations
    (12 T-norms) are a dot plot instead (:func:`_dots`): a grid of bars would run to pages.
    Each T-norm's ceiling (``Results.ceilings``) is a dashed line over its metric's bars."""
    combos = list(_group(rows, lambda r: (r.representation, r.similarity, r.tnorm)).items())
    if len(combos) > MAX_BAR_ROWS:
        return _dots(rows, combos, colours, notes, ceilings)
    chunks = [combos[i:i + MAX_BAR_ROWS] for i in range(0, len(combos), MAX_BAR_ROWS)]
    chunks = _cap(chunks, MAX_BAR_FIGURES, "Bar charts of the set metrics", notes, "the tables hold every value")
    plots = []
    for n, chunk in enumerate(chunks, start=1):
        group = [r for _, combo in chunk for r in combo]
        systems, metrics, averagings = _distinct(group, "system"), _distinct(group, "metric"), _distinct(group, "averaging")
        names = [_join(key) for key, _ in chunk]
        if len(averagings) > MAX_BAR_COLUMNS and n == 1:
            notes.append(f"Bar charts of the set metrics: the first {MAX_BAR_COLUMNS} of {len(averagings)} "
                         "averagings are drawn; the tables hold every value.")
        ci = " Whiskers: confidence intervals." if _has_ci(group) else ""
        ci += CEILING_CAPTION if ceilings else ""
        title = "Set metrics" if len(chunks) == 1 else f"Set metrics ({n} of {len(chunks)})"
        plots.append(Plot(
            name="bars" if len(chunks) == 1 else f"bars-{n}",
            kind="bars",
            title=title,
            caption=(f"{_words(metrics)} of each system: one row of panels per component combination "
                     f"({_words(names)}), one column per averaging ({_words(averagings)}).{ci}"),
            alt=(f"Grouped bar charts: bars for the systems {_words(systems)} side by side for each of "
                 f"{_words(metrics)}; panel rows {_words(names)}; panel columns {_words(averagings)}"
                 + (", with confidence-interval whiskers." if ci else ".")),
            draw=partial(_draw_set_bars, title, chunk, colours, ceilings),
        ))
    return plots


def _draw_set_bars(title: str, combos: list[tuple[tuple, list[Row]]], colours: dict[str, str],
                   ceilings: Ceilings) -> Figure:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    rows = [r for _, combo in combos for r in combo]
    systems, metrics, averagings = _distinct(rows, "system"), _distinct(rows, "metric"), _distinct(rows, "averaging")
    averagings = averagings[:MAX_BAR_COLUMNS]
    ncols, nrows = len(averagings), len(combos)
    panel_w = max(2.3, len(metrics) * (len(systems) * 0.2 + 0.3) + 0.5)
    longest = max(len(_join(key)) for key, _ in combos)
    fig = _figure(ncols * panel_w + 1.5 + min(longest, 28) * 0.06, nrows * 2.0 + 0.6)
    unit = _unit(rows)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=unit, sharex=True)
    width = 0.8 / len(systems)
    x = np.arange(len(metrics))
    # a panel's bars, every system's, in one collection (_bars), in the order the calls per system drew them
    xs = np.concatenate([x + (k - (len(systems) - 1) / 2) * width for k in range(len(systems))])
    bar_colours = [colours[s] for s in systems for _ in metrics]
    if unit:
        _unit_axis(axes[0, 0])
    for i, (key, combo) in enumerate(combos):
        cells = {(r.averaging, r.system, r.metric): r for r in combo}
        for j, averaging in enumerate(averagings):
            ax = axes[i, j]
            found = [cells.get((averaging, system, m)) for system in systems for m in metrics]
            _bars(ax, xs, [_height(r) for r in found], width, bar_colours)
            _errorbars(ax, xs, found)
            drawn = [(xi, r.value) for xi, r in zip(xs, found) if r is not None]
            tops = [(xi, ceilings.get((m, averaging, key))) for xi, m in zip(x, metrics)]
            tops = [(xi, top) for xi, top in tops if top is not None]
            if tops:
                ax.hlines([top for _, top in tops], [xi - 0.45 for xi, _ in tops], [xi + 0.45 for xi, _ in tops],
                          colors=CEILING_COLOUR, linestyles="--", linewidth=1.1, zorder=3, label="ceiling")
            if i == 0:
                ax.set_title(averaging, fontweight="bold")
            if j == 0:
                ax.set_ylabel(_wrap(key, 18))
            if not unit and any(r.value < 0 for r in combo if not math.isnan(r.value)):
                ax.axhline(0, color="#444444", linewidth=0.8)
            _mark_flat_bars(ax, drawn)
    # for every panel (they share x), after the bars: set before them, on panels of only undefined values (no x
    # data) the view went on autoscaling around the first tick alone, and a metric's label fell out of it
    axes[0, 0].set_xticks(x, metrics)
    for ax in axes[-1]:
        _rotate_if_long(ax, metrics, panel_w)
    handles: list[Any] = [Patch(facecolor=colours[s], label=s) for s in systems]
    if any(key[2] == combo_key for key in ceilings for combo_key, _ in combos):
        handles.append(Line2D([], [], color=CEILING_COLOUR, linestyle="--", label="ceiling"))
    fig.legend(handles=handles, title="system", loc="outside right upper")
    fig.suptitle(title)
    return fig


def _dots(rows: list[Row], combos: list[tuple[tuple, list[Row]]], colours: dict[str, str],
          notes: list[str], ceilings: Ceilings) -> list[Plot]:
    """Every system's value per component combination, one panel per metric and averaging."""
    systems, metrics, averagings = _distinct(rows, "system"), _distinct(rows, "metric"), _distinct(rows, "averaging")
    panels = [(m, a) for m in metrics for a in averagings]
    if len(panels) > MAX_PANELS:
        notes.append(f"Dot plot of the set metrics: the first {MAX_PANELS} of {len(panels)} metric × averaging "
                     "panels are drawn; the tables hold every value.")
    names = [_join(key) for key, _ in combos]
    ci = " Whiskers: confidence intervals." if _has_ci(rows) else ""
    ci += CEILING_CAPTION.replace("dashed line", "grey bar") if ceilings else ""
    return [Plot(
        name="dots",
        kind="dots",
        title="Set metrics",
        caption=(f"{_words(metrics)} of each system (a dot each) for every component combination "
                 f"({len(combos)}, rows), one panel per metric (rows of panels) and averaging (columns).{ci}"),
        alt=(f"Dot plots, one panel per metric and averaging ({_words(metrics)}; {_words(averagings)}): for each of "
             f"{_words(names)}, a dot per system ({_words(systems)})" + (" with confidence whiskers." if ci else ".")),
        draw=partial(_draw_dots, rows, [key for key, _ in combos], panels[:MAX_PANELS], colours, ceilings),
    )]


def _draw_dots(rows: list[Row], combos: list[tuple], panels: list[tuple], colours: dict[str, str],
               ceilings: Ceilings) -> Figure:
    from matplotlib.lines import Line2D

    systems = _distinct(rows, "system")
    averagings = list(dict.fromkeys(a for _, a in panels))
    ncols = len(averagings)
    nrows = math.ceil(len(panels) / ncols)
    varying = [i for i in range(3) if len({key[i] for key in combos}) > 1] or [0, 1, 2]
    names = [_join(key[i] for i in varying) or NONE for key in combos]  # the parts all share: in the title
    shared = _join(combos[0][i] for i in range(3) if i not in varying)
    longest = max(len(n) for n in names)
    fig = _figure(ncols * 2.1 + min(longest, 30) * 0.065 + 1.3, nrows * (len(combos) * 0.2 + 0.7) + 0.5)
    unit = _unit(rows)
    # y not shared: only the first column has y ticks (the names); the others draw the rows'
    # guide lines as one LineCollection, where a tick per row on every panel (lines, label, grid
    # line, each measured by the layout) cost 0.1 s of tnorms' 0.7
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=unit).ravel().tolist()
    cells = {(r.metric, r.averaging, r.system, (r.representation, r.similarity, r.tnorm)): r for r in rows}
    y = np.arange(len(combos))
    offsets = (np.arange(len(systems)) - (len(systems) - 1) / 2) * min(0.2, 0.6 / len(systems))
    for i, (ax, (metric, averaging)) in enumerate(zip(axes, panels)):
        whiskers = []  # (y, from, to, colour): every system's in one LineCollection (an errorbar each was 30%)
        for k, system in enumerate(systems):
            found = [cells.get((metric, averaging, system, key)) for key in combos]
            shown = [(yi + offsets[k], r) for yi, r in zip(y, found) if r is not None]
            whiskers += [(yi, min(r.ci_low, r.value), max(r.ci_high, r.value), colours[system])
                         for yi, r in shown if r.ci_low is not None and r.ci_high is not None]
            ax.plot([r.value for _, r in shown], [yi for yi, _ in shown], linestyle="none", marker=MARKERS[k % len(MARKERS)],
                    color=colours[system], markersize=4, label=system)
        tops = [(yi, ceilings.get((metric, averaging, key))) for yi, key in zip(y, combos)]
        tops = [(yi, top) for yi, top in tops if top is not None]
        if tops:
            ax.plot([top for _, top in tops], [yi for yi, _ in tops], linestyle="none", marker="|", markersize=11,
                    markeredgewidth=1.6, color=CEILING_COLOUR, zorder=1, label="ceiling")
        if whiskers:
            ys, lows, highs, whisker_colours = zip(*whiskers)
            ax.hlines(ys, lows, highs, colors=whisker_colours, linewidth=0.9, zorder=3)
        if i < ncols:
            ax.set_title(averaging, fontweight="bold")
        if i % ncols == 0:
            ax.set_ylabel(metric)
            ax.set_yticks(y, names)
        else:
            ax.set_yticks([])
        ax.hlines(y, 0, 1, transform=ax.get_yaxis_transform(), colors=RC["grid.color"],
                  linewidth=RC["grid.linewidth"], zorder=0.5)  # the grid's look, below the dots
        ax.grid(False, axis="y")
        ax.grid(True, axis="x")
        ax.set_ylim(len(combos) - 0.5, -0.5)  # the first combination on top, as in the tables
        if unit:
            ax.set_xlim(-0.02, 1.02)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    handles = [Line2D([], [], linestyle="none", marker=MARKERS[k % len(MARKERS)], color=colours[s], label=s)
               for k, s in enumerate(systems)]
    if ceilings:
        handles.append(Line2D([], [], linestyle="none", marker="|", markeredgewidth=1.6, color=CEILING_COLOUR,
                              label="ceiling"))
    fig.legend(handles=handles, title="system", loc="outside right upper")
    fig.suptitle(f"Set metrics — {shared}" if shared else "Set metrics")
    return fig


def _wrap(key: Iterable[object], width: int) -> str:
    """A long axis label of parts, broken between parts."""
    parts, lines = [str(p) for p in key if p is not None], [""]
    for part in parts:
        if lines[-1] and len(lines[-1]) + len(part) + 3 > width:
            lines.append(part)
        else:
            lines[-1] = f"{lines[-1]} · {part}" if lines[-1] else part
    return "\n".join(lines)


def _data_bars(rows: list[Row], colours: dict[str, str], notes: list[str]) -> list[Plot]:
    if not rows:
        return []
    panels = list(_group(rows, lambda r: (r.metric, r.representation, r.similarity, r.tnorm)))
    if len(panels) > MAX_PANELS:
        notes.append(f"Bar chart of the data metrics: the first {MAX_PANELS} of {len(panels)} panels are drawn.")
    names = [_join(p) for p in panels[:MAX_PANELS]]
    systems = _distinct(rows, "system")
    ci = " Whiskers: confidence intervals." if _has_ci(rows) else ""
    return [Plot(
        name="bars-data-metrics",
        kind="bars",
        title="Data metrics",
        caption=f"Metrics computed on the raw data ({_words(names)}), one panel each, a bar per system.{ci}",
        alt=(f"Bar charts, one panel per metric ({_words(names)}), each with one bar per system "
             f"({_words(systems)})" + (", with confidence-interval whiskers." if ci else ".")),
        draw=partial(_draw_data_bars, rows, colours),
    )]


def _draw_data_bars(rows: list[Row], colours: dict[str, str]) -> Figure:
    systems = _distinct(rows, "system")
    panels = list(_group(rows, lambda r: (r.metric, r.representation, r.similarity, r.tnorm)).items())[:MAX_PANELS]
    ncols = min(len(panels), 4)
    nrows = math.ceil(len(panels) / ncols)
    panel_w = max(2.0, len(systems) * 0.45 + 0.8)
    fig = _figure(ncols * panel_w + 0.4, nrows * 2.5 + 0.5)
    axes = _axes_grid(fig, len(panels), ncols)
    x = np.arange(len(systems))
    for ax, (key, panel) in zip(axes, panels):
        cells = {r.system: r for r in panel}
        found = [cells.get(s) for s in systems]
        _bars(ax, x, [_height(r) for r in found], 0.7, [colours[s] for s in systems], edgecolor="none", linewidth=0)
        _errorbars(ax, x, found)
        ax.set_xticks(x, systems)
        _rotate_if_long(ax, systems, panel_w)
        ax.set_title(_join(key))
        if _unit(panel):
            ax.set_ylim(0, 1.04)  # ticks as matplotlib chooses them: a panel under long rotated names is short
        elif any(r.value < 0 for r in panel if not math.isnan(r.value)):
            ax.axhline(0, color="#444444", linewidth=0.8)
        _mark_flat_bars(ax, [(xi, r.value) for xi, r in zip(x, found) if r is not None])
    fig.suptitle("Data metrics")
    return fig


# --- (b') per-class bars ----------------------------------------------------------------------

def _per_class(rows: list[Row], colours: dict[str, str], notes: list[str]) -> list[Plot]:
    groups = list(_group(rows, lambda r: (r.representation, r.similarity, r.tnorm, r.averaging)).items())
    groups = _cap(groups, MAX_BAR_FIGURES, "Per-class bar charts", notes, "the per-class table holds every value")
    plots = []
    for key, group in groups:
        classes, systems, metrics = _distinct(group, "class_"), _distinct(group, "system"), _distinct(group, "metric")
        if len(classes) > MAX_CLASSES:
            notes.append(f"Per-class bar chart ({_join(key)}): the first {MAX_CLASSES} of {len(classes)} classes "
                         "are drawn; the per-class table holds every value.")
        where = _join(key)
        ci = " Whiskers: confidence intervals." if _has_ci(group) else ""
        plots.append(Plot(
            name=_slug("classes", *key),
            kind="classes",
            title=f"Per class — {where}" if where else "Per class",
            caption=(f"{_words(metrics)} of each class ({len(classes)}), a bar per system, one panel per metric"
                     + (f" ({where})" if where else "") + f".{ci}"),
            alt=(f"Horizontal bar charts, one panel per metric ({_words(metrics)}): a row per class "
                 f"({_words(classes[:MAX_CLASSES])}), bars for the systems {_words(systems)}."),
            draw=partial(_draw_per_class, where, group, colours),
        ))
    return plots


def _draw_per_class(where: str, rows: list[Row], colours: dict[str, str]) -> Figure:
    from matplotlib.patches import Patch

    classes = _distinct(rows, "class_")[:MAX_CLASSES]
    systems, metrics = _distinct(rows, "system"), _distinct(rows, "metric")[:MAX_PANELS]
    ncols = min(len(metrics), 3)
    nrows = math.ceil(len(metrics) / ncols)
    longest = max(len(label(c)) for c in classes)
    height = len(classes) * (len(systems) * 0.13 + 0.12) + 0.9
    fig = _figure(ncols * 2.8 + min(longest, 30) * 0.065 + 1.4, nrows * height + 0.4)
    axes = _axes_grid(fig, len(metrics), ncols, sharey=True)
    width = 0.8 / len(systems)
    y = np.arange(len(classes))
    ys = np.concatenate([y + (k - (len(systems) - 1) / 2) * width for k in range(len(systems))])
    bar_colours = [colours[s] for s in systems for _ in classes]
    cells = {(r.metric, r.system, r.class_): r for r in rows}
    for ax, metric in zip(axes, metrics):
        panel = [r for r in rows if r.metric == metric]
        found = [cells.get((metric, system, c)) for system in systems for c in classes]
        _bars(ax, ys, [_height(r) for r in found], width, bar_colours, horizontal=True)
        for at, r in zip(ys, found):
            if r is not None and math.isinf(r.value):  # no bar shows it: its value in the bar's place
                ax.text(0, at, _number(r.value), ha="left", va="center", fontsize=6.5, color="#444444")
        _errorbars(ax, ys, found, horizontal=True)
        ax.set_yticks(y, [label(c) for c in classes])
        ax.yaxis.set_inverted(True)  # the first class on top, as in the table
        ax.set_title(metric)
        ax.grid(True, axis="x")
        ax.grid(False, axis="y")
        if _unit(panel):
            ax.set_xlim(0, 1.04)  # ticks as matplotlib chooses them: a panel beside long system names is narrow
    handles = [Patch(facecolor=colours[s], label=s) for s in systems]
    fig.legend(handles=handles, title="system", loc="outside right upper")
    fig.suptitle(f"Per class — {where}" if where else "Per class")
    return fig


# --- (c) sweeps -------------------------------------------------------------------------------

def _sweeps(rows: list[Row], colours: dict[str, str], notes: list[str]) -> list[Plot]:
    groups = list(_group(rows, lambda r: (r.sweep,)).items())
    groups = _cap(groups, MAX_SWEEP_FIGURES, "Sweep plots", notes, "the tables hold every value")
    plots = []
    for (sweep,), group in groups:
        panels = list(_group(group, lambda r: (r.metric, r.averaging)))
        lines = _group(group, _line_key)
        metrics = _distinct(group, "metric")
        if len(panels) > MAX_PANELS:
            notes.append(f"Sweep over {sweep}: the first {MAX_PANELS} of {len(panels)} metric × averaging "
                         "panels are drawn.")
        values = sorted({r.sweep_value for r in group if r.sweep_value is not None})
        if len(lines) > MAX_LINES:
            notes.append(f"Sweep over {sweep}: the first {MAX_LINES} of {len(lines)} lines per panel are drawn.")
        labels = _line_labels(list(lines))
        ci = " Bands: confidence intervals." if _has_ci(group) else ""
        plots.append(Plot(
            name=_slug("sweep", sweep),
            kind="sweep",
            title=f"Sweep over {sweep}",
            caption=(f"{_words(metrics)} against {sweep} (from {values[0]:g} to {values[-1]:g}), one line "
                     f"per system and component combination, one panel per metric"
                     f"{' and averaging' if any(a for _, a in panels) else ''}.{ci}") if values else
                    f"{_words(metrics)} against {sweep}.",
            alt=(f"Line charts of {_words(metrics)} against {sweep}, with {len(values)} values on the x axis "
                 f"and lines for {_words(labels[:MAX_LINES])}."),
            draw=partial(_draw_sweep, sweep, group, colours),
        ))
    return plots


def _line_key(row: Row) -> tuple:
    return (row.system, row.representation, row.similarity, row.tnorm)


def _line_labels(keys: list[tuple]) -> list[str]:
    """Name each line by the fields that tell it apart (the system when nothing does)."""
    varying = [i for i in range(4) if len({k[i] for k in keys}) > 1] or [0]
    return [_join(k[i] for i in varying) or NONE for k in keys]


def _draw_sweep(sweep: str, rows: list[Row], colours: dict[str, str]) -> Figure:
    from matplotlib.lines import Line2D

    panels = list(_group(rows, lambda r: (r.metric, r.averaging)).items())[:MAX_PANELS]
    keys = list(_group(rows, _line_key))[:MAX_LINES]
    labels = dict(zip(keys, _line_labels(keys)))
    several = len({k[0] for k in keys}) > 1
    styles: dict[tuple, dict[str, Any]] = {}
    for k in keys:  # colour by system, line style and marker by the rest
        n = sum(1 for other in styles if other[0] == k[0]) if several else len(styles)
        colour = colours[k[0]] if several else PALETTE[n % len(PALETTE)]
        styles[k] = dict(color=colour, linestyle=LINESTYLES[n % len(LINESTYLES)] if several else "-",
                         marker=MARKERS[n % len(MARKERS)])
    ncols = min(len(panels), 3)
    nrows = math.ceil(len(panels) / ncols)
    legend_w = min(3.0, max(len(s) for s in labels.values()) * 0.07 + 0.6)
    panel_w, panel_h = {1: (5.6, 3.6), 2: (3.8, 3.0)}.get(ncols, (3.0, 2.5))
    fig = _figure(ncols * panel_w + legend_w, nrows * panel_h + 0.5)
    points = max(len({r.sweep_value for r in rows}), 1)
    every = max(1, round(points / 12))  # markers tell the lines apart; dense sweeps get fewer
    unit = _unit(rows)
    axes = _axes_grid(fig, len(panels), ncols, sharex=True)
    for i, (ax, ((metric, averaging), panel)) in enumerate(zip(axes, panels)):
        by_line = _group(panel, _line_key)
        for key in keys:
            line = sorted((r for r in by_line.get(key, []) if r.sweep_value is not None), key=_sweep_value)
            if not line:
                continue
            xs = [r.sweep_value for r in line]
            ax.plot(xs, [r.value for r in line], label=labels[key], markevery=every, **styles[key])
            if _has_ci(line):
                banded = [r for r in line if r.ci_low is not None and r.ci_high is not None]
                ax.fill_between([r.sweep_value for r in banded], [r.ci_low for r in banded],
                                [r.ci_high for r in banded], color=styles[key]["color"], alpha=0.15, linewidth=0)
        ax.set_title(_join([metric, averaging]))
        if i >= len(panels) - ncols:  # the bottom panel of each column
            ax.set_xlabel(sweep)
        ax.grid(True, axis="both")
        if unit:
            ax.set_ylim(-0.02, 1.02)
        if i % ncols == 0:
            ax.set_ylabel("value")
    handles = [Line2D([], [], label=labels[k], **styles[k]) for k in keys]
    fig.legend(handles=handles, loc="outside right upper")
    fig.suptitle(f"Sweep over {sweep}")
    return fig


# --- (d) per-level curves (OmAP per λ) --------------------------------------------------------

def _levels(rows: list[Row], colours: dict[str, str], notes: list[str]) -> list[Plot]:
    groups = list(_group(rows, lambda r: (r.metric, r.representation, r.similarity, r.tnorm, r.averaging)).items())
    groups = _cap(groups, MAX_LEVEL_FIGURES, "Per-level plots", notes, "the per-level table holds every value")
    plots = []
    for key, group in groups:
        what = _join(key)
        systems = _distinct(group, "system")
        levels = sorted({_level(r) for r in group})
        diff = f", and each system's difference to {systems[0]} (right)" if len(systems) > 1 else ""
        plots.append(Plot(
            name=_slug("levels", *key),
            kind="levels",
            title=f"{what} per level",
            caption=f"{what} at each level ({levels[0]}–{levels[-1]}), one line per system (left){diff}.",
            alt=(f"Line chart of {what} against the level from {levels[0]} to {levels[-1]} for "
                 f"{_words(systems)}" + (f"; a second chart shows each system minus {systems[0]}." if diff else ".")),
            draw=partial(_draw_levels, what, group, colours),
        ))
    return plots


def _draw_levels(what: str, rows: list[Row], colours: dict[str, str]) -> Figure:
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator

    systems = _distinct(rows, "system")
    differences = level_differences(rows) if len(systems) > 1 else []
    fig = _figure(9.0 if differences else 5.6, 3.4)
    axes = _axes_grid(fig, 2 if differences else 1, 2 if differences else 1)
    for n, system in enumerate(systems):
        line = sorted((r for r in rows if r.system == system), key=_level)
        xs = [r.level for r in line]
        axes[0].plot(xs, [r.value for r in line], color=colours[system], marker=MARKERS[n % len(MARKERS)], label=system)
        if _has_ci(line):
            banded = [r for r in line if r.ci_low is not None and r.ci_high is not None]
            axes[0].fill_between([r.level for r in banded], [r.ci_low for r in banded], [r.ci_high for r in banded],
                                 color=colours[system], alpha=0.15, linewidth=0)
    axes[0].set_title(what)
    axes[0].set_ylabel(rows[0].metric)
    if differences:
        first = systems[0]
        axes[1].axhline(0, color="#444444", linewidth=0.8)
        for n, system in enumerate(systems[1:], start=1):
            name = f"{system} − {first}"
            line = sorted((r for r in differences if r.system == name), key=_level)
            axes[1].plot([r.level for r in line], [r.value for r in line], color=colours[system],
                         marker=MARKERS[n % len(MARKERS)], label=name)
        axes[1].set_title(f"difference to {first}")
        axes[1].set_ylabel(f"system − {first}")
    for ax in axes:
        ax.set_xlabel("level λ")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(True, axis="both")
    handles = [Line2D([], [], color=colours[s], marker=MARKERS[n % len(MARKERS)], label=s) for n, s in enumerate(systems)]
    fig.legend(handles=handles, title="system", loc="outside right upper")
    return fig


# --- (e) rank agreement -----------------------------------------------------------------------

def _agreement(results: Results, notes: list[str]) -> list[Plot]:
    measures = list(dict.fromkeys(m for a in results.agreement for m in (a.measure_a, a.measure_b)))
    if len(measures) < 2 or agreement_note(results) is not None:  # the pages say why
        return []
    if len(measures) > MAX_MEASURES:
        chosen, fixed = _narrow(measures)
        which = f"those with {fixed}" if fixed else "the first ones"
        notes.append(f"Kendall τ matrix: {len(chosen)} of {len(measures)} measures are drawn ({which}); "
                     "the agreement table holds every pair.")
        measures = chosen
    counts = sorted({a.n_systems for a in results.agreement})
    systems = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
    return [Plot(
        name="agreement",
        kind="agreement",
        title="Rank agreement",
        caption=(f"Kendall's τ between the system rankings of each pair of measures ({systems} systems): "
                 "1 ranks the systems identically, −1 in reverse. Blue agrees, red disagrees."),
        alt=(f"Symmetric matrix heatmap of Kendall's tau between {len(measures)} measures "
             f"({_words([m.label() for m in measures])}), values from −1 (red) to 1 (blue), annotated."),
        draw=partial(_draw_agreement, results, measures),
    )]


def _narrow(measures: list[Measure]) -> tuple[list[Measure], str]:
    """At most MAX_MEASURES measures for the τ matrix: measures of the same parts are narrowed
    to those sharing the first measure's last parts (its metric, then its averaging…), so that
    the matrix compares like with like (e.g. every T-norm at micro F1); otherwise the first ones."""
    split = [_parts(m) for m in measures]
    chosen = list(range(len(measures)))
    fixed: list[str] = []
    if len({tuple(k for k, _ in parts) for parts in split}) == 1:
        for i in reversed(range(len(split[0]))):
            if len(chosen) <= MAX_MEASURES:
                break
            value = split[chosen[0]][i]
            narrowed = [j for j in chosen if split[j][i] == value]
            if len(narrowed) >= 2 and len(narrowed) < len(chosen):
                chosen, fixed = narrowed, [value[1], *fixed]
    return [measures[j] for j in chosen[:MAX_MEASURES]], " · ".join(fixed)


def _parts(measure: Measure) -> list[tuple[str, str]]:
    """(part, shown value) of a measure, the sweep value last."""
    parts = [(k, f"λ={v}" if k == "level" else str(v)) for k, v in measure.parts()]
    if measure.sweep is not None and measure.sweep_value is not None:
        parts.append(("sweep_value", f"{measure.sweep}={measure.sweep_value:g}"))
    return parts


def _draw_agreement(results: Results, measures: list[Measure]) -> Figure:
    diverging = _colours(DIVERGING)
    index = {m: i for i, m in enumerate(measures)}
    n = len(measures)
    matrix = np.full((n, n), np.nan)
    np.fill_diagonal(matrix, 1.0)
    for a in results.agreement:
        if a.measure_a in index and a.measure_b in index:
            i, j = index[a.measure_a], index[a.measure_b]
            matrix[i, j] = matrix[j, i] = a.tau
    shared, names = _common_parts(measures)
    longest = max(len(m) for m in names)
    side = min(max(2.0 + 0.42 * n + longest * 0.065, 4.5), MAX_WIDTH - 1.2)
    fig = _figure(side + 1.2, side)
    ax = fig.subplots()
    image = ax.imshow(np.ma.masked_invalid(matrix), cmap=diverging, vmin=-1, vmax=1)
    if n <= 16:
        for (i, j), tau in np.ndenumerate(matrix):
            if not math.isnan(tau):
                ax.text(j, i, f"{tau:.2f}", ha="center", va="center", fontsize=7.5,
                        color=_text_colour(diverging((tau + 1) / 2)))
    ax.set_xticks(range(n), names, rotation=40, ha="right", rotation_mode="anchor")
    ax.set_yticks(range(n), names)
    ax.tick_params(length=0)
    ax.grid(False)
    for spine in ax.spines.values():
        spine.set_visible(False)
    fig.colorbar(image, ax=ax, shrink=0.8, label="Kendall's τ", ticks=[-1, -0.5, 0, 0.5, 1])
    ax.set_title("Kendall's τ between system rankings" + (f"\n(all {shared})" if shared else ""))
    return fig


def _common_parts(measures: list[Measure]) -> tuple[str, list[str]]:
    """The parts every measure shares (said once, in the title), and each name without them."""
    split = [_parts(m) for m in measures]
    if len({tuple(k for k, _ in parts) for parts in split}) != 1 or len(split[0]) < 2:
        return "", [m.label() for m in measures]
    same = [i for i in range(len(split[0])) if len({parts[i] for parts in split}) == 1]
    if len(same) == len(split[0]):
        return "", [m.label() for m in measures]
    names = [" · ".join(v for i, (_, v) in enumerate(parts) if i not in same) for parts in split]
    return " · ".join(split[0][i][1] for i in same), names


# --- (f) curves of data metrics (PSD-ROC) --------------------------------------------------------

def _curves(results: Results, colours: dict[str, str], notes: list[str]) -> list[Plot]:
    groups = list(_group_curves(results.curves).items())
    groups = _cap(groups, MAX_SWEEP_FIGURES, "Curves", notes, "the JSON report holds every point")
    plots = []
    for metric, curves in groups:
        systems = list(dict.fromkeys(c.system for c in curves))
        panels = list(dict.fromkeys((c.class_, c.sweep_value) for c in curves))
        if len(panels) > MAX_PANELS:
            notes.append(f"Curves of {metric}: the first {MAX_PANELS} of {len(panels)} panels are drawn.")
        first = curves[0].curve
        per = " one panel per class," if any(c.class_ is not None for c in curves) else ""
        plots.append(Plot(
            name=_slug("curve", metric),
            kind="curve",
            title=metric,
            caption=f"{metric}: {first.y_label} against {first.x_label},{per} one line per system.",
            alt=f"Curves of {first.y_label} against {first.x_label} for {_words(systems)}.",
            draw=partial(_draw_curves, metric, curves, panels[:MAX_PANELS], colours),
        ))
    return plots


def _group_curves(curves: Iterable[CurveRow]) -> dict[str, list[CurveRow]]:
    grouped: dict[str, list[CurveRow]] = {}
    for c in curves:
        grouped.setdefault(visible(c.metric), []).append(c)
    return grouped


def _draw_curves(metric: str, curves: list[CurveRow], panels: list[tuple], colours: dict[str, str]) -> Figure:
    from matplotlib.lines import Line2D

    ncols = min(len(panels), 3)
    nrows = math.ceil(len(panels) / ncols)
    fig = _figure(ncols * 4.2 + 1.6, nrows * 3.2 + 0.5)
    axes = _axes_grid(fig, len(panels), ncols)
    first = curves[0].curve
    for i, (ax, (class_, step)) in enumerate(zip(axes, panels)):
        for c in (c for c in curves if (c.class_, c.sweep_value) == (class_, step)):
            ax.plot(c.curve.x, c.curve.y, drawstyle="steps-post" if c.curve.steps else "default",
                    color=colours.get(c.system, PALETTE[0]), label=visible(c.system))
        if i >= len(panels) - ncols:
            ax.set_xlabel(first.x_label)
        if i % ncols == 0:
            ax.set_ylabel(first.y_label)
        ax.grid(True, axis="both")
        ax.set_ylim(-0.02, 1.02)  # rates
        title = _join([visible(class_) if class_ is not None else None, f"{step:g}" if step is not None else None])
        if title:
            ax.set_title(title)
    handles = [Line2D([], [], color=colours.get(s, PALETTE[0]), label=visible(s))
               for s in dict.fromkeys(c.system for c in curves)]
    fig.legend(handles=handles, loc="outside right upper")
    fig.suptitle(metric)
    return fig


# --- (i) the worst files' events on a timeline -------------------------------------------------

REFERENCE_COLOUR = "#555555"


def _timelines(results: Results, colours: dict[str, str]) -> list[Plot]:
    """One figure per system whose worst files (``per_sample: true``) have events: a panel per
    file, each class's reference events drawn above the system's."""
    kept = {(t.system, t.sample): t for t in results.timelines}
    plots = []
    for system, (block, worst) in results.worst_samples().items():
        files = [(kept[system, sample], value) for sample, value in worst if (system, sample) in kept]
        if not files:
            continue
        measure = _join([block.metric, block.representation, block.similarity, block.tnorm])
        listed = "; ".join(f"{visible(t.sample)} ({block.metric} {_number(v)})" for t, v in files)
        plots.append(Plot(
            name=_slug("timeline", system),
            kind="timeline",
            title=f"Worst files of {system}",
            caption=(f"The {len(files)} files where {system} scores worst by {measure}, worst first: each class's "
                     "reference events (grey, above) and the system's (below), in seconds."),
            alt=(f"Timelines of {len(files)} files of system {visible(system)}, one panel each, each class's reference "
                 f"events drawn above the system's: {listed}."),
            draw=partial(_draw_timelines, visible(system), block.metric, files, colours.get(system, PALETTE[0])),
        ))
    return plots


def _draw_timelines(system: str, metric: str, files: list[tuple[Any, float]], colour: str) -> Figure:
    from matplotlib.patches import Patch

    heights = [max(1, len({c for c, _, _ in (*t.reference, *t.prediction)})) for t, _ in files]
    fig = _figure(MAX_WIDTH, sum(0.55 * h + 0.6 for h in heights) + 0.6)
    axes = fig.subplots(len(files), 1, squeeze=False, height_ratios=heights).ravel().tolist()
    for ax, (timeline, value) in zip(axes, files):
        classes = sorted({c for c, _, _ in (*timeline.reference, *timeline.prediction)})
        for row, name in enumerate(classes):  # class 0 at the top; its reference lane above its system lane
            for lane, events, shade in ((0, timeline.reference, REFERENCE_COLOUR), (1, timeline.prediction, colour)):
                spans = [(onset, offset - onset) for c, onset, offset in events if c == name]
                ax.broken_barh(spans, (row + lane * 0.42 + 0.08, 0.36), facecolors=shade)
        ax.set_yticks([row + 0.5 for row in range(len(classes))], [visible(c) for c in classes])
        ax.set_ylim(len(classes) or 1, 0)
        ax.set_xlim(left=0)
        ax.grid(True, axis="x")
        ax.grid(False, axis="y")
        ax.set_title(f"{visible(timeline.sample)} · {metric} {_number(value)}", loc="left")
    axes[-1].set_xlabel("time (s)")
    fig.legend(handles=[Patch(color=REFERENCE_COLOUR, label="reference"), Patch(color=colour, label=system)],
               loc="outside right upper")
    fig.suptitle(f"Worst files of {system}")
    return fig
