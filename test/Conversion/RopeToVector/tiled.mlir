// RUN: rope-opt %s --convert-rope-to-vector --canonicalize --cse -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --convert-rope-to-vector=tile-heads=3 --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=JAM3 --enable-var-scope
// RUN: not rope-opt %s --convert-rope-to-vector=tile-heads=0 -split-input-file 2>&1 | FileCheck %s --check-prefix=BADJAM
// RUN: rope-opt %s --convert-rope-to-vector=tile-tokens=16 --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=TOK16
// RUN: rope-opt %s --convert-rope-to-vector=num-threads=2 --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=THREADS --enable-var-scope
// RUN: not rope-opt %s --convert-rope-to-vector=tile-tokens=-1 -split-input-file 2>&1 | FileCheck %s --check-prefix=BADTOK
// RUN: not rope-opt %s --convert-rope-to-vector=tile-tokens=4097 -split-input-file 2>&1 | FileCheck %s --check-prefix=BIGTOK
// RUN: not rope-opt %s --convert-rope-to-vector=num-threads=-1 -split-input-file 2>&1 | FileCheck %s --check-prefix=BADTHREADS
// RUN: rope-opt %s --convert-rope-to-vector --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --canonicalize --cse --canonicalize -split-input-file | FileCheck %s --check-prefix=BUF --enable-var-scope

// The tiled form, for ops where a head dim precedes the last token dim (a
// token's rows are then not contiguous): the forall steps over tiles of the
// last token dim; per tile the tokens' cos/sin go into a [2, tile, P/2]
// table once (one per pair in both layouts), then the head dims before the last token dim loop outside the tile's
// tokens, the head dims after it inside; the innermost outer head dim takes
// two heads at a time (then a remainder loop), and each row reads its cos/sin
// from the table, in chunks of 16 f32 lanes (interleaved: spread over the
// chunk's lanes after the read).

// Interleaved, partial (P = 12 of D = 16), heads on both sides of the
// sequence dim ([B, H1, S, H2, D], token dims (0, 2)), dynamic H1 and S:
// tiles of 256 tokens; the table holds the P/2 cos/sin, which each row spreads
// over its P lanes (c0 c0 c1 c1 ..., -s0 s0 -s1 s1 ...); the pass-through
// channels [12, 16) are copied.

