// RUN: rope-opt %s --pass-pipeline="builtin.module(rope-to-llvm-cpu)" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s
// RUN: rope-opt %s --pass-pipeline="builtin.module(rope-to-llvm-cpu{tile-heads=2 tile-tokens=64 num-threads=3 vector-bytes=0 prefetch-rows=0 contraction-vector-bits=512 contraction-rows=6 contraction-vectors-per-row=3 contraction-columns=2 contraction-slab-bytes=0 contraction-bf16-products=avx512-dot contraction-prefetch-rows=8 contraction-row-accumulators=20 elementwise-max-lanes=32 outline-max-ops=0 angle=turns})" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=SET
// RUN: not rope-opt %s --pass-pipeline="builtin.module(rope-to-llvm-cpu{tile-heads=0})" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: rope-opt %s --pass-pipeline="builtin.module(rope-to-llvm-cpu{contraction-bf16-products=amx})" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=AMX
// RUN: rope-opt %s --pass-pipeline="builtin.module(rope-to-llvm-cpu{contraction-bf16-products=amx emulate-bf16-products=true})" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=EMULATED

// rope-to-llvm-cpu's choices for the vector form, passed to
// convert-rope-to-vector: rows in 32-byte chunks, the tiled form
// ([B, H, S, D]) four heads at a time in tiles of the pass's length
// (docs/DESIGN.md: measured on AMD EPYC from the last-level cache and from
// memory); all are options, and the pipeline's threads are the pass's (its
// tiles shortened at run time to give each thread one).
// The angle in f64 unless asked (angle=turns: no float wider than f32).
// CHECK: convert-rope-to-vector{angle=f64 num-threads=1 tile-heads=4 tile-tokens=0 vector-bytes=32}
// Rows apart in memory (MLA's q) prefetched 16 rows ahead, after
// bufferization.
// CHECK: rope-prefetch-strided-rows{distance=16 line-bytes=64}
// Vectors of the other ops no wider than two AVX2 registers: register
// tiles of 256-bit vectors, elementwise rows in vectors of at most 16 lanes
// (wider ones are split and spilled by the code generator); the loops of
// vector code are then kept as loops in LLVM, and a body of more than 2000
// operations is given to LLVM in chunks of about that many (issue 33:
// compile time).
// Blocks of output columns whose slab of the vector operand is 16 KiB (an
// L1 data cache holds it next to the tile's rows).
// bf16 products widened to f32 FMAs unless asked (any target), and no
// x86vector lowering then. A decode step's streamed K and V rows
// prefetched 32 rows ahead.
// CHECK: rope-vectorize-contractions{bf16-products=fma columns=4 prefetch-rows=32 row-accumulators=0 rows=4 slab-bytes=16384 vector-bits=256 vectors-per-row=2}
// CHECK: rope-vectorize-elementwise{max-lanes=16}
// CHECK: convert-vector-to-scf
// CHECK-NEXT: rope-keep-vector-loops
// CHECK-NEXT: rope-outline-chunks{max-ops=2000}
// CHECK-NEXT: convert-scf-to-cf
// CHECK: convert-vector-to-llvm{{.*}}enable-x86vector=false
// SET: convert-rope-to-vector{angle=turns num-threads=3 tile-heads=2 tile-tokens=64 vector-bytes=0}
// SET-NOT: rope-prefetch-strided-rows
// SET: rope-vectorize-contractions{bf16-products=avx512-dot columns=2 prefetch-rows=8 row-accumulators=20 rows=6 slab-bytes=0 vector-bits=512 vectors-per-row=3}
// SET: rope-vectorize-elementwise{max-lanes=32}
// SET-NOT: rope-outline-chunks
// SET: convert-vector-to-llvm{{.*}}enable-x86vector=true
// BAD: convert-rope-to-vector: tile-heads must be >= 1, got 0
// AMX tiles (and vdpbf16ps where no whole tile fits) lowered to their
// intrinsics; emulated, rewritten into vector ops right after the tiles are
// made, and neither intrinsic set enabled.
// AMX: rope-vectorize-contractions{bf16-products=amx
// AMX-NOT: rope-emulate-bf16-products
// AMX: convert-vector-to-llvm{{.*}}enable-amx=true{{.*}}enable-x86vector=true
// EMULATED: rope-vectorize-contractions{bf16-products=amx
// EMULATED: rope-emulate-bf16-products
// EMULATED: convert-vector-to-llvm{{.*}}enable-amx=false{{.*}}enable-x86vector=false
func.func @f() {
  return
}
