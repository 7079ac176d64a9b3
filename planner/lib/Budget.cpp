//===- Budget.cpp - A kernel's regions against what one CTA has ----------===//
//
// A plan fits its own spec's limits; a kernel has several regions of each
// storage, and together they must fit what one CTA of the target has, or a
// share of the SM when several CTAs are to run on it at once. The front doors
// add up the regions they allocate; the budget and the verdict, with its
// reason, are the planner's.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <cassert>

namespace tlx::planner {

using namespace detail;

int64_t storageBudget(Storage storage, int capability, int ctasPerSm) {
  assert(ctasPerSm >= 1 && "a budget is for one CTA or more an SM");
  if (storage == Storage::Smem) {
    // An SM's shared memory is what one CTA may opt into plus the 1 KiB the
    // system reserves for it; each CTA on the SM has its own reserved KiB.
    int64_t perSm = smemLimitForTarget(capability) + kSmemReservedPerCta;
    return perSm / ctasPerSm - kSmemReservedPerCta;
  }
  return hasTensorMemory(capability) ? kTmemColumns / ctasPerSm : 0;
}

std::optional<Diagnostic> overStorageBudget(Storage storage, int capability,
                                            int64_t usedUnits, int ctasPerSm) {
  int64_t budget = storageBudget(storage, capability, ctasPerSm);
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
    diagnostic.message =
        used + ", " + amount(usedUnits - budget, storage) + " more than the " +
        amount(budget, storage) + " one CTA has on " + targetName(capability) +
        (ctasPerSm == 1
             ? ""
             : " when " + std::to_string(ctasPerSm) + " CTAs share an SM");
  return diagnostic;
}

} // namespace tlx::planner
