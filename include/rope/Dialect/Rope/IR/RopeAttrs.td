//===- RopeAttrs.td - Rope attributes and enums ------------*- tablegen -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
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
    `P/2` channel pairs are derived (`SEMANTICS.md` §4). Every frequency-scaling
    scheme (linear, NTK, dynamic NTK, YaRN, Llama-3, LongRoPE, proportional)
    is one attribute implementing this interface, so `rope.apply` never
    changes when a scheme is added.

    A *static* scheme yields a constant table that lowerings fold into the
    IR; a dynamic one depends on the runtime length `l` (max position + 1
    over the call) and is materialized by code that runs once per call.
  }];
  let methods = [
    InterfaceMethod<[{
        Checks that the scheme is well defined for rotary dimension
        `rotaryDim` (even, positive).
      }], "::llvm::LogicalResult", "verifyForRotaryDim",
      (ins "::llvm::function_ref<::mlir::InFlightDiagnostic()>":$emitError,
           "int64_t":$rotaryDim), "", [{ return ::mlir::success(); }]>,
    StaticInterfaceMethod<[{
        Returns true when the scheme is defined over the whole head, so the
        op's `rotary_dim` must equal the head dimension (`proportional`
        expresses partial rotation through zero frequencies instead). A
        property of the scheme, not of its parameters: the Hugging Face
        importer asks it before building the attribute.
      }], "bool", "requiresFullRotation", (ins), "", [{ return false; }]>,
    InterfaceMethod<[{
        Returns true when the frequencies depend only on attributes (the
        default), false when they depend on the call's runtime length.
      }], "bool", "isStatic", (ins), "", [{ return true; }]>,
    InterfaceMethod<[{
        Returns `theta_i` for `i` in `[0, rotaryDim/2)`, in float64. For a
        dynamic scheme, the frequencies of a call whose runtime length does
        not exceed the configured one.
      }], "::llvm::SmallVector<double>", "getInverseFrequencies",
      (ins "int64_t":$rotaryDim)>,
    InterfaceMethod<[{
        The magnitude factor `a` the scheme defines (YaRN's attention factor,
        LongRoPE's scaling), or none for schemes that define no magnitude.
        `rope.apply` states `a` explicitly in its `magnitude` attribute; the
        verifier checks that the two agree.
      }], "::std::optional<double>", "getImpliedMagnitude", (ins), "",
      [{ return std::nullopt; }]>,
    InterfaceMethod<[{
        The per-call part of a dynamic scheme, built once before any loop:
        from the call's runtime length `length` (an `i64`: max position + 1),
        the value `buildInverseFrequencyAt` needs (dynamic NTK: the exponent
        scale; LongRoPE: whether the long factors apply). Null for static
        schemes (the default).
      }], "::mlir::Value", "buildFrequencyState",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Location":$loc,
           "::mlir::Value":$length, "int64_t":$rotaryDim), "",
      [{ return ::mlir::Value(); }]>,
    InterfaceMethod<[{
        Builds `theta_i` in f64 inside any loop body, for the pair index
        `index` (an `index` value): a scalar when `lanes` is 0, else a
        `vector<lanes x f64>` of pairs `index .. index + lanes - 1`. `state`
        is `buildFrequencyState`'s value (null for static schemes).
        `readTable` reads a constant per-pair table (P/2 values) at
        `index` (`lanes` as above); each lowering supplies how (a
        `tensor.extract` of a constant, a `memref.global` on the GPU). The
        default, for static schemes, reads `getInverseFrequencies` through
        it, so every lowering sees the same f64 values.
      }], "::mlir::Value", "buildInverseFrequencyAt",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Location":$loc,
           "::mlir::Value":$state, "::mlir::Value":$index, "int64_t":$lanes,
           "int64_t":$rotaryDim,
           "::mlir::rope::FrequencyTableReader":$readTable), "",
      [{
        return readTable(builder, loc,
                         $_attr.getInverseFrequencies(rotaryDim), index,
                         lanes);
      }]>,
    InterfaceMethod<[{
        Whether the scheme's frequencies have phase steps
        (`AngleMethod::Turns`: theta_i / 2pi as a fraction of a turn in
        i64, built with no float wider than f32). The default: yes.
      }], "bool", "hasPhaseSteps", (ins), "", [{ return true; }]>,
    InterfaceMethod<[{
        `buildFrequencyState` for phase steps: the per-call value
        `buildPhaseStepAt` needs, with no float wider than f32. The default,
        for schemes whose thetas are constant tables (at most one picked per
        call), is `buildFrequencyState` itself.
      }], "::mlir::Value", "buildPhaseStepState",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Location":$loc,
           "::mlir::Value":$length, "int64_t":$rotaryDim), "",
      [{
        return ::llvm::cast<::mlir::rope::FrequencyAttrInterface>($_attr)
            .buildFrequencyState(builder, loc, length, rotaryDim);
      }]>,
    InterfaceMethod<[{
        `buildInverseFrequencyAt` for phase steps: the i64 phase step of
        pair `index` (`lanes` as there), `state` from `buildPhaseStepState`.
        `readTable` turns each constant table of thetas it is given into
        their phase steps. The default reads the scheme's tables through it.
      }], "::mlir::Value", "buildPhaseStepAt",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Location":$loc,
           "::mlir::Value":$state, "::mlir::Value":$index, "int64_t":$lanes,
           "int64_t":$rotaryDim,
           "::mlir::rope::FrequencyTableReader":$readTable), "",
      [{
        return ::llvm::cast<::mlir::rope::FrequencyAttrInterface>($_attr)
            .buildInverseFrequencyAt(builder, loc, state, index, lanes,
                                     rotaryDim, readTable);
      }]>,
    InterfaceMethod<[{
        Builds a `tensor<rotaryDim/2 x f64>` holding `theta_i` at `loc`.
        `length` is the call's runtime length as an `i64` (max position + 1);
        static schemes ignore it and yield a constant. The default builds a
        dynamic scheme's table from `buildFrequencyState` and
        `buildInverseFrequencyAt` (one `linalg.generic` over the pairs);
        a scheme may override it with something cheaper.
      }], "::mlir::Value", "materializeInverseFrequencies",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Location":$loc,
           "::mlir::Value":$length, "int64_t":$rotaryDim), "",
      [{
        auto self = ::llvm::cast<::mlir::rope::FrequencyAttrInterface>(
            $_attr);
        if (self.isStatic())
          return ::mlir::rope::detail::buildConstantFrequencyTable(
              builder, loc, self.getInverseFrequencies(rotaryDim));
        return ::mlir::rope::detail::buildFrequencyTableFromElements(
            builder, loc, self, length, rotaryDim);
      }]>,
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

