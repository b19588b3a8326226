// REQUIRES: cuda-libdevice
// RUN: rope-opt %s --rope-to-nvvm="approximate-trig=false" --mlir-print-ir-after=convert-gpu-to-nvvm --mlir-disable-threading -o /dev/null 2>&1 | FileCheck %s --check-prefix=NVVM --enable-var-scope
// RUN: rope-opt %s --rope-to-nvvm --mlir-print-ir-after=convert-gpu-to-nvvm --mlir-disable-threading -o %t.mlir 2>&1 | FileCheck %s --check-prefix=POLY --enable-var-scope
// RUN: FileCheck %s --check-prefix=HOST --enable-var-scope < %t.mlir
// RUN: %extract_ptx %t.mlir --name half_f32_kernel | FileCheck %s --check-prefix=PTX
// RUN: %extract_ptx %t.mlir --name interleaved_bf16_kernel | FileCheck %s --check-prefix=PTX2
// RUN: rope-opt %s --rope-to-nvvm="kernel-bare-ptr=true chip=sm_80" | %extract_ptx - --name half_f32_kernel | FileCheck %s --check-prefix=BARE
// RUN: rope-opt --help | FileCheck %s --check-prefix=HELP

// rope-to-nvvm: rope.apply -> gpu.launch -> outlined kernel -> NVVM (math to
// libdevice) -> PTX in a gpu.binary, host code launching it in the LLVM
// dialect. Each thread owns 4 frequencies (16-byte accesses). With
// approximate-trig=false: four cos and four sin calls (libdevice's, on f32
// angles reduced in f64), all before the head loop, and 16-byte loads and
// stores in it. By default f32 sin/cos are rope-approximate-trig's
// polynomials (as on the CPU), so no libdevice trig remains.

// POLY-LABEL: gpu.module @half_f32_kernel
//   POLY-NOT:   __nv_cosf
//   POLY-NOT:   __nv_sinf
//       POLY:   llvm.call @__nv_rint
//   POLY-NOT:   __nv_cosf
//   POLY-NOT:   __nv_sinf
//       POLY: gpu.module @interleaved_bf16_kernel

// NVVM-LABEL: gpu.module @half_f32_kernel [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
//       NVVM:   llvm.func @half_f32_kernel(
//  NVVM-SAME:     nvvm.kernel, nvvm.maxntid = array<i32: 8, 32, 1>
//       NVVM:     nvvm.read.ptx.sreg.tid.x
//       NVVM:     nvvm.read.ptx.sreg.tid.y
//       NVVM:     nvvm.read.ptx.sreg.nctaid.x
//       NVVM:     llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr -> vector<4xf64>
//       NVVM:     llvm.call @__nv_rint(%{{.*}}) : (f64) -> f64
//       NVVM:     llvm.call @__nv_fma(%{{.*}}) : (f64, f64, f64) -> f64
// NVVM-COUNT-4:   llvm.call @__nv_cosf(%{{.*}}) : (f32) -> f32
//   NVVM-NOT:     llvm.call @__nv_cosf
//       NVVM:     llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
//       NVVM:     llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
//   NVVM-NOT:     llvm.call @__nv_cosf
//   NVVM-NOT:     llvm.call @__nv_sinf
//       NVVM:     llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
//       NVVM:     llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
//   NVVM-NOT:     llvm.call @__nv_cosf
//   NVVM-NOT:     llvm.call @__nv_sinf
//       NVVM:     llvm.return
//       NVVM:   llvm.mlir.global private constant @__rope_theta

// NVVM-LABEL: gpu.module @interleaved_bf16_kernel
// NVVM-COUNT-4:   llvm.call @__nv_cosf
//   NVVM-NOT:     llvm.call @__nv_cosf
//       NVVM:     llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<8xbf16>
//       NVVM:     llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr

// HOST-LABEL: llvm.func @half_f32(
//       HOST:   gpu.launch_func @half_f32_kernel::@half_f32_kernel
//       HOST: gpu.binary @half_f32_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, {{.*}}assembly = "
//       HOST: gpu.binary @interleaved_bf16_kernel

// The PTX links libdevice (no external functions left), targets sm_90, and
// moves x in 16-byte accesses.
// PTX: .version 8.0
// PTX: .target sm_90
// PTX-NOT: .extern
// PTX: .visible .entry half_f32_kernel(
// PTX: ld.global.v4.b32
// PTX: st.global.v4.b32

// PTX2: .visible .entry interleaved_bf16_kernel(
// PTX2: ld.global.v4.b32
// PTX2: st.global.v4.b32

// kernel-bare-ptr: one pointer per buffer (positions, x, destination here).
// BARE: .target sm_80
// BARE: .visible .entry half_f32_kernel(
// BARE-NEXT: .param .u64 .ptr .align 1 half_f32_kernel_param_0,
// BARE-NEXT: .param .u64 .ptr .align 1 half_f32_kernel_param_1,
// BARE-NEXT: .param .u64 .ptr .align 1 half_f32_kernel_param_2
// BARE-NEXT: )

// HELP: --rope-to-nvvm {{ *}}- {{ *}}Lower rope IR on tensors to a GPU kernel in a gpu.binary
// HELP: --chip=<string>
// HELP: --toolkit=<string>

func.func @half_f32(%x: tensor<2x16x4x64xf32>, %p: tensor<2x16xi64>, %init: tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x16x4x64xf32>) positions(%p : tensor<2x16xi64>) outs(%init : tensor<2x16x4x64xf32>) -> tensor<2x16x4x64xf32>
  return %y : tensor<2x16x4x64xf32>
}

func.func @interleaved_bf16(%x: tensor<4x8x2x64xbf16>, %p: tensor<4x8xi64>, %init: tensor<4x8x2x64xbf16>) -> tensor<4x8x2x64xbf16> {
  %y = rope.apply ins(%x : tensor<4x8x2x64xbf16>) positions(%p : tensor<4x8xi64>) outs(%init : tensor<4x8x2x64xbf16>) {layout = #rope.layout<interleaved>} -> tensor<4x8x2x64xbf16>
  return %y : tensor<4x8x2x64xbf16>
}
