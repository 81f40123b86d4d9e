#!/usr/bin/env python
"""Training-gradient variants of the image model's descent, timed side by side with the package's two paths.

    python -m benchmarks.variants [--quick] [--T 12] [--batch 64]

Each variant is the gradient of the same masked-patch loss (`train.masked_loss`'s recipe) with respect to all
trainable arrays, differing only in how the T descent steps are computed and checkpointed:

* `naive`: `descend(grad=jax.grad(et.energy), remat=False)` (jax.grad of the energy, differentiated again);
* `package`: `descend(remat=True)` (closed form, nested checkpointing of blocks and steps);
* `closed_no_remat`: closed form, nothing checkpointed;
* `closed_step_remat`: closed form, every step checkpointed (one level: T states kept);
* `closed_block_remat`: closed form, blocks of ~sqrt(T) steps checkpointed, steps inside a block not
  (one level: ~sqrt(T) states plus one block's intermediates);
* `closed_step_remat_dots`: like `closed_step_remat`, but the matmul outputs of a step are saved
  (`jax.checkpoint_policies.dots_with_no_batch_dims_saveable`), so the backward pass recomputes only
  elementwise work;
* `closed_fused`: like `closed_step_remat`, with the query, key and memory projections fused into one matrix
  product in and one out (`fused_grad`), autodiff for the backward pass;
* `closed_custom_vjp`: like `closed_fused`, with a hand-derived backward pass of the energy gradient
  (`jax.custom_vjp`) that reuses the forward's softmax and Hopfield activations instead of recomputing them;
* `package_fused`, `package_custom_vjp`: the package's checkpointing with those two gradients;
* `jfb_k` (k = 1, 3): an approximate gradient in the manner of Jacobian-free backpropagation for implicit models:
  the first T - k steps run without a graph and are treated as the identity in the backward pass
  (x0 + stop_gradient(x_{T-k} - x0)), the last k steps are differentiated exactly. Its gradient is compared with
  the exact one (`cos_to_exact`).

Prints a table of median time per gradient and XLA temporary memory, and writes variants.json to --out (the rows
and the machine they were measured on). (XLA's own
FLOP count is not reported: it counts the body of a scanned loop once, not T times, so it does not compare paths.)
"""
from __future__ import annotations

import argparse
import json
import math
from functools import partial
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from benchmarks.equal_time import load, machine
from benchmarks.timing import MIN_TIME, STAMP, memory, timeit
from energy_transformer.attention import _allowed, _masked_lse_softmax
from energy_transformer.core import descend
from energy_transformer.evaluate import masked_mse
from energy_transformer.image import ImageEnergyTransformer, ImageETConfig
from energy_transformer.patches import keep_count, make_masks, mask_count
from energy_transformer.train import trainable

ROOT = Path(__file__).resolve().parents[1]


def _fused_forward(W, Xi, beta, g, Y, exclude_self, causal):
    "Energy gradient from one fused in-projection g [Wq|Wk|Xi^T] and one out-projection, with its residuals."
    H, D = W.shape[0], W.shape[1]
    Wall = jnp.concatenate([W.transpose(1, 0, 2).reshape(D, -1), Xi.T], 1)  # (D, 2HY + M)
    z = g @ Wall
    QK = z[:, :H * 2 * Y].reshape(-1, H, 2 * Y).transpose(1, 0, 2)
    Q, K, pre = QK[..., :Y], QK[..., Y:], z[:, H * 2 * Y:]
    S = beta * jnp.einsum("hcy,hby->hcb", Q, K)
    _, P = _masked_lse_softmax(S, _allowed(g.shape[0], exclude_self, causal))
    ab = jnp.concatenate([jnp.einsum("hcb,hby->hcy", P, K), jnp.einsum("hcb,hcy->hby", P, Q)], -1)
    h = jax.nn.relu(pre)
    act = jnp.concatenate([ab.transpose(1, 0, 2).reshape(g.shape[0], -1), h], 1)  # (N, 2HY + M)
    return -act @ Wall.T, (Wall, Q, K, S, P, act)


def fused_grad(et, g):
    "dE/dg of `et` at one token set g, through `_fused_forward` (autodiff differentiates it)."
    W = jnp.concatenate([et.Wq, et.Wk], -1)
    c = et.config
    return _fused_forward(W, et.memory.Xi, et.beta, g, c.Y, c.exclude_self, c.causal)[0]


