"""ConvS2S-specific checks (the shared baseline behaviour is in test_baselines.py): the decoder is
causal, padding does not leak into real positions, over-long inputs and targets share the last
position embedding, and the config refuses what the model cannot build."""
import pytest
import torch

from baseline_toys import toy_problems
from solvers.convs2s import ConvS2SConfig, ConvS2SSolver

TINY = ConvS2SConfig(embedding_size=16, hidden_size=32, encoder_layers=2, decoder_layers=2, dropout=0.0)


def untrained(config=TINY):
    torch.manual_seed(0)
    solver = ConvS2SSolver(config, device="cpu")
    solver.encoding = solver.build_encoding(toy_problems())
    solver.model = solver.build_model(solver.encoding).eval()
    return solver


def test_the_decoder_sees_no_later_token():
    model = untrained().model
    batch = untrained().encoding.batch(toy_problems()[:1], with_targets=False)
    keys, values, pad = model.encode_text(batch)
    a = torch.tensor([[model.bos_id, 0, 5, 6]])
    b = torch.tensor([[model.bos_id, 0, 7, 1]])  # same first two tokens, other later ones
    with torch.no_grad():
        la, lb = model.decode(a, keys, values, pad), model.decode(b, keys, values, pad)
    assert torch.allclose(la[:, :2], lb[:, :2]) and not torch.allclose(la[:, 2:], lb[:, 2:])


def test_padding_in_a_batch_changes_no_encoding():
    solver = untrained()
    short, long = toy_problems()[0], toy_problems()[5]  # 14 and 21 tokens
    together = solver.encode([short, long])
    alone = solver.encode([short])
    assert torch.allclose(together[0], alone[0], atol=1e-6)


def test_inputs_and_targets_beyond_the_position_tables_still_work():
    solver = untrained(ConvS2SConfig(embedding_size=16, hidden_size=32, encoder_layers=1, decoder_layers=1,
                                     dropout=0.0, max_input_len=4, max_output_len=2))
    problems = toy_problems()  # texts of 12+ tokens, targets of up to 5 tokens
    likelihoods = solver.log_likelihood(problems)
    assert all(l.total < 0 for l in likelihoods)
    # with max_output_len 2 an operator could not be closed: every beam is a single leaf
    assert all(len(p.tokens) == 1 for p in solver.predict(problems, beam_size=2))


@pytest.mark.parametrize("field, value, message", [
    ("kernel_size", 4, "kernel_size must be odd"),
    ("kernel_size", 0, "kernel_size must be positive"),
    ("dropout", 1.0, "dropout must lie in"),
    ("max_input_len", 0, "max_input_len must be positive"),
])
def test_config_refuses_by_field(field, value, message):
    with pytest.raises(ValueError, match=message):
        ConvS2SConfig(**{field: value})
