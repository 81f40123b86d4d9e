"""bench.json's sections and their machine stamps: which sections a file may hold, which of them are stamped, and how
a partial run (`run.py --only`) replaces its sections in an earlier file."""
from __future__ import annotations

SECTIONS = ("roof", "descent", "training", "training_profile", "training_candidates", "attention", "dense", "quality",
            "generation", "context", "time_to_quality", "training_methods")


def has_stamp(name: str, sec) -> bool:
    "Whether a section carries machine stamps: its own, or for the time-to-quality sections, one per row."
    if not isinstance(sec, dict): return False
    if name == "time_to_quality":
        return all("rows" in t and all(x.get("machine") for x in t["rows"]) for t in sec.values())
    if name == "training_methods": return all(x.get("machine") for x in sec.get("rows", []))
    return bool(sec.get("machine"))


def stamped_only(r: dict) -> dict:
    """`r` without the sections that carry no machine stamp (a bench.json from before every section was stamped, or a
    result file without one) and without the keys no longer reported: old rows are dropped, not mixed with new ones."""
    return {k: v for k, v in r.items() if k not in ("updates", "circulant") and (k not in SECTIONS or has_stamp(k, v))}


def merge(r: dict, old: dict) -> dict:
    """The sections of a partial run `r` (`--only`) in place of theirs in an earlier run's bench.json `old`: whole
    sections, each keeping its own machine stamp; `old`'s sections without a stamp are dropped (`stamped_only`). Nothing of
    `old` is kept when one is a quick run and the other not."""
    old = stamped_only(old)
    if old.get("quick") != r["quick"]: return r
    return {**{k: v for k, v in r.items() if k not in SECTIONS},
            **{k: r[k] if k in r else old[k] for k in SECTIONS if k in r or k in old}}
