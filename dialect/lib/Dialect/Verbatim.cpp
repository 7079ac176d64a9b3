//===- Verbatim.cpp - Attributes and types kept as written ----------------===//

#include "tlx/Dialect/Verbatim.h"

#include "llvm/ADT/APInt.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace {

/// True if the number token starting at `start` is a float literal: MLIR
/// lexes digits followed by `.` as a float, anything else as an integer.
bool isFloatLiteral(const char *start, const char *end) {
  const char *c = start;
  while (c < end && llvm::isDigit(*c))
    ++c;
  return c < end && *c == '.';
}

/// Consumes the token that starts at `token` (any token but a nested
/// attribute or type), so that the parser moves on.
ParseResult consumeToken(DialectAsmParser &parser, const char *token,
                         const char *end) {
  switch (*token) {
  case '<':
    return parser.parseLess();
  case '>':
    return parser.parseGreater();
  case '{':
    return parser.parseLBrace();
  case '}':
    return parser.parseRBrace();
  case '(':
    return parser.parseLParen();
  case ')':
    return parser.parseRParen();
  case '[':
    return parser.parseLSquare();
  case ']':
    return parser.parseRSquare();
  case ',':
    return parser.parseComma();
  case '=':
    return parser.parseEqual();
  case ':':
    return parser.parseColon();
  case '?':
    return parser.parseQuestion();
  case '+':
    return parser.parsePlus();
  case '*':
    return parser.parseStar();
  case '|':
    return parser.parseVerticalBar();
  case '/':
    return parser.parseSlash();
  case '.':
    if (succeeded(parser.parseOptionalEllipsis()))
      return success();
    break;
  case '-':
    if (token + 1 < end && token[1] == '>')
      return parser.parseArrow();
    return parser.parseMinus();
  case '"': {
    std::string string;
    if (succeeded(parser.parseOptionalString(&string)))
      return success();
    break;
  }
  case '@': {
    StringAttr symbol;
    if (succeeded(parser.parseOptionalSymbolName(symbol)))
      return success();
    break;
  }
  default:
    break;
  }
  if (llvm::isDigit(*token)) {
    if (isFloatLiteral(token, end)) {
      double value;
      return parser.parseFloat(value);
    }
    APInt value;
    OptionalParseResult integer = parser.parseOptionalInteger(value);
    if (integer.has_value())
      return *integer;
  }
  StringRef keyword;
  if ((llvm::isAlpha(*token) || *token == '_') &&
      succeeded(parser.parseOptionalKeyword(&keyword)))
    return success();
  return parser.emitError(parser.getCurrentLocation())
         << "unexpected character '" << *token
         << "' in the body of a Triton attribute or type";
}

/// Appends source text to a body. The marker bytes can only occur raw inside
/// a string literal; they are written as the equivalent escapes there.
void appendText(std::string &body, StringRef text) {
  for (char c : text) {
    if (c == tlx::verbatim::kNestedAttributeMarker)
      body += "\\01";
    else if (c == tlx::verbatim::kNestedTypeMarker)
      body += "\\02";
    else
      body.push_back(c);
  }
}

} // namespace

FailureOr<tlx::verbatim::Body>
tlx::verbatim::parseBody(DialectAsmParser &parser, StringRef mnemonic) {
  StringRef spec = parser.getFullSymbolSpec();
  const char *specEnd = spec.data() + spec.size();
  const char *cursor = mnemonic.data() + mnemonic.size();

  Body body;
  while (true) {
    const char *token = parser.getCurrentLocation().getPointer();
    if (token >= specEnd)
      break;
    if (*token != '#' && *token != '!') {
      if (failed(consumeToken(parser, token, specEnd)))
        return failure();
      continue;
    }
    appendText(body.text, StringRef(cursor, token - cursor));
    if (*token == '#') {
      Attribute nested;
      if (parser.parseAttribute(nested))
        return failure();
      body.nestedAttributes.push_back(nested);
      body.text.push_back(kNestedAttributeMarker);
    } else {
      Type nested;
      if (parser.parseType(nested))
        return failure();
      body.nestedTypes.push_back(nested);
      body.text.push_back(kNestedTypeMarker);
    }
    // The parser now stands on the next token; the whitespace before it
    // belongs to the text, not to the nested value.
    const char *next =
        std::min(parser.getCurrentLocation().getPointer(), specEnd);
    while (next > token && llvm::isSpace(next[-1]))
      --next;
    cursor = next;
  }
  appendText(body.text, StringRef(cursor, specEnd - cursor));
  return body;
}

void tlx::verbatim::printBody(DialectAsmPrinter &printer, StringRef text,
                              ArrayRef<Attribute> nestedAttributes,
                              ArrayRef<Type> nestedTypes) {
  while (!text.empty()) {
    size_t marker = text.find_first_of(StringRef("\x01\x02", 2));
    printer.getStream() << text.take_front(marker);
    if (marker == StringRef::npos)
      return;
    if (text[marker] == kNestedAttributeMarker) {
      printer.printAttribute(nestedAttributes.front());
      nestedAttributes = nestedAttributes.drop_front();
    } else {
      printer.printType(nestedTypes.front());
      nestedTypes = nestedTypes.drop_front();
    }
    text = text.drop_front(marker + 1);
  }
}