// A float64 parameter that may be absent (printed only when present).
class Rope_OptionalF64Parameter<string desc>
    : OptionalParameter<"::std::optional<::llvm::APFloat>", desc> {
  let parser = "::mlir::rope::detail::parseOptionalF64($_parser)";
  let printer = "::mlir::rope::detail::printF64($_printer, *$_self)";
}

// `true` / `false`.
class Rope_BoolParameter<string desc, string default>
    : AttrOrTypeParameter<"bool", desc> {
  let parser = "::mlir::rope::detail::parseBool($_parser)";
  let printer = "$_printer << ($_self ? \"true\" : \"false\")";
  let defaultValue = default;
}

// A list of float64 written `[1.0, 1.25]`, each printed exactly.
class Rope_F64ArrayParameter<string desc>
    : AttrOrTypeParameter<"::mlir::DenseF64ArrayAttr", desc> {
  let parser = "::mlir::rope::detail::parseF64Array($_parser)";
  let printer = "::mlir::rope::detail::printF64Array($_printer, $_self)";
}

class Rope_PositiveIntParameter<string desc>
    : AttrOrTypeParameter<"int64_t", desc>;

// The `rope_theta` every scheme starts from.
defvar Rope_BaseParameter =
    Rope_F64Parameter<"rope_theta", "::llvm::APFloat(10000.0)">;

// A key of a Hugging Face `rope_scaling` dict and the JSON type its value
// must have (an `::mlir::rope::HFKeyKind` enumerator, HFConfigReader.h).
class Rope_HFKey<string keyName, string keyKind> {
  string name = keyName;
  string kind = keyKind;
}
class Rope_HFFloatKey<string keyName> : Rope_HFKey<keyName, "Float">;
class Rope_HFPositiveIntKey<string keyName>
    : Rope_HFKey<keyName, "PositiveInt">;
class Rope_HFBoolKey<string keyName> : Rope_HFKey<keyName, "Bool">;
class Rope_HFFloatArrayKey<string keyName>
    : Rope_HFKey<keyName, "FloatArray">;

