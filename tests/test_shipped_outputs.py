"""Every shipped checkpoint loads and gives the outputs stored in tests/data/shipped_outputs.npz (see
tests/shipped_reference.py): moving code between modules must not change what a shipped model computes."""
import numpy as np
import pytest
from shipped_reference import REFERENCE, reference_output

from energy_transformer.pretrained import available_models, load_pretrained


@pytest.fixture(scope="module")
def stored():
    with np.load(REFERENCE, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def test_every_shipped_model_has_a_reference(stored):
    assert sorted(stored) == available_models()


@pytest.mark.parametrize("name", available_models())
def test_shipped_model_gives_its_stored_outputs(stored, name):
    out = reference_output(load_pretrained(name))
    ref = stored[name]
    assert out.shape == ref.shape and np.isfinite(out).all()
    # float32 with XLA's optimisation on or off: the same to a few units in the last places, far below any change
    np.testing.assert_allclose(out, ref, rtol=2e-4, atol=2e-4 * float(np.abs(ref).max()))
