// RUN: rope-opt %s --split-input-file --rope-prefetch-strided-rows | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --split-input-file --rope-prefetch-strided-rows="distance=4 line-bytes=128" | FileCheck %s --check-prefix=OPTS
// RUN: rope-opt %s --split-input-file --rope-prefetch-strided-rows="distance=0" | FileCheck %s --check-prefix=NONE
// RUN: not rope-opt %s --split-input-file --rope-prefetch-strided-rows="distance=-1" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: distance must be >= 0 and line-bytes >= 1 (got distance=-1, line-bytes=64)
// NONE-NOT: memref.prefetch

// MLA's q: the 64 rope channels of each [T, H, 192] row, rotated in place
// head by head. The bounds come from the function's argument (the outermost
// view), once, at the function's start; the rows' offset before the loop,
// and the last row they may look ahead to: the token's last row, or none
// when the token dim's stride is the H rows' (the next token's rows follow
// and the outer loop visits them next; at run time, as it is dynamic). In
// the loop, row iv + 16's lines (bf16: 32 elements a line) and last element,
// each clamped between the argument's first and last elements.
// CHECK-LABEL: func.func @mla_q(
//  CHECK-SAME:     %[[Q:.*]]: memref<?x?x192xbf16>
//       CHECK:   %[[BASE:.*]], %[[OFF:.*]], %[[SIZES:.*]]:3, %[[STRIDES:.*]]:3 = memref.extract_strided_metadata %[[Q]]
//       CHECK:   %[[FLAT:.*]] = memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [%{{.*}}], strides: [1] : memref<bf16> to memref<?xbf16>
//       CHECK:   %[[ROPE:.*]] = memref.subview %[[Q]]
//       CHECK:   scf.for %[[T:.*]] =
//       CHECK:     %[[ROWS:.*]] = memref.subview %[[ROPE]][%[[T]], 0, 0]
//       CHECK:     %{{.*}}, %[[ROFF:.*]], %[[RSIZES:.*]]:2, %[[RSTRIDES:.*]]:2 = memref.extract_strided_metadata %[[ROWS]]
//       CHECK:     %[[LASTROW:.*]] = arith.subi %[[RSIZES]]#0, %{{c1(_[0-9]+)?}}
//       CHECK:     %{{.*}}, %{{.*}}, %{{.*}}:3, %[[PSTRIDES:.*]]:3 = memref.extract_strided_metadata %[[ROPE]]
//       CHECK:     %[[SPAN:.*]] = arith.muli %[[RSIZES]]#0, %[[RSTRIDES]]#0
//       CHECK:     %[[NEXT:.*]] = arith.cmpi eq, %[[PSTRIDES]]#0, %[[SPAN]]
//       CHECK:     %[[MAXROW:.*]] = arith.select %[[NEXT]], %{{.*}}, %[[LASTROW]]
//       CHECK:     scf.for %[[H:.*]] =
//       CHECK:       %[[PLUS:.*]] = arith.addi %[[H]], %{{c16(_[0-9]+)?}}
//       CHECK:       %[[AHEAD:.*]] = arith.minsi %[[PLUS]], %[[MAXROW]]
//       CHECK:       %[[JUMP:.*]] = arith.muli %[[AHEAD]], %[[RSTRIDES]]#0
//       CHECK:       %[[START:.*]] = arith.addi %[[ROFF]], %[[JUMP]]
//       CHECK:       %[[P0:.*]] = arith.addi %[[START]], %{{c0(_[0-9]+)?}}
//       CHECK:       %[[LOW0:.*]] = arith.minsi %[[P0]], %[[LAST:.*]] : index
//       CHECK:       %[[AT0:.*]] = arith.maxsi %[[LOW0]], %[[FIRST:.*]] : index
//       CHECK:       memref.prefetch %[[FLAT]][%[[AT0]]], read, locality<2>, data
//       CHECK:       arith.addi %[[START]], %{{c32(_[0-9]+)?}}
//       CHECK:       memref.prefetch %[[FLAT]]
//       CHECK:       arith.addi %[[START]], %{{c63(_[0-9]+)?}}
//       CHECK:       memref.prefetch %[[FLAT]]
//   CHECK-NOT:       memref.prefetch
//       CHECK:       vector.transfer_read %[[ROWS]][%[[H]], %{{c0(_[0-9]+)?}}]
// OPTS-LABEL: func.func @mla_q(
//       OPTS:   arith.addi %{{.*}}, %c4
//       OPTS:   arith.addi %{{.*}}, %c0
//       OPTS:   memref.prefetch
//       OPTS:   arith.addi %{{.*}}, %c63
//       OPTS:   memref.prefetch
//   OPTS-NOT:   memref.prefetch
//       OPTS:   vector.transfer_read
func.func @mla_q(%q: memref<?x?x192xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %pad = arith.constant 0.0 : bf16
  %t = memref.dim %q, %c0 : memref<?x?x192xbf16>
  %h = memref.dim %q, %c1 : memref<?x?x192xbf16>
  %rope = memref.subview %q[0, 0, 128] [%t, %h, 64] [1, 1, 1] : memref<?x?x192xbf16> to memref<?x?x64xbf16, strided<[?, 192, 1], offset: 128>>
  scf.for %i = %c0 to %t step %c1 {
    %rows = memref.subview %rope[%i, 0, 0] [1, %h, 64] [1, 1, 1] : memref<?x?x64xbf16, strided<[?, 192, 1], offset: 128>> to memref<?x64xbf16, strided<[192, 1], offset: ?>>
    scf.for %j = %c0 to %h step %c1 {
      %a = vector.transfer_read %rows[%j, %c0], %pad {in_bounds = [true]} : memref<?x64xbf16, strided<[192, 1], offset: ?>>, vector<32xbf16>
      vector.transfer_write %a, %rows[%j, %c0] {in_bounds = [true]} : vector<32xbf16>, memref<?x64xbf16, strided<[192, 1], offset: ?>>
      %b = vector.transfer_read %rows[%j, %c32], %pad {in_bounds = [true]} : memref<?x64xbf16, strided<[192, 1], offset: ?>>, vector<32xbf16>
      vector.transfer_write %b, %rows[%j, %c32] {in_bounds = [true]} : vector<32xbf16>, memref<?x64xbf16, strided<[192, 1], offset: ?>>
    }
  }
  return
}

