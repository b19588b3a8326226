//===- InitAllRope.h - Register everything rope-mlir provides ---*- C++ -*-===//
//
// Part of the rope-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_INITALLROPE_H
#define ROPE_INITALLROPE_H

namespace mlir {
class DialectRegistry;
namespace rope {

/// Adds the rope dialect to `registry`.
void registerAllRopeDialects(DialectRegistry &registry);

/// Registers the rope passes and the named pipelines.
void registerAllRopePasses();

} // namespace rope
} // namespace mlir

#endif // ROPE_INITALLROPE_H