// CHECK-LABEL: func.func @interleaved_heads_both_sides(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<1x?x?x3x16xf32>, %[[P:[^:]*]]: tensor<1x?xi64>, %[[INIT:[^:]*]]: tensor<1x?x?x3x16xf32>)
//   CHECK-DAG:   %[[C256:.*]] = arith.constant 256 : index
//   CHECK-DAG:   %[[C0:.*]] = arith.constant 0 : index
//   CHECK-DAG:   %[[C1:.*]] = arith.constant 1 : index
//   CHECK-DAG:   %[[C2:.*]] = arith.constant 2 : index
//   CHECK-DAG:   %[[C3:.*]] = arith.constant 3 : index
//   CHECK-DAG:   %[[C12:.*]] = arith.constant 12 : index
//       CHECK:   %[[S:.*]] = tensor.dim %[[X]], %[[C2]] : tensor<1x?x?x3x16xf32>
//       CHECK:   scf.forall (%[[S0:.*]]) = (0) to (%[[S]]) step (256) shared_outs(%[[OUT:.*]] = %[[INIT]])
//       CHECK:     %[[LEFT:.*]] = arith.subi %[[S]], %[[S0]] : index
//       CHECK:     %[[N:.*]] = arith.minsi %[[LEFT]], %[[C256]] : index
//       CHECK:     %[[EMPTY:.*]] = tensor.empty() : tensor<2x256x6xf32>
//       CHECK:     %[[TABLE:.*]] = scf.for %[[J:.*]] = %[[C0]] to %[[N]] step %[[C1]] iter_args(%[[T:.*]] = %[[EMPTY]]) -> (tensor<2x256x6xf32>) {
//       CHECK:       %[[TOKEN:.*]] = arith.addi %[[S0]], %[[J]] : index
//       CHECK:       tensor.extract %[[P]][%[[C0]], %[[TOKEN]]] : tensor<1x?xi64>
//       CHECK:       %[[COS:.*]] = math.cos %{{.*}} : vector<6xf32>
//       CHECK:       %[[SIN:.*]] = math.sin %{{.*}} : vector<6xf32>
//       CHECK:       %[[T1:.*]] = vector.transfer_write %[[COS]], %[[T]][%[[C0]], %[[J]], %[[C0]]] {in_bounds = [true]} : vector<6xf32>, tensor<2x256x6xf32>
//       CHECK:       %[[T2:.*]] = vector.transfer_write %[[SIN]], %[[T1]][%[[C1]], %[[J]], %[[C0]]] {in_bounds = [true]} : vector<6xf32>, tensor<2x256x6xf32>
//       CHECK:       scf.yield %[[T2]]
//       CHECK:     %[[H1:.*]] = tensor.dim %[[OUT]], %[[C1]]
//       CHECK:     %[[DST:.*]] = tensor.extract_slice %[[OUT]][0, 0, %[[S0]], 0, 0] [1, %[[H1]], %[[N]], 3, 16] [1, 1, 1, 1, 1] : tensor<1x?x?x3x16xf32> to tensor<1x?x?x3x16xf32>
//       CHECK:     %[[SRC:.*]] = tensor.extract_slice %[[X]][0, 0, %[[S0]], 0, 0] [1, %{{.*}}, %[[N]], 3, 16] [1, 1, 1, 1, 1] : tensor<1x?x?x3x16xf32> to tensor<1x?x?x3x16xf32>
//       CHECK:     %[[ODD:.*]] = arith.remui %[[H1]], %[[C2]] : index
//       CHECK:     %[[EVEN:.*]] = arith.subi %[[H1]], %[[ODD]] : index
//       CHECK:     %[[PAIRS:.*]] = scf.for %[[HA:.*]] = %[[C0]] to %[[EVEN]] step %[[C2]] iter_args(%[[A1:.*]] = %[[DST]])
//       CHECK:       scf.for %[[K:.*]] = %[[C0]] to %[[N]] step %[[C1]] iter_args(%[[A2:.*]] = %[[A1]])
//       CHECK:         scf.for %[[H2:.*]] = %[[C0]] to %[[C3]] step %[[C1]] iter_args(%[[A3:.*]] = %[[A2]])
//       CHECK:           %[[XV:.*]] = vector.transfer_read %[[SRC]][%[[C0]], %[[HA]], %[[K]], %[[H2]], %[[C0]]], %{{.*}} {in_bounds = [true]} : tensor<1x?x?x3x16xf32>, vector<12xf32>
//       CHECK:           %[[CR:.*]] = vector.transfer_read %[[TABLE]][%[[C0]], %[[K]], %[[C0]]], %{{.*}} {in_bounds = [true]} : tensor<2x256x6xf32>, vector<6xf32>
//       CHECK:           %[[SR:.*]] = vector.transfer_read %[[TABLE]][%[[C1]], %[[K]], %[[C0]]], %{{.*}} {in_bounds = [true]} : tensor<2x256x6xf32>, vector<6xf32>
//       CHECK:           %[[NEG:.*]] = arith.negf %[[SR]] : vector<6xf32>
//       CHECK:           %[[CS:.*]] = vector.shuffle %[[CR]], %[[CR]] [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5] : vector<6xf32>, vector<6xf32>
//       CHECK:           %[[SS:.*]] = vector.interleave %[[NEG]], %[[SR]] : vector<6xf32> -> vector<12xf32>
//       CHECK:           %[[SWAP:.*]] = vector.shuffle %[[XV]], %[[XV]] [1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10]
//       CHECK:           %[[XC:.*]] = arith.mulf %[[XV]], %[[CS]] : vector<12xf32>
//       CHECK:           %[[Y:.*]] = math.fma %[[SWAP]], %[[SS]], %[[XC]] : vector<12xf32>
//       CHECK:           %[[W:.*]] = vector.transfer_write %[[Y]], %[[A3]][%[[C0]], %[[HA]], %[[K]], %[[H2]], %[[C0]]]
//       CHECK:           %[[PASS:.*]] = vector.transfer_read %[[SRC]][%[[C0]], %[[HA]], %[[K]], %[[H2]], %[[C12]]], %{{.*}} {in_bounds = [true]} : tensor<1x?x?x3x16xf32>, vector<4xf32>
//       CHECK:           %[[W2:.*]] = vector.transfer_write %[[PASS]], %[[W]][%[[C0]], %[[HA]], %[[K]], %[[H2]], %[[C12]]]
//       CHECK:           %[[HB:.*]] = arith.addi %[[HA]], %[[C1]] : index
//       CHECK:           vector.transfer_read %[[SRC]][%[[C0]], %[[HB]], %[[K]], %[[H2]], %[[C0]]]
//       CHECK:           vector.transfer_write %{{.*}}, %[[W2]][%[[C0]], %[[HB]], %[[K]], %[[H2]], %[[C0]]]
//       CHECK:     %[[ROWS:.*]] = scf.for %[[HR:.*]] = %[[EVEN]] to %[[H1]] step %[[C1]] iter_args(%{{.*}} = %[[PAIRS]])
//       CHECK:       scf.for %[[KR:.*]] = %[[C0]] to %[[N]] step %[[C1]]
//       CHECK:         scf.for %[[H2R:.*]] = %[[C0]] to %[[C3]] step %[[C1]]
//       CHECK:           vector.transfer_read %[[SRC]][%[[C0]], %[[HR]], %[[KR]], %[[H2R]], %[[C0]]]
//       CHECK:     tensor.parallel_insert_slice %[[ROWS]] into %[[OUT]][0, 0, %[[S0]], 0, 0] [1, %[[H1]], %[[N]], 3, 16] [1, 1, 1, 1, 1]

