"""The GTS encoder's BiGRU (solvers/fast_gru.py): same function as nn.GRU, exact gradients, and a
low-precision path under autocast that stays close to float32."""
from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from baseline_toys import toy_problems
from solvers.fast_gru import BiGRU, pack_rows, packing, unpack_rows
from solvers.registry import build_solver


def _pair(input_size: int, hidden: int, layers: int, dtype=torch.float64, seed: int = 0):
    torch.manual_seed(seed)
    ours = BiGRU(input_size, hidden, layers).to(dtype)
    ref = nn.GRU(input_size, hidden, layers, bidirectional=True).to(dtype)
    with torch.no_grad():
        for layer in range(layers):
            for d, suffix in enumerate(("", "_reverse")):
                getattr(ref, f"weight_ih_l{layer}{suffix}").copy_(ours.w_ih[layer][d])
                getattr(ref, f"weight_hh_l{layer}{suffix}").copy_(ours.w_hh[layer][d])
                getattr(ref, f"bias_ih_l{layer}{suffix}").copy_(ours.b_ih[layer][d])
                getattr(ref, f"bias_hh_l{layer}{suffix}").copy_(ours.b_hh[layer][d])
    return ours, ref


def test_matches_packed_nn_gru_outputs_states_and_gradients():
    B, T, E, H = 4, 7, 5, 6
    ours, ref = _pair(E, H, layers=2)
    lengths = torch.tensor([7, 3, 5, 1])
    x = torch.randn(B, T, E, dtype=torch.float64, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_(True)
    out, finals = ours(x, lengths)
    packed, h_n = ref(pack_padded_sequence(x_ref.transpose(0, 1), lengths, enforce_sorted=False))
    out_ref = pad_packed_sequence(packed)[0].transpose(0, 1)  # (B, T, 2H), zeros past each length
    valid = (torch.arange(T)[None, :] < lengths[:, None])[..., None].to(out.dtype)
    assert torch.allclose(out * valid, out_ref, atol=1e-12)
    assert torch.allclose(finals, h_n, atol=1e-12)
    weights = torch.randn_like(out_ref)
    ((out * valid * weights).sum() + finals.sum()).backward()
    ((out_ref * weights).sum() + h_n.sum()).backward()
    assert torch.allclose(x.grad, x_ref.grad, atol=1e-12)
    assert torch.allclose(ours.w_hh[1].grad[1], ref.weight_hh_l1_reverse.grad, atol=1e-12)
    assert torch.allclose(ours.b_hh[0].grad[0], ref.bias_hh_l0.grad, atol=1e-12)


def test_hand_written_backward_passes_gradcheck():
    torch.manual_seed(1)
    gru = BiGRU(3, 4, 1).double()
    x = torch.randn(3, 5, 3, dtype=torch.float64, requires_grad=True)
    lengths = torch.tensor([5, 2, 4])
    params = [gru.w_ih[0], gru.w_hh[0], gru.b_hh[0]]

    def f(x, *_):
        out, finals = gru(x, lengths)
        return out, finals

    assert torch.autograd.gradcheck(f, (x, *params), eps=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.bfloat16])
def test_autocast_low_precision_path_is_close_to_float32(dtype):
    """Under CPU autocast the recurrent products run in bfloat16; outputs and gradients stay within
    bfloat16 rounding of the float32 ones, and nothing leaves the layer in low precision."""
    torch.manual_seed(2)
    gru = BiGRU(16, 32, 2)
    x = torch.randn(8, 12, 16, requires_grad=True)
    lengths = torch.tensor([12, 9, 3, 12, 5, 7, 1, 10])

    def run(low: bool):
        gru.zero_grad()
        x.grad = None
        with torch.autocast("cpu", dtype=dtype, enabled=low):
            out, finals = gru(x, lengths)
        (out.pow(2).sum() + finals.sum()).backward()
        return out, finals, x.grad.clone(), gru.w_hh[0].grad.clone()

    full, low = run(False), run(True)
    assert low[0].dtype == torch.float32 and low[2].dtype == torch.float32 and low[3].dtype == torch.float32
    for a, b in zip(full, low):
        rel = (a - b).norm() / a.norm()
        assert 0 < rel < 0.03, rel  # differs (the products are bf16), by about bf16 rounding


@pytest.mark.parametrize("lengths", [[7, 3, 5, 1], [5, 3, 5, 1]], ids=["longest-is-T", "ties-and-shorter-than-T"])
def test_the_library_path_cuda_takes_computes_the_same_function_and_gradients(lengths):
    """On CUDA the same parameters run through torch's GRU (cuDNN there); on CPU ``library=True``
    takes that path, so both are checked here against the hand-written recurrence in float64."""
    B, T, E, H = 4, 7, 5, 6
    ours, _ = _pair(E, H, layers=2)
    lib = BiGRU(E, H, 2, library=True).double()
    lib.load_state_dict(ours.state_dict())  # the same checkpoint either way
    lengths = torch.tensor(lengths)
    x = torch.randn(B, T, E, dtype=torch.float64, requires_grad=True)
    x_lib = x.detach().clone().requires_grad_(True)
    out, finals = ours(x, lengths)
    out_lib, finals_lib = lib(x_lib, lengths)
    valid = (torch.arange(T)[None, :] < lengths[:, None])[..., None].to(out.dtype)
    assert torch.allclose(out * valid, out_lib, atol=1e-12) and torch.allclose(finals, finals_lib, atol=1e-12)
    weights = torch.randn_like(out)
    ((out * valid * weights).sum() + finals.sum()).backward()
    ((out_lib * weights).sum() + finals_lib.sum()).backward()
    assert torch.allclose(x.grad, x_lib.grad, atol=1e-12)
    for name, p in ours.named_parameters():
        assert torch.allclose(p.grad, dict(lib.named_parameters())[name].grad, atol=1e-12), name


