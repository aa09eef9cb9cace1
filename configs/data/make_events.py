"""Make the small sound-event data sets: DCASE-style event lists and MAESTRO-style soft labels.

Seeded, so re-running it reproduces the committed files byte for byte:

    python configs/data/make_events.py            # writes configs/data/events/, configs/data/maestro/
    python configs/data/make_events.py OUT_DIR    # writes OUT_DIR/events/, OUT_DIR/maestro/

events/ (read by the ``events`` loader): a reference and two systems, ``filename onset offset
event_label`` tab-separated; 8 files of 30 s, 4 classes. The reference has a header row and one
file without events (a row with only its filename). The ``good`` system jitters boundaries a
little and rarely misses; the ``poor`` one is late, jitters a lot, misses more, splits events,
merges close ones, confuses classes and raises false alarms. Every file is listed in every list.

maestro/ (read by the ``maestro`` loader): ``reference/`` and ``system/`` folders with one file
per recording (3 recordings of 20 one-second segments), no header, ``onset offset label
soft_value`` tab-separated, 5 classes with spaces and "/" in their names. A class that does not
occur in a recording's scene has no rows there (meaning 0), and some zero rows are left out too;
every segment keeps at least its "people talking" row so that both sides have the same grid.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

SEED = 20230604

# --- event lists ---------------------------------------------------------------------------------

DURATION = 30.0
FILES = [f"{scene}_{i:02d}.wav" for scene in ("street", "park", "home", "office") for i in (1, 2)]
EMPTY_FILE = "park_02.wav"  # no events in the reference
#: class -> (mean events per file, shortest and longest duration in seconds)
EVENT_CLASSES = {"alarm": (1.0, 1.0, 3.0), "car": (1.5, 2.0, 7.0), "dog": (2.0, 0.3, 1.5), "speech": (2.5, 1.0, 4.0)}

Event = tuple[str, float, float, str]


def reference_events(rng: np.random.Generator) -> list[Event]:
    """Per file and class a few non-overlapping events, separated by at least 0.5 s."""
    events = []
    for file in FILES:
        if file == EMPTY_FILE:
            continue
        for label, (mean, shortest, longest) in EVENT_CLASSES.items():
            t = rng.uniform(0, 8)
            for _ in range(rng.poisson(mean)):
                length = rng.uniform(shortest, longest)
                if t + length > DURATION:
                    break
                events.append((file, t, t + length, label))
                t += length + rng.uniform(0.5, 12)
    return events


def system_events(
    rng: np.random.Generator, reference: list[Event], *, p_hit: float, shift: float, jitter: float,
    p_split: float, p_merge: float, p_confuse: float, false_alarms: float,
) -> list[Event]:
    out: list[Event] = []
    for file, onset, offset, label in reference:
        if rng.random() > p_hit:
            continue
        if rng.random() < p_confuse:
            label = str(rng.choice([c for c in EVENT_CLASSES if c != label]))
        onset += shift + rng.normal(0, jitter)
        offset += shift + rng.normal(0, jitter)
        onset, offset = max(onset, 0.0), min(offset, DURATION)
        if offset - onset < 0.1:
            continue
        previous = out[-1] if out else None
        if previous and previous[0] == file and previous[3] == label and onset - previous[2] < 2 and rng.random() < p_merge:
            out[-1] = (file, previous[1], max(offset, previous[2]), label)  # merged with the last one
        elif rng.random() < p_split and offset - onset > 1:
            cut = rng.uniform(onset + 0.3, offset - 0.3)
            gap = rng.uniform(0.1, 0.3)
            out += [(file, onset, cut - gap / 2, label), (file, cut + gap / 2, offset, label)]
        else:
            out.append((file, onset, offset, label))
    for file in FILES:
        for _ in range(rng.poisson(false_alarms)):
            label = str(rng.choice(list(EVENT_CLASSES)))
            onset = rng.uniform(0, DURATION - 2)
            out.append((file, onset, onset + rng.uniform(0.3, 2), label))
    return out


def write_events(path: Path, events: list[Event], header: bool) -> None:
    lines = ["filename\tonset\toffset\tevent_label"] if header else []
    ordered = sorted((file, round(on, 3), round(off, 3), label) for file, on, off, label in events)
    for file in FILES:
        rows = [e for e in ordered if e[0] == file]
        lines += [f"{f}\t{on:.3f}\t{off:.3f}\t{label}" for f, on, off, label in rows] or [file]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", newline="\n")


def make_events(rng: np.random.Generator, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    reference = reference_events(rng)
    good = system_events(rng, reference, p_hit=0.95, shift=0.0, jitter=0.15, p_split=0.05,
                         p_merge=0.2, p_confuse=0.0, false_alarms=0.25)
    poor = system_events(rng, reference, p_hit=0.65, shift=0.5, jitter=0.7, p_split=0.25,
                         p_merge=0.6, p_confuse=0.1, false_alarms=1.0)
    for events in (reference, good, poor):  # every class occurs, so the class sets agree
        assert {e[3] for e in events} == set(EVENT_CLASSES)
    write_events(out / "reference.tsv", reference, header=True)
    write_events(out / "good.tsv", good, header=False)
    write_events(out / "poor.tsv", poor, header=False)


# --- MAESTRO soft labels -------------------------------------------------------------------------

SEGMENTS, ANNOTATORS = 20, 5
SOFT_CLASSES = ["people talking", "door opens/closes", "footsteps", "car", "cutlery and dishes"]
RECORDINGS = {
    "cafe_restaurant_01": ["people talking", "cutlery and dishes", "footsteps", "door opens/closes"],
    "residential_area_01": ["people talking", "car", "footsteps"],
    "indoor_01": ["people talking", "door opens/closes", "footsteps"],
}
ALWAYS = "people talking"  # written for every segment on both sides: the grids agree


def activity(rng: np.random.Generator, n: int) -> np.ndarray:
    """A two-state Markov chain: events persist over neighbouring seconds."""
    state, out = rng.random() < 0.4, np.empty(n, bool)
    for t in range(n):
        out[t] = state
        state = state if rng.random() < 0.8 else rng.random() < 0.4
    return out


def write_soft(path: Path, rows: list[tuple[int, str, float]]) -> None:
    lines = [f"{t:.1f}\t{t + 1:.1f}\t{label}\t{value:g}" for t, label, value in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", newline="\n")


def make_maestro(rng: np.random.Generator, out: Path) -> None:
    for side in ("reference", "system"):
        (out / side).mkdir(parents=True, exist_ok=True)
    seen: dict[str, set[str]] = {"reference": set(), "system": set()}
    for recording, present in RECORDINGS.items():
        truth = np.stack([activity(rng, SEGMENTS) for _ in present], axis=1)
        # Soft reference: the mean vote of annotators who hear an active class with probability
        # 0.8 and imagine an inactive one with probability 0.08 (multiples of 0.2).
        votes = rng.random((ANNOTATORS, *truth.shape)) < np.where(truth, 0.8, 0.08)
        reference = np.round(votes.mean(axis=0), 3)
        system = np.round(np.clip(reference + rng.normal(0.05, 0.15, reference.shape), 0, 1), 3)
        for side, values in (("reference", reference), ("system", system)):
            rows = []
            for t in range(SEGMENTS):
                for c, label in enumerate(present):
                    # Leave out about a third of the zero rows (a missing row means 0).
                    if values[t, c] == 0 and label != ALWAYS and rng.random() < 0.35:
                        continue
                    rows.append((t, label, float(values[t, c])))
                    seen[side].add(label)
            write_soft(out / side / f"{recording}.txt", rows)
    assert seen["reference"] == seen["system"] == set(SOFT_CLASSES)


def main(out: Path) -> None:
    rng = np.random.default_rng(SEED)
    make_events(rng, out / "events")
    make_maestro(rng, out / "maestro")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent)
