//===- InputGuards.cpp - Reject text that crashes the MLIR parser ---------===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A single pass over the text with a stack of open brackets; not a parser.
// It understands just enough of MLIR's lexical syntax (comments, strings,
// identifiers with their sigils, `->`) not to be fooled by them.
//
//===----------------------------------------------------------------------===//

#include "rope/Guards/InputGuards.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/Twine.h"

#include <cstdint>

using namespace mlir;

namespace {

bool isBareIdStart(char c) { return llvm::isAlpha(c) || c == '_'; }
bool isBareIdChar(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.';
}
/// Characters of the suffix of `%x`, `@x`, `#x`, `!x`, `^x` (MLIR's
/// suffix-id, which also allows '-').
bool isSuffixIdChar(char c) { return isBareIdChar(c) || c == '-'; }
bool isSigil(char c) {
  return c == '%' || c == '@' || c == '#' || c == '!' || c == '^';
}

class Scanner {
public:
  Scanner(StringRef source, unsigned maxNesting, std::string &reason)
      : source(source), maxNesting(maxNesting), reason(reason) {}

  LogicalResult run();

private:
  char at(size_t pos) const { return pos < source.size() ? source[pos] : 0; }
  /// Past whitespace and `//` comments from `pos`.
  size_t skipSpace(size_t pos) const;
  /// Past the string literal opening at `pos`.
  size_t skipString(size_t pos) const;
  /// The run of characters satisfying `pred` from `pos`.
  StringRef takeWhile(size_t pos, bool (*pred)(char)) const;
  /// Whether type alias `!name` is defined (possibly through other aliases)
  /// as `index`.
  bool aliasIsIndex(StringRef name, unsigned depth) const;
  /// Whether `pos` starts `[` integer, ... `]` with every integer in int64;
  /// `values` gets them.
  bool isIntegerList(size_t pos,
                     SmallVectorImpl<int64_t> *values = nullptr) const;
  LogicalResult fail(size_t pos, const Twine &what);

  /// Checks the bare identifier `id` that ends at `end`.
  LogicalResult checkIdentifier(StringRef id, size_t end);

