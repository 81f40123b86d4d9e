"""Data parallelism: one training step on 1 device and on 2 (forced CPU) devices gives the same parameters."""
import os
import subprocess
import sys
import textwrap

import numpy as np

# runs in a fresh interpreter: the device count is fixed when jax is first imported
STEP = textwrap.dedent("""
    import sys, numpy as np, jax, equinox as eqx
    from energy_transformer.checkpoint import named_leaves
    from energy_transformer.image import ImageEnergyTransformer, ImageETConfig
    from energy_transformer.image_training import masked_image_loss
    from energy_transformer.train import (TrainConfig, make_mesh, make_optimizer, make_train_step, replicate,
                                          shard_batch, trainable)
    n_dev = int(sys.argv[2])
    assert len(jax.devices()) == n_dev, jax.devices()
    mc = ImageETConfig.tiny(); tc = TrainConfig(steps=10, batch_size=8, lr=1e-2, warmup=0.0)
    model = ImageEnergyTransformer(mc, key=jax.random.PRNGKey(0))
    params, static = eqx.partition(model, trainable(model))
    opt = make_optimizer(tc); opt_state = opt.init(params)
    mesh = make_mesh()
    params, static, opt_state = replicate((params, static, opt_state), mesh)
    images = np.random.default_rng(0).random((8, *mc.image_shape), dtype=np.float32)
    batch = shard_batch(images, mesh)
    assert len(batch.sharding.device_set) == n_dev and batch.addressable_shards[0].data.shape[0] == 8 // n_dev
    init_Xi = np.asarray(params.et.memory.Xi)
    step = make_train_step(masked_image_loss(8, 1), opt)
    for s in range(2):
        params, opt_state, loss = step(params, static, opt_state, batch, jax.random.PRNGKey(s))
    assert len(params.et.memory.Xi.sharding.device_set) == n_dev and params.et.memory.Xi.sharding.is_fully_replicated
    np.savez(sys.argv[1], loss=np.asarray(loss), init_Xi=init_Xi, **{k: np.asarray(v) for k, v in named_leaves(params).items()})
""")


def start_step(tmp_path, n_dev):
    "The step in a fresh interpreter with `n_dev` CPU devices, started (not waited for): (process, output file)"
    out = tmp_path / f"params_{n_dev}.npz"
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count={n_dev}"  # this run's, then n devices
    env = {**os.environ, "XLA_FLAGS": flags, "JAX_PLATFORMS": "cpu"}
    return subprocess.Popen([sys.executable, "-c", STEP, str(out), str(n_dev)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env), out


def finish_step(proc, out):
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-3000:]
    return dict(np.load(out))


def test_two_devices_match_one(tmp_path):
    runs = [start_step(tmp_path, n) for n in (1, 2)]  # the two interpreters side by side
    one, two = (finish_step(*r) for r in runs)
    assert one.keys() == two.keys() and len(one) > 5
    for k in one: np.testing.assert_allclose(two[k], one[k], rtol=1e-5, atol=1e-6, err_msg=k)
    assert float(one["loss"]) > 0
    assert np.abs(one["et.memory.Xi"] - one["init_Xi"]).max() > 1e-4  # the step really moved the parameters
