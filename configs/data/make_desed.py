"""Make a small DESED-style data set: event lists, score files and audio durations.

Seeded, so re-running it reproduces the committed files byte for byte:

    python configs/data/make_desed.py            # writes configs/data/desed/
    python configs/data/make_desed.py OUT_DIR    # writes OUT_DIR/desed/

desed/ holds what a DCASE task 4 (DESED) evaluation reads, in its layouts:

- ``reference.tsv``: the reference events, ``filename onset offset event_label`` with a header,
  of 12 clips with the 10 DESED classes; events of one class in one clip never overlap or
  touch (PSDS counts them one by one). One clip has no events (a row with only its name).
- ``durations.tsv``: ``filename duration``; most clips last 10 s, two are shorter.
- ``baseline/`` and ``weak/``: one score file per clip, as sed_scores_eval writes them
  (``<clip>.tsv``, header ``onset offset <classes>``, frames of 0.128 s up to the clip's end):
  a smoothed posterior per class. The baseline rises over the reference events with blurred
  boundaries and a few false alarms; the weak system is later, noisier and confuses classes.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

SEED = 20200401
CLASSES = (
    "Alarm_bell_ringing", "Blender", "Cat", "Dishes", "Dog",
    "Electric_shaver_toothbrush", "Frying", "Running_water", "Speech", "Vacuum_cleaner",
)
CLIPS = [f"Y{i:02d}desed_clip.wav" for i in range(12)]
SILENT_CLIP = CLIPS[5]
SHORT_CLIPS = {CLIPS[3]: 7.5, CLIPS[9]: 9.216}
HOP = 0.128


def reference(rng: np.random.Generator) -> dict[str, list[tuple[float, float, str]]]:
    """Per clip, one to three classes with one or two events each, none overlapping in a class;
    every class in some clip (PSDS needs reference events of each)."""
    events: dict[str, list[tuple[float, float, str]]] = {}
    for k, clip in enumerate(CLIPS):
        duration = SHORT_CLIPS.get(clip, 10.0)
        events[clip] = []
        if clip == SILENT_CLIP:
            continue
        others = [c for c in CLASSES if c != CLASSES[k % len(CLASSES)]]
        labels = [CLASSES[k % len(CLASSES)], *rng.choice(others, size=int(rng.integers(0, 3)), replace=False)]
        for label in labels:
            t = float(rng.uniform(0, 3))
            for _ in range(int(rng.integers(1, 3))):
                onset = round(t, 3)
                offset = round(min(onset + float(rng.uniform(0.4, 4.0)), duration), 3)
                if offset - onset < 0.3:
                    break
                events[clip].append((onset, offset, str(label)))
                t = offset + float(rng.uniform(0.5, 3.0))
                if t > duration - 0.5:
                    break
    return events


def scores(
    rng: np.random.Generator, events: list[tuple[float, float, str]], duration: float, skill: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Frame times and a posterior per class: the events' activity, shifted and blurred by the
    system's lack of ``skill`` (1 good, 0 poor), with noise, false alarms and confusions."""
    frames = int(np.ceil(duration / HOP))
    times = np.round(np.r_[np.arange(frames) * HOP, duration], 6)
    centre = (times[:-1] + times[1:]) / 2
    activity = np.zeros((frames, len(CLASSES)))
    lag = (1 - skill) * 0.4
    for onset, offset, label in events:
        c = CLASSES.index(label)
        target = c if rng.random() < 0.8 + 0.2 * skill else int(rng.integers(len(CLASSES)))
        active = (centre >= onset + lag) & (centre < offset + lag)
        activity[:, target] = np.maximum(activity[:, target], active * rng.uniform(0.6, 1.0))
    for _ in range(int(rng.poisson(2.5 - 1.5 * skill))):  # false alarms
        c, at = int(rng.integers(len(CLASSES))), float(rng.uniform(0, duration))
        active = (centre >= at) & (centre < at + rng.uniform(0.3, 1.5))
        activity[:, c] = np.maximum(activity[:, c], active * rng.uniform(0.4, 0.9))
    width = 1 + int(round((1.5 - skill) * 3))
    kernel = np.ones(width) / width
    smooth = np.apply_along_axis(lambda column: np.convolve(column, kernel, mode="same"), 0, activity)
    noisy = smooth + rng.normal(0, 0.08 + 0.1 * (1 - skill), smooth.shape)
    return times, np.round(np.clip(noisy, 0, 1), 3)


def write_scores(path: Path, times: np.ndarray, values: np.ndarray) -> None:
    lines = ["\t".join(("onset", "offset", *CLASSES))]
    for onset, offset, row in zip(times[:-1], times[1:], values):
        lines.append("\t".join(repr(float(v)) for v in (onset, offset, *row)))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", newline="\n")


def main(out: Path) -> None:
    rng = np.random.default_rng(SEED)
    root = out / "desed"
    events = reference(rng)
    lines = ["filename\tonset\toffset\tevent_label"]
    for clip, listed in events.items():
        lines += [f"{clip}\t{onset!r}\t{offset!r}\t{label}" for onset, offset, label in sorted(listed)] or [clip]
    root.mkdir(parents=True, exist_ok=True)
    (root / "reference.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8", newline="\n")
    durations = ["filename\tduration", *(f"{clip}\t{SHORT_CLIPS.get(clip, 10.0)!r}" for clip in CLIPS)]
    (root / "durations.tsv").write_text("\n".join(durations) + "\n", encoding="utf-8", newline="\n")
    for system, skill in (("baseline", 0.8), ("weak", 0.5)):
        (root / system).mkdir(exist_ok=True)
        for clip in CLIPS:
            times, values = scores(rng, events[clip], SHORT_CLIPS.get(clip, 10.0), skill)
            write_scores(root / system / f"{clip[: -len('.wav')]}.tsv", times, values)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent)
