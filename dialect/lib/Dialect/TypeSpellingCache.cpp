//===- TypeSpellingCache.cpp - Each type spelling parsed once -------------===//

#include "tlx/Dialect/TypeSpellingCache.h"

using namespace mlir;

thread_local tlx::TypeSpellingCache *tlx::TypeSpellingCache::innermost =
    nullptr;

tlx::TypeSpellingCache::TypeSpellingCache(OpAsmParser &parser)
    : parserBuilder(&parser.getBuilder()), enclosing(innermost) {
  innermost = this;
}

tlx::TypeSpellingCache::~TypeSpellingCache() { innermost = enclosing; }

Type tlx::TypeSpellingCache::parse(const Dialect &dialect,
                                   DialectAsmParser &parser,
                                   function_ref<Type()> parse) {
  TypeSpellingCache *cache = innermost;
  // Another parser (a nested parse of a string, say) has its own aliases.
  if (!cache || cache->parserBuilder != &parser.getBuilder())
    return parse();
  std::pair<const Dialect *, StringRef> spelling(&dialect,
                                                 parser.getFullSymbolSpec());
  if (Type known = cache->types.lookup(spelling))
    return known;
  Type type = parse();
  if (type)
    cache->types.try_emplace(spelling, type);
  return type;
}
