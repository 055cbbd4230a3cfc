"""A real subword tokenizer for the live model, trained from text this package ships (never downloaded).

For V >= LAB_MIN_VOCAB it is the pretraining lab's tokenizer of the model's family (Unigram for ALBERT,
WordPiece for BERT, trained on CPython's documentation; the largest shipped size <= V). Below that:

The shipped tokenizer is an uncased WordPiece (BERT's algorithm) trained with the `tokenizers` library on
`albert_core/text/data/corpus.txt`. Training is deterministic, so the same text gives the same ids in every process.
Its vocabulary never exceeds the model's V: it is trained for min(V, MAX_VOCAB) entries and, when V is smaller
than the character alphabet the trainer always keeps, cut to the first V ids (specials, then the most useful
pieces); words needing a cut piece become [UNK]. A checkpoint folder's own tokenizer (tokenizer.json,
vocab.txt or spiece.model) is used instead when given.

Imports neither torch nor transformers unless a checkpoint tokenizer is requested.
"""

from __future__ import annotations

import functools
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from albert_core.checks import check_whole_number
from albert_core.configuration.config import ModelConfig
from albert_core.configuration.workload import check_seq_len

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")  # ids 0..4 in the shipped tokenizer
LAB_MIN_VOCAB = 512  # from this V on, the lab's tokenizers (albert_core.text.tokenizers.SHIPPED_VOCAB_SIZES[0])
MAX_VOCAB = 8_000  # the shipped corpus saturates well below this; bounds training time and the cache
CORPUS = Path(__file__).parent / "data" / "corpus.txt"
# Every printable ASCII character is in the alphabet, so digits and punctuation never become [UNK].
_SPACE = "\u2581"  # SentencePiece's word-start marker
_ALPHABET = sorted(set(string.ascii_lowercase + string.digits + string.punctuation))


@dataclass(frozen=True)
class Encoded:
    """One tokenized sequence: `[CLS] A [SEP]` or `[CLS] A [SEP] B [SEP]` (segment ids 0 for A, 1 for B)."""

    ids: list[int]
    tokens: list[str]
    token_type_ids: list[int]
    attention_mask: list[int]
    source: str  # which tokenizer produced it, for display

    def __len__(self) -> int:
        return len(self.ids)

    def tensors(self, type_vocab_size: int | None = None) -> dict[str, Any]:
        """Model keyword arguments as (1, T) int64 tensors. For a model with fewer than two token types
        (``type_vocab_size``: RoBERTa's one, ModernBERT's none) the segment ids are left out, as their tokenizers
        leave them out."""
        import torch

        out = {
            "input_ids": torch.tensor([self.ids], dtype=torch.long),
            "token_type_ids": torch.tensor([self.token_type_ids], dtype=torch.long),
            "attention_mask": torch.tensor([self.attention_mask], dtype=torch.long),
        }
        if type_vocab_size is not None and type_vocab_size < 2:
            del out["token_type_ids"]
        return out


def shipped_vocab_size(cfg_vocab_size: int) -> int:
    """The vocabulary size trained for a model with V = cfg_vocab_size (before any cut)."""
    return min(cfg_vocab_size, MAX_VOCAB)


@functools.lru_cache(maxsize=8)
def shipped_tokenizer(vocab_size: int):
    """The shipped WordPiece tokenizer with at most `vocab_size` entries (a `tokenizers.Tokenizer`)."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers

    check_whole_number("vocab_size", vocab_size, len(SPECIAL_TOKENS),
                       why=f" to tokenize text (the special tokens {' '.join(SPECIAL_TOKENS)})")
    pieces = _trained_pieces(shipped_vocab_size(vocab_size))
    # Specials first, then single characters (so a cut for a tiny V keeps the alphabet), then the rest.
    order = list(SPECIAL_TOKENS) + sorted(pieces - set(SPECIAL_TOKENS), key=lambda p: (len(p.lstrip("#")), p))
    vocab = {piece: i for i, piece in enumerate(order[:vocab_size])}
    tok = Tokenizer(models.WordPiece(vocab=vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    return tok


def _trained_pieces(size: int) -> set[str]:
    """The WordPiece vocabulary (a set: ids are assigned canonically by the caller).

    The `tokenizers` WordPiece/BPE trainers break ties between equally frequent pairs in hash-map order,
    which changes from process to process; its Unigram trainer (SentencePiece's algorithm, which ALBERT
    itself uses) selects the same piece set every time. So the pieces come from the Unigram trainer and
    are applied with WordPiece's greedy longest-match, whose result depends only on the set.
    """
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    def train(n: int) -> list[str]:
        tok = Tokenizer(models.Unigram())
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.BertPreTokenizer(), pre_tokenizers.Metaspace()])
        trainer = trainers.UnigramTrainer(
            vocab_size=n, special_tokens=list(SPECIAL_TOKENS), unk_token="[UNK]",
            initial_alphabet=_ALPHABET, show_progress=False,
        )
        tok.train_from_iterator(CORPUS.read_text(encoding="utf-8").splitlines(), trainer)
        return list(tok.get_vocab())

    try:
        trained = train(size)
    except Exception:  # noqa: BLE001 - the trainer raises a bare Exception when n < the alphabet
        trained = train(MAX_VOCAB)
    pieces = set(SPECIAL_TOKENS)
    for p in trained:
        if p in SPECIAL_TOKENS or p == _SPACE:
            continue
        # SentencePiece marks word starts with U+2581; WordPiece marks continuations with "##".
        pieces.add(p[1:] if p.startswith(_SPACE) else "##" + p)
    for ch in _ALPHABET:  # every character both at a word start and inside a word
        pieces.update((ch, "##" + ch))
    return pieces


@functools.lru_cache(maxsize=4)
def checkpoint_tokenizer(folder: str):
    """A saved checkpoint's own tokenizer (transformers, local files only), or None if it has none."""
    path = Path(folder)
    names = ("tokenizer.json", "vocab.txt", "spiece.model")
    if not path.is_dir() or not any((path / n).is_file() for n in names):
        return None
    from transformers import AutoTokenizer, BertTokenizer, PreTrainedTokenizerFast

    try:
        if not (path / "tokenizer_config.json").is_file():
            # Bare files carry no special-token roles: assume BERT/ALBERT's names ([CLS], [SEP], ...).
            if (path / "tokenizer.json").is_file():
                roles = {f"{r}_token": f"[{r.upper()}]" for r in ("pad", "unk", "cls", "sep", "mask")}
                return PreTrainedTokenizerFast(tokenizer_file=str(path / "tokenizer.json"), **roles)
            if (path / "vocab.txt").is_file():
                return BertTokenizer(str(path / "vocab.txt"), do_lower_case=True)
        return AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    except (OSError, ValueError, TypeError) as exc:
        raise ValueError(f"checkpoint {path} has tokenizer files that cannot be loaded: {exc}") from None