// -----

// Out of place, through vector.load/store, with a leading index: the source
// and the destination are both strided, each gets its prefetches (f32: 16
// elements a line), and the leading index enters the row offset. No loop
// encloses this one: rows ahead stop at each view's last row.
// CHECK-LABEL: func.func @two_views(
//   CHECK-NOT:   arith.cmpi
//       CHECK:   scf.for %[[H:.*]] =
//       CHECK:     %[[PLUS:.*]] = arith.addi %[[H]], %{{c16(_[0-9]+)?}}
//       CHECK:     arith.minsi %[[PLUS]], %{{.*}}
// CHECK-COUNT-3:   memref.prefetch
//       CHECK:     %[[PLUS2:.*]] = arith.addi %[[H]], %{{c16(_[0-9]+)?}}
//       CHECK:     arith.minsi %[[PLUS2]], %{{.*}}
// CHECK-COUNT-3:   memref.prefetch
//   CHECK-NOT:     memref.prefetch
//       CHECK:     vector.load
func.func @two_views(%x: memref<2x?x48xf32, strided<[?, 48, 1]>>, %y: memref<2x?x32xf32, strided<[?, 96, 1]>>, %b: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c1 : memref<2x?x32xf32, strided<[?, 96, 1]>>
  %xs = memref.subview %x[0, 0, 8] [2, %n, 32] [1, 1, 1] : memref<2x?x48xf32, strided<[?, 48, 1]>> to memref<2x?x32xf32, strided<[?, 48, 1], offset: 8>>
  scf.for %j = %c0 to %n step %c1 {
    %v = vector.load %xs[%b, %j, %c0] : memref<2x?x32xf32, strided<[?, 48, 1], offset: 8>>, vector<16xf32>
    vector.store %v, %y[%b, %j, %c0] : memref<2x?x32xf32, strided<[?, 96, 1]>>, vector<16xf32>
  }
  return
}

