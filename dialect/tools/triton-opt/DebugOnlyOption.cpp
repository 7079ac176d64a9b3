//===- DebugOnlyOption.cpp - -debug-only on a release LLVM ----------------===//
//
// LLVM built without assertions registers no -debug-only option and its
// header turns the debug-type functions into no-ops, although the library
// still has them. This file is compiled without NDEBUG (see CMakeLists.txt)
// so that it can call them.
//
//===----------------------------------------------------------------------===//

#include "DebugOnlyOption.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Debug.h"

#include <string>
#include <vector>

void mlir::tlx::registerDebugOnlyOption() {
  if (llvm::cl::getRegisteredOptions().count("debug-only"))
    return;
  static std::vector<std::string> types;
  // Lives as long as the process, as LLVM's own options do.
  new llvm::cl::list<std::string>(
      "debug-only",
      llvm::cl::desc("Print the LLVM_DEBUG output of these debug types "
                     "(tlx-storage-alias-plan: every plan of the module)"),
      llvm::cl::CommaSeparated, llvm::cl::value_desc("debug types"),
      llvm::cl::callback([](const std::string &type) {
        types.push_back(type);
        std::vector<const char *> names;
        for (const std::string &name : types)
          names.push_back(name.c_str());
        llvm::DebugFlag = true;
        llvm::setCurrentDebugTypes(names.data(), names.size());
      }));
}
