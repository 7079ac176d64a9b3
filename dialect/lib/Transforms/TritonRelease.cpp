//===- TritonRelease.cpp - The Triton the environment has -----------------===//
//
// Finds the Triton release of the environment without importing Triton
// (seconds) or loading a second LLVM: the Python asked only prints its
// sys.path, and the version is read from the files `import triton` would
// find first.
//
//===----------------------------------------------------------------------===//

#include "tlx/Transforms/TritonRelease.h"

#include "tlx/Planner/Planner.h"

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace mlir;
using namespace mlir::tlx;

namespace {

/// A Triton release: `version` as installed ("3.9.0"), its major and minor
/// numbers, and `source`, where it was found (an environment variable or
/// the Python asked).
struct TritonRelease {
  std::string version;
  int major = 0;
  int minor = 0;
  std::string source;
};

constexpr const char *kVersionVariable = "TLX_TRITON_VERSION";
constexpr const char *kPythonVariable = "TLX_PYTHON";

/// Seconds the Python may take to print its sys.path.
constexpr unsigned kPythonTimeoutSeconds = 30;

std::string &toolDirectory() {
  static std::string directory;
  return directory;
}

/// The version string `__version__ = '3.9.0'` of a package's __init__.py.
std::optional<std::string> versionInInit(StringRef initPath) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(initPath);
  if (!file)
    return std::nullopt;
  SmallVector<StringRef> lines;
  (*file)->getBuffer().split(lines, '\n');
  for (StringRef line : lines) {
    line = line.trim();
    if (!line.consume_front("__version__"))
      continue;
    line = line.ltrim();
    if (!line.consume_front("="))
      continue;
    line = line.trim();
    if (line.size() < 2 || (line.front() != '\'' && line.front() != '"'))
      continue;
    char quote = line.front();
    StringRef value =
        line.drop_front().take_until([quote](char c) { return c == quote; });
    return value.str();
  }
  return std::nullopt;
}

/// The version of `triton-<version>.dist-info` in `directory`.
std::optional<std::string> versionInDistInfo(StringRef directory) {
  std::error_code error;
  for (llvm::sys::fs::directory_iterator entry(directory, error), end;
       entry != end && !error; entry.increment(error)) {
    StringRef name = llvm::sys::path::filename(entry->path());
    if (name.consume_front("triton-") && name.consume_back(".dist-info"))
      return name.str();
  }
  return std::nullopt;
}

/// The version of the Triton `import triton` finds first on `searchPath`:
/// a `triton` package (its __version__), else a `triton-*.dist-info`
/// (editable installs keep the package elsewhere).
std::optional<std::string> tritonVersionOnPath(ArrayRef<StringRef> searchPath) {
  for (StringRef directory : searchPath) {
    SmallString<256> init(directory);
    llvm::sys::path::append(init, "triton", "__init__.py");
    if (llvm::sys::fs::exists(init))
      if (std::optional<std::string> version = versionInInit(init))
        return version;
    if (std::optional<std::string> version = versionInDistInfo(directory))
      return version;
  }
  return std::nullopt;
}

/// The Python to ask: TLX_PYTHON, else python3 in the tool's directory,
/// else the first python3 on PATH.
std::optional<std::string> pythonToAsk() {
  if (std::optional<std::string> python =
          llvm::sys::Process::GetEnv(kPythonVariable))
    return python;
  if (!toolDirectory().empty()) {
    SmallString<256> beside(toolDirectory());
    llvm::sys::path::append(beside, "python3");
    if (llvm::sys::fs::can_execute(beside))
      return beside.str().str();
  }
  if (llvm::ErrorOr<std::string> found =
          llvm::sys::findProgramByName("python3"))
    return *found;
  return std::nullopt;
}

