//===- Describe.cpp - A plan as a memory map in text ---------------------===//

#include "Internal.h"

#include <algorithm>
#include <array>

namespace tlx::planner {

using namespace detail;

namespace {

std::string slotFormula(const View &view) {
  if (view.identityIndex())
    return "i";
  std::string text;
  auto term = [&](int64_t factor, const std::string &what) {
    if (factor == 0)
      return;
    if (!text.empty())
      text += " + ";
    text += (factor == 1 ? "" : std::to_string(factor) + " ") + what;
  };
  term(view.scale,
       view.period == 1 ? "i" : "(i / " + std::to_string(view.period) + ")");
  if (view.offsetSlots != 0 || text.empty()) {
    if (!text.empty())
      text += " + ";
    text += std::to_string(view.offsetSlots);
  }
  if (view.period > 1)
    term(view.step, "(i % " + std::to_string(view.period) + ")");
  return text;
}

/// The header line about the region.
std::string describeRegion(const Plan &plan) {
  Storage storage = plan.storage;
  std::string text = storageName(storage) + " region: ";
  if (plan.backingShape.size() != 2)
    return text + "not planned\n";
  if (storage == Storage::Smem)
    text += number(plan.sizeBytes) + " bytes";
  else
    text += number(plan.regionSize) + " columns x " +
            number(plan.backingBlock.front()) +
            " rows = " + number(plan.sizeBytes) + " bytes" +
            (plan.backingBlock == plan.backingShape ? "" : " per CTA");
  return text + " (ideal " + number(plan.idealBytes) + ", padding " +
         number(plan.paddingBytes) + "), " + plan.layout + ", backing " +
         shapeText(plan.backingShape) +
         (storage == Storage::Smem ? " x i8" : " x i32") + ", alignment " +
         amount(plan.alignment, Storage::Smem) + "\n";
}

/// The memory map table, one line per buffer.
std::string describeViews(const Plan &plan,
                          const std::vector<std::string> &names) {
  using Row = std::array<std::string, 5>;
  std::vector<Row> rows = {
      {"buffer", "offset", "size", "slot of buffer i", "slots"}};
  for (size_t i = 0; i < plan.views.size(); ++i) {
    const View &view = plan.views[i];
    rows.push_back({"\"" + names[i] + "\"", number(view.offset),
                    number(view.bufferSize), slotFormula(view),
                    number(view.slots())});
  }
  std::array<size_t, 5> widths{};
  for (const Row &row : rows)
    for (size_t c = 0; c < row.size(); ++c)
      widths[c] = std::max(widths[c], row[c].size());
  std::string text;
  for (const Row &row : rows) {
    std::string line = " ";
    for (size_t c = 0; c < row.size(); ++c)
      line += " " + row[c] + std::string(widths[c] - row[c].size(), ' ');
    while (line.back() == ' ')
      line.pop_back();
    text += line + "\n";
  }
  return text + "  (offset and size in " + unitName(plan.storage) + ")\n";
}

} // namespace

std::string describe(const Plan &plan, const std::vector<Buffer> &buffers,
                     const std::string &specName) {
  std::vector<std::string> names;
  for (size_t i = 0; i < std::max(buffers.size(), plan.views.size()); ++i)
    names.push_back(i < buffers.size() && !buffers[i].name.empty()
                        ? buffers[i].name
                        : "#" + std::to_string(i));
  std::string text = describeRegion(plan);
  if (!plan.views.empty())
    text += describeViews(plan, names);
  Diagnostic reason;
  for (const Padding &share : plan.padding) {
    reason.message = share.reason;
    text += "padding: " + number(share.bytes) +
            " bytes: " + formatDiagnostic(reason, specName, names) + "\n";
  }
  for (const Diagnostic &diagnostic : plan.diagnostics)
    text += (diagnostic.severity == Severity::Error ? "error: " : "warning: ") +
            formatDiagnostic(diagnostic, specName, names) + "\n";
  return text;
}

} // namespace tlx::planner
