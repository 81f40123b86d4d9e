"""The usage lines of the tutorial's first draft (shared/seeds, "Energy Transformer") run against the package.

They are copied as written; where the draft's own code has a bug or a different calling convention, the line is
ported and the change is said in a comment."""
import jax
import jax.numpy as jnp
import jax.random as jr
import numpy as np

from energy_transformer.core import (
    EnergyLayerNorm,
    EnergyTransformer,
    ETConfig,
    fullETConfig,
    mediumETConfig,
    smallETConfig,
)
from energy_transformer.core import energy_recall as package_energy_recall
from energy_transformer.image import ImageEnergyTransformer, ImageETConfig
from energy_transformer.patches import Patcher


def test_configs_and_beta():
    assert smallETConfig == ETConfig(D=12, H=2, Y=6, M=24)
    assert mediumETConfig == ETConfig(D=128, H=4, Y=32, M=256)
    assert fullETConfig.get_beta() == 1 / np.sqrt(64)
    assert np.isclose(smallETConfig.get_beta(), 1 / np.sqrt(smallETConfig.Y))  # default 1/sqrt(Y)


def test_energy_descent_of_the_draft():
    key = jr.PRNGKey(11)
    # draft: EnergyTransformer(key, config=smallETConfig); equinox modules take the key as a keyword
    et = EnergyTransformer(smallETConfig, key=key)
    # draft: EnergyLayerNorm(gamma=1., delta=jnp.zeros(et.config.D)); ours starts at gamma = 1, delta = 0
    lnorm = EnergyLayerNorm(et.config.D)
    assert float(lnorm.gamma) == 1.0 and not np.asarray(lnorm.delta).any()

    # the draft's helper, verbatim: its layer norm acts on the whole (N, D) array of tokens
    def energy_recall(Efn, x_init, nsteps, step_size):
      "Simple gradient descent to recall a memory"
      @jax.jit
      def gd_step(x, i):
          energy, grad = jax.value_and_grad(Efn)(lnorm(x))
          x_next = x - step_size * grad
          return x_next, energy

      xhat_init = lnorm(x_init)
      final_x, energy_history = jax.lax.scan(
          gd_step,
          xhat_init,
          jnp.arange(nsteps)
      )
      return final_x, energy_history

    x_init = jr.normal(key, (100, et.config.D))  # Layer normalized tokens
    # draft: nsteps=3000 (fewer steps here: the check is the same)
    final_x, energy_history = energy_recall(et.energy, x_init, nsteps=300, step_size=0.5)
    assert final_x.shape == x_init.shape and energy_history.shape == (300,)
    assert (np.diff(np.asarray(energy_history)) <= 1e-3).all()  # monotonically decreasing
    assert energy_history[-1] < energy_history[0]
    # the package's helper takes the same steps (it starts from the tokens it is given: here the draft's xhat_init)
    ours_x, ours_history = package_energy_recall(et.energy, lnorm(x_init), nsteps=300, step_size=0.5, lnorm=lnorm)
    assert np.allclose(ours_x, final_x, atol=1e-4) and np.allclose(ours_history, energy_history, rtol=1e-5)

    # the layer norm on (N, D) is the layer norm of each token
    g = lnorm(x_init)
    assert np.allclose(g, jax.vmap(lnorm)(x_init), atol=1e-6)
    # attention and memory energies on normalised tokens; the total is their sum
    assert np.isclose(et.energy(g), et.attn_energy(g) + et.hn_energy(g), rtol=1e-6)
    assert et.hn_energy(g) <= 0
    # the layer norm's Lagrangian and its energy (Legendre transform), summed over the tokens: the draft's lines
    x = x_init
    assert np.allclose(jax.grad(lnorm.lagrangian)(x), lnorm(x), atol=1e-5)  # g = dL/dx
    # a difference of two numbers near 1,200 in float32; the energy is the sum of the tokens' energies
    assert np.isclose(lnorm.energy(x), (lnorm(x) * x).sum() - lnorm.lagrangian(x), atol=1e-2)
    assert np.isclose(lnorm.energy(x), jax.vmap(lnorm.energy)(x).sum(), rtol=1e-5)


def test_patcher_of_the_draft():
    img = np.random.default_rng(0).random((3, 32, 48), dtype=np.float32)
    patcher = Patcher.from_img(img, 16)
    assert patcher == Patcher.from_img_shape(img.shape, 16)
    assert (patcher.patch_size, patcher.num_patches, patcher.num_patch_elements) == (16, 6, 3 * 16 * 16)
    # draft: patchify gives (N, c, h, w); ours gives the grid (kh, kw, c, h, w), and patchified_shape says so
    assert patcher.patchify(img).shape == patcher.patchified_shape()
    assert np.array_equal(patcher.unpatchify(patcher.patchify(img)), img)


def test_image_et_of_the_draft():
    key = jr.PRNGKey(0)
    # draft: ImageETConfig() is 224 x 224 with the full ET; a small config keeps the test fast
    config = ImageETConfig(image_shape=(3, 32, 32), patch_size=8, et=smallETConfig, T=3)
    imageET = ImageEnergyTransformer.rand_init(key, config)
    N, D = config.N, config.et.D
    x = jr.normal(key, (N, D))
    mask = jnp.zeros(N, bool).at[jnp.array([0, 5, 7])].set(True)
    # draft: corrupt_tokens(x, mask, n_masked=100) pads a `nonzero` index list with 0, which also masks token 0
    # when fewer than 100 are masked; ours places the MASK token with a boolean `jnp.where` (n_masked unused)
    c = imageET.corrupt_tokens(x, mask, n_masked=100)
    assert np.array_equal(c[mask], jnp.broadcast_to(imageET.embed.mask_token, (3, D)))  # ours: tokens live in `embed`
    assert np.array_equal(c[~mask], x[~mask])
    t = imageET.prep_tokens(x, mask)  # CLS + MASK tokens and POS embeddings
    assert t.shape == (N + 1, D)
    assert np.allclose(t[0], imageET.embed.cls_token + imageET.embed.pos[0])
    out, _ = imageET(jnp.zeros(config.image_shape), mask)
    assert out.shape == config.image_shape