@partial(jax.custom_vjp, nondiff_argnums=(4, 5, 6))
def _grad_cvjp(W, Xi, beta, g, Y, exclude_self, causal):
    return _fused_forward(W, Xi, beta, g, Y, exclude_self, causal)[0]


def _grad_cvjp_fwd(W, Xi, beta, g, Y, exclude_self, causal):
    u, (Wall, Q, K, S, P, act) = _fused_forward(W, Xi, beta, g, Y, exclude_self, causal)
    return u, (W, Xi, beta, g, Wall, Q, K, S, P, act)


def _grad_cvjp_bwd(Y, exclude_self, causal, res, v):
    "Hand-derived VJP of u = -act Wall^T, act = [P K | P^T Q | relu(g Xi^T)], S = beta Q K^T, P = softmax(S)."
    W, Xi, beta, g, Wall, Q, K, S, P, act = res
    H, D, N = W.shape[0], W.shape[1], g.shape[0]
    dWall = -(act.T @ v).T  # (D, 2HY + M)
    dact = -v @ Wall  # (N, 2HY + M)
    dab = dact[:, :H * 2 * Y].reshape(N, H, 2 * Y).transpose(1, 0, 2)
    da, db = dab[..., :Y], dab[..., Y:]  # cotangents of a = P K (h, C, y) and b = P^T Q (h, B, y)
    dP = jnp.einsum("hcy,hby->hcb", da, K) + jnp.einsum("hcy,hby->hcb", Q, db)
    dK = jnp.einsum("hcb,hcy->hby", P, da)
    dQ = jnp.einsum("hcb,hby->hcy", P, db)
    dS = P * (dP - (dP * P).sum(-1, keepdims=True))
    dQ = dQ + beta * jnp.einsum("hcb,hby->hcy", dS, K)
    dK = dK + beta * jnp.einsum("hcb,hcy->hby", dS, Q)
    dbeta = jnp.sum(dS * S) / beta
    dpre = dact[:, H * 2 * Y:] * (act[:, H * 2 * Y:] > 0)
    dz = jnp.concatenate([jnp.concatenate([dQ, dK], -1).transpose(1, 0, 2).reshape(N, -1), dpre], 1)
    dg = dz @ Wall.T
    dWall = dWall + g.T @ dz
    dW = dWall[:, :H * 2 * Y].reshape(D, H, 2 * Y).transpose(1, 0, 2)
    dXi = dWall[:, H * 2 * Y:].T
    return dW, dXi, dbeta, dg


_grad_cvjp.defvjp(_grad_cvjp_fwd, _grad_cvjp_bwd)


def custom_vjp_grad(et, g):
    "dE/dg of `et` at one token set g, with the hand-derived backward pass."
    W = jnp.concatenate([et.Wq, et.Wk], -1)
    c = et.config
    return _grad_cvjp(W, et.memory.Xi, et.beta, g, c.Y, c.exclude_self, c.causal)


def _steps(model, x, T: int, mode: str):
    "T closed-form descent steps of one token set with a given checkpointing scheme."
    et, ln, alpha = model.et, jax.vmap(model.lnorm), model.alpha
    step = lambda x: x - alpha * et.grad(ln(x))
    scan = lambda f, x, n: lax.scan(lambda x, _: (f(x), None), x, length=n)[0] if n else x
    if mode == "closed_no_remat": return scan(step, x, T)
    if mode == "closed_step_remat": return scan(jax.checkpoint(step), x, T)
    if mode == "closed_step_remat_dots":
        return scan(jax.checkpoint(step, policy=jax.checkpoint_policies.dots_with_no_batch_dims_saveable), x, T)
    if mode in ("closed_fused", "closed_custom_vjp"):
        grad = fused_grad if mode == "closed_fused" else custom_vjp_grad
        return scan(jax.checkpoint(lambda x: x - alpha * grad(et, ln(x))), x, T)
    if mode == "closed_block_remat":
        b = max(1, int(round(math.sqrt(T)))); nb, r = divmod(T, b)
        x = scan(jax.checkpoint(lambda x: scan(step, x, b)), x, nb)
        return scan(step, x, r)
    raise ValueError(mode)


