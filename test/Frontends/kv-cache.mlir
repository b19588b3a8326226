// KV-cache append as the frontends write it (scripts/gen-cache-fixtures.py):
// a rotate_half RoPE of k, then the rotated k written into the cache at a
// runtime position. rope-raise raises the rotation, then folds the
// tensor.insert_slice of its result into one rope.apply with slots writing
// straight into the cache argument (RaiseCacheAppend.cpp); the slots reuse
// the insert's own offset value (JAX's clamp of the dynamic_update_slice
// index, torch's checked start) as it is. Numerics:
// python/tests/compiler/test_cache_lowering_scalar.py::test_frontend_fixture.
// RUN: rope-opt --rope-raise %S/Inputs/cache/jax_dynamic_update_slice.mlir | FileCheck %s --check-prefix=JAX
// RUN: rope-opt --rope-raise %S/Inputs/cache/torch_slice_scatter.mlir | FileCheck %s --check-prefix=TORCH
// RUN: rope-opt --rope-raise --rope-to-llvm-cpu="vectorize=false" %S/Inputs/cache/jax_dynamic_update_slice.mlir | FileCheck %s --check-prefix=LLVM
// RUN: rope-opt --rope-raise --rope-to-llvm-cpu="vectorize=false" %S/Inputs/cache/torch_slice_scatter.mlir | FileCheck %s --check-prefix=LLVM

// JAX lax.dynamic_update_slice(cache, k_rot, (0, idx, 0, 0)) on a
// contiguous [B, max_len, Hkv, D] cache; the index wrapped (+16 when
// negative) and clamped to [0, max_len - S] by the frontend.
// JAX-LABEL: func.func public @main(
//  JAX-SAME:     %[[K:[^:]*]]: tensor<2x3x2x32xf32>, %[[POS:[^:]*]]: tensor<2x3xi32>, %[[CACHE:[^:]*]]: tensor<2x16x2x32xf32>, %[[IDX:[^:]*]]: tensor<i32>)
//   JAX-NOT:   math.cos
//   JAX-DAG:   %[[C13:.*]] = arith.constant 13 : index
//       JAX:   %[[I:.*]] = arith.maxsi %{{.*}}, %{{.*}} : index
//       JAX:   %[[OFF:.*]] = arith.minsi %[[I]], %[[C13]] : index
//       JAX:   %[[SLOTS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3xi64>)
//       JAX:     %[[B:.*]] = linalg.index 0 : index
//       JAX:     %[[BR:.*]] = arith.muli %[[B]], %{{.*}} : index
//       JAX:     %[[T:.*]] = linalg.index 1 : index
//       JAX:     %[[PT:.*]] = arith.addi %[[OFF]], %[[T]] : index
//       JAX:     arith.addi %[[BR]], %[[PT]] : index
//       JAX:   %[[R:.*]] = rope.apply ins(%[[K]] : tensor<2x3x2x32xf32>) positions(%[[POS]] : tensor<2x3xi32>) slots(%[[SLOTS]] : tensor<2x3xi64>) outs(%[[CACHE]] : tensor<2x16x2x32xf32>) {freqs = #rope.table<inv_freq = [1.000000e+00, 0.56234133243560791,
//   JAX-NOT:   tensor.insert_slice
//   JAX-NOT:   math.cos
//       JAX:   return %[[R]]

// torch: slice_scatter(cache, k_rot, dim=2, start=s, end=s+S) on an HF
// [B, Hkv, max_len, D] cache, s = start.item() checked by the frontend.
// TORCH-LABEL: func.func @main(
//  TORCH-SAME:     %[[K:[^:]*]]: tensor<2x2x3x32xf32>, %[[POS:[^:]*]]: tensor<2x3xi64>, %[[CACHE:[^:]*]]: tensor<2x2x16x32xf32>, %[[START:[^:]*]]: tensor<i64>)
//   TORCH-NOT:   math.cos
//       TORCH:   cf.assert
//       TORCH:   %[[S:.*]] = arith.index_cast %{{.*}} : i64 to index
//       TORCH:   %[[SLOTS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3xi64>)
//       TORCH:     %[[T:.*]] = linalg.index 1 : index
//       TORCH:     arith.addi %[[S]], %[[T]] : index
//       TORCH:   %[[R:.*]] = rope.apply ins(%[[K]] : tensor<2x2x3x32xf32>) positions(%[[POS]] : tensor<2x3xi64>) slots(%[[SLOTS]] : tensor<2x3xi64>) outs(%[[CACHE]] : tensor<2x2x16x32xf32>)
//  TORCH-SAME:     token_dims = array<i64: 0, 2>
//   TORCH-NOT:   tensor.insert_slice
//   TORCH-NOT:   math.cos
//       TORCH:   return %[[R]]

// Both compile through the CPU pipeline's portable path.
// LLVM: llvm.func @main(
