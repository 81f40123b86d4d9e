"""Build script: package metadata comes from settings.ini (the single source of the version)."""
from configparser import ConfigParser
from pathlib import Path

import setuptools

here = Path(__file__).parent
cfg = ConfigParser(delimiters=["="])
cfg.read(here / "settings.ini", encoding="utf-8")
cfg = cfg["DEFAULT"]

licenses = {"apache2": ("Apache-2.0", "License :: OSI Approved :: Apache Software License")}
statuses = ["1 - Planning", "2 - Pre-Alpha", "3 - Alpha", "4 - Beta", "5 - Production/Stable"]
lic, lic_classifier = licenses[cfg["license"]]
min_python = cfg["min_python"]

requirements = cfg.get("requirements", "").split()
dev_requirements = cfg.get("dev_requirements", "").split()
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
    license=lic,
    classifiers=[
        "Development Status :: " + statuses[int(cfg["status"]) - 1],
        "Intended Audience :: Science/Research",
        lic_classifier,
        "Natural Language :: " + cfg["language"],
        "Programming Language :: Python :: 3",
        "Programming Language :: Python :: 3 :: Only",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
    python_requires=f">={min_python}",
    packages=setuptools.find_packages(include=[cfg["lib_path"], cfg["lib_path"] + ".*"]),
    include_package_data=True,
    package_data={cfg["lib_path"]: ["checkpoints/*.eqx", "checkpoints/*.npz", "checkpoints/*.json"]},
    install_requires=requirements,
    extras_require={"dev": dev_requirements},
    entry_points={
        "console_scripts": scripts,
        "nbdev": [f"{cfg['lib_path']}={cfg['lib_path']}._modidx:d"],
    },
    zip_safe=False,
)
