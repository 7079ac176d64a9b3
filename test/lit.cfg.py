# lit configuration of the MLIR half: every test/TLX/*.mlir runs triton-opt,
# FileCheck and not by the full paths the CMake site config records
# (build/test/lit.site.cfg.py), so `lit build/test` works from any PATH.
# lit runs this file with `config` (and `lit_config`) already defined.
# ruff: noqa: F821
import os
import re

import lit.formats

config.name = "TLX"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.join(config.tlx_source_dir, "test", "TLX")
config.test_exec_root = os.path.join(config.tlx_test_exec_root, "TLX")


def tool_pattern(name):
    """Matches `name` as a command word, not inside a path or a longer word."""
    return r"(?<![\w/.-])" + re.escape(name) + r"(?![\w-])"


config.substitutions.append((tool_pattern("triton-opt"), config.triton_opt))
config.substitutions.append((tool_pattern("FileCheck"), config.filecheck))
config.substitutions.append((tool_pattern("not"), config.not_tool))

# The storage alias passes' whole-views default follows the Triton of the
# environment (dialect/include/tlx/Transforms/TritonRelease.h). The tests
# plan as where no Triton is found (whole views), whatever Triton the machine
# has; test/TLX/whole-views-default.mlir sets the release it means.
config.environment["TLX_TRITON_VERSION"] = "none"
config.environment.pop("TLX_PYTHON", None)