def predict(model, tokens, mask, T: int, mode: str):
    if mode == "naive":
        x = descend(model.et, model.lnorm, model.encode(tokens, mask), alpha=model.alpha, T=T,
                    grad=jax.grad(model.et.energy))
    elif mode == "package":
        x = descend(model.et, model.lnorm, model.encode(tokens, mask), alpha=model.alpha, T=T, remat=True)
    elif mode in ("package_fused", "package_custom_vjp"):  # the package's checkpointing, another gradient
        grad = fused_grad if mode == "package_fused" else custom_vjp_grad
        x = descend(model.et, model.lnorm, model.encode(tokens, mask), alpha=model.alpha, T=T, remat=True,
                    grad=partial(grad, model.et))
    elif mode.startswith("jfb_"):  # the package's Jacobian-free option
        x = descend(model.et, model.lnorm, model.encode(tokens, mask), alpha=model.alpha, T=T,
                    backprop_steps=min(int(mode[4:]), T))
    else:
        x = _steps(model, model.encode(tokens, mask), T, mode)
    return model.decode(x)


def loss(params, static, images, key, n_chosen, n_keep, T, mode):
    model = eqx.combine(params, static)
    pt = model.patcher
    tokens = pt.tokenify(images)
    chosen, masked = jax.vmap(make_masks, in_axes=(0, None, None, None))(jax.random.split(key, images.shape[0]),
                                                                        pt.N, n_chosen, n_keep)
    pred = jax.vmap(lambda t, m: predict(model, t, m, T, mode))(tokens, masked)
    return masked_mse(pred, tokens, chosen).mean()


MODES = ("naive", "package", "closed_no_remat", "closed_step_remat", "closed_block_remat", "closed_step_remat_dots",
         "closed_fused", "closed_custom_vjp", "package_fused", "package_custom_vjp",
         "jfb_1", "jfb_3")


def cosine(a, b) -> float:
    "Cosine similarity of two gradients (pytrees of the same structure)"
    fa, fb = (jnp.concatenate([jnp.ravel(x) for x in jax.tree.leaves(t)]) for t in (a, b))
    return float(fa @ fb / (jnp.linalg.norm(fa) * jnp.linalg.norm(fb)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--T", type=int, nargs="*", default=None)
    ap.add_argument("--batch", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--modes", nargs="*", default=list(MODES), choices=MODES)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    a = ap.parse_args(argv)
    preset, B, Ts = ("tiny", 4, [2]) if a.quick else ("fashion_mnist", 64, [12])
    B = a.batch or B; Ts = a.T or Ts
    if a.quick: MIN_TIME[0] = 0.005
    stamp = machine()
    rows = []
    for T in Ts:
        mc = getattr(ImageETConfig, preset)(T=T)
        model = ImageEnergyTransformer(mc, key=jax.random.PRNGKey(0))
        params, static = eqx.partition(model, trainable(model))
        images = jnp.asarray(np.random.default_rng(0).random((B, *mc.image_shape), dtype=np.float32))
        n_chosen = mask_count(mc.N, 0.5); n_keep = keep_count(n_chosen, 0.1)
        exact = None
        for mode in a.modes:
            f = jax.jit(jax.value_and_grad(partial(loss, static=static, n_chosen=n_chosen, n_keep=n_keep, T=T, mode=mode)))
            comp = f.lower(params, images=images, key=jax.random.PRNGKey(1)).compile()
            g = lambda p, im, comp=comp: comp(p, images=im, key=jax.random.PRNGKey(1))
            t = timeit(g, params, images, repeats=a.repeats)
            m = memory(comp)
            grad = g(params, images)[1]
            exact = grad if mode == "naive" else exact
            cos = None if exact is None else cosine(grad, exact)
            rows.append(dict(T=T, batch=B, mode=mode, s=t["median_s"], temp_bytes=m["temp_bytes"],
                             cos_to_exact=cos, load=load()))
            print(f"T={T:3d} {mode:24s} {t['median_s'] * 1e3:9.1f} ms  temp {m['temp_bytes'] / 2**20:8.1f} MiB  "
                  f"cos {cos if cos is None else round(cos, 4)}  (load {load()})", flush=True)
    out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
    stamp = {k: stamp[k] for k in STAMP if k in stamp} | dict(load_end=load())  # the machine this run measured on
    (out / ("variants_quick.json" if a.quick else "variants.json")).write_text(
        json.dumps(dict(machine=stamp, rows=rows), indent=1) + "\n")


if __name__ == "__main__":
    main()
