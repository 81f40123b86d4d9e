"""Section 7 of `run.py`: inpainting quality at 50% masking, read from the shipped training logs or recomputed on
the shipped checkpoints."""
from __future__ import annotations

import json

import jax

from benchmarks.equal_time import load
from energy_transformer.checkpoint import checkpoint_dir, load_checkpoint
from energy_transformer.data import load_images
from energy_transformer.evaluate import baselines, eval_set, evaluate
from energy_transformer.image import ImageEnergyTransformer, ImageETConfig

CKPT_DIR = checkpoint_dir()


def _quality_row(name: str, final: dict, source: str, model: str | None = None) -> dict:
    return dict(checkpoint=name, model=model, source=source, mask_ratio=final.get("mask_ratio"), n_images=final.get("n_images"),
                model_mse=final["model"]["mse"], model_psnr=final["model"]["psnr"],
                mean_fill_mse=final["mean_fill"]["mse"], biharmonic_mse=final["biharmonic"]["mse"],
                biharmonic_psnr=final["biharmonic"]["psnr"])


def _shipped_logs() -> dict:
    "Training logs with a final evaluation shipped next to the checkpoints: {name: log}."
    logs = {}
    for p in sorted(CKPT_DIR.glob("*.json")):
        try: log = json.loads(p.read_text())
        except (OSError, ValueError): continue
        if isinstance(log, dict) and log.get("task") == "inpainting" and "final" in log: logs[p.stem] = log
    return logs


def _recompute(model, test_x, n: int, ratio: float, seed: int = 1) -> dict:
    fx, fmask = eval_set(test_x, model.patcher.N, n, ratio, seed=seed)
    return dict(n_images=len(fx), mask_ratio=ratio, model=evaluate(model, fx, fmask), **baselines(fx, fmask, model.patcher))


def bench_quality(s: dict, recompute: bool, quick: bool) -> dict:
    """Masked-patch MSE at 50% masking: read from the shipped training logs, or recomputed on the shipped
    checkpoints (same fixed test masks as the log's final evaluation). With no shipped checkpoint and `--quick`,
    an untrained tiny model is evaluated instead, to exercise the code path."""
    logs = _shipped_logs()
    rows = []
    for name, log in logs.items():
        ckpt = CKPT_DIR / f"{name}.npz"
        if not recompute or not ckpt.is_file() or log.get("model") != "ImageEnergyTransformer":
            rows.append(_quality_row(name, log["final"], f"energy_transformer/checkpoints/{name}.json", log.get("model")))
            continue
        model = load_checkpoint(ckpt, ImageEnergyTransformer)
        data = log.get("task_config", {}).get("data", name)
        n = s["quality_n"] or log["final"].get("n_images", 1000)
        rows.append(_quality_row(name, _recompute(model, load_images(data, "test"), n, 0.5), f"recomputed from {ckpt.name}",
                                 log.get("model")))
    if not rows and quick:
        model = ImageEnergyTransformer(ImageETConfig.tiny(), key=jax.random.PRNGKey(0))
        rows.append(_quality_row("untrained-tiny", _recompute(model, load_images("fashion_mnist", "test"), s["quality_n"], 0.5),
                                 "recomputed (untrained tiny model: smoke test)", "ImageEnergyTransformer"))
    return dict(rows=rows, load=load())