// -----

// Left alone: contiguous rows (the prefetchers serve them), a loop of step 2,
// rows indexed by something other than the loop's variable, rows read from
// a view made in the loop, and rows in a nested loop (the inner loop's own
// business, and here its rows are contiguous).
// CHECK-LABEL: func.func @left_alone(
//   CHECK-NOT:   memref.prefetch
func.func @left_alone(%a: memref<?x64xf32>, %s: memref<?x64xf32, strided<[128, 1]>>, %k: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = memref.dim %a, %c0 : memref<?x64xf32>
  %pad = arith.constant 0.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    %v = vector.transfer_read %a[%i, %c0], %pad {in_bounds = [true]} : memref<?x64xf32>, vector<16xf32>
    vector.transfer_write %v, %a[%i, %c0] {in_bounds = [true]} : vector<16xf32>, memref<?x64xf32>
  }
  scf.for %i = %c0 to %n step %c2 {
    %v = vector.transfer_read %s[%i, %c0], %pad {in_bounds = [true]} : memref<?x64xf32, strided<[128, 1]>>, vector<16xf32>
    vector.transfer_write %v, %s[%i, %c0] {in_bounds = [true]} : vector<16xf32>, memref<?x64xf32, strided<[128, 1]>>
  }
  scf.for %i = %c0 to %n step %c1 {
    %v = vector.transfer_read %s[%k, %c0], %pad {in_bounds = [true]} : memref<?x64xf32, strided<[128, 1]>>, vector<16xf32>
    vector.transfer_write %v, %a[%i, %c0] {in_bounds = [true]} : vector<16xf32>, memref<?x64xf32>
  }
  scf.for %i = %c0 to %n step %c1 {
    %row = memref.subview %s[0, 0] [%n, 32] [1, 1] : memref<?x64xf32, strided<[128, 1]>> to memref<?x32xf32, strided<[128, 1]>>
    %v = vector.transfer_read %row[%i, %c0], %pad {in_bounds = [true]} : memref<?x32xf32, strided<[128, 1]>>, vector<16xf32>
    vector.transfer_write %v, %a[%i, %c0] {in_bounds = [true]} : vector<16xf32>, memref<?x64xf32>
  }
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      %v = vector.transfer_read %a[%j, %c0], %pad {in_bounds = [true]} : memref<?x64xf32>, vector<16xf32>
      vector.transfer_write %v, %s[%i, %c0] {in_bounds = [true]} : vector<16xf32>, memref<?x64xf32, strided<[128, 1]>>
    }
  }
  return
}

// -----

// Elements of no fixed size (index) are left alone; a view of bytes
// (memref.view of i8) stops the walk to the outermost view at the last one
// with the rows' element type: the bounds are the f32 view's.
// CHECK-LABEL: func.func @element_types(
//  CHECK-SAME:     %[[BYTES:.*]]: memref<?xi8>
//       CHECK:   %[[F32:.*]] = memref.view %[[BYTES]]
//       CHECK:   memref.extract_strided_metadata %[[F32]]
//       CHECK:   scf.for
// CHECK-COUNT-3:   memref.prefetch
//   CHECK-NOT:     memref.prefetch
//       CHECK:   scf.for
//   CHECK-NOT:     memref.prefetch
func.func @element_types(%bytes: memref<?xi8>, %n: index, %idx: memref<?x4xindex, strided<[8, 1]>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = memref.view %bytes[%c0][%n] : memref<?xi8> to memref<?x64xf32>
  %rows = memref.subview %f[0, 0] [%n, 32] [1, 1] : memref<?x64xf32> to memref<?x32xf32, strided<[64, 1]>>
  scf.for %i = %c0 to %n step %c1 {
    %v = vector.load %rows[%i, %c0] : memref<?x32xf32, strided<[64, 1]>>, vector<16xf32>
    vector.store %v, %rows[%i, %c0] : memref<?x32xf32, strided<[64, 1]>>, vector<16xf32>
  }
  scf.for %i = %c0 to %n step %c1 {
    %v = vector.load %idx[%i, %c0] : memref<?x4xindex, strided<[8, 1]>>, vector<4xindex>
    vector.store %v, %idx[%i, %c0] : memref<?x4xindex, strided<[8, 1]>>, vector<4xindex>
  }
  return
}

