"""Build script: package metadata comes from settings.ini (the single source of the version)."""
from configparser import ConfigParser
from pathlib import Path

import setuptools

here = Path(__file__).parent
cfg = ConfigParser(delimiters=["="])
cfg.read(here / "settings.ini", encoding="utf-8")
cfg = cfg["DEFAULT"]

licenses = {"apache2": "Apache-2.0"}  # settings.ini's name -> SPDX licence expression
statuses = ["1 - Planning", "2 - Pre-Alpha", "3 - Alpha", "4 - Beta", "5 - Production/Stable"]
lib = cfg["lib_path"]
min_python = cfg["min_python"]

requirements = cfg.get("requirements", "").split()
dev_requirements = cfg.get("dev_requirements", "").split()
cuda_requirements = cfg.get("cuda_requirements", "").split()  # pip install -e ".[cuda]": JAX for NVIDIA GPUs
scripts = [s.strip() for s in cfg.get("console_scripts", "").split() if s.strip()]

setuptools.setup(
    name=cfg["lib_name"],
    version=cfg["version"],
    description=cfg["description"],
    long_description=(here / "README.md").read_text(encoding="utf-8") if (here / "README.md").exists() else "",
    long_description_content_type="text/markdown",
    keywords=cfg["keywords"].split(),
    author=cfg["author"],
    author_email=cfg["author_email"],
    license_expression=licenses[cfg["license"]],
    classifiers=[
        "Development Status :: " + statuses[int(cfg["status"]) - 1],
        "Intended Audience :: Science/Research",
        "Natural Language :: " + cfg["language"],
        "Programming Language :: Python :: 3",
        "Programming Language :: Python :: 3 :: Only",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
    python_requires=f">={min_python}",
    # the shipped models live in a data-only folder, declared as a package of its own so setuptools installs it
    packages=[*setuptools.find_packages(include=[lib, lib + ".*"]), f"{lib}.checkpoints"],
    package_dir={"": "."},  # flat layout, said explicitly: an editable install is a plain path entry (no finder, no warning)
    package_data={f"{lib}.checkpoints": ["*.npz", "*.json"]},
    install_requires=requirements,
    extras_require={"dev": dev_requirements, "cuda": cuda_requirements},
    entry_points={
        "console_scripts": scripts,
        "nbdev": [f"{lib}={lib}._modidx:d"],
    },
    zip_safe=False,
)