// A frequency scheme: an attribute implementing the interface, with the
// parameters in Hugging Face's spelling, verified on its own (genVerifyDecl)
// and against the op's rotary dimension (verifyForRotaryDim).
//
// A scheme Hugging Face names sets `hfRopeTypes` (the `rope_type` values that
// select it: its name, then legacy aliases) and `hfKeys` (the `rope_scaling`
// keys it reads, in the order their types are checked), and implements
// `buildFromHF` beside its other methods. The importer
// (lib/Interop/HuggingFace.cpp) finds schemes through these declarations, so
// adding one edits no list there. `hfRopeTypes = []` (the default) is a scheme
// Hugging Face has no name for.
class Rope_FrequencyAttr<string name, string attrMnemonic,
                         list<string> overridden = []>
    : Rope_Attr<name, attrMnemonic, [
        DeclareAttrInterfaceMethods<Rope_FrequencyAttrInterface,
                                    overridden>]> {
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;

  list<string> hfRopeTypes = [];
  list<Rope_HFKey> hfKeys = [];
  // The two lists as C++ initializers.
  string hfRopeTypesCpp =
      !interleave(!foreach(n, hfRopeTypes, "\"" # n # "\""), ", ");
  string hfKeysCpp = !interleave(!foreach(k, hfKeys,
      "{\"" # k.name # "\", ::mlir::rope::HFKeyKind::" # k.kind # "}"), ", ");
  let extraClassDeclaration = !if(!empty(hfRopeTypes), "", [{
    /// The Hugging Face `rope_type` values that select this scheme (its
    /// name first, then legacy aliases).
    static ::llvm::ArrayRef<::llvm::StringLiteral> getHFRopeTypes() {
      static constexpr ::llvm::StringLiteral names[] = {}] # hfRopeTypesCpp
      # [{};
      return names;
    }
    /// The `rope_scaling` keys this scheme reads, with their types.
    static ::llvm::ArrayRef<::mlir::rope::HFKey> getHFKeys() {
      }] # !if(!empty(hfKeys), "return {};",
               "static constexpr ::mlir::rope::HFKey keys[] = {" # hfKeysCpp
               # "};\n      return keys;") # [{
    }
    /// Builds the attribute from a Hugging Face `rope_scaling` dict (its
    /// `hfKeys`, already type-checked). Returns null after `reader.fail` or
    /// a diagnostic through `reader.emitError` (`getChecked`).
    static ::mlir::rope::FrequencyAttrInterface
    buildFromHF(::mlir::rope::HFConfigReader &reader);
  }]);
}

def Rope_DefaultFrequenciesAttr
    : Rope_FrequencyAttr<"DefaultFrequencies", "default"> {
  let summary = "unscaled RoPE frequencies theta_i = base^(-2i/P)";
  let description = [{
    The frequencies of the original RoPE paper: `theta_i = base^(-2i/P)` for
    `i` in `[0, P/2)`, where `P` is the rotary dimension. `base` is the
    model's `rope_theta` (10000 unless stated).

    ```mlir
    #rope.default<base = 500000.0>
    ```
  }];
  let parameters = (ins Rope_BaseParameter:$base);
  // Qwen2-VL's {"type": "mrope"}: Hugging Face treats it as "default"; the
  // section split is a separate attribute (#rope.mrope).
  let hfRopeTypes = ["default", "mrope"];
  let hfKeys = [Rope_HFFloatKey<"factor">];
}

def Rope_LinearFrequenciesAttr
    : Rope_FrequencyAttr<"LinearFrequencies", "linear"> {
  let summary = "position interpolation: theta_i / factor";
  let description = [{
    Linear scaling (position interpolation, Hugging Face `rope_type =
    "linear"`): `theta'_i = base^(-2i/P) / factor`. Static.

    ```mlir
    #rope.linear<base = 10000.0, factor = 4.0>
    ```
  }];
  let parameters = (ins Rope_BaseParameter:$base,
                        Rope_F64Parameter<"s > 0", "::llvm::APFloat(1.0)">:$factor);
  let hfRopeTypes = ["linear"];
  let hfKeys = [Rope_HFFloatKey<"factor">];
}

def Rope_NtkFrequenciesAttr : Rope_FrequencyAttr<"NtkFrequencies", "ntk",
                                               ["verifyForRotaryDim"]> {
  let summary = "static NTK-aware scaling: base' = base * factor^(P/(P-2))";
  let description = [{
    Static NTK-aware interpolation: the base is raised to
    `base' = base * factor^(P/(P-2))` and `theta'_i = base'^(-2i/P)`.
    Undefined for `P = 2` (a verifier error). Static.

    ```mlir
    #rope.ntk<base = 10000.0, factor = 8.0>
    ```
  }];
  let parameters = (ins Rope_BaseParameter:$base,
                        Rope_F64Parameter<"s > 0", "::llvm::APFloat(1.0)">:$factor);
  let hfRopeTypes = ["ntk"];
  let hfKeys = [Rope_HFFloatKey<"factor">];
}

def Rope_DynamicNtkFrequenciesAttr
    : Rope_FrequencyAttr<"DynamicNtkFrequencies", "dynamic_ntk",
                         ["verifyForRotaryDim", "isStatic",
                          "buildFrequencyState",
                          "buildInverseFrequencyAt", "hasPhaseSteps",
                          "buildPhaseStepState", "buildPhaseStepAt"]> {
  let summary = "dynamic NTK scaling (Hugging Face `dynamic`), per call";
  let description = [{
    Hugging Face's dynamic NTK: with the call's runtime length `l` (max
    position + 1 over the call's positions) and
    `M = max_position_embeddings` (the importer reads
    `original_max_position_embeddings` only from a config without it, as
    transformers 5.25 does),
    `L' = max(l, M)` and

        base' = base * ((factor * L' / M) - (factor - 1))^(P/(P-2))
        theta'_i = base'^(-2i/P)

    so calls no longer than `M` use the unscaled frequencies. Dynamic: the
    lowering computes the `P/2` frequencies once per call, in f64, or with
    `angle=turns` their phase steps in fixed point (i64 only:
    `theta'_i = theta_i * w^i`, `w = r^(-2/(P-2))`,
    `r = 1 + factor * (L' - M) / M`, log2 and 2^x digit by digit; needs
    `base >= 1`). Undefined for `P = 2`.

    ```mlir
    #rope.dynamic_ntk<base = 10000.0, factor = 2.0, max_position_embeddings = 4096>
    ```
  }];
  let parameters = (ins Rope_BaseParameter:$base,
                        Rope_F64Parameter<"s > 0", "::llvm::APFloat(1.0)">:$factor,
                        Rope_PositiveIntParameter<"M">:$max_position_embeddings);
  let hfRopeTypes = ["dynamic"];
  let hfKeys = [Rope_HFFloatKey<"factor">,
                Rope_HFPositiveIntKey<"original_max_position_embeddings">,
                Rope_HFPositiveIntKey<"max_position_embeddings">];
}