def test_shape_fixed_takes_the_masked_recurrence_where_the_library_path_would_run(monkeypatch):
    """A CUDA graph is captured once a shape: ``shape_fixed`` runs the masked recurrence even where the packed
    library path would (CUDA; here ``library=True``), as the same function (float64), and on the ``meta``
    device, where a read of the lengths' values (packing needs them) would raise."""
    B, T, E, H = 4, 7, 5, 6
    ours, _ = _pair(E, H, layers=2)
    lib = BiGRU(E, H, 2, library=True).double()
    lib.load_state_dict(ours.state_dict())
    lengths = torch.tensor([7, 3, 5, 1])
    x = torch.randn(B, T, E, dtype=torch.float64)
    out, finals = ours(x, lengths)

    def no_packing(*args):
        raise AssertionError("the shape-fixed path packed the batch")

    monkeypatch.setattr("solvers.fast_gru.pack_rows", no_packing)
    out_fixed, finals_fixed = lib(x, lengths, shape_fixed=True)
    assert torch.equal(out_fixed, out) and torch.equal(finals_fixed, finals)
    with pytest.raises(AssertionError, match="packed"):
        lib(x, lengths)  # the library path, without the flag
    meta_out, meta_finals = lib.to("meta")(x.to("meta"), lengths.to("meta"), shape_fixed=True)
    assert meta_out.shape == (B, T, 2 * H) and meta_finals.shape == (4, B, H)


def test_packing_gathers_what_torch_packs():
    """``packing``'s rows, taken from the flattened batch, are torch's packed data and its batch sizes;
    the inverse permutation puts the sorted order back; pack_rows and unpack_rows give back the batch."""
    B, T = 6, 9
    lengths = torch.tensor([4, 9, 1, 4, 7, 2])
    x = torch.randn(B, T, 3)
    rows, batch_sizes, order, unsorted = packing(lengths, T)
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    assert torch.equal(batch_sizes, packed.batch_sizes)
    data = x.reshape(B * T, 3).index_select(0, rows)
    # torch's sort of equal lengths may order them otherwise: compare each step's rows as a set
    start = 0
    for size in batch_sizes.tolist():
        mine = sorted(map(tuple, data[start:start + size].tolist()))
        assert mine == sorted(map(tuple, packed.data[start:start + size].tolist()))
        start += size
    assert torch.equal(lengths[order], torch.sort(lengths, descending=True).values)
    assert torch.equal(order[unsorted], torch.arange(B))
    packed_rows, taken = pack_rows(x, lengths)
    valid = (torch.arange(T)[None, :] < lengths[:, None])[..., None]
    assert torch.equal(unpack_rows(packed_rows.data, taken, B, T), x * valid)
    unpacked, _ = pad_packed_sequence(packed_rows, batch_first=True, total_length=T)  # torch reads ours
    assert torch.equal(unpacked, x * valid)
    for bad in ([0, 3], [3, 10], []):
        with pytest.raises(ValueError, match="lengths must lie"):
            packing(torch.tensor(bad, dtype=torch.long), T)


def test_the_lstm_encoder_reads_its_batch_as_torchs_packing_would():
    """The LSTM baseline packs by index too: its encoder states and final states equal those of torch's
    pack_padded_sequence and pad_packed_sequence around the same nn.LSTM (problems of unequal lengths)."""
    problems = toy_problems()
    solver = build_solver("lstm", embedding_size=8, hidden_size=12, encoder_layers=2, decoder_layers=1, dropout=0.0)
    solver.encoding = solver.build_encoding(problems)
    model = solver.build_model(solver.encoding).eval()
    batch = solver.encoding.batch(problems)
    assert len(set(batch.lengths.tolist())) > 1
    captured = {}
    handle = model.drop.register_forward_hook(lambda mod, args, result: captured.update(x=result))
    out, mask, (h, c) = model.encode_text(batch)
    handle.remove()
    x = captured["x"]  # (B, S, E): the LSTM's input
    theirs = pack_padded_sequence(x, batch.lengths, batch_first=True, enforce_sorted=False)
    ref_out, (ref_h, ref_c) = model.encoder(theirs)
    ref_out, _ = pad_packed_sequence(ref_out, batch_first=True, total_length=batch.tokens.shape[1])
    H = 12
    assert torch.allclose(out, ref_out[..., :H] + ref_out[..., H:], atol=1e-6)
    assert torch.allclose(h, (ref_h[0::2] + ref_h[1::2])[-1:], atol=1e-6)
    assert torch.allclose(c, (ref_c[0::2] + ref_c[1::2])[-1:], atol=1e-6)
