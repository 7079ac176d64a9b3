//===- PassStatistics.h - What the planning passes count --------*- C++ -*-===//
//
// The statistics every pass that plans declares in Passes.td (specs-planned,
// bytes-shared, padding-bytes), filled from the module's plan.
//
//===----------------------------------------------------------------------===//

#ifndef TLX_TRANSFORMS_PASSSTATISTICS_H
#define TLX_TRANSFORMS_PASSSTATISTICS_H

#include "tlx/Analysis/ModulePlan.h"

#include "mlir/Pass/Pass.h"
#include "llvm/ADT/Statistic.h"

namespace mlir::tlx {

/// An LLVM built without statistics (Debian's) counts nothing: the totals
/// are then not computed. -debug-only=tlx-storage-alias-plan prints them in
/// any build (ModulePlan::build).
inline void countPlans(const ModulePlan &plan, Pass::Statistic &specsPlanned,
                       Pass::Statistic &bytesShared,
                       Pass::Statistic &paddingBytes) {
#if LLVM_ENABLE_STATS
  ModulePlan::Totals totals = plan.totals();
  specsPlanned += totals.specs;
  bytesShared += totals.sharedBytes;
  paddingBytes += totals.paddingBytes;
#endif
}

} // namespace mlir::tlx

#endif // TLX_TRANSFORMS_PASSSTATISTICS_H
