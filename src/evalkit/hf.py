"""Hugging Face ``evaluate`` modules of evalkit's metrics, shipped inside the package.

``evaluate.load`` takes a local path, so the modules load offline, with no hub:

    import evaluate
    import evalkit.hf

    f1 = evaluate.load(evalkit.hf.module("fuzzy_f1"))
    for refs, preds in batches:                    # memberships: one list of floats per sample
        f1.add_batch(predictions=preds, references=refs)
    f1.compute(tnorm="product", averaging="macro")  # {'f1': 0.83...}

Each module (``evalkit/hf_modules/NAME.py``) is a subclass of :class:`EvalkitModule` naming its
metrics and its text; ``evaluate`` buffers what ``add``/``add_batch`` are given, and ``_compute``
hands all of it to :func:`evalkit.evaluate`, so the values are the Evaluator's.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, ClassVar

import datasets
import evaluate

from evalkit import api
from evalkit.config import Spec
from evalkit.errors import ConfigError

#: the folder of the module scripts, one ``NAME.py`` each
FOLDER = Path(__file__).resolve().parent / "hf_modules"


def names() -> list[str]:
    """The names of the shipped modules."""
    return sorted(path.stem for path in FOLDER.glob("*.py") if path.stem != "__init__")


def module(name: str) -> str:
    """The path of the module ``name`` (e.g. ``"fuzzy_f1"``), for ``evaluate.load``."""
    if name not in names():
        close = difflib.get_close_matches(name, names(), n=1)
        raise ConfigError(
            f"evalkit.hf.module(): no evaluate module {name!r}"
            + (f"; did you mean {close[0]!r}?" if close else ".")
            + f" The modules: {', '.join(names())}"
        )
    return str(FOLDER / f"{name}.py")


CITATIONS = {
    "harju": """@inproceedings{harju2023fuzzy,
  title = {Evaluating classification systems against soft labels with fuzzy precision and recall},
  author = {Harju, Manu and Mesaros, Annamaria},
  booktitle = {Proceedings of the Detection and Classification of Acoustic Scenes and Events 2023 Workshop (DCASE2023)},
  year = {2023}
}""",
    "franti": """@article{franti2023soft,
  title = {Soft precision and recall},
  author = {Fr{\\"a}nti, Pasi and Mariescu-Istodor, Radu},
  journal = {Pattern Recognition Letters},
  volume = {167},
  pages = {115--121},
  year = {2023}
}""",
    "mesaros": """@article{mesaros2016metrics,
  title = {Metrics for Polyphonic Sound Event Detection},
  author = {Mesaros, Annamaria and Heittola, Toni and Virtanen, Tuomas},
  journal = {Applied Sciences},
  volume = {6},
  number = {6},
  pages = {162},
  year = {2016}
}""",
    "liu": """@inproceedings{liu2023ontology,
  title = {Ontology-aware learning and evaluation for audio tagging},
  author = {Liu, Haohe and Kong, Qiuqiang and Liu, Xubo and Mei, Xinhao and Wang, Wenwu and Plumbley, Mark D.},
  booktitle = {Proceedings of Interspeech 2023},
  year = {2023}
}""",
}

#: the description of the set metrics' modules, each with its own first sentence
FUZZY = """{what}, computed on soft labels as fuzzy sets (Harju & Mesaros): each sample's memberships in
[0, 1] are a fuzzy set, its size the sum of its memberships, and the intersection of reference G and
prediction P their elementwise T-norm (minimum by default). On 0/1 labels every T-norm gives
scikit-learn's multi-label value. Choose the T-norm, the representation (fuzzy, or crisp at 0.5) and
the averaging (micro, macro, weighted, samples, none) as compute() arguments. The whole of evalkit
(evalkit.Evaluator) computes it: add_batch() buffers the rows, compute() scores them all at once."""

#: the inputs of every module, and the keywords of evalkit.evaluate() that compute() passes on
INPUTS = """
Args:
    predictions: one row per sample: a list of floats, one per class (memberships in [0, 1] for
        set metrics, any finite scores for mAP and OmAP); a single float per sample is one class.
    references: the same shape: memberships in [0, 1] (soft labels, or 0/1).
    representation: "fuzzy" (default: Harju & Mesaros's fuzzy sets) or "crisp" (0.5 thresholds),
        a name or {"name": ..., **params} as in a config.
    tnorm: the intersection's T-norm: "minimum" (default), "product", "lukasiewicz",
        {"name": "hamacher", "p": 0.5}, ... (`evalkit plugins --kind tnorm`).
    averaging: "micro" (default), "macro", "weighted", "samples" or "none" (one value per class).
    zero_division: the value of 0/0 (default 0.0), or "nan".
    classes: the class names, one per column (default "0", "1", ...).
    sample_weight: one weight per sample.
    metrics: some of the module's metrics (default: all of them), e.g. the error rates without
        substitution_rate under class-wise averaging, where it has no value.
    mAP and OmAP also take their metric's parameters (`evalkit plugins omap`): ontology= (required
        for omap), no_positive=, ...
Returns:
    {metric: value}: a float, or {class (or level): float} where the metric has one value per
    class (averaging="none") or per level (OmAP).
"""


class EvalkitModule(evaluate.Metric):
    """An ``evaluate`` metric computed by :func:`evalkit.evaluate` on everything added."""

    #: the evalkit metrics computed, by name
    metrics: ClassVar[tuple[str, ...]]
    #: what the model card says it is, and which papers to cite
    description: ClassVar[str]
    cite: ClassVar[tuple[str, ...]] = ("harju",)
    #: the keywords of compute() that are the metrics' own parameters (the rest are evaluate()'s)
    parameters: ClassVar[tuple[str, ...]] = ()

    def _info(self) -> evaluate.MetricInfo:
        def rows(value: Any) -> datasets.Features:
            return datasets.Features({"predictions": value, "references": value})

        return evaluate.MetricInfo(
            description=self.description,
            citation="\n\n".join(CITATIONS[key] for key in self.cite),
            inputs_description=INPUTS,
            # many classes (a list of floats per sample) or one (a float per sample)
            features=[rows(datasets.Sequence(datasets.Value("float64"))), rows(datasets.Value("float64"))],
            license="MIT",
        )

    def _compute(self, *, predictions: Any, references: Any, metrics: Any = None, **options: Any) -> dict[str, Any]:
        chosen = list(self.metrics) if metrics is None else [metrics] if isinstance(metrics, str) else list(metrics)
        if not chosen or set(chosen) - set(self.metrics):
            raise ConfigError(
                f"{self.name}: metrics={metrics!r}: give some of {', '.join(map(repr, self.metrics))} (default: all)"
            )
        params = {key: options.pop(key) for key in self.parameters if key in options}
        specs: list[Spec] = [{"name": name, **params} if params else name for name in chosen]
        values = api.evaluate(references, predictions, metrics=specs, **options)
        return {key: value.to_dict() if hasattr(value, "to_dict") else value for key, value in values.items()}
