"""Autograd helpers for step-by-step decoders whose steps reuse the same weights and row prefixes.

A teacher-forced tree decoder (solvers/gts_decoder.py) applies each of its linear layers once per
output step to a handful of rows, and reads the first n rows of per-batch tensors (the encoder
states) at every step. With plain autograd both cost memory traffic proportional to the steps times
the full tensor size in backward:

- every call's weight gradient is its own thin product (out x n) @ (n x in) that writes a whole
  weight-sized tensor, which autograd then adds into ``.grad``. :class:`DeferredLinears` keeps, per
  layer, the inputs and output gradients of every call and computes the weight and bias gradients
  once, as one product over all calls' rows;
- every ``x[:n]`` slice's backward allocates a zero tensor of x's full size and then adds it into
  the accumulated gradient. :func:`row_prefixes` slices x once for all the prefix lengths a batch
  needs, and its backward adds each prefix's gradient into one zero tensor, rows ``[:n]`` only.

In a torch profile of 8 paper-size GTS training batches on CPU, zero fills, gradient additions and
matrix products other than the batched ones took 1.48 s of 7.2 s, and 0.82 s with these two.

All compute the same gradients as plain autograd (up to floating-point summation order); none
supports double backward.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import torch
from torch import nn

from solvers.fusion import fusing, pointwise


class _Calls:
    """Inputs and output gradients of one layer's calls, gathered as backward reaches them."""

    def __init__(self) -> None:
        self.inputs: list[torch.Tensor] = []
        self.grads: list[torch.Tensor] = []


class _Gather(torch.autograd.Function):
    """(weight, bias) in the dtype the calls compute in (autocast's, cast once per pass, or their
    own); its backward runs after every call that used them (autograd's dependency order) and turns
    the gathered calls into the two gradients, in the parameters' dtype."""

    @staticmethod
    def forward(ctx, weight, bias, calls, dtype):
        ctx.set_materialize_grads(False)  # the calls return no weight gradient: no zero tensors for it
        ctx.calls = calls
        ctx.dtype = weight.dtype
        if dtype == weight.dtype:
            return weight.view_as(weight), bias.view_as(bias)
        return weight.to(dtype), bias.to(dtype)

    @staticmethod
    def backward(ctx, _grad_weight, _grad_bias):
        calls = ctx.calls
        if not calls.grads:
            return None, None, None
        grads = torch.cat(calls.grads)  # (N, out): every call's rows
        inputs = torch.cat(calls.inputs)  # (N, in)
        calls.inputs.clear()
        calls.grads.clear()
        # the product in the calls' dtype, as autocast's linear backward does, then the parameters'
        return grads.t().mm(inputs).to(ctx.dtype), grads.sum(0).to(ctx.dtype), None, None


class _Call(torch.autograd.Function):
    """One call of a deferred layer: backward returns the input's gradient only and leaves the
    weight's to :class:`_Gather`."""

    @staticmethod
    def forward(ctx, x, weight, weight_t, bias, calls):
        if x.dtype != weight.dtype:  # under autocast: the weights are already in its dtype (_Gather)
            x = x.to(weight.dtype)
        ctx.save_for_backward(x, weight)
        ctx.calls = calls
        if fusing():  # the bias in the product's kernel where the library can (cuBLASLt's epilogue on CUDA)
            return torch.addmm(bias, x, weight_t)
        return x.mm(weight_t).add_(bias)  # F.linear, with the transpose made once a pass

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        ctx.calls.inputs.append(x)
        ctx.calls.grads.append(grad)
        grad_x = grad.mm(weight) if ctx.needs_input_grad[0] else None
        return grad_x, None, None, None, None


