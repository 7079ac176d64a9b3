//===- Describe.cpp - A plan as a memory map in text ---------------------===//

#include "Internal.h"

#include <algorithm>
#include <array>
#include <set>

namespace tlx::planner {

using namespace detail;

namespace {

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

/// Rows of text in left-aligned columns, indented by two spaces.
std::string columns(const std::vector<std::vector<std::string>> &rows) {
  std::vector<size_t> widths;
  for (const auto &row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t c = 0; c < row.size(); ++c)
      widths[c] = std::max(widths[c], row[c].size());
  }
  std::string text;
  for (const auto &row : rows) {
    std::string line = " ";
    for (size_t c = 0; c < row.size(); ++c)
      line += " " + row[c] + std::string(widths[c] - row[c].size(), ' ');
    while (line.back() == ' ')
      line.pop_back();
    text += line + "\n";
  }
  return text;
}

std::string strideText(const View &view) {
  // Groups at starts of their own (View::groupStarts): the view column
  // lists them; buffers of one group sit the within-group stride apart.
  if (!view.groupStarts.empty())
    return view.period == 1
               ? "-"
               : number(satMul(view.step, view.bufferSize)) + " in a group";
  Stride stride = bufferStride(view);
  if (stride.even())
    return number(stride.withinPeriod);
  return number(stride.withinPeriod) + ", " + number(stride.afterPeriod) +
         " every " + number(stride.period);
}

/// The backing row where the view of buffer i's group starts, as a formula
/// of i: the index program's `row` of a RuntimeRow view, which SelectedRows
/// views share (each group's row is a constant there).
std::string groupRowFormula(View view) {
  view.form = ViewForm::RuntimeRow;
  return indexRowFormula(indexProgramOf(view));
}

/// The backing rows where views start: "0, 144, 32".
std::string rowList(const std::vector<int64_t> &starts) {
  std::string text;
  for (int64_t start : starts)
    text += (text.empty() ? "" : ", ") + number(start / kSmemRowBytes);
  return text;
}

/// The memory map table, one line per buffer; with views at byte offsets,
/// where each view starts and its form (docs/planner.md).
std::string describeViews(const Plan &plan,
                          const std::vector<std::string> &names) {
  bool offsets =
      std::any_of(plan.views.begin(), plan.views.end(), [](const View &view) {
        return view.base != 0 || view.perGroup();
      });
  std::vector<std::vector<std::string>> rows = {
      {"buffer", "offset", "size", "stride", "slot of buffer i", "slots"}};
  if (offsets)
    rows.front().push_back("view");
  for (size_t i = 0; i < plan.views.size(); ++i) {
    const View &view = plan.views[i];
    rows.push_back({"\"" + names[i] + "\"", number(view.offset),
                    number(view.bufferSize), strideText(view),
                    indexFormula(indexProgramOf(view)), number(view.slots())});
    if (!view.groupStarts.empty())
      rows.back().push_back(
          std::string(view.period == 1 ? "per buffer" : "per group") +
          " from rows " + rowList(view.groupStarts) + " (" +
          viewFormName(view.form) + ")");
    else if (view.perGroup())
      rows.back().push_back("per group from row " + groupRowFormula(view) +
                            " (" + viewFormName(view.form) + ")");
    else if (offsets)
      rows.back().push_back(view.base == 0
                                ? "whole region"
                                : "from " + number(view.base) + " (" +
                                      viewFormName(view.form) + ")");
  }
  return columns(rows) + "  (offset, size and stride in " +
         unitName(plan.storage) + ")\n";
}

/// The stretches where two or more buffers share units, and the holes.
/// `phase`: only the buffers of that phase (a plan with phases), and no
/// padding rows (the other phases' bytes are not padding).
std::string describeSharing(const Plan &plan,
                            const std::vector<Buffer> &buffers,
                            const std::vector<std::string> &names,
                            const std::vector<int> *phase = nullptr) {
  std::vector<Extent> extents = bufferExtents(plan, buffers);
  if (phase)
    extents.erase(std::remove_if(extents.begin(), extents.end(),
                                 [&](const Extent &extent) {
                                   return std::find(
                                              phase->begin(), phase->end(),
                                              extent.user) == phase->end();
                                 }),
                  extents.end());
  std::vector<std::vector<std::string>> rows;
  for (const Segment &segment : sharingSegments(plan, extents)) {
    if (segment.occupants.size() == 1 || (phase && segment.occupants.empty()))
      continue;
    std::string occupants;
    for (int occupant : segment.occupants) {
      const Extent &extent = extents[occupant];
      occupants += (occupants.empty() ? "\"" : " \"") + names[extent.user] +
                   "\"[" + number(extent.index) + "]";
    }
    bool hole = segment.occupants.empty();
    rows.push_back({number(segment.start) + " .. " + number(segment.end),
                    segment.bufferGroup < 0 ? "-" : number(segment.bufferGroup),
                    hole ? "(padding)" : occupants});
  }
  if (rows.empty())
    return "";
  rows.insert(rows.begin(), {unitName(plan.storage), "group", "shared by"});
  return columns(rows);
}

} // namespace

