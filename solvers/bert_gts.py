"""BERT-style encoder feeding the GTS tree decoder (the pretrained-encoder baseline of paper 003).

With ``pretrained_path`` (a local folder; nothing is downloaded) the encoder and its tokenizer come
from ``AutoModel``/``AutoTokenizer.from_pretrained(path)`` and each quantity is read at its first
sub-token. Without one, a ``BertConfig`` model with random weights reads the shared word vocabulary
(quantities as ``NUM``), so tests and CPU runs need no download. Encoder states are projected to the
GTS decoder width; the problem vector (root goal) is their masked mean (MiniLM's sentence pooling).
``transformers`` is imported only when a model is built.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import torch
from torch import nn

from solvers.base import check_config, check_heads
from solvers.gts_beam import beam_search
from solvers.gts_decoder import DecoderContext, GTSDecoder, check_teacher_pass
from solvers.gts_teacher import tree_loss
from solvers.gts_waves import decoder_steps
from solvers.subword import subword_batch
from solvers.torch_solver import TorchSolver
from solvers.trainer import Hypothesis
from solvers.vocab import Batch, Encoding


@dataclass(frozen=True)
class BertGTSConfig:
    pretrained_path: str = ""  # local folder for from_pretrained; "" builds a random-weight BertConfig model
    bert_hidden_size: int = 384  # width of the config-built encoder (a path brings its own)
    bert_layers: int = 6  # layers of the config-built encoder
    bert_heads: int = 6  # attention heads of the config-built encoder
    bert_intermediate_size: int = 1536  # feed-forward size of the config-built encoder
    embedding_size: int = 128  # GTS operator embeddings
    hidden_size: int = 512  # GTS decoder width; encoder states are projected to it
    dropout: float = 0.5  # GTS decoder dropout (the encoder keeps its own config's dropout)
    encoder_lr_scale: float = 0.05  # pretrained encoder learning rate = this * TrainConfig.lr (a random one uses lr)
    max_input_tokens: int = 256  # longer texts are cut (sub-tokens, with a path)
    max_output_length: int = 45  # beam search limit on prefix tokens
    min_count: int = 1  # input words seen fewer times in training become <unk> (word-level encoder only)
    any_equal_slot: bool = True  # as GTSConfig.any_equal_slot
    teacher_pass: str = "waves"  # as GTSConfig.teacher_pass

    def __post_init__(self) -> None:
        check_config(self, positive=("bert_hidden_size", "bert_layers", "bert_heads", "bert_intermediate_size",
                                     "embedding_size", "hidden_size", "max_input_tokens", "max_output_length",
                                     "min_count"), non_negative=("encoder_lr_scale",), dropout=("dropout",))
        check_heads(self.bert_hidden_size, self.bert_heads, "bert_hidden_size", "bert_heads")
        check_teacher_pass(self.teacher_pass)


def _load_pretrained(path: str):
    """The encoder and tokenizer in ``path``, offline."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoModel, AutoTokenizer

    if not os.path.isdir(path):
        raise FileNotFoundError(f"bert-gts: pretrained_path {path!r} is not a local folder")
    return AutoModel.from_pretrained(path), AutoTokenizer.from_pretrained(path)


def _config_built(cfg: BertGTSConfig, vocab_size: int):
    from transformers import BertConfig, BertModel

    return BertModel(BertConfig(vocab_size=vocab_size, hidden_size=cfg.bert_hidden_size,
                                num_hidden_layers=cfg.bert_layers, num_attention_heads=cfg.bert_heads,
                                intermediate_size=cfg.bert_intermediate_size, pad_token_id=0,
                                max_position_embeddings=max(512, cfg.max_input_tokens)), add_pooling_layer=False)