def Rope_YarnFrequenciesAttr
    : Rope_FrequencyAttr<"YarnFrequencies", "yarn", ["getImpliedMagnitude"]> {
  let summary = "YaRN: NTK-by-parts interpolation with an attention factor";
  let description = [{
    YaRN (`SEMANTICS.md` §4). With `L = original_max_position_embeddings` and
    `cd(r) = P * ln(L / (2 pi r)) / (2 ln base)`: `low = floor(cd(beta_fast))`,
    `high = ceil(cd(beta_slow))` (no rounding when `truncate = false`), both
    clamped to `[0, P-1]` (`high += 0.001` when equal),
    `ramp_i = clamp((i - low) / (high - low), 0, 1)` and

        theta'_i = (theta_i / factor) * ramp_i + theta_i * (1 - ramp_i)

    The magnitude is `attention_factor` when given, else
    `g(factor, mscale) / g(factor, mscale_all_dim)` when both are given
    (DeepSeek), else `g(factor)`, with `g(s, m) = 0.1 m ln s + 1` (1 when
    `s <= 1`). The op's `magnitude` must state that value. Static.

    ```mlir
    #rope.yarn<base = 1000000.0, factor = 4.0,
               original_max_position_embeddings = 32768>
    ```
  }];
  let parameters = (ins
    Rope_BaseParameter:$base,
    Rope_F64Parameter<"s > 0", "::llvm::APFloat(1.0)">:$factor,
    Rope_PositiveIntParameter<"L">:$original_max_position_embeddings,
    Rope_F64Parameter<"beta_fast > beta_slow", "::llvm::APFloat(32.0)">:$beta_fast,
    Rope_F64Parameter<"beta_slow > 0", "::llvm::APFloat(1.0)">:$beta_slow,
    Rope_BoolParameter<"round low/high to integers", "true">:$truncate,
    Rope_OptionalF64Parameter<"explicit magnitude">:$attention_factor,
    Rope_OptionalF64Parameter<"DeepSeek mscale">:$mscale,
    Rope_OptionalF64Parameter<"DeepSeek mscale_all_dim">:$mscale_all_dim
  );
  let hfRopeTypes = ["yarn"];
  let hfKeys = [Rope_HFFloatKey<"factor">,
                Rope_HFPositiveIntKey<"original_max_position_embeddings">,
                Rope_HFPositiveIntKey<"max_position_embeddings">,
                Rope_HFFloatKey<"attention_factor">,
                Rope_HFFloatKey<"beta_fast">, Rope_HFFloatKey<"beta_slow">,
                Rope_HFFloatKey<"mscale">, Rope_HFFloatKey<"mscale_all_dim">,
                Rope_HFBoolKey<"truncate">];
}

