"""Copy trained checkpoints into the package: the model arrays only (no optimizer state), the training log in the
`.json` file beside it rather than in the header (a header is stored as UTF-32 text, so a long log costs
about a megabyte per file).

    python -m tools.ship_checkpoint retrained/natural.npz retrained/matched_natural.npz"""
import argparse
import json
from pathlib import Path

from energy_transformer.checkpoint import checkpoint_dir, read_checkpoint, save_shipped
from energy_transformer.pretrained import load_pretrained


def ship(src: Path,  # a checkpoint written by training (`<name>.npz`, its log `<name>.json` beside it)
         dest_dir: Path,  # the folder it goes to (the package's `checkpoint_dir()`)
         ) -> Path:
    "`save_shipped` of the trained model into `dest_dir/<name>.npz`, with the log beside `src` (else its header's)."
    header, log_file = read_checkpoint(src)[0], src.with_suffix(".json")
    log = json.loads(log_file.read_text()) if log_file.is_file() else header["meta"]
    return save_shipped(dest_dir / src.name, load_pretrained(src), log, step=header["step"])


def main(argv: list[str] | None = None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoints", nargs="+", type=Path, help="trained checkpoint files")
    ap.add_argument("--to", type=Path, default=checkpoint_dir(), help="destination folder (default: the package's)")
    args = ap.parse_args(argv)
    for src in args.checkpoints:
        dest = ship(src, args.to)
        print(f"{dest}: {dest.stat().st_size / 2**20:.2f} MiB")


if __name__ == "__main__":
    main()
