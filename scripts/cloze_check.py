"""Fill-the-mask on plain cloze sentences with the shipped Live-model twins (and their baselines): how often
the right word is in the top 5. A maintainer's check of the shipped checkpoints, run after `make reference`;
the figures go to docs/lab.md ("The Live model page's twins").

    python scripts/cloze_check.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# (sentence with one [MASK], the word that belongs there): ordinary sentences about Python's own topics
CLOZE = (
    ("Open the [MASK] before you read from it.", "file"),
    ("The default [MASK] is None.", "value"),
    ("This function returns a [MASK] of strings.", "list"),
    ("Raise an [MASK] if the argument is invalid.", "exception"),
    ("The [MASK] statement is used to import a module.", "import"),
    ("Each key in a dictionary maps to a [MASK].", "value"),
    ("A for [MASK] repeats the body for every item.", "loop"),
    ("The method is called when the object is [MASK].", "created"),
    ("Write the data to the [MASK] and close it.", "file"),
    ("The name of the [MASK] is given as a string.", "module"),
    ("If the list is empty, the function returns [MASK].", "none"),
    ("The [MASK] argument must be an integer.", "first"),
)


def main() -> int:
    from albert_core.interop import load_pretrained_folder
    from albert_core.lab.reference import REFERENCE_DIR, live_twins
    from ui import live_lab

    for label, spec in live_twins().items():
        folder = Path(REFERENCE_DIR) / "checkpoints" / spec.key
        model = load_pretrained_folder(folder, allowed_roots=[folder.parent], batch=1, seq_len=spec.seq_len)
        hits, distinct = 0, set()
        for text, word in CLOZE:
            top = live_lab.fill_mask(model, folder, text, spec.seq_len)["token"].tolist()
            words = [t.removeprefix("▁").removeprefix("##").lower() for t in top]
            hits += word in words
            distinct.add(tuple(top))
            print(f"{label[:6]:6s} {'+' if word in words else ' '} {text:55s} {' '.join(top)}")
        print(f"{label}: the right word in the top 5 for {hits} of {len(CLOZE)}; {len(distinct)} different top-5 lists\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