std::vector<Extent> bufferExtents(const Plan &plan,
                                  const std::vector<Buffer> &buffers) {
  std::vector<Extent> extents;
  for (size_t user = 0; user < plan.views.size() && user < buffers.size();
       ++user) {
    const View &view = plan.views[user];
    int64_t count = bufferCount(buffers[user]);
    for (int64_t index = 0; index < count; ++index) {
      int64_t start = bufferStart(view, index);
      extents.push_back({static_cast<int>(user), index,
                         index / std::max<int64_t>(view.groupSize, 1), start,
                         satAdd(start, view.bufferSize)});
    }
  }
  return extents;
}

int64_t sharedBytes(const Plan &plan, const std::vector<Buffer> &buffers) {
  std::vector<Extent> extents = bufferExtents(plan, buffers);
  std::sort(extents.begin(), extents.end(),
            [](const Extent &a, const Extent &b) { return a.start < b.start; });
  // Units every buffer takes, minus the units of their union.
  int64_t taken = 0, occupied = 0, coveredTo = 0;
  for (const Extent &extent : extents) {
    taken = satAdd(taken, extent.end - extent.start);
    if (extent.end > coveredTo) {
      occupied += extent.end - std::max(extent.start, coveredTo);
      coveredTo = extent.end;
    }
  }
  int64_t units = taken - occupied;
  if (plan.storage == Storage::Smem || plan.regionSize <= 0)
    return units;
  // TMEM units are columns of all the region's lanes.
  return satMul(units, plan.sizeBytes / plan.regionSize);
}

Stride bufferStride(const View &view) {
  Stride stride;
  stride.period = view.period;
  stride.withinPeriod =
      satMul(view.period == 1 ? view.scale : view.step, view.bufferSize);
  stride.afterPeriod =
      satMul(view.scale - view.step * (view.period - 1), view.bufferSize);
  // A view per buffer group: the next group's view is groupStride further
  // (groups at starts of their own: within a group only).
  if (!view.groupStarts.empty()) {
    stride.withinPeriod = satMul(view.step, view.bufferSize);
    stride.afterPeriod = stride.withinPeriod;
  } else if (view.perGroup()) {
    stride.withinPeriod = view.period == 1 ? view.groupStride
                                           : satMul(view.step, view.bufferSize);
    stride.afterPeriod =
        view.groupStride -
        satMul(satMul(view.step, view.period - 1), view.bufferSize);
  }
  return stride;
}

std::vector<Segment> sharingSegments(const Plan &plan,
                                     const std::vector<Extent> &extents) {
  // Sweep the region from boundary to boundary, keeping the extents that
  // cover the current stretch.
  std::vector<std::pair<int64_t, int>> events;
  for (size_t i = 0; i < extents.size(); ++i) {
    events.push_back({extents[i].start, static_cast<int>(i) + 1});
    events.push_back({extents[i].end, -static_cast<int>(i) - 1});
  }
  std::sort(events.begin(), events.end());
  std::vector<Segment> segments;
  std::set<int> active;
  int64_t position = 0;
  auto close = [&](int64_t end) {
    if (end <= position)
      return;
    std::vector<int> occupants(active.begin(), active.end());
    if (!segments.empty() && segments.back().end == position &&
        segments.back().occupants == occupants) {
      segments.back().end = end;
    } else {
      Segment segment{position, end, -1, occupants};
      bool oneGroup =
          std::all_of(occupants.begin(), occupants.end(), [&](int o) {
            return extents[o].bufferGroup ==
                   extents[occupants.front()].bufferGroup;
          });
      if (!occupants.empty() && oneGroup)
        segment.bufferGroup = extents[occupants.front()].bufferGroup;
      segments.push_back(std::move(segment));
    }
    position = end;
  };
  for (const auto &[where, event] : events) {
    close(where);
    if (event > 0)
      active.insert(event - 1);
    else
      active.erase(-event - 1);
  }
  close(plan.regionSize);
  return segments;
}

std::string describe(const Plan &plan, const std::vector<Buffer> &buffers,
                     const std::string &specName) {
  std::vector<std::string> names;
  for (size_t i = 0; i < std::max(buffers.size(), plan.views.size()); ++i)
    names.push_back(i < buffers.size() && !buffers[i].name.empty()
                        ? buffers[i].name
                        : "#" + std::to_string(i));
  std::string text = describeRegion(plan);
  if (!plan.views.empty() && plan.phases.empty())
    text += describeViews(plan, names) + describeSharing(plan, buffers, names);
  if (!plan.views.empty() && !plan.phases.empty()) {
    text += describeViews(plan, names);
    for (size_t p = 0; p < plan.phases.size(); ++p) {
      std::string members;
      for (int buffer : plan.phases[p])
        members += " \"" + names[buffer] + "\"";
      text += "phase " + std::to_string(p) + ":" + members + "\n" +
              describeSharing(plan, buffers, names, &plan.phases[p]);
    }
  }
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