// -----

// Hugging Face's [B, H, S, D] visited token by token (the per-token form of
// a KV-cache append): a token's rows are the heads, S * D apart, and the
// next token's rows are D further, not after the last head. With 8 heads
// (no more than the distance) nothing is prefetched; with 32, rows ahead
// stop at the token's last head (no run-time test: the strides are static).
// CHECK-LABEL: func.func @few_heads_outer(
//   CHECK-NOT:   memref.prefetch
//       CHECK:   return
func.func @few_heads_outer(%k: memref<2x8x64x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.forall (%b, %s) in (2, 64) {
    %rows = memref.subview %k[%b, 0, %s, 0] [1, 8, 1, 128] [1, 1, 1, 1] : memref<2x8x64x128xf32> to memref<8x128xf32, strided<[8192, 1], offset: ?>>
    scf.for %h = %c0 to %c8 step %c1 {
      %v = vector.load %rows[%h, %c0] : memref<8x128xf32, strided<[8192, 1], offset: ?>>, vector<16xf32>
      vector.store %v, %rows[%h, %c0] : memref<8x128xf32, strided<[8192, 1], offset: ?>>, vector<16xf32>
    }
  }
  return
}

// CHECK-LABEL: func.func @many_heads_outer(
//       CHECK:   scf.forall
//   CHECK-NOT:     arith.cmpi
//       CHECK:     %[[LAST:.*]] = arith.subi
//       CHECK:     scf.for %[[H:.*]] =
//       CHECK:       %[[PLUS:.*]] = arith.addi %[[H]], %{{c16(_[0-9]+)?}}
//       CHECK:       arith.minsi %[[PLUS]], %[[LAST]]
// CHECK-COUNT-5:     memref.prefetch
//   CHECK-NOT:     memref.prefetch
//       CHECK:   return
func.func @many_heads_outer(%q: memref<1x32x64x128xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  scf.forall (%s) in (64) {
    %rows = memref.subview %q[0, 0, %s, 0] [1, 32, 1, 64] [1, 1, 1, 1] : memref<1x32x64x128xf32> to memref<32x64xf32, strided<[8192, 1], offset: ?>>
    scf.for %h = %c0 to %c32 step %c1 {
      %v = vector.load %rows[%h, %c0] : memref<32x64xf32, strided<[8192, 1], offset: ?>>, vector<16xf32>
      vector.store %v, %rows[%h, %c0] : memref<32x64xf32, strided<[8192, 1], offset: ?>>, vector<16xf32>
    }
  }
  return
}

// -----