/// The release `version` names ("3.8", "3.9.0", "3.10.0+git1a2b"), or
/// nullopt when it does not start with major.minor.
std::optional<TritonRelease> parseTritonVersion(StringRef version,
                                                StringRef source) {
  StringRef rest = version.trim();
  unsigned major = 0, minor = 0;
  if (rest.consumeInteger(10, major) || !rest.consume_front(".") ||
      rest.consumeInteger(10, minor))
    return std::nullopt;
  return TritonRelease{version.trim().str(), static_cast<int>(major),
                       static_cast<int>(minor), source.str()};
}

/// The Triton of `python`'s sys.path (the directories it imports from; the
/// empty entry, the current directory of `python -c`, is not triton-opt's).
std::optional<TritonRelease> tritonOfPython(const std::string &python) {
  SmallString<128> output;
  if (llvm::sys::fs::createTemporaryFile("tlx-python-path", "txt", output))
    return std::nullopt;
  llvm::FileRemover removeOutput(output);
  StringRef arguments[] = {python, "-c",
                           "import sys; print(*sys.path, sep='\\n')"};
  std::optional<StringRef> redirects[] = {StringRef(), StringRef(output),
                                          StringRef()};
  if (llvm::sys::ExecuteAndWait(python, arguments, std::nullopt, redirects,
                                kPythonTimeoutSeconds) != 0)
    return std::nullopt;
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> printed =
      llvm::MemoryBuffer::getFile(output);
  if (!printed)
    return std::nullopt;
  SmallVector<StringRef> searchPath;
  (*printed)->getBuffer().split(searchPath, '\n', /*MaxSplit=*/-1,
                                /*KeepEmpty=*/false);
  std::optional<std::string> version = tritonVersionOnPath(searchPath);
  if (!version)
    return std::nullopt;
  return parseTritonVersion(*version, python);
}

/// The release of the environment (TritonRelease.h's defaultWholeViews says
/// where it is looked for), or nullopt where none is found.
std::optional<TritonRelease> findTritonRelease() {
  if (std::optional<std::string> version =
          llvm::sys::Process::GetEnv(kVersionVariable)) {
    if (StringRef(*version).trim() == "none")
      return std::nullopt;
    std::optional<TritonRelease> release =
        parseTritonVersion(*version, kVersionVariable);
    if (!release)
      llvm::errs() << "warning: " << kVersionVariable << "=" << *version
                   << " is not a Triton version (3.8, 3.9.0, ...) or "
                      "`none`; planning as where no Triton is found\n";
    return release;
  }
  std::optional<std::string> python = pythonToAsk();
  if (!python)
    return std::nullopt;
  return tritonOfPython(*python);
}

/// findTritonRelease(), looked up once per process.
const std::optional<TritonRelease> &environmentTritonRelease() {
  static const std::optional<TritonRelease> release = findTritonRelease();
  return release;
}

} // namespace

void mlir::tlx::setToolDirectory(StringRef directory) {
  toolDirectory() = directory.str();
}

bool mlir::tlx::defaultWholeViews() {
  const std::optional<TritonRelease> &release = environmentTritonRelease();
  return !release ||
         ::tlx::planner::needsWholeViews(release->major, release->minor);
}

::tlx::planner::ViewForm mlir::tlx::defaultOffsetForm() {
  const std::optional<TritonRelease> &release = environmentTritonRelease();
  return release
             ? ::tlx::planner::offsetViewForm(release->major, release->minor)
             : ::tlx::planner::ViewForm::Slots;
}

std::string mlir::tlx::describeWholeViewsDefault() {
  const std::optional<TritonRelease> &release = environmentTritonRelease();
  std::string text = "The storage alias passes' whole-views default is ";
  text += defaultWholeViews() ? "true" : "false";
  if (!release)
    return text + ": no Triton found (" + kVersionVariable + ", " +
           kPythonVariable +
           ", python3 beside triton-opt or on PATH), and whole views are "
           "valid on every Triton release.";
  return text + " and offset-form " +
         ::tlx::planner::viewFormName(defaultOffsetForm()) + ", as Triton " +
         release->version + " (from " + release->source + ") needs.";
}
