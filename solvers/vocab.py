"""Problems to padded tensors: the input word vocabulary, the output vocabulary and the `Batch`.

Every torch solver in solvers/ shares this encoding so that the trainer, beam search bookkeeping,
checkpoints and likelihood scoring work the same way for all of them.

Output vocabulary layout (fixed order, the decoders rely on it)::

    [ operators (+ - * / ^) | constants seen in training | N0 .. N{n_slots-1} ]

An output id ``i`` is an operator when ``i < n_ops``, a constant when ``n_ops <= i < slot_start``
and the quantity slot ``N{i - slot_start}`` otherwise. Input words are lower-cased, every quantity
token becomes ``NUM`` and words seen fewer than ``min_count`` times in training become ``<unk>``.

Quantity slots come in two kinds. A solver that points at quantities by their encoded context (GTS,
bert-gts) has a slot for every quantity of the problem at hand, however many (``n_slots`` is None):
a composition of two training problems has more quantities than either, and must stay expressible.
A solver whose slots are learned tokens (LSTM, Transformer, GPT-2) has a fixed count from its config,
raised to the training maximum; a slot no training expression used is an untrained embedding and
output row, so such a solver can emit it only by chance.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, fields
from typing import Any, Sequence

import torch

from mwp.expr import OPERATORS
from mwp.problem import Problem
from solvers.device_copy import to_device

PAD, UNK, NUM = "<pad>", "<unk>", "NUM"


class EncodingError(ValueError):
    """A problem the vocabularies cannot express; ``reason`` names why, for counting: ``unseen_constant``
    (a constant no training expression used), ``no_slot_for_quantity`` (a learned-slot solver has no
    slot that far), ``slot_beyond_quantities`` (the expression names a quantity the text lacks)."""

    def __init__(self, message: str, reason: str = "unknown_token"):
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class OutputVocab:
    constants: tuple[str, ...]  # constant tokens as mwp.expr.to_prefix writes them ("2", "0.01")
    n_slots: int | None  # quantity slots N0..N{n_slots-1}; None: one for every quantity of a problem
    operators: tuple[str, ...] = OPERATORS

    @property
    def bounded(self) -> bool:
        return self.n_slots is not None

    @property
    def tokens(self) -> tuple[str, ...]:
        """Every output token; only a vocabulary with a fixed slot count has a finite list."""
        if self.n_slots is None:
            raise TypeError("a vocabulary with a slot for every quantity has no finite token list")
        return self.operators + self.constants + tuple(f"N{i}" for i in range(self.n_slots))

    @property
    def n_ops(self) -> int:
        return len(self.operators)

    @property
    def slot_start(self) -> int:
        return self.n_ops + len(self.constants)

    def __len__(self) -> int:
        if self.n_slots is None:
            raise TypeError("a vocabulary with a slot for every quantity has no fixed size")
        return self.slot_start + self.n_slots

    def index(self, token: str) -> int:
        if _is_slot(token):
            slot = int(token[1:])
            if self.n_slots is not None and slot >= self.n_slots:
                raise EncodingError(f"quantity slot {token} beyond the solver's {self.n_slots} slots",
                                    "no_slot_for_quantity")
            return self.slot_start + slot
        lookup = self.__dict__.get("_lookup")
        if lookup is None:
            lookup = {t: i for i, t in enumerate(self.operators + self.constants)}
            object.__setattr__(self, "_lookup", lookup)
        if token not in lookup:
            reason = "unknown_operator" if token in OPERATORS else "unseen_constant"
            raise EncodingError(f"output token {token!r} is not in the vocabulary", reason)
        return lookup[token]

    def token(self, index: int) -> str:
        if index < 0 or (self.n_slots is not None and index >= len(self)):
            raise IndexError(f"output id {index} outside the vocabulary")
        if index >= self.slot_start:
            return f"N{index - self.slot_start}"
        return self.operators[index] if index < self.n_ops else self.constants[index - self.n_ops]

    def to_dict(self) -> dict[str, Any]:
        return {"operators": list(self.operators), "constants": list(self.constants), "n_slots": self.n_slots}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "OutputVocab":
        n_slots = data["n_slots"]
        return cls(constants=tuple(data["constants"]), n_slots=None if n_slots is None else int(n_slots),
                   operators=tuple(data["operators"]))


def _is_slot(token: str) -> bool:
    return token[:1] == "N" and token[1:].isdigit()


@dataclass(frozen=True)
class InputVocab:
    words: tuple[str, ...]  # id -> word; 0 is <pad>, 1 is <unk>, 2 is NUM

    def __len__(self) -> int:
        return len(self.words)

    def ids(self, tokens: Sequence[str], quantity_positions: Sequence[int]) -> list[int]:
        lookup = self.__dict__.get("_lookup")
        if lookup is None:
            lookup = {w: i for i, w in enumerate(self.words)}
            object.__setattr__(self, "_lookup", lookup)
        qpos = set(quantity_positions)
        unk = lookup[UNK]
        return [lookup[NUM] if i in qpos else lookup.get(t.lower(), unk) for i, t in enumerate(tokens)]

    def to_dict(self) -> dict[str, Any]:
        return {"words": list(self.words)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "InputVocab":
        return cls(words=tuple(data["words"]))


@dataclass
class Batch:
    """Padded tensors of B problems. Targets are present only when built ``with_targets``."""

    tokens: torch.Tensor  # (B, T) long, input word ids, 0 = padding
    lengths: torch.Tensor  # (B,) long, true token counts (CPU tensor, as pack_padded_sequence wants)
    qty_positions: torch.Tensor  # (B, Q) long, token index of each quantity (0 where padded)
    qty_mask: torch.Tensor  # (B, Q) bool, True for real quantities (with a fixed slot count: the first n_slots)
    n_quantities: torch.Tensor  # (B,) long, usable quantity slots per problem
    # (B, Q) long, per slot the first slot holding the same value (itself when the value is unique),
    # -1 where padded: a target slot may be produced from any slot of its class
    qty_class: torch.Tensor | None = None
    target: torch.Tensor | None = None  # (B, L) long, prefix output ids, 0 where padded
    target_mask: torch.Tensor | None = None  # (B, L) bool
    texts: tuple[tuple[str, ...], ...] = ()  # (B,) raw tokens, for solvers with their own subword tokenizer

    @property
    def size(self) -> int:
        return self.tokens.shape[0]

    @property
    def has_repeated_values(self) -> bool:
        """Some problem of the batch has one value at two or more quantity slots."""
        q = self.qty_class
        return q is not None and bool(((q >= 0) & (q != torch.arange(q.shape[1], device=q.device))).any())

    def padded(self, T: int, L: int, Q: int, B: int) -> "Batch":
        """This batch padded to T tokens, L target positions, Q quantity slots and B rows (the added rows:
        one padding token, no quantity, no target), for a step whose shapes must not vary from batch to
        batch (solvers/gts_dense.py, a CUDA graph per shape). The real rows' losses are unchanged."""
        b, t = self.tokens.shape
        q = self.qty_positions.shape[1]
        if self.target is None or self.target_mask is None:
            raise ValueError("padded needs a batch built with targets")
        n = self.target.shape[1]
        if T < t or L < n or Q < q or B < b:
            raise ValueError(f"cannot pad a batch of {b} rows, {t} tokens, {n} targets, {q} slots to {B}, {T}, {L}, {Q}")

        def grow(x: torch.Tensor, width: int, fill) -> torch.Tensor:
            out = x.new_full((B, width), fill)
            out[:b, : x.shape[1]] = x
            return out

        lengths = torch.ones(B, dtype=self.lengths.dtype)
        lengths[:b] = self.lengths
        n_quantities = self.n_quantities.new_zeros(B)
        n_quantities[:b] = self.n_quantities
        return Batch(grow(self.tokens, T, 0), lengths, grow(self.qty_positions, Q, 0), grow(self.qty_mask, Q, False),
                     n_quantities, None if self.qty_class is None else grow(self.qty_class, Q, -1),
                     grow(self.target, L, 0), grow(self.target_mask, L, False), self.texts + ((),) * (B - b))

    def to(self, device: torch.device | str) -> "Batch":
        moved = {f.name: getattr(self, f.name) for f in fields(self)}
        for name, value in moved.items():
            if isinstance(value, torch.Tensor) and name != "lengths":
                moved[name] = to_device(value, device)
        return Batch(**moved)


