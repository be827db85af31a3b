"""Transformer encoder-decoder (the "Transformer" baseline of paper 003, Table 1), on torch.nn.Transformer.

Same input as the LSTM baseline (word embedding + slot embedding on quantity tokens), sinusoidal
positions, a causal decoder over prefix-expression ids. Beam search recomputes the decoder over the
prefix at each step: expressions are short (< 40 tokens), so a key/value cache would buy little.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from solvers.base import check_config, check_heads
from solvers.prefix_decoding import PrefixDecoderMixin, PrefixGrammar
from solvers.torch_solver import TorchSolver
from solvers.vocab import Encoding
from solvers.seq2seq import slot_embeddings


@dataclass(frozen=True)
class TransformerConfig:
    embedding_size: int = 128  # d_model: embedding and model width (the GTS embedding size)
    hidden_size: int = 512  # inner size of each feed-forward block (the GTS hidden size)
    n_heads: int = 4  # attention heads (embedding_size must divide by it)
    encoder_layers: int = 3
    decoder_layers: int = 3
    dropout: float = 0.1
    max_output_len: int = 40  # longest prefix expression beam search may produce
    quantity_slots: int = 16  # learned quantity slots N0..; raised to the most quantities of a training problem

    def __post_init__(self) -> None:
        check_config(self, positive=("embedding_size", "hidden_size", "n_heads", "encoder_layers", "decoder_layers",
                                     "max_output_len", "quantity_slots"), dropout=("dropout",))
        check_heads(self.embedding_size, self.n_heads, "embedding_size", "n_heads")


def sinusoidal_positions(length: int, dim: int, device) -> torch.Tensor:
    """(length, dim) fixed sine/cosine position codes (Vaswani et al. 2017)."""
    pos = torch.arange(length, device=device, dtype=torch.float)[:, None]  # (T, 1)
    freq = torch.exp(torch.arange(0, dim, 2, device=device, dtype=torch.float) * (-math.log(10000.0) / dim))
    out = torch.zeros(length, dim, device=device)
    out[:, 0::2] = torch.sin(pos * freq)
    out[:, 1::2] = torch.cos(pos * freq[: dim // 2])
    return out


class TransformerModel(PrefixDecoderMixin, nn.Module):
    def __init__(self, config: TransformerConfig, n_words: int, output_tokens: tuple[str, ...], n_slots: int):
        super().__init__()
        assert config.embedding_size % config.n_heads == 0, "embedding_size must be a multiple of n_heads"
        self.config, self.n_outputs = config, len(output_tokens)
        self.grammar = PrefixGrammar.from_tokens(output_tokens)
        self.max_output_len = config.max_output_len
        D = config.embedding_size
        self.embed = nn.Embedding(n_words, D, padding_idx=0)
        self.slot_embed = nn.Embedding(n_slots + 1, D, padding_idx=0)
        self.out_embed = nn.Embedding(self.n_outputs + 1, D)  # id n_outputs is the start symbol
        enc_layer = nn.TransformerEncoderLayer(D, config.n_heads, config.hidden_size, config.dropout,
                                               batch_first=True, norm_first=True)
        dec_layer = nn.TransformerDecoderLayer(D, config.n_heads, config.hidden_size, config.dropout,
                                               batch_first=True, norm_first=True)
        # pre-norm layers need a final norm; no nested tensors (slower than padding at these sizes)
        self.encoder = nn.TransformerEncoder(enc_layer, config.encoder_layers, norm=nn.LayerNorm(D),
                                             enable_nested_tensor=False)
        self.decoder = nn.TransformerDecoder(dec_layer, config.decoder_layers, norm=nn.LayerNorm(D))
        self.generate = nn.Linear(D, self.n_outputs)
        self.drop = nn.Dropout(config.dropout)

    @property
    def bos_id(self) -> int:
        return self.n_outputs

    def encode_text(self, batch):
        """-> memory (B, S, D) and its padding mask (B, S) (True = padding)."""
        src = batch.tokens  # (B, S)
        S, D = src.shape[1], self.config.embedding_size
        pad = torch.arange(S, device=src.device)[None, :] >= batch.lengths.to(src.device)[:, None]  # (B, S)
        x = self.embed(src) + slot_embeddings(batch.qty_positions, batch.qty_mask, S, self.slot_embed)
        x = self.drop(x + sinusoidal_positions(S, D, src.device))  # (B, S, D)
        return self.encoder(x, src_key_padding_mask=pad), pad

    def decode(self, prev_ids, memory, memory_pad):
        """Logits (N, t, V) for every position of the decoder input ``prev_ids`` (N, t)."""
        t, D = prev_ids.shape[1], self.config.embedding_size
        y = self.drop(self.out_embed(prev_ids) + sinusoidal_positions(t, D, prev_ids.device))  # (N, t, D)
        causal = nn.Transformer.generate_square_subsequent_mask(t, device=prev_ids.device)  # (t, t)
        h = self.decoder(y, memory, tgt_mask=causal, tgt_is_causal=True, memory_key_padding_mask=memory_pad)
        return self.generate(h)  # (N, t, V)

    def forward(self, batch):
        """Teacher-forced logits (B, T, V) for ``batch.target``."""
        memory, pad = self.encode_text(batch)
        tgt = batch.target  # (B, T)
        bos = torch.full_like(tgt[:, :1], self.bos_id)
        return self.decode(torch.cat([bos, tgt[:, :-1]], 1), memory, pad)

    def encode(self, batch):
        """(B, D): mean of the encoder outputs over real tokens."""
        memory, pad = self.encode_text(batch)
        keep = (~pad)[..., None].float()
        return (memory * keep).sum(1) / keep.sum(1).clamp(min=1)

    def beam_start(self, batch, beam_size: int):
        memory, pad = self.encode_text(batch)
        K = beam_size
        N = memory.shape[0] * K
        state = {"memory": memory.repeat_interleave(K, 0), "pad": pad.repeat_interleave(K, 0),
                 "prefix": torch.empty(N, 0, dtype=torch.long, device=memory.device)}
        return state, torch.full((N,), self.bos_id, dtype=torch.long, device=memory.device)

    def beam_step(self, state, prev):
        prefix = torch.cat([state["prefix"], prev[:, None]], 1)  # (N, t) decoder input so far
        logits = self.decode(prefix, state["memory"], state["pad"])[:, -1]  # (N, V)
        return F.log_softmax(logits.float(), -1), {**state, "prefix": prefix}

    @staticmethod
    def beam_reorder(state, rows):
        return {"memory": state["memory"][rows], "pad": state["pad"][rows], "prefix": state["prefix"][rows]}


class TransformerSolver(TorchSolver):
    """Transformer baseline; fit/predict/log_likelihood/encode/save/load come from TorchSolver."""

    name = "transformer"
    config_class = TransformerConfig

    def build_model(self, encoding: Encoding) -> TransformerModel:
        return TransformerModel(self.config, len(encoding.input), encoding.output.tokens, encoding.output.n_slots)