// tile-heads=3 (rope-to-llvm-cpu's choice): three heads' blocks at a time,
// the heads left over (H1 mod 3) one by one.
// JAM3-LABEL: func.func @interleaved_heads_both_sides(
//   JAM3-DAG:   %[[C1:.*]] = arith.constant 1 : index
//   JAM3-DAG:   %[[C2:.*]] = arith.constant 2 : index
//   JAM3-DAG:   %[[C3:.*]] = arith.constant 3 : index
// A dynamic head count: nothing runs without a head (EmptyGuard.h).
//       JAM3:   %[[HEADS:.*]] = tensor.dim %{{.*}}, %[[C1]]
//       JAM3:   %[[WORK:.*]] = arith.cmpi ne, %[[HEADS]]
//       JAM3:   scf.if %[[WORK]]
//       JAM3:     %[[H1:.*]] = tensor.dim %{{.*}}, %[[C1]]
//       JAM3:     %[[REST:.*]] = arith.remui %[[H1]], %[[C3]] : index
//       JAM3:     %[[JAMMED:.*]] = arith.subi %[[H1]], %[[REST]] : index
//       JAM3:     %[[TRIPLES:.*]] = scf.for %[[HA:.*]] = %{{.*}} to %[[JAMMED]] step %[[C3]]
//       JAM3:           arith.addi %[[HA]], %[[C1]] : index
//       JAM3:           arith.addi %[[HA]], %[[C2]] : index
//       JAM3:     scf.for %{{.*}} = %[[JAMMED]] to %[[H1]] step %[[C1]] iter_args(%{{.*}} = %[[TRIPLES]])
// BADJAM: convert-rope-to-vector: tile-heads must be >= 1, got 0
// BADTOK: convert-rope-to-vector: tile-tokens must be in [0, 4096] (0: automatic), got -1
// BIGTOK: convert-rope-to-vector: tile-tokens must be in [0, 4096] (0: automatic), got 4097
// BADTHREADS: convert-rope-to-vector: num-threads must be >= 0 (0: the OpenMP runtime's choice), got -1

// After bufferization: one table buffer per tile, the rows read from a
// subview of x and written into a subview of the destination, nothing copied.

