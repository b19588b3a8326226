// What the CPU pipeline hands LLVM for a whole model (issue 33: compile
// time), on the zoo's 2-layer Llama prefill (torch-mlir, weights as
// dense_resource constants).
// RUN: rope-opt %S/../Frontends/Inputs/zoo/llama_prefill.mlir \
// RUN:   --pass-pipeline="builtin.module(rope-optimize, rope-to-llvm-cpu{emit-c-interface=true runtime-traps=true})" \
// RUN:   -o %t.mlir
// RUN: FileCheck %s --check-prefix=WIDE --input-file=%t.mlir
// RUN: FileCheck %s --check-prefix=LOOPS --input-file=%t.mlir
// RUN: mlir-translate --mlir-to-llvmir %t.mlir | FileCheck %s --check-prefix=IR

// No vector wider than 16 lanes (two AVX2 registers of f32): a row of 64 or
// 128 lanes (the hidden and MLP widths, vectorized whole) is 8 or 16
// registers per value, which the code generator splits and spills; an exp
// polynomial on such rows spilled most of its values to the stack.
// WIDE-NOT: vector<{{(1[7-9]|[2-9][0-9]|[1-9][0-9][0-9]+)}}x

// The loops of vector code reach LLVM as loops that it must not unroll
// (their static trip counts made LLVM unroll them into basic blocks of
// thousands of instructions, and llc spend seconds scheduling them).
// LOOPS: #[[KEEP:.*]] = #llvm.loop_annotation<unroll = #{{.*}}>
// LOOPS: llvm.func @main(
// LOOPS-COUNT-100: llvm.br {{.*}} {loop_annotation = #[[KEEP]]}
// IR: define {{.*}} @main(
// IR-COUNT-100: br label %{{.*}}, !llvm.loop !{{[0-9]+}}
// IR: !{!"llvm.loop.unroll.disable"}
