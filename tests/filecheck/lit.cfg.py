# lit configuration for mlfuse's FileCheck tests.
#
# Every .mlir file under this folder is a test: its RUN lines pipe
# `mlfuse-opt` into `filecheck` (the Python port of LLVM's FileCheck).
# Both come from the Python environment running lit.
import os
import sys

import lit.formats

config.name = "mlfuse"
config.test_format = lit.formats.ShTest()  # lit's internal shell
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["lit.cfg.py", "Inputs"]

bin_dir = os.path.dirname(sys.executable)
config.environment["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
for var in ("HOME", "PYTHONPATH", "MLFUSE_CACHE_DIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
