//===- Encoding.cpp - Reading Triton layouts kept verbatim ----------------===//

#include "tlx/Dialect/Encoding.h"
#include "tlx/Dialect/Triton/Dialect.h"
#include "tlx/Dialect/TritonGPU/Dialect.h"
#include "tlx/Dialect/TritonNvidiaGPU/Dialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace {

/// The body text of a verbatim attribute of `tt`, `ttg` or `ttng`.
std::optional<StringRef> verbatimBody(Attribute attr) {
  return llvm::TypeSwitch<Attribute, std::optional<StringRef>>(attr)
      .Case<triton::VerbatimAttr, triton::gpu::VerbatimAttr,
            triton::nvidia_gpu::VerbatimAttr>(
          [](auto verbatim) { return verbatim.getBody(); })
      .Default([](Attribute) { return std::nullopt; });
}

bool isIdentifierChar(char c) { return llvm::isAlnum(c) || c == '_'; }

/// The text after `key =` in the body of `encoding` (leading blanks
/// dropped), or nullopt when there is no `key = ` entry.
std::optional<StringRef> valueText(Attribute encoding, StringRef key) {
  std::optional<StringRef> body = verbatimBody(encoding);
  if (!body || key.empty())
    return std::nullopt;
  for (size_t at = body->find(key); at != StringRef::npos;
       at = body->find(key, at + 1)) {
    if (at > 0 && isIdentifierChar((*body)[at - 1]))
      continue;
    StringRef rest = body->drop_front(at + key.size());
    if (!rest.empty() && isIdentifierChar(rest.front()))
      continue;
    rest = rest.ltrim();
    if (!rest.consume_front("="))
      continue;
    return rest.ltrim();
  }
  return std::nullopt;
}

/// Consumes a (possibly negative) decimal integer from the front of `text`.
std::optional<int64_t> consumeInteger(StringRef &text) {
  StringRef rest = text;
  bool negative = rest.consume_front("-");
  size_t digits = 0;
  while (digits < rest.size() && llvm::isDigit(rest[digits]))
    ++digits;
  if (digits == 0 || (digits < rest.size() && isIdentifierChar(rest[digits])))
    return std::nullopt;
  int64_t value;
  if (rest.take_front(digits).getAsInteger(10, value))
    return std::nullopt;
  text = rest.drop_front(digits);
  return negative ? -value : value;
}

} // namespace

StringRef triton::encodingName(Attribute encoding) {
  return llvm::TypeSwitch<Attribute, StringRef>(encoding)
      .Case<triton::VerbatimAttr, triton::gpu::VerbatimAttr,
            triton::nvidia_gpu::VerbatimAttr>(
          [](auto verbatim) { return verbatim.getSymbol(); })
      .Default([](Attribute) { return StringRef(); });
}

std::optional<int64_t> triton::encodingInt(Attribute encoding, StringRef key) {
  std::optional<StringRef> text = valueText(encoding, key);
  if (!text)
    return std::nullopt;
  return consumeInteger(*text);
}

std::optional<bool> triton::encodingBool(Attribute encoding, StringRef key) {
  std::optional<StringRef> text = valueText(encoding, key);
  if (!text)
    return std::nullopt;
  for (bool value : {true, false}) {
    StringRef spelling = value ? "true" : "false";
    if (text->starts_with(spelling) &&
        (text->size() == spelling.size() ||
         !isIdentifierChar((*text)[spelling.size()])))
      return value;
  }
  return std::nullopt;
}

namespace {

/// Consumes a flat list of integers `[1, 0]` from the front of `text`.
std::optional<SmallVector<int64_t>> consumeIntList(StringRef &text) {
  StringRef rest = text;
  if (!rest.consume_front("["))
    return std::nullopt;
  SmallVector<int64_t> values;
  rest = rest.ltrim();
  while (!rest.consume_front("]")) {
    if (!values.empty() && !rest.consume_front(","))
      return std::nullopt;
    rest = rest.ltrim();
    std::optional<int64_t> value = consumeInteger(rest);
    if (!value)
      return std::nullopt;
    values.push_back(*value);
    rest = rest.ltrim();
  }
  text = rest;
  return values;
}

} // namespace

std::optional<SmallVector<int64_t>> triton::encodingIntArray(Attribute encoding,
                                                             StringRef key) {
  std::optional<StringRef> text = valueText(encoding, key);
  if (!text)
    return std::nullopt;
  return consumeIntList(*text);
}

std::optional<SmallVector<SmallVector<int64_t>>>
triton::encodingIntArrays(Attribute encoding, StringRef key) {
  std::optional<StringRef> text = valueText(encoding, key);
  if (!text || !text->consume_front("["))
    return std::nullopt;
  SmallVector<SmallVector<int64_t>> lists;
  *text = text->ltrim();
  while (!text->consume_front("]")) {
    if (!lists.empty() && !text->consume_front(","))
      return std::nullopt;
    *text = text->ltrim();
    std::optional<SmallVector<int64_t>> list = consumeIntList(*text);
    if (!list)
      return std::nullopt;
    lists.push_back(std::move(*list));
    *text = text->ltrim();
  }
  return lists;
}

Attribute triton::parseEncoding(MLIRContext *context, StringRef text) {
  return parseAttribute(text, context);
}
