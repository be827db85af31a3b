"""LSTM encoder-decoder with attention (the "LSTM" baseline of paper 003, Table 1) and its Solver.

Text tokens in, prefix-expression ids out. Each quantity token also gets a learned slot embedding
(``N0``, ``N1``...) added to its word embedding, so the decoder can tell which number is which slot.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from solvers.base import check_config
from solvers.fast_gru import pack_rows, unpack_rows
from solvers.prefix_decoding import PrefixDecoderMixin, PrefixGrammar
from solvers.torch_solver import TorchSolver
from solvers.vocab import Encoding


@dataclass(frozen=True)
class Seq2SeqConfig:
    embedding_size: int = 128  # word and output-token embeddings
    hidden_size: int = 512  # encoder (directions summed) and decoder LSTM size
    encoder_layers: int = 2  # bidirectional LSTM layers
    decoder_layers: int = 2  # decoder LSTM layers (initialized from the encoder's final states)
    dropout: float = 0.5
    max_output_len: int = 40  # longest prefix expression beam search may produce
    quantity_slots: int = 16  # learned quantity slots N0..; raised to the most quantities of a training problem

    def __post_init__(self) -> None:
        check_config(self, positive=("embedding_size", "hidden_size", "encoder_layers", "decoder_layers",
                                     "max_output_len", "quantity_slots"), dropout=("dropout",))


def slot_embeddings(num_pos: torch.Tensor, num_mask: torch.Tensor, seq_len: int, table: nn.Embedding) -> torch.Tensor:
    """(B, S, E): ``table(i + 1)`` at the position of quantity i, ``table(0)`` (zeros) elsewhere."""
    S = seq_len
    at = (num_pos[:, :, None] == torch.arange(S, device=num_pos.device)) & num_mask.bool()[:, :, None]  # (B, Q, S)
    index = torch.arange(1, num_pos.shape[1] + 1, device=num_pos.device)[None, :, None]  # (1, Q, 1)
    slot_ids = (at.long() * index).sum(1)  # (B, S)
    return table(slot_ids.clamp(max=table.num_embeddings - 1))


class Seq2SeqModel(PrefixDecoderMixin, nn.Module):
    def __init__(self, config: Seq2SeqConfig, n_words: int, output_tokens: tuple[str, ...], n_slots: int):
        super().__init__()
        self.config, self.n_outputs = config, len(output_tokens)
        self.grammar = PrefixGrammar.from_tokens(output_tokens)
        self.max_output_len = config.max_output_len
        n_outputs = self.n_outputs
        E, H = config.embedding_size, config.hidden_size
        self.embed = nn.Embedding(n_words, E, padding_idx=0)
        self.slot_embed = nn.Embedding(n_slots + 1, E, padding_idx=0)
        self.encoder = nn.LSTM(E, H, num_layers=config.encoder_layers, bidirectional=True, batch_first=True,
                               dropout=config.dropout if config.encoder_layers > 1 else 0.0)
        self.out_embed = nn.Embedding(n_outputs + 1, E)  # id n_outputs is the start symbol
        self.decoder = nn.LSTM(E + H, H, num_layers=config.decoder_layers, batch_first=True,
                               dropout=config.dropout if config.decoder_layers > 1 else 0.0)
        self.attn = nn.Linear(H, H, bias=False)  # Luong "general" score
        self.combine = nn.Linear(2 * H, H)
        self.generate = nn.Linear(H, n_outputs)
        self.drop = nn.Dropout(config.dropout)

    @property
    def bos_id(self) -> int:
        return self.n_outputs

    def encode_text(self, batch):
        """-> encoder states (B, S, H), the token mask (B, S) and the decoder's initial (h, c), each (L_dec, B, H)."""
        src = batch.tokens  # (B, S)
        src_mask = torch.arange(src.shape[1], device=src.device)[None, :] < batch.lengths.to(src.device)[:, None]
        slots = slot_embeddings(batch.qty_positions, batch.qty_mask, src.shape[1], self.slot_embed)  # (B, S, E)
        x = self.drop(self.embed(src) + slots)  # (B, S, E)
        packed, rows = pack_rows(x, batch.lengths)  # torch's pack and pad copy once per time step
        out, (h, c) = self.encoder(packed)
        out = unpack_rows(out.data, rows, *src.shape)  # (B, S, 2H)
        H = self.config.hidden_size
        out = out[..., :H] + out[..., H:]  # (B, S, H) directions summed
        L = self.config.decoder_layers
        h = (h[0::2] + h[1::2])[-L:]  # (L, B, H) last layers, directions summed
        c = (c[0::2] + c[1::2])[-L:]
        if h.shape[0] < L:  # more decoder than encoder layers: repeat the top one
            h = torch.cat([h, h[-1:].expand(L - h.shape[0], -1, -1)], 0)
            c = torch.cat([c, c[-1:].expand(L - c.shape[0], -1, -1)], 0)
        return out, src_mask, (h.contiguous(), c.contiguous())

    def decode_step(self, prev, feed, hc, enc, src_mask):
        """One step for N rows: prev ids (N,), feed (N, H) -> logits (N, V), new feed, new (h, c)."""
        x = torch.cat([self.drop(self.out_embed(prev)), feed], dim=-1)[:, None, :]  # (N, 1, E+H)
        out, hc = self.decoder(x, hc)  # (N, 1, H)
        query = out[:, 0]  # (N, H)
        score = torch.einsum("nh,nsh->ns", self.attn(query), enc)  # (N, S)
        score = score.masked_fill(~src_mask, float("-inf"))
        context = torch.einsum("ns,nsh->nh", score.softmax(-1), enc)  # (N, H)
        feed = torch.tanh(self.combine(torch.cat([query, context], -1)))  # (N, H)
        return self.generate(self.drop(feed)), feed, hc

    def forward(self, batch):
        """Teacher-forced logits (B, T, V) for ``batch.target`` (B, T) (padding positions are ignored later)."""
        enc, src_mask, hc = self.encode_text(batch)
        tgt = batch.target
        B, T = tgt.shape
        prev = torch.full((B,), self.bos_id, dtype=torch.long, device=tgt.device)
        feed = enc.new_zeros(B, self.config.hidden_size)
        logits = []
        for t in range(T):
            step_logits, feed, hc = self.decode_step(prev, feed, hc, enc, src_mask)
            logits.append(step_logits)
            prev = tgt[:, t].clamp(min=0)
        return torch.stack(logits, dim=1)  # (B, T, V)

    def encode(self, batch):
        """(B, H): mean of the encoder states over real tokens."""
        enc, src_mask, _ = self.encode_text(batch)
        m = src_mask[..., None].float()
        return (enc * m).sum(1) / m.sum(1).clamp(min=1)

    def beam_start(self, batch, beam_size: int):
        """Beam state with each problem's rows repeated ``beam_size`` times (problem-major)."""
        enc, src_mask, (h, c) = self.encode_text(batch)
        K = beam_size
        state = {
            "enc": enc.repeat_interleave(K, 0), "mask": src_mask.repeat_interleave(K, 0),
            "h": h.repeat_interleave(K, 1), "c": c.repeat_interleave(K, 1),
            "feed": enc.new_zeros(enc.shape[0] * K, self.config.hidden_size),
        }
        bos = torch.full((enc.shape[0] * K,), self.bos_id, dtype=torch.long, device=enc.device)
        return state, bos

    def beam_step(self, state, prev):
        logits, feed, (h, c) = self.decode_step(prev, state["feed"], (state["h"], state["c"]), state["enc"], state["mask"])
        return F.log_softmax(logits.float(), -1), {**state, "feed": feed, "h": h, "c": c}

    @staticmethod
    def beam_reorder(state, rows):
        return {"enc": state["enc"][rows], "mask": state["mask"][rows], "h": state["h"][:, rows],
                "c": state["c"][:, rows], "feed": state["feed"][rows]}


class LSTMSolver(TorchSolver):
    """LSTM seq2seq baseline; fit/predict/log_likelihood/encode/save/load come from TorchSolver."""

    name = "lstm"
    config_class = Seq2SeqConfig

    def build_model(self, encoding: Encoding) -> Seq2SeqModel:
        return Seq2SeqModel(self.config, len(encoding.input), encoding.output.tokens, encoding.output.n_slots)
