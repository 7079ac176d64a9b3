//===- TypeSpellingCache.h - Each type spelling parsed once -----*- C++ -*-===//
//
// A Triton function spells the same few types many times: every
// tlx.storage_alias_local_alloc, tlx.reuse_group and ttg.memdesc_index
// repeats `!ttg.memdesc<2x64x64xf32, #shared, #smem, mutable>` and
// `!tlx.storage_alias_spec<smem>`. While the body of a tt.func is parsed,
// the type parsers of `tt`, `ttg`, `ttng` and `tlx` remember the type each
// spelling gave and answer the next identical spelling with it instead of
// parsing it again. MLIR has already scanned the extent of the spelling and
// moves past it whatever the dialect consumed (the dialect may parse
// DialectAsmParser::getFullSymbolSpec() on its own).
//
// A spelling means the same type only within one parse: it may name the
// aliases of the file being parsed (`#shared`, `#smem`). So a cache lives
// for one tt.func, on the thread that parses it, and answers only the parser
// that opened it; any other parse (mlir::parseType of a string, another
// file) parses as usual.
//
//===----------------------------------------------------------------------===//

#ifndef TLX_DIALECT_TYPESPELLINGCACHE_H
#define TLX_DIALECT_TYPESPELLINGCACHE_H

#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/DenseMap.h"

#include <utility>

namespace mlir::tlx {

class TypeSpellingCache {
public:
  /// Caches the types that `parser`, parsing a tt.func, parses on this
  /// thread until the cache is destroyed.
  explicit TypeSpellingCache(OpAsmParser &parser);
  ~TypeSpellingCache();
  TypeSpellingCache(const TypeSpellingCache &) = delete;
  TypeSpellingCache &operator=(const TypeSpellingCache &) = delete;

  /// The type of `dialect` that `parser` stands on: the one an identical
  /// spelling gave earlier in this tt.func, else `parse()` (remembered when
  /// it succeeds).
  static Type parse(const Dialect &dialect, DialectAsmParser &parser,
                    function_ref<Type()> parse);

private:
  /// The cache of this thread's innermost tt.func parse, if any.
  static thread_local TypeSpellingCache *innermost;

  /// Identifies the parser that opened this cache (it outlives the cache).
  const Builder *parserBuilder;
  TypeSpellingCache *enclosing;
  llvm::DenseMap<std::pair<const Dialect *, StringRef>, Type> types;
};

} // namespace mlir::tlx

#endif // TLX_DIALECT_TYPESPELLINGCACHE_H