def Rope_Llama3FrequenciesAttr
    : Rope_FrequencyAttr<"Llama3Frequencies", "llama3"> {
  let summary = "Llama 3.1 wavelength-banded scaling";
  let description = [{
    Llama 3.1's scheme: with `lambda_i = 2 pi / theta_i`,
    `L = original_max_position_embeddings`, frequencies whose wavelength is
    below `L / high_freq_factor` are kept, those above
    `L / low_freq_factor` are divided by `factor`, and the band between is
    interpolated with `mu = (L / lambda_i - low) / (high - low)`:
    `theta'_i = (1 - mu) theta_i / factor + mu theta_i`. Defaults are Llama
    3.1's. Static.

    ```mlir
    #rope.llama3<base = 500000.0, factor = 8.0>
    ```
  }];
  let parameters = (ins
    Rope_BaseParameter:$base,
    Rope_F64Parameter<"s > 0", "::llvm::APFloat(8.0)">:$factor,
    Rope_F64Parameter<"0 < low_freq_factor", "::llvm::APFloat(1.0)">:$low_freq_factor,
    Rope_F64Parameter<"low_freq_factor < high_freq_factor", "::llvm::APFloat(4.0)">:$high_freq_factor,
    DefaultValuedParameter<"int64_t", "8192", "L">:$original_max_position_embeddings
  );
  let hfRopeTypes = ["llama3"];
  let hfKeys = [Rope_HFFloatKey<"factor">, Rope_HFFloatKey<"low_freq_factor">,
                Rope_HFFloatKey<"high_freq_factor">,
                Rope_HFPositiveIntKey<"original_max_position_embeddings">];
}

def Rope_LongRopeFrequenciesAttr
    : Rope_FrequencyAttr<"LongRopeFrequencies", "longrope", [
        "verifyForRotaryDim", "isStatic", "getImpliedMagnitude",
        "buildFrequencyState", "buildInverseFrequencyAt",
        "materializeInverseFrequencies"]> {
  let summary = "LongRoPE (Phi-3): per-frequency factors switched on length";
  let description = [{
    LongRoPE: `theta'_i = theta_i / ext_i` with `ext = long_factor` when the
    call's runtime length (max position + 1) exceeds
    `L = original_max_position_embeddings`, else `short_factor`; both have
    `P/2` positive entries. Dynamic: the lowering selects the table once per
    call.

    The magnitude is `attention_factor` when given, else
    `sqrt(1 + ln s / ln L)` for `s = factor > 1` (the importer sets
    `factor = max_position_embeddings / L` when the config has no factor),
    else 1. The op's `magnitude` must state that value.

    ```mlir
    #rope.longrope<base = 10000.0,
                   short_factor = [1.0, 1.5],
                   long_factor = [2.0, 4.0],
                   original_max_position_embeddings = 4096, factor = 32.0>
    ```
  }];
  let parameters = (ins
    Rope_BaseParameter:$base,
    Rope_F64ArrayParameter<"ext_i when l <= L">:$short_factor,
    Rope_F64ArrayParameter<"ext_i when l > L">:$long_factor,
    Rope_PositiveIntParameter<"L">:$original_max_position_embeddings,
    Rope_OptionalF64Parameter<"s = M / L">:$factor,
    Rope_OptionalF64Parameter<"explicit magnitude">:$attention_factor
  );
  // The first Phi-3 128k configs called LongRoPE "su".
  let hfRopeTypes = ["longrope", "su"];
  let hfKeys = [Rope_HFFloatArrayKey<"short_factor">,
                Rope_HFFloatArrayKey<"long_factor">,
                Rope_HFPositiveIntKey<"original_max_position_embeddings">,
                Rope_HFPositiveIntKey<"max_position_embeddings">,
                Rope_HFFloatKey<"factor">,
                Rope_HFFloatKey<"attention_factor">];
}