// BUF-LABEL: func.func @interleaved_heads_both_sides(
//   BUF-NOT:   memref.copy
//       BUF:   scf.forall
//       BUF:     %[[TABLE:.*]] = memref.alloc() {{.*}} : memref<2x256x6xf32>
//       BUF:     scf.for
//       BUF:       vector.transfer_write %{{.*}}, %[[TABLE]]
//       BUF:       vector.transfer_write %{{.*}}, %[[TABLE]]
//       BUF:     %[[DST:.*]] = memref.subview
//       BUF:     %[[SRC:.*]] = memref.subview
//       BUF:     scf.for
//       BUF:       scf.for
//       BUF:         scf.for
//       BUF:           vector.transfer_read %[[SRC]]
//       BUF:           vector.transfer_read %[[TABLE]]
//       BUF:           vector.transfer_read %[[TABLE]]
//       BUF:           vector.transfer_write %{{.*}}, %[[DST]]
//   BUF-NOT:   memref.copy
//       BUF:   return
func.func @interleaved_heads_both_sides(%x: tensor<1x?x?x3x16xf32>, %p: tensor<1x?xi64>, %init: tensor<1x?x?x3x16xf32>) -> tensor<1x?x?x3x16xf32> {
  %y = rope.apply ins(%x : tensor<1x?x?x3x16xf32>) positions(%p : tensor<1x?xi64>) outs(%init : tensor<1x?x?x3x16xf32>) {layout = #rope.layout<interleaved>, rotary_dim = 12 : i64, token_dims = array<i64: 0, 2>} -> tensor<1x?x?x3x16xf32>
  return %y : tensor<1x?x?x3x16xf32>
}

// -----

// In place, bf16 data, a gathered cache at a scalar offset: the cache row (or
// NaN, for a position outside the cache) is read once per token, in the
// table loop, in word-lane order (bf16 rows: each chunk's even pairs, then
// its odd ones); the rows are read from the destination's tile itself, the
// second head's from the value the first head's writes produced (H = 4: the
// remainder loop folds away).

// CHECK-LABEL: func.func @gathered_in_place(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<2x4x?x8xbf16>, %[[O:[^:]*]]: i64, %[[COS:[^:]*]]: tensor<?x4xf32>, %[[SIN:[^:]*]]: tensor<?x4xf32>)
//       CHECK:   scf.forall (%[[B:.*]], %[[S0:.*]]) = (0, 0) to (2, %{{.*}}) step (1, 256) shared_outs(%[[OUT:.*]] = %[[X]])
//       CHECK:     %[[N:.*]] = arith.minsi
//       CHECK:     %[[TABLE:.*]] = scf.for %[[J:.*]] = %{{.*}} to %[[N]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<2x256x4xf32>) {
//       CHECK:       %[[TOKEN:.*]] = arith.addi %[[S0]], %[[J]] : index
//       CHECK:       %[[SI:.*]] = arith.index_cast %[[TOKEN]] : index to i64
//       CHECK:       %[[POS:.*]] = arith.addi %[[O]], %[[SI]] : i64
//       CHECK:       %[[CS:.*]]:2 = scf.if %{{.*}} -> (vector<4xf32>, vector<4xf32>) {
//       CHECK:         vector.transfer_read %[[COS]]
//       CHECK:         vector.transfer_read %[[SIN]]
//       CHECK:       } else {
//       CHECK:         scf.yield %[[NAN:.*]], %[[NAN]] : vector<4xf32>, vector<4xf32>
//       CHECK:       %[[CO:.*]] = vector.shuffle %[[CS]]#0, %[[CS]]#0 [0, 2, 1, 3]
//       CHECK:       %[[SO:.*]] = vector.shuffle %[[CS]]#1, %[[CS]]#1 [0, 2, 1, 3]
//       CHECK:       vector.transfer_write %[[CO]]
//       CHECK:       vector.transfer_write %[[SO]]
//       CHECK:     %[[TILE:.*]] = tensor.extract_slice %[[OUT]][%[[B]], 0, %[[S0]], 0] [1, 4, %[[N]], 8] [1, 1, 1, 1] : tensor<2x4x?x8xbf16> to tensor<1x4x?x8xbf16>
//   CHECK-NOT:     tensor.extract_slice
//       CHECK:     %[[ROWS:.*]] = scf.for %[[H:.*]] = {{.*}} iter_args(%[[A1:.*]] = %[[TILE]])
//       CHECK:       scf.for %[[K:.*]] = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[A2:.*]] = %[[A1]])
//       CHECK:         vector.transfer_read %[[A2]][%{{.*}}, %[[H]], %[[K]], %{{.*}}], {{.*}} : tensor<1x4x?x8xbf16>, vector<4xbf16>
//       CHECK:         vector.transfer_read %[[A2]][%{{.*}}, %[[H]], %[[K]], %{{.*}}], {{.*}} : tensor<1x4x?x8xbf16>, vector<4xbf16>
//       CHECK:         vector.transfer_read %[[TABLE]]
//       CHECK:         vector.transfer_read %[[TABLE]]
//       CHECK:         %[[W1:.*]] = vector.transfer_write %{{.*}}, %[[A2]]
//       CHECK:         %[[W2:.*]] = vector.transfer_write %{{.*}}, %[[W1]]
//       CHECK:         vector.transfer_read %[[W2]][%{{.*}}, %{{.*}}, %[[K]], %{{.*}}], {{.*}} : tensor<1x4x?x8xbf16>, vector<4xbf16>
//       CHECK:     tensor.parallel_insert_slice %[[ROWS]] into %[[OUT]][%[[B]], 0, %[[S0]], 0] [1, 4, %[[N]], 8] [1, 1, 1, 1]

// BUF-LABEL: func.func @gathered_in_place(
//  BUF-SAME:     %[[X:[^:]*]]: memref<2x4x?x8xbf16>
//   BUF-NOT:   memref.copy
//       BUF:   scf.forall
//       BUF:     %[[TABLE:.*]] = memref.alloc() {{.*}} : memref<2x256x4xf32>
//       BUF:     %[[TILE:.*]] = memref.subview %[[X]]
//   BUF-NOT:     memref.subview
//       BUF:         vector.transfer_read %[[TILE]]
//       BUF:         vector.transfer_write %{{.*}}, %[[TILE]]
//   BUF-NOT:   memref.copy
//       BUF:   return %[[X]]
func.func @gathered_in_place(%x: tensor<2x4x?x8xbf16>, %o: i64, %cos: tensor<?x4xf32>, %sin: tensor<?x4xf32>) -> tensor<2x4x?x8xbf16> {
  %y = rope.apply ins(%x : tensor<2x4x?x8xbf16>) offset(%o : i64) cache(%cos, %sin : tensor<?x4xf32>, tensor<?x4xf32>) outs(%x : tensor<2x4x?x8xbf16>) {token_dims = array<i64: 0, 2>} -> tensor<2x4x?x8xbf16>
  return %y : tensor<2x4x?x8xbf16>
}

// -----

// Tile length: at most 128 KiB per head block and per table, as a power of
// two within [8, 256] tokens: 2 KiB rows (D = 256 f64) give 64 tokens;
// interleaved f32 with P = D = 128 gives 256, as half does (its table holds
// one cos/sin per pair: 512 bytes per token); a static sequence shorter than the tile
// gives a tile of its own length (one tile, so canonicalization drops that
// dim of the forall).

// tile-tokens=16 asks for tiles of 16 tokens whatever the rows; a static
// sequence shorter than that is still one tile of its own length.

// TOK16-LABEL: func.func @tile_lengths(
//       TOK16:   scf.forall (%{{.*}}) = (0) to (%{{.*}}) step (16)
//       TOK16:     tensor.empty() : tensor<2x16x128xf64>
//       TOK16:   scf.forall (%{{.*}}) = (0) to (%{{.*}}) step (16)
//       TOK16:     tensor.empty() : tensor<2x16x64xf32>
//       TOK16:   scf.forall (%{{.*}}) in (2)
//       TOK16:     tensor.empty() : tensor<2x5x4xf32>

// CHECK-LABEL: func.func @tile_lengths(
//       CHECK:   scf.forall (%{{.*}}) = (0) to (%{{.*}}) step (64)
//       CHECK:     tensor.empty() : tensor<2x64x128xf64>
//       CHECK:   scf.forall (%{{.*}}) = (0) to (%{{.*}}) step (256)
//       CHECK:     tensor.empty() : tensor<2x256x64xf32>
//       CHECK:   scf.forall (%{{.*}}) in (2)
//       CHECK:     tensor.empty() : tensor<2x5x4xf32>
func.func @tile_lengths(%x: tensor<1x2x?x256xf64>, %o: i64, %z: tensor<1x2x?x128xf32>, %y: tensor<2x3x5x8xf32>) -> (tensor<1x2x?x256xf64>, tensor<1x2x?x128xf32>, tensor<2x3x5x8xf32>) {
  %a = rope.apply ins(%x : tensor<1x2x?x256xf64>) offset(%o : i64) outs(%x : tensor<1x2x?x256xf64>) {token_dims = array<i64: 0, 2>} -> tensor<1x2x?x256xf64>
  %c = rope.apply ins(%z : tensor<1x2x?x128xf32>) offset(%o : i64) outs(%z : tensor<1x2x?x128xf32>) {layout = #rope.layout<interleaved>, token_dims = array<i64: 0, 2>} -> tensor<1x2x?x128xf32>
  %b = rope.apply ins(%y : tensor<2x3x5x8xf32>) offset(%o : i64) outs(%y : tensor<2x3x5x8xf32>) {token_dims = array<i64: 0, 2>} -> tensor<2x3x5x8xf32>
  return %a, %c, %b : tensor<1x2x?x256xf64>, tensor<1x2x?x128xf32>, tensor<2x3x5x8xf32>
}

// -----

// num-threads=2: the step of the tile loop is computed at run time so that
// each of the 2 threads gets a tile where the tokens allow: per sequence
// ceil(2 / B) tiles, their length ceil(S / that) rounded up to a multiple of
// 8 and kept within [32, the tile length] (64 for these f64 rows, 256 for
// f32); with B = 2 one tile per sequence suffices. The table stays as long
// as the longest tile, and each tile rotates min(step, S - start) tokens. A
// static sequence no longer than 32 tokens keeps its static step.

// THREADS-LABEL: func.func @threaded_tiles(
//  THREADS-SAME:     %[[X:[^:]*]]: tensor<1x2x?x256xf64>, %{{[^:]*}}: i64, %[[Z:[^:]*]]: tensor<2x2x?x128xf32>
//   THREADS-DAG:   %[[C2:.*]] = arith.constant 2 : index
//   THREADS-DAG:   %[[C8:.*]] = arith.constant 8 : index
//   THREADS-DAG:   %[[C32:.*]] = arith.constant 32 : index
//   THREADS-DAG:   %[[C64:.*]] = arith.constant 64 : index
//   THREADS-DAG:   %[[C256:.*]] = arith.constant 256 : index
//       THREADS:   %[[S:.*]] = tensor.dim %[[X]], %[[C2]]
//       THREADS:   %[[PER:.*]] = arith.ceildivui %[[S]], %[[C2]] : index
//       THREADS:   %[[EIGHTS:.*]] = arith.ceildivui %[[PER]], %[[C8]] : index
//       THREADS:   %[[ROUND:.*]] = arith.muli %[[EIGHTS]], %[[C8]] : index
//       THREADS:   %[[SHORT:.*]] = arith.minui %[[ROUND]], %[[C64]] : index
//       THREADS:   %[[STEP:.*]] = arith.maxui %[[SHORT]], %[[C32]] : index
//       THREADS:   scf.forall (%[[S0:.*]]) = (0) to (%[[S]]) step (%[[STEP]])
//       THREADS:     %[[LEFT:.*]] = arith.subi %[[S]], %[[S0]] : index
//       THREADS:     arith.minsi %[[STEP]], %[[LEFT]] : index
//       THREADS:     tensor.empty() : tensor<2x64x128xf64>
//       THREADS:   %[[S2:.*]] = tensor.dim %[[Z]], %[[C2]]
//       THREADS:   %[[EIGHTS2:.*]] = arith.ceildivui %[[S2]], %[[C8]] : index
//       THREADS:   %[[ROUND2:.*]] = arith.muli %[[EIGHTS2]], %[[C8]] : index
//       THREADS:   %[[SHORT2:.*]] = arith.minui %[[ROUND2]], %[[C256]] : index
//       THREADS:   %[[STEP2:.*]] = arith.maxui %[[SHORT2]], %[[C32]] : index
//       THREADS:   scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (2, %[[S2]]) step (1, %[[STEP2]])
//       THREADS:     tensor.empty() : tensor<2x256x64xf32>
//       THREADS:   scf.forall (%{{.*}}) in (2)
//       THREADS:     tensor.empty() : tensor<2x5x4xf32>
func.func @threaded_tiles(%x: tensor<1x2x?x256xf64>, %o: i64, %z: tensor<2x2x?x128xf32>, %y: tensor<2x3x5x8xf32>) -> (tensor<1x2x?x256xf64>, tensor<2x2x?x128xf32>, tensor<2x3x5x8xf32>) {
  %a = rope.apply ins(%x : tensor<1x2x?x256xf64>) offset(%o : i64) outs(%x : tensor<1x2x?x256xf64>) {token_dims = array<i64: 0, 2>} -> tensor<1x2x?x256xf64>
  %c = rope.apply ins(%z : tensor<2x2x?x128xf32>) offset(%o : i64) outs(%z : tensor<2x2x?x128xf32>) {layout = #rope.layout<interleaved>, token_dims = array<i64: 0, 2>} -> tensor<2x2x?x128xf32>
  %b = rope.apply ins(%y : tensor<2x3x5x8xf32>) offset(%o : i64) outs(%y : tensor<2x3x5x8xf32>) {token_dims = array<i64: 0, 2>} -> tensor<2x3x5x8xf32>
  return %a, %c, %b : tensor<1x2x?x256xf64>, tensor<2x2x?x128xf32>, tensor<2x3x5x8xf32>
}
