"""A bidirectional multi-layer GRU for padded batches, with a hand-written backward pass.

Same equations as ``torch.nn.GRU`` (gate order r, z, n; ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``,
``h' = (1 - z) * n + z * h``). Why not nn.GRU: on CPU its backward is autograd over per-timestep ops,
so the recurrent weight gradient is a thin (H x B) @ (B x 3H) product plus an accumulation at every
step, which made the encoder take about 85% of a GTS training step here. This version runs both
directions as one batched ``bmm`` per step and, in backward, computes only the per-step input
gradient in the loop; the weight gradients are one large matmul per layer over all timesteps.

Variable lengths use a mask instead of packing: at a padded step the state is carried unchanged, so
the forward direction's last state is its state at the last real token and the backward direction
(which runs on time-reversed inputs) starts from zeros at each sequence's own last token. Outputs at
padded positions are not zero (callers mask them).
"""
from __future__ import annotations

import contextlib
import math
import warnings

import torch
from torch import nn
from torch.nn.utils.rnn import PackedSequence

from solvers.device_copy import to_device
from solvers.dropout import Dropout
from solvers.fusion import fusing, pointwise


_PAD = 1e4  # added to the update gate's pre-activation at padded steps: sigmoid gives exactly 1 there


class _BiRecurrence(torch.autograd.Function):
    """Recurrent part of one layer, both directions stacked on dim 0.

    gi: (2, T, B, 3H) input projections (bias included); mask: (2, T, B, 1) float;
    w_hh: (2, 3H, H); b_hh: (2, 3H). Returns the states as the layer's output sequence (T, B, 2H)
    ([forward; backward] in input time order) and each direction's last state (2, B, H). Returning
    these rather than the (2, T, B, H) states keeps slicing them apart out of autograd: each slice's
    backward would allocate and fill a zero tensor of the states' full size.

    A padded step carries the state unchanged. That is done through the update gate: ``_PAD`` added
    to its pre-activation makes z exactly 1, so h' = lerp(n, h, 1) is h exactly, and every gradient
    factor through the step's gates holds (1 - z) = 0 while the state's own carries 1. No mask is
    applied inside the loops, and each step is a few whole-tensor operations: the per-step values
    are collected in lists and stacked once (an indexed write into a buffer is a view operation and
    a copy every step)."""

    @staticmethod
    def forward(ctx, gi, mask, w_hh, b_hh):
        D, T, B, H3 = gi.shape
        H = H3 // 3
        lowp = _low_precision(gi.device)
        fused = fusing()  # each step's gates one kernel (solvers/fusion.py), in this forward and its backward
        # the addend of each step's recurrent product: the r and z pre-activations' input side and
        # recurrent bias, then the n part's recurrent bias (it is multiplied by r with W_hn h). Time first,
        # so that each step's (2, B, 3H) is contiguous and the product adds into it in place: an out-of-place
        # baddbmm first copies its addend into a new tensor, on CUDA one kernel a step more
        bias = b_hh[None, :, None, :]  # (1, 2, 1, 3H)
        pre = gi.new_empty(T, D, B, H3)
        torch.add(gi[..., : 2 * H].transpose(0, 1), bias[..., : 2 * H], out=pre[..., : 2 * H])
        pre[..., 2 * H:] = bias[..., 2 * H:]
        pre[..., H: 2 * H].addcmul_(mask.transpose(0, 1).neg() + 1, torch.full_like(mask, _PAD).transpose(0, 1))
        pre_t, in_n = pre.unbind(0), gi[..., 2 * H:].unbind(1)  # per step (2, B, 3H), (2, B, H)
        w_t = w_hh.transpose(1, 2)  # (2, H, 3H)
        h = gi.new_zeros(D, B, H)
        states, resets, updates, cands, recs = [], [], [], [], []
        with _autocast_off(gi.device):  # the precision of each product is chosen here
            if lowp is not None:  # buffers reused by every step: no per-step allocations of mixed sizes
                w_low = w_t.to(lowp)
                h_low, gh_low = gi.new_empty(D, B, H, dtype=lowp), gi.new_empty(D, B, H3, dtype=lowp)
                gh = gi.new_empty(D, B, H3)
            for t in range(T):
                if lowp is None:
                    g = pre_t[t].baddbmm_(h, w_t)  # (2, B, 3H), in place (pre is this forward's own)
                else:  # the product in low precision, the state and the gates in float32
                    torch.bmm(h_low.copy_(h), w_low, out=gh_low)
                    g = torch.add(pre_t[t], gh.copy_(gh_low))  # (a mixed-dtype add would dispatch a cast)
                h, r, z, n, h_n = _cell(g, in_n[t], h, fused=fused)
                states.append(h)
                resets.append(r)
                updates.append(z)
                cands.append(n)
                recs.append(h_n)
        outs = torch.stack(states, 1)  # (2, T, B, H)
        ctx.lowp, ctx.fused = lowp, fused
        ctx.save_for_backward(w_hh, outs, *(torch.stack(x, 1) for x in (resets, updates, cands, recs)))
        return torch.cat([outs[0], outs[1].flip(0)], -1), h.clone()

    @staticmethod
    def backward(ctx, d_seq, d_final):
        w_hh, outs, r, z, N, HN = ctx.saved_tensors
        lowp = ctx.lowp
        D, T, B, H = outs.shape
        fused = ctx.fused
        # The output gradients per step (2, B, H), the buffer of the gates' factors, and the gradient dh reaching the
        # last state (it is also the output at step T - 1). Fused, every call of the compiled step meets views of
        # one layout: none at storage offset 0 (a buffer's first step is its second) and dh always a fourth slot.
        # Otherwise each other layout compiles the step again (a storage offset of 0 is specialized, as a size of 0
        # or 1 is) on the way to torch's limit of 8 compiles a function, at which a fullgraph compile fails.
        if fused:
            d_outs = outs.new_empty(D, T + 1, B, H)[:, 1:]
            d_outs[0].copy_(d_seq[..., :H])
            d_outs[1].copy_(d_seq[..., H:].flip(0))
            d_outs = d_outs.unbind(1)
            factors = outs.new_empty(D, T + 1, B, 3, H)[:, 1:]
            dh = torch.add(d_final, d_outs[T - 1], out=outs.new_empty(D, B, 4, H)[:, :, 3])
        else:
            d_outs = torch.stack([d_seq[..., :H], d_seq[..., H:].flip(0)]).to(outs.dtype).unbind(1)
            factors = outs.new_empty(D, T, B, 3, H)
            dh = d_final.to(outs.dtype) + d_outs[T - 1]
        # Every gate gradient is the gradient reaching the cell's output, dh, times a factor of the
        # saved forward values alone. The factors of the recurrent product's inputs are computed for
        # all steps at once, in the buffer the gradients end in ([r, z, W_hn h + b_hn] per step; fused, each
        # step's gradients are a new tensor, stacked at the end), so the sequential loop does only what depends
        # on dh; n's input side, which the loop does not read, is multiplied by every step's dh after it. At
        # padded steps every factor is 0 (z is 1).
        h_prevs = torch.cat([outs.new_zeros(D, 1, B, H), outs[:, :-1]], 1)  # (2, T, B, H)
        one_minus_z = 1 - z
        d_in = one_minus_z * (1 - N * N)  # d n's input-side pre-activation / dh
        torch.mul(d_in * HN, r * (1 - r), out=factors[..., 0, :])  # dr / dh
        torch.mul(one_minus_z * z, h_prevs - N, out=factors[..., 1, :])  # dz / dh
        torch.mul(d_in, r, out=factors[..., 2, :])  # d(W_hn h + b_hn) / dh
        steps, carry = factors.unbind(1), z.unbind(1)  # d(new state) / d(state) on the direct path is z
        dhs = [dh] * T  # the gradient reaching each step's output, in time order
        if lowp is not None:
            w_low = w_hh.to(lowp)
            g_low, dh_low = outs.new_empty(D, B, 3 * H, dtype=lowp), outs.new_empty(D, B, H, dtype=lowp)
            dh_rec = outs.new_empty(D, B, H)
        scaled = [None] * T  # fused: each step's factors times dh and the direct path's gradient, new tensors
        for t in range(T - 1, 0, -1):
            # the gradient reaching step t - 1's state: its output's, the direct path's, then the gates'
            if fused:
                step = scaled[t] = _cell_back_fused(steps[t], carry[t], dh, d_outs[t - 1], fused=True)
                direct, g = step[:, :, 3], step[:, :, :3].reshape(D, B, 3 * H)  # views
            else:
                direct, g = _cell_back(steps[t], dh, d_outs[t - 1], carry[t]), steps[t].view(D, B, 3 * H)
            if lowp is None:
                dh = direct.baddbmm_(g, w_hh)  # in place: direct is new, read by nothing else
            else:
                torch.bmm(g_low.copy_(g), w_low, out=dh_low)
                dh = direct.add_(dh_rec.copy_(dh_low))
            dhs[t - 1] = dh
        # step 0: the initial state is a constant, no gradient to carry past it
        if fused:  # its fourth slot is not read: any carry of the layout (z's first step is at offset 0)
            scaled[0] = _cell_back_fused(steps[0], carry[min(1, T - 1)], dh, d_outs[0], fused=True)
            gates = torch.stack(scaled, 1)[..., :3, :]
        else:
            steps[0].mul_(dh.view(D, B, 1, H))
            gates = factors
        d_in.mul_(torch.stack(dhs, 1))
        d_gi = torch.cat([gates[..., :2, :].reshape(D, T, B, 2 * H), d_in], -1)
        h_prevs = h_prevs.reshape(D, T * B, H)
        flat = gates.view(D, T * B, 3 * H)
        if lowp is None:
            d_w_hh = torch.bmm(flat.transpose(1, 2), h_prevs)  # (2, 3H, H): one matmul for all steps
        else:
            d_w_hh = torch.bmm(flat.transpose(1, 2).to(lowp), h_prevs.to(lowp)).float()
        return d_gi, None, d_w_hh, flat.sum(1)


