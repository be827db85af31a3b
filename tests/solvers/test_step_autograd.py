"""solvers/step_autograd.py: the same gradients as plain autograd, with the weight gradients of a
layer's many calls computed once and row-prefix slices sharing one gradient buffer."""
from __future__ import annotations

import gc
import weakref

import pytest
import torch
from torch import nn

from solvers.step_autograd import DeferredLinears, StepStore, gate, row_prefixes


def _layers():
    torch.manual_seed(0)
    return {"a": nn.Linear(4, 3).double(), "b": nn.Linear(3, 4).double(), "unused": nn.Linear(2, 2).double()}


def _run(calls_of, x):
    """A small step loop: each step feeds the previous output through a then b, on fewer rows."""
    h = x
    for n in (5, 3, 3, 1):
        h = torch.tanh(calls_of("b")(torch.tanh(calls_of("a")(h[:n]))))
    return h.sum() + x.sum()


def test_deferred_weight_gradients_equal_plain_autograd():
    layers = _layers()
    x = torch.randn(5, 4, dtype=torch.float64, requires_grad=True)
    _run(lambda name: layers[name], x).backward()
    plain = {n: p.grad.clone() for n, p in nn.ModuleDict(layers).named_parameters() if p.grad is not None}
    plain_x = x.grad.clone()
    for p in nn.ModuleDict(layers).parameters():
        p.grad = None
    x.grad = None
    for _ in range(2):  # twice: each pass's gathered calls are consumed by its own backward
        deferred = DeferredLinears(layers)
        _run(lambda name: deferred[name], x).backward()
    got = {n: p.grad for n, p in nn.ModuleDict(layers).named_parameters() if p.grad is not None}
    assert set(got) == set(plain) == {"a.weight", "a.bias", "b.weight", "b.bias"}  # "unused" gets no gradient
    for name in plain:
        assert torch.allclose(got[name], 2 * plain[name], atol=1e-12), name
    assert torch.allclose(x.grad, 2 * plain_x, atol=1e-12)


def test_gate_by_hand():
    y = torch.tensor([[0.0, 1.0, 2.0, 3.0, 10.0, 0.0, -1.0, 0.0]])  # two pieces of [value (2); gate (2)]
    expected = torch.tanh(torch.tensor([0.0, 1.0, 10.0, 0.0])) * torch.sigmoid(torch.tensor([2.0, 3.0, -1.0, 0.0]))
    assert torch.allclose(gate(y, pieces=2), expected[None])
    assert torch.allclose(gate(y[:, :4]), expected[None, :2])


@pytest.mark.parametrize("pieces", [1, 2])
def test_deferred_gated_calls_equal_plain_autograd(pieces):
    """``layers.gated(name, x, pieces)`` (hand-written backward) against gate(layer(x)) through autograd,
    over a few steps on fewer rows, in float64: outputs, input and parameter gradients."""
    torch.manual_seed(1)
    layer = nn.Linear(6, 4 * pieces).double()
    x = torch.randn(5, 6, dtype=torch.float64, requires_grad=True)
    weights = torch.randn(3, 5, 2 * pieces, dtype=torch.float64)

    def run(call):
        return sum((call(x[:n] * (k + 1)) * weights[k, :n]).sum() for k, n in enumerate((5, 3, 1)))

    run(lambda h: gate(layer(h), pieces)).backward()
    plain = [x.grad.clone(), layer.weight.grad.clone(), layer.bias.grad.clone()]
    x.grad = layer.weight.grad = layer.bias.grad = None
    deferred = DeferredLinears({"g": layer})
    out = run(lambda h: deferred.gated("g", h, pieces))
    out.backward()
    for got, want in zip((x.grad, layer.weight.grad, layer.bias.grad), plain):
        assert torch.allclose(got, want, rtol=1e-12, atol=1e-14)
    with torch.no_grad():
        assert torch.allclose(DeferredLinears({"g": layer}).gated("g", x, pieces), gate(layer(x), pieces))


def test_without_gradients_the_layers_themselves_are_called():
    layers = _layers()
    with torch.no_grad():
        deferred = DeferredLinears(layers)
    assert deferred["a"] is layers["a"]
    with pytest.raises(ValueError, match="bias"):
        DeferredLinears({"nobias": nn.Linear(2, 2, bias=False)})


def test_row_prefixes_backward_equals_slicing():
    torch.manual_seed(1)
    x = torch.randn(6, 3, 2, dtype=torch.float64, requires_grad=True)
    w = torch.randn(6, 3, 2, dtype=torch.float64)
    sizes = [6, 4, 4, 2, 1]

    def loss(prefixes):
        return sum((prefixes[n] * w[:n]).pow(2).sum() * (i + 1) for i, n in enumerate(sizes) if n != 1)

    loss({n: x[:n] for n in sizes}).backward()
    expected, x.grad = x.grad.clone(), None
    prefixes = row_prefixes(x, sizes)
    assert sorted(prefixes) == [1, 2, 4, 6] and torch.equal(prefixes[4], x[:4])
    loss(prefixes).backward()  # the prefix of 1 row is never used
    assert torch.allclose(x.grad, expected, atol=1e-12)