  StringRef source;
  unsigned maxNesting;
  std::string &reason;
  /// The open brackets, innermost last.
  std::string open;
  /// Consecutive unary minus signs (each is one level of parser recursion).
  size_t minusRun = 0;
  /// The linalg op whose custom form's dimension list is still to come.
  StringRef pendingLinalgOp;
  /// Whether the tile sizes of a tile_using_forall are still to come.
  bool pendingForall = false;
  /// Whether the `dim` of a tensor.concat (custom `dim(N)` or generic
  /// `dim = N`) is still to come.
  bool pendingConcat = false;
};

size_t Scanner::skipSpace(size_t pos) const {
  while (pos < source.size()) {
    if (llvm::isSpace(source[pos])) {
      ++pos;
    } else if (source.substr(pos).starts_with("//")) {
      pos = source.find('\n', pos);
    } else {
      break;
    }
  }
  return std::min(pos, source.size());
}

size_t Scanner::skipString(size_t pos) const {
  for (++pos; pos < source.size(); ++pos) {
    if (source[pos] == '\\')
      ++pos;
    else if (source[pos] == '"' || source[pos] == '\n')
      return pos + 1;
  }
  return source.size();
}

StringRef Scanner::takeWhile(size_t pos, bool (*pred)(char)) const {
  size_t end = pos;
  while (end < source.size() && pred(source[end]))
    ++end;
  return source.slice(pos, end);
}

bool Scanner::aliasIsIndex(StringRef name, unsigned depth) const {
  // Too many aliases of aliases to follow: assume the worst.
  if (depth == 0)
    return true;
  std::string def = ("!" + name).str();
  for (size_t pos = source.find(def); pos != StringRef::npos;
       pos = source.find(def, pos + 1)) {
    size_t end = pos + def.size();
    if (isSuffixIdChar(at(end)))
      continue;
    size_t value = skipSpace(end);
    if (at(value) != '=')
      continue;
    value = skipSpace(value + 1);
    if (at(value) == '!') {
      StringRef next = takeWhile(value + 1, isSuffixIdChar);
      if (!next.empty() && aliasIsIndex(next, depth - 1))
        return true;
    } else if (takeWhile(value, isBareIdChar) == "index") {
      return true;
    }
  }
  return false;
}

bool Scanner::isIntegerList(size_t pos,
                            SmallVectorImpl<int64_t> *values) const {
  if (at(pos) != '[')
    return false;
  pos = skipSpace(pos + 1);
  if (at(pos) == ']')
    return true;
  while (true) {
    size_t start = pos;
    if (at(pos) == '-')
      ++pos;
    StringRef digits = takeWhile(pos, isBareIdChar);
    int64_t value;
    if (digits.empty() || !llvm::all_of(digits, llvm::isDigit) ||
        source.slice(start, pos + digits.size()).getAsInteger(10, value))
      return false;
    if (values)
      values->push_back(value);
    pos = skipSpace(pos + digits.size());
    if (at(pos) == ']')
      return true;
    if (at(pos) != ',')
      return false;
    pos = skipSpace(pos + 1);
  }
}

LogicalResult Scanner::fail(size_t pos, const Twine &what) {
  StringRef before = source.take_front(pos);
  size_t line = before.count('\n') + 1;
  size_t lineStart = before.rfind('\n');
  size_t column = pos - (lineStart == StringRef::npos ? 0 : lineStart + 1) + 1;
  reason = (what + " at line " + Twine(line) + ", column " + Twine(column) +
            ": MLIR 22 crashes on it (docs/RELIABILITY.md)")
               .str();
  return failure();
}

LogicalResult Scanner::checkIdentifier(StringRef id, size_t end) {
  if (id == "array") {
    size_t open = skipSpace(end);
    if (at(open) != '<')
      return success();
    size_t element = skipSpace(open + 1);
    if (takeWhile(element, isBareIdChar) == "index")
      return fail(element, "a dense array of index elements (array<index>)");
    if (at(element) == '!') {
      StringRef alias = takeWhile(element + 1, isSuffixIdChar);
      if (!alias.empty() && aliasIsIndex(alias, /*depth=*/8))
        return fail(element, "a dense array of index elements (array<!" +
                                 alias + "> with !" + alias + " = index)");
    }
    return success();
  }
  StringRef linalgOp = llvm::StringSwitch<StringRef>(id)
                           .Case("linalg.broadcast", "dimensions")
                           .Case("linalg.reduce", "dimensions")
                           .Case("linalg.transpose", "permutation")
                           .Default("");
  if (!linalgOp.empty()) {
    pendingLinalgOp = id;
    return success();
  }
  if (id == "transform.structured.tile_using_forall") {
    pendingForall = true;
    return success();
  }
  if (id == "tensor.concat") {
    pendingConcat = true;
    return success();
  }
  if (pendingConcat && id == "dim") {
    pendingConcat = false;
    size_t open = skipSpace(end);
    if (at(open) != '(' && at(open) != '=')
      return success();
    size_t value = skipSpace(open + 1);
    StringRef digits = takeWhile(value, isBareIdChar);
    int64_t dim;
    // The verifier indexes the operand shapes with the dim before it checks
    // the dim's sign: only a plain non-negative int64 is safe.
    if (digits.empty() || !llvm::all_of(digits, llvm::isDigit) ||
        digits.getAsInteger(10, dim))
      return fail(value, "a tensor.concat dim that is not a non-negative "
                         "integer");
    return success();
  }
  if (pendingForall && id == "tile_sizes") {
    pendingForall = false;
    SmallVector<int64_t> sizes;
    if (isIntegerList(skipSpace(end), &sizes) && !sizes.empty() &&
        llvm::all_of(sizes, [](int64_t size) { return size == 0; }))
      return fail(end, "tile_using_forall with every tile size 0");
    return success();
  }
  if (!pendingLinalgOp.empty() && (id == "dimensions" || id == "permutation")) {
    size_t equal = skipSpace(end);
    if (at(equal) != '=')
      return success();
    size_t list = skipSpace(equal + 1);
    if (!isIntegerList(list))
      return fail(list, "a `" + id + "` of " + pendingLinalgOp +
                            " that is not a list of integers");
    pendingLinalgOp = "";
  }
  return success();
}

LogicalResult Scanner::run() {
  size_t pos = 0;
  while (pos < source.size()) {
    char c = source[pos];
    if (c == '-' && at(pos + 1) != '>') {
      if (open.size() + ++minusRun > maxNesting)
        return fail(pos, "more than " + Twine(maxNesting) +
                             " levels of nesting (brackets and unary minus)");
      ++pos;
      continue;
    }
    if (llvm::isSpace(c)) {
      ++pos;
      continue;
    }
    minusRun = 0;
    if (c == '/' && at(pos + 1) == '/') {
      pos = skipSpace(pos);
    } else if (c == '"') {
      size_t end = skipString(pos);
      // The generic form names the op in a string.
      if (source.slice(pos, end) == "\"tensor.concat\"")
        pendingConcat = true;
      pos = end;
    } else if (c == '-') {
      pos += 2; // `->`
    } else if (c == '(' || c == '[' || c == '{' || c == '<') {
      open.push_back(c);
      if (open.size() > maxNesting)
        return fail(pos, "more than " + Twine(maxNesting) +
                             " levels of nesting (brackets and unary minus)");
      ++pos;
    } else if (c == '>') {
      // Also a comparison in integer sets (`>=`): close only an open `<`.
      if (!open.empty() && open.back() == '<')
        open.pop_back();
      ++pos;
    } else if (c == ')' || c == ']' || c == '}') {
      // Closes its bracket and anything left open inside it.
      char opener = c == ')' ? '(' : c == ']' ? '[' : '{';
      size_t match = open.rfind(opener);
      if (match != std::string::npos)
        open.resize(match);
      ++pos;
    } else if (isSigil(c)) {
      pos += 1 + takeWhile(pos + 1, isSuffixIdChar).size();
    } else if (isBareIdStart(c)) {
      StringRef id = takeWhile(pos, isBareIdChar);
      if (failed(checkIdentifier(id, pos + id.size())))
        return failure();
      pos += id.size();
    } else if (isBareIdChar(c)) {
      // Numbers (with their exponent letters) and stray characters.
      pos += takeWhile(pos, isBareIdChar).size();
    } else {
      ++pos;
    }
  }
  return success();
}

} // namespace

LogicalResult mlir::rope::checkParserSafety(StringRef source,
                                            std::string &reason,
                                            unsigned maxNesting) {
  return Scanner(source, maxNesting, reason).run();
}
