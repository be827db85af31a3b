"""GTS: a GRU encoder feeding the goal-driven tree decoder (Xie & Sun 2019), batched end to end.

Paper architecture by default: word embeddings of 128, a 2-layer bidirectional GRU with hidden 512
whose two directions are summed, dropout 0.5. The problem vector (root goal) is the last forward
state plus the first backward state of the top layer. ``GTSConfig.small_cpu()`` is an explicit,
smaller option (hidden 256) for quick CPU runs; it is never chosen silently.
"""
from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from mwp.problem import Problem
from solvers.base import check_config
from solvers.device_copy import to_device
from solvers.dropout import Dropout
from solvers.fast_gru import BiGRU
from solvers.gts_beam import beam_search
from solvers.gts_decoder import DecoderContext, GTSDecoder, check_teacher_pass
from solvers.gts_graphs import ShapeFixedLoss
from solvers.gts_teacher import tree_loss
from solvers.gts_waves import decoder_steps
from solvers.torch_solver import TorchSolver
from solvers.trainer import Hypothesis
from solvers.vocab import Batch, Encoding


@dataclass(frozen=True)
class GTSConfig:
    embedding_size: int = 128  # input word and operator embeddings
    hidden_size: int = 512  # GRU hidden size (directions summed) and decoder width
    n_layers: int = 2  # GRU layers
    dropout: float = 0.5
    # Input words seen fewer times in training become <unk>. 2, not 1: with 1 no training word is
    # <unk>, so its embedding stays at its random initial value, and on MAWPS 20-27% of the test
    # problems contain a word unseen in training. Tiny toy sets may want 1.
    min_count: int = 2
    max_output_length: int = 45  # beam search limit on prefix tokens (the public code's MAX_OUTPUT_LENGTH)
    # Training: a target quantity whose value occurs several times in the text may come from any of
    # those positions, the one scored highest (the public code's num_stack); False = the first.
    any_equal_slot: bool = True
    # Teacher forcing's walk of the target trees (training and validation loss): "waves", a decoder step a tree
    # level; "positions", a step a prefix position, the pass before 2026-11-27 (solvers/gts_decoder.py's
    # TEACHER_PASSES; the same values, see docs/solvers.md).
    teacher_pass: str = "waves"

    def __post_init__(self) -> None:
        check_config(self, positive=("embedding_size", "hidden_size", "n_layers", "min_count", "max_output_length"),
                     dropout=("dropout",))
        check_teacher_pass(self.teacher_pass)

    @classmethod
    def small_cpu(cls) -> "GTSConfig":
        """A faster CPU option (hidden 256); report its accuracy separately from the paper's size."""
        return cls(hidden_size=256)