def encode(
    text: str,
    cfg: ModelConfig,
    max_len: int = 128,
    text_pair: str | None = None,
    checkpoint: str | Path | None = None,
) -> Encoded:
    """Tokenize `text` (and optionally a second segment `text_pair`, for SOP/NSP) for the model `cfg`.

    The result has at most `max_len` tokens including [CLS]/[SEP]; when too long, the longer segment is cut
    from its end first (transformers' "longest_first"). Every id is < cfg.vocab_size. No padding.
    """
    if not isinstance(text, str) or (text_pair is not None and not isinstance(text_pair, str)):
        raise ValueError("text and text_pair must be strings")
    specials = 3 if text_pair is not None else 2
    check_whole_number("max_len", max_len, specials, why=" (room for [CLS] and [SEP])")
    check_seq_len(cfg, max_len)

    hf = checkpoint_tokenizer(str(Path(checkpoint).resolve())) if checkpoint is not None else None
    if hf is not None:
        pieces = _hf_pieces(hf)
        vocab_size = len(hf)
        source = f"checkpoint tokenizer ({type(hf).__name__}, {vocab_size:,} entries)"
        if vocab_size > cfg.vocab_size:
            raise ValueError(
                f"vocab_size ({cfg.vocab_size:,}) is smaller than the checkpoint tokenizer's "
                f"vocabulary ({vocab_size:,} entries)"
            )
    elif cfg.vocab_size >= LAB_MIN_VOCAB:
        from albert_core.text.tokenizers import model_tokenizer, tokenizer_kind

        tok = model_tokenizer(cfg.family, cfg.vocab_size)  # the pretraining lab's, trained on its corpus
        pieces = _shipped_pieces(tok)
        kind = {"unigram": "Unigram", "wordpiece": "WordPiece"}[tokenizer_kind(cfg.family)]
        source = f"lab {kind} tokenizer ({tok.get_vocab_size():,} entries, trained on CPython's documentation)"
    else:  # fewer embedding rows than the smallest lab tokenizer: the small shipped WordPiece, cut to V
        tok = shipped_tokenizer(cfg.vocab_size)
        pieces = _shipped_pieces(tok)
        source = f"shipped WordPiece ({tok.get_vocab_size():,} entries)"

    split, cls_id, sep_id = pieces
    a = split(text)
    b = split(text_pair) if text_pair is not None else []
    budget = max_len - specials
    while len(a) + len(b) > budget:  # longest_first truncation (ties cut B, as transformers)
        (a if len(a) > len(b) else b).pop()

    pairs = [("[CLS]", cls_id), *a, ("[SEP]", sep_id)]
    types = [0] * len(pairs)
    if text_pair is not None:
        pairs += [*b, ("[SEP]", sep_id)]
        types += [1] * (len(b) + 1)
    tokens = [t for t, _ in pairs]
    ids = [i for _, i in pairs]
    if max(ids) >= cfg.vocab_size:  # cannot happen by construction; a wrong id would index out of range
        raise ValueError(f"token id {max(ids)} is not below vocab_size ({cfg.vocab_size})")
    return Encoded(ids, tokens, types, [1] * len(ids), source)


def _shipped_pieces(tok):
    def split(s: str) -> list[tuple[str, int]]:
        enc = tok.encode(s, add_special_tokens=False)
        return list(zip(enc.tokens, enc.ids, strict=True))

    return split, tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")


def _hf_pieces(hf):
    if hf.cls_token_id is None or hf.sep_token_id is None:
        raise ValueError("the checkpoint tokenizer must define cls_token and sep_token")

    def split(s: str) -> list[tuple[str, int]]:
        tokens = hf.tokenize(s)
        return list(zip(tokens, hf.convert_tokens_to_ids(tokens), strict=True))

    return split, hf.cls_token_id, hf.sep_token_id