class BertGTSModel(nn.Module):
    """Implements the trainer's SolverModel protocol (loss, token_log_probs, beam_search, encode)."""

    def __init__(self, cfg: BertGTSConfig, encoding: Encoding):
        super().__init__()
        self.cfg = cfg
        if cfg.pretrained_path:
            self.bert, self.tokenizer = _load_pretrained(cfg.pretrained_path)
        else:
            self.bert, self.tokenizer = _config_built(cfg, len(encoding.input)), None
        self.project = nn.Linear(self.bert.config.hidden_size, cfg.hidden_size)
        self.dropout = nn.Dropout(cfg.dropout)
        self.decoder = GTSDecoder(cfg.hidden_size, cfg.embedding_size, encoding.output.n_ops,
                                  len(encoding.output.constants), cfg.dropout, cfg.teacher_pass)

    def parameter_groups(self, lr: float) -> list[dict]:
        """The pretrained encoder fine-tunes with a smaller learning rate than the fresh decoder."""
        encoder = list(self.bert.parameters())
        ids = {id(p) for p in encoder}
        rest = [p for p in self.parameters() if id(p) not in ids]
        scale = self.cfg.encoder_lr_scale if self.cfg.pretrained_path else 1.0
        return [{"params": encoder, "lr": lr * scale}, {"params": rest, "lr": lr}]

    def _inputs(self, batch: Batch):
        """-> ids (B, S), attention mask (B, S), quantity positions (B, Q) in the encoder's own tokens."""
        device = batch.tokens.device
        if self.tokenizer is None:
            S = min(batch.tokens.shape[1], self.cfg.max_input_tokens)
            mask = torch.arange(S, device=device)[None] < batch.lengths.to(device)[:, None]
            return batch.tokens[:, :S], mask, batch.qty_positions.clamp(max=S - 1)
        if not batch.texts:
            raise ValueError("bert-gts with a pretrained tokenizer needs Batch.texts (the raw tokens)")
        tok = self.tokenizer
        prefix = [tok.cls_token_id] if tok.cls_token_id is not None else []
        suffix = [tok.sep_token_id] if tok.sep_token_id is not None else []
        ids, mask, positions = subword_batch(tok, batch.texts, batch.qty_positions.cpu(), batch.qty_mask.cpu(),
                                             prefix, suffix, self.cfg.max_input_tokens)
        return ids.to(device), mask.to(device), positions.to(device)

    def states(self, batch: Batch):
        """-> projected encoder states (B, S, H), their mask (B, S), pooled problem vector (B, H), quantity positions."""
        ids, mask, positions = self._inputs(batch)
        hidden = self.bert(input_ids=ids, attention_mask=mask.long()).last_hidden_state  # (B, S, D_bert)
        enc = self.project(self.dropout(hidden))  # (B, S, H)
        keep = mask[..., None].to(enc.dtype)
        problem = (enc * keep).sum(1) / keep.sum(1).clamp(min=1)  # (B, H)
        return enc, mask, problem, positions

    def context(self, batch: Batch) -> DecoderContext:
        enc, mask, problem, positions = self.states(batch)
        return self.decoder.context(enc, mask, problem, positions, batch.qty_mask)

    def token_log_probs(self, batch: Batch) -> torch.Tensor:
        assert batch.target is not None and batch.target_mask is not None, "token_log_probs needs targets"
        return self.decoder.token_log_probs(self.context(batch), batch.target, batch.target_mask)  # (B, L)

    def loss(self, batch: Batch) -> torch.Tensor:
        return tree_loss(self.decoder, self.context(batch), batch, self.cfg.any_equal_slot)

    def beam_search(self, batch: Batch, beam_size: int) -> list[Hypothesis]:
        return beam_search(self.decoder, self.context(batch), batch.n_quantities, beam_size, self.cfg.max_output_length)

    def decoder_steps(self, encoding: Encoding, problems) -> list[int]:
        """The GTS decoder's sequential steps a problem (TrainConfig.bucketing "steps")."""
        return decoder_steps(self.decoder, self.cfg.any_equal_slot, encoding, problems)

    def encode(self, batch: Batch) -> torch.Tensor:
        return self.states(batch)[2]  # (B, H)


class BertGTSSolver(TorchSolver):
    name = "bert-gts"
    config_class = BertGTSConfig
    points_at_quantities = True
    counts_decoder_steps = True

    def build_model(self, encoding: Encoding) -> BertGTSModel:
        return BertGTSModel(self.config, encoding)
