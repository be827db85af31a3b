"""Convolutional sequence-to-sequence model (Gehring et al. 2017, "Convolutional Sequence to
Sequence Learning"), the ConvS2S member of MathEN (Wang et al. 2018), and its Solver.

Encoder and decoder are stacks of 1-D convolutions with gated linear units (GLU) and residual
connections scaled by sqrt(0.5); learned position embeddings are added to the word embeddings (plus
the learned quantity-slot embedding of the LSTM and Transformer baselines, so the decoder can tell
the numbers apart). The decoder's convolutions are causal (left-padded) and every decoder layer has
its own attention over the encoder ("multi-step attention"): the query is the layer's state projected
to the embedding size plus the target embedding, the keys are the encoder outputs z and the values
z + e (encoder output plus input embedding); the attention's context is scaled by the square root of
the number of input tokens, as in the paper. Embeddings start from N(0, 0.1) as in fairseq's
implementation; weight normalization and the dropout-aware initialization of the other layers are left
out (torch's defaults, gradient clipping from the trainer).

Padded input positions are zeroed before every convolution, so a problem's encoding does not depend
on how much padding its batch has. Beam search recomputes the decoder over the prefix at each step,
as the Transformer baseline does (expressions are under ``max_output_len`` tokens).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from solvers.base import check_config
from solvers.prefix_decoding import PrefixDecoderMixin, PrefixGrammar
from solvers.seq2seq import slot_embeddings
from solvers.torch_solver import TorchSolver
from solvers.vocab import Encoding

_HALF = math.sqrt(0.5)


@dataclass(frozen=True)
class ConvS2SConfig:
    embedding_size: int = 128  # word, position and output-token embeddings; attention width
    hidden_size: int = 512  # convolution channels (the GLU halves 2 * hidden_size back to hidden_size)
    encoder_layers: int = 4  # convolutional blocks in the encoder
    decoder_layers: int = 3  # causal convolutional blocks in the decoder, each with its own attention
    kernel_size: int = 3  # convolution width (odd, so the encoder's convolutions are centred)
    dropout: float = 0.2
    max_input_len: int = 512  # learned input positions; later tokens share the last position's embedding
    # longest prefix expression beam search may produce; longer training targets share the last
    # output position's embedding
    max_output_len: int = 40
    quantity_slots: int = 16  # learned quantity slots N0..; raised to the most quantities of a training problem

    def __post_init__(self) -> None:
        check_config(self, positive=("embedding_size", "hidden_size", "encoder_layers", "decoder_layers",
                                     "kernel_size", "max_input_len", "max_output_len", "quantity_slots"),
                     dropout=("dropout",))
        if self.kernel_size % 2 == 0:
            raise ValueError(f"kernel_size must be odd, got {self.kernel_size}")


class ConvS2SModel(PrefixDecoderMixin, nn.Module):
    def __init__(self, config: ConvS2SConfig, n_words: int, output_tokens: tuple[str, ...], n_slots: int):
        super().__init__()
        self.config, self.n_outputs = config, len(output_tokens)
        self.grammar = PrefixGrammar.from_tokens(output_tokens)
        self.max_output_len = config.max_output_len
        E, H, K = config.embedding_size, config.hidden_size, config.kernel_size
        self.embed = nn.Embedding(n_words, E, padding_idx=0)
        self.slot_embed = nn.Embedding(n_slots + 1, E, padding_idx=0)
        self.in_positions = nn.Embedding(config.max_input_len, E)
        self.out_embed = nn.Embedding(self.n_outputs + 1, E)  # id n_outputs is the start symbol
        self.out_positions = nn.Embedding(config.max_output_len + 1, E)
        self.enc_in, self.enc_out = nn.Linear(E, H), nn.Linear(H, E)
        self.enc_convs = nn.ModuleList(nn.Conv1d(H, 2 * H, K, padding=K // 2) for _ in range(config.encoder_layers))
        self.dec_in, self.dec_out = nn.Linear(E, H), nn.Linear(H, E)
        self.dec_convs = nn.ModuleList(nn.Conv1d(H, 2 * H, K) for _ in range(config.decoder_layers))
        self.attn_query = nn.ModuleList(nn.Linear(H, E) for _ in range(config.decoder_layers))
        self.attn_back = nn.ModuleList(nn.Linear(E, H) for _ in range(config.decoder_layers))
        self.generate = nn.Linear(E, self.n_outputs)
        self.drop = nn.Dropout(config.dropout)
        # embeddings drawn from N(0, 0.1) as in fairseq's ConvS2S: with torch's N(0, 1) the unscaled
        # attention scores start huge and the model underfits (docs/solvers_baselines.md)
        for table in (self.embed, self.slot_embed, self.in_positions, self.out_embed, self.out_positions):
            nn.init.normal_(table.weight, 0.0, 0.1)
            if table.padding_idx is not None:
                nn.init.zeros_(table.weight[table.padding_idx])

    @property
    def bos_id(self) -> int:
        return self.n_outputs

    def encode_text(self, batch):
        """-> keys z (B, S, E), values z + e (B, S, E) and the padding mask (B, S) (True = padding)."""
        src = batch.tokens  # (B, S)
        S = src.shape[1]
        pad = torch.arange(S, device=src.device)[None, :] >= batch.lengths.to(src.device)[:, None]  # (B, S)
        positions = torch.arange(S, device=src.device).clamp(max=self.config.max_input_len - 1)
        e = self.embed(src) + slot_embeddings(batch.qty_positions, batch.qty_mask, S, self.slot_embed)
        e = self.drop(e + self.in_positions(positions)[None])  # (B, S, E)
        h = self.enc_in(e)  # (B, S, H)
        for conv in self.enc_convs:
            residual = h
            h = self.drop(h).masked_fill(pad[..., None], 0.0)  # padding never leaks into real positions
            h = F.glu(conv(h.transpose(1, 2)), dim=1).transpose(1, 2)  # (B, S, H)
            h = (h + residual) * _HALF
        z = self.enc_out(h).masked_fill(pad[..., None], 0.0)  # (B, S, E)
        return z, (z + e) * _HALF, pad

    def decode(self, prev_ids, keys, values, pad):
        """Logits (N, t, V) for every position of the decoder input ``prev_ids`` (N, t)."""
        t = prev_ids.shape[1]
        positions = torch.arange(t, device=prev_ids.device).clamp(max=self.config.max_output_len)
        g = self.out_embed(prev_ids) + self.out_positions(positions)[None]  # (N, t, E)
        g = self.drop(g)
        h = self.dec_in(g)  # (N, t, H)
        K = self.config.kernel_size
        n_real = (~pad).sum(1).to(g.dtype)  # (N,) real input tokens
        for conv, query, back in zip(self.dec_convs, self.attn_query, self.attn_back):
            residual = h
            x = F.pad(self.drop(h).transpose(1, 2), (K - 1, 0))  # (N, H, t + K - 1): causal
            h = F.glu(conv(x), dim=1).transpose(1, 2)  # (N, t, H)
            d = (query(h) + g) * _HALF  # (N, t, E)
            score = torch.einsum("nte,nse->nts", d, keys).masked_fill(pad[:, None, :], float("-inf"))  # (N, t, S)
            context = torch.einsum("nts,nse->nte", score.softmax(-1), values)  # (N, t, E)
            context = context * n_real.sqrt()[:, None, None]  # as Gehring et al.: a mean of m values, times sqrt(m)
            h = (h + back(context)) * _HALF
            h = (h + residual) * _HALF
        return self.generate(self.drop(self.dec_out(h)))  # (N, t, V)

    def forward(self, batch):
        """Teacher-forced logits (B, T, V) for ``batch.target``."""
        keys, values, pad = self.encode_text(batch)
        tgt = batch.target  # (B, T)
        bos = torch.full_like(tgt[:, :1], self.bos_id)
        return self.decode(torch.cat([bos, tgt[:, :-1]], 1), keys, values, pad)

    def encode(self, batch):
        """(B, E): mean of the encoder outputs z over real tokens."""
        keys, _, pad = self.encode_text(batch)
        keep = (~pad)[..., None].float()
        return (keys * keep).sum(1) / keep.sum(1).clamp(min=1)

    def beam_start(self, batch, beam_size: int):
        keys, values, pad = self.encode_text(batch)
        K = beam_size
        N = keys.shape[0] * K
        state = {"keys": keys.repeat_interleave(K, 0), "values": values.repeat_interleave(K, 0),
                 "pad": pad.repeat_interleave(K, 0), "prefix": torch.empty(N, 0, dtype=torch.long, device=keys.device)}
        return state, torch.full((N,), self.bos_id, dtype=torch.long, device=keys.device)

    def beam_step(self, state, prev):
        prefix = torch.cat([state["prefix"], prev[:, None]], 1)  # (N, t) decoder input so far
        logits = self.decode(prefix, state["keys"], state["values"], state["pad"])[:, -1]  # (N, V)
        return F.log_softmax(logits.float(), -1), {**state, "prefix": prefix}

    @staticmethod
    def beam_reorder(state, rows):
        return {name: value[rows] for name, value in state.items()}


class ConvS2SSolver(TorchSolver):
    """ConvS2S baseline; fit/predict/log_likelihood/encode/save/load come from TorchSolver."""

    name = "convs2s"
    config_class = ConvS2SConfig

    def build_model(self, encoding: Encoding) -> ConvS2SModel:
        return ConvS2SModel(self.config, len(encoding.input), encoding.output.tokens, encoding.output.n_slots)
