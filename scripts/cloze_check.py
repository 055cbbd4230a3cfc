"""Fill-the-mask on plain cloze sentences with the shipped Live-model twins (or any run folders): how often
the right word (or, for a word the tokenizer splits, its first piece: all one [MASK] can hold) is in the top 5. A maintainer's check of the shipped checkpoints, run after `make reference`;
the figures go to docs/lab.md ("The Live model page's twins").

    python scripts/cloze_check.py                     # the shipped twins
    python scripts/cloze_check.py web=/tmp/run-folder   # any run's output folder (train --out)
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

# everyday English, written before any model trained on English prose was tried on them (several right words
# are accepted where the sentence allows them)
EVERYDAY = (
    ("She opened the [MASK] and went out.", "door"),
    ("He drank a cup of [MASK].", "water|tea|coffee|wine|milk"),
    ("The children were hungry, so their mother gave them [MASK].", "bread|food"),
    ("They climbed the [MASK] to see the valley below.", "mountain|hill"),
    ("He wrote a [MASK] to his brother.", "letter"),
    ("At night the moon and the [MASK] give light.", "stars"),
    ("She washed her [MASK] before the meal.", "hands|face|feet"),
    ("The old man sat down in the shade of a [MASK].", "tree"),
    ("My father and my [MASK] live in the city.", "mother|brother|sister"),
    ("The boat sailed across the [MASK].", "sea|lake|river|water"),
    ("It was cold, so he lit a [MASK].", "fire|lamp|candle"),
    ("The king sat on his [MASK].", "throne"),
)


def first_pieces(tok, answers: str) -> set[str]:
    """The first piece of each accepted word under this tokenizer (the most a single [MASK] can hold), when
    it has three letters or more: a one- or two-letter piece ("s" of "sister") says nothing about the word."""
    out = set()
    for word in answers.split("|"):
        pieces = [p.removeprefix("▁").removeprefix("##").lower() for p in tok.tokenize(" " + word)]
        pieces = [p for p in pieces if p]
        if pieces and len(pieces[0]) >= 3:
            out.add(pieces[0])
    return out


def check(label: str, model, folder: Path, seq_len: int, sentences) -> tuple[int, int]:
    """(whole-word hits, first-piece hits) of ``sentences`` in the model's top 5, printing each line."""
    from albert_core.text.encoding import checkpoint_tokenizer
    from ui.live.lab_demos import fill_mask

    tok = checkpoint_tokenizer(str(folder.resolve()))
    whole = piece = 0
    distinct = set()
    for text, answers in sentences:
        top = fill_mask(model, folder, text, seq_len)["token"].tolist()
        words = {t.removeprefix("▁").removeprefix("##").lower() for t in top}
        w = bool(words & set(answers.split("|")))
        p = bool(words & first_pieces(tok, answers))
        whole, piece = whole + w, piece + p
        distinct.add(tuple(top))
        print(f"{label[:6]:6s} {'+' if w else '~' if p else ' '} {text:62s} {' '.join(top)}")
    print(f"{label}: right word in the top 5 for {whole} of {len(sentences)}, its first piece for {piece}; "
          f"{len(distinct)} different top-5 lists\n")
    return whole, piece


def main(argv: list[str] | None = None) -> int:
    """With no arguments, the shipped twins; else LABEL=FOLDER pairs (a run's output folder)."""
    from albert_core.lab.reference import REFERENCE_DIR, live_twins
    from albert_core.live.interop import load_pretrained_folder

    argv = sys.argv[1:] if argv is None else argv
    if argv:
        runs = {a.split("=", 1)[0]: (Path(a.split("=", 1)[1]), None) for a in argv}
    else:
        runs = {label: (Path(REFERENCE_DIR) / "checkpoints" / spec.key, spec.seq_len)
                for label, spec in live_twins().items()}
    for label, (folder, seq_len) in runs.items():
        if seq_len is None:
            from albert_core.lab.checkpoint import load_run

            seq_len = load_run(folder).spec.seq_len
        model = load_pretrained_folder(folder, allowed_roots=[folder.parent], batch=1, seq_len=seq_len)
        for name, sentences in (("Python topics", CLOZE), ("everyday English", EVERYDAY)):
            check(f"{label} ({name})", model, folder, seq_len, sentences)
    return 0


if __name__ == "__main__":
    sys.exit(main())
