"""Copy trained checkpoints into the package: the model arrays only (no optimizer state), the training log in the
`.json` file beside it rather than in the header (a header is stored as UTF-32 text, so a long log costs
about a megabyte per file).

    python tools/ship_checkpoint.py retrained/natural.npz retrained/matched_natural.npz"""
import argparse
import shutil
from pathlib import Path

from energy_transformer.checkpoint import checkpoint_dir, read_checkpoint, save_checkpoint
from energy_transformer.pretrained import load_pretrained


def ship(src: Path,  # a checkpoint written by training (`<name>.npz`, its log `<name>.json` beside it)
         dest_dir: Path,  # the folder it goes to (the package's `checkpoint_dir()`)
         ) -> Path:
    "Write `dest_dir/<name>.npz` with the model, its step and its metadata less the loss history; copy the log."
    header = read_checkpoint(src)[0]
    meta = {k: v for k, v in header["meta"].items() if k != "history"}
    dest = save_checkpoint(dest_dir / src.name, load_pretrained(src), step=header["step"], meta=meta)
    log, dest_log = src.with_suffix(".json"), dest.with_suffix(".json")
    if log.is_file() and log.resolve() != dest_log.resolve(): shutil.copy(log, dest_log)
    return dest


def main(argv: list[str] | None = None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoints", nargs="+", type=Path, help="trained checkpoint files")
    ap.add_argument("--to", type=Path, default=checkpoint_dir(), help="destination folder (default: the package's)")
    args = ap.parse_args(argv)
    for src in args.checkpoints:
        dest = ship(src, args.to)
        print(f"{dest}: step {read_checkpoint(dest)[0]['step']}, {dest.stat().st_size / 2**20:.2f} MiB")


if __name__ == "__main__":
    main()
