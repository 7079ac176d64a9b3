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
  if (view.identityIndex())
    return program;
  IndexOperand major = index;
  std::optional<IndexOperand> minor;
  if (view.period > 1) {
    major = append(program, IndexOpcode::DivideUnsigned, index,
                   constant(view.period));
    minor = append(program, IndexOpcode::RemainderUnsigned, index,
                   constant(view.period));
  }
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

int64_t evaluateIndexProgram(const IndexProgram &program, int64_t index) {
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
  return read(program.result);
}

std::string indexFormula(const IndexProgram &program) {
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
  return read(program.result);
}

} // namespace tlx::planner
