//===- IndexProgram.cpp - A view's slot arithmetic, identities dropped ---===//
//
// The one place that decides which steps of the slot formula a view needs:
// the MLIR allocation pass, the Python layer and describe() all read the
// program built here.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

namespace tlx::planner {

using namespace detail;

namespace {

IndexOperand constant(int64_t value) {
  return {IndexOperand::Kind::Constant, value};
}

/// Appends `lhs opcode rhs` to `program` and returns its result.
IndexOperand append(IndexProgram &program, IndexOpcode opcode, IndexOperand lhs,
                    IndexOperand rhs) {
  program.operations.push_back({opcode, lhs, rhs});
  return {IndexOperand::Kind::Result,
          static_cast<int64_t>(program.operations.size() - 1)};
}

} // namespace

IndexProgram indexProgramOf(const View &view) {
  IndexProgram program;
  IndexOperand index{IndexOperand::Kind::BufferIndex, 0};
  program.result = index;
  bool runtimeRow = view.form == ViewForm::RuntimeRow;
  if (view.identityIndex() && !view.perGroup())
    return program;
  IndexOperand major = index;
  std::optional<IndexOperand> minor;
  if (view.period > 1) {
    major = append(program, IndexOpcode::DivideUnsigned, index,
                   constant(view.period));
    minor = append(program, IndexOpcode::RemainderUnsigned, index,
                   constant(view.period));
  }
  if (runtimeRow) {
    // The row of the group's view: base / 128 + (stride / 128) (i / period).
    IndexOperand row = major;
    int64_t rowStride = view.groupStride / kSmemRowBytes;
    if (rowStride != 1)
      row = append(program, IndexOpcode::Multiply, major, constant(rowStride));
    if (view.base != 0)
      row = append(program, IndexOpcode::Add, row,
                   constant(view.base / kSmemRowBytes));
    program.row = row;
  }
  // The group whose view the front doors choose (SelectedRows).
  if (view.form == ViewForm::SelectedRows)
    program.group = major;
  std::optional<IndexOperand> slot;
  if (view.scale == 1)
    slot = major;
  else if (view.scale != 0)
    slot = append(program, IndexOpcode::Multiply, major, constant(view.scale));
  if (view.offsetSlots != 0 || (!slot && !minor))
    slot = slot ? append(program, IndexOpcode::Add, *slot,
                         constant(view.offsetSlots))
                : constant(view.offsetSlots);
  if (minor) {
    IndexOperand scaled = *minor;
    if (view.step != 1)
      scaled =
          append(program, IndexOpcode::Multiply, *minor, constant(view.step));
    slot = slot ? append(program, IndexOpcode::Add, *slot, scaled) : scaled;
  }
  program.result = *slot;
  return program;
}

namespace {

/// The value of `operand` after running `program` on `index`.
int64_t evaluate(const IndexProgram &program, const IndexOperand &operand,
                 int64_t index) {
  std::vector<int64_t> results;
  results.reserve(program.operations.size());
  auto read = [&](const IndexOperand &operand) -> int64_t {
    switch (operand.kind) {
    case IndexOperand::Kind::BufferIndex:
      return index;
    case IndexOperand::Kind::Constant:
      return operand.value;
    case IndexOperand::Kind::Result:
      return results[operand.value];
    }
    return 0;
  };
  for (const IndexOperation &operation : program.operations) {
    int64_t lhs = read(operation.lhs), rhs = read(operation.rhs);
    switch (operation.opcode) {
    case IndexOpcode::DivideUnsigned:
      results.push_back(lhs / rhs);
      break;
    case IndexOpcode::RemainderUnsigned:
      results.push_back(lhs % rhs);
      break;
    case IndexOpcode::Multiply:
      results.push_back(satMul(lhs, rhs));
      break;
    case IndexOpcode::Add:
      results.push_back(satAdd(lhs, rhs));
      break;
    }
  }
  return read(operand);
}

} // namespace

int64_t evaluateIndexProgram(const IndexProgram &program, int64_t index) {
  return evaluate(program, program.result, index);
}

int64_t evaluateIndexProgramRow(const IndexProgram &program, int64_t index) {
  return program.row ? evaluate(program, *program.row, index) : 0;
}

int64_t evaluateIndexProgramGroup(const IndexProgram &program, int64_t index) {
  return program.group ? evaluate(program, *program.group, index) : 0;
}

namespace {

/// `operand` as a formula of the buffer index `i`.
std::string formula(const IndexProgram &program, const IndexOperand &operand) {
  std::vector<std::string> results;
  auto read = [&](const IndexOperand &operand) -> std::string {
    switch (operand.kind) {
    case IndexOperand::Kind::BufferIndex:
      return "i";
    case IndexOperand::Kind::Constant:
      return std::to_string(operand.value);
    case IndexOperand::Kind::Result:
      return results[operand.value];
    }
    return "";
  };
  for (const IndexOperation &operation : program.operations) {
    std::string lhs = read(operation.lhs), rhs = read(operation.rhs);
    switch (operation.opcode) {
    case IndexOpcode::DivideUnsigned:
      results.push_back("(" + lhs + " / " + rhs + ")");
      break;
    case IndexOpcode::RemainderUnsigned:
      results.push_back("(" + lhs + " % " + rhs + ")");
      break;
    case IndexOpcode::Multiply:
      results.push_back(rhs + " " + lhs);
      break;
    case IndexOpcode::Add:
      results.push_back(lhs + " + " + rhs);
      break;
    }
  }
  return read(operand);
}

} // namespace

std::string indexFormula(const IndexProgram &program) {
  return formula(program, program.result);
}

std::string indexRowFormula(const IndexProgram &program) {
  return program.row ? formula(program, *program.row) : "";
}

} // namespace tlx::planner
