"""Sections 1, 2 and 5 of `run.py`: the float32 matmul roof, the ET descent step against its analytic FLOP count
(closed form vs autograd, and the step in parts), and softmax vs taylor attention per descent step."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from benchmarks.equal_time import load
from benchmarks.timing import compile_jit, memory, timeit
from energy_transformer.core import EnergyLayerNorm, EnergyTransformer, ETConfig, descend


def preset_config(name: str, **kw) -> ETConfig:
    return getattr(ETConfig, name)(**kw)


# ------------------------------------------------------------------------------------------ the roof
def roof_products(s: dict) -> list[tuple[str, str, tuple, tuple, int]]:
    """The products the roof is measured on: square n x n @ n x n for each size, and for each descent preset the two
    dots the model itself runs, its batched query/key projection `einsum("bnd,hdz->bhnz", g, W)` with W (H, D, 2Y)
    and the Hopfield product g (B N, D) @ Xi^T (D, M). (kind, label, shape a, shape b, FLOPs)."""
    out = [("square", f"{n} x {n} @ {n} x {n}", (n, n), (n, n), 2 * n ** 3) for n in s["roof_sizes"]]
    for name, B, N in s["descent"]:
        c = preset_config(name)
        out.append(("projection", f"{name}: einsum bnd,hdz->bhnz, ({B}, {N}, {c.D}) x ({c.H}, {c.D}, {2 * c.Y})",
                    (B, N, c.D), (c.H, c.D, 2 * c.Y), 2 * B * N * c.D * c.H * 2 * c.Y))
        out.append(("hopfield", f"{name}: ({B * N}, {c.D}) @ ({c.D}, {c.M})", (B * N, c.D), (c.D, c.M), 2 * B * N * c.D * c.M))
    return out


def bench_roof(s: dict) -> dict:
    """float32 GFLOP/s of each product of `roof_products`, from the best (shortest) of several timed repeats after a
    warm-up; the roof is the best of them all, a rate that no kernel of the same kind should exceed."""
    rows = []
    ops = dict(square=jnp.matmul, hopfield=jnp.matmul, projection=lambda g, W: jnp.einsum("bnd,hdz->bhnz", g, W))
    for i, (kind, label, sa, sb, flops) in enumerate(roof_products(s)):
        ka, kb = jax.random.split(jax.random.PRNGKey(i))
        a = jax.random.normal(ka, sa, jnp.float32); b = jax.random.normal(kb, sb, jnp.float32)
        t = timeit(jax.jit(ops[kind]), a, b, repeats=s["roof_repeats"], min_time=0.2)
        rows.append(dict(kind=kind, product=label, flops=flops, gflops=flops / t["min_s"] / 1e9,
                         gflops_median=flops / t["median_s"] / 1e9, **t))
        del a, b
    best = max(rows, key=lambda r: r["gflops"])
    return dict(sizes=rows, roof_gflops=best["gflops"], roof_product=best["product"])

# ------------------------------------------------------------------------------------ descent step
def step_flops(c: ETConfig, N: int) -> dict:
    """Analytic FLOPs of ONE closed-form softmax descent step x <- x - alpha dE/dg(LN(x)) on one token set
    (N x D); a multiply-add counts 2, exp/log/div/sqrt count 1.

    * layer norm, per token: mean (D), centre (D), square + mean (2D), divide by the scale (D), x gamma (D),
      + delta (D)                                                                       ~ 7 N D
    * projections Q, K = g Wq, g Wk:            2 N D (2 H Y)
    * scores S = beta Q K^T:                    2 H N^2 Y  (+ H N^2 for beta)
    * masked softmax over keys: select, subtract max, exp, row sum, divide            ~ 5 H N^2
    * softmax-weighted sums P K and P^T Q:      2 x 2 H N^2 Y
    * back through both projections (dQ, dK) -> dE/dg:   2 N (2 H Y) D
    * Hopfield: g Xi^T (2 N D M), relu (N M), relu(.) Xi (2 N M D)
    * dE/dg = attention + Hopfield (N D), x - alpha d (2 N D)
    """
    D, H, Y, M = c.D, c.H, c.Y, c.M
    parts = dict(
        layer_norm=7 * N * D,
        projections=2 * N * D * 2 * H * Y,
        scores=2 * H * N * N * Y + H * N * N,
        softmax=5 * H * N * N,
        weighted_sums=2 * 2 * H * N * N * Y,
        back_projection=2 * N * 2 * H * Y * D,
        hopfield=2 * N * D * M + N * M + 2 * N * M * D,
        update=3 * N * D,
    )
    parts["total"] = sum(parts.values())
    return parts


def _make_descend(T: int, autograd: bool):
    def f(et, ln, x, alpha):
        return jax.vmap(lambda xi: descend(et, ln, xi, alpha=alpha, T=T, grad=jax.grad(et.energy) if autograd else None))(x)
    return f


def _model(c: ETConfig, seed: int = 0):
    et = EnergyTransformer(c, key=jax.random.PRNGKey(seed))
    return et, EnergyLayerNorm(c.D)


def bench_breakdown(c: ETConfig, B: int, N: int, repeats: int, only: tuple | None = None) -> dict:
    """Where the time of one closed-form softmax step goes: each part compiled and timed alone, with its share
    of the FLOPs of `step_flops` and its GFLOP/s (median time). The attention parts re-state core's contractions.
    `only`: time these parts only."""
    et, ln = _model(c)
    x = jax.random.normal(jax.random.PRNGKey(1), (B, N, c.D), jnp.float32)
    lnb = jax.vmap(jax.vmap(ln))
    g = jax.jit(lnb)(x)
    W = jnp.concatenate([et.Wq, et.Wk], -1)  # (H, D, 2Y)
    allowed = jnp.asarray(~np.eye(N, dtype=bool)) if c.exclude_self else jnp.ones((N, N), bool)
    QK = jnp.einsum("bnd,hdz->bhnz", g, W)
    Q, K = QK[..., :c.Y], QK[..., c.Y:]

    def softmax(Q, K):
        S = jnp.where(allowed, et.beta * jnp.einsum("bhcy,bhky->bhck", Q, K), -jnp.inf)
        e = jnp.exp(S - jax.lax.stop_gradient(S.max(-1, keepdims=True)))
        return e / e.sum(-1, keepdims=True)
    P = jax.jit(softmax)(Q, K)
    dQK = jnp.concatenate([jnp.einsum("bhck,bhky->bhcy", P, K), jnp.einsum("bhck,bhcy->bhky", P, Q)], -1)
    fl = step_flops(c, N)
    parts = dict(
        layer_norm=(lnb, (x,), fl["layer_norm"]),
        projections=(lambda g, W: jnp.einsum("bnd,hdz->bhnz", g, W), (g, W), fl["projections"]),
        scores_softmax=(softmax, (Q, K), fl["scores"] + fl["softmax"]),
        weighted_sums=(lambda P, Q, K: (jnp.einsum("bhck,bhky->bhcy", P, K), jnp.einsum("bhck,bhcy->bhky", P, Q)),
                       (P, Q, K), fl["weighted_sums"]),
        back_projection=(lambda d, W: jnp.einsum("bhnz,hdz->bnd", d, W), (dQK, W), fl["back_projection"]),
        hopfield=(jax.vmap(et.hn_grad), (g,), fl["hopfield"]),
        attention_grad=(jax.vmap(et.attn_grad), (g,), fl["projections"] + fl["scores"] + fl["softmax"]
                        + fl["weighted_sums"] + fl["back_projection"]),
    )
    out = {}
    for name, (f, args, flops) in parts.items():
        if only is not None and name not in only: continue
        t = timeit(jax.jit(f), *args, repeats=repeats)
        out[name] = dict(s=t["median_s"], flops=B * flops, gflops=B * flops / t["median_s"] / 1e9)
    if only is None:
        out["sum_of_parts_s"] = sum(out[k]["s"] for k in ("layer_norm", "projections", "scores_softmax", "weighted_sums",
                                                          "back_projection", "hopfield"))
    return out


def bench_descent(s: dict, roof: float) -> dict:
    "Time per batched descent step (T steps per call / T), closed form and autograd, against the FLOP count."
    rows = []
    T = s["descent_T"]
    for name, B, N in s["descent"]:
        c = preset_config(name)
        et, ln = _model(c)
        x = jax.random.normal(jax.random.PRNGKey(1), (B, N, c.D), jnp.float32)
        alpha = jnp.float32(0.1)
        fl = step_flops(c, N)
        row = dict(preset=name, D=c.D, H=c.H, Y=c.Y, M=c.M, batch=B, N=N, T=T, flops_per_step=B * fl["total"],
                   flops_breakdown_per_example={k: int(v) for k, v in fl.items()})
        for kind, ag in (("closed_form", False), ("autograd", True)):
            comp, ct = compile_jit(_make_descend(T, ag), et, ln, x, alpha)
            t = timeit(comp, et, ln, x, alpha, repeats=s["repeats"])
            step_s = t["median_s"] / T
            row[kind] = dict(step_s=step_s, gflops=B * fl["total"] / step_s / 1e9, compile_s=ct,
                             temp_bytes=memory(comp)["temp_bytes"], **t)
        row["roof_fraction"] = row["closed_form"]["gflops"] / roof
        row["autograd_over_closed_form"] = row["autograd"]["step_s"] / row["closed_form"]["step_s"]
        row["load"] = load()
        rows.append(row)
    name, B, N = s["descent"][-1]
    return dict(rows=rows, roof_gflops=roof, breakdown=dict(preset=name, batch=B, N=N,
                **bench_breakdown(preset_config(name), B, N, s["repeats"])))

# ----------------------------------------------------------------------------------- attention kinds
def bench_attention(s: dict) -> dict:
    "Time per descent step (medium D/H/Y/M, batch 1) for softmax and taylor attention energies."
    rows, T = [], s["attn_T"]
    for N in s["attn_Ns"]:
        row = dict(N=N, T=T)
        for kind in ("softmax", "taylor"):
            c = ETConfig.medium(attention=kind) if N > 200 else ETConfig.small(attention=kind)
            et, ln = _model(c)
            x = jax.random.normal(jax.random.PRNGKey(2), (1, N, c.D), jnp.float32)
            alpha = jnp.float32(0.1)
            comp, ct = compile_jit(_make_descend(T, False), et, ln, x, alpha)
            t = timeit(comp, et, ln, x, alpha, repeats=s["attn_repeats"])
            row[kind] = dict(step_s=t["median_s"] / T, compile_s=ct, temp_bytes=memory(comp)["temp_bytes"], **t)
            row.update(D=c.D, H=c.H, Y=c.Y, M=c.M)
        row["taylor_speedup"] = row["softmax"]["step_s"] / row["taylor"]["step_s"]
        row["load"] = load()
        rows.append(row)
    return dict(rows=rows)
