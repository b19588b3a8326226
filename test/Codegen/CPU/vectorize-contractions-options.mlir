// RUN: not rope-opt %s --rope-vectorize-contractions="vector-bits=9223372036854775807 vectors-per-row=64" 2>&1 | FileCheck %s
// RUN: not rope-opt %s --rope-vectorize-contractions="vector-bits=8192" 2>&1 | FileCheck %s
// RUN: not rope-opt %s --rope-vectorize-contractions="columns=100000" 2>&1 | FileCheck %s
// RUN: not rope-opt %s --rope-vectorize-contractions="vectors-per-row=100000" 2>&1 | FileCheck %s
// RUN: not rope-opt %s --rope-vectorize-contractions="rows=65" 2>&1 | FileCheck %s
// RUN: rope-opt %s --rope-vectorize-contractions="vector-bits=4096 rows=2 vectors-per-row=2 columns=64" | FileCheck %s --check-prefix=BOUND

// Tile options are bounded (found with UBSan: lanes × vectors-per-row
// overflowed int64 for a huge vector-bits, and a huge tile unrolled into
// millions of ops).
// CHECK: rope-vectorize-contractions: vector-bits must be at most 4096 and rows, vectors-per-row and columns at most 64

// BOUND-LABEL: func.func @matmul(
//       BOUND:   vector.fma
//   BOUND-NOT:   linalg.matmul
func.func @matmul(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}
