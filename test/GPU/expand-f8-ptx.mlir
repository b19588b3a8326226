// RUN: rope-opt %s --rope-to-nvvm="chip=sm_90" --mlir-print-ir-after=convert-gpu-to-nvvm --mlir-disable-threading -o %t.mlir 2>&1 | FileCheck %s --check-prefix=NVVM
// RUN: %extract_ptx %t.mlir --name quantize_kernel -o %t.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}

// rope-to-nvvm expands f32 -> fp8 rounding (rope-expand-f8) before the
// conversion to LLVM, which would otherwise leave the truncations behind an
// unrealized cast: the kernel stores bytes computed with integer ops and one
// f32 add that rounds to nearest (add.rn, no flush to zero), from sm_80 on
// (PTX's cvt.rn.satfinite to fp8 needs sm_89 and saturates).

// NVVM-LABEL: llvm.func @quantize_kernel
// NVVM-NOT:     unrealized_conversion_cast
// NVVM:         llvm.intr.umin(%{{.*}}) : (i32, i32) -> i32
// NVVM:         llvm.store %{{.*}} : i8, !llvm.ptr
// NVVM:         llvm.intr.umin(%{{.*}}) : (i32, i32) -> i32
// NVVM:         llvm.store %{{.*}} : i8, !llvm.ptr
// PTX-LABEL: .entry quantize_kernel
// PTX:         min.u32 {{.*}}, 127;
// PTX:         add.rn.f32 {{.*}}, 0f46800000;
// PTX:         st.global.b8
// PTX:         min.u32 {{.*}}, 124;
// PTX:         add.rn.f32 {{.*}}, 0f43000000;
// PTX:         st.global.b8
func.func @quantize(%x: memref<256xf32>, %y: memref<256xf8E4M3FN>,
                    %z: memref<256xf8E5M2>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<256xf32>
    %q = arith.truncf %v : f32 to f8E4M3FN
    memref.store %q, %y[%tx] : memref<256xf8E4M3FN>
    %r = arith.truncf %v : f32 to f8E5M2
    memref.store %r, %z[%tx] : memref<256xf8E5M2>
    gpu.terminator
  }
  return
}