@dataclass(frozen=True)
class Encoding:
    """Both vocabularies; turns problems into a :class:`Batch` and output ids back into tokens."""

    input: InputVocab
    output: OutputVocab

    def target_ids(self, problem: Problem) -> list[int]:
        ids = []
        for tok in problem.prefix():
            if _is_slot(tok) and int(tok[1:]) >= len(problem.quantities):
                raise EncodingError(f"problem {problem.id}: slot {tok} beyond its {len(problem.quantities)} quantities",
                                    "slot_beyond_quantities")
            try:
                ids.append(self.output.index(tok))
            except EncodingError as err:
                raise EncodingError(f"problem {problem.id}: {err}", err.reason) from err
        return ids

    def batch(self, problems: Sequence[Problem], with_targets: bool = True) -> Batch:
        """The padded tensors of ``problems``. Each tensor is made from padded Python lists in one
        call (row-by-row fills dispatched several tensor operations per problem)."""
        if not problems:
            raise ValueError("cannot build an empty batch")
        token_ids = [self.input.ids(p.tokens, p.quantity_positions()) for p in problems]
        positions = [p.quantity_positions()[: self.output.n_slots] for p in problems]  # [:None]: all of them
        T = max(1, max(len(t) for t in token_ids))
        Q = max(1, max(len(q) for q in positions))
        classes = []
        for p, pos in zip(problems, positions):
            values = p.values[: len(pos)]
            classes.append([values.index(v) for v in values])
        tokens = torch.tensor(_padded(token_ids, T, 0), dtype=torch.long)  # (B, T)
        qpos = torch.tensor(_padded(positions, Q, 0), dtype=torch.long)  # (B, Q)
        qclass = torch.tensor(_padded(classes, Q, -1), dtype=torch.long)  # (B, Q)
        counts = [len(pos) for pos in positions]
        qmask = torch.tensor([[q < n for q in range(Q)] for n in counts], dtype=torch.bool)  # (B, Q)
        lengths = torch.tensor([max(1, len(t)) for t in token_ids], dtype=torch.long)
        batch = Batch(tokens, lengths, qpos, qmask, torch.tensor(counts, dtype=torch.long), qclass,
                      texts=tuple(tuple(p.tokens) for p in problems))
        if with_targets:
            targets = [self.target_ids(p) for p in problems]
            L = max(len(t) for t in targets)
            batch.target = torch.tensor(_padded(targets, L, 0), dtype=torch.long)  # (B, L)
            batch.target_mask = torch.tensor([[i < len(t) for i in range(L)] for t in targets], dtype=torch.bool)
        return batch

    def decode(self, ids: Sequence[int]) -> tuple[str, ...]:
        return tuple(self.output.token(i) for i in ids)

    def to_dict(self) -> dict[str, Any]:
        return {"input": self.input.to_dict(), "output": self.output.to_dict()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Encoding":
        return cls(InputVocab.from_dict(data["input"]), OutputVocab.from_dict(data["output"]))


def _padded(rows: Sequence[Sequence[int]], width: int, fill: int) -> list[list[int]]:
    """Each row padded with ``fill`` to ``width``."""
    return [list(row) + [fill] * (width - len(row)) for row in rows]


def build_encoding(problems: Sequence[Problem], min_count: int = 1, n_slots: int | None = None,
                   extra_constants: Sequence[str] = ()) -> Encoding:
    """Vocabularies from the training problems. ``n_slots`` None (the default) gives a slot to every
    quantity of any problem (solvers that point at quantities by content); a number gives that many
    learned slots, raised to the most quantities a training problem has. Constants are those the
    training expressions use (most frequent first) plus ``extra_constants``."""
    if not problems:
        raise ValueError("cannot build vocabularies from zero problems")
    words: Counter[str] = Counter()
    consts: Counter[str] = Counter()
    for p in problems:
        qpos = set(p.quantity_positions())
        words.update(t.lower() for i, t in enumerate(p.tokens) if i not in qpos)
        consts.update(t for t in p.prefix() if t not in OPERATORS and not _is_slot(t))
    vocab_words = [PAD, UNK, NUM] + sorted(w for w, c in words.items() if c >= min_count and w not in (PAD, UNK, NUM))
    constants = [c for c, _ in sorted(consts.items(), key=lambda kv: (-kv[1], kv[0]))]
    constants += [c for c in extra_constants if c not in constants]
    slots = None if n_slots is None else max(n_slots, 1, max(len(p.quantities) for p in problems))
    return Encoding(InputVocab(tuple(vocab_words)), OutputVocab(tuple(constants), slots))
