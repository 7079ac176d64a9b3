//===- TritonRelease.h - The Triton the environment has ---------*- C++ -*-===//
//
// The storage alias passes' `whole-views` default follows the Triton release
// of the environment triton-opt runs in, so that a module dumped by
// TLX_DUMP_ALIAS_IR plans as the kernel did (the rule:
// tlx::planner::needsWholeViews). The release is found without importing
// Triton (docs/mlir.md, "Which Triton the passes follow").
//
//===----------------------------------------------------------------------===//

#ifndef TLX_TRANSFORMS_TRITONRELEASE_H
#define TLX_TRANSFORMS_TRITONRELEASE_H

#include "tlx/Planner/Planner.h"

#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::tlx {

/// Makes `directory` the place to look for `python3` before PATH
/// (triton-opt: the directory it was started from, symlinks unresolved, so
/// that a venv's bin/triton-opt asks that venv's Python). Call it before
/// the first pass is created.
void setToolDirectory(llvm::StringRef directory);

/// The default of the passes' `whole-views` option: what the Triton of the
/// environment needs (planner::needsWholeViews), true where no Triton is
/// found (whole views are valid on every release). The release is
/// TLX_TRITON_VERSION when set ("none": no Triton), else that of the Triton
/// `import triton` would load in the Python of TLX_PYTHON, else of the
/// `python3` of setToolDirectory's directory, else of the first `python3`
/// on PATH. That Python only reports its sys.path; the version is read from
/// the first `triton` package or `triton-*.dist-info` on it, without
/// importing Triton. Looked up once per process.
bool defaultWholeViews();

/// The default of the passes' `offset-form` option: how the Triton of the
/// environment (found as for defaultWholeViews) writes a view at a byte
/// offset (planner::offsetViewForm), Slots (none) where no Triton is found.
::tlx::planner::ViewForm defaultOffsetForm();

/// One line that says which `whole-views` default applies and why
/// (triton-opt --help).
std::string describeWholeViewsDefault();

} // namespace mlir::tlx

#endif // TLX_TRANSFORMS_TRITONRELEASE_H
