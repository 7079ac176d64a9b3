//===- Budget.cpp - A kernel's regions against what one CTA has ----------===//
//
// A plan fits its own spec's limits; a kernel has several regions of each
// storage, and together they must fit what one CTA of the target has. The
// front doors add up the regions they allocate; the budget and the verdict,
// with its reason, are the planner's.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

namespace tlx::planner {

using namespace detail;

int64_t storageBudget(Storage storage, int capability) {
  if (storage == Storage::Smem)
    return smemLimitForTarget(capability);
  return hasTensorMemory(capability) ? kTmemColumns : 0;
}

std::optional<Diagnostic> overStorageBudget(Storage storage, int capability,
                                            int64_t usedUnits) {
  int64_t budget = storageBudget(storage, capability);
  if (usedUnits <= budget)
    return std::nullopt;
  Diagnostic diagnostic;
  diagnostic.severity = Severity::Error;
  diagnostic.kind = DiagnosticKind::OverStorageBudget;
  diagnostic.numbers = {usedUnits, budget};
  std::string used = "the kernel's " + storageName(storage) + " regions take " +
                     amount(usedUnits, storage);
  if (budget == 0)
    diagnostic.message = used + ", but " + targetName(capability) + " has no " +
                         storageName(storage);
  else
    diagnostic.message = used + ", " + amount(usedUnits - budget, storage) +
                         " more than the " + amount(budget, storage) +
                         " one CTA has on " + targetName(capability);
  return diagnostic;
}

} // namespace tlx::planner