class _GatedCall(torch.autograd.Function):
    """One call of a deferred layer followed by a gate, ``tanh(value) * sigmoid(gate)`` of each
    ``pieces``-th of the output cut into [value; gate] halves, with a hand-written backward: a
    handful of whole-tensor operations instead of the autograd graph of a split, two activations and
    a product. The weight's gradient is left to :class:`_Gather`, as in :class:`_Call`."""

    @staticmethod
    def forward(ctx, x, weight, weight_t, bias, calls, pieces):
        if x.dtype != weight.dtype:
            x = x.to(weight.dtype)
        ctx.fused = fusing()  # the bias, the activations and the product one kernel (solvers/fusion.py)
        value, gate, out = _gate_tail(x.mm(weight_t), bias, pieces, fused=ctx.fused)
        ctx.save_for_backward(x, weight, value, gate)
        ctx.calls = calls
        return out if pieces == 1 else out.view(x.shape[0], -1)  # (R, pieces * half)

    @staticmethod
    def backward(ctx, grad):
        x, weight, value, gate = ctx.saved_tensors
        if grad.shape != value.shape:
            grad = grad.reshape(value.shape)
        d_y = _gate_back(grad, value, gate, fused=ctx.fused)
        if d_y.shape[0] != x.shape[0]:
            d_y = d_y.view(x.shape[0], -1)
        ctx.calls.inputs.append(x)
        ctx.calls.grads.append(d_y)
        grad_x = d_y.mm(weight) if ctx.needs_input_grad[0] else None
        return grad_x, None, None, None, None, None