@pointwise
def _cell(g: torch.Tensor, in_n: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """One step's gates from its pre-activations g (2, B, 3H) (the recurrent product added), n's input side
    (2, B, H) and the state h (2, B, H): the new state, r, z, n and n's recurrent side h_n (g's last H columns,
    which the backward reads). h_n is returned so that the caller need not slice g again (one view a step fewer);
    it is not passed in as a slice of g because then TorchInductor's second compile (symbolic shapes) failed for
    some hash seeds ("sources must not be empty for symbol", torch 2.13 on the CPU)."""
    H = h.shape[-1]
    r, z, h_n = g[..., :H].sigmoid(), g[..., H: 2 * H].sigmoid(), g[..., 2 * H:]
    n = torch.addcmul(in_n, r, h_n).tanh_()
    return torch.lerp(n, h, z), r, z, n, h_n  # h' = (1 - z) * n + z * h


def _cell_back(factors: torch.Tensor, dh: torch.Tensor, d_out: torch.Tensor, carry: torch.Tensor) -> torch.Tensor:
    """A backward step's elementwise part: the gates' factors (2, B, 3, H) times the gradient dh (2, B, H) reaching
    the step's state, in place, and the gradient reaching the step before from its output d_out and the direct
    path (dh times z, ``carry``)."""
    D, B, _, H = factors.shape
    factors.mul_(dh.view(D, B, 1, H))
    return torch.addcmul(d_out, dh, carry)


@pointwise
def _cell_back_fused(factors: torch.Tensor, carry: torch.Tensor, dh: torch.Tensor, d_out: torch.Tensor) -> torch.Tensor:
    """What :func:`_cell_back` computes, as one new (2, B, 4, H) tensor: the three factors times dh, and in a fourth
    slot the direct path's gradient. One result of one shape, so compiled it is one kernel; :func:`_cell_back`'s
    two results of two shapes were two (on the H200, ``triton_poi_fused_addcmul_0`` and
    ``triton_poi_fused_copy__mul_view_1``, 190 each a MAWPS step). Not written in place into a buffer of every
    step's four slots: there dh is a view of the step after's, and such a write compiled to the wrong step (torch
    2.13 on the CPU, AOTAutograd's aliased inputs, the recompile with a symbolic storage offset), so the fused
    backward keeps these results and stacks them once at the end, where the eager one multiplies the factors'
    buffer in place."""
    D, B, _, H = factors.shape
    dh4 = dh.view(D, B, 1, H)
    last = torch.arange(4, device=factors.device).view(1, 1, 4, 1) == 3
    padded = torch.nn.functional.pad(factors, (0, 0, 0, 1))  # (2, B, 4, H); compiled, the kernel reads factors
    return torch.where(last, torch.addcmul(d_out, dh, carry).view(D, B, 1, H), padded * dh4)


def _low_precision(device: torch.device) -> torch.dtype | None:
    """The autocast dtype when autocast is on for ``device`` (the recurrence then does its matrix
    products in it, as autocast would, with the state, the gates and the gradients kept in float32)."""
    if device.type != "meta" and torch.is_autocast_enabled(device.type):  # meta (shapes only) has no autocast
        return torch.get_autocast_dtype(device.type)
    return None


def _autocast_off(device: torch.device):
    """Autocast off for ``device``'s type; nothing to turn off on ``meta``, which has no autocast (the meta
    device runs a pass a CUDA graph would capture, as shapes: solvers/gts_graphs.py's capture_footprint)."""
    return contextlib.nullcontext() if device.type == "meta" else torch.autocast(device.type, enabled=False)


class BiGRU(nn.Module):
    """Drop-in for ``nn.GRU(input, hidden, layers, bidirectional=True)`` on padded (B, T, E) input.

    On CUDA (or with ``library=True``) the same parameters run through torch's own GRU on packed
    sequences, which on CUDA is cuDNN: a few fused kernels a layer instead of dozens of small ones a
    time step. The parameters are the same either way, so a checkpoint loads and runs on any device."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int, dropout: float = 0.0, library: bool = False):
        super().__init__()
        self.hidden_size, self.num_layers = hidden_size, num_layers
        self.library = library  # use torch's GRU on CPU too (on CUDA it is always used)
        self.dropout_p = dropout
        self.dropout = Dropout(dropout)
        H = hidden_size
        self.w_ih = nn.ParameterList()
        self.b_ih = nn.ParameterList()
        self.w_hh = nn.ParameterList()
        self.b_hh = nn.ParameterList()
        for layer in range(num_layers):
            size = input_size if layer == 0 else 2 * H
            self.w_ih.append(nn.Parameter(torch.empty(2, 3 * H, size)))
            self.b_ih.append(nn.Parameter(torch.empty(2, 3 * H)))
            self.w_hh.append(nn.Parameter(torch.empty(2, 3 * H, H)))
            self.b_hh.append(nn.Parameter(torch.empty(2, 3 * H)))
        bound = 1.0 / math.sqrt(H)  # nn.GRU's initialization
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor, shape_fixed: bool = False
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """x (B, T, E), lengths (B,) -> outputs (B, T, 2H) [forward; backward] and final states
        (layers * 2, B, H) in nn.GRU's h_n order. ``shape_fixed``: the masked recurrence on every device,
        whose operations depend on the shapes alone (a packed batch's depend on the lengths), as a pass
        captured once a shape as a CUDA graph needs (solvers/gts_graphs.py)."""
        if not shape_fixed and (x.is_cuda or self.library):
            return self._library_forward(x, lengths)
        B, T, _ = x.shape
        valid = (torch.arange(T, device=x.device)[:, None] < lengths.to(x.device)[None]).to(x.dtype)  # (T, B)
        mask = torch.stack([valid, valid.flip(0)])[..., None]  # (2, T, B, 1)
        seq = x.transpose(0, 1)  # (T, B, E)
        finals = []
        for layer in range(self.num_layers):
            if layer:
                seq = self.dropout(seq)
            inputs = torch.stack([seq, seq.flip(0)])  # (2, T, B, E): the backward direction reads reversed time
            # input projections of every step, bias added by the product (no separate (2, T, B, 3H) add);
            # in the weights' dtype under autocast too (the recurrence keeps its state and gates there)
            gi = torch.baddbmm(self.b_ih[layer][:, None, :], inputs.reshape(2, T * B, -1),
                               self.w_ih[layer].transpose(1, 2)).to(self.w_hh[layer].dtype).view(2, T, B, -1)
            seq, last = _BiRecurrence.apply(gi, mask, self.w_hh[layer], self.b_hh[layer])  # (T, B, 2H), (2, B, H)
            finals += [last[0], last[1]]
        return seq.transpose(0, 1), torch.stack(finals)

    def flat_weights(self) -> list[torch.Tensor]:
        """The parameters in torch's GRU order: per layer, per direction, w_ih, w_hh, b_ih, b_hh."""
        return [p[layer][d] for layer in range(self.num_layers) for d in range(2)
                for p in (self.w_ih, self.w_hh, self.b_ih, self.b_hh)]

    def _library_forward(self, x: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`forward` through ``torch._VF.gru`` on a packed batch (cuDNN on CUDA). It runs in
        the parameters' dtype even under autocast (the hand-written path keeps its state and gates in
        float32 too);
        outputs at padded positions are zero."""
        B, T, _ = x.shape
        dtype = self.w_hh[0].dtype  # the parameters' (float32 in training, autocast or not)
        packed, rows = pack_rows(x.to(dtype), lengths)
        hx = x.new_zeros(2 * self.num_layers, B, self.hidden_size, dtype=dtype)
        with torch.autocast(x.device.type, enabled=False), warnings.catch_warnings():
            # the weights are views of the (2, 3H, ...) parameters, not one flat cuDNN buffer: cuDNN
            # copies them into one per call (a few copies a batch), and warns about it
            warnings.filterwarnings("ignore", message="RNN module weights are not part")
            data, h_n = torch._VF.gru(packed.data, packed.batch_sizes, hx, self.flat_weights(), True,
                                      self.num_layers, self.dropout_p, self.training, True)
        seq = unpack_rows(data, rows, B, T)  # (B, T, 2H)
        return seq, h_n.index_select(1, packed.unsorted_indices)  # h_n back in input order


def packing(lengths: torch.Tensor, T: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """What ``pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)`` computes of a
    (B, T, ...) batch, as indices: the rows of ``x.reshape(B * T, ...)`` in packed (time-major, longest
    first) order, the batch sizes of each step, the sorting permutation and its inverse (sorted rows back
    in input order).
    One gather packs and one ``index_copy`` unpacks, where torch's pack and pad functions slice and copy
    once per time step in forward and again in backward (2,645 aten operations at T = 69, B = 64; on CUDA
    each copy a kernel). Computed on the CPU (``lengths`` is a CPU tensor in a Batch): no device sync."""
    lengths = lengths.cpu()
    if lengths.numel() == 0 or int(lengths.min()) < 1 or int(lengths.max()) > T:
        raise ValueError(f"lengths must lie in 1..{T}, got {lengths.tolist()}")
    sorted_lengths, order = torch.sort(lengths, descending=True, stable=True)
    steps = torch.arange(int(sorted_lengths[0]))
    valid = steps[:, None] < sorted_lengths[None, :]  # (T', B), columns longest first
    rows = (order[None, :] * T + steps[:, None])[valid]
    return rows, valid.sum(1), order, torch.argsort(order)


def pack_rows(x: torch.Tensor, lengths: torch.Tensor) -> tuple[PackedSequence, torch.Tensor]:
    """``pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)`` of a (B, T, ...) batch
    as one gather (see :func:`packing`), and the rows it took, for :func:`unpack_rows`."""
    B, T = x.shape[:2]
    rows, batch_sizes, order, unsorted = packing(lengths, T)  # batch_sizes stays on the CPU, as torch wants
    rows, order, unsorted = (to_device(t, x.device) for t in (rows, order, unsorted))
    data = x.reshape(B * T, *x.shape[2:]).index_select(0, rows)  # time-major, longest first
    return PackedSequence(data, batch_sizes, order, unsorted), rows


def unpack_rows(data: torch.Tensor, rows: torch.Tensor, B: int, T: int) -> torch.Tensor:
    """``pad_packed_sequence(..., batch_first=True, total_length=T)`` of packed ``data`` by the rows
    :func:`pack_rows` took: (B, T, ...), zero at padded positions."""
    return data.new_zeros(B * T, *data.shape[1:]).index_copy(0, rows, data).view(B, T, *data.shape[1:])
