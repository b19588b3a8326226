//===- RopeAttrs.td - Rope attributes and enums -------------*- tablegen -*-===//
//
// Part of the rope-mlir project.
//
//===----------------------------------------------------------------------===//

#ifndef ROPE_DIALECT_ROPE_IR_ROPEATTRS_TD
#define ROPE_DIALECT_ROPE_IR_ROPEATTRS_TD

include "rope/Dialect/Rope/IR/RopeDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Channel layout
//===----------------------------------------------------------------------===//

def Rope_LayoutHalf : I32EnumAttrCase<"half", 0>;
def Rope_LayoutInterleaved : I32EnumAttrCase<"interleaved", 1>;

def Rope_Layout : I32EnumAttr<"Layout",
    "which channels of the head dimension form a rotated pair",
    [Rope_LayoutHalf, Rope_LayoutInterleaved]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::rope";
}

def Rope_LayoutAttr : EnumAttr<Rope_Dialect, Rope_Layout, "layout"> {
  let summary = "RoPE channel layout";
  let description = [{
    `half` (GPT-NeoX, Llama, Hugging Face `rotate_half`, ONNX
    `interleaved = 0`): pair `i` is the channels `(i, i + P/2)`.
    `interleaved` (GPT-J, RoFormer, ONNX `interleaved = 1`): pair `i` is the
    channels `(2i, 2i + 1)`.
  }];
  let assemblyFormat = "`<` $value `>`";
}

//===----------------------------------------------------------------------===//
// Frequency specifications
//===----------------------------------------------------------------------===//

def Rope_FrequencyAttrInterface : AttrInterface<"FrequencyAttrInterface"> {
  let cppNamespace = "::mlir::rope";
  let description = [{
    An attribute that says how the rotation frequencies `theta_i` of the
    `P/2` channel pairs are derived. Every frequency-scaling scheme (linear,
    NTK, YaRN, Llama-3, LongRoPE, ...) is one attribute implementing this
    interface, so `rope.apply` never changes when a scheme is added.

    A *static* scheme yields a constant table that lowerings fold into the
    IR; a dynamic one (depending on the runtime sequence length) is
    materialized by code that runs once per call.
  }];
  let methods = [
    InterfaceMethod<[{
        Checks that the scheme is well defined for rotary dimension
        `rotaryDim` (even, positive).
      }], "::llvm::LogicalResult", "verifyForRotaryDim",
      (ins "::llvm::function_ref<::mlir::InFlightDiagnostic()>":$emitError,
           "int64_t":$rotaryDim)>,
    InterfaceMethod<[{
        Returns true when the frequencies depend only on attributes.
      }], "bool", "isStatic", (ins)>,
    InterfaceMethod<[{
        Returns `theta_i` for `i` in `[0, rotaryDim/2)`, in float64. Only
        valid for static schemes.
      }], "::llvm::SmallVector<double>", "getInverseFrequencies",
      (ins "int64_t":$rotaryDim)>,
  ];
}

class Rope_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Rope_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

// A float64 attribute parameter written as a plain number (`base = 10000.0`).
class Rope_F64Parameter<string desc, string default>
    : APFloatParameter<desc> {
  let parser = "::mlir::rope::detail::parseF64($_parser)";
  let printer = "::mlir::rope::detail::printF64($_printer, $_self)";
  let defaultValue = default;
}

def Rope_DefaultFrequenciesAttr : Rope_Attr<"DefaultFrequencies", "default", [
    DeclareAttrInterfaceMethods<Rope_FrequencyAttrInterface>]> {
  let summary = "unscaled RoPE frequencies theta_i = base^(-2i/P)";
  let description = [{
    The frequencies of the original RoPE paper: `theta_i = base^(-2i/P)` for
    `i` in `[0, P/2)`, where `P` is the rotary dimension. `base` is the
    model's `rope_theta` (10000 unless stated).

    ```mlir
    #rope.default<base = 500000.0>
    ```
  }];
  let parameters = (ins Rope_F64Parameter<"rope_theta", "::llvm::APFloat(10000.0)">:$base);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // ROPE_DIALECT_ROPE_IR_ROPEATTRS_TD