// The same token loop over [T, H, D'] rows whose token stride is H rows
// (static): the rows ahead run on into the next token's.
// CHECK-LABEL: func.func @tokens_outer(
//   CHECK-NOT:   arith.cmpi
//       CHECK:   scf.for %[[H:.*]] =
//       CHECK:     %[[PLUS:.*]] = arith.addi %[[H]], %{{c16(_[0-9]+)?}}
//       CHECK:     arith.minsi %[[PLUS]], %{{c9223372036854775807(_[0-9]+)?}}
// CHECK-COUNT-3:   memref.prefetch
func.func @tokens_outer(%q: memref<64x8x192xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.forall (%t) in (64) {
    %rows = memref.subview %q[%t, 0, 128] [1, 8, 64] [1, 1, 1] : memref<64x8x192xbf16> to memref<8x64xbf16, strided<[192, 1], offset: ?>>
    scf.for %h = %c0 to %c8 step %c1 {
      %v = vector.load %rows[%h, %c0] : memref<8x64xbf16, strided<[192, 1], offset: ?>>, vector<32xbf16>
      vector.store %v, %rows[%h, %c0] : memref<8x64xbf16, strided<[192, 1], offset: ?>>, vector<32xbf16>
    }
  }
  return
}

// -----

// A decode key tile's rotation (convert-rope-to-vector's form): K's rows of
// 8 heads × L keys, a chunk of keys for every head, three heads' rows read
// at a time (h, h + 1, h + 2, computed in the loop) and written rotated
// into a tile. Each head's rows are contiguous, but the view is 8 runs of
// them apart (head stride 131072 > the chunk's rows): each run read gets
// its prefetches, into the rows past the chunk (the same head's next keys,
// no bound but the buffer's). The head indices are moved in front of the
// loop for the rows' offsets. The tile written and the cos/sin table read
// (one contiguous run: rows × 64 = the leading stride) get none.
// CHECK-LABEL: func.func @key_runs(
//  CHECK-SAME:     %[[K:.*]]: memref<8x4096x128xf32>
//       CHECK:   %[[BASE:.*]], %{{.*}}, %{{.*}}:3, %{{.*}}:3 = memref.extract_strided_metadata %[[K]]
//       CHECK:   %[[FLAT:.*]] = memref.reinterpret_cast %[[BASE]]
//       CHECK:   scf.for %[[H:.*]] =
//       CHECK:     %[[H1:.*]] = arith.addi %[[H]], %{{c1(_[0-9]+)?}}
//       CHECK:     %[[H2:.*]] = arith.addi %[[H]], %{{c2(_[0-9]+)?}}
//       CHECK:     %{{.*}}, %[[ROFF:.*]], %{{.*}}:3, %[[RSTRIDES:.*]]:3 = memref.extract_strided_metadata %[[CHUNK:.*]] :
//       CHECK:     arith.muli %[[H]], %[[RSTRIDES]]#0
//       CHECK:     arith.muli %[[H1]], %{{.*}}#0
//       CHECK:     arith.muli %[[H2]], %{{.*}}#0
//       CHECK:     scf.for %[[J:.*]] =
//       CHECK:       %[[PLUS:.*]] = arith.addi %[[J]], %{{c16(_[0-9]+)?}}
//       CHECK:       arith.minsi %[[PLUS]], %{{c9223372036854775807(_[0-9]+)?}}
// CHECK-COUNT-9:     memref.prefetch %[[FLAT]]
//       CHECK:       arith.minsi %{{.*}}, %{{c9223372036854775807(_[0-9]+)?}}
// CHECK-COUNT-9:     memref.prefetch %[[FLAT]]
//       CHECK:       arith.minsi %{{.*}}, %{{c9223372036854775807(_[0-9]+)?}}
// CHECK-COUNT-9:     memref.prefetch %[[FLAT]]
//   CHECK-NOT:       memref.prefetch
//       CHECK:       vector.load %[[CHUNK]][%[[H]], %[[J]], %{{c0(_[0-9]+)?}}]
//   CHECK-NOT:   memref.prefetch
//       CHECK:   return
func.func @key_runs(%k: memref<8x4096x128xf32>, %tile: memref<8x32x128xf32>, %table: memref<2x32x64xf32>, %first: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c6 = arith.constant 6 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %chunk = memref.subview %k[0, %first, 0] [8, 32, 128] [1, 1, 1] : memref<8x4096x128xf32> to memref<8x32x128xf32, strided<[524288, 128, 1], offset: ?>>
  scf.for %h = %c0 to %c6 step %c3 {
    scf.for %j = %c0 to %c32 step %c1 {
      %h1 = arith.addi %h, %c1 : index
      %h2 = arith.addi %h, %c2 : index
      %cos = vector.load %table[%c0, %j, %c0] : memref<2x32x64xf32>, vector<16xf32>
      %a = vector.load %chunk[%h, %j, %c0] : memref<8x32x128xf32, strided<[524288, 128, 1], offset: ?>>, vector<16xf32>
      %b = vector.load %chunk[%h1, %j, %c0] : memref<8x32x128xf32, strided<[524288, 128, 1], offset: ?>>, vector<16xf32>
      %c = vector.load %chunk[%h2, %j, %c64] : memref<8x32x128xf32, strided<[524288, 128, 1], offset: ?>>, vector<16xf32>
      %ra = arith.mulf %a, %cos : vector<16xf32>
      %rb = arith.mulf %b, %cos : vector<16xf32>
      %rc = arith.mulf %c, %cos : vector<16xf32>
      vector.store %ra, %tile[%h, %j, %c0] : memref<8x32x128xf32>, vector<16xf32>
      vector.store %rb, %tile[%h1, %j, %c0] : memref<8x32x128xf32>, vector<16xf32>
      vector.store %rc, %tile[%h2, %j, %c0] : memref<8x32x128xf32>, vector<16xf32>
    }
  }
  return
}

