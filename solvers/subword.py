"""Words to a pretrained tokenizer's sub-tokens, keeping track of where each quantity went.

A problem's tokens are tokenized word by word, so the first sub-token of quantity i is known and
the solver can read that quantity's state from the encoder (GTS scores slots by those states).
"""
from __future__ import annotations

from typing import Sequence

import torch


def subword_batch(tokenizer, texts: Sequence[Sequence[str]], qty_positions: torch.Tensor, qty_mask: torch.Tensor,
                  prefix: Sequence[int] = (), suffix: Sequence[int] = (), max_tokens: int = 512):
    """-> ids (B, S) (padded with the tokenizer's pad id, or 0), attention mask (B, S) bool, and the
    sub-token position (B, Q) of each quantity (0 where ``qty_mask`` is False).

    ``prefix``/``suffix`` are ids put around each text ([CLS] ... [SEP] for BERT). A text longer than
    ``max_tokens`` is cut; a quantity cut off points at the last kept sub-token."""
    rows, firsts = [], []
    cache: dict[str, list[int]] = {}
    for words in texts:
        ids, first = list(prefix), []
        for word in words:
            pieces = cache.get(word)
            if pieces is None:
                pieces = tokenizer(word, add_special_tokens=False)["input_ids"] or [tokenizer.unk_token_id]
                cache[word] = pieces
            first.append(len(ids))
            ids.extend(pieces)
        ids = ids[: max_tokens - len(suffix)] + list(suffix)
        rows.append(ids)
        firsts.append(first)
    B, S = len(rows), max(len(r) for r in rows)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    out = torch.full((B, S), pad, dtype=torch.long)
    mask = torch.zeros(B, S, dtype=torch.bool)
    positions = torch.zeros_like(qty_positions, device="cpu")
    for b, (ids, first) in enumerate(zip(rows, firsts)):
        out[b, : len(ids)] = torch.tensor(ids, dtype=torch.long)
        mask[b, : len(ids)] = True
        for q in range(qty_positions.shape[1]):
            if bool(qty_mask[b, q]):
                positions[b, q] = min(first[int(qty_positions[b, q])], len(ids) - 1 - len(suffix))
    return out, mask, positions