def _store_loop(x, w, stored: bool):
    """A step loop writing rows each step and gathering earlier ones: with StepStore, or with the
    plain autograd it replaces (a running concatenation, gathers by index, index_copy)."""
    idx = lambda *v: torch.tensor(v)  # noqa: E731
    table = StepStore.of(x) if stored else x
    read_table = (lambda i: table.read(i)) if stored else (lambda i: x[i])
    acc = StepStore(7) if stored else None
    out = []
    for step, (take, back, over) in enumerate([((0, 2), None, None), ((1, 3), (0, 1), (0,)),
                                              ((4, 4, 2), (1, 2), (2,))]):
        h = torch.tanh(read_table(idx(*take)) * w[step])  # (n, 2)
        if back is not None:  # add earlier steps' rows, then overwrite one row of this step
            earlier = acc.read(idx(*back)) if stored else acc[idx(*back)]
            h = h + earlier.sum(0)
        if stored:
            first = acc.append(h)
        else:
            first = 0 if acc is None else acc.shape[0]
            acc = h if acc is None else torch.cat([acc, h])
        if over is not None:
            at = idx(*(first + k for k in over))
            rows = acc.read(at) if stored else acc[at]
            new = rows.pow(2) * 3
            if stored:
                acc.write_at(at, new)
            else:
                acc = acc.index_copy(0, at, new)
        out.append(h)
    final = acc.read(torch.arange(7)) if stored else acc
    return (final * torch.arange(1.0, 15.0, dtype=x.dtype).view(7, 2)).sum() + torch.cat(out).pow(2).sum()


def test_step_store_gradients_equal_plain_autograd():
    torch.manual_seed(2)
    grads = []
    for stored in (False, True):
        x = torch.randn(5, 2, dtype=torch.float64, requires_grad=True)
        x.data = torch.linspace(-1, 1, 10, dtype=torch.float64).view(5, 2)
        w = torch.tensor([[0.5, -1.0], [2.0, 0.3], [-0.7, 1.1]], dtype=torch.float64, requires_grad=True)
        loss = _store_loop(x, w, stored)
        loss.backward(retain_graph=True)
        grads.append((loss.item(), x.grad.clone(), w.grad.clone()))
        loss.backward()  # a second backward of the same graph adds the same gradients again
        assert torch.allclose(x.grad, 2 * grads[-1][1], atol=1e-12) and torch.allclose(w.grad, 2 * grads[-1][2])
    (l0, gx0, gw0), (l1, gx1, gw1) = grads
    assert l1 == pytest.approx(l0, rel=1e-14)
    assert torch.allclose(gx1, gx0, atol=1e-12) and torch.allclose(gw1, gw0, atol=1e-12)
    assert gx0.abs().sum() > 0 and gw0.abs().sum() > 0


def test_step_store_refuses_rows_past_its_size():
    store = StepStore(3)
    store.append(torch.zeros(2, 1))
    with pytest.raises(ValueError, match="beyond its 3"):
        store.append(torch.zeros(2, 1))



def test_a_store_is_freed_with_its_graph():
    """Once the loss and the store are dropped after backward, the store's rows go too: nothing
    but the graph holds them (no reference cycle through autograd's nodes keeps them alive, which
    the garbage collector cannot free once later rows are computed from earlier ones)."""
    x = torch.randn(4, 3, requires_grad=True)
    store = StepStore(4)
    store.append(x[:2] * 2)  # rows 0, 1: 2 x[:2]
    store.append(store.read(torch.tensor([0, 1])) * 3)  # rows 2, 3: 6 x[:2]
    loss = (store.read(torch.arange(4)) * 5).sum()
    rows = weakref.ref(store.buffers.buf)
    loss.backward()
    assert torch.equal(x.grad, torch.tensor([[40.0] * 3] * 2 + [[0.0] * 3] * 2))
    del store, loss
    gc.collect()
    assert rows() is None  # (since session 32 let go at the backward already: the next test)


def test_a_read_of_rows_whose_gradient_is_the_stores_own():
    """Rows written as earlier rows plus one: the later rows' gradient reaches the read of the
    earlier ones unchanged, a piece of the store's own gradient buffer, and adds into it."""
    x = torch.zeros(2, 3, requires_grad=True)
    store = StepStore(4)
    store.append(x * 2)  # rows 0, 1: 2 x
    store.append(store.read(torch.tensor([0, 1])) + 1)  # rows 2, 3: 2 x + 1
    store.read(torch.arange(4)).sum().backward()  # d/dx of 2 x + (2 x + 1), every element
    assert torch.equal(x.grad, torch.full((2, 3), 4.0))


def test_a_store_lets_its_rows_go_after_the_backward_while_the_graph_lives():
    """A captured CUDA graph keeps its output, and with it the pass's autograd nodes, which hold their
    store's buffers: after the backward the rows (which no backward reads) are let go while the loss and
    its graph live; a second backward of a graph still works (test_step_store_gradients_equal_plain_autograd)."""
    x = torch.randn(4, 3, requires_grad=True)
    store = StepStore(4)
    store.append(x[:2] * 2)
    store.append(store.read(torch.tensor([0, 1])) * 3)
    loss = (store.read(torch.arange(4)) * 5).sum()
    rows = weakref.ref(store.buffers.buf)
    del store
    gc.collect()
    assert rows() is not None  # held by the graph's nodes
    loss.backward()
    gc.collect()
    assert rows() is None and loss.grad_fn is not None