class GRUEncoder(nn.Module):
    def __init__(self, vocab_size: int, cfg: GTSConfig):
        super().__init__()
        self.hidden_size = cfg.hidden_size
        self.embedding = nn.Embedding(vocab_size, cfg.embedding_size, padding_idx=0)
        self.dropout = Dropout(cfg.dropout)
        # nn.GRU's equations with a faster CPU backward (solvers/fast_gru.py)
        self.gru = BiGRU(cfg.embedding_size, cfg.hidden_size, cfg.n_layers, dropout=cfg.dropout if cfg.n_layers > 1 else 0.0)

    def forward(self, tokens: torch.Tensor, lengths: torch.Tensor, shape_fixed: bool = False
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """Encoder states (B, T, H) and problem vectors (B, H); ``shape_fixed`` as :meth:`BiGRU.forward`'s."""
        x = self.dropout(self.embedding(tokens))  # (B, T, E)
        out, h_n = self.gru(x, lengths, shape_fixed)  # (B, T, 2H), (layers * 2, B, H)
        H = self.hidden_size
        return out[..., :H] + out[..., H:], h_n[-2] + h_n[-1]


def _decoder_precision(device: torch.device):
    """The tree decoder runs in float32 on CPU even when training autocasts to bfloat16 there
    (``precision="bf16"``): only the encoder's recurrence gains from bf16. The decoder's products are
    small (one goal per problem a step), so the casts cost more than bf16 saves, and their mixed-size
    temporaries kept glibc's heap growing through an epoch (docs/solvers.md, "bf16 on CPU"). On
    CUDA autocast stays on throughout."""
    if device.type == "cpu" and torch.is_autocast_enabled("cpu"):
        return torch.autocast("cpu", enabled=False)
    return contextlib.nullcontext()


class GTSModel(nn.Module):
    """Implements the trainer's SolverModel protocol (loss, token_log_probs, beam_search, encode)."""

    def __init__(self, cfg: GTSConfig, encoding: Encoding):
        super().__init__()
        self.cfg = cfg
        self.encoder = GRUEncoder(len(encoding.input), cfg)
        self.decoder = GTSDecoder(cfg.hidden_size, cfg.embedding_size, encoding.output.n_ops,
                                  len(encoding.output.constants), cfg.dropout, cfg.teacher_pass)

    def context(self, batch: Batch) -> DecoderContext:
        return self.context_of(batch.tokens, batch.lengths, batch.qty_positions, batch.qty_mask)

    def context_of(self, tokens: torch.Tensor, lengths: torch.Tensor, qty_positions: torch.Tensor,
                   qty_mask: torch.Tensor, shape_fixed: bool = False) -> DecoderContext:
        """:meth:`context` of a batch's tensors; ``shape_fixed``: the encoder's operations depend on the shapes
        alone (``lengths`` then on the encoder's device), for a pass captured as a CUDA graph."""
        enc, problem = self.encoder(tokens, lengths, shape_fixed)
        text_mask = torch.arange(tokens.shape[1], device=enc.device)[None] < to_device(lengths, enc.device)[:, None]
        with _decoder_precision(enc.device):
            return self.decoder.context(enc, text_mask, problem, qty_positions, qty_mask)

    def token_log_probs(self, batch: Batch) -> torch.Tensor:
        assert batch.target is not None and batch.target_mask is not None, "token_log_probs needs targets"
        return self.decoder.token_log_probs(self.context(batch), batch.target, batch.target_mask)  # (B, L)

    def shape_fixed_loss(self, rows: int, device: torch.device, graphed: bool, whole: bool = False,
                         rounding: str = "coarse", fusion: str = "none") -> ShapeFixedLoss:
        """The trainer's ``dense``, ``graphed`` and ``graphed-whole`` steps (``TrainConfig.step``,
        ``TrainConfig.graph_rounding``, ``TrainConfig.graph_fusion``; solvers/gts_graphs.py)."""
        return ShapeFixedLoss(self, rows, device, graphed, whole, rounding=rounding, fusion=fusion)

    def decoder_steps(self, encoding: Encoding, problems: Sequence[Problem]) -> list[int]:
        """The decoder's sequential steps each problem's teacher-forced pass takes (TrainConfig.bucketing "steps";
        :func:`solvers.gts_waves.decoder_steps`)."""
        return decoder_steps(self.decoder, self.cfg.any_equal_slot, encoding, problems)

    @staticmethod
    def decoder_precision(device: torch.device):
        """The autocast setting the tree decoder runs under on ``device`` (float32 on CPU)."""
        return _decoder_precision(device)

    def loss(self, batch: Batch) -> torch.Tensor:
        """Mean negative log-likelihood per target token (the public code's masked cross-entropy)."""
        context = self.context(batch)
        with _decoder_precision(context.enc.device):
            return tree_loss(self.decoder, context, batch, self.cfg.any_equal_slot)

    def beam_search(self, batch: Batch, beam_size: int) -> list[Hypothesis]:
        return beam_search(self.decoder, self.context(batch), batch.n_quantities, beam_size, self.cfg.max_output_length)

    def encode(self, batch: Batch) -> torch.Tensor:
        return self.encoder(batch.tokens, batch.lengths)[1]  # (B, H)


class GTSSolver(TorchSolver):
    name = "gts"
    config_class = GTSConfig
    points_at_quantities = True
    shape_fixed_steps = True
    counts_decoder_steps = True

    def build_model(self, encoding: Encoding) -> GTSModel:
        return GTSModel(self.config, encoding)
