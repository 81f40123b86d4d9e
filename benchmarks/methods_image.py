"""The image task of `benchmarks.training_methods`: Fashion-MNIST inpainting under the shipped `fashion_mnist` recipe,
one run of a way of training its ET (exact gradient, fewer descent steps, a T curriculum, truncated backprop) or of a
matched transformer, with each approximate gradient's cosine to the exact one."""
from __future__ import annotations

import functools
import tempfile
from dataclasses import replace
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from benchmarks.equal_time import cpu_rate
from energy_transformer.data import load_images
from energy_transformer.evaluate import eval_set, evaluate
from energy_transformer.image import ImageEnergyTransformer, TransformerMAE, matched_mae
from energy_transformer.image_training import masked_image_loss, preset, train_inpainting
from energy_transformer.patches import keep_count, mask_count
from energy_transformer.train import trainable

N_VALID = 5000   # the last training images, held out for validation


def _image_setup():
    mc, task, tc = preset("fashion_mnist")
    task = replace(task, eval_size=500, final_eval_size=2000)
    train = load_images("fashion_mnist", "train")
    return mc, task, tc, (train[:-N_VALID], train[-N_VALID:])


def fewer_steps(mc, T: int):
    "The image recipe `mc` with T descent steps and alpha scaled to keep the total step alpha T (alpha is not trained)"
    return replace(mc, T=T, alpha=mc.alpha * mc.T / T)


def image_methods(mc):
    """name -> (description, model maker, phases): each phase is (fraction of the steps, `predict_tokens` keywords)."""
    et = lambda c: (lambda seed: ImageEnergyTransformer(c, key=jax.random.PRNGKey(seed)))
    mae = lambda c: (lambda seed: TransformerMAE(c, key=jax.random.PRNGKey(seed)))
    few = functools.partial(fewer_steps, mc)
    return {
        "exact": (f"ET, T = {mc.T}, exact gradient (closed form + nested remat)", et(mc), [(1.0, ())]),
        "T=2": ("ET, T = 2, alpha x 4 (alpha T kept)", et(few(2)), [(1.0, ())]),
        "T=4": ("ET, T = 4, alpha x 2 (alpha T kept)", et(few(4)), [(1.0, ())]),
        "T curriculum": (f"ET, T = 2 for the first 3/4 of the steps, then T = {mc.T}", et(mc),
                         [(0.75, (("T", 2),)), (0.25, ())]),
        "truncated, then exact": (f"ET, T = {mc.T}: backprop through the last step only for 3/4 of the steps, "
                                  "then the exact gradient", et(mc), [(0.75, (("backprop_steps", 1),)), (0.25, ())]),
        "matched transformer": ("1 transformer block, the same parameter count", mae(matched_mae(mc)), [(1.0, ())]),
        "tied transformer": (f"1 transformer block applied {mc.T} times (weights shared): the ET's parameters and "
                             "depth", mae(replace(matched_mae(mc), repeat=mc.T)), [(1.0, ())]),
    }


def _grad_cosine(model, task, images, kw, seed=0) -> float:
    "Cosine between the parameter gradient of the masked loss with `predict_tokens` keywords `kw` and the exact one."
    n_chosen = mask_count(model.patcher.N, task.mask_ratio)
    params, static = eqx.partition(model, trainable(model))
    def grad(kw):
        loss = masked_image_loss(n_chosen, keep_count(n_chosen, task.keep), kw)
        g = eqx.filter_grad(lambda p: loss(eqx.combine(p, static), jnp.asarray(images), jax.random.PRNGKey(seed)))(params)
        return jnp.concatenate([x.ravel() for x in jax.tree.leaves(g)])
    a, b = grad(kw), grad(())
    return float(a @ b / (jnp.linalg.norm(a) * jnp.linalg.norm(b)))


def run_image(method: str, seconds: float) -> dict:
    mc, task, tc, (train_x, valid_x) = _image_setup()
    desc, make, phases = image_methods(mc)[method]
    with tempfile.TemporaryDirectory() as tmp:
        def train(tc, kw=(), stop_at=None, resume=False):
            return train_inpainting(make(tc.seed), task, tc, data=(train_x, valid_x), progress=False, out=tmp,
                                    name="run", resume=resume, stop_at=stop_at, descend_kw=kw)
        rates = [cpu_rate(lambda tc, kw=kw, **k: train(tc, kw, **k), tc) for _, kw in phases]
        for f in Path(tmp).iterdir(): f.unlink()  # the probes' checkpoints
        steps = max(16, int(seconds / sum(f / r for (f, _), r in zip(phases, rates, strict=True))))
        tc_run = replace(tc, steps=steps, eval_every=max(1, steps // 8), log_every=max(1, steps // 40))
        ends = np.cumsum([f for f, _ in phases]) * steps
        for i, ((_, kw), end) in enumerate(zip(phases, ends, strict=True)):
            last = i == len(phases) - 1
            model, log = train(tc_run, kw, stop_at=None if last else int(end), resume=i > 0)
    test_x = load_images("fashion_mnist", "test")
    fx, fmask = eval_set(test_x, model.patcher.N, 2000, task.mask_ratio, seed=1)
    cos = {}
    kws = {kw for _, kw in phases if kw}  # the approximate phases
    for kw in kws:  # cosine to the exact gradient, at the start and at the end of training
        cos[str(dict(kw))] = dict(initial=_grad_cosine(make(tc.seed), task, valid_x[:tc.batch_size], kw),
                                  trained=_grad_cosine(model, task, valid_x[:tc.batch_size], kw))
    return dict(metric="masked_mse", lower_is_better=True, description=desc, phases=[[f, dict(kw)] for f, kw in phases],
                steps_per_cpu_s=[round(r, 3) for r in rates], log=log,
                valid=log["final"]["model"]["mse"], test=float(evaluate(model, fx, fmask)["mse"]),
                baselines={k: log["final"][k]["mse"] for k in ("mean_fill", "biharmonic")}, grad_cosine=cos,
                curve=[dict(step=e["step"], cpu_s=e["cpu_s"], value=e["mse"]) for e in log["evals"]], model=model)
