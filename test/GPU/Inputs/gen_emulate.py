#!/usr/bin/env python3
# Generates test/GPU/emulate.mlir's functions and inputs (fixed seed):
#   python3 test/GPU/Inputs/gen_emulate.py > body; then replace everything
#   after the header comment of emulate.mlir by it and update the CHECK count.
import random, sys
random.seed(7)
def nest(vals, shape):
    if len(shape)==1: return "[" + ", ".join(vals) + "]"
    step=len(vals)//shape[0]
    return "[" + ", ".join(nest(vals[i*step:(i+1)*step], shape[1:]) for i in range(shape[0])) + "]"
def dense(shape, kind, lo=-1, hi=1):
    n=1
    for d in shape: n*=d
    if kind=='f': vals=[f"{random.uniform(lo,hi):.6f}" for _ in range(n)]
    else: vals=[str(random.randint(lo,hi)) for _ in range(n)]
    return "dense<" + nest(vals, shape) + ">"
def t(shape, et): return "tensor<" + "x".join(map(str,shape)) + "x" + et + ">"
body=[]; funcs=[]
def case(name, xs, dt, attrs, extra, ops, inplace=False):
    xt=t(xs,dt); ft=t(xs,'f32')
    sig=[f"%x: {xt}"]+[f"{n}: {ty}" for n,ty,_ in extra]
    if not inplace: sig.append(f"%init: {xt}")
    outs = "%x" if inplace else "%init"
    funcs.append(f"func.func @{name}({', '.join(sig)}) -> {xt} {{\n  %y = rope.apply ins(%x : {xt}){ops} outs({outs} : {xt}) {{{attrs}}} -> {xt}\n  return %y : {xt}\n}}")
    body.append(f"  %{name}_x1 = arith.constant {dense(xs,'f')} : {ft}")
    if dt!='f32': body.append(f"  %{name}_x = arith.truncf %{name}_x1 : {ft} to {xt}")
    else: body.append(f"  %{name}_x = arith.addf %{name}_x1, %{name}_x1 : {xt}")
    args=[f"%{name}_x"]
    for (n_,ty,val) in extra:
        nm=f"%{name}_{n_[1:]}"
        body.append(f"  {nm} = arith.constant {val} : {ty}"); args.append(nm)
    if not inplace:
        body.append(f"  %{name}_init = tensor.empty() : {xt}"); args.append(f"%{name}_init")
    tys=[xt]+[ty for _,ty,_ in extra]+([] if inplace else [xt])
    body.append(f"  %{name}_y = call @{name}({', '.join(args)}) : ({', '.join(tys)}) -> {xt}")
    r=f"%{name}_y"
    if dt!='f32':
        body.append(f"  %{name}_yf = arith.extf %{name}_y : {xt} to {ft}"); r=f"%{name}_yf"
    body.append(f"  %{name}_u = tensor.cast {r} : {ft} to tensor<*xf32>")
    body.append(f"  call @printMemrefF32(%{name}_u) : (tensor<*xf32>) -> ()")
case("half_f32",[2,5,3,16],"f32","", [("%p",t([2,5],"i64"),dense([2,5],'i',0,1000000))], " positions(%p : tensor<2x5xi64>)")
case("inter_partial_f32",[2,5,3,16],"f32","layout = #rope.layout<interleaved>, rotary_dim = 8 : i64", [("%p",t([2,5],"i32"),dense([2,5],'i',0,70000))], " positions(%p : tensor<2x5xi32>)")
case("half_f16_rowoffset",[3,4,2,32],"f16","", [("%o",t([3],"i64"),dense([3],'i',0,5000))], " offset(%o : tensor<3xi64>)")
case("inter_bf16_bhsd",[2,3,5,16],"bf16","layout = #rope.layout<interleaved>, token_dims = array<i64: 0, 2>", [("%o","i64","123456")], " offset(%o : i64)")
case("cache_f16",[2,5,3,16],"f16","", [("%p",t([2,5],"i64"),dense([2,5],'i',0,15)),("%c",t([16,8],"f32"),dense([16,8],'f')),("%s",t([16,8],"f32"),dense([16,8],'f'))], " positions(%p : tensor<2x5xi64>) cache(%c, %s : tensor<16x8xf32>, tensor<16x8xf32>)")
case("pregathered_f32",[2,5,3,16],"f32","inverse", [("%c",t([2,5,8],"f32"),dense([2,5,8],'f')),("%s",t([2,5,8],"f32"),dense([2,5,8],'f'))], " cache(%c, %s : tensor<2x5x8xf32>, tensor<2x5x8xf32>)")
case("mrope_f32",[7,2,16],"f32","mrope = #rope.mrope<section = [4, 2, 2], interleaved = true>", [("%p",t([3,7],"i64"),dense([3,7],'i',0,4000))], " positions(%p : tensor<3x7xi64>)")
case("yarn_inplace_partial_f32",[6,2,32],"f32","rotary_dim = 16 : i64, freqs = #rope.yarn<factor = 4.0, original_max_position_embeddings = 4096>, magnitude = 1.1386294361119891 : f64", [], "", inplace=True)
case("llama3_bf16",[4,3,64],"bf16","freqs = #rope.llama3<factor = 8.0, low_freq_factor = 1.0, high_freq_factor = 4.0, original_max_position_embeddings = 8192, base = 500000.0>", [("%p",t([4],"i64"),dense([4],'i',0,100000))], " positions(%p : tensor<4xi64>)")
case("twoheads_partial_bf16",[2,3,4,5,32],"bf16","token_dims = array<i64: 0>, layout = #rope.layout<interleaved>, rotary_dim = 12 : i64", [("%p",t([2],"i64"),dense([2],'i',0,100000))], " positions(%p : tensor<2xi64>)")
case("odd_width_f16",[4,2,6],"f16","", [], "")
case("rank2_f32",[9,64],"f32","inverse", [("%o","index","1000")], " offset(%o : index)")
print("func.func private @printMemrefF32(tensor<*xf32>)\n")
print("\n\n".join(funcs))
print("\nfunc.func @main() {"); print("\n".join(body)); print("  return\n}")