// -----

// Left alone: runs only written (write prefetches hold fill buffers), a
// view whose leading stride is its rows' (one contiguous run: [T, H, D]
// visited head by head), a leading dim of one index, and a head index
// that depends on the loop's variable.
// CHECK-LABEL: func.func @runs_left_alone(
//   CHECK-NOT:   memref.prefetch
//       CHECK:   return
func.func @runs_left_alone(%k: memref<8x4096x128xf32>, %x: memref<64x8x128xf32>, %src: memref<8x32x128xf32>, %first: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %chunk = memref.subview %k[0, %first, 0] [8, 32, 128] [1, 1, 1] : memref<8x4096x128xf32> to memref<8x32x128xf32, strided<[524288, 128, 1], offset: ?>>
  %one = memref.subview %k[0, %first, 0] [1, 32, 128] [1, 1, 1] : memref<8x4096x128xf32> to memref<1x32x128xf32, strided<[524288, 128, 1], offset: ?>>
  scf.for %j = %c0 to %c32 step %c1 {
    %v = vector.load %src[%c0, %j, %c0] : memref<8x32x128xf32>, vector<16xf32>
    vector.store %v, %chunk[%c0, %j, %c0] : memref<8x32x128xf32, strided<[524288, 128, 1], offset: ?>>, vector<16xf32>
  }
  scf.for %t = %c0 to %c32 step %c1 {
    scf.for %h = %c0 to %c8 step %c1 {
      %v = vector.load %x[%t, %h, %c0] : memref<64x8x128xf32>, vector<16xf32>
      vector.store %v, %src[%c0, %h, %c0] : memref<8x32x128xf32>, vector<16xf32>
    }
  }
  scf.for %j = %c0 to %c32 step %c1 {
    %v = vector.load %one[%c0, %j, %c0] : memref<1x32x128xf32, strided<[524288, 128, 1], offset: ?>>, vector<16xf32>
    vector.store %v, %src[%c0, %j, %c0] : memref<8x32x128xf32>, vector<16xf32>
  }
  scf.for %j = %c0 to %c8 step %c1 {
    %h = arith.addi %j, %c1 : index
    %v = vector.load %chunk[%h, %j, %c0] : memref<8x32x128xf32, strided<[524288, 128, 1], offset: ?>>, vector<16xf32>
    vector.store %v, %src[%c0, %j, %c0] : memref<8x32x128xf32>, vector<16xf32>
  }
  return
}