def Rope_ProportionalFrequenciesAttr
    : Rope_FrequencyAttr<"ProportionalFrequencies", "proportional",
                         ["requiresFullRotation"]> {
  let summary = "partial rotation by frequency (Hugging Face `proportional`)";
  let description = [{
    Hugging Face's `proportional` partial rotary: the whole head is rotated
    (`P = D`) but only the first `k = int(partial_rotary_factor * P / 2)`
    frequencies are nonzero: `theta_i = base^(-2i/P) / factor` for `i < k`,
    0 (an identity pair) otherwise. Static.

    ```mlir
    #rope.proportional<base = 10000.0, partial_rotary_factor = 0.25>
    ```
  }];
  let parameters = (ins
    Rope_BaseParameter:$base,
    Rope_F64Parameter<"s > 0", "::llvm::APFloat(1.0)">:$factor,
    Rope_F64Parameter<"f in [0, 1]", "::llvm::APFloat(1.0)">:$partial_rotary_factor
  );
  let hfRopeTypes = ["proportional"];
  let hfKeys = [Rope_HFFloatKey<"factor">,
                Rope_HFFloatKey<"partial_rotary_factor">];
}

def Rope_TableFrequenciesAttr
    : Rope_FrequencyAttr<"TableFrequencies", "table",
                         ["verifyForRotaryDim"]> {
  let summary = "explicit inverse frequencies, one per rotated pair";
  let description = [{
    The `P/2` frequencies `theta_i` given entry by entry, for tables that no
    named scheme reproduces to their rounding: what `--rope-raise` finds in
    frontend IR (an `inv_freq` constant folded by the exporter from a
    Llama-3, YaRN or LongRoPE computation in f32, or one of a model's own
    making). Entries are finite and non-negative (a zero frequency is an
    identity pair); there must be exactly `rotary_dim / 2` of them. Static:
    lowerings fold the table as it is.

    ```mlir
    #rope.table<inv_freq = [1.0, 0.1, 0.01, 0.001]>
    ```
  }];
  let parameters = (ins
    Rope_F64ArrayParameter<"theta_i for i in [0, P/2)">:$inv_freq);
  // No Hugging Face rope_type: tables come from frontend IR (--rope-raise).
  let hfRopeTypes = [];
}

//===----------------------------------------------------------------------===//
// Multimodal RoPE
//===----------------------------------------------------------------------===//

def Rope_MRopeAttr : Rope_Attr<"MRope", "mrope"> {
  let summary = "multimodal RoPE: three position axes (t, h, w)";
  let description = [{
    Qwen2-VL/Qwen3-VL M-RoPE (`SEMANTICS.md` §2). Positions carry a leading axis
    of size 3 (temporal, height, width) and each of the `P/2` frequencies
    takes its position from one axis. `section = [t, h, w]` sums to `P/2`:
    - chunked (default): pairs `[0, t)` from axis t, `[t, t+h)` from h, the
      rest from w;
    - `interleaved = true`: pair `j` from h if `j % 3 == 1` and `j < 3h`,
      from w if `j % 3 == 2` and `j < 3w`, else from t.

    ```mlir
    #rope.mrope<section = [16, 24, 24]>
    #rope.mrope<section = [24, 20, 20], interleaved = true>
    ```
  }];
  let parameters = (ins
    "::mlir::DenseI64ArrayAttr":$section,
    Rope_BoolParameter<"frequency-interleaved sections", "false">:$interleaved
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The position axis (0 = t, 1 = h, 2 = w) of each of the `numPairs`
    /// frequencies.
    ::llvm::SmallVector<int64_t> getPairAxes(int64_t numPairs) const;
  }];
}

#endif // ROPE_DIALECT_ROPE_IR_ROPEATTRS_TD