@pointwise
def _gate_tail(y: torch.Tensor, bias: torch.Tensor, pieces: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """:class:`_GatedCall`'s forward after its product y (R, out): the bias added, each of the ``pieces`` [value;
    gate] halves activated (rows R * pieces, each [value; gate]), and their product."""
    half = y.shape[1] // (2 * pieces)
    y = y.add_(bias)  # (in place: y is the product's own tensor)
    if pieces > 1:
        y = y.view(-1, 2 * half)  # (R * pieces, 2 * half)
    value, gate_ = y[:, :half].tanh(), y[:, half:].sigmoid()
    return value, gate_, value * gate_


@pointwise
def _gate_back(grad: torch.Tensor, value: torch.Tensor, gate_: torch.Tensor) -> torch.Tensor:
    """The gradient of a gate's [value; gate] pre-activations from its output's ``grad``: autograd's own formulas
    for the product and the two activations."""
    return torch.cat([torch.ops.aten.tanh_backward(grad * gate_, value),
                      torch.ops.aten.sigmoid_backward(grad * value, gate_)], 1)


def gate(y: torch.Tensor, pieces: int = 1) -> torch.Tensor:
    """``tanh(value) * sigmoid(gate)`` of each of ``pieces`` [value; gate] parts of y's last dim."""
    value, gate_ = y.view(*y.shape[:-1], pieces, 2, -1).unbind(-2)
    return (torch.tanh(value) * torch.sigmoid(gate_)).flatten(-2)


class DeferredLinears:
    """``layers[name](x)`` with the weight gradients of all calls computed once (see the module doc).

    Made once per forward pass (one loss); ``self[name](x)`` is that layer applied to x (B, in), in
    autocast's dtype when autocast is on for the layers' device (as ``layer(x)`` would be). Falls back
    to the layers themselves when no gradient is being recorded."""

    def __init__(self, layers: Mapping[str, nn.Linear]):
        for name, layer in layers.items():
            if layer.bias is None:
                raise ValueError(f"DeferredLinears needs layers with a bias ({name} has none)")
        self._calls: dict[str, Callable[[torch.Tensor], torch.Tensor]] = dict(layers)
        self._gated: dict[str, Callable[[torch.Tensor, int], torch.Tensor]] = {
            name: (lambda x, pieces, layer=layer: gate(layer(x), pieces)) for name, layer in layers.items()}
        if not torch.is_grad_enabled():
            return
        for name, layer in layers.items():
            calls = _Calls()
            device = layer.weight.device.type
            autocast = device != "meta" and torch.is_autocast_enabled(device)  # meta tensors have no autocast
            dtype = torch.get_autocast_dtype(device) if autocast else layer.weight.dtype
            w, b = _Gather.apply(layer.weight, layer.bias, calls, dtype)
            w_t = w.t()
            self._calls[name] = lambda x, w=w, w_t=w_t, b=b, calls=calls: _Call.apply(x, w, w_t, b, calls)
            self._gated[name] = (lambda x, pieces, w=w, w_t=w_t, b=b, calls=calls:
                                 _GatedCall.apply(x, w, w_t, b, calls, pieces))

    def __getitem__(self, name: str) -> Callable[[torch.Tensor], torch.Tensor]:
        return self._calls[name]

    def gated(self, name: str, x: torch.Tensor, pieces: int = 1) -> torch.Tensor:
        """:func:`gate` of ``self[name](x)`` (R, pieces * half), with :class:`_GatedCall`'s backward."""
        return self._gated[name](x, pieces)


class _Prefixes(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, *sizes):
        ctx.sizes = sizes
        ctx.shape = x.shape
        ctx.set_materialize_grads(False)
        return tuple(x[:n] for n in sizes)

    @staticmethod
    def backward(ctx, *grads):
        out = None
        for n, grad in zip(ctx.sizes, grads):
            if grad is None:
                continue
            if out is None:
                out = grad.new_zeros(ctx.shape)
            out[:n] += grad
        return (out, *(None for _ in ctx.sizes))


def row_prefixes(x: torch.Tensor, sizes: Sequence[int]) -> dict[int, torch.Tensor]:
    """``{n: x[:n]}`` for each distinct n in ``sizes``, with the cheap backward of the module doc."""
    distinct = sorted(set(sizes), reverse=True)
    if not x.requires_grad or not torch.is_grad_enabled():
        return {n: x[:n] for n in distinct}
    return dict(zip(distinct, _Prefixes.apply(x, *distinct)))


class StepStore:
    """Rows a step-by-step decoder writes step after step and later steps gather by index, kept in one
    buffer outside autograd, with one gradient buffer shared by every read.

    With plain autograd each step's outputs are concatenated to the earlier ones (whose backward
    splits the gradient again, step after step) and every gather's backward allocates a zero tensor
    of the whole concatenation to scatter a few rows into. Here a read's backward adds its rows into
    the store's one gradient buffer, and a write's backward hands its rows of that buffer to the
    written tensor. Autograd runs a write's backward only after every read that came after it: each
    write and read takes the store's token (an empty tensor) made by the write before, so the reads
    after a write and the next write are the token's consumers.

    ``rows`` is the number of rows all appends write together; :meth:`of` wraps one whole tensor.
    The gradients are plain autograd's (the same additions, in the order the reads' backward runs).

    The two buffers live in a :class:`_Buffers` that the graph's nodes hold and that holds nothing
    of the graph; only this object holds the token. Were the buffers on the object that holds the
    token, each pass would leave a reference cycle through autograd's C++ nodes (token -> node ->
    ctx -> store -> token) that Python's garbage collector cannot see, and the buffers, the nodes and
    what they keep would never be freed."""

    def __init__(self, rows: int):
        self.rows = rows
        self.used = 0
        self.buffers = _Buffers(rows)
        self.token: torch.Tensor | None = None

    @classmethod
    def of(cls, x: torch.Tensor) -> "StepStore":
        """A store holding ``x`` whole (read, never written again)."""
        store = cls(x.shape[0])
        store.token = _Append.apply(None, x, store.buffers, None)
        store.used = x.shape[0]
        return store

    def append(self, x: torch.Tensor) -> int:
        """Writes ``x`` (n, ...) as the next n rows; returns the first row's index."""
        start = self.used
        if start + x.shape[0] > self.rows:
            raise ValueError(f"StepStore: rows {start}..{start + x.shape[0]} beyond its {self.rows}")
        self.token = _Append.apply(self.token, x, self.buffers, start)
        self.used = start + x.shape[0]
        return start

    def write_at(self, index: torch.Tensor, x: torch.Tensor) -> None:
        """Overwrites rows ``index`` (already written) with ``x``: their earlier values get no
        gradient from reads after this write."""
        self.token = _WriteAt.apply(self.token, x, self.buffers, index)

    def read(self, index: torch.Tensor) -> torch.Tensor:
        """Rows ``index`` (a long tensor) as they are now: ``buffer[index]``."""
        return _Read.apply(self.token, self.buffers, index)


class PlainStore:
    """:class:`StepStore`'s ``of``, ``append`` and ``read`` with plain autograd: the rows are the concatenation of
    what was written, read by indexing it. Eager it costs what :class:`StepStore` saves (a concatenation a read,
    a zero tensor of the whole a read's backward); it is for a pass compiled whole (``torch.compile`` of the
    padded wave pass), where TorchInductor turns the concatenations, gathers and their backward's scatters into
    a few generated kernels, and a hand-written autograd function would have to be traced through."""

    def __init__(self, rows: int):
        self.rows = rows
        self.parts: list[torch.Tensor] = []
        self.used = 0

    @classmethod
    def of(cls, x: torch.Tensor) -> "PlainStore":
        store = cls(x.shape[0])
        store.append(x)
        return store

    def append(self, x: torch.Tensor) -> int:
        start = self.used
        if start + x.shape[0] > self.rows:
            raise ValueError(f"PlainStore: rows {start}..{start + x.shape[0]} beyond its {self.rows}")
        self.parts.append(x)
        self.used = start + x.shape[0]
        return start

    def read(self, index: torch.Tensor) -> torch.Tensor:
        rows = self.parts[0] if len(self.parts) == 1 else torch.cat(self.parts)
        return rows[index]


class _Buffers:
    """A :class:`StepStore`'s rows (``buf``) and the gradient its reads add up (``grad``), shared by
    its autograd nodes."""

    __slots__ = ("rows", "buf", "shape", "grad", "__weakref__")

    def __init__(self, rows: int):
        self.rows = rows
        self.buf: torch.Tensor | None = None
        self.shape: torch.Size | None = None  # buf's, kept when buf is let go (a second backward reads it)
        self.grad: torch.Tensor | None = None


class _Append(torch.autograd.Function):
    @staticmethod
    def forward(ctx, token, x, buffers, start):
        ctx.set_materialize_grads(False)
        ctx.buffers, ctx.start, ctx.n = buffers, start, x.shape[0]
        if start is None:
            buffers.buf = x  # the whole store (StepStore.of): no copy, and nothing writes into it
        else:
            if buffers.buf is None:
                buffers.buf = x.new_empty((buffers.rows, *x.shape[1:]))
            buffers.buf[start: start + x.shape[0]].copy_(x)
        buffers.shape = buffers.buf.shape
        return torch.empty(0, device=x.device)

    @staticmethod
    def backward(ctx, _token_grad):
        buffers = ctx.buffers
        grad = buffers.grad
        if ctx.start is None or ctx.start == 0:
            # the store's first write runs its backward last: a later backward starts afresh, and the rows,
            # which no backward reads, are let go (a graph's nodes outlive the pass while its output lives:
            # a captured CUDA graph keeps its output, and would keep every store's rows with it)
            buffers.grad = buffers.buf = None
        if grad is not None and ctx.start is not None:
            grad = grad[ctx.start: ctx.start + ctx.n]
        return None, grad, None, None


class _WriteAt(torch.autograd.Function):
    @staticmethod
    def forward(ctx, token, x, buffers, index):
        ctx.set_materialize_grads(False)
        ctx.buffers, ctx.index = buffers, index
        buffers.buf.index_copy_(0, index, x)
        return torch.empty(0, device=x.device)

    @staticmethod
    def backward(ctx, _token_grad):
        buffers = ctx.buffers
        if buffers.grad is None:
            return None, None, None, None
        grad = buffers.grad[ctx.index]
        buffers.grad.index_fill_(0, ctx.index, 0)  # the overwritten values were read by nothing after
        return None, grad, None, None


class _Read(torch.autograd.Function):
    @staticmethod
    def forward(ctx, token, buffers, index):
        ctx.set_materialize_grads(False)
        ctx.buffers, ctx.index = buffers, index
        return buffers.buf[index]

    @staticmethod
    def backward(ctx, grad):
        if grad is not None:
            buffers = ctx.buffers
            if buffers.grad is None:
                buffers.grad = grad.new_zeros(buffers.shape)
            if grad._base is buffers.grad:  # a write's rows of this store, passed on unchanged (x + 1 read back)
                grad = grad.clone()  # index_add_ refuses a source inside the tensor it adds into
            buffers.grad.index_add_(0, ctx.index, grad)
        return None, None, None
