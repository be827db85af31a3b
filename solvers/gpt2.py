"""GPT-2 style decoder-only solver (the GPT-2 baseline of paper 003): ``[bos] problem [sep] prefix``.

One sequence per problem: the problem's tokens, a separator, then the prefix expression; the loss is
on the expression tokens only. Quantities in the text are written as their slot tokens (``N0``...),
the same tokens the expression uses, so the model can copy them. Decoding is constrained
(solvers/prefix_decoding.py): only output tokens, only valid prefix expressions over the problem's
own slots; a beam's score is the model's log-probability of its tokens over the whole vocabulary.

Without ``pretrained_path`` a ``GPT2Config`` model with random weights reads a word-level vocabulary
laid out as ``[input words | output tokens | sep, bos, eos]`` (bos/eos ids inside that small vocab).
With a local path, its tokenizer and weights are loaded offline and the output tokens and the
separator are added to its vocabulary as new special tokens. transformers is imported lazily.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from solvers.base import check_config, check_heads
from solvers.prefix_decoding import PrefixGrammar, beam_search
from solvers.subword import subword_batch
from solvers.torch_solver import TorchSolver
from solvers.trainer import Hypothesis
from solvers.vocab import Batch, Encoding


@dataclass(frozen=True)
class GPT2SolverConfig:
    pretrained_path: str = ""  # local GPT-2 folder (weights + tokenizer); "" builds a GPT2Config model
    embedding_size: int = 128  # n_embd, width of the config-built model (the GTS embedding size)
    n_layer: int = 4  # layers of the config-built model
    n_head: int = 4  # attention heads of the config-built model
    hidden_size: int = 512  # n_inner, feed-forward size of the config-built model (the GTS hidden size)
    dropout: float = 0.1  # residual/embedding/attention dropout of the config-built model
    max_input_tokens: int = 256  # the problem text is cut to this many tokens
    max_output_length: int = 40  # longest prefix expression beam search may produce
    min_count: int = 1  # input words seen fewer times in training become <unk> (word-level only)
    quantity_slots: int = 16  # learned quantity slots N0..; raised to the most quantities of a training problem

    def __post_init__(self) -> None:
        check_config(self, positive=("embedding_size", "n_layer", "n_head", "hidden_size", "max_input_tokens",
                                     "max_output_length", "min_count", "quantity_slots"), dropout=("dropout",))
        check_heads(self.embedding_size, self.n_head, "embedding_size", "n_head")


def _special_name(token: str) -> str:
    return f"<expr:{token}>"


class GPT2Model(nn.Module):
    """Implements the trainer's SolverModel protocol (loss, token_log_probs, beam_search, encode)."""

    def __init__(self, cfg: GPT2SolverConfig, encoding: Encoding):
        super().__init__()
        self.cfg, self.encoding = cfg, encoding
        out_tokens = encoding.output.tokens
        self.grammar = PrefixGrammar.from_tokens(out_tokens)
        self.n_slots = encoding.output.n_slots
        if cfg.pretrained_path:
            self._init_pretrained(out_tokens)
        else:
            self._init_config_built(len(encoding.input), len(out_tokens))

    def _init_config_built(self, n_words: int, n_out: int) -> None:
        from transformers import GPT2Config, GPT2LMHeadModel

        self.tokenizer = None
        self.out_start = n_words  # output id o is lm id n_words + o
        self.sep_id, self.bos_id, self.eos_id = n_words + n_out, n_words + n_out + 1, n_words + n_out + 2
        c = self.cfg
        self.lm = GPT2LMHeadModel(GPT2Config(
            vocab_size=n_words + n_out + 3, n_positions=c.max_input_tokens + c.max_output_length + 3,
            n_embd=c.embedding_size, n_layer=c.n_layer, n_head=c.n_head, n_inner=c.hidden_size, resid_pdrop=c.dropout,
            embd_pdrop=c.dropout, attn_pdrop=c.dropout, bos_token_id=self.bos_id, eos_token_id=self.eos_id,
            pad_token_id=0))

    def _init_pretrained(self, out_tokens) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from transformers import AutoModelForCausalLM, AutoTokenizer

        path = self.cfg.pretrained_path
        if not os.path.isdir(path):
            raise FileNotFoundError(f"gpt2: pretrained_path {path!r} is not a local folder")
        tok = AutoTokenizer.from_pretrained(path)
        self.out_start = len(tok)
        tok.add_tokens([_special_name(t) for t in out_tokens] + ["<expr:sep>"], special_tokens=True)
        self.tokenizer = tok
        self.lm = AutoModelForCausalLM.from_pretrained(path)
        self.lm.resize_token_embeddings(len(tok))
        self.sep_id = tok.convert_tokens_to_ids("<expr:sep>")
        self.bos_id = tok.bos_token_id if tok.bos_token_id is not None else self.sep_id
        self.eos_id = tok.eos_token_id if tok.eos_token_id is not None else self.sep_id
        assert self.sep_id == self.out_start + len(out_tokens), "added tokens must be contiguous"

    def prompts(self, batch: Batch) -> list[list[int]]:
        """``[bos] text [sep]`` ids per problem, quantity tokens replaced by their slot tokens."""
        slot0 = self.encoding.output.slot_start
        cut = self.cfg.max_input_tokens
        tokens, qpos, nq = batch.tokens.cpu(), batch.qty_positions.cpu(), batch.n_quantities.cpu()  # one copy, not one per row
        if self.tokenizer is None:
            rows = []
            for b in range(batch.size):
                ids = tokens[b, : int(batch.lengths[b])].tolist()
                for q in range(int(nq[b])):
                    ids[int(qpos[b, q])] = self.out_start + slot0 + q
                rows.append([self.bos_id] + ids[:cut] + [self.sep_id])
            return rows
        texts = []
        for b, words in enumerate(batch.texts):
            words = list(words)
            for q in range(int(nq[b])):
                words[int(qpos[b, q])] = _special_name(f"N{q}")
            texts.append(words)
        ids, mask, _ = subword_batch(self.tokenizer, texts, qpos, batch.qty_mask.cpu(),
                                     [self.bos_id], [], cut)
        return [row[: int(m.sum())].tolist() + [self.sep_id] for row, m in zip(ids, mask)]

    def _padded(self, rows: list[list[int]], left: bool, device) -> tuple[torch.Tensor, torch.Tensor]:
        """(N, L) ids padded with 0 and the (N, L) attention mask."""
        L = max(len(r) for r in rows)
        ids = torch.zeros(len(rows), L, dtype=torch.long)
        mask = torch.zeros(len(rows), L, dtype=torch.long)
        for i, r in enumerate(rows):
            span = slice(L - len(r), L) if left else slice(0, len(r))
            ids[i, span] = torch.tensor(r, dtype=torch.long)
            mask[i, span] = 1
        return ids.to(device), mask.to(device)

    def token_log_probs(self, batch: Batch) -> torch.Tensor:
        """(B, Lt) log-probability of each target token over the whole vocabulary (0 where padded)."""
        assert batch.target is not None and batch.target_mask is not None, "token_log_probs needs targets"
        device = batch.target.device
        prompts = self.prompts(batch)
        target, lengths = batch.target.cpu(), batch.target_mask.sum(1).cpu()
        targets = [target[b, : int(lengths[b])].tolist() for b in range(batch.size)]
        ids, mask = self._padded([p + [self.out_start + t for t in tg] for p, tg in zip(prompts, targets)], False, device)
        hidden = self.lm.transformer(input_ids=ids, attention_mask=mask).last_hidden_state  # (B, L, D)
        Lt = batch.target.shape[1]
        start = torch.tensor([len(p) - 1 for p in prompts], device=device)  # (B,) position predicting target 0
        where = (start[:, None] + torch.arange(Lt, device=device)).clamp(max=ids.shape[1] - 1)  # (B, Lt)
        picked = hidden.gather(1, where[..., None].expand(-1, -1, hidden.shape[-1]))  # (B, Lt, D)
        logp = F.log_softmax(self.lm.lm_head(picked).float(), dim=-1)  # (B, Lt, V)
        gold = logp.gather(-1, (self.out_start + batch.target)[..., None])[..., 0]  # (B, Lt)
        return gold * batch.target_mask

    def loss(self, batch: Batch) -> torch.Tensor:
        return -self.token_log_probs(batch).sum() / batch.target_mask.sum()

    def _output_log_probs(self, logits: torch.Tensor) -> torch.Tensor:
        """(N, V_lm) logits -> (N, n_out) log-probabilities of the output tokens (whole-vocabulary softmax)."""
        n_out = self.grammar.slot_index.shape[0]
        return F.log_softmax(logits.float(), dim=-1)[:, self.out_start: self.out_start + n_out]

    def beam_search(self, batch: Batch, beam_size: int) -> list[Hypothesis]:
        K, device = beam_size, batch.tokens.device
        ids, mask = self._padded(self.prompts(batch), True, device)  # (B, P), left-padded
        positions = (mask.cumsum(1) - 1).clamp(min=0)  # (B, P) as in the right-padded training rows
        out = self.lm(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True)
        cache = out.past_key_values
        cache.batch_repeat_interleave(K)
        state = {"cache": cache, "mask": mask.repeat_interleave(K, 0), "pos": positions[:, -1].repeat_interleave(K) + 1,
                 "first": self._output_log_probs(out.logits[:, -1]).repeat_interleave(K, 0)}
        start = torch.zeros(ids.shape[0] * K, dtype=torch.long, device=device)
        result = beam_search(self._step, self._reorder, state, start, self.grammar, batch.n_quantities, K,
                             self.cfg.max_output_length)
        return [Hypothesis(tuple(t), s) for t, s in zip(result.tokens, result.scores)]

    def _step(self, state, prev):
        if state["first"] is not None:  # the prompt pass already gave the first distribution
            return state["first"], {**state, "first": None}
        mask = torch.cat([state["mask"], torch.ones_like(state["mask"][:, :1])], 1)  # (N, t+1)
        out = self.lm(input_ids=(self.out_start + prev)[:, None], attention_mask=mask,
                      position_ids=state["pos"][:, None], past_key_values=state["cache"], use_cache=True)
        return self._output_log_probs(out.logits[:, -1]), {"cache": out.past_key_values, "mask": mask,
                                                           "pos": state["pos"] + 1, "first": None}

    @staticmethod
    def _reorder(state, rows):
        state["cache"].reorder_cache(rows)
        first = state["first"]
        return {"cache": state["cache"], "mask": state["mask"][rows], "pos": state["pos"][rows],
                "first": None if first is None else first[rows]}

    def encode(self, batch: Batch) -> torch.Tensor:
        """(B, D): mean of the last hidden states over the prompt."""
        ids, mask = self._padded(self.prompts(batch), False, batch.tokens.device)
        hidden = self.lm.transformer(input_ids=ids, attention_mask=mask).last_hidden_state  # (B, P, D)
        keep = mask[..., None].to(hidden.dtype)
        return (hidden * keep).sum(1) / keep.sum(1)


class GPT2Solver(TorchSolver):
    name = "gpt2"
    config_class = GPT2SolverConfig

    def build_model(self, encoding: Encoding) -> GPT2Model:
        return GPT2Model(self.config, encoding)
