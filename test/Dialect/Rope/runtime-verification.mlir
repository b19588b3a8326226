// RUN: rope-opt %s --generate-runtime-verification --split-input-file | FileCheck %s
// RUN: rope-opt %s --generate-runtime-verification=verbose-level=0 --split-input-file | FileCheck %s --check-prefix=TERSE

// Checked mode (RuntimeVerifiableOpInterface): what the verifier cannot see
// when sizes are dynamic is asserted before the op, at its location.

// Static shapes: the verifier has checked everything; no assert.
// CHECK-LABEL: func.func @static_shapes
//   CHECK-NOT:   cf.assert
//       CHECK:   rope.apply
func.func @static_shapes(%x: tensor<4x2x8xf32>, %p: tensor<4xi64>, %init: tensor<4x2x8xf32>) -> tensor<4x2x8xf32> {
  %y = rope.apply ins(%x : tensor<4x2x8xf32>) positions(%p : tensor<4xi64>) outs(%init : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  return %y : tensor<4x2x8xf32>
}

// -----

// Explicit positions and a gathered cache: x and outs, positions and x's
// tokens, the two caches' rows; then min/max over the positions in one loop
// and both ends against the cache's rows.
// CHECK-LABEL: func.func @gathered_cache
//  CHECK-SAME:   (%[[X:.*]]: tensor<?x2xf32>, %[[P:.*]]: tensor<?xi32>, %[[C:.*]]: tensor<?x1xf32>, %[[S:.*]]: tensor<?x1xf32>, %[[I:.*]]: tensor<?x2xf32>)
//       CHECK:   %[[ID:.*]] = tensor.dim %[[I]]
//       CHECK:   %[[XD:.*]] = tensor.dim %[[X]]
//       CHECK:   %[[EQ:.*]] = arith.cmpi eq, %[[ID]], %[[XD]]
//       CHECK:   cf.assert %[[EQ]], "ERROR: Runtime op verification failed\0A{{.*}}^ outs dim 0 must equal x dim 0\0ALocation: loc({{.*}}runtime-verification.mlir
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ positions dim 0 must equal x dim 0
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ the sin cache dim 0 must equal the cos cache dim 0
//       CHECK:   %[[N:.*]] = tensor.dim %[[P]]
//       CHECK:   %[[MM:.*]]:2 = scf.for %{{.*}} = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[LO:.*]] = %{{.*}}, %[[HI:.*]] = %{{.*}}) -> (i64, i64)
//       CHECK:     %[[E:.*]] = tensor.extract %[[P]]
//       CHECK:     %[[E64:.*]] = arith.extsi %[[E]] : i32 to i64
//       CHECK:     arith.minsi %[[LO]], %[[E64]]
//       CHECK:     arith.maxsi %[[HI]], %[[E64]]
//       CHECK:   %[[ROWS:.*]] = tensor.dim %[[C]]
//       CHECK:   %[[ROWS64:.*]] = arith.index_cast %[[ROWS]]
//       CHECK:   %[[NEG:.*]] = arith.cmpi sge, %[[MM]]#0, %{{.*}} : i64
//       CHECK:   cf.assert %[[NEG]], "{{.*}}^ a position is negative: outside the cos/sin cache
//       CHECK:   %[[IN:.*]] = arith.cmpi slt, %[[MM]]#1, %[[ROWS64]] : i64
//       CHECK:   cf.assert %[[IN]], "{{.*}}^ a position is >= the rows of the cos/sin cache: outside the cos/sin cache
//       CHECK:   rope.apply
// TERSE-LABEL: func.func @gathered_cache
//       TERSE:   cf.assert %{{.*}}, "ERROR: Runtime op verification failed\0A^ outs dim 0 must equal x dim 0\0ALocation: loc(
func.func @gathered_cache(%x: tensor<?x2xf32>, %p: tensor<?xi32>, %c: tensor<?x1xf32>, %s: tensor<?x1xf32>, %init: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %y = rope.apply ins(%x : tensor<?x2xf32>) positions(%p : tensor<?xi32>) cache(%c, %s : tensor<?x1xf32>, tensor<?x1xf32>)
         outs(%init : tensor<?x2xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}

// -----

// A static side names its size.
// CHECK-LABEL: func.func @one_side_static
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ positions dim 0 has 4, which must be the size of x dim 0
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ the cache (outs) dim 1 has 2, which must be the size of x dim 1
//       CHECK:   rope.apply
func.func @one_side_static(%x: tensor<?x?x8xf32>, %p: tensor<4xi64>, %cache: tensor<16x2x8xf32>, %slots: tensor<?xi64>) -> (tensor<?x?x8xf32>, tensor<16x2x8xf32>) {
  %y = rope.apply ins(%x : tensor<?x?x8xf32>) positions(%p : tensor<4xi64>) outs(%x : tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  %k = rope.apply ins(%x : tensor<?x?x8xf32>) slots(%slots : tensor<?xi64>) outs(%cache : tensor<16x2x8xf32>) -> tensor<16x2x8xf32>
  return %y, %k : tensor<?x?x8xf32>, tensor<16x2x8xf32>
}

// -----

// A scalar i64 offset: offset + S inside int64 (unless x has no token),
// and with a cache both ends of [offset, offset + S) inside its rows.
// CHECK-LABEL: func.func @offset_cache
//  CHECK-SAME:   (%[[X:.*]]: tensor<?x?x2x4xf32>, %[[O:.*]]: i64, %[[C:.*]]: tensor<?x2xf32>
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ the sin cache dim 0 must equal the cos cache dim 0
//       CHECK:   %[[B:.*]] = tensor.dim %[[X]], %{{.*}}
//       CHECK:   %[[B0:.*]] = arith.cmpi eq, %[[B]], %{{.*}}
//       CHECK:   %[[S:.*]] = tensor.dim %[[X]], %{{.*}}
//       CHECK:   %[[S0:.*]] = arith.cmpi eq, %[[S]], %{{.*}}
//       CHECK:   %[[EMPTY:.*]] = arith.ori %[[B0]], %[[S0]]
//       CHECK:   %[[S64:.*]] = arith.index_cast %{{.*}} : index to i64
//       CHECK:   %[[MAX:.*]] = arith.constant 9223372036854775807 : i64
//       CHECK:   %[[LIMIT:.*]] = arith.subi %[[MAX]], %[[S64]]
//       CHECK:   %[[FITS:.*]] = arith.cmpi sle, %[[O]], %[[LIMIT]]
//       CHECK:   %[[OK:.*]] = arith.ori %[[EMPTY]], %[[FITS]]
//       CHECK:   cf.assert %[[OK]], "{{.*}}^ offset + tokens overflows int64
//       CHECK:   %[[ROWS:.*]] = arith.index_cast %{{.*}} : index to i64
//       CHECK:   arith.cmpi sge, %[[O]]
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ offset is negative: a position outside the cos/sin cache
//       CHECK:   %[[LAST:.*]] = arith.subi %[[ROWS]], %[[S64]]
//       CHECK:   arith.cmpi sle, %[[O]], %[[LAST]]
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ offset + tokens exceeds the rows of the cos/sin cache: a position outside the cos/sin cache
//       CHECK:   rope.apply
func.func @offset_cache(%x: tensor<?x?x2x4xf32>, %o: i64, %c: tensor<?x2xf32>, %s: tensor<?x2xf32>, %init: tensor<?x?x2x4xf32>) -> tensor<?x?x2x4xf32> {
  %y = rope.apply ins(%x : tensor<?x?x2x4xf32>) offset(%o : i64) cache(%c, %s : tensor<?x2xf32>, tensor<?x2xf32>)
         outs(%init : tensor<?x?x2x4xf32>) -> tensor<?x?x2x4xf32>
  return %y : tensor<?x?x2x4xf32>
}

// -----

// An i32 offset cannot overflow int64: no overflow check.
// CHECK-LABEL: func.func @offset_i32
//   CHECK-NOT:   overflows
//       CHECK:   rope.apply
func.func @offset_i32(%x: tensor<?x2x4xf32>, %o: i32, %init: tensor<?x2x4xf32>) -> tensor<?x2x4xf32> {
  %y = rope.apply ins(%x : tensor<?x2x4xf32>) offset(%o : i32) outs(%init : tensor<?x2x4xf32>) -> tensor<?x2x4xf32>
  return %y : tensor<?x2x4xf32>
}

// -----

// Per-row offsets: one per row, and min/max over them by a loop.
// CHECK-LABEL: func.func @row_offsets
//  CHECK-SAME:   (%[[X:.*]]: tensor<?x?x2x4xf32>, %[[O:.*]]: tensor<?xi64>
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ the per-row offset dim 0 must equal x dim 0
//       CHECK:   %[[MM:.*]]:2 = scf.for
//       CHECK:     tensor.extract %[[O]]
//       CHECK:   arith.cmpi sle, %[[MM]]#1
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ offset + tokens overflows int64
//       CHECK:   arith.cmpi sge, %[[MM]]#0
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ offset is negative
//       CHECK:   arith.cmpi sle, %[[MM]]#1
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ offset + tokens exceeds the rows of the cos/sin cache
//       CHECK:   rope.apply
func.func @row_offsets(%x: tensor<?x?x2x4xf32>, %o: tensor<?xi64>, %c: tensor<?x2xf32>, %s: tensor<?x2xf32>, %init: tensor<?x?x2x4xf32>) -> tensor<?x?x2x4xf32> {
  %y = rope.apply ins(%x : tensor<?x?x2x4xf32>) offset(%o : tensor<?xi64>) cache(%c, %s : tensor<?x2xf32>, tensor<?x2xf32>)
         outs(%init : tensor<?x?x2x4xf32>) -> tensor<?x?x2x4xf32>
  return %y : tensor<?x?x2x4xf32>
}

// -----

// M-RoPE: the positions' token axis (after the static 3) against x's.
// CHECK-LABEL: func.func @mrope
//   CHECK-NOT:   outs dim
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ positions dim 1 must equal x dim 0
//   CHECK-NOT:   cf.assert
//       CHECK:   rope.apply
func.func @mrope(%x: tensor<?x2x8xf32>, %p: tensor<3x?xi64>) -> tensor<?x2x8xf32> {
  %y = rope.apply ins(%x : tensor<?x2x8xf32>) positions(%p : tensor<3x?xi64>) outs(%x : tensor<?x2x8xf32>)
         {mrope = #rope.mrope<section = [2, 1, 1]>} -> tensor<?x2x8xf32>
  return %y : tensor<?x2x8xf32>
}

// -----

// Pre-gathered cos/sin carry x's tokens.
// CHECK-LABEL: func.func @pregathered
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ the pre-gathered cos dim 0 must equal x dim 0
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ the pre-gathered sin dim 0 must equal x dim 0
//   CHECK-NOT:   cf.assert
//       CHECK:   rope.apply
func.func @pregathered(%x: tensor<?x2x4xf32>, %c: tensor<?x2xf32>, %s: tensor<?x2xf32>) -> tensor<?x2x4xf32> {
  %y = rope.apply ins(%x : tensor<?x2x4xf32>) cache(%c, %s : tensor<?x2xf32>, tensor<?x2xf32>)
         outs(%x : tensor<?x2x4xf32>) -> tensor<?x2x4xf32>
  return %y : tensor<?x2x4xf32>
}

// -----

// Quantized output with one scale per head; a cache append (head dims of
// the cache and the slots; the cache's token dims may differ from x's).
// CHECK-LABEL: func.func @neighbours
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ outs dim 1 must equal x dim 1
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ the per-head quant_scale dim 0 must equal x dim 1
//       CHECK:   rope.apply
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ the cache (outs) dim 1 must equal x dim 1
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ slots dim 0 must be 4, the size of x dim 0
//   CHECK-NOT:   cf.assert
//       CHECK:   rope.apply
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ the cache (outs) dim 1 must equal x dim 1
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ slots dim 0 must be 4, the size of x dim 0
//       CHECK:   rope.cache_write
func.func @neighbours(%x: tensor<4x?x8xbf16>, %p: tensor<4xi64>, %scale: tensor<?xf32>, %init: tensor<4x?x8xf8E4M3FN>,
                      %slots: tensor<?xi64>, %cache: tensor<64x?x8xbf16>) -> (tensor<4x?x8xf8E4M3FN>, tensor<64x?x8xbf16>, tensor<64x?x8xbf16>) {
  %q = rope.apply ins(%x : tensor<4x?x8xbf16>) positions(%p : tensor<4xi64>) quant_scale(%scale : tensor<?xf32>)
         outs(%init : tensor<4x?x8xf8E4M3FN>) -> tensor<4x?x8xf8E4M3FN>
  %k = rope.apply ins(%x : tensor<4x?x8xbf16>) positions(%p : tensor<4xi64>) slots(%slots : tensor<?xi64>)
         outs(%cache : tensor<64x?x8xbf16>) -> tensor<64x?x8xbf16>
  %v = rope.cache_write ins(%x : tensor<4x?x8xbf16>) slots(%slots : tensor<?xi64>)
         outs(%cache : tensor<64x?x8xbf16>) -> tensor<64x?x8xbf16>
  return %q, %k, %v : tensor<4x?x8xf8E4M3FN>, tensor<64x?x8xbf16>, tensor<64x?x8xbf16>
}

// -----

// Attention: every operand dim an indexing map ties to a loop has the size
// of the first operand naming that loop.
#q = affine_map<(b, m, k1, k2, n) -> (b, m, k1)>
#k = affine_map<(b, m, k1, k2, n) -> (b, k2, k1)>
#v = affine_map<(b, m, k1, k2, n) -> (b, k2, n)>
#o = affine_map<(b, m, k1, k2, n) -> (b, m, n)>
// CHECK-LABEL: func.func @attention
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ key dim 0 must equal query dim 0
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ value dim 0 must equal query dim 0
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ value dim 1 must equal key dim 1
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ outs dim 0 must equal query dim 0
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ outs dim 1 must equal query dim 1
//   CHECK-NOT:   cf.assert
//       CHECK:   rope.attention
func.func @attention(%q: tensor<?x?x16xf32>, %k: tensor<?x?x16xf32>, %v: tensor<?x?x16xf32>, %init: tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {
  %o = rope.attention ins(%q, %k, %v : tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>)
         outs(%init : tensor<?x?x16xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.25 : f64} -> tensor<?x?x16xf32>
  return %o : tensor<?x?x16xf32>
}

// -----

// Attention sinks: a dynamic sinks dim is checked against the batch loop it
// names (here the heads, first named by the query).
#q = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, k1)>
#k = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, m, k1, k2, n) -> (b, h, k2, n)>
#s = affine_map<(b, h, m, k1, k2, n) -> (h)>
#o = affine_map<(b, h, m, k1, k2, n) -> (b, h, m, n)>
// CHECK-LABEL: func.func @attention_sinks
//       CHECK:   cf.assert %{{.*}}, "{{.*}}^ sinks dim 0 must equal query dim 1
//       CHECK:   rope.attention
func.func @attention_sinks(%q: tensor<1x?x4x16xf32>, %k: tensor<1x2x6x16xf32>, %v: tensor<1x2x6x16xf32>, %sinks: tensor<?xf32>, %init: tensor<1x2x4x16xf32>) -> tensor<1x2x4x16xf32> {
  %o = rope.attention ins(%q, %k, %v : tensor<1x?x4x16xf32>, tensor<1x2x6x16xf32>, tensor<1x2x6x16xf32>) sinks(%sinks : tensor<?xf32>)
         outs(%init : tensor<1x2x4x16xf32>) attributes {indexing_maps = [#q, #k, #v, #s, #o], scale = 0.25 : f64} -> tensor<1x2x4x16xf32>
  return %o : tensor<1x2x4x16xf32>
}
