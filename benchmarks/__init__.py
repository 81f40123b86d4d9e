"""The benchmarks: one module per section, each calling `energy_transformer`; run from the repository root as
`python -m benchmarks.<section>` (`python -m benchmarks.run` collects the headline sections into results/bench.json).
Not part of the installed package."""
